//! An I/O thread: owns its faces' sockets and its listeners, reads in bursts and dispatches
//! (the input stage), and writes what the forwarding threads send toward its faces (the
//! output stage), one `writev`/`sendmmsg` per face per burst. Sleeps in `epoll_wait` when it
//! has nothing to do.
//!
//! With several I/O threads ([`RuntimeConfig::io_threads`]) each owns a disjoint set of faces:
//! I/O thread 0 holds the stream listeners (unix, TCP, WebSocket) and hands each accepted
//! connection to the thread with the fewest faces; every thread has its own UDP listener on
//! each UDP address (`SO_REUSEPORT`), so an on-demand face lives in the thread whose listener
//! the kernel's hash of the remote picked, and its own connected socket with it; Ethernet
//! interface i (its channel, on-demand faces and multicast face) and UDP multicast face j
//! belong to thread i (j) mod N. Only the thread that owns a face touches it.

use std::net::SocketAddr;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};
use hashbrown::HashMap;
use kite_face::{
    Accepted, Datagram, EtherChannel, Face, FaceConfig, FaceError, FaceUri, Flushed, LinkMonitor,
    MarkingConfig, Progress, Received, StreamListener, UdpChannel,
};
use kite_link::{FaceIds, PacketKind, Persistency};
use kite_packet::{tlv_type, NackReason};
use mio::{Events, Poll, Token};
use rtrb::Consumer;

use super::dispatch::Dispatcher;
use super::iolog::{CloseReason, IoLog};
use super::park::{SleepFlag, Waker, SPIN_TIME};
use super::share::DatagramShare;
use super::shm::ShmFaces;
use super::worker::{Step, Worker};
use super::{
    CreateReply, FaceCommandError, FaceEvent, FaceOptions, FaceStatus, FwCommand, IoCommand,
    RuntimeConfig,
};
use kite_fw::face::{FaceId, FaceScope};
use kite_fw::out::Out;
use kite_fw::strategy::FaceInfo;

/// The token of the waker forwarding threads and management use.
pub(crate) const WAKE_TOKEN: Token = Token(0);
/// The token of the link monitor Ethernet channels follow their interfaces with.
const LINK_TOKEN: Token = Token(1);
/// Tokens of stream listeners start here; UDP channels, then Ethernet channels follow. Face
/// tokens are their ids (at least 256), so the two ranges never meet.
const CHANNEL_TOKEN: usize = 16;
/// Frames a face that can push back (a stream) hands over per turn at most, so a face
/// flooding as fast as its socket allows takes no more of a turn's forwarding than an ordinary
/// consumer keeping a window of 64 Interests, whose packets it would otherwise delay. It costs
/// such a face nothing but turns: what it sent waits in its socket.
const STREAM_QUANTUM: usize = 64;
/// Passes over its inline shards an I/O thread makes per turn at most: enough to empty full
/// rings (64 bursts of 64), and a bound, because other I/O threads may keep feeding the
/// shards it runs: without one, their flood would keep it from its own sockets and commands.
const INLINE_PASSES: usize = 64;
/// How often faces are checked for idleness and reassembly timeouts.
const HOUSEKEEPING: Duration = Duration::from_secs(1);

/// Outgoing TCP connections on their way at once: each holds a socket for up to
/// `kite_face::tcp::CONNECT_TIMEOUT`, and any local application may ask for one unsigned.
const MAX_CONNECTING: usize = 64;

/// A `faces/create` waiting for its answer: what the face gets once made, and where the
/// answer goes.
struct CreateRequest {
    persistency: Persistency,
    options: FaceOptions,
    tag: u64,
    reply: CreateReply,
}

impl CreateRequest {
    fn answer(self, r: Result<FaceStatus, FaceCommandError>) {
        let _ = self.reply.send((self.tag, r));
    }
}

/// An outgoing TCP connection on its way, under the id its face will get (its poll token).
struct Connect {
    conn: kite_face::tcp::Connecting,
    remote: FaceUri,
    deadline: Instant,
    request: CreateRequest,
}

/// A TCP face without its connection (lost, or not made yet) that dials its peer again:
/// at `at`, then, while dialing, until `deadline`; after a failed dial it waits `backoff`,
/// which doubles up to `FaceConfig::redial_max`.
struct Redial {
    at: Instant,
    backoff: Duration,
    deadline: Option<Instant>,
}

/// A face made at once, or a connection started for it.
enum NewFace {
    Ready(Box<Face>),
    Connecting(FaceId, kite_face::tcp::Connecting),
}

/// A datagram channel by its index in `IoThread::udp` or `IoThread::ether`: both kinds are
/// read and flushed the same way.
#[derive(Clone, Copy)]
enum DatagramChannel {
    Udp(usize),
    Ether(usize),
}

/// Where an I/O thread stands among the others.
pub(crate) struct Place {
    /// Its index.
    pub index: usize,
    /// Every I/O thread's commands and waker, in thread order (this one's too).
    pub peers: Vec<(Sender<IoCommand>, Arc<mio::Waker>)>,
    /// Faces each I/O thread owns, and those handed to it not yet adopted.
    pub loads: Arc<[AtomicUsize]>,
    /// The face id allocator all I/O threads share.
    pub ids: FaceIds,
}

/// The listeners one I/O thread owns.
pub(crate) struct Owned {
    channels: Vec<StreamListener>,
    udp: Vec<UdpChannel>,
    ether: Vec<EtherChannel>,
    links: Option<LinkMonitor>,
    udp_multicast: Vec<(std::net::SocketAddrV4, String, std::net::Ipv4Addr)>,
}

/// Opens the listeners and shares them out over `m` I/O threads (see the module's comment):
/// one [`Owned`] per thread, in thread order.
pub(crate) fn open_listeners(
    config: &RuntimeConfig,
    m: usize,
) -> Result<Vec<Owned>, super::StartError> {
    let mut owned: Vec<Owned> = (0..m)
        .map(|_| Owned {
            channels: Vec::new(),
            udp: Vec::new(),
            ether: Vec::new(),
            links: None,
            udp_multicast: Vec::new(),
        })
        .collect();
    if let Some(path) = &config.unix_socket {
        owned[0]
            .channels
            .push(StreamListener::unix(path, config.face)?);
    }
    for &addr in &config.tcp {
        owned[0]
            .channels
            .push(StreamListener::tcp(addr, config.face)?);
    }
    for &addr in &config.ws {
        owned[0]
            .channels
            .push(StreamListener::ws(addr, config.face)?);
    }
    for &addr in &config.udp {
        let bind_error = |error| kite_face::ListenError::Bind { addr, error };
        if m == 1 {
            owned[0]
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
        if k < config.ether.len() {
            o.links = Some(LinkMonitor::open()?);
        }
    }
    for (i, iface) in config.ether.iter().enumerate() {
        let ch = EtherChannel::open(iface, config.face)?;
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
        owned[i % m].ether.push(ch);
    }
    for (j, mc) in config.udp_multicast.iter().enumerate() {
        owned[j % m].udp_multicast.push(mc.clone());
    }
    Ok(owned)
}

/// The I/O thread with the fewest faces (the first of those tied).
pub(crate) fn least_loaded(loads: &[AtomicUsize]) -> usize {
    (loads.iter().enumerate())
        .min_by_key(|(_, l)| l.load(Ordering::Relaxed))
        .map_or(0, |(k, _)| k)
}

/// How long an I/O thread passes on the shards' output for a face it moved to another: far
/// longer than the shards take to apply the new owner (their next turn).
const MOVED_FOR: Duration = Duration::from_secs(1);

/// Encodes `o` and queues it on its face, counting a Congestion Nack's restraint; returns it
/// when the face is not among `faces`. The faces written to are added to `dirty`. A Nack
/// beyond the face's rate of Nacks ([`kite_face::police`]) is dropped unencoded and
/// restrains the face too: its Interests are only being refused.
fn queue_out(
    faces: &mut HashMap<FaceId, Face>,
    dispatcher: &mut Dispatcher,
    header: &mut Vec<u8>,
    dirty: &mut Vec<FaceId>,
    o: Out,
    now: Instant,
) -> Option<Out> {
    let o = match o {
        Out::Shard { shard, packet } => {
            dispatcher.hand_to_shard(shard, *packet);
            return None;
        }
        o => o,
    };
    let id = o.face();
    let Some(face) = faces.get_mut(&id) else {
        return Some(o);
    };
    let kind = match &o {
        Out::Interest { .. } => PacketKind::Interest,
        Out::Data { .. } => PacketKind::Data,
        Out::Nack { reason, .. } => {
            if *reason == NackReason::CONGESTION {
                dispatcher.restrain(id);
            }
            if !face.admit_nack(now) {
                dispatcher.restrain(id);
                return None;
            }
            PacketKind::Nack
        }
        Out::Shard { .. } => unreachable!("handed to its thread above"),
    };
    let mark = face.congestion_mark(now);
    let packet = o.encode_frame(header, face.local_fields(), mark);
    if face.pending_output() == 0 {
        dirty.push(id);
    }
    let blocked = face.output_blocked();
    face.send_parts(kind, header, packet);
    if blocked {
        // Its socket is full (it is written when it becomes writable): the frame waits, so it
        // must not keep the buffer it was received in.
        face.detach_waiting();
    }
    None
}

pub(crate) struct IoThread {
    /// This thread's index, peers and the load figures it keeps up to date.
    place: Place,
    poll: Poll,
    events: Events,
    sleep: Arc<SleepFlag>,
    commands: Receiver<IoCommand>,
    dispatcher: Dispatcher,
    from_fwd: Vec<Consumer<Out>>,
    fwd: Vec<(Sender<FwCommand>, Waker)>,
    /// The forwarding shards this thread runs itself (inline forwarding), empty when they
    /// have threads of their own.
    shards: Vec<Worker>,
    face_events: Sender<FaceEvent>,
    config: FaceConfig,
    ids: FaceIds,
    channels: Vec<StreamListener>,
    udp: Vec<UdpChannel>,
    ether: Vec<EtherChannel>,
    links: Option<LinkMonitor>,
    faces: HashMap<FaceId, Face>,
    received: Vec<Received>,
    datagrams: Vec<Datagram>,
    created: Vec<Face>,
    /// On-demand faces a datagram channel gave up to make room for new senders.
    evicted: Vec<FaceId>,
    /// Outgoing connections `faces/create` started, by the id their face will get.
    connecting: HashMap<FaceId, Connect>,
    /// TCP faces without their connection, dialing their peer again. Bounded by the faces
    /// (one entry per face, dropped with it).
    redials: HashMap<FaceId, Redial>,
    /// No redial is due before this (it may be earlier than the earliest, never later), so
    /// that a turn of the loop looks at `redials` only when one is due.
    redial_next: Instant,
    header: Vec<u8>,
    dirty: Vec<FaceId>,
    /// (token, readable, peer closed, writable) of the events of one poll.
    ready: Vec<(Token, bool, bool, bool)>,
    /// Faces (and whether their peer closed) with more to read than one burst took: read
    /// again next turn, after what this turn read is forwarded and written.
    unread: Vec<(FaceId, bool)>,
    /// The faces `unread` held at the start of this turn's reads (swapped with it, so
    /// neither list reallocates from turn to turn).
    rereading: Vec<(FaceId, bool)>,
    /// Restrained faces met in one datagram burst and the bare Interests each may still hand
    /// over in it (kept across bursts, so it does not reallocate).
    restrained_room: Vec<(FaceId, usize)>,
    /// Faces (and whether their peer closed) not read while they are restrained: a stream
    /// left unread fills its sender's socket and stops it, a UDP face's own socket fills and
    /// the kernel drops the rest, so a flooder costs the thread nothing until its restraint
    /// ends. Read again then; at most one entry per face.
    parked: Vec<(FaceId, bool)>,
    /// Each UDP face's share of the reads, in datagrams ([`DatagramShare`]).
    shares: HashMap<FaceId, DatagramShare>,
    /// Datagram channels (by poll token) with more to read than one burst took: read again
    /// next turn, like `unread`.
    unread_channels: Vec<Token>,
    /// Stream listeners whose last accept failed, tried again at each housekeeping.
    accept_retry: Vec<usize>,
    /// The channels `unread_channels` held at the start of this turn's reads.
    rereading_channels: Vec<Token>,
    last_housekeeping: Instant,
    spin_when_idle: bool,
    log: IoLog,
    /// Time spent in turns that did work (handled an event, forwarded or wrote).
    busy: Arc<super::BusyTime>,
    /// The faces with LpReliability on, whose timers (retransmissions, Acks) each turn
    /// checks.
    reliable: Vec<FaceId>,
    /// Shared-memory faces, polled every turn while the thread is awake.
    shm: ShmFaces,
    /// Faces this thread handed to another (face, that thread, when) in the last
    /// [`MOVED_FOR`]: a shard's output for one of them still reaching this thread goes on
    /// there. At most one entry per face moved in that time (a face moves once).
    moved: Vec<(FaceId, usize, Instant)>,
    /// The moves [`Affinity`](super::affinity::Affinity) decided in this turn's reads, made
    /// after them.
    moving: Vec<(FaceId, usize)>,
    /// The shared-memory faces one turn reads (kept across turns, so it does not reallocate).
    shm_ready: Vec<FaceId>,
}

impl IoThread {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        config: &RuntimeConfig,
        place: Place,
        owned: Owned,
        poll: Poll,
        sleep: Arc<SleepFlag>,
        commands: Receiver<IoCommand>,
        dispatcher: Dispatcher,
        from_fwd: Vec<Consumer<Out>>,
        fwd: Vec<(Sender<FwCommand>, Waker)>,
        shards: Vec<Worker>,
        face_events: Sender<FaceEvent>,
        busy: Arc<super::BusyTime>,
    ) -> Result<Self, super::StartError> {
        let Owned {
            mut channels,
            udp,
            ether,
            links,
            udp_multicast,
        } = owned;
        if CHANNEL_TOKEN + channels.len() + udp.len() + ether.len()
            > FaceId::FIRST_DYNAMIC.0 as usize
        {
            return Err(super::StartError::Config("too many listeners".into()));
        }
        for (i, c) in channels.iter_mut().enumerate() {
            c.register(poll.registry(), Token(CHANNEL_TOKEN + i))?;
        }
        for (i, u) in udp.iter().enumerate() {
            u.register(poll.registry(), Token(CHANNEL_TOKEN + channels.len() + i))?;
        }
        for (i, e) in ether.iter().enumerate() {
            let token = CHANNEL_TOKEN + channels.len() + udp.len() + i;
            e.register(poll.registry(), Token(token))?;
        }
        if let Some(l) = &links {
            l.register(poll.registry(), LINK_TOKEN)?;
        }
        let ids = place.ids.clone();
        let mut thread = IoThread {
            place,
            poll,
            events: Events::with_capacity(256),
            sleep,
            commands,
            dispatcher,
            from_fwd,
            fwd,
            shards,
            face_events,
            config: config.face,
            ids,
            channels,
            udp,
            ether,
            links,
            faces: HashMap::new(),
            received: Vec::with_capacity(256),
            datagrams: Vec::with_capacity(64),
            created: Vec::new(),
            evicted: Vec::new(),
            connecting: HashMap::new(),
            redials: HashMap::new(),
            redial_next: Instant::now(),
            header: Vec::with_capacity(64),
            dirty: Vec::new(),
            ready: Vec::with_capacity(256),
            unread: Vec::new(),
            rereading: Vec::new(),
            unread_channels: Vec::new(),
            accept_retry: Vec::new(),
            restrained_room: Vec::new(),
            parked: Vec::new(),
            shares: HashMap::new(),
            rereading_channels: Vec::new(),
            last_housekeeping: Instant::now(),
            spin_when_idle: config.spin_when_idle,
            log: IoLog::new(),
            busy,
            reliable: Vec::new(),
            shm: ShmFaces::default(),
            shm_ready: Vec::new(),
            moved: Vec::new(),
            moving: Vec::new(),
        };
        for i in 0..thread.ether.len() {
            let id = thread.ids.next_id();
            if let Ok(face) = thread.ether[i].multicast_face(id) {
                thread.add_face(face);
            }
        }
        for (group, device, addr) in &udp_multicast {
            let id = thread.ids.next_id();
            let face =
                kite_face::udp::multicast(id, *group, *addr, Some(device), false, &config.face)
                    .map_err(|error| kite_face::ListenError::Bind {
                        addr: std::net::SocketAddr::V4(*group),
                        error,
                    })?;
            tracing::info!(face = id.0, %group, device = %device, "UDP multicast face opened");
            thread.add_face(face);
        }
        Ok(thread)
    }

    pub fn run(mut self) {
        let mut spin_until = Instant::now();
        // When the last poll returned, and whether it brought events: a turn runs from there
        // to the next poll, and counts as busy when it handled events or did work.
        let mut turn_start = spin_until;
        let mut had_events = false;
        loop {
            let (forwarded, held) = self.forward_inline();
            let worked = self.drain_output() || forwarded || held;
            let t = Instant::now();
            if worked {
                spin_until = t + SPIN_TIME;
            }
            if worked || had_events {
                self.busy.add(t.saturating_duration_since(turn_start));
            }
            // Busy: poll without blocking. Otherwise sleep until the housekeeping tick or
            // the inline shards' next timer, unless work slipped in after the announcement.
            let unread = !self.unread.is_empty() || !self.unread_channels.is_empty();
            let busy = self.spin_when_idle || t < spin_until || unread;
            if busy && !worked && !self.spin_when_idle && !unread {
                // An empty spin: let a thread waiting for this core (an application, the
                // forwarder's other threads) run first; on an idle core this returns at once.
                std::thread::yield_now();
            }
            let mut timeout = Some(if busy {
                Duration::ZERO
            } else {
                self.shards
                    .iter()
                    .filter_map(Worker::timer_due_in)
                    .chain(
                        self.connecting
                            .values()
                            .map(|c| c.deadline.saturating_duration_since(t)),
                    )
                    .chain(
                        (!self.redials.is_empty())
                            .then(|| self.redial_next.saturating_duration_since(t)),
                    )
                    .chain((self.parked.iter()).map(|&(id, _)| self.dispatcher.restraint_left(id)))
                    .chain(self.reliable.iter().filter_map(|id| {
                        let due = self.faces.get(id)?.reliability_due()?;
                        Some(due.saturating_duration_since(t))
                    }))
                    .fold(HOUSEKEEPING, Duration::min)
            });
            if !busy {
                self.sleep.announce();
                if self.from_fwd.iter().any(|c| !c.is_empty())
                    || !self.commands.is_empty()
                    || self.shards.iter().any(Worker::has_work)
                    || self.shm.announce_sleep(&self.faces)
                {
                    timeout = Some(Duration::ZERO);
                }
            }
            let polled = self.poll.poll(&mut self.events, timeout);
            self.sleep.clear();
            if let Err(e) = polled {
                // Without its poll the thread can serve no socket: fail loudly (`kite run`
                // ends the process on a panic, for its supervisor to restart) rather than
                // leave the process up without its I/O.
                assert!(
                    e.kind() == std::io::ErrorKind::Interrupted,
                    "epoll_wait failed: {e}"
                );
            }
            let now = Instant::now();
            turn_start = now;
            had_events = !self.events.is_empty();
            // The events are copied out (into a buffer kept across polls) because handling
            // one needs the whole thread mutably.
            let mut ready = core::mem::take(&mut self.ready);
            ready.extend(self.events.iter().map(|e| {
                (
                    e.token(),
                    e.is_readable() || e.is_read_closed(),
                    e.is_read_closed(),
                    e.is_writable(),
                )
            }));
            for &(token, readable, hangup, writable) in &ready {
                self.handle_event(token, readable, hangup, writable, now);
            }
            ready.clear();
            self.ready = ready;
            core::mem::swap(&mut self.unread, &mut self.rereading);
            for i in 0..self.rereading.len() {
                let (id, hangup) = self.rereading[i];
                self.read_face(id, now, hangup);
            }
            self.rereading.clear();
            core::mem::swap(&mut self.unread_channels, &mut self.rereading_channels);
            for i in 0..self.rereading_channels.len() {
                let token = self.rereading_channels[i];
                self.read_channel(token, now);
            }
            self.rereading_channels.clear();
            if !self.parked.is_empty() {
                self.unpark(now);
            }
            let mut shm_ready = core::mem::take(&mut self.shm_ready);
            self.shm.ready(&self.faces, &mut shm_ready);
            for &id in &shm_ready {
                self.read_face(id, now, false);
            }
            shm_ready.clear();
            self.shm_ready = shm_ready;
            self.moving.extend(self.dispatcher.affinity.take_moves());
            for i in 0..self.moving.len() {
                let (id, k) = self.moving[i];
                self.move_face(id, k, now);
            }
            self.moving.clear();
            if !self.handle_commands() {
                (self.log).flush(&self.faces, &self.udp, &self.ether);
                return;
            }
            if !self.connecting.is_empty() {
                self.expire_connects(now);
            }
            if !self.redials.is_empty() && now >= self.redial_next {
                self.redial_due(now);
            }
            if !self.reliable.is_empty() {
                self.step_reliability(Instant::now());
            }
            if now.duration_since(self.last_housekeeping) >= HOUSEKEEPING {
                self.last_housekeeping = now;
                self.housekeeping(now);
            }
        }
    }

    fn handle_event(
        &mut self,
        token: Token,
        readable: bool,
        hangup: bool,
        writable: bool,
        now: Instant,
    ) {
        let t = token.0;
        if token == WAKE_TOKEN {
            return;
        }
        if token == LINK_TOKEN {
            self.follow_links();
            return;
        }
        if t >= FaceId::FIRST_DYNAMIC.0 as usize {
            let id = FaceId(t as u64);
            if self.connecting.contains_key(&id) {
                self.connect_progress(id);
                return;
            }
            if !self.redials.is_empty()
                && self.redials.contains_key(&id)
                && !self.redial_progress(id, now)
            {
                return;
            }
            if writable {
                self.flush_face(id);
            }
            if readable {
                self.read_face(id, now, hangup);
            }
            return;
        }
        let i = t - CHANNEL_TOKEN;
        if i < self.channels.len() {
            self.accept_all(i);
            return;
        }
        let Some(channel) = self.datagram_channel(token) else {
            return;
        };
        if readable {
            self.read_channel(token, now);
        }
        if writable {
            for id in self.waiting_on(&self.datagram_local_uri(channel)) {
                self.flush_face(id);
            }
        }
    }

    /// The datagram channel of a poll token, if it names one.
    fn datagram_channel(&self, token: Token) -> Option<DatagramChannel> {
        let d = token.0.checked_sub(CHANNEL_TOKEN + self.channels.len())?;
        if d < self.udp.len() {
            Some(DatagramChannel::Udp(d))
        } else if d - self.udp.len() < self.ether.len() {
            Some(DatagramChannel::Ether(d - self.udp.len()))
        } else {
            None
        }
    }

    /// Reads one burst (one `recvmmsg`) from the datagram channel of `token` and dispatches
    /// it; a channel with more to read is read again next turn, after every other face and
    /// channel had its burst, so one sender's stream of datagrams cannot fill the forwarding
    /// threads' rings ahead of the others.
    fn read_channel(&mut self, token: Token, now: Instant) {
        let Some(channel) = self.datagram_channel(token) else {
            return;
        };
        let progress = self.recv_datagrams(channel, now);
        self.deliver_datagrams(channel, now);
        // What waited in an Ethernet socket counts as waiting for CoDel: the kernel's queue
        // is where a bottleneck I/O thread's backlog stands, unseen by the rings.
        let waited = match channel {
            DatagramChannel::Udp(_) => Duration::ZERO,
            DatagramChannel::Ether(e) => self.ether[e].waited(),
        };
        self.dispatch_waited(waited);
        if matches!(progress, Ok(Progress::More)) && !self.unread_channels.contains(&token) {
            self.unread_channels.push(token);
        }
    }

    /// Reads one burst from a datagram channel into `self.datagrams` (new on-demand faces
    /// into `self.created`, those given up for them into `self.evicted`).
    fn recv_datagrams(
        &mut self,
        channel: DatagramChannel,
        now: Instant,
    ) -> std::io::Result<Progress> {
        let (ids, datagrams, created, evicted) = (
            &mut self.ids,
            &mut self.datagrams,
            &mut self.created,
            &mut self.evicted,
        );
        match channel {
            DatagramChannel::Udp(u) => {
                self.udp[u].recv_burst(now, ids, datagrams, created, evicted)
            }
            DatagramChannel::Ether(e) => {
                self.ether[e].recv_burst(now, ids, datagrams, created, evicted)
            }
        }
    }

    /// The local URI a datagram channel's faces share.
    fn datagram_local_uri(&self, channel: DatagramChannel) -> FaceUri {
        match channel {
            DatagramChannel::Udp(u) => self.udp[u].local_uri(),
            DatagramChannel::Ether(e) => self.ether[e].local_uri().clone(),
        }
    }

    /// Closes the on-demand faces a datagram channel gave up (their channel forgot them
    /// already), adds the faces it just created, then hands each datagram it read to its
    /// face (fragments to the channel's reassembler, whose drops count on their faces). A
    /// face created and given up within the same burst is never added: the channel forgot
    /// it, so added it would outlive the channel's on-demand limit until its idle timeout.
    fn deliver_datagrams(&mut self, channel: DatagramChannel, now: Instant) {
        for face in core::mem::take(&mut self.created) {
            match self.evicted.iter().position(|&id| id == face.id()) {
                Some(i) => {
                    self.evicted.swap_remove(i);
                }
                None => {
                    self.add_face(face);
                }
            }
        }
        while let Some(id) = self.evicted.pop() {
            self.close_face(id, CloseReason::Evicted);
        }
        let reassembler = match channel {
            DatagramChannel::Udp(u) => self.udp[u].reassembler(),
            DatagramChannel::Ether(e) => self.ether[e].reassembler(),
        };
        for d in self.datagrams.drain(..) {
            let Some(face) = self.faces.get_mut(&d.face) else {
                continue;
            };
            // A restrained face's bare Interests beyond its room are dropped before they are
            // decoded: a datagram flooder cannot be slowed, only made cheap.
            if d.frame.first() == Some(&(tlv_type::INTEREST as u8))
                && self.dispatcher.is_restrained(d.face)
            {
                let i = match self.restrained_room.iter().position(|(f, _)| *f == d.face) {
                    Some(i) => i,
                    None => {
                        let room = self.dispatcher.room(d.face, false);
                        self.restrained_room.push((d.face, room));
                        self.restrained_room.len() - 1
                    }
                };
                let room = &mut self.restrained_room[i].1;
                if *room == 0 {
                    face.count_in_queue_full();
                    continue;
                }
                *room -= 1;
            }
            face.receive_frame(
                d.from,
                d.frame,
                d.own_buffer,
                now,
                reassembler,
                &mut self.received,
            );
        }
        count_reassembly_drops(reassembler, &mut self.faces);
        self.restrained_room.clear();
    }

    /// The faces with pending output that send through the channel at `local`, to flush when
    /// its socket becomes writable (empty, and so not allocated, when none waits).
    fn waiting_on(&self, local: &FaceUri) -> Vec<FaceId> {
        self.faces
            .values()
            .filter(|f| f.pending_output() > 0 && f.local_uri() == local)
            .map(Face::id)
            .collect()
    }

    /// Applies interface changes to the Ethernet channels and their faces; a face that went
    /// up or down is announced (NFD's face events UP and DOWN).
    fn follow_links(&mut self) {
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
            let Some(link) = ch.link_changed(&events) else {
                continue;
            };
            tracing::info!(
                iface = ch.name(),
                up = link.up,
                mtu = link.mtu,
                "link changed"
            );
            for face in self.faces.values_mut() {
                if face.local_uri() != ch.local_uri() {
                    continue;
                }
                if let Some(up) = face.follow_link(link) {
                    let s = Self::status(face);
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

    /// Reads one burst from a face's own socket and dispatches it. A face that can push back
    /// (a stream) reads only as many packets as the forwarding threads have room for from
    /// it; with none, it is not read (its sender's socket fills and the kernel slows it)
    /// until the rings drain. A face with more to read is read again next turn. A restrained
    /// stream or UDP face is not read at all until its restraint ends (it is parked).
    fn read_face(&mut self, id: FaceId, now: Instant, hangup: bool) {
        let Some(face) = self.faces.get(&id) else {
            return;
        };
        let udp = face.udp_remote().zip(face.raw_fd());
        if (face.pushes_back() || udp.is_some()) && self.dispatcher.is_restrained(id) {
            match self.parked.iter_mut().find(|(f, _)| *f == id) {
                Some((_, closed)) => *closed |= hangup,
                None => self.parked.push((id, hangup)),
            }
            return;
        }
        if let Some((remote, fd)) = udp {
            self.read_udp_face(id, remote, fd, now);
            return;
        }
        let budget = match face.pushes_back() {
            true => STREAM_QUANTUM.min(self.dispatcher.room(id, face.scope() == FaceScope::Local)),
            false => usize::MAX,
        };
        let result = match budget {
            0 => Ok(Progress::More),
            _ => {
                let face = self.faces.get_mut(&id).expect("looked up above");
                // Every packet of the burst comes from this face, so its scope answers for all.
                let mut sink = self.dispatcher.direct(face.scope() == FaceScope::Local);
                let r = face.recv_burst(now, hangup, budget, &mut sink);
                sink.finish();
                if face.shm_requested() {
                    let token = Token(id.0 as usize);
                    match face.switch_to_shm(self.poll.registry(), token, &mut self.received) {
                        Ok(()) => {
                            tracing::info!(face = id.0, "switched to shared memory");
                            self.shm.add(id);
                        }
                        Err(e) => {
                            tracing::info!(face = id.0, error = %e, "shared memory not offered")
                        }
                    }
                }
                self.dispatch();
                r
            }
        };
        let why = match result {
            Ok(Progress::More) => {
                if !self.unread.contains(&(id, hangup)) {
                    self.unread.push((id, hangup));
                }
                return;
            }
            Ok(Progress::Drained) => return,
            Err(FaceError::Closed) => CloseReason::PeerClosed,
            Err(e) => CloseReason::Error(format!("receive failed: {e}")),
        };
        self.transport_failed(id, why, now);
    }

    /// Reads one burst from the own socket `fd` of UDP face `id` (toward `remote`), at most
    /// its credit of datagrams ([`DatagramShare`]) and as many as the forwarding threads have
    /// room for from it (the rest wait in its socket, and beyond its receive buffer the
    /// kernel drops them), and dispatches it.
    fn read_udp_face(&mut self, id: FaceId, remote: SocketAddr, fd: RawFd, now: Instant) {
        let Some(u) = (self.faces.get(&id)).and_then(|f| {
            self.udp
                .iter()
                .position(|c| c.local_uri() == *f.local_uri())
        }) else {
            return;
        };
        let share = self.shares.entry(id).or_default();
        let Some(credit) = share.credit(STREAM_QUANTUM) else {
            // Still repaying what a coalesced read brought beyond its share: next turn.
            if !self.unread.contains(&(id, false)) {
                self.unread.push((id, false));
            }
            return;
        };
        let budget = credit.min(self.dispatcher.room(id, false));
        let progress = match budget {
            0 => Ok(Progress::More),
            _ => {
                let messages = share.messages(budget);
                let before = self.datagrams.len();
                let r = self.udp[u].recv_face(id, remote, fd, messages, now, &mut self.datagrams);
                let read = self.datagrams.len() - before;
                share.charge(r.as_ref().map_or(0, |&(_, m)| m), read);
                self.deliver_datagrams(DatagramChannel::Udp(u), now);
                self.dispatch();
                r.map(|(p, _)| p)
            }
        };
        match progress {
            Ok(Progress::More) => {
                if !self.unread.contains(&(id, false)) {
                    self.unread.push((id, false));
                }
            }
            Ok(Progress::Drained) => {}
            Err(e) => {
                self.transport_failed(id, CloseReason::Error(format!("receive failed: {e}")), now)
            }
        }
    }

    /// Reads the parked faces whose restraint ended.
    fn unpark(&mut self, now: Instant) {
        let mut i = 0;
        while i < self.parked.len() {
            let (id, hangup) = self.parked[i];
            if self.dispatcher.is_restrained(id) {
                i += 1;
                continue;
            }
            self.parked.swap_remove(i);
            self.read_face(id, now, hangup);
        }
    }

    /// A face's socket failed or its peer closed: a permanent TCP face keeps its id and
    /// routes and dials its peer again; another permanent face stays as it is; any other face
    /// is closed, for `why`.
    fn transport_failed(&mut self, id: FaceId, why: CloseReason, now: Instant) {
        let Some(face) = self.faces.get_mut(&id) else {
            return;
        };
        if face.persistency() != Persistency::Permanent {
            self.close_face(id, why);
            return;
        }
        if face.lose_connection(self.poll.registry()) {
            let backoff = self.config.redial_initial;
            tracing::warn!(face = id.0, remote = %face.remote_uri(), "connection lost; dialing again in {backoff:?}");
            let _ = self.face_events.send(FaceEvent::Down(Self::status(face)));
            self.schedule_redial(id, now + backoff);
        }
    }

    /// Dials the lost faces whose pause is over, and gives up the dials that took longer than
    /// `kite_face::tcp::CONNECT_TIMEOUT`.
    fn redial_due(&mut self, now: Instant) {
        let due: Vec<FaceId> = self
            .redials
            .iter()
            .filter(|(_, r)| r.deadline.unwrap_or(r.at) <= now)
            .map(|(&id, _)| id)
            .collect();
        for id in due {
            let Some(face) = self.faces.get_mut(&id) else {
                self.redials.remove(&id);
                continue;
            };
            if face.is_redialing() {
                let t = kite_face::tcp::CONNECT_TIMEOUT;
                self.redial_failed(id, now, &format!("no answer within {t:?}"));
                continue;
            }
            match face.redial(self.poll.registry(), Token(id.0 as usize)) {
                Ok(()) => {
                    tracing::debug!(face = id.0, remote = %face.remote_uri(), "dialing");
                    if let Some(r) = self.redials.get_mut(&id) {
                        r.deadline = Some(now + kite_face::tcp::CONNECT_TIMEOUT);
                    }
                }
                Err(e) => self.redial_failed(id, now, &e.to_string()),
            }
        }
        let next = self
            .redials
            .values()
            .map(|r| r.deadline.unwrap_or(r.at))
            .min();
        self.redial_next = next.unwrap_or(now);
    }

    /// Makes face `id` dial its peer at `at`, after the initial backoff.
    fn schedule_redial(&mut self, id: FaceId, at: Instant) {
        let backoff = self.config.redial_initial;
        let r = Redial {
            at,
            backoff,
            deadline: None,
        };
        self.redials.insert(id, r);
        self.redial_next = self.redial_next.min(at);
    }

    /// After an event on a face that is dialing again: once connected, it is up (announced,
    /// and the event goes on to its reads and writes: `true`); once the dial failed, it waits
    /// for the next.
    fn redial_progress(&mut self, id: FaceId, now: Instant) -> bool {
        let Some(face) = self.faces.get_mut(&id) else {
            return false;
        };
        match face.redial_progress() {
            Ok(false) => false,
            Ok(true) => {
                self.redials.remove(&id);
                tracing::info!(face = id.0, remote = %face.remote_uri(), local = %face.local_uri(), "connected");
                let _ = self.face_events.send(FaceEvent::Up(Self::status(face)));
                true
            }
            Err(e) => {
                self.redial_failed(id, now, &e.to_string());
                false
            }
        }
    }

    /// A dial failed: a permanent face waits its backoff (then doubled, up to
    /// `FaceConfig::redial_max`) and dials again; any other is destroyed.
    fn redial_failed(&mut self, id: FaceId, now: Instant, why: &str) {
        let Some(face) = self.faces.get_mut(&id) else {
            self.redials.remove(&id);
            return;
        };
        face.lose_connection(self.poll.registry());
        if face.persistency() != Persistency::Permanent {
            self.close_face(id, CloseReason::Error(format!("connect failed: {why}")));
            return;
        }
        let max = self.config.redial_max;
        let Some(r) = self.redials.get_mut(&id) else {
            return;
        };
        let wait = r.backoff;
        r.at = now + wait;
        r.deadline = None;
        r.backoff = (wait * 2).min(max);
        self.redial_next = self.redial_next.min(r.at);
        tracing::info!(face = id.0, remote = %face.remote_uri(), error = why, "connect failed; dialing again in {wait:?}");
    }

    fn flush_face(&mut self, id: FaceId) {
        let Some(face) = self.faces.get_mut(&id) else {
            return;
        };
        match face.flush() {
            Ok(Flushed::Done) | Ok(Flushed::Blocked) => {}
            Err(e) => self.transport_failed(
                id,
                CloseReason::Error(format!("send failed: {e}")),
                Instant::now(),
            ),
        }
    }

    /// Runs the inline forwarding shards until none has anything left to do, or for
    /// [`INLINE_PASSES`] passes, writing their output after each pass (so no output ring
    /// fills while they work). Returns whether any shard worked, and whether one still holds
    /// management answers for want of room. A shard told to stop is dropped; the thread
    /// itself stops at its own shutdown command.
    fn forward_inline(&mut self) -> (bool, bool) {
        let mut worked = false;
        for _ in 0..INLINE_PASSES {
            let mut again = false;
            let mut held = false;
            self.shards.retain_mut(|w| match w.step() {
                Ok(Step::Worked) => {
                    again = true;
                    true
                }
                Ok(Step::Held) => {
                    held = true;
                    true
                }
                Ok(Step::Idle) => true,
                Err(_) => false,
            });
            if !again {
                return (worked, held);
            }
            worked = true;
            self.drain_output();
        }
        (worked, false)
    }

    /// Encodes and queues what the forwarding threads sent; flushes each face written to.
    fn drain_output(&mut self) -> bool {
        let mut any = false;
        let mut now = None;
        // Bit k: an output went on to I/O thread k (its face moved there).
        let mut passed = 0u64;
        for ring in &mut self.from_fwd {
            let n = ring.slots();
            if n == 0 {
                continue;
            }
            any = true;
            let now = *now.get_or_insert_with(Instant::now);
            // As one chunk: each packet is moved out of its slot once, and the ring's head
            // moves once.
            let Ok(chunk) = ring.read_chunk(n) else {
                continue;
            };
            for o in chunk {
                let out = queue_out(
                    &mut self.faces,
                    &mut self.dispatcher,
                    &mut self.header,
                    &mut self.dirty,
                    o,
                    now,
                );
                if let Some(o) = out {
                    let id = o.face();
                    if let Some(&(_, k, _)) = self.moved.iter().find(|m| m.0 == id) {
                        let _ = self.place.peers[k].0.send(IoCommand::Output(o));
                        passed |= 1 << k;
                    }
                }
            }
        }
        while passed != 0 {
            let k = passed.trailing_zeros() as usize;
            let _ = self.place.peers[k].1.wake();
            passed &= passed - 1;
        }
        self.dispatcher.wake();
        self.flush_dirty();
        any
    }

    /// Flushes each face [`queue_out`] wrote to.
    fn flush_dirty(&mut self) {
        let mut dirty = core::mem::take(&mut self.dirty);
        for &id in &dirty {
            self.flush_face(id);
        }
        dirty.clear();
        self.dirty = dirty;
    }

    /// Hands face `id` to I/O thread `k`, which runs the shards its packets go to (see
    /// [`Affinity`](super::affinity::Affinity)). Shared-memory faces stay (their region
    /// is polled by this thread).
    fn move_face(&mut self, id: FaceId, k: usize, now: Instant) {
        if (self.faces.get(&id)).is_none_or(|f| f.is_shm() || f.shm_requested()) {
            return;
        }
        let Some(face) = self.faces.remove(&id) else {
            return;
        };
        let _ = face.deregister(self.poll.registry());
        self.log.moved_out(face.counters());
        self.unread.retain(|&(f, _)| f != id);
        self.parked.retain(|&(f, _)| f != id);
        self.shares.remove(&id);
        self.follow_reliability(id);
        self.place.loads[self.place.index].fetch_sub(1, Ordering::Relaxed);
        if !self.hand_over(k, IoCommand::Migrate(Box::new(face))) {
            return;
        }
        tracing::debug!(
            face = id.0,
            to = k,
            "face moved to the I/O thread of its shards"
        );
        self.moved.push((id, k, now));
    }

    /// Takes a face another I/O thread moved here ([`IoThread::move_face`]): watched by
    /// this thread's poll, and every shard sends its output here from now on.
    fn adopt_moved(&mut self, face: Face) {
        self.log.moved_in(face.counters());
        self.own(face);
    }

    /// Makes `face` this thread's: watched by its poll, and every shard told to send its
    /// output here.
    fn own(&mut self, face: Face) {
        let id = face.id();
        if let Err(e) = face.register(self.poll.registry(), Token(id.0 as usize)) {
            tracing::warn!(face = id.0, error = %e, "cannot watch face");
        }
        let info = FaceInfo {
            scope: face.scope(),
            link_type: face.link_type(),
        };
        let owner = self.place.index as u8;
        for (tx, w) in &self.fwd {
            let _ = tx.send(FwCommand::AddFace(id, info, owner));
            w.wake();
        }
        self.faces.insert(id, face);
        self.follow_reliability(id);
    }

    /// Resends the frames the reliable faces found lost and sends their Acks that are due,
    /// flushing each face that queued something.
    fn step_reliability(&mut self, now: Instant) {
        for i in 0..self.reliable.len() {
            let id = self.reliable[i];
            let Some(face) = self.faces.get_mut(&id) else {
                continue;
            };
            if face.reliability_due().is_some_and(|d| d <= now) {
                face.step_reliability(now);
                if face.pending_output() > 0 {
                    self.flush_face(id);
                }
            }
        }
    }

    /// Keeps [`IoThread::reliable`] in step with face `id` (after it changed, or closed).
    fn follow_reliability(&mut self, id: FaceId) {
        let on = self.faces.get(&id).is_some_and(Face::lp_reliability);
        match (on, self.reliable.iter().position(|&f| f == id)) {
            (true, None) => self.reliable.push(id),
            (false, Some(i)) => {
                self.reliable.swap_remove(i);
            }
            _ => {}
        }
    }

    fn status(face: &Face) -> FaceStatus {
        FaceStatus {
            id: face.id(),
            remote: face.remote_uri().clone(),
            local: face.local_uri().clone(),
            scope: face.scope(),
            persistency: face.persistency(),
            link_type: face.link_type(),
            mtu: face.mtu(),
            local_fields: face.local_fields(),
            marking: face.congestion_marking(),
            lp_reliability: face.lp_reliability(),
            up: face.is_up(),
            reconnecting: face.is_redialing(),
            out_queue: face.pending_output(),
            counters: *face.counters(),
        }
    }

    /// Hands the packets read this round to the forwarding threads and counts those that
    /// found their ring full against the faces they came from.
    fn dispatch(&mut self) {
        self.dispatch_waited(Duration::ZERO);
    }

    /// [`IoThread::dispatch`] of packets that waited `waited` in their socket before they
    /// were read.
    fn dispatch_waited(&mut self, waited: Duration) {
        let faces = &self.faces;
        self.dispatcher
            .dispatch_burst(&mut self.received, waited, |id| {
                faces
                    .get(&id)
                    .is_some_and(|f| f.scope() == FaceScope::Local)
            });
        for id in self.dispatcher.take_dropped() {
            if let Some(face) = self.faces.get_mut(&id) {
                face.count_in_queue_full();
            }
        }
    }

    /// Keeps an accepted connection, or hands it to the I/O thread with the fewest faces
    /// (counted there at once, so a burst of accepts spreads).
    fn place_face(&mut self, face: Face) {
        let k = least_loaded(&self.place.loads);
        if k == self.place.index {
            let id = face.id();
            self.add_face(face);
            self.dispatcher.affinity.watch(id, Instant::now());
            return;
        }
        self.hand_over(k, IoCommand::Adopt(Box::new(face)));
    }

    /// Sends I/O thread `k` a face to own (`cmd`), counted in its load, and wakes it; false
    /// when that thread is stopping (the face closed with the command, and is not counted).
    fn hand_over(&self, k: usize, cmd: IoCommand) -> bool {
        self.place.loads[k].fetch_add(1, Ordering::Relaxed);
        let (tx, waker) = &self.place.peers[k];
        if tx.send(cmd).is_err() {
            self.place.loads[k].fetch_sub(1, Ordering::Relaxed);
            return false;
        }
        let _ = waker.wake();
        true
    }

    /// Accepts every connection pending on stream listener `i`. When accepting fails (out of
    /// file descriptors: EMFILE), the listener is tried again at each housekeeping until it
    /// succeeds: its readiness is edge-triggered, so the connections left in its backlog
    /// would otherwise wait for the next one to arrive.
    fn accept_all(&mut self, i: usize) {
        loop {
            let now = Instant::now();
            match self.channels[i].accept(&mut self.ids, now) {
                Ok(Some(Accepted::Face(face, evict))) => {
                    self.place_face(*face);
                    if let Some(id) = evict {
                        self.evict(id);
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
    fn evict(&mut self, id: FaceId) {
        if self.close_face(id, CloseReason::Evicted).is_some() {
            return;
        }
        for (k, (tx, waker)) in self.place.peers.iter().enumerate() {
            if k != self.place.index && tx.send(IoCommand::Evict(id)).is_ok() {
                let _ = waker.wake();
            }
        }
    }

    fn add_face(&mut self, face: Face) -> FaceStatus {
        self.place.loads[self.place.index].fetch_add(1, Ordering::Relaxed);
        let status = Self::status(&face);
        self.log.created(&status, Instant::now());
        let _ = self.face_events.send(FaceEvent::Created(status.clone()));
        self.own(face);
        status
    }

    fn close_face(&mut self, id: FaceId, why: CloseReason) -> Option<FaceStatus> {
        let face = self.faces.remove(&id)?;
        self.shares.remove(&id);
        self.dispatcher.affinity.forget(id);
        self.place.loads[self.place.index].fetch_sub(1, Ordering::Relaxed);
        self.redials.remove(&id);
        self.follow_reliability(id);
        let _ = face.deregister(self.poll.registry());
        self.forget_in_channel(&face);
        for (tx, w) in &self.fwd {
            let _ = tx.send(FwCommand::RemoveFace(id));
            w.wake();
        }
        let status = Self::status(&face);
        self.log.closed(&status, &why, Instant::now());
        let _ = self.face_events.send(FaceEvent::Destroyed(status.clone()));
        Some(status)
    }

    /// Makes the channel that demultiplexes to `face` (UDP or Ethernet) forget it.
    fn forget_in_channel(&mut self, face: &Face) {
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
    fn follow_persistency(&mut self, id: FaceId) {
        let Some(face) = self.faces.get(&id) else {
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

    fn housekeeping(&mut self, now: Instant) {
        for i in std::mem::take(&mut self.accept_retry) {
            self.accept_all(i);
        }
        self.dispatcher.affinity.expire(now);
        self.moved
            .retain(|m| now.saturating_duration_since(m.2) < MOVED_FOR);
        let restrained = self.dispatcher.restrained_faces();
        (self.log).housekeeping(now, &self.faces, &self.udp, &self.ether, restrained);
        self.dispatcher.forget_restraints();
        for ch in &mut self.ether {
            let dropped = ch.take_socket_drops();
            if dropped > 0 {
                // At most once a second per interface (the housekeeping tick).
                tracing::warn!(
                    interface = ch.name(),
                    dropped,
                    total = ch.counters().n_socket_drops,
                    "the kernel dropped frames for a full receive buffer (raise \
                     face_system.ether.socket_buffer)"
                );
            }
        }
        for u in &self.udp {
            let shared = u.take_shared();
            if shared > 0 {
                // At most once a second per listener (the housekeeping tick).
                tracing::warn!(
                    listener = %u.local_addr(),
                    faces = shared,
                    "UDP faces made without a socket of their own share the listener's \
                     (raise the open files limit)"
                );
            }
        }
        let channels = self.udp.iter_mut().map(UdpChannel::reassembler);
        for r in channels.chain(self.ether.iter_mut().map(EtherChannel::reassembler)) {
            r.expire(now);
            count_reassembly_drops(r, &mut self.faces);
        }
        let mut idle = Vec::new();
        let mut evicted = Vec::new();
        for (id, face) in &mut self.faces {
            face.expire(now);
            if face.idle_expired(now) {
                idle.push(*id);
            } else if face.evicted() {
                evicted.push(*id);
            }
        }
        for id in idle {
            self.close_face(id, CloseReason::Idle);
        }
        for id in evicted {
            self.close_face(id, CloseReason::Evicted);
        }
    }

    /// Applies management's commands; `false` when told to stop.
    fn handle_commands(&mut self) -> bool {
        while let Ok(cmd) = self.commands.try_recv() {
            match cmd {
                IoCommand::Adopt(face) => {
                    // The accepting thread counted it here already; `add_face` counts it.
                    self.place.loads[self.place.index].fetch_sub(1, Ordering::Relaxed);
                    let id = face.id();
                    self.add_face(*face);
                    self.dispatcher.affinity.watch(id, Instant::now());
                }
                IoCommand::Migrate(face) => self.adopt_moved(*face),
                IoCommand::Output(o) => {
                    let now = Instant::now();
                    let (faces, header, dirty) =
                        (&mut self.faces, &mut self.header, &mut self.dirty);
                    let _ = queue_out(faces, &mut self.dispatcher, header, dirty, o, now);
                    self.flush_dirty();
                }
                IoCommand::Create {
                    remote,
                    local,
                    persistency,
                    options,
                    background,
                    tag,
                    reply,
                } => {
                    let request = CreateRequest {
                        persistency,
                        options,
                        tag,
                        reply,
                    };
                    match (background, &remote, &local) {
                        (true, FaceUri::Tcp(addr), None)
                            if persistency != Persistency::OnDemand =>
                        {
                            let addr = *addr;
                            self.create_unconnected(addr, request);
                        }
                        _ => self.create(remote, local, request),
                    }
                }
                IoCommand::Update {
                    id,
                    persistency,
                    options,
                    reply,
                } => {
                    let r = match self.faces.get_mut(&id) {
                        None => Err(FaceCommandError::NotFound),
                        Some(face) => {
                            configure(face, persistency, options).map(|()| Self::status(face))
                        }
                    };
                    self.follow_persistency(id);
                    self.follow_reliability(id);
                    let _ = reply.send(r);
                }
                IoCommand::Destroy { id, reply } => {
                    let _ = reply.send(self.close_face(id, CloseReason::Command));
                }
                IoCommand::Evict(id) => {
                    self.close_face(id, CloseReason::Evicted);
                }
                IoCommand::List { reply } => {
                    let mut all: Vec<FaceStatus> = self.faces.values().map(Self::status).collect();
                    all.sort_by_key(|s| s.id);
                    let _ = reply.send(all);
                }
                IoCommand::Channels { reply } => {
                    let mut all: Vec<_> =
                        self.channels.iter().map(StreamListener::status).collect();
                    all.extend(self.udp.iter().map(UdpChannel::status));
                    all.extend(self.ether.iter().map(EtherChannel::status));
                    let _ = reply.send(all);
                }
                IoCommand::Shutdown => return false,
            }
        }
        true
    }

    /// Carries out `faces/create`: answers at once, or, for an outgoing TCP connection, once
    /// it completes, fails or times out (see [`IoThread::connect_progress`]).
    fn create(&mut self, remote: FaceUri, local: Option<FaceUri>, request: CreateRequest) {
        match self.new_face(&remote, local, request.persistency) {
            Ok(NewFace::Ready(face)) => {
                let r = self.finish_create(*face, request.options);
                request.answer(r);
            }
            Ok(NewFace::Connecting(id, mut conn)) => {
                if let Err(e) = conn.register(self.poll.registry(), Token(id.0 as usize)) {
                    return request.answer(Err(FaceCommandError::ConnectFailed(e.to_string())));
                }
                let deadline = Instant::now() + kite_face::tcp::CONNECT_TIMEOUT;
                let c = Connect {
                    conn,
                    remote,
                    deadline,
                    request,
                };
                self.connecting.insert(id, c);
            }
            Err(e) => request.answer(Err(e)),
        }
    }

    /// Makes a TCP face at once, without its connection, and dials its peer in the background
    /// (now, then as [`IoThread::redial_failed`] schedules).
    fn create_unconnected(&mut self, addr: std::net::SocketAddr, request: CreateRequest) {
        let remote = FaceUri::Tcp(addr);
        if let Some(existing) = self.faces.values().find(|f| *f.remote_uri() == remote) {
            return request.answer(Err(FaceCommandError::Exists(existing.id())));
        }
        let id = self.ids.next_id();
        let face = kite_face::tcp::unconnected_face(id, addr, request.persistency, &self.config);
        let r = self.finish_create(face, request.options);
        if r.is_ok() {
            self.schedule_redial(id, Instant::now());
        }
        request.answer(r);
    }

    /// Configures a face `faces/create` made and adds it.
    fn finish_create(
        &mut self,
        mut face: Face,
        options: FaceOptions,
    ) -> Result<FaceStatus, FaceCommandError> {
        if let Err(e) = configure(&mut face, None, options) {
            self.forget_in_channel(&face);
            return Err(e);
        }
        Ok(self.add_face(face))
    }

    /// After an event on an outgoing connection: once it completed, its face is made and
    /// `faces/create` answered; once it failed, the failure is the answer (NFD's 504).
    fn connect_progress(&mut self, id: FaceId) {
        let Some(c) = self.connecting.get_mut(&id) else {
            return;
        };
        let done = match c.conn.progress() {
            Ok(false) => return,
            Ok(true) => Ok(()),
            Err(e) => Err(e),
        };
        let Some(mut c) = self.connecting.remove(&id) else {
            return;
        };
        let _ = c.conn.deregister(self.poll.registry());
        let r = match done {
            Ok(()) => {
                let (persistency, options) = (c.request.persistency, c.request.options);
                match c.conn.into_face(id, persistency, &self.config) {
                    Ok(face) => self.finish_create(face, options),
                    Err(e) => Err(FaceCommandError::ConnectFailed(e.to_string())),
                }
            }
            Err(e) => {
                tracing::info!(remote = %c.remote, error = %e, "connect failed");
                Err(FaceCommandError::ConnectFailed(e.to_string()))
            }
        };
        c.request.answer(r);
    }

    /// Gives up the outgoing connections whose time ran out, answering their `faces/create`.
    fn expire_connects(&mut self, now: Instant) {
        let late: Vec<FaceId> = self
            .connecting
            .iter()
            .filter(|(_, c)| c.deadline <= now)
            .map(|(&id, _)| id)
            .collect();
        for id in late {
            let Some(mut c) = self.connecting.remove(&id) else {
                continue;
            };
            let _ = c.conn.deregister(self.poll.registry());
            let t = kite_face::tcp::CONNECT_TIMEOUT;
            tracing::info!(remote = %c.remote, "connect timed out after {t:?}");
            let why = format!("no answer from {} within {t:?}", c.remote);
            c.request.answer(Err(FaceCommandError::ConnectFailed(why)));
        }
    }

    /// The face `faces/create` asks for, or the connection started for it.
    fn new_face(
        &mut self,
        remote: &FaceUri,
        local: Option<FaceUri>,
        persistency: Persistency,
    ) -> Result<NewFace, FaceCommandError> {
        let exists = |e| match e {
            kite_face::FaceError::Exists(id) => FaceCommandError::Exists(id),
            e => FaceCommandError::ConnectFailed(e.to_string()),
        };
        if !matches!(remote, FaceUri::Ether(_)) {
            if let Some(existing) = self.faces.values().find(|f| f.remote_uri() == remote) {
                return Err(FaceCommandError::Exists(existing.id()));
            }
        }
        let face = match (remote, &local) {
            (FaceUri::Udp(addr), None) => {
                let channel = self
                    .udp
                    .iter_mut()
                    .find(|u| u.local_addr().is_ipv4() == addr.is_ipv4())
                    .ok_or_else(|| {
                        FaceCommandError::Unsupported(
                            "no UDP channel for this address family".into(),
                        )
                    })?;
                channel
                    .connect(self.ids.next_id(), *addr, persistency)
                    .map_err(exists)?
            }
            (FaceUri::Tcp(addr), None) => {
                if self.connecting.values().any(|c| c.remote == *remote) {
                    return Err(FaceCommandError::ConnectFailed(format!(
                        "a connection to {remote} is already on its way"
                    )));
                }
                if self.connecting.len() >= MAX_CONNECTING {
                    return Err(FaceCommandError::ConnectFailed(format!(
                        "{MAX_CONNECTING} connections are already on their way"
                    )));
                }
                let conn = kite_face::tcp::Connecting::start(*addr)
                    .map_err(|e| FaceCommandError::ConnectFailed(e.to_string()))?;
                return Ok(NewFace::Connecting(self.ids.next_id(), conn));
            }
            (FaceUri::Ether(mac), Some(FaceUri::Dev(iface))) if !mac.is_multicast() => {
                let channel = self
                    .ether
                    .iter_mut()
                    .find(|c| c.name() == iface)
                    .ok_or_else(|| {
                        FaceCommandError::ConnectFailed(format!(
                            "no Ethernet channel on {iface} (kite run --ether {iface} opens one)"
                        ))
                    })?;
                channel
                    .connect(self.ids.next_id(), *mac, persistency)
                    .map_err(exists)?
            }
            // Management refuses what NFD refuses before asking (`faces/create`'s policy);
            // anything else is beyond what the channels can make.
            (other, local) => {
                return Err(FaceCommandError::Unsupported(match local {
                    Some(l) => format!("cannot create a face to {other} from {l}"),
                    None => format!("cannot create a face to {other}"),
                }))
            }
        };
        Ok(NewFace::Ready(Box::new(face)))
    }
}

/// Applies optional face properties (NFD `faces/create` and `faces/update`).
fn configure(
    face: &mut Face,
    persistency: Option<Persistency>,
    options: FaceOptions,
) -> Result<(), FaceCommandError> {
    if let Some(on) = options.local_fields {
        face.set_local_fields(on)
            .map_err(|e| FaceCommandError::Unsupported(e.to_string()))?;
    }
    if let Some(on) = options.lp_reliability {
        face.set_lp_reliability(on)
            .map_err(|e| FaceCommandError::Unsupported(e.to_string()))?;
    }
    if let Some(p) = persistency {
        face.set_persistency(p);
    }
    if let Some(m) = options.mtu {
        face.set_mtu(m);
    }

    let old = face.congestion_marking();
    let marking = MarkingConfig {
        enabled: options.congestion_marking.unwrap_or(old.enabled),
        base_interval: options.base_marking_interval.unwrap_or(old.base_interval),
        threshold: options.congestion_threshold.unwrap_or(old.threshold),
    };
    if marking != old {
        face.set_congestion_marking(marking);
    }
    Ok(())
}

/// Counts the partial packets a channel's reassembler dropped on the faces they were for.
fn count_reassembly_drops(
    r: &mut kite_link::reassembly::Reassembler,
    faces: &mut HashMap<FaceId, Face>,
) {
    for (id, n) in r.take_drops() {
        if let Some(face) = faces.get_mut(&id) {
            face.count_reassembly_drops(n);
        }
    }
}
