//! Ethernet faces (NFD's `ether://[mac]` on `dev://ifname`): NDNLPv2 frames of EtherType
//! 0x8624 on one interface, through an AF_PACKET socket read with `recvmmsg` and written with
//! `sendmmsg`.
//!
//! An [`EtherChannel`] owns its interface's one socket, joined to NDN's multicast group, and
//! demultiplexes what it reads: a frame to the group goes to the channel's multicast face
//! (permanent, multi-access; reassembly keyed by sender), a frame to this host's address goes
//! to the unicast face of its sender, created on demand as the UDP channel does per remote
//! endpoint. Anything else (another group, broadcast, another host's frame seen in promiscuous
//! mode, this host's own frames) is dropped and counted on the channel. Every face of the
//! interface sends through that socket. A face's MTU is the interface's; the link service
//! fragments to it.
//!
//! A channel follows its interface as NFD does ([`netif`]): when the interface goes down
//! (or loses its carrier) its faces go down, drop what they would send and count it; when it
//! comes back they come back up; when its MTU changes, theirs follows.
//!
//! Plain AF_PACKET with batched system calls rather than a TPACKET ring: TPACKET_V3 added up
//! to 1 ms of latency at low rates here, and `recvmmsg` costs ≈82 ns per frame on a veth pair
//! (both measured on a 2-vCPU x86-64 VM), little next to the forwarder's work per packet.

pub mod frame;
pub mod lanes;
pub mod netif;
mod peer;
mod xdp_path;

pub use xdp_path::IoPath;

pub use crate::transport::LinkState;

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mio::unix::SourceFd;
use mio::{Interest, Registry, Token};
use smallvec::SmallVec;
use thiserror::Error;

use crate::config::FaceConfig;
use crate::datagram::{Arena, Datagram};
use crate::face::{Face, FaceParts};
use crate::listener::ChannelStatus;
use crate::on_demand::Peers;
use crate::sys::packet::{interface_index, PacketSocket};
use crate::sys::{timestamp_arrivals, RecvBatch, BATCH};
use crate::transport::{FaceError, Progress};
use crate::udp::UdpChannel;
use crate::uri::FaceUri;
use crate::xdp::filter::UdpDst;
use crate::xdp::steer::Dispatch;
use crate::xdp::udp::Checksum;
use frame::{EtherHeader, ETHERTYPE_NDN, HEADER_LEN, NDN_MULTICAST};
use kite_link::reassembly::{Endpoint, Reassembler};
use kite_link::ChannelCounters;
use kite_link::MacAddr;
use kite_link::{FaceId, FaceIds, FaceScope, LinkType, Persistency};
use lanes::{EtherLane, LaneView, ToHome};
use netif::LinkEvents;
use peer::{EtherOut, EtherPeer};
use xdp_path::XdpPath;

/// The wait in the socket's receive queue from which a frame counts as delayed
/// ([`ChannelCounters::n_delayed`]): CoDel's target delay (RFC 8289; NDN-DPDK's too).
pub const DELAYED: Duration = Duration::from_millis(5);

/// Why an Ethernet channel could not be opened.
#[derive(Debug, Error)]
pub enum EtherError {
    /// No interface has this name (in this network namespace).
    #[error("no network interface named {0:?}")]
    NoSuchInterface(String),
    /// The interface is not Ethernet (loopback, a tunnel, …).
    #[error("{0} is not an Ethernet interface")]
    NotEthernet(String),
    /// Opening a raw socket needs CAP_NET_RAW.
    #[error(
        "raw Ethernet access to {0} is not permitted: it needs CAP_NET_RAW (run as root, or \
         `setcap cap_net_raw+ep` on the kite binary)"
    )]
    PermissionDenied(String),
    /// Another socket error.
    #[error("cannot open Ethernet interface {iface}: {error}")]
    Io {
        /// The interface.
        iface: String,
        /// Why (in the message, so not also reported as the source).
        error: io::Error,
    },
}

/// What a channel does with one received frame, decided from its octets alone (no socket, no
/// face table), so the demultiplexing can be tested and fuzzed on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrival<'a> {
    /// Shorter than an Ethernet header, or another EtherType: counted as malformed.
    Malformed,
    /// Not for any face here (another group, broadcast, another host's frame seen in
    /// promiscuous mode, this host's own frames, a group source): counted as foreign.
    Foreign,
    /// For the face of `remote` ([`NDN_MULTICAST`] for a frame to the group, else the
    /// sender), received from `from` (the sender's address on the multi-access group face,
    /// the only peer on a unicast face), whose NDNLPv2 frame is `frame` (padding cut off).
    Face {
        /// The key of the face in the channel's table.
        remote: MacAddr,
        /// Who sent it, as reassembly keys fragments.
        from: Endpoint,
        /// The NDNLPv2 frame: the payload's first TLV element (see [`frame::packet_len`]).
        frame: &'a [u8],
    },
}

/// Demultiplexes a frame received on an interface whose address is `local`: a frame to NDN's
/// group goes to the group face, one to `local` to its sender's face; anything else is
/// foreign, and a frame from `local` or from a group address is never taken.
pub fn demultiplex(frame: &[u8], local: MacAddr) -> Arrival<'_> {
    let Ok((h, payload)) = EtherHeader::parse(frame) else {
        return Arrival::Malformed;
    };
    if h.src == local || h.src.is_multicast() {
        return Arrival::Foreign;
    }
    let (remote, from) = if h.dst == NDN_MULTICAST {
        (NDN_MULTICAST, Endpoint::Mac(h.src))
    } else if h.dst == local {
        (h.src, Endpoint::Peer)
    } else {
        return Arrival::Foreign;
    };
    Arrival::Face {
        remote,
        from,
        frame: &payload[..frame::packet_len(payload)],
    }
}

/// An interface's Ethernet channel: its socket, its multicast face and its unicast faces.
pub struct EtherChannel {
    socket: Arc<PacketSocket>,
    name: String,
    index: u32,
    local: FaceUri,
    mac: MacAddr,
    link: LinkState,
    /// The face of each unicast peer, and the multicast face under [`NDN_MULTICAST`].
    peers: Peers<MacAddr>,
    batch: RecvBatch,
    arena: Arena,
    /// Reassembly of every face of the channel, in one budget.
    reassembler: Reassembler,
    config: FaceConfig,
    counters: ChannelCounters,
    /// The receive buffer the kernel granted (it reports twice what it holds for frames).
    recv_buffer: usize,
    /// How long the newest frame of the last burst waited in the socket's receive queue.
    waited: Duration,
    /// Whether the AF_PACKET socket may hold frames: set by its readiness
    /// ([`EtherChannel::packet_readable`]), cleared when a read finds it drained. Its
    /// registration is edge-triggered, so a frame that arrives later sets it again; on
    /// AF_XDP the socket is then read only when it has something (a frame the program
    /// passed), not on every burst of the rings.
    packet_ready: bool,
    /// The AF_XDP path, when the channel has one.
    xdp: Option<Box<XdpPath>>,
    io_path: IoPath,
    /// The UDP listeners' addresses whose datagrams the AF_XDP path takes
    /// ([`EtherChannel::serve_udp`]).
    udp_locals: Vec<SocketAddr>,
    /// The home's side of its lanes, when the AF_XDP path steers ([`EtherChannel::steer`]).
    lanes: Option<Lanes>,
}

/// A steered channel's side of its lanes: what it publishes to them and what they hand it.
#[derive(Debug)]
struct Lanes {
    shared: Arc<lanes::Shared>,
    /// The frames each lane hands over.
    from: Vec<rtrb::Consumer<ToHome>>,
    /// How many lanes the channel has, its own included (the slots of each face's stats).
    count: usize,
    /// What arrival times in the faces' stats count from.
    epoch: Instant,
    /// The faces lanes may take frames for, as last published.
    faces: lanes::LaneFaces,
}

/// The UDP channels an Ethernet channel's AF_XDP path hands datagrams to (those of the I/O
/// thread that owns it), and where the datagrams go: each with the index of its channel in
/// `channels`, for the caller to give each channel's to its faces with that channel's
/// reassembler.
pub struct UdpChannels<'a> {
    /// The I/O thread's UDP channels.
    pub channels: &'a mut [UdpChannel],
    /// The datagrams read for them, each with its channel's index.
    pub datagrams: &'a mut Vec<(usize, Datagram)>,
}

impl std::fmt::Debug for EtherChannel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EtherChannel")
            .field("iface", &self.name)
            .field("mac", &self.mac)
            .field("faces", &self.peers.len())
            .finish()
    }
}

impl EtherChannel {
    /// The reassembler of every face of the channel: hand it to [`Face::receive_frame`], and
    /// count what it drops on the faces ([`Reassembler::take_drops`]).
    pub fn reassembler(&mut self) -> &mut Reassembler {
        &mut self.reassembler
    }

    /// Opens interface `iface`: a socket for NDN's EtherType, joined to NDN's multicast group.
    pub fn open(iface: &str, config: FaceConfig) -> Result<Self, EtherError> {
        let io_err = |source: io::Error| {
            if source.kind() == io::ErrorKind::PermissionDenied {
                EtherError::PermissionDenied(iface.to_owned())
            } else {
                EtherError::Io {
                    iface: iface.to_owned(),
                    error: source,
                }
            }
        };
        let index = interface_index(iface)
            .map_err(io_err)?
            .ok_or_else(|| EtherError::NoSuchInterface(iface.to_owned()))?;
        let socket = PacketSocket::open(index, ETHERTYPE_NDN).map_err(io_err)?;
        let info = socket.interface_info(iface).map_err(io_err)?;
        if info.hw_type != libc::ARPHRD_ETHER || info.mac == [0; 6] {
            return Err(EtherError::NotEthernet(iface.to_owned()));
        }
        socket
            .join_multicast(index, NDN_MULTICAST.0)
            .map_err(io_err)?;
        let recv_buffer = socket
            .set_recv_buffer(config.ether_socket_buffer)
            .map_err(io_err)?;
        timestamp_arrivals(socket.raw_fd()).map_err(io_err)?;
        Ok(EtherChannel {
            recv_buffer,
            socket: Arc::new(socket),
            name: iface.to_owned(),
            index,
            local: FaceUri::Dev(iface.to_owned()),
            mac: MacAddr(info.mac),
            link: LinkState {
                up: info.running,
                mtu: info.mtu,
            },
            peers: Peers::new(config.ether_on_demand_limit),
            batch: RecvBatch::stamped(HEADER_LEN + info.mtu),
            arena: Arena::default(),
            reassembler: Reassembler::new(config.reassembly_limits()),
            config,
            counters: ChannelCounters::default(),
            waited: Duration::ZERO,
            packet_ready: true,
            xdp: None,
            io_path: IoPath::Packet { fallback: None },
            udp_locals: Vec::new(),
            lanes: None,
        })
    }

    /// Opens interface `iface` as [`EtherChannel::open`] does, then moves its NDN frames to
    /// AF_XDP ([`IoPath::Xdp`], each receive queue's socket with [`FaceConfig::xdp_umem`]).
    /// When AF_XDP cannot be had the channel keeps its AF_PACKET socket, and
    /// [`EtherChannel::io_path`] says why.
    pub fn open_xdp(iface: &str, config: FaceConfig) -> Result<Self, EtherError> {
        let mut ch = Self::open(iface, config)?;
        match XdpPath::open(iface, ch.index, ch.link.mtu, config.xdp_umem) {
            Ok(path) => {
                ch.io_path = path.io_path();
                ch.xdp = Some(Box::new(path));
            }
            Err(why) => {
                ch.io_path = IoPath::Packet {
                    fallback: Some(why),
                }
            }
        }
        Ok(ch)
    }

    /// Takes the UDP datagrams to the listeners bound to `locals` (each a wildcard address,
    /// for every address of its family on the interface, or one address) through the AF_XDP
    /// path: the XDP program's map of UDP destinations becomes those (address, port) pairs,
    /// and [`EtherChannel::recv_burst`] hands their datagrams to the UDP channels. Without
    /// the AF_XDP path this does nothing. The interface's addresses are read again when a
    /// notification names it ([`EtherChannel::addresses_changed`]). The destinations the
    /// program now takes, or why none: the datagrams then reach the listeners' sockets
    /// through the kernel, as without AF_XDP.
    pub fn serve_udp(&mut self, locals: &[SocketAddr]) -> Result<Vec<SocketAddr>, String> {
        self.udp_locals = locals.to_vec();
        self.fill_udp_dsts()
    }

    /// Reads the interface's addresses again when `events` concern it and the AF_XDP path
    /// takes UDP datagrams: the destinations it now takes, when it reread them.
    pub fn addresses_changed(
        &mut self,
        events: &LinkEvents,
    ) -> Option<Result<Vec<SocketAddr>, String>> {
        if self.udp_locals.is_empty() || self.xdp.is_none() || !events.concerns(self.index) {
            return None;
        }
        Some(self.fill_udp_dsts())
    }

    fn fill_udp_dsts(&mut self) -> Result<Vec<SocketAddr>, String> {
        let Some(x) = &mut self.xdp else {
            return Ok(Vec::new());
        };
        let addrs = netif::interface_addresses(self.index)
            .map_err(|e| format!("cannot read the addresses of {}: {e}", self.name))?;
        let dsts = udp_destinations(&self.udp_locals, &addrs);
        let keys: Vec<UdpDst> = dsts.iter().map(|&d| UdpDst::of(d)).collect();
        x.set_udp_dsts(&keys)?;
        Ok(dsts)
    }

    /// How the channel reads and writes its interface.
    pub fn io_path(&self) -> &IoPath {
        &self.io_path
    }

    /// What Kite's XDP program did with the interface's frames (NDN frames handed to Kite,
    /// others passed to the kernel, runts); `None` without the AF_XDP path.
    pub fn xdp_counts(&self) -> Option<crate::xdp::program::XdpCounts> {
        self.xdp.as_ref().and_then(|x| x.counts().ok())
    }

    /// The channel's URI, `dev://ifname` (NFD ChannelStatus LocalUri, and every face's
    /// LocalUri).
    pub fn local_uri(&self) -> &FaceUri {
        &self.local
    }

    /// The interface name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The interface's Ethernet address.
    pub fn mac(&self) -> MacAddr {
        self.mac
    }

    /// The interface MTU (every face's MTU).
    pub fn mtu(&self) -> usize {
        self.link.mtu
    }

    /// The socket's receive buffer as the kernel reports it (twice the octets asked, when
    /// granted in full; less when `net.core.rmem_max` capped it without CAP_NET_ADMIN).
    pub fn recv_buffer(&self) -> usize {
        self.recv_buffer
    }

    /// Adds the frames the kernel dropped since the last call to the channel's counters; how
    /// many. On AF_PACKET, those its receive buffer had no room for (PACKET_STATISTICS); on
    /// AF_XDP, also those the program redirected and the sockets could not take
    /// (XDP_STATISTICS rx_dropped and rx_ring_full, as deltas), so each lost frame counts
    /// once. A system call per socket:
    /// call it on a timer, not per frame.
    pub fn take_socket_drops(&mut self) -> u64 {
        let mut n = self.socket.take_drops().unwrap_or(0);
        if let Some(x) = &mut self.xdp {
            n += x.take_drops();
        }
        self.counters.n_socket_drops += n;
        n
    }

    /// The stale Kite XDP program [`EtherChannel::open_xdp`] replaced on the interface (one
    /// attached by netlink whose process is gone), for the caller to log.
    pub fn xdp_replaced(&self) -> Option<crate::xdp::program::StaleProgram> {
        self.xdp.as_ref().and_then(|x| x.replaced())
    }

    /// How long the newest frame of the last burst waited in the kernel's receive queue
    /// before it was read (the others waited longer): the queue Kite's own rings do not see,
    /// for the forwarding threads' CoDel to count with theirs.
    pub fn waited(&self) -> Duration {
        self.waited
    }

    /// Frames read but given to no face (not for this host, too long, not parsable).
    pub fn counters(&self) -> &ChannelCounters {
        &self.counters
    }

    /// The channel's URI and counters (an NFD ChannelStatus with Kite's drop counters), its
    /// I/O path, and the XDP program's verdicts when it has one.
    pub fn status(&self) -> ChannelStatus {
        let mut counters = self.counters;
        if let Some(l) = &self.lanes {
            l.shared.add_to(&mut counters);
        }
        ChannelStatus {
            local: self.local.clone(),
            counters,
            io_path: Some(self.io_path.to_string()),
            cert_sha256: None,
            xdp: self.xdp_counts(),
        }
    }

    /// Re-reads the interface's state and MTU if `events` concern it; the new state when it
    /// changed, for the caller to pass to each of the channel's faces
    /// ([`Face::follow_link`]). An interface that is gone (or renamed, or replaced) is down.
    pub fn link_changed(&mut self, events: &LinkEvents) -> Option<LinkState> {
        if !events.concerns(self.index) {
            return None;
        }
        let same = matches!(interface_index(&self.name), Ok(Some(i)) if i == self.index);
        let now = match self.socket.interface_info(&self.name) {
            Ok(info) if same => LinkState {
                up: info.running,
                mtu: info.mtu,
            },
            _ => LinkState {
                up: false,
                ..self.link
            },
        };
        if now == self.link {
            return None;
        }
        if now.mtu > self.link.mtu {
            self.batch = RecvBatch::stamped(HEADER_LEN + now.mtu);
        }
        if now.up && !self.link.up {
            // The kernel left ENETDOWN pending on the socket when the link went down; the
            // next send would fail with it (and lose its frame).
            let _ = socket2::SockRef::from(self.socket.as_ref()).take_error();
        }
        self.link = now;
        self.publish_lanes();
        Some(now)
    }

    /// Registers the AF_PACKET socket under `token` and the AF_XDP sockets, if any, under
    /// `xdp_token`, both for edge-triggered read and write readiness: the caller tells
    /// [`EtherChannel::packet_readable`] when `token` is readable, so a burst reads the
    /// AF_PACKET socket only then. A writable event means every face of this channel with
    /// pending output may flush again.
    pub fn register(&self, registry: &Registry, token: Token, xdp_token: Token) -> io::Result<()> {
        registry.register(
            &mut SourceFd(&self.socket.raw_fd()),
            token,
            Interest::READABLE | Interest::WRITABLE,
        )?;
        for rx in self.xdp.iter().flat_map(|x| &x.rx) {
            registry.register(
                &mut SourceFd(&rx.raw_fd()),
                xdp_token,
                Interest::READABLE | Interest::WRITABLE,
            )?;
        }
        Ok(())
    }

    /// Whether an AF_XDP socket's RX ring holds frames (read by no system call): the I/O
    /// thread reads the channel next turn without waiting for the poll to say so.
    pub fn xdp_has_frames(&mut self) -> bool {
        self.xdp
            .iter_mut()
            .flat_map(|x| x.rx.iter_mut())
            .any(|rx| rx.has_frames())
    }

    /// Notes that the AF_PACKET socket became readable: the next
    /// [`EtherChannel::recv_burst`] reads it, and goes on reading it until it is drained.
    pub fn packet_readable(&mut self) {
        self.packet_ready = true;
    }

    /// The face of `remote` (a unicast peer, or [`NDN_MULTICAST`]), if one exists.
    pub fn face_of(&self, remote: MacAddr) -> Option<FaceId> {
        self.peers.get(&remote)
    }

    /// Creates the interface's multicast face: remote `ether://[01:00:5e:00:17:aa]`,
    /// permanent, multi-access.
    pub fn multicast_face(&mut self, id: FaceId) -> Result<Face, FaceError> {
        if let Some(existing) = self.peers.get(&NDN_MULTICAST) {
            return Err(FaceError::Exists(existing));
        }
        Ok(self.new_face(
            id,
            NDN_MULTICAST,
            Persistency::Permanent,
            LinkType::MultiAccess,
        ))
    }

    /// Creates the unicast face of `remote` (`faces/create ether://[mac]`); fails with
    /// [`FaceError::Exists`] when one exists and [`FaceError::NotUnicast`] for a group address.
    pub fn connect(
        &mut self,
        id: FaceId,
        remote: MacAddr,
        persistency: Persistency,
    ) -> Result<Face, FaceError> {
        if remote.is_multicast() {
            return Err(FaceError::NotUnicast);
        }
        if let Some(existing) = self.peers.get(&remote) {
            return Err(FaceError::Exists(existing));
        }
        Ok(self.new_face(id, remote, persistency, LinkType::PointToPoint))
    }

    /// Forgets `remote`'s face `face` once the caller closed it: a unicast peer's next frame
    /// creates a new face; frames to the group are dropped.
    pub fn forget(&mut self, remote: MacAddr, face: FaceId) {
        self.peers.remove(&remote, face);
        if let Some(l) = &mut self.lanes {
            if l.faces.get(&remote).is_some_and(|(id, _)| *id == face) {
                l.faces.remove(&remote);
                self.publish_lanes();
            }
        }
    }

    /// Notes that `remote`'s face `face` became (or stopped being) on-demand, which decides
    /// whether it counts against [`FaceConfig::ether_on_demand_limit`].
    pub fn set_on_demand(&mut self, remote: MacAddr, face: FaceId, on_demand: bool) {
        self.peers.set_on_demand(&remote, face, on_demand);
    }

    /// Reads one burst at `now`: a burst of each AF_XDP socket's RX ring, if any, and one
    /// `recvmmsg` when the AF_PACKET socket may hold frames ([`EtherChannel::packet_readable`]
    /// since it was last found drained). Frames for known faces go to `datagrams`;
    /// a new unicast sender whose frame is a well-formed NDN packet gets an on-demand face
    /// (id from `ids`) pushed to `created`, and its frames go to `datagrams` as well; any
    /// other frame from a new sender is counted as malformed on the channel. When the channel
    /// already holds [`FaceConfig::ether_on_demand_limit`] on-demand faces, the idlest is
    /// given up first and its id pushed to `evicted`, for the caller to close. Padding is cut
    /// off here. A frame longer than the MTU is counted on the channel and makes no face; for
    /// a known face it also goes to that face as an empty frame, which the face counts as
    /// malformed.
    ///
    /// A UDP datagram the AF_XDP path read ([`EtherChannel::serve_udp`]) goes to the channel
    /// of `udp` serving its destination ([`UdpChannel::receive_from`]: the same
    /// demultiplexing by sender and admission as a datagram its socket read), into
    /// `udp.datagrams`, once its IP and UDP headers are checked ([`crate::xdp::udp::parse`]).
    /// A frame not to this interface's address is counted as foreign on this channel, a
    /// malformed header as malformed; a datagram whose UDP checksum is wrong is counted on its
    /// UDP channel ([`UdpChannel::count_bad_checksum`]) and dropped.
    pub fn recv_burst(
        &mut self,
        now: Instant,
        ids: &mut FaceIds,
        datagrams: &mut Vec<Datagram>,
        created: &mut Vec<Face>,
        evicted: &mut Vec<FaceId>,
        udp: &mut UdpChannels<'_>,
    ) -> io::Result<Progress> {
        let mut new_peers = SmallVec::<[(FaceId, MacAddr); 4]>::new();
        let mut inbound = Inbound {
            mac: self.mac,
            index: self.index,
            now,
            peers: &mut self.peers,
            arena: &mut self.arena,
            counters: &mut self.counters,
            ids,
            datagrams,
            created,
            evicted,
            new_peers: &mut new_peers,
        };
        let mut progress = Progress::Drained;
        let longest = HEADER_LEN + self.link.mtu;
        if let Some(x) = &self.xdp {
            // Frames a kick left in the TX ring (the device's queue was full) go now, whether
            // or not a face has more to send.
            let mut tx = x.tx.lock().unwrap_or_else(|e| e.into_inner());
            if tx.has_pending() {
                tx.commit()?;
            }
        }
        for rx in self.xdp.iter_mut().flat_map(|x| x.rx.iter_mut()) {
            // The program hands over NDN frames and Kite's UDP datagrams: anything not of
            // NDN's EtherType is one of the latter.
            let n = rx.recv(BATCH as u32, |f| match f.get(12..HEADER_LEN) {
                Some(t) if t != ETHERTYPE_NDN.to_be_bytes() => inbound.take_udp(f, udp),
                _ => inbound.take(f, f.len() > longest),
            });
            if n == BATCH as u32 {
                progress = Progress::More;
            }
            rx.wake_if_needed()?;
        }
        // What the lanes handed over, a burst from each.
        for from in self.lanes.iter_mut().flat_map(|l| &mut l.from) {
            let Ok(chunk) = from.read_chunk(from.slots().min(BATCH)) else {
                continue;
            };
            for (frame, truncated) in chunk {
                inbound.take(&frame, truncated);
            }
            if !from.is_empty() {
                progress = Progress::More;
            }
        }
        let packet = match self.packet_ready {
            true => self.batch.recv_ready(self.socket.raw_fd()),
            false => Ok(None),
        };
        match packet {
            Ok(Some(n)) => {
                self.waited = self.batch.waited();
                if self.waited >= DELAYED {
                    // The newest frame of the burst waited that long, so did every older one.
                    inbound.counters.n_delayed += n as u64;
                }
                for i in 0..n {
                    inbound.take(self.batch.head(i), self.batch.truncated(i));
                }
                if n == BATCH {
                    progress = Progress::More;
                } else {
                    // Fewer than asked: the queue was empty when the call ended, so any later
                    // frame is a new edge.
                    self.packet_ready = false;
                }
            }
            Ok(None) => self.packet_ready = false,
            // The error the kernel left when the link went down, read once: go on reading.
            Err(e) if is_link_down(&e) => progress = Progress::More,
            Err(e) => return Err(e),
        }
        let new = !new_peers.is_empty();
        for (id, remote) in new_peers {
            let p2p = LinkType::PointToPoint;
            created.push(self.face(id, remote, Persistency::OnDemand, p2p));
        }
        if new {
            self.publish_lanes();
        }
        Ok(progress)
    }

    /// Whether the lanes left work for the channel's own thread: frames to receive, or read
    /// frames to put back into the fill rings ([`EtherChannel::recv_burst`] does both). A
    /// few loads, no system call: the thread asks each turn, and before it sleeps.
    pub fn has_lane_work(&self) -> bool {
        let Some(l) = &self.lanes else {
            return false;
        };
        l.from.iter().any(|f| !f.is_empty())
            || self
                .xdp
                .iter()
                .flat_map(|x| &x.rx)
                .any(|rx| rx.frames_returned() > 0)
    }

    /// Steers the channel's NDN frames over `lanes` I/O threads by `dispatch` (lane 0 is the
    /// channel's own thread): opens a lane socket for each other lane on every receive
    /// queue, places them in the XDP program's socket map and switches the program's
    /// steering on. The lanes, for lanes 1, 2, …, for the caller to hand to their threads.
    /// Fails without the AF_XDP path, or when the kernel refuses a socket; the channel then
    /// reads every frame itself, as before.
    pub fn steer(&mut self, lanes: usize, dispatch: Dispatch) -> Result<Vec<EtherLane>, String> {
        let Some(x) = &mut self.xdp else {
            return Err("the channel has no AF_XDP path".into());
        };
        let sockets = x.steer(self.index, lanes, dispatch)?;
        self.io_path = x.io_path();
        let shared = Arc::new(lanes::Shared::new(
            lanes,
            self.lane_view(Default::default()),
        ));
        let mut from = Vec::with_capacity(lanes);
        let mut out = Vec::with_capacity(lanes);
        for (i, sockets) in sockets.into_iter().enumerate() {
            let (to_home, home) = rtrb::RingBuffer::new(lanes::HOME_RING);
            from.push(home);
            let lane = EtherLane::new(sockets, shared.clone(), i + 1, to_home, self.name.clone());
            out.push(lane);
        }
        self.lanes = Some(Lanes {
            shared,
            from,
            count: lanes,
            epoch: Instant::now(),
            faces: Default::default(),
        });
        self.publish_lanes();
        Ok(out)
    }

    /// Publishes the faces' snapshot to the lanes.
    fn publish_lanes(&mut self) {
        if let Some(l) = &self.lanes {
            let view = self.lane_view(l.faces.clone());
            l.shared.view.store(Arc::new(view));
        }
    }

    /// The lanes' view of the channel with these `faces`.
    fn lane_view(&self, faces: lanes::LaneFaces) -> LaneView {
        LaneView {
            mac: self.mac,
            longest: HEADER_LEN + self.link.mtu,
            max_packet: self.config.max_packet_size,
            faces,
        }
    }

    fn new_face(
        &mut self,
        id: FaceId,
        remote: MacAddr,
        persistency: Persistency,
        link_type: LinkType,
    ) -> Face {
        let on_demand = persistency == Persistency::OnDemand;
        self.peers.insert(remote, id, on_demand, Instant::now());
        let face = self.face(id, remote, persistency, link_type);
        self.publish_lanes();
        face
    }

    /// A face toward `remote` on this channel's socket (the caller records it in `peers`
    /// first, and publishes it to the lanes after).
    fn face(
        &mut self,
        id: FaceId,
        remote: MacAddr,
        persistency: Persistency,
        link_type: LinkType,
    ) -> Face {
        let lanes = self.lanes.as_mut().map(|l| {
            let stats = Arc::new(crate::lanes::LaneStats::new(l.count, l.epoch));
            l.faces.insert(remote, (id, stats.clone()));
            self.peers.read_elsewhere(&remote, stats.clone());
            stats
        });
        let out = match &self.xdp {
            Some(x) => EtherOut::Xdp(Arc::clone(&x.tx)),
            None => EtherOut::Packet(Arc::clone(&self.socket)),
        };
        let transport = EtherPeer {
            out,
            remote,
            local: self.local.clone(),
            header: EtherHeader::ndn(remote, self.mac).encode(),
            link: self.link,
            lanes,
        };
        let parts = FaceParts {
            scope: FaceScope::NonLocal,
            persistency,
            link_type,
            redial: None,
        };
        Face::new(id, parts, Box::new(transport), &self.config)
    }
}

/// One receive burst's view of a channel: what it needs to hand a frame to its face.
struct Inbound<'a> {
    mac: MacAddr,
    /// The interface's index, the scope of IPv6 link-local senders.
    index: u32,
    now: Instant,
    peers: &'a mut Peers<MacAddr>,
    arena: &'a mut Arena,
    counters: &'a mut ChannelCounters,
    ids: &'a mut FaceIds,
    datagrams: &'a mut Vec<Datagram>,
    /// On-demand UDP faces made during the burst.
    created: &'a mut Vec<Face>,
    evicted: &'a mut Vec<FaceId>,
    /// Unicast senders given an on-demand face, for the channel to make it after the burst.
    new_peers: &'a mut SmallVec<[(FaceId, MacAddr); 4]>,
}

impl Inbound<'_> {
    /// Hands one received frame (`truncated`: longer than the MTU) to its face, giving a new
    /// unicast sender an on-demand face, or counts it on the channel. Padding is cut off.
    fn take(&mut self, frame: &[u8], truncated: bool) {
        let (remote, from, frame) = match demultiplex(frame, self.mac) {
            Arrival::Malformed => {
                self.counters.n_malformed += 1;
                return;
            }
            Arrival::Foreign => {
                self.counters.n_foreign += 1;
                return;
            }
            Arrival::Face {
                remote,
                from,
                frame,
            } => (remote, from, frame),
        };
        let known = match from {
            Endpoint::Peer => self.peers.touch(&remote, self.now),
            _ => self.peers.get(&remote),
        };
        if truncated {
            self.counters.n_truncated += 1;
            if let Some(face) = known {
                self.datagrams.push(Datagram::cut(face, from));
            }
            return;
        }
        let (frame, own_buffer) = self.arena.receive(frame);
        let face = match known {
            Some(id) => id,
            None if from == Endpoint::Peer => {
                match (self.peers).admit(remote, &frame, self.ids, self.now, self.evicted) {
                    Some(id) => {
                        self.new_peers.push((id, remote));
                        id
                    }
                    None => {
                        self.counters.n_malformed += 1;
                        return;
                    }
                }
            }
            None => {
                self.counters.n_no_face += 1;
                return;
            }
        };
        self.datagrams.push(Datagram {
            face,
            from,
            frame,
            own_buffer,
        });
    }
}

impl Inbound<'_> {
    /// Hands the UDP datagram in `frame` (one the XDP program took: IPv4 or IPv6) to the
    /// channel of `udp` that serves its destination, or counts it (see
    /// [`EtherChannel::recv_burst`]).
    fn take_udp(&mut self, frame: &[u8], udp: &mut UdpChannels<'_>) {
        // A unicast frame for another host (promiscuous mode), or to a group: the kernel
        // would not have taken it either.
        if frame.get(..6) != Some(&self.mac.0[..]) {
            self.counters.n_foreign += 1;
            return;
        }
        let d = match crate::xdp::udp::parse(frame, self.index) {
            Ok(d) => d,
            Err(_) => {
                self.counters.n_malformed += 1;
                return;
            }
        };
        let Some(u) = channel_for(udp.channels, d.dst) else {
            self.counters.n_foreign += 1;
            return;
        };
        let channel = &mut udp.channels[u];
        if d.checksum == Checksum::Bad {
            channel.count_bad_checksum();
            return;
        }
        let (ids, created, evicted) = (&mut *self.ids, &mut *self.created, &mut *self.evicted);
        if let Some(dg) = channel.receive_from(d.src, d.payload, self.now, ids, created, evicted) {
            udp.datagrams.push((u, dg));
        }
    }
}

/// The UDP channel datagrams to `dst` go to: the one bound to that address and port, else a
/// wildcard one of its family on that port, as the kernel chooses a socket.
fn channel_for(channels: &[UdpChannel], dst: SocketAddr) -> Option<usize> {
    let exact =
        |c: &UdpChannel| c.local_addr().ip() == dst.ip() && c.local_addr().port() == dst.port();
    channels
        .iter()
        .position(exact)
        .or_else(|| channels.iter().position(|c| c.serves(dst)))
}

/// The (address, port) pairs the UDP listeners bound to `locals` serve on an interface whose
/// addresses are `addrs`: a wildcard listener each address of its family, any other its own
/// address (the kernel delivers a datagram to any of the host's addresses, whichever
/// interface it came in on). At most [`crate::xdp::program::MAX_UDP_DSTS`].
fn udp_destinations(locals: &[SocketAddr], addrs: &[IpAddr]) -> Vec<SocketAddr> {
    let mut dsts: Vec<SocketAddr> = Vec::new();
    for l in locals {
        let served = match l.ip().is_unspecified() {
            true => addrs
                .iter()
                .filter(|a| a.is_ipv4() == l.is_ipv4())
                .copied()
                .collect(),
            false => vec![l.ip()],
        };
        for a in served {
            let d = SocketAddr::new(a, l.port());
            if !dsts.contains(&d) {
                dsts.push(d);
            }
        }
    }
    dsts.truncate(crate::xdp::program::MAX_UDP_DSTS);
    dsts
}

/// Whether a socket error says the interface is down.
fn is_link_down(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::ENETDOWN)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOCAL: MacAddr = MacAddr([0x02, 0, 0, 0, 0, 1]);
    const PEER: MacAddr = MacAddr([0x02, 0, 0, 0, 0, 2]);

    /// Where a frame from `src` to `dst` with an empty LpPacket and padding goes: the face's
    /// key and the sender as reassembly sees it, or `None` when it is foreign.
    fn dest(dst: MacAddr, src: MacAddr) -> Option<(MacAddr, Endpoint)> {
        let mut f = EtherHeader::ndn(dst, src).encode().to_vec();
        f.extend_from_slice(&[100, 0]);
        f.extend_from_slice(frame::padding(2));
        match demultiplex(&f, LOCAL) {
            Arrival::Face {
                remote,
                from,
                frame,
            } => {
                assert_eq!(frame, &[100, 0], "padding cut off");
                Some((remote, from))
            }
            Arrival::Foreign => None,
            Arrival::Malformed => panic!("a well-formed header"),
        }
    }

    #[test]
    fn frames_go_to_the_group_face_or_the_senders_face() {
        assert_eq!(
            dest(NDN_MULTICAST, PEER),
            Some((NDN_MULTICAST, Endpoint::Mac(PEER)))
        );
        assert_eq!(dest(LOCAL, PEER), Some((PEER, Endpoint::Peer)));
    }

    #[test]
    fn frames_for_no_face_here_are_foreign() {
        let other_group = MacAddr([0x01, 0, 0x5e, 0, 0, 1]);
        let broadcast = MacAddr([0xff; 6]);
        let other_host = MacAddr([0x02, 0, 0, 0, 0, 3]);
        assert_eq!(dest(other_group, PEER), None);
        assert_eq!(dest(broadcast, PEER), None);
        assert_eq!(dest(other_host, PEER), None, "promiscuous");
        assert_eq!(dest(NDN_MULTICAST, LOCAL), None, "our own");
        assert_eq!(dest(LOCAL, NDN_MULTICAST), None, "group source");
    }

    #[test]
    fn short_and_foreign_protocol_frames_are_malformed() {
        assert_eq!(demultiplex(&[0; 13], LOCAL), Arrival::Malformed);
        let mut ipv4 = EtherHeader::ndn(LOCAL, PEER).encode();
        ipv4[12..].copy_from_slice(&[0x08, 0x00]);
        assert_eq!(demultiplex(&ipv4, LOCAL), Arrival::Malformed);
    }

    #[test]
    fn wildcard_listeners_serve_each_address_of_their_family_and_others_their_own() {
        let addrs: Vec<IpAddr> = ["10.0.0.1", "10.0.1.1", "2001:db8::1", "fe80::1"]
            .iter()
            .map(|a| a.parse().unwrap())
            .collect();
        let locals: Vec<SocketAddr> = [
            "0.0.0.0:6363",
            "[::]:6363",
            "192.0.2.7:7000",
            "10.0.0.1:6363",
        ]
        .iter()
        .map(|a| a.parse().unwrap())
        .collect();
        let got = udp_destinations(&locals, &addrs);
        let want: Vec<SocketAddr> = [
            "10.0.0.1:6363",
            "10.0.1.1:6363",
            "[2001:db8::1]:6363",
            "[fe80::1]:6363",
            "192.0.2.7:7000",
        ]
        .iter()
        .map(|a| a.parse().unwrap())
        .collect();
        assert_eq!(got, want, "each once");
        assert!(udp_destinations(&[], &addrs).is_empty());
    }

    #[test]
    fn a_datagram_goes_to_the_channel_bound_to_its_address_before_the_wildcard() {
        let bind = |a: &str| {
            UdpChannel::bind_reuse_port(a.parse().unwrap(), FaceConfig::default()).unwrap()
        };
        let wild = bind("0.0.0.0:0");
        let port = wild.local_addr().port();
        let channels = [wild, bind(&format!("127.0.0.1:{port}")), bind("[::]:0")];
        let v6 = channels[2].local_addr().port();
        let at = |a: String| channel_for(&channels, a.parse().unwrap());
        assert_eq!(at(format!("127.0.0.1:{port}")), Some(1));
        assert_eq!(at(format!("10.9.9.9:{port}")), Some(0));
        assert_eq!(at(format!("[::1]:{v6}")), Some(2));
        assert_eq!(at(format!("[::1]:{port}")), None, "another family's port");
        assert_eq!(at(format!("127.0.0.1:{v6}")), None);
    }

    #[test]
    fn missing_and_non_ethernet_interfaces_are_told_apart() {
        let config = FaceConfig::default();
        assert!(matches!(
            EtherChannel::open("kite-no-such0", config),
            Err(EtherError::NoSuchInterface(n)) if n == "kite-no-such0"
        ));
        match EtherChannel::open("lo", config) {
            Err(EtherError::NotEthernet(n)) => assert_eq!(n, "lo"),
            Err(EtherError::PermissionDenied(_)) => kite_testkit::skip("needs CAP_NET_RAW"),
            other => panic!("lo: {other:?}"),
        }
    }
}
