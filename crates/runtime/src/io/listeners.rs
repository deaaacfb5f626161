//! The listeners one I/O thread owns (those that accept, UDP and Ethernet channels, the link
//! monitor): opening and sharing them out over the threads, accepting, and the faces'
//! bookkeeping in the channels that demultiplex to them.

use std::time::Instant;

use kite_face::ether::lanes::EtherLane;
use kite_face::xdp::steer::{Dispatch, NDT_SLOTS};
use kite_face::{Accepted, EtherChannel, Face, FaceUri, LinkMonitor, Listener, UdpChannel};
use kite_fw::face::FaceId;
use kite_fw::hash::NameHasher;
use kite_fw::ndt::Ndt;
use kite_link::Persistency;
use mio::Token;

use super::{IoThread, CHANNEL_TOKEN};
use crate::affinity::shard_io_thread;
use crate::iolog::CloseReason;
use crate::park::Waker;
use crate::{FaceEvent, IoCommand, RuntimeConfig};

/// A datagram channel by its index in `IoThread::udp` or `IoThread::ether`: both kinds are
/// read and flushed the same way.
#[derive(Clone, Copy)]
pub(super) enum DatagramChannel {
    Udp(usize),
    Ether(usize),
}

/// The listeners one I/O thread owns.
pub(crate) struct Owned {
    pub(super) channels: Vec<Box<dyn Listener>>,
    pub(super) udp: Vec<UdpChannel>,
    pub(super) ether: Vec<EtherChannel>,
    pub(super) links: Option<LinkMonitor>,
    pub(super) udp_multicast: Vec<(std::net::SocketAddrV4, String, std::net::Ipv4Addr)>,
    /// Lanes of steered Ethernet channels other threads own ([`steer`]), each with the waker
    /// of its channel's thread.
    pub(super) lanes: Vec<(EtherLane, Waker)>,
}

/// Where the listeners of `config` go among `m` I/O threads: the I/O thread of each of
/// [`RuntimeConfig::ether`]'s interfaces, and the one thread that holds every UDP listener,
/// when one does. An interface is its position's thread modulo `m`; but when any interface
/// has AF_XDP, those interfaces and the UDP listeners all go to thread 0, since the AF_XDP
/// path hands the UDP datagrams it reads to the UDP channels of its own thread, and a UDP
/// face must then live there too. Otherwise (`None`) each thread has its own listener on
/// every UDP address.
pub(crate) fn placement(config: &RuntimeConfig, m: usize) -> (Vec<usize>, Option<usize>) {
    let xdp = !config.xdp.is_empty() && !config.udp.is_empty();
    let ether = (config.ether.iter().enumerate())
        .map(|(i, iface)| match xdp && config.xdp.contains(iface) {
            true => 0,
            false => i % m,
        })
        .collect();
    (ether, xdp.then_some(0))
}

/// Opens the listeners and shares them out over `m` I/O threads ([`placement`]): one
/// [`Owned`] per thread, in thread order.
pub(crate) fn open_listeners(
    config: &RuntimeConfig,
    m: usize,
) -> Result<Vec<Owned>, crate::StartError> {
    let mut owned: Vec<Owned> = (0..m)
        .map(|_| Owned {
            channels: Vec::new(),
            udp: Vec::new(),
            ether: Vec::new(),
            links: None,
            udp_multicast: Vec::new(),
            lanes: Vec::new(),
        })
        .collect();
    for l in &config.listeners {
        owned[0].channels.push(l.open(&config.face)?);
    }
    let (ether_threads, udp_thread) = placement(config, m);
    for &addr in &config.udp {
        let bind_error = |error| kite_face::ListenError::Bind { addr, error };
        if m == 1 || udp_thread.is_some() {
            let k = udp_thread.unwrap_or(0);
            owned[k]
                .udp
                .push(UdpChannel::bind(addr, config.face).map_err(bind_error)?);
            continue;
        }
        // The threads' listeners on one address share its bounds: each keeps 1/m of the
        // on-demand faces and of the reassembly budget (rounded up), so m listeners hold
        // what one would (plus at most m - 1 faces).
        let mut share = config.face;
        share.udp_on_demand_limit = share.udp_on_demand_limit.div_ceil(m);
        share.reassembly.max_bytes = share.reassembly.max_bytes.div_ceil(m);
        // The first listener learns the port (port 0 asks for any); the others join it.
        let first = UdpChannel::bind_reuse_port(addr, share).map_err(bind_error)?;
        let bound = first.local_addr();
        owned[0].udp.push(first);
        for o in &mut owned[1..] {
            let ch = UdpChannel::bind_reuse_port(bound, share).map_err(bind_error)?;
            o.udp.push(ch);
        }
    }
    // Each thread's link monitor is opened before its channels, so no change slips in
    // between.
    for (k, o) in owned.iter_mut().enumerate() {
        if ether_threads.contains(&k) {
            o.links = Some(LinkMonitor::open()?);
        }
    }
    for (i, iface) in config.ether.iter().enumerate() {
        let k = ether_threads[i];
        let ch = if config.xdp.contains(iface) {
            let mut ch = EtherChannel::open_xdp(iface, config.face)?;
            if let Some(stale) = ch.xdp_replaced() {
                tracing::warn!(
                    interface = iface.as_str(),
                    program = stale.id,
                    "replaced a stale Kite XDP program ({} mode) that netlink had left attached \
                     after its process ended",
                    stale.mode
                );
            }
            match ch.io_path() {
                kite_face::IoPath::Packet {
                    fallback: Some(why),
                } => tracing::warn!(
                    interface = iface.as_str(),
                    "AF_XDP not available, Ethernet frames go through AF_PACKET: {why}"
                ),
                path => tracing::info!(interface = iface.as_str(), "Ethernet channel on {path}"),
            }
            let locals: Vec<_> = owned[k].udp.iter().map(UdpChannel::local_addr).collect();
            if matches!(ch.io_path(), kite_face::IoPath::Xdp { .. }) && !locals.is_empty() {
                log_udp_dsts(iface, ch.serve_udp(&locals));
            }
            ch
        } else {
            EtherChannel::open(iface, config.face)?
        };
        // The kernel reports twice what it granted.
        if ch.recv_buffer() / 2 < config.face.ether_socket_buffer {
            tracing::warn!(
                interface = iface.as_str(),
                asked = config.face.ether_socket_buffer,
                granted = ch.recv_buffer() / 2,
                "Ethernet receive buffer smaller than asked (raise net.core.rmem_max, \
                 or give kite CAP_NET_ADMIN)"
            );
        }
        owned[k].ether.push(ch);
    }
    for (j, mc) in config.udp_multicast.iter().enumerate() {
        owned[j % m].udp_multicast.push(mc.clone());
    }
    Ok(owned)
}

/// Steers the AF_XDP Ethernet channels of `owned` (one per I/O thread) over every I/O
/// thread, with inline forwarding over more than one ([`RuntimeConfig::xdp_steering`]): each
/// NDN frame goes to the thread that runs its forwarding shard by `ndt` under `hasher`'s key
/// (see `kite_face::xdp::steer`). A channel's lane `i` is thread `home + i` (mod the
/// threads), so that its own thread is lane 0; `wake(k)` wakes thread `k`. A channel that
/// cannot be steered keeps reading every frame itself, and the log says why.
pub(crate) fn steer(
    config: &RuntimeConfig,
    owned: &mut [Owned],
    ndt: &Ndt,
    hasher: &NameHasher,
    wake: impl Fn(usize) -> Waker,
) {
    let m = owned.len();
    if !config.xdp_steering || !config.inline_forwarding || m < 2 {
        return;
    }
    for home in 0..m {
        let mut lanes = Vec::new();
        for ch in &mut owned[home].ether {
            if !matches!(ch.io_path(), kite_face::IoPath::Xdp { .. }) {
                continue;
            }
            let iface = ch.name().to_owned();
            match dispatch(home, m, ndt, hasher).and_then(|d| ch.steer(m, d)) {
                Ok(l) => {
                    let path = ch.io_path();
                    tracing::info!(
                        interface = iface,
                        "NDN frames steered to the I/O threads of their shards: {path}"
                    );
                    lanes.extend(l);
                }
                Err(why) => tracing::warn!(
                    interface = iface,
                    "NDN frames not steered to the I/O threads of their shards, all are read \
                     by I/O thread {home}: {why}"
                ),
            }
        }
        // A channel's lanes come in lane order, 1 to m - 1.
        for (i, lane) in lanes.into_iter().enumerate() {
            let k = (home + 1 + i % (m - 1)) % m;
            owned[k].lanes.push((lane, wake(home)));
        }
    }
}

/// The XDP program's copy of the dispatch for a channel of I/O thread `home` of `m`: each
/// NDT entry's and each shard's lane (the I/O thread that runs the shard, counted from
/// `home`).
fn dispatch(home: usize, m: usize, ndt: &Ndt, hasher: &NameHasher) -> Result<Dispatch, String> {
    if ndt.slots() > NDT_SLOTS {
        return Err(format!(
            "the Name Dispatch Table has {} entries, the XDP program's at most {NDT_SLOTS}",
            ndt.slots()
        ));
    }
    let lane = |shard: u8| ((shard_io_thread(usize::from(shard), m) + m - home) % m) as u8;
    let mut token_lanes = [0; 256];
    for shard in 0..ndt.threads() {
        token_lanes[usize::from(shard)] = lane(shard);
    }
    Ok(Dispatch {
        key: hasher.key(),
        prefix_len: ndt.prefix_len(),
        lanes: (0..ndt.slots() as u64)
            .map(|i| lane(ndt.thread_of(i)))
            .collect(),
        token_lanes,
    })
}

/// Logs which UDP destinations interface `iface`'s AF_XDP path takes, or why none.
fn log_udp_dsts(iface: &str, r: Result<Vec<std::net::SocketAddr>, String>) {
    match r {
        Ok(dsts) => tracing::info!(
            interface = iface,
            "UDP datagrams to {dsts:?} received through AF_XDP (sent through the kernel's \
             UDP sockets)"
        ),
        Err(why) => tracing::warn!(
            interface = iface,
            "UDP datagrams stay with the kernel's sockets: {why}"
        ),
    }
}

impl IoThread {
    /// The datagram channel of a poll token, if it names one (an Ethernet channel's AF_PACKET
    /// socket or its AF_XDP sockets).
    pub(super) fn datagram_channel(&self, token: Token) -> Option<DatagramChannel> {
        let d = token.0.checked_sub(CHANNEL_TOKEN + self.channels.len())?;
        if d < self.udp.len() {
            return Some(DatagramChannel::Udp(d));
        }
        let (e, n) = (d - self.udp.len(), self.ether.len());
        match e {
            _ if e < n => Some(DatagramChannel::Ether(e)),
            _ if e < 2 * n => Some(DatagramChannel::Ether(e - n)),
            _ => None,
        }
    }

    /// The token a datagram channel is read again under (an Ethernet channel's AF_PACKET
    /// socket's), so a channel is listed once whichever of its sockets had the event.
    pub(super) fn channel_token(&self, channel: DatagramChannel) -> Token {
        let base = CHANNEL_TOKEN + self.channels.len();
        Token(match channel {
            DatagramChannel::Udp(u) => base + u,
            DatagramChannel::Ether(e) => base + self.udp.len() + e,
        })
    }

    /// The local URI a datagram channel's faces share.
    pub(super) fn datagram_local_uri(&self, channel: DatagramChannel) -> FaceUri {
        match channel {
            DatagramChannel::Udp(u) => self.udp[u].local_uri(),
            DatagramChannel::Ether(e) => self.ether[e].local_uri().clone(),
        }
    }

    /// The faces with pending output that send through the channel at `local`, to flush when
    /// its socket becomes writable (empty, and so not allocated, when none waits).
    pub(super) fn waiting_on(&self, local: &FaceUri) -> Vec<FaceId> {
        self.table
            .values()
            .filter(|f| f.pending_output() > 0 && f.local_uri() == local)
            .map(Face::id)
            .collect()
    }

    /// Applies interface changes to the Ethernet channels and their faces; a face that went
    /// up or down is announced (NFD's face events UP and DOWN).
    pub(super) fn follow_links(&mut self) {
        let Some(links) = &mut self.links else {
            return;
        };
        let events = match links.read() {
            Ok(e) => e,
            Err(e) => {
                tracing::warn!(error = %e, "reading link notifications failed");
                return;
            }
        };
        for ch in &mut self.ether {
            if let Some(r) = ch.addresses_changed(&events) {
                log_udp_dsts(ch.name(), r);
            }
            let Some(link) = ch.link_changed(&events) else {
                continue;
            };
            tracing::info!(
                iface = ch.name(),
                up = link.up,
                mtu = link.mtu,
                "link changed"
            );
            for face in self.table.map_mut().values_mut() {
                if face.local_uri() != ch.local_uri() {
                    continue;
                }
                if let Some(up) = face.follow_link(link) {
                    let s = super::commands::status(face);
                    let e = if up {
                        FaceEvent::Up(s)
                    } else {
                        FaceEvent::Down(s)
                    };
                    let _ = self.face_events.send(e);
                }
            }
        }
    }

    /// Accepts every connection pending on stream listener `i`. When accepting fails (out of
    /// file descriptors: EMFILE), the listener is tried again at each housekeeping until it
    /// succeeds: its readiness is edge-triggered, so the connections left in its backlog
    /// would otherwise wait for the next one to arrive.
    pub(super) fn accept_all(&mut self, i: usize, now: Instant) {
        loop {
            match self.channels[i].accept(&mut self.ids, now) {
                Ok(Some(Accepted::Face(face, evict))) => {
                    self.place_face(*face, now);
                    if let Some(id) = evict {
                        self.evict(id, now);
                    }
                }
                Ok(Some(Accepted::Refused)) => {
                    let local = self.channels[i].local_uri().clone();
                    self.log.refused(&local, now);
                }
                Ok(Some(Accepted::Broken(e))) => {
                    let local = self.channels[i].local_uri();
                    tracing::debug!(%local, error = %e, "accepted connection dropped");
                }
                Ok(None) => {
                    self.accept_retry.retain(|&c| c != i);
                    return;
                }
                Err(e) => {
                    let local = self.channels[i].local_uri().clone();
                    self.log.accept_failed(&local, &e, now);
                    if !self.accept_retry.contains(&i) {
                        self.accept_retry.push(i);
                    }
                    return;
                }
            }
        }
    }

    /// Closes the face a listener here gave up for a new connection, here or in the I/O
    /// thread that owns it; one in transit between threads closes at its owner's next
    /// housekeeping.
    fn evict(&mut self, id: FaceId, now: Instant) {
        if self.close_face(id, CloseReason::Evicted, now).is_some() {
            return;
        }
        for k in 0..self.place.peers.len() {
            if k != self.place.index && self.place.send(k, IoCommand::Evict(id)) {
                self.place.wake(k);
            }
        }
    }

    /// Makes the channel that demultiplexes to `face` (UDP or Ethernet) forget it.
    pub(super) fn forget_in_channel(&mut self, face: &Face) {
        if let Some(remote) = face.udp_remote() {
            for u in &mut self.udp {
                if *face.local_uri() == u.local_uri() {
                    u.forget(remote, face.id());
                }
            }
        }
        if let Some(remote) = face.ether_remote() {
            for e in &mut self.ether {
                if face.local_uri() == e.local_uri() {
                    e.forget(remote, face.id());
                }
            }
        }
    }

    /// Tells the datagram channel of face `id` whether the face is on-demand now (only those
    /// count against the channel's bound, and only those are given up for new senders).
    pub(super) fn follow_persistency(&mut self, id: FaceId) {
        let Some(face) = self.table.get(id) else {
            return;
        };
        let on_demand = face.persistency() == Persistency::OnDemand;
        if let Some(remote) = face.udp_remote() {
            for u in &mut self.udp {
                if *face.local_uri() == u.local_uri() {
                    u.set_on_demand(remote, id, on_demand);
                }
            }
        }
        if let Some(remote) = face.ether_remote() {
            for e in &mut self.ether {
                if face.local_uri() == e.local_uri() {
                    e.set_on_demand(remote, id, on_demand);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::testing::harness_listening;
    use crate::io::HOUSEKEEPING;
    use kite_face::testing::{Arrives, MemoryListener, MemoryTransport};
    use kite_face::FaceConfig;

    #[test]
    fn a_listeners_faces_are_added_the_face_it_gave_up_closed_and_a_failed_accept_retried() {
        let local = FaceUri::Tcp("198.51.100.1:6363".parse().unwrap());
        let (l, queue) = MemoryListener::new(local.clone(), &FaceConfig::default());
        let mut h = harness_listening(RuntimeConfig::default(), vec![Box::new(l)]);
        let push = |a| queue.lock().unwrap().push_back(a);
        let peer =
            |p: &str| MemoryTransport::stream(FaceUri::Tcp(p.parse().unwrap()), local.clone());
        let ready = Token(CHANNEL_TOKEN);
        let t0 = Instant::now();

        push(Arrives::Peer(peer("192.0.2.1:1"), None));
        push(Arrives::Refused);
        h.thread.handle_event(ready, true, false, false, t0);
        let first = h.list(t0);
        assert_eq!(
            first.len(),
            1,
            "the peer's face is added, the refused one is not"
        );
        assert!(
            queue.lock().unwrap().is_empty(),
            "accepted until none was pending"
        );

        push(Arrives::Peer(peer("192.0.2.1:2"), Some(first[0])));
        h.thread.handle_event(ready, true, false, false, t0);
        let second = h.list(t0);
        assert!(
            second.len() == 1 && second != first,
            "the face given up is closed"
        );
        let destroyed = h.take_events().into_iter().filter_map(|e| match e {
            FaceEvent::Destroyed(s) => Some(s.id),
            _ => None,
        });
        assert_eq!(destroyed.collect::<Vec<_>>(), first);

        // Accepting fails (out of descriptors): the listener's edge-triggered readiness will
        // not come again for the peer still waiting, so housekeeping tries it again.
        push(Arrives::Fails(std::io::ErrorKind::Other));
        push(Arrives::Peer(peer("192.0.2.1:3"), None));
        h.thread.handle_event(ready, true, false, false, t0);
        assert_eq!(h.list(t0), second);
        h.thread.housekeeping(t0 + HOUSEKEEPING);
        assert_eq!(h.list(t0 + HOUSEKEEPING).len(), 2);
        h.thread.housekeeping(t0 + 2 * HOUSEKEEPING);
        assert!(queue.lock().unwrap().is_empty());
    }

    #[test]
    fn udp_listeners_join_the_xdp_interfaces_on_one_thread() {
        let mut config = RuntimeConfig {
            ether: vec!["e0".into(), "e1".into(), "e2".into()],
            ..RuntimeConfig::default()
        };
        // Without AF_XDP, interfaces by position and a listener per thread on each address.
        assert_eq!(placement(&config, 2), (vec![0, 1, 0], None));
        // AF_XDP without UDP listeners changes nothing.
        config.xdp = vec!["e1".into()];
        assert_eq!(placement(&config, 2), (vec![0, 1, 0], None));
        // With them, the AF_XDP interface and the UDP listeners share thread 0.
        config.udp = vec!["0.0.0.0:6363".parse().unwrap()];
        assert_eq!(placement(&config, 2), (vec![0, 0, 0], Some(0)));
        assert_eq!(placement(&config, 3), (vec![0, 0, 2], Some(0)));
    }
}
