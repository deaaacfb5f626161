//! A face: one peer (or multicast group), its transport, link service, output queue and
//! counters. A face belongs to one thread, which polls its socket in a `mio::Poll`.

use std::io;
use std::os::fd::RawFd;
use std::time::{Duration, Instant};

use bytes::Bytes;
use kite_packet::LpHeader;
use mio::unix::SourceFd;
use mio::{Interest, Registry, Token};
use thiserror::Error;

use crate::congestion::{CongestionMarker, MarkingConfig};
use crate::ether::{EtherPeer, LinkState};
use crate::link_service::{LinkService, Received, RxSink};
use crate::police::NackPolicer;
use crate::queue::{OutQueue, DEFAULT_QUEUE_CAPACITY, DEFAULT_WAITING_BYTES};
use crate::reliability::ReliabilityLimits;
use crate::shm::ShmIo;
use crate::stream::{Conn, StreamIo};
use crate::tcp::Connecting;
use crate::tenancy::Tenant;
use crate::udp::{MulticastIo, UdpPeer};
use crate::uri::FaceUri;
use crate::ws::WsIo;
use kite_link::framing::{FramingError, MAX_NDN_PACKET_SIZE};
use kite_link::reassembly::{Endpoint, Reassembler, ReassemblyLimits};
use kite_link::FaceCounters;
use kite_link::MacAddr;
use kite_link::{FaceId, FaceScope, LinkType, PacketKind, Persistency};

/// NFD's default MTU of UDP unicast faces.
pub const DEFAULT_UDP_MTU: usize = 8800;

/// The MTUs a face may be given: from NFD's smallest (64 octets, room for an LpPacket header
/// and a fragment) to the largest UDP payload over IPv4.
pub const MTU_RANGE: (usize, usize) = (64, 65507);

/// The one rule for an MTU, wherever it is given (configuration file, `kite face create`,
/// faces/create and faces/update): within [`MTU_RANGE`].
pub fn check_mtu(mtu: u64) -> Result<usize, String> {
    let (lo, hi) = MTU_RANGE;
    match usize::try_from(mtu) {
        Ok(m) if (lo..=hi).contains(&m) => Ok(m),
        _ => Err(format!("mtu must be between {lo} and {hi}, not {mtu}")),
    }
}

/// The receive buffer asked for each Ethernet interface's socket by default, as for UDP
/// listeners: the kernel's default (about 208 KiB) holds some 130 full frames, which a burst
/// of fragmented Data overflowed whenever the I/O thread was busy elsewhere.
pub const DEFAULT_ETHER_SOCKET_BUFFER: usize = 4 << 20;

/// The receive buffer asked for each on-demand UDP face's own socket by default (a face the
/// operator made gets the listener's 4 MiB). Each face
/// reads its own socket, so a burst toward one face no longer shares a listener's buffer
/// with every other face; 256 KiB holds some 110 full 1500-octet datagrams as the kernel
/// accounts them (it charges twice the payload, and caps the request at
/// `net.core.rmem_max`). The kernel's memory for UDP faces is at most
/// `udp_on_demand_limit` × this × 2 per listener, plus 8 MiB per face the operator made.
pub const DEFAULT_UDP_FACE_SOCKET_BUFFER: usize = 256 << 10;

/// NFD's default idle timeout of on-demand UDP faces.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(600);

/// On-demand faces a listener keeps by default: each costs a face's memory (output queue,
/// reassembly state) to whoever sends one well-formed packet from a new address, or opens a
/// connection.
pub const DEFAULT_ON_DEMAND_LIMIT: usize = 4096;

/// The range the on-demand face limits accept (`kite run` flags and configuration keys alike).
pub const ON_DEMAND_LIMIT_RANGE: (usize, usize) = (1, 1 << 20);

/// Settings channels give the faces they create.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FaceConfig {
    /// Frames an output queue holds before it drops.
    pub queue_capacity: usize,
    /// Octets that frames waiting for blocked sockets, copied out of their bursts, may hold in
    /// the output queues of all faces together ([`crate::queue::WAITING`]); a frame beyond
    /// it is dropped and counted in [`FaceCounters::n_out_queue_full`].
    pub output_queue_bytes: usize,
    /// MTU of datagram faces: a multicast face's, and the largest a unicast UDP face takes
    /// from its path.
    pub udp_mtu: usize,
    /// How long an on-demand datagram face lives without receiving.
    pub idle_timeout: Duration,
    /// On-demand faces a UDP channel keeps at most; a new sender beyond them takes the place
    /// of the idlest.
    pub udp_on_demand_limit: usize,
    /// On-demand faces an Ethernet channel keeps at most, likewise.
    pub ether_on_demand_limit: usize,
    /// Connections a TCP listener keeps at most as on-demand faces; a new one beyond them
    /// takes the place of the idlest (see [`crate::tenancy`] for the process-wide bound).
    pub tcp_on_demand_limit: usize,
    /// Connections a WebSocket listener keeps at most, likewise.
    pub ws_on_demand_limit: usize,
    /// Receive buffer asked for each on-demand UDP face's own socket, in octets: what the
    /// kernel holds for one peer while its face is not read (restrained, or the I/O thread
    /// busy); beyond it the kernel drops that peer's datagrams alone. Faces made by
    /// configuration or `faces/create` ask for the listener's 4 MiB.
    pub udp_socket_buffer: usize,
    /// Receive buffer asked for each Ethernet interface's socket, in octets (the kernel's
    /// memory per interface, bounded by this).
    pub ether_socket_buffer: usize,
    /// Reassembly bounds of a datagram channel (all its faces together) or of a face that
    /// has no channel (multicast UDP).
    pub reassembly: ReassemblyLimits,
    /// Congestion marking of new faces (NFD's defaults: on, 100 ms, 65536 octets).
    pub marking: MarkingConfig,
    /// Largest network packet accepted, in one frame or reassembled from fragments (at most
    /// [`MAX_NDN_PACKET_SIZE`], which every transport's frame limit is built on); a larger
    /// one is dropped and counted in [`FaceCounters::n_in_too_large`].
    pub max_packet_size: usize,
    /// Pause before a permanent TCP face whose connection was lost dials again; it doubles
    /// after each failed dial, up to [`FaceConfig::redial_max`].
    pub redial_initial: Duration,
    /// The longest pause between two dials of a lost permanent TCP face.
    pub redial_max: Duration,
    /// Bounds of each face's store of frames waiting for their NDNLPv2 Ack, when
    /// LpReliability is on ([`Face::set_lp_reliability`]).
    pub reliability: ReliabilityLimits,
    /// Octets of each ring of the shared-memory region offered to a local application that
    /// asks for one on the Unix socket ([`crate::shm`]); `None`: no offer. Each such face
    /// maps `4 KiB + 2 ×` this.
    pub shm_ring_size: Option<usize>,
}

impl FaceConfig {
    /// The bounds of a reassembler: [`FaceConfig::reassembly`], reassembling nothing larger
    /// than [`FaceConfig::max_packet_size`].
    pub fn reassembly_limits(&self) -> ReassemblyLimits {
        ReassemblyLimits {
            max_packet: self.max_packet_size,
            ..self.reassembly
        }
    }
}

impl Default for FaceConfig {
    fn default() -> Self {
        FaceConfig {
            queue_capacity: DEFAULT_QUEUE_CAPACITY,
            output_queue_bytes: DEFAULT_WAITING_BYTES,
            udp_mtu: DEFAULT_UDP_MTU,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            udp_on_demand_limit: DEFAULT_ON_DEMAND_LIMIT,
            ether_on_demand_limit: DEFAULT_ON_DEMAND_LIMIT,
            tcp_on_demand_limit: DEFAULT_ON_DEMAND_LIMIT,
            ws_on_demand_limit: DEFAULT_ON_DEMAND_LIMIT,
            udp_socket_buffer: DEFAULT_UDP_FACE_SOCKET_BUFFER,
            ether_socket_buffer: DEFAULT_ETHER_SOCKET_BUFFER,
            reassembly: ReassemblyLimits::default(),
            marking: MarkingConfig::default(),
            max_packet_size: MAX_NDN_PACKET_SIZE,
            redial_initial: crate::tcp::DEFAULT_REDIAL_INITIAL,
            redial_max: crate::tcp::DEFAULT_REDIAL_MAX,
            reliability: ReliabilityLimits::default(),
            shm_ring_size: Some(crate::shm::DEFAULT_RING_SIZE),
        }
    }
}

// A variant that wraps another error says it in its message and does not also report it as
// its source, or a chain printer (anyhow's `{:#}`) would print it twice.
impl From<io::Error> for FaceError {
    fn from(e: io::Error) -> Self {
        FaceError::Io(e)
    }
}

impl From<FramingError> for FaceError {
    fn from(e: FramingError) -> Self {
        FaceError::Framing(e)
    }
}

/// Why a face failed or refused an operation.
#[derive(Debug, Error)]
pub enum FaceError {
    /// The peer closed the connection.
    #[error("connection closed by peer")]
    Closed,
    /// A socket error.
    #[error("socket error: {0}")]
    Io(io::Error),
    /// The stream stopped being a sequence of TLV elements.
    #[error("framing error: {0}")]
    Framing(FramingError),
    /// A WebSocket protocol error.
    #[error("WebSocket error: {0}")]
    WebSocket(String),
    /// Local fields were asked of a non-local face.
    #[error("local fields can only be enabled on faces with local scope")]
    NotLocal,
    /// A face to this remote already exists.
    #[error("face {0} already exists for this remote")]
    Exists(FaceId),
    /// A unicast face was asked for with a group (multicast) address.
    #[error("a unicast face needs a unicast remote address")]
    NotUnicast,
    /// LpReliability was asked of a face that is not UDP or Ethernet unicast.
    #[error("LpReliability is available on UDP and Ethernet unicast faces only")]
    NoReliability,
}

/// What a receive burst left behind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// The socket had nothing more: wait for the next readiness event.
    Drained,
    /// The burst budget ran out first: call again without waiting (readiness is
    /// edge-triggered and will not be reported again).
    More,
}

/// What a flush left behind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flushed {
    /// The output queue is empty.
    Done,
    /// The socket is full: flush again when it reports writable.
    Blocked,
}

/// The socket side of a face.
#[derive(Debug)]
pub(crate) enum Transport {
    /// A Unix or TCP stream.
    Stream(StreamIo),
    /// A UDP peer reached through its channel's shared socket.
    Udp(UdpPeer),
    /// A UDP multicast group with its own socket.
    Multicast(MulticastIo),
    /// A WebSocket connection.
    Ws(WsIo),
    /// An Ethernet peer or group reached through its channel's shared socket.
    Ether(EtherPeer),
    /// An outgoing TCP connection that was lost (or not yet made): waiting to dial again
    /// (`None`) or dialing (a connection on its way). The face keeps its id, routes and
    /// counters meanwhile and drops what it would send.
    Redial(Option<Connecting>),
    /// A local application's shared-memory rings (its Unix connection kept for liveness).
    Shm(Box<ShmIo>),
}

/// Everything a transport constructor tells [`Face::new`].
pub(crate) struct FaceParts {
    pub remote: FaceUri,
    pub local: FaceUri,
    pub scope: FaceScope,
    pub persistency: Persistency,
    pub link_type: LinkType,
    pub transport: Transport,
    /// The ring size to offer if the first packet asks for shared memory (accepted Unix
    /// connections only).
    pub shm_offer: Option<usize>,
}

/// One face.
#[derive(Debug)]
pub struct Face {
    id: FaceId,
    remote: FaceUri,
    local: FaceUri,
    scope: FaceScope,
    persistency: Persistency,
    link_type: LinkType,
    counters: FaceCounters,
    link: LinkService,
    queue: OutQueue,
    marker: CongestionMarker,
    nacks: NackPolicer,
    transport: Transport,
    last_rx: Instant,
    idle_timeout: Duration,
    reliability: ReliabilityLimits,
    /// Ring size to offer while the face has received nothing yet (see [`crate::shm`]).
    shm_offer: Option<usize>,
    /// The first packet, which asked for shared memory: [`Face::switch_to_shm`] answers it.
    shm_request: Option<Bytes>,
    /// Its place among the on-demand faces of the listener that accepted it (TCP, WebSocket).
    tenant: Option<Tenant>,
    /// [`FaceConfig::output_queue_bytes`].
    output_queue_bytes: usize,
}

impl Face {
    pub(crate) fn new(id: FaceId, parts: FaceParts, config: &FaceConfig) -> Self {
        let mtu = match parts.transport {
            Transport::Udp(_) | Transport::Multicast(_) => Some(config.udp_mtu),
            Transport::Ether(ref e) => Some(e.mtu()),
            Transport::Stream(_) | Transport::Ws(_) | Transport::Redial(_) | Transport::Shm(_) => {
                None
            }
        };
        Face {
            id,
            remote: parts.remote,
            local: parts.local,
            scope: parts.scope,
            persistency: parts.persistency,
            link_type: parts.link_type,
            counters: FaceCounters::default(),
            // A channel's faces reassemble in the channel's reassembler (one budget for all).
            link: LinkService::new(
                mtu,
                match parts.transport {
                    Transport::Udp(_) | Transport::Ether(_) => None,
                    _ => Some(config.reassembly),
                },
                config.max_packet_size,
            ),
            queue: OutQueue::new(config.queue_capacity),
            marker: CongestionMarker::new(config.marking),
            nacks: NackPolicer::new(Instant::now()),
            transport: parts.transport,
            last_rx: Instant::now(),
            idle_timeout: config.idle_timeout,
            reliability: config.reliability,
            shm_offer: parts.shm_offer,
            shm_request: None,
            tenant: None,
            output_queue_bytes: config.output_queue_bytes,
        }
    }

    /// Gives the face its place among its listener's on-demand faces.
    pub(crate) fn set_tenant(&mut self, t: Tenant) {
        self.tenant = Some(t);
    }

    /// Whether the listener that accepted this face gave it up to make room for a new
    /// connection: the thread that owns it should close it.
    pub fn evicted(&self) -> bool {
        self.tenant.as_ref().is_some_and(Tenant::evicted)
    }

    /// The face's id.
    pub fn id(&self) -> FaceId {
        self.id
    }

    /// The peer's URI (NFD FaceStatus Uri).
    pub fn remote_uri(&self) -> &FaceUri {
        &self.remote
    }

    /// The local end's URI (NFD LocalUri).
    pub fn local_uri(&self) -> &FaceUri {
        &self.local
    }

    /// Local or non-local.
    pub fn scope(&self) -> FaceScope {
        self.scope
    }

    /// On-demand, persistent or permanent.
    pub fn persistency(&self) -> Persistency {
        self.persistency
    }

    /// Changes the persistency (`faces/update`, or a `faces/create` of an existing face).
    pub fn set_persistency(&mut self, p: Persistency) {
        self.persistency = p;
        if p != Persistency::OnDemand {
            // The operator keeps it: it no longer counts against its listener's limit.
            self.tenant = None;
        }
        if let Transport::Udp(peer) = &self.transport {
            peer.persistency_changed(p);
        }
    }

    /// The receive buffer of a UDP face's own socket as the kernel reports it.
    #[cfg(test)]
    pub(crate) fn udp_recv_buffer(&self) -> Option<usize> {
        match &self.transport {
            Transport::Udp(peer) => peer.recv_buffer(),
            _ => None,
        }
    }

    /// Point-to-point or multi-access.
    pub fn link_type(&self) -> LinkType {
        self.link_type
    }

    /// The MTU packets are fragmented to; `None` for faces that never fragment (streams,
    /// WebSocket), which NFD reports as unlimited.
    pub fn mtu(&self) -> Option<usize> {
        self.link.mtu()
    }

    /// Sets the MTU of a datagram face (ignored on others); an Ethernet face's stays within
    /// its interface's.
    pub fn set_mtu(&mut self, mtu: usize) {
        let mtu = match &self.transport {
            Transport::Ether(e) => mtu.min(e.mtu()),
            _ => mtu,
        };
        self.link.set_mtu(mtu);
    }

    /// Whether the face's link is up: false for an Ethernet face whose interface is down or
    /// has lost its carrier, and for a TCP face whose connection is lost (NFD's transport
    /// state DOWN).
    pub fn is_up(&self) -> bool {
        match &self.transport {
            Transport::Ether(e) => e.is_up(),
            Transport::Redial(_) => false,
            _ => true,
        }
    }

    /// Whether this TCP face lost its connection (or has yet to make it) and waits to dial.
    pub fn is_lost(&self) -> bool {
        matches!(self.transport, Transport::Redial(_))
    }

    /// Whether this TCP face is dialing its peer again (a connection on its way).
    pub fn is_redialing(&self) -> bool {
        matches!(self.transport, Transport::Redial(Some(_)))
    }

    /// Drops this outgoing TCP face's connection (lost, or a dial given up), keeping the face:
    /// its socket leaves `registry` and closes, and what waits in its queue is dropped. Other
    /// faces are left alone (`false`): only a TCP face can dial its peer again.
    pub fn lose_connection(&mut self, registry: &Registry) -> bool {
        if !matches!(self.remote, FaceUri::Tcp(_)) {
            return false;
        }
        let _ = self.deregister(registry);
        self.transport = Transport::Redial(None);
        self.drop_queue();
        true
    }

    /// Starts dialing this lost TCP face's peer again, without blocking: the connection is
    /// watched under `token` in `registry`, and [`Face::redial_progress`] follows it.
    pub fn redial(&mut self, registry: &Registry, token: Token) -> io::Result<()> {
        let FaceUri::Tcp(addr) = self.remote else {
            return Err(io::Error::other("only TCP faces dial again"));
        };
        let mut conn = Connecting::start(addr)?;
        conn.register_all(registry, token)?;
        self.transport = Transport::Redial(Some(conn));
        Ok(())
    }

    /// After an event on a dialing face: `Ok(true)` once connected (the face carries packets
    /// again, on the same registration), `Ok(false)` while still dialing, the error once the
    /// dial failed (the caller then calls [`Face::lose_connection`]).
    pub fn redial_progress(&mut self) -> io::Result<bool> {
        let Transport::Redial(Some(conn)) = &mut self.transport else {
            return Ok(false);
        };
        if !conn.progress()? {
            return Ok(false);
        }
        let Transport::Redial(Some(conn)) =
            core::mem::replace(&mut self.transport, Transport::Redial(None))
        else {
            unreachable!("matched above");
        };
        let stream = conn.into_stream();
        stream.set_nodelay(true)?;
        if let Ok(local) = stream.local_addr() {
            self.local = FaceUri::Tcp(local);
        }
        self.transport = Transport::Stream(StreamIo::new(Conn::Tcp(stream)));
        Ok(true)
    }

    /// Makes an Ethernet face follow its interface's new state (ignored by other faces): the
    /// MTU becomes the interface's, and a face going down drops what waits in its queue.
    /// `Some(up)` when the face went up or down (NFD then emits a face event).
    pub fn follow_link(&mut self, link: LinkState) -> Option<bool> {
        let Transport::Ether(e) = &mut self.transport else {
            return None;
        };
        let flipped = e.follow(link);
        self.link.set_mtu(link.mtu);
        if !link.up {
            self.drop_queue();
        }
        flipped.then_some(link.up)
    }

    /// Drops every queued frame, counted as sent to a link that is down.
    fn drop_queue(&mut self) {
        self.counters.n_out_link_down += self.queue.len() as u64;
        self.queue.clear();
    }

    /// Whether local fields are enabled.
    pub fn local_fields(&self) -> bool {
        self.link.local_fields()
    }

    /// Enables or disables local fields; only local faces may enable them (NFD answers 409
    /// otherwise).
    pub fn set_local_fields(&mut self, on: bool) -> Result<(), FaceError> {
        if on && self.scope != FaceScope::Local {
            return Err(FaceError::NotLocal);
        }
        self.link.set_local_fields(on);
        Ok(())
    }

    /// Whether NDNLPv2 LpReliability is on.
    pub fn lp_reliability(&self) -> bool {
        self.link.reliability().is_some()
    }

    /// Turns NDNLPv2 LpReliability on or off (NFD's `faces/create` and `faces/update` flag);
    /// only UDP unicast and Ethernet unicast faces have it.
    pub fn set_lp_reliability(&mut self, on: bool) -> Result<(), FaceError> {
        let unicast = match &self.transport {
            Transport::Udp(_) => true,
            Transport::Ether(_) => self.link_type == LinkType::PointToPoint,
            _ => false,
        };
        if on && !unicast {
            return Err(FaceError::NoReliability);
        }
        self.link.set_reliability(on.then_some(self.reliability));
        Ok(())
    }

    /// When LpReliability has a frame to resend or Acks to send ([`Face::step_reliability`]).
    pub fn reliability_due(&self) -> Option<Instant> {
        self.link.reliability_due()
    }

    /// Queues what LpReliability has due at `now` (the caller flushes the face after).
    pub fn step_reliability(&mut self, now: Instant) {
        self.link
            .step_reliability(now, &mut self.counters, &mut self.queue);
    }

    /// The counters.
    pub fn counters(&self) -> &FaceCounters {
        &self.counters
    }

    /// The congestion marking settings.
    pub fn congestion_marking(&self) -> MarkingConfig {
        self.marker.config()
    }

    /// Changes the congestion marking settings (NFD `faces/update`).
    pub fn set_congestion_marking(&mut self, config: MarkingConfig) {
        self.marker.set_config(config);
    }

    /// Whether the packet about to be queued carries a CongestionMark, judged by the octets
    /// already waiting in the output queue (see [`crate::congestion`]).
    pub fn congestion_mark(&mut self, now: Instant) -> bool {
        self.marker.mark(self.queue.octets(), now)
    }

    /// Whether a Nack may be sent to this face at `now` ([`crate::police`]); a Nack that may
    /// not is counted (`out-nack-limited`) for the caller to drop.
    pub fn admit_nack(&mut self, now: Instant) -> bool {
        let admitted = self.nacks.admit(now);
        self.counters.n_out_nack_limited += u64::from(!admitted);
        admitted
    }

    /// Counts a packet from this face that the forwarder had no room for (its input ring was
    /// full); the dispatcher, not the face, sees that drop.
    pub fn count_in_queue_full(&mut self) {
        self.counters.n_in_queue_full += 1;
    }

    /// The remote socket address of a UDP unicast face (what its channel demultiplexes on).
    pub fn udp_remote(&self) -> Option<std::net::SocketAddr> {
        match &self.transport {
            Transport::Udp(p) => Some(p.remote()),
            _ => None,
        }
    }

    /// The remote address of an Ethernet face (a peer, or the group of a multicast face):
    /// what its channel demultiplexes on.
    pub fn ether_remote(&self) -> Option<MacAddr> {
        match &self.transport {
            Transport::Ether(e) => Some(e.remote()),
            _ => None,
        }
    }

    /// Whether the face can push back on its sender: a stream (Unix, TCP, WebSocket) that is
    /// not read stops its sender once the kernel's buffers fill, so it is read only as far as
    /// the forwarder has room ([`Face::recv_burst`]'s budget). A datagram face cannot: what
    /// it is not read is lost in the kernel, so it is read and its drops are counted.
    pub fn pushes_back(&self) -> bool {
        matches!(
            self.transport,
            Transport::Stream(_) | Transport::Ws(_) | Transport::Shm(_)
        )
    }

    /// The file descriptor readiness is reported on; `None` for Ethernet faces and the UDP
    /// unicast faces without a socket of their own, whose channel's socket carries their
    /// readiness (the caller flushes them on its events). A UDP unicast face's own socket is
    /// read by its channel ([`crate::UdpChannel::recv_face`]), not by [`Face::recv_burst`].
    pub fn raw_fd(&self) -> Option<RawFd> {
        match &self.transport {
            Transport::Stream(s) => Some(s.raw_fd()),
            Transport::Udp(p) => p.raw_fd(),
            Transport::Ether(_) => None,
            Transport::Multicast(m) => Some(m.raw_fd()),
            Transport::Ws(w) => Some(w.raw_fd()),
            Transport::Redial(c) => c.as_ref().map(Connecting::raw_fd),
            Transport::Shm(s) => Some(s.raw_fds()[0]),
        }
    }

    /// Registers the face's socket (if it has its own) for edge-triggered read and write
    /// readiness under `token`; a shared-memory face also its eventfd, for reading.
    pub fn register(&self, registry: &Registry, token: Token) -> io::Result<()> {
        if let Transport::Shm(s) = &self.transport {
            registry.register(&mut SourceFd(&s.raw_fds()[1]), token, Interest::READABLE)?;
        }
        match self.raw_fd() {
            Some(fd) => registry.register(
                &mut SourceFd(&fd),
                token,
                Interest::READABLE | Interest::WRITABLE,
            ),
            None => Ok(()),
        }
    }

    /// Removes the face's socket from `registry` (dropping the face also does).
    pub fn deregister(&self, registry: &Registry) -> io::Result<()> {
        if let Transport::Shm(s) = &self.transport {
            registry.deregister(&mut SourceFd(&s.raw_fds()[1]))?;
        }
        match self.raw_fd() {
            Some(fd) => registry.deregister(&mut SourceFd(&fd)),
            None => Ok(()),
        }
    }

    /// Whether this face's first packet asked for shared memory (answer with
    /// [`Face::switch_to_shm`]).
    pub fn shm_requested(&self) -> bool {
        self.shm_request.is_some()
    }

    /// Whether this is a shared-memory face.
    pub fn is_shm(&self) -> bool {
        matches!(self.transport, Transport::Shm(_))
    }

    /// Answers the request for shared memory: offers a region over the connection and
    /// from now on reads and writes its rings (re-registered under `token`). If the offer
    /// cannot be made, the request goes on to the forwarder like any Interest (which has
    /// no route for it: the application falls back to the socket).
    pub fn switch_to_shm(
        &mut self,
        registry: &Registry,
        token: Token,
        out: &mut Vec<Received>,
    ) -> io::Result<()> {
        let (Some(request), Some(ring)) = (self.shm_request.take(), self.shm_offer.take()) else {
            return Ok(());
        };
        let result = match &self.transport {
            Transport::Stream(s) if self.queue.is_empty() => s.unix_clone().and_then(|conn| {
                self.deregister(registry)?;
                ShmIo::offer(conn, ring).inspect_err(|_| {
                    let _ = self.register(registry, token);
                })
            }),
            _ => Err(io::ErrorKind::Unsupported.into()),
        };
        match result {
            Ok(shm) => {
                self.transport = Transport::Shm(Box::new(shm));
                self.register(registry, token)
            }
            Err(e) => {
                let c = &mut self.counters;
                self.link
                    .receive(self.id, Endpoint::Peer, request, 0, Instant::now(), c, out);
                Err(e)
            }
        }
    }

    /// Whether a shared-memory face has data in its ring (polled while the I/O thread is
    /// awake: the application writes its eventfd only when the thread sleeps).
    pub fn shm_has_input(&self) -> bool {
        matches!(&self.transport, Transport::Shm(s) if s.has_input())
    }

    /// Before the I/O thread sleeps: asks a shared-memory face's application to wake it;
    /// `true` when data arrived meanwhile (do not sleep).
    pub fn shm_announce_sleep(&self) -> bool {
        matches!(&self.transport, Transport::Shm(s) if s.announce_sleep())
    }

    /// Reads one burst from the face's own socket (one large read for streams, one
    /// `recvmmsg` for multicast) and pushes the packets it completes. `hangup`: the readiness
    /// event reported the peer's side closed (mio's `is_read_closed`), so a stream reads on
    /// to the end instead of stopping at a short read. An error means the face is unusable:
    /// the caller closes it (or, for a permanent face, keeps it). UDP unicast and Ethernet
    /// faces read nothing here: their channel reads and calls [`Face::receive_frame`].
    /// `budget`: the most frames a stream or WebSocket face reads (each makes at most one
    /// packet); the rest waits, unread, for a later burst (see [`Face::pushes_back`]).
    pub fn recv_burst(
        &mut self,
        now: Instant,
        hangup: bool,
        budget: usize,
        out: &mut impl RxSink,
    ) -> Result<Progress, FaceError> {
        let (id, link, c) = (self.id, &mut self.link, &mut self.counters);
        let mut got = false;
        let (offer, requested) = (&mut self.shm_offer, &mut self.shm_request);
        let progress = match &mut self.transport {
            Transport::Stream(s) if offer.is_some() => s.recv_burst(hangup, budget, |frame| {
                got = true;
                if requested.is_some() {
                    // The client waits for the answer: nothing follows the request.
                } else if crate::shm::is_request(&frame) {
                    *requested = Some(frame);
                } else {
                    *offer = None;
                    link.receive(id, Endpoint::Peer, frame, 0, now, c, out)
                }
            }),
            Transport::Stream(s) => s.recv_burst(hangup, budget, |frame| {
                got = true;
                link.receive(id, Endpoint::Peer, frame, 0, now, c, out)
            }),
            Transport::Shm(s) => s.recv_burst(hangup, budget, |frame, own_buffer| {
                got = true;
                link.receive(id, Endpoint::Peer, frame, own_buffer, now, c, out)
            }),
            Transport::Multicast(m) => m.recv_burst(|from, frame| {
                got = true;
                link.receive(id, Endpoint::Ip(from), frame, 0, now, c, out)
            }),
            Transport::Ws(w) => w.recv_burst(budget, |frame| {
                got = true;
                link.receive(id, Endpoint::Peer, frame, 0, now, c, out)
            }),
            Transport::Udp(_) | Transport::Ether(_) | Transport::Redial(_) => Ok(Progress::Drained),
        };
        if got {
            self.last_rx = now;
            if let Some(t) = &self.tenant {
                t.received(now);
            }
        }
        if let Err(FaceError::Framing(_)) = progress {
            self.counters.n_framing_errors += 1;
        }
        if matches!(self.transport, Transport::Ws(_) | Transport::Shm(_)) && !self.queue.is_empty()
        {
            // A WebSocket handshake that just completed may have frames waiting; a
            // shared-memory application that read may have made room for waiting frames.
            self.flush()?;
        }
        progress
    }

    /// Handles one frame its channel received for this face from `from` (alone in a buffer of
    /// `own_buffer` octets, or 0: [`crate::datagram::Datagram::own_buffer`]); fragments go to
    /// the channel's `reassembler`, whose drops the caller counts
    /// ([`Face::count_reassembly_drops`]).
    #[allow(clippy::too_many_arguments)]
    pub fn receive_frame(
        &mut self,
        from: Endpoint,
        frame: Bytes,
        own_buffer: usize,
        now: Instant,
        reassembler: &mut Reassembler,
        out: &mut Vec<Received>,
    ) {
        self.last_rx = now;
        let c = &mut self.counters;
        self.link.receive_in(
            self.id,
            from,
            frame,
            own_buffer,
            now,
            Some(reassembler),
            c,
            out,
        );
    }

    /// Counts partial packets of this face its channel's reassembler dropped.
    pub fn count_reassembly_drops(&mut self, n: u64) {
        self.counters.n_reassembly_dropped += n;
    }

    /// Drops reassembly state that timed out; call it now and then (e.g. once per second).
    pub fn expire(&mut self, now: Instant) {
        self.link.expire(now, &mut self.counters);
    }

    /// Whether this on-demand datagram face received nothing for its idle timeout, so the
    /// caller should close it (NFD closes such faces; streams close when the peer does).
    pub fn idle_expired(&self, now: Instant) -> bool {
        self.persistency == Persistency::OnDemand
            && matches!(self.transport, Transport::Udp(_) | Transport::Ether(_))
            && now.saturating_duration_since(self.last_rx) >= self.idle_timeout
    }

    /// Queues a frame that is already encoded (an LpPacket or a bare packet) of `kind`.
    /// `false`: dropped and counted (queue full, or too large to fragment). Never blocks.
    pub fn send(&mut self, kind: PacketKind, frame: Bytes) -> bool {
        self.send_parts(kind, &[], frame)
    }

    /// Queues a frame given as link-header octets and the packet's own octets (as
    /// `kite-fw`'s `Out::encode_frame` produces them): the packet is not copied.
    pub fn send_parts(&mut self, kind: PacketKind, head: &[u8], body: Bytes) -> bool {
        self.link
            .send(kind, head, body, &mut self.counters, &mut self.queue)
    }

    /// Queues a packet with LP header fields; IncomingFaceId is sent only when local fields
    /// are enabled.
    pub fn send_packet(&mut self, header: LpHeader, packet: Bytes) -> bool {
        self.link
            .send_packet(header, packet, &mut self.counters, &mut self.queue)
    }

    /// Frames waiting in the output queue.
    pub fn pending_output(&self) -> usize {
        self.queue.len()
    }

    /// Whether frames wait in the output queue past a write the socket did not take whole:
    /// the face is written again when its socket becomes writable, not with this burst.
    pub fn output_blocked(&self) -> bool {
        self.queue.waits_past_write()
    }

    /// Writes the output queue in bursts (`writev` for streams, `sendmmsg` for datagrams)
    /// until it is empty or the socket is full. A face whose link is down drops the queue
    /// instead (counted in [`FaceCounters::n_out_link_down`]).
    pub fn flush(&mut self) -> Result<Flushed, FaceError> {
        if self.queue.is_empty() {
            return Ok(Flushed::Done);
        }
        if !self.is_up() {
            self.drop_queue();
            return Ok(Flushed::Done);
        }
        let c = &mut self.counters;
        let flushed = match &mut self.transport {
            Transport::Stream(s) => s.flush(&mut self.queue, c),
            Transport::Udp(p) => p.flush(&mut self.queue, c),
            Transport::Multicast(m) => m.flush(&mut self.queue, c),
            Transport::Ws(w) => w.flush(&mut self.queue, c),
            Transport::Ether(e) => e.flush(&mut self.queue, c),
            Transport::Redial(_) => Ok(Flushed::Done),
            Transport::Shm(s) => s.flush(&mut self.queue, c),
        };
        // What the socket did not take waits past its burst.
        self.detach_waiting();
        flushed
    }

    /// Copies the frames that wait for the socket out of the buffers they were received in,
    /// so they pin none, within the octets all faces' waiting frames may hold
    /// ([`FaceConfig::output_queue_bytes`]; the frames beyond it are dropped and counted).
    /// Called after a write the socket did not take whole, and for frames queued behind a
    /// socket that is already full.
    pub fn detach_waiting(&mut self) {
        let dropped = self.queue.detach_waiting(self.output_queue_bytes);
        self.counters.n_out_queue_full += dropped as u64;
    }
}
