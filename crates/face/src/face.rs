//! A face: one peer (or multicast group), its transport, link service, output queue and
//! counters. A face belongs to one thread, which polls its socket in a `mio::Poll`. It names
//! no kind of transport: it holds one behind [`Transport`], or none while it dials its peer
//! again ([`FaceState::Reconnecting`]).

use std::cell::Cell;
use std::io;
use std::os::fd::RawFd;
use std::time::{Duration, Instant};

use bytes::Bytes;
use kite_packet::LpHeader;
use mio::unix::SourceFd;
use mio::{Interest, Registry, Token};

use crate::config::FaceConfig;
use crate::congestion::{CongestionMarker, MarkingConfig};
use crate::link_service::{LinkService, Received, RxSink};
use crate::police::NackPolicer;
use crate::queue::OutQueue;
use crate::reliability::ReliabilityLimits;
use crate::tenancy::Tenant;
use crate::transport::{
    Dial, FaceError, Flushed, LinkState, Progress, Redial, RxFrame, Transport, Upgrade,
};
use crate::uri::FaceUri;
use kite_link::reassembly::{Endpoint, Reassembler};
use kite_link::FaceCounters;
use kite_link::MacAddr;
use kite_link::{FaceId, FaceScope, LinkType, PacketKind, Persistency};

/// Where a face's packets go: through its transport, or nowhere while it dials again.
#[derive(Debug)]
pub(crate) enum FaceState {
    /// Carrying packets.
    Up(Box<dyn Transport>),
    /// An outgoing connection that was lost (or not yet made): waiting to dial again
    /// (`dial: None`) or dialing. The face keeps its id, routes and counters meanwhile and
    /// drops what it would send.
    Reconnecting {
        /// The connection on its way, if dialing.
        dial: Option<Box<dyn Dial>>,
    },
}

/// What a face's maker tells [`Face::new`] beyond its transport.
pub(crate) struct FaceParts {
    pub scope: FaceScope,
    pub persistency: Persistency,
    pub link_type: LinkType,
    /// How the face dials its peer again once its connection is lost (outgoing TCP faces).
    pub redial: Option<Redial>,
}

thread_local! {
    /// The frames of the receive burst under way on this thread, staged between the
    /// transport and the link service (kept between bursts, so no burst allocates).
    static RX: Cell<Vec<RxFrame>> = const { Cell::new(Vec::new()) };
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
    state: FaceState,
    /// How the face dials its peer again once its connection is lost (outgoing TCP faces).
    redial: Option<Redial>,
    last_rx: Instant,
    idle_timeout: Duration,
    reliability: ReliabilityLimits,
    /// Its place among the on-demand faces of the listener that accepted it (TCP, WebSocket).
    tenant: Option<Tenant>,
    /// [`FaceConfig::output_queue_bytes`].
    output_queue_bytes: usize,
}

impl Face {
    /// The face of `transport`.
    pub(crate) fn new(
        id: FaceId,
        parts: FaceParts,
        transport: Box<dyn Transport>,
        config: &FaceConfig,
    ) -> Self {
        let (remote, local) = (transport.remote_uri(), transport.local_uri());
        // A channel's faces reassemble in the channel's reassembler (one budget for all).
        let reassembly = (!transport.via_channel()).then_some(config.reassembly);
        let link = LinkService::new(transport.mtu(), reassembly, config.max_packet_size);
        Self::with_state(
            id,
            parts,
            remote,
            local,
            FaceState::Up(transport),
            link,
            config,
        )
    }

    /// A face between `local` and `remote` with no connection yet: it dials its peer
    /// ([`Face::redial`]) and drops what it would send until connected.
    pub(crate) fn unconnected(
        id: FaceId,
        parts: FaceParts,
        remote: FaceUri,
        local: FaceUri,
        config: &FaceConfig,
    ) -> Self {
        let link = LinkService::new(None, Some(config.reassembly), config.max_packet_size);
        let state = FaceState::Reconnecting { dial: None };
        Self::with_state(id, parts, remote, local, state, link, config)
    }

    fn with_state(
        id: FaceId,
        parts: FaceParts,
        remote: FaceUri,
        local: FaceUri,
        state: FaceState,
        link: LinkService,
        config: &FaceConfig,
    ) -> Self {
        Face {
            id,
            remote,
            local,
            scope: parts.scope,
            persistency: parts.persistency,
            link_type: parts.link_type,
            counters: FaceCounters::default(),
            link,
            queue: OutQueue::new(config.queue_capacity),
            marker: CongestionMarker::new(config.marking),
            nacks: NackPolicer::new(Instant::now()),
            state,
            redial: parts.redial,
            last_rx: Instant::now(),
            idle_timeout: config.idle_timeout,
            reliability: config.reliability,
            tenant: None,
            output_queue_bytes: config.output_queue_bytes,
        }
    }

    /// The transport, while the face has one.
    fn transport(&self) -> Option<&dyn Transport> {
        match &self.state {
            FaceState::Up(t) => Some(t.as_ref()),
            FaceState::Reconnecting { .. } => None,
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
        if let Some(t) = self.transport() {
            t.persistency_changed(p);
        }
    }

    /// The receive buffer of a UDP face's own socket as the kernel reports it.
    #[cfg(test)]
    pub(crate) fn udp_recv_buffer(&self) -> Option<usize> {
        self.transport()?.recv_buffer()
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
        let mtu = self.transport().map_or(mtu, |t| t.clamp_mtu(mtu));
        self.link.set_mtu(mtu);
    }

    /// Whether the face's link is up: false for an Ethernet face whose interface is down or
    /// has lost its carrier, and for a TCP face whose connection is lost (NFD's transport
    /// state DOWN).
    pub fn is_up(&self) -> bool {
        self.transport().is_some_and(|t| t.is_up())
    }

    /// Whether this TCP face lost its connection (or has yet to make it) and waits to dial.
    pub fn is_lost(&self) -> bool {
        matches!(self.state, FaceState::Reconnecting { .. })
    }

    /// Whether this TCP face is dialing its peer again (a connection on its way).
    pub fn is_redialing(&self) -> bool {
        matches!(self.state, FaceState::Reconnecting { dial: Some(_) })
    }

    /// Drops this outgoing TCP face's connection (lost, or a dial given up), keeping the face:
    /// its socket leaves `registry` and closes, and what waits in its queue is dropped. Other
    /// faces are left alone (`false`): only a TCP face can dial its peer again.
    pub fn lose_connection(&mut self, registry: &Registry) -> bool {
        if self.redial.is_none() {
            return false;
        }
        let _ = self.deregister(registry);
        self.state = FaceState::Reconnecting { dial: None };
        self.drop_queue();
        true
    }

    /// Starts dialing this lost TCP face's peer again, without blocking: the connection is
    /// watched under `token` in `registry`, and [`Face::redial_progress`] follows it.
    pub fn redial(&mut self, registry: &Registry, token: Token) -> io::Result<()> {
        let Some(redial) = self.redial else {
            return Err(io::Error::other("only TCP faces dial again"));
        };
        let mut conn = redial(&self.remote)?;
        conn.register(registry, token)?;
        self.state = FaceState::Reconnecting { dial: Some(conn) };
        Ok(())
    }

    /// After an event on a dialing face: `Ok(true)` once connected (the face carries packets
    /// again, on the same registration), `Ok(false)` while still dialing, the error once the
    /// dial failed (the caller then calls [`Face::lose_connection`]).
    pub fn redial_progress(&mut self) -> io::Result<bool> {
        let FaceState::Reconnecting { dial: Some(conn) } = &mut self.state else {
            return Ok(false);
        };
        if !conn.progress()? {
            return Ok(false);
        }
        let idle = FaceState::Reconnecting { dial: None };
        let FaceState::Reconnecting { dial: Some(conn) } =
            core::mem::replace(&mut self.state, idle)
        else {
            unreachable!("matched above");
        };
        let transport = conn.connected()?;
        self.local = transport.local_uri();
        self.state = FaceState::Up(transport);
        Ok(true)
    }

    /// Makes an Ethernet face follow its interface's new state (ignored by other faces): the
    /// MTU becomes the interface's, and a face going down drops what waits in its queue.
    /// `Some(up)` when the face went up or down (NFD then emits a face event).
    pub fn follow_link(&mut self, link: LinkState) -> Option<bool> {
        let FaceState::Up(t) = &mut self.state else {
            return None;
        };
        let flipped = t.follow_link(link)?;
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
        let unicast = self.transport().is_some_and(|t| t.reliable_capable());
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

    /// The counters of what this face's own thread did.
    pub fn counters(&self) -> &FaceCounters {
        &self.counters
    }

    /// The counters with what other I/O threads received for the face
    /// ([`crate::lanes`]): what management reports.
    pub fn all_counters(&self) -> FaceCounters {
        let mut c = self.counters;
        if let Some(l) = self.transport().and_then(|t| t.lane_stats()) {
            l.add_to(&mut c);
        }
        c
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
        match (&self.remote, self.transport()) {
            (FaceUri::Udp(a), Some(t)) if t.via_channel() => Some(*a),
            _ => None,
        }
    }

    /// The remote address of an Ethernet face (a peer, or the group of a multicast face):
    /// what its channel demultiplexes on.
    pub fn ether_remote(&self) -> Option<MacAddr> {
        match (&self.remote, self.transport()) {
            (FaceUri::Ether(m), Some(t)) if t.via_channel() => Some(*m),
            _ => None,
        }
    }

    /// Whether the face can push back on its sender: a stream (Unix, TCP, WebSocket) that is
    /// not read stops its sender once the kernel's buffers fill, so it is read only as far as
    /// the forwarder has room ([`Face::recv_burst`]'s budget). A datagram face cannot: what
    /// it is not read is lost in the kernel, so it is read and its drops are counted.
    pub fn pushes_back(&self) -> bool {
        self.transport().is_some_and(|t| t.pushes_back())
    }

    /// The file descriptor readiness is reported on; `None` for Ethernet faces and the UDP
    /// unicast faces without a socket of their own, whose channel's socket carries their
    /// readiness (the caller flushes them on its events). A UDP unicast face's own socket is
    /// read by its channel ([`crate::UdpChannel::recv_face`]), not by [`Face::recv_burst`].
    pub fn raw_fd(&self) -> Option<RawFd> {
        match &self.state {
            FaceState::Up(t) => t.sources()[0].map(|(fd, _)| fd),
            FaceState::Reconnecting { dial } => dial.as_ref().map(|d| d.raw_fd()),
        }
    }

    /// The descriptors registered for the face: its socket for read and write readiness (if
    /// it has its own), and the one more its transport may be woken by.
    fn sources(&self) -> [Option<(RawFd, Interest)>; 2] {
        match &self.state {
            FaceState::Up(t) => t.sources(),
            FaceState::Reconnecting { dial } => [
                dial.as_ref()
                    .map(|d| (d.raw_fd(), Interest::READABLE | Interest::WRITABLE)),
                None,
            ],
        }
    }

    /// Registers the face's socket (if it has its own) for edge-triggered read and write
    /// readiness under `token`; a shared-memory face also its eventfd, for reading.
    pub fn register(&self, registry: &Registry, token: Token) -> io::Result<()> {
        let [main, extra] = self.sources();
        for (fd, interest) in extra.into_iter().chain(main) {
            registry.register(&mut SourceFd(&fd), token, interest)?;
        }
        Ok(())
    }

    /// Removes the face's socket from `registry` (dropping the face also does).
    pub fn deregister(&self, registry: &Registry) -> io::Result<()> {
        let [main, extra] = self.sources();
        for (fd, _) in extra.into_iter().chain(main) {
            registry.deregister(&mut SourceFd(&fd))?;
        }
        Ok(())
    }

    /// Whether this face's peer asked to move to another transport (a local application
    /// asking for shared memory on its Unix connection): answer with [`Face::upgrade`].
    pub fn upgrade_requested(&self) -> bool {
        self.transport().is_some_and(|t| t.upgrade_requested())
    }

    /// Whether the face's transport is one the I/O thread looks at while awake
    /// ([`Face::polled_input`]), so the face stays on that thread (shared memory).
    pub fn is_polled(&self) -> bool {
        self.transport().is_some_and(|t| t.polled())
    }

    /// Answers the peer's request to move to another transport: the transport that replaces
    /// the face's answers it, and the face reads and writes it from now on (re-registered
    /// under `token`). If the move cannot be made, the request goes on to the forwarder like
    /// any packet (for shared memory: an Interest with no route, so the application falls
    /// back to the socket).
    pub fn upgrade(
        &mut self,
        registry: &Registry,
        token: Token,
        out: &mut Vec<Received>,
    ) -> io::Result<()> {
        let FaceState::Up(t) = &mut self.state else {
            return Ok(());
        };
        let Some(Upgrade { request, replace }) = t.take_upgrade() else {
            return Ok(());
        };
        let result = match replace {
            Ok(replace) if self.queue.is_empty() => self.deregister(registry).and_then(|()| {
                replace().inspect_err(|_| {
                    let _ = self.register(registry, token);
                })
            }),
            Ok(_) => Err(io::ErrorKind::Unsupported.into()),
            Err(e) => Err(e),
        };
        match result {
            Ok(replacement) => {
                self.state = FaceState::Up(replacement);
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

    /// Whether the face's transport has input no readiness event announced (polled while
    /// the I/O thread is awake: a shared-memory application writes its eventfd only when
    /// the thread sleeps).
    pub fn polled_input(&self) -> bool {
        self.transport().is_some_and(|t| t.has_input())
    }

    /// Before the I/O thread sleeps: asks the face's peer to wake it (shared memory);
    /// `true` when data arrived meanwhile (do not sleep).
    pub fn announce_sleep(&self) -> bool {
        self.transport().is_some_and(|t| t.announce_sleep())
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
        let FaceState::Up(transport) = &mut self.state else {
            return Ok(Progress::Drained);
        };
        let mut rx = RX.take();
        let progress = transport.recv_burst(hangup, budget, &mut rx);
        let flush_after = transport.flush_after_recv();
        if let Some(mtu) = transport.take_mtu() {
            self.link.set_mtu(mtu);
        }
        let got = !rx.is_empty();
        let (id, c) = (self.id, &mut self.counters);
        for f in rx.drain(..) {
            self.link
                .receive(id, f.from, f.frame, f.own_buffer, now, c, out);
        }
        RX.set(rx);
        if got {
            self.last_rx = now;
            if let Some(t) = &self.tenant {
                t.received(now);
            }
        }
        if let Err(FaceError::Framing(_)) = progress {
            self.counters.n_framing_errors += 1;
        }
        if flush_after && !self.queue.is_empty() {
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

    /// Whether the face's transport keeps timers of its own (WebTransport's QUIC), which the
    /// I/O thread runs ([`Face::transport_deadline`], [`Face::run_transport_timers`]).
    pub fn has_transport_timers(&self) -> bool {
        self.transport().is_some_and(|t| t.timed())
    }

    /// When the transport's timers are due next.
    pub fn transport_deadline(&self) -> Option<Instant> {
        self.transport()?.deadline()
    }

    /// Runs the transport's timers at `now`, then writes what waits in the output queue if
    /// they made room for it (QUIC's pacing or congestion window held it back); an error
    /// means the face is done (the caller closes it).
    pub fn run_transport_timers(&mut self, now: Instant) -> Result<(), FaceError> {
        let FaceState::Up(t) = &mut self.state else {
            return Ok(());
        };
        t.on_deadline(now)?;
        if let Some(mtu) = t.take_mtu() {
            self.link.set_mtu(mtu);
        }
        self.flush().map(drop)
    }

    /// Drops reassembly state that timed out; call it now and then (e.g. once per second).
    pub fn expire(&mut self, now: Instant) {
        self.link.expire(now, &mut self.counters);
    }

    /// When the face last received a frame, on its own thread or another's.
    fn last_arrival(&self) -> Instant {
        let elsewhere = self.transport().and_then(|t| t.lane_stats()?.last_rx());
        elsewhere.map_or(self.last_rx, |t| t.max(self.last_rx))
    }

    /// Whether this on-demand datagram face received nothing for its idle timeout, so the
    /// caller should close it (NFD closes such faces; streams close when the peer does).
    pub fn idle_expired(&self, now: Instant) -> bool {
        self.persistency == Persistency::OnDemand
            && self.transport().is_some_and(|t| t.via_channel())
            && now.saturating_duration_since(self.last_arrival()) >= self.idle_timeout
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
        if self.queue.is_empty() && !self.transport().is_some_and(|t| t.holds_output()) {
            return Ok(Flushed::Done);
        }
        let flushed = match &mut self.state {
            FaceState::Up(t) if t.is_up() => t.flush(&mut self.queue, &mut self.counters),
            _ => {
                self.drop_queue();
                return Ok(Flushed::Done);
            }
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
