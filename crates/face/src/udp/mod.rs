//! UDP faces. A [`UdpChannel`] owns one listening socket per local endpoint, reads it with
//! `recvmmsg` and demultiplexes datagrams by sender: a new sender gets an on-demand face,
//! closed by the caller once [`Face::idle_expired`](crate::Face::idle_expired). Each unicast
//! face then gets a socket of its own, bound to the listener's address (`SO_REUSEADDR`) and
//! connected to its peer, as NFD's unicast UDP faces have: the kernel demultiplexes by
//! 4-tuple (a connected socket is preferred to the listener), so the peer's datagrams reach
//! the face's socket, which the I/O thread reads ([`UdpChannel::recv_face`]) only as far as
//! the forwarder has room, and not at all while the face is restrained. A flooding peer
//! then costs Kite nothing per datagram it sends: the kernel drops into the face's full
//! receive buffer ([`FaceConfig::udp_socket_buffer`] for an on-demand face). Datagrams that reached
//! the listener
//! before the face's socket existed are still demultiplexed to the face by sender. A face
//! sends through its own socket with `sendmmsg`. Each unicast face costs one file
//! descriptor and one receive buffer; one whose socket cannot be made (no descriptor left)
//! shares the listener's, read and demultiplexed as a new sender's datagrams are. A
//! multicast face owns its own socket, joined to the group, and is permanent and
//! multi-access.

use std::cell::Cell;
use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use mio::net::UdpSocket;
use mio::{Interest, Registry, Token};
use socket2::{Domain, Protocol, Socket, Type};

mod multicast;
mod peer;

pub use multicast::{multicast, multicast_interfaces};

use crate::config::FaceConfig;
use crate::datagram::{Arena, Datagram};
use crate::face::{Face, FaceParts};
use crate::listener::ChannelStatus;
use crate::on_demand::Peers;
use crate::sys::segment::{enable_gro, Segmenter};
use crate::sys::{path_mtu, FdShare, RecvBatch, BATCH};
use crate::transport::{FaceError, Progress};
use crate::uri::FaceUri;
use kite_link::framing::MAX_FRAME_LEN;
use kite_link::reassembly::{Endpoint, Reassembler};
use kite_link::ChannelCounters;
use kite_link::{FaceId, FaceIds, FaceScope, LinkType, Persistency};
use peer::{UdpPeer, SOCKET_BUFFER};

/// A UDP listener: one socket shared by the unicast faces of every remote endpoint.
pub struct UdpChannel {
    socket: Arc<UdpSocket>,
    local: SocketAddr,
    peers: Peers<SocketAddr>,
    batch: RecvBatch,
    arena: Arena,
    /// Reassembly of every face of the channel, in one budget.
    reassembler: Reassembler,
    config: FaceConfig,
    counters: ChannelCounters,
    /// Whether the socket sends segmented runs (each face then learns its own path's limit).
    segmenter: Segmenter,
    /// Whether the channel reads coalesced messages (its faces' sockets then ask for them).
    coalescing: bool,
    /// Faces made without a socket of their own since [`UdpChannel::take_shared`].
    shared: Cell<u64>,
    /// Datagrams dropped for a bad checksum since [`UdpChannel::take_bad_checksums`].
    bad_checksums: Cell<u64>,
}

impl std::fmt::Debug for UdpChannel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UdpChannel")
            .field("local", &self.local)
            .field("faces", &self.peers.len())
            .finish()
    }
}

/// Asks for larger socket buffers; best effort (a smaller kernel limit is not an error).
pub(crate) fn grow_buffers(s: &Socket) {
    let _ = s.set_recv_buffer_size(SOCKET_BUFFER);
    let _ = s.set_send_buffer_size(SOCKET_BUFFER);
}

impl UdpChannel {
    /// Binds `addr` (an IPv6 channel is IPv6-only, so IPv4 gets its own channel as in NFD).
    /// The listener allows address reuse once bound, which its faces' connected sockets need
    /// to bind the same address; not before, so that binding a port another socket holds
    /// (another daemon's listener) still fails.
    pub fn bind(addr: SocketAddr, config: FaceConfig) -> io::Result<Self> {
        Self::open(addr, config, false)
    }

    /// Binds `addr` as [`UdpChannel::bind`] does, with `SO_REUSEPORT` set first, so that
    /// each of the daemon's I/O threads binds a listener of its own on the same address and
    /// the kernel spreads the remotes over them by a hash of their addresses (a remote's
    /// datagrams always reach the same listener). Only sockets that set it too, of the same
    /// user, can join: another daemon's listener without it still makes the bind fail.
    pub fn bind_reuse_port(addr: SocketAddr, config: FaceConfig) -> io::Result<Self> {
        Self::open(addr, config, true)
    }

    fn open(addr: SocketAddr, config: FaceConfig, reuse_port: bool) -> io::Result<Self> {
        let s = Socket::new(Domain::for_address(addr), Type::DGRAM, Some(Protocol::UDP))?;
        if addr.is_ipv6() {
            s.set_only_v6(true)?;
        }
        if reuse_port {
            s.set_reuse_port(true)?;
        }
        s.set_nonblocking(true)?;
        grow_buffers(&s);
        s.bind(&addr.into())?;
        s.set_reuse_address(true)?;
        let socket = UdpSocket::from_std(s.into());
        let local = socket.local_addr()?;
        // Coalesced receive where the kernel has it: a peer's segmented run is read whole.
        let coalescing = enable_gro(socket.as_raw_fd()).is_ok();
        let batch = match coalescing {
            true => RecvBatch::coalescing(),
            false => RecvBatch::new(MAX_FRAME_LEN),
        };
        let segmenter = Segmenter::for_socket(socket.as_raw_fd());
        Ok(UdpChannel {
            socket: Arc::new(socket),
            local,
            peers: Peers::new(config.udp_on_demand_limit),
            batch,
            segmenter,
            arena: Arena::default(),
            reassembler: Reassembler::new(config.reassembly_limits()),
            config,
            counters: ChannelCounters::default(),
            coalescing,
            shared: Cell::new(0),
            bad_checksums: Cell::new(0),
        })
    }

    /// The reassembler of every face of the channel: hand it to [`Face::receive_frame`], and
    /// count what it drops on the faces ([`Reassembler::take_drops`]).
    pub fn reassembler(&mut self) -> &mut Reassembler {
        &mut self.reassembler
    }

    /// The channel's URI (NFD ChannelStatus LocalUri).
    pub fn local_uri(&self) -> FaceUri {
        FaceUri::Udp(self.local)
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// What the channel dropped before any face saw it.
    pub fn counters(&self) -> &ChannelCounters {
        &self.counters
    }

    /// The channel's URI and counters (an NFD ChannelStatus with Kite's drop counters).
    pub fn status(&self) -> ChannelStatus {
        ChannelStatus {
            local: self.local_uri(),
            counters: self.counters,
            io_path: None,
            xdp: None,
            cert_sha256: None,
        }
    }

    /// Registers the socket for edge-triggered read and write readiness. A writable event
    /// means every face of this channel with pending output may flush again.
    pub fn register(&self, registry: &Registry, token: Token) -> io::Result<()> {
        registry.register(
            &mut mio::unix::SourceFd(&self.socket.as_raw_fd()),
            token,
            Interest::READABLE | Interest::WRITABLE,
        )
    }

    /// The face of `remote`, if one exists.
    pub fn face_of(&self, remote: SocketAddr) -> Option<FaceId> {
        self.peers.get(&remote)
    }

    /// Reads one burst (one `recvmmsg`; a coalesced message is cut back into its datagrams)
    /// at `now`. Datagrams from known remotes go to `datagrams`. A new remote whose datagram
    /// is a well-formed NDN packet gets an on-demand face (id from `ids`) pushed to
    /// `created`, and its datagrams go to `datagrams` as well; anything else from a new remote
    /// is counted as malformed on the channel. When the channel already holds
    /// [`FaceConfig::udp_on_demand_limit`] on-demand faces, the idlest is given up first and
    /// its id pushed to `evicted`, for the caller to close. A datagram longer than the largest
    /// frame is counted on the channel and makes no face; from a known remote it also goes to
    /// that face as an empty frame, which the face counts as malformed.
    pub fn recv_burst(
        &mut self,
        now: Instant,
        ids: &mut FaceIds,
        datagrams: &mut Vec<Datagram>,
        created: &mut Vec<Face>,
        evicted: &mut Vec<FaceId>,
    ) -> io::Result<Progress> {
        let Some(n) = self.batch.recv_ready(self.socket.as_raw_fd())? else {
            return Ok(Progress::Drained);
        };
        for i in 0..n {
            let Some(from) = self.batch.source(i) else {
                self.counters.n_malformed += 1;
                continue;
            };
            if let Some(cut) = cut_datagrams(&self.batch, i) {
                self.counters.n_truncated += cut as u64;
                if let Some(face) = self.peers.get(&from) {
                    datagrams.extend((0..cut).map(|_| Datagram::cut(face, Endpoint::Peer)));
                }
                continue;
            }
            let mut face = self.peers.touch(&from, now);
            // By index, so that the batch is borrowed only while a datagram is copied out.
            for k in 0.. {
                let Some(d) = self.batch.datagrams(i).nth(k) else {
                    break;
                };
                let (frame, own_buffer) = self.arena.receive(d);
                let Some(id) = self.face_for(from, face, &frame, ids, now, created, evicted) else {
                    continue;
                };
                face = Some(id);
                datagrams.push(Datagram {
                    face: id,
                    from: Endpoint::Peer,
                    frame,
                    own_buffer,
                });
            }
        }
        Ok(if n == BATCH {
            Progress::More
        } else {
            Progress::Drained
        })
    }

    /// Hands datagram `d` from `from`, which reached this channel's address past its socket
    /// (through an interface's AF_XDP sockets), to its face as [`UdpChannel::recv_burst`]
    /// does a datagram its socket read: a known remote's goes to its face, a new remote
    /// whose datagram is a well-formed NDN packet gets an on-demand face (pushed to
    /// `created`, the idlest given up for it pushed to `evicted`), anything else from a new
    /// remote is counted as malformed.
    pub fn receive_from(
        &mut self,
        from: SocketAddr,
        d: &[u8],
        now: Instant,
        ids: &mut FaceIds,
        created: &mut Vec<Face>,
        evicted: &mut Vec<FaceId>,
    ) -> Option<Datagram> {
        if d.len() > MAX_FRAME_LEN {
            self.counters.n_truncated += 1;
            let face = self.peers.get(&from)?;
            return Some(Datagram::cut(face, Endpoint::Peer));
        }
        let known = self.peers.touch(&from, now);
        let (frame, own_buffer) = self.arena.receive(d);
        let face = self.face_for(from, known, &frame, ids, now, created, evicted)?;
        Some(Datagram {
            face,
            from: Endpoint::Peer,
            frame,
            own_buffer,
        })
    }

    /// The face a datagram `frame` from `from` goes to: `known` (the remote's face, if it
    /// has one), or an on-demand face made for a new remote whose datagram is a well-formed
    /// NDN packet (pushed to `created`, the idlest given up for it to `evicted`); `None`,
    /// counted as malformed, for anything else from a new remote.
    #[allow(clippy::too_many_arguments)]
    fn face_for(
        &mut self,
        from: SocketAddr,
        known: Option<FaceId>,
        frame: &Bytes,
        ids: &mut FaceIds,
        now: Instant,
        created: &mut Vec<Face>,
        evicted: &mut Vec<FaceId>,
    ) -> Option<FaceId> {
        if known.is_some() {
            return known;
        }
        let Some(id) = self.peers.admit(from, frame, ids, now, evicted) else {
            self.counters.n_malformed += 1;
            return None;
        };
        created.push(self.new_face(id, from, Persistency::OnDemand));
        Some(id)
    }

    /// Counts a datagram for this channel that was dropped before any face saw it, its UDP
    /// checksum wrong (read past the socket, where the kernel did not check it).
    pub fn count_bad_checksum(&mut self) {
        self.counters.n_malformed += 1;
        self.bad_checksums.set(self.bad_checksums.get() + 1);
    }

    /// How many datagrams were dropped for a bad checksum since the last call, for the
    /// caller to log (a sender on a virtual device that leaves checksums to the receiver
    /// sends nothing else).
    pub fn take_bad_checksums(&self) -> u64 {
        self.bad_checksums.replace(0)
    }

    /// Whether datagrams to `dst` are this channel's: its address, or on a wildcard
    /// channel any address of its family, and its port.
    pub fn serves(&self, dst: SocketAddr) -> bool {
        let local = self.local;
        local.port() == dst.port()
            && (local.ip() == dst.ip()
                || (local.ip().is_unspecified() && local.is_ipv4() == dst.is_ipv4()))
    }

    /// Creates the face of `remote` (`faces/create udp4://…`); fails with
    /// [`FaceError::Exists`] when one exists (the caller may then update its persistency).
    pub fn connect(
        &mut self,
        id: FaceId,
        remote: SocketAddr,
        persistency: Persistency,
    ) -> Result<Face, FaceError> {
        if let Some(existing) = self.peers.get(&remote) {
            return Err(FaceError::Exists(existing));
        }
        let on_demand = persistency == Persistency::OnDemand;
        self.peers.insert(remote, id, on_demand, Instant::now());
        Ok(self.new_face(id, remote, persistency))
    }

    /// How many faces were made sharing the listener's socket (their own could not be made,
    /// for want of file descriptors) since the last call, for the caller to log.
    pub fn take_shared(&self) -> u64 {
        self.shared.replace(0)
    }

    /// Reads one burst of at most `max` messages (one `recvmmsg`) from the own socket `fd`
    /// of face `face` (toward `remote`) into `datagrams` at `now`, as
    /// [`UdpChannel::recv_burst`] reads the listener,
    /// with the channel's buffers (a face holds none of its own); with the messages read (a
    /// coalesced one holds several datagrams). A refused earlier send (an ICMP port
    /// unreachable the connected socket reports once) reads as more to come.
    pub fn recv_face(
        &mut self,
        face: FaceId,
        remote: SocketAddr,
        fd: RawFd,
        max: usize,
        now: Instant,
        datagrams: &mut Vec<Datagram>,
    ) -> io::Result<(Progress, usize)> {
        let n = match self.batch.recv_ready_at_most(fd, max) {
            Ok(Some(n)) => n,
            Ok(None) => return Ok((Progress::Drained, 0)),
            Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {
                return Ok((Progress::More, 0))
            }
            Err(e) => return Err(e),
        };
        // The face is as recent as its last datagram, whichever socket brought it, for the
        // choice of the idlest face to give up.
        self.peers.touch(&remote, now);
        for i in 0..n {
            if let Some(cut) = cut_datagrams(&self.batch, i) {
                self.counters.n_truncated += cut as u64;
                datagrams.extend((0..cut).map(|_| Datagram::cut(face, Endpoint::Peer)));
                continue;
            }
            for d in self.batch.datagrams(i) {
                let (frame, own_buffer) = self.arena.receive(d);
                datagrams.push(Datagram {
                    face,
                    from: Endpoint::Peer,
                    frame,
                    own_buffer,
                });
            }
        }
        let progress = if n == max.min(BATCH) {
            Progress::More
        } else {
            Progress::Drained
        };
        Ok((progress, n))
    }

    /// A unicast face toward `remote` with a socket of its own ([`connected_socket`]), or,
    /// when that cannot be made, sending through the listener's (which then carries its
    /// datagrams, demultiplexed by sender).
    fn new_face(&self, id: FaceId, remote: SocketAddr, persistency: Persistency) -> Face {
        let rcvbuf = face_rcvbuf(persistency, &self.config);
        // No place in the budget, or no socket to be had: the face shares the listener's.
        let own = OWN_SOCKETS.take().and_then(|slot| {
            let socket = connected_socket(self.local, remote, rcvbuf, self.coalescing).ok()?;
            Some((socket, slot))
        });
        let peer = match own {
            Some((socket, slot)) => {
                let seg = Segmenter::for_socket(socket.as_raw_fd());
                UdpPeer {
                    socket: Arc::new(socket),
                    own: Some(slot),
                    remote,
                    local: self.local,
                    seg,
                    mtu: self.config.udp_mtu,
                }
            }
            None => {
                self.shared.set(self.shared.get() + 1);
                UdpPeer {
                    socket: Arc::clone(&self.socket),
                    own: None,
                    remote,
                    local: self.local,
                    seg: self.segmenter,
                    mtu: self.config.udp_mtu,
                }
            }
        };
        new_face(&self.config, id, peer, persistency)
    }

    /// Forgets `remote`'s face `face` once the caller closed it, so its next datagram
    /// creates a new face.
    pub fn forget(&mut self, remote: SocketAddr, face: FaceId) {
        self.peers.remove(&remote, face);
    }

    /// Notes that `remote`'s face `face` became (or stopped being) on-demand, which decides
    /// whether it counts against [`FaceConfig::udp_on_demand_limit`].
    pub fn set_on_demand(&mut self, remote: SocketAddr, face: FaceId, on_demand: bool) {
        self.peers.set_on_demand(&remote, face, on_demand);
    }
}

/// Octets of IP and UDP headers before a datagram's payload.
fn ip_udp_overhead(remote: SocketAddr) -> usize {
    match remote {
        SocketAddr::V4(_) => 20 + 8,
        SocketAddr::V6(_) => 40 + 8,
    }
}

/// The MTU a unicast face toward `remote` starts with: the path's (its interface's MTU, less
/// the IP and UDP headers), at most [`FaceConfig::udp_mtu`]. A frame larger than the path
/// would leave as IP fragments, and one lost fragment loses the datagram while the others
/// hold the receiver's reassembly memory until it times out; NDNLPv2 fragments per hop
/// instead. [`FaceConfig::udp_mtu`] when the path cannot be looked up. The look-up costs a
/// few system calls once per face made (never per packet).
fn unicast_mtu(remote: SocketAddr, config: &FaceConfig) -> usize {
    match path_mtu(remote) {
        Ok(path) => path
            .saturating_sub(ip_udp_overhead(remote))
            .max(MIN_PATH_MTU)
            .min(config.udp_mtu),
        Err(_) => config.udp_mtu,
    }
}

/// How many datagrams message `i` of `batch` loses whole, if any: one when it was longer
/// than a slot, every one of its coalesced datagrams when one is longer than the largest
/// frame (the run is not cut apart past a bad one).
fn cut_datagrams(batch: &RecvBatch, i: usize) -> Option<usize> {
    if batch.truncated(i) {
        return Some(1);
    }
    let pieces = batch.datagrams(i);
    pieces
        .clone()
        .any(|d| d.len() > MAX_FRAME_LEN)
        .then(|| pieces.len())
}

/// The smallest MTU taken from a path: the 576-octet IPv4 datagram every host accepts, less
/// the headers (a smaller interface MTU is left to IP fragmentation).
const MIN_PATH_MTU: usize = 576 - 28;

/// The sockets of their own that UDP faces may have: at most half the process's file
/// descriptor limit, so that senders making on-demand faces can never take the descriptors
/// that accepting a local app, a management client or a TCP peer needs. A face beyond it
/// shares its listener's socket, as when a socket cannot be made.
static OWN_SOCKETS: FdShare = FdShare::new(2);

/// The receive buffer a unicast face's own socket asks for: the configured one for an
/// on-demand face (any sender can make one, so it is the bound per hostile peer), the
/// listener's for a face the operator made (see [`connected_socket`]).
fn face_rcvbuf(persistency: Persistency, config: &FaceConfig) -> usize {
    if persistency == Persistency::OnDemand {
        config.udp_socket_buffer
    } else {
        SOCKET_BUFFER
    }
}

/// A socket for the unicast face toward `remote`: bound to the listener's `local` address
/// (allowed by `SO_REUSEADDR` on both; a socket of another user's could bind it likewise, as
/// NFD's listeners allow too) and connected to `remote`, so that Linux delivers
/// `remote`'s datagrams to it rather than to the listener (a connected socket matches the
/// 4-tuple, the listener only the local address). Its receive buffer is `rcvbuf` octets:
/// [`FaceConfig::udp_socket_buffer`] for an on-demand face (any sender can make one), the
/// listener's [`SOCKET_BUFFER`] for a face the operator made (configuration or
/// `faces/create`), which a bulk transfer needs: 256 KiB gave 831 retransmissions in a 30 MB
/// fetch across two hops with no loss, 4 MiB none (`bench/lossy.sh`). `coalescing` asks for
/// coalesced receive, as the channel's buffers expect. A WebTransport session's socket is
/// made the same way (`h3`).
pub(crate) fn connected_socket(
    local: SocketAddr,
    remote: SocketAddr,
    rcvbuf: usize,
    coalescing: bool,
) -> io::Result<UdpSocket> {
    let s = Socket::new(Domain::for_address(local), Type::DGRAM, Some(Protocol::UDP))?;
    if local.is_ipv6() {
        s.set_only_v6(true)?;
    }
    s.set_reuse_address(true)?;
    s.set_nonblocking(true)?;
    let _ = s.set_recv_buffer_size(rcvbuf);
    let _ = s.set_send_buffer_size(SOCKET_BUFFER);
    s.bind(&local.into())?;
    s.connect(&remote.into())?;
    if coalescing {
        enable_gro(s.as_raw_fd())?;
    }
    Ok(UdpSocket::from_std(s.into()))
}

/// A unicast face toward `peer`'s remote.
fn new_face(config: &FaceConfig, id: FaceId, peer: UdpPeer, persistency: Persistency) -> Face {
    let remote = peer.remote;
    let parts = FaceParts {
        scope: FaceScope::NonLocal,
        persistency,
        link_type: LinkType::PointToPoint,
        redial: None,
    };
    let mut face = Face::new(id, parts, Box::new(peer), config);
    face.set_mtu(unicast_mtu(remote, config));
    face
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::DEFAULT_UDP_MTU;

    #[test]
    fn the_listener_socket_gets_large_buffers() {
        let channel = UdpChannel::bind("127.0.0.1:0".parse().unwrap(), FaceConfig::default())
            .expect("bind on loopback");
        let limit = std::fs::read_to_string("/proc/sys/net/core/rmem_max")
            .ok()
            .and_then(|s| s.trim().parse::<usize>().ok())
            .unwrap_or(SOCKET_BUFFER);
        let got = socket2::SockRef::from(&*channel.socket)
            .recv_buffer_size()
            .unwrap();
        // Linux reports twice what it granted (its bookkeeping share).
        assert!(
            got >= SOCKET_BUFFER.min(limit),
            "{got} < {}",
            SOCKET_BUFFER.min(limit)
        );
    }

    #[test]
    fn a_peers_datagrams_reach_its_faces_own_socket_and_others_the_listener() {
        let mut channel = UdpChannel::bind("127.0.0.1:0".parse().unwrap(), FaceConfig::default())
            .expect("bind on loopback");
        let to = channel.local_addr();
        let a = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let b = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let id = FaceId(300);
        let remote = a.local_addr().unwrap();
        let face = channel
            .connect(id, remote, Persistency::Persistent)
            .expect("a face toward a");
        let fd = face.raw_fd().expect("the face has a socket of its own");
        // An Interest /x from each peer.
        let interest = [0x05, 0x05, 0x07, 0x03, 0x08, 0x01, b'x'];
        a.send_to(&interest, to).unwrap();
        b.send_to(&interest, to).unwrap();
        let now = Instant::now();
        let (mut got, mut ids) = (Vec::new(), FaceIds::new());
        let deadline = now + std::time::Duration::from_secs(5);
        while got.is_empty() && Instant::now() < deadline {
            channel
                .recv_face(id, remote, fd, BATCH, now, &mut got)
                .expect("read the face's socket");
        }
        assert_eq!(got.len(), 1, "a's datagram on its face's socket");
        assert_eq!((got[0].face, &got[0].frame[..]), (id, &interest[..]));
        let (mut heard, mut created, mut evicted) = (Vec::new(), Vec::new(), Vec::new());
        while heard.is_empty() && Instant::now() < deadline {
            channel
                .recv_burst(now, &mut ids, &mut heard, &mut created, &mut evicted)
                .expect("read the listener");
        }
        assert_eq!(heard.len(), 1, "only b's datagram on the listener");
        assert_eq!(created.len(), 1);
        assert_eq!(created[0].udp_remote(), Some(b.local_addr().unwrap()));
        assert_eq!(heard[0].face, created[0].id());
    }

    #[test]
    fn an_on_demand_face_asks_for_the_configured_buffer_and_an_operators_face_for_more() {
        let config = FaceConfig {
            udp_socket_buffer: 64 << 10,
            ..FaceConfig::default()
        };
        assert_eq!(face_rcvbuf(Persistency::OnDemand, &config), 64 << 10);
        for p in [Persistency::Persistent, Persistency::Permanent] {
            assert_eq!(face_rcvbuf(p, &config), SOCKET_BUFFER);
        }
        let s = connected_socket(
            "127.0.0.1:0".parse().unwrap(),
            "127.0.0.1:9".parse().unwrap(),
            64 << 10,
            false,
        )
        .unwrap();
        // The kernel reports twice what was asked.
        assert_eq!(
            socket2::SockRef::from(&s).recv_buffer_size().unwrap(),
            128 << 10
        );

        // An on-demand face the operator then confirms gets the larger buffer.
        let mut channel =
            UdpChannel::bind("127.0.0.1:0".parse().unwrap(), config).expect("bind on loopback");
        let peer = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let mut face = channel
            .connect(
                FaceId(303),
                peer.local_addr().unwrap(),
                Persistency::OnDemand,
            )
            .unwrap();
        assert_eq!(face.udp_recv_buffer(), Some(128 << 10));
        face.set_persistency(Persistency::Persistent);
        assert!(
            face.udp_recv_buffer() > Some(128 << 10),
            "{:?}",
            face.udp_recv_buffer()
        );
    }

    #[test]
    fn a_unicast_face_takes_the_path_mtu_within_the_configured_largest() {
        let lo: SocketAddr = "127.0.0.1:6363".parse().unwrap();
        // Loopback's 65536-octet MTU is above NFD's 8800.
        assert_eq!(unicast_mtu(lo, &FaceConfig::default()), DEFAULT_UDP_MTU);
        let small = FaceConfig {
            udp_mtu: 1000,
            ..FaceConfig::default()
        };
        assert_eq!(unicast_mtu(lo, &small), 1000);
        assert_eq!(ip_udp_overhead("[::1]:1".parse().unwrap()), 48);
    }
}
