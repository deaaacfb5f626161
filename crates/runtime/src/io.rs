//! The I/O thread: owns every face's socket and the listeners, reads in bursts and dispatches
//! (the input stage), and writes what the forwarding threads send (the output stage), one
//! `writev`/`sendmmsg` per face per burst. Sleeps in `epoll_wait` when it has nothing to do.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};
use hashbrown::HashMap;
use kite_face::{
    Channel, Datagram, EtherChannel, Face, FaceConfig, FaceError, FaceIds, FaceUri, Flushed,
    LinkMonitor, MarkingConfig, PacketKind, Persistency, Progress, Received, UdpChannel,
};
use kite_packet::{tt, NackReason};
use mio::{Events, Poll, Token};
use rtrb::Consumer;

use super::dispatch::Dispatcher;
use super::park::{SleepFlag, Waker, SPIN_TIME};
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

pub(crate) struct IoThread {
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
    channels: Vec<Channel>,
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
    /// Datagram channels (by poll token) with more to read than one burst took: read again
    /// next turn, like `unread`.
    unread_channels: Vec<Token>,
    /// The channels `unread_channels` held at the start of this turn's reads.
    rereading_channels: Vec<Token>,
    last_housekeeping: Instant,
    spin_when_idle: bool,
    /// Shared-memory faces, polled every turn while the thread is awake.
    shm: ShmFaces,
    /// The shared-memory faces one turn reads (kept across turns, so it does not reallocate).
    shm_ready: Vec<FaceId>,
}

impl IoThread {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        config: &RuntimeConfig,
        poll: Poll,
        sleep: Arc<SleepFlag>,
        commands: Receiver<IoCommand>,
        dispatcher: Dispatcher,
        from_fwd: Vec<Consumer<Out>>,
        fwd: Vec<(Sender<FwCommand>, Waker)>,
        shards: Vec<Worker>,
        face_events: Sender<FaceEvent>,
    ) -> Result<Self, super::StartError> {
        let mut channels = Vec::new();
        if let Some(path) = &config.unix_socket {
            channels.push(Channel::unix(path, config.face)?);
        }
        for &addr in &config.tcp {
            channels.push(Channel::tcp(addr, config.face)?);
        }
        for &addr in &config.ws {
            channels.push(Channel::ws(addr, config.face)?);
        }
        let mut udp = Vec::new();
        for &addr in &config.udp {
            udp.push(
                UdpChannel::bind(addr, config.face)
                    .map_err(|source| kite_face::ListenError::Bind { addr, source })?,
            );
        }
        // Opened before the channels, so no change slips in between.
        let links = match config.ether.is_empty() {
            true => None,
            false => Some(LinkMonitor::open()?),
        };
        let mut ether = Vec::new();
        for iface in &config.ether {
            ether.push(EtherChannel::open(iface, config.face)?);
        }
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
        let mut thread = IoThread {
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
            ids: FaceIds::new(),
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
            header: Vec::with_capacity(64),
            dirty: Vec::new(),
            ready: Vec::with_capacity(256),
            unread: Vec::new(),
            rereading: Vec::new(),
            unread_channels: Vec::new(),
            restrained_room: Vec::new(),
            rereading_channels: Vec::new(),
            last_housekeeping: Instant::now(),
            spin_when_idle: config.spin_when_idle,
            shm: ShmFaces::default(),
            shm_ready: Vec::new(),
        };
        for i in 0..thread.ether.len() {
            let id = thread.ids.next_id();
            if let Ok(face) = thread.ether[i].multicast_face(id) {
                thread.add_face(face);
            }
        }
        Ok(thread)
    }

    pub fn run(mut self) {
        let mut spin_until = Instant::now();
        loop {
            let (forwarded, held) = self.forward_inline();
            let worked = self.drain_output() || forwarded || held;
            let t = Instant::now();
            if worked {
                spin_until = t + SPIN_TIME;
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
            let mut shm_ready = core::mem::take(&mut self.shm_ready);
            self.shm.ready(&self.faces, &mut shm_ready);
            for &id in &shm_ready {
                self.read_face(id, now, false);
            }
            shm_ready.clear();
            self.shm_ready = shm_ready;
            if !self.handle_commands() {
                return;
            }
            if !self.connecting.is_empty() {
                self.expire_connects(now);
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
            loop {
                match self.channels[i].accept(&mut self.ids) {
                    Ok(Some(face)) => {
                        self.add_face(face);
                    }
                    Ok(None) => break,
                    Err(e) => {
                        tracing::warn!(error = %e, "accept failed");
                        break;
                    }
                }
            }
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
        self.dispatch();
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
    /// face (fragments to the channel's reassembler, whose drops count on their faces).
    fn deliver_datagrams(&mut self, channel: DatagramChannel, now: Instant) {
        while let Some(id) = self.evicted.pop() {
            self.close_face(id);
        }
        for face in core::mem::take(&mut self.created) {
            self.add_face(face);
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
            if d.frame.first() == Some(&(tt::INTEREST as u8))
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
            face.receive_frame(d.from, d.frame, now, reassembler, &mut self.received);
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
    /// until the rings drain. A face with more to read is read again next turn.
    fn read_face(&mut self, id: FaceId, now: Instant, hangup: bool) {
        let Some(face) = self.faces.get(&id) else {
            return;
        };
        let budget = match face.pushes_back() {
            true => STREAM_QUANTUM.min(self.dispatcher.room(id, face.scope() == FaceScope::Local)),
            false => usize::MAX,
        };
        let result = match budget {
            0 => Ok(Progress::More),
            _ => {
                let face = self.faces.get_mut(&id).expect("looked up above");
                let r = face.recv_burst(now, hangup, budget, &mut self.received);
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
        match result {
            Ok(Progress::More) => {
                if !self.unread.contains(&(id, hangup)) {
                    self.unread.push((id, hangup));
                }
                return;
            }
            Ok(Progress::Drained) => return,
            Err(FaceError::Closed) => {}
            Err(e) => tracing::info!(face = id.0, error = %e, "receive failed"),
        }
        if self
            .faces
            .get(&id)
            .is_some_and(|f| f.persistency() != Persistency::Permanent)
        {
            self.close_face(id);
        }
    }

    fn flush_face(&mut self, id: FaceId) {
        let Some(face) = self.faces.get_mut(&id) else {
            return;
        };
        match face.flush() {
            Ok(Flushed::Done) | Ok(Flushed::Blocked) => {}
            Err(_) if face.persistency() == Persistency::Permanent => {}
            Err(_) => {
                self.close_face(id);
            }
        }
    }

    /// Runs the inline forwarding shards until none has anything left to do, writing their
    /// output after each pass (so no output ring fills while they work). Returns whether
    /// any shard worked, and whether one still holds management answers for want of room. A
    /// shard told to stop is dropped; the thread itself stops at its own shutdown command.
    fn forward_inline(&mut self) -> (bool, bool) {
        let mut worked = false;
        loop {
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
    }

    /// Encodes and queues what the forwarding threads sent; flushes each face written to.
    fn drain_output(&mut self) -> bool {
        let mut any = false;
        let mut now = None;
        for ring in &mut self.from_fwd {
            let n = ring.slots();
            if n == 0 {
                continue;
            }
            any = true;
            let now = *now.get_or_insert_with(Instant::now);
            for _ in 0..n {
                let Ok(o) = ring.pop() else { break };
                let id = o.face();
                let Some(face) = self.faces.get_mut(&id) else {
                    continue;
                };
                let kind = match &o {
                    Out::Interest { .. } => PacketKind::Interest,
                    Out::Data { .. } => PacketKind::Data,
                    Out::Nack { reason, .. } => {
                        if *reason == NackReason::CONGESTION {
                            self.dispatcher.restrain(id);
                        }
                        PacketKind::Nack
                    }
                };
                let mark = face.congestion_mark(now);
                let packet = o.encode_frame(&mut self.header, face.local_fields(), mark);
                if face.pending_output() == 0 {
                    self.dirty.push(id);
                }
                face.send_parts(kind, &self.header, packet);
            }
        }
        let mut dirty = core::mem::take(&mut self.dirty);
        for &id in &dirty {
            self.flush_face(id);
        }
        dirty.clear();
        self.dirty = dirty;
        any
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
            up: face.is_up(),
            counters: *face.counters(),
        }
    }

    /// Hands the packets read this round to the forwarding threads and counts those that
    /// found their ring full against the faces they came from.
    fn dispatch(&mut self) {
        let faces = &self.faces;
        self.dispatcher.dispatch_burst(&mut self.received, |id| {
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

    fn add_face(&mut self, face: Face) -> FaceStatus {
        let id = face.id();
        if let Err(e) = face.register(self.poll.registry(), Token(id.0 as usize)) {
            tracing::warn!(face = id.0, error = %e, "cannot watch face");
        }
        let info = FaceInfo {
            scope: face.scope(),
            link_type: face.link_type(),
        };
        for (tx, w) in &self.fwd {
            let _ = tx.send(FwCommand::AddFace(id, info));
            w.wake();
        }
        let status = Self::status(&face);
        tracing::info!(face = id.0, remote = %status.remote, local = %status.local, "face created");
        let _ = self.face_events.send(FaceEvent::Created(status.clone()));
        self.faces.insert(id, face);
        status
    }

    fn close_face(&mut self, id: FaceId) -> Option<FaceStatus> {
        let face = self.faces.remove(&id)?;
        let _ = face.deregister(self.poll.registry());
        self.forget_in_channel(&face);
        for (tx, w) in &self.fwd {
            let _ = tx.send(FwCommand::RemoveFace(id));
            w.wake();
        }
        let status = Self::status(&face);
        tracing::info!(face = id.0, remote = %status.remote, "face destroyed");
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
        self.dispatcher.forget_restraints();
        let channels = self.udp.iter_mut().map(UdpChannel::reassembler);
        for r in channels.chain(self.ether.iter_mut().map(EtherChannel::reassembler)) {
            r.expire(now);
            count_reassembly_drops(r, &mut self.faces);
        }
        let mut idle = Vec::new();
        for (id, face) in &mut self.faces {
            face.expire(now);
            if face.idle_expired(now) {
                idle.push(*id);
            }
        }
        for id in idle {
            self.close_face(id);
        }
    }

    /// Applies management's commands; `false` when told to stop.
    fn handle_commands(&mut self) -> bool {
        while let Ok(cmd) = self.commands.try_recv() {
            match cmd {
                IoCommand::Create {
                    remote,
                    local,
                    persistency,
                    options,
                    tag,
                    reply,
                } => {
                    let request = CreateRequest {
                        persistency,
                        options,
                        tag,
                        reply,
                    };
                    self.create(remote, local, request);
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
                    let _ = reply.send(r);
                }
                IoCommand::Destroy { id, reply } => {
                    let _ = reply.send(self.close_face(id));
                }
                IoCommand::List { reply } => {
                    let mut all: Vec<FaceStatus> = self.faces.values().map(Self::status).collect();
                    all.sort_by_key(|s| s.id);
                    let _ = reply.send(all);
                }
                IoCommand::Channels { reply } => {
                    let mut all: Vec<_> = self.channels.iter().map(Channel::status).collect();
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
        let unsupported = |why: &str| Err(FaceCommandError::Unsupported(why.into()));
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
            (FaceUri::Udp(_), Some(_)) => {
                return unsupported("Unicast UDP faces cannot be created with a LocalUri")
            }
            (FaceUri::Udp(_), None) if persistency == Persistency::OnDemand => {
                return unsupported("Outgoing UDP faces do not support on-demand persistency")
            }
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
            (FaceUri::Tcp(_), Some(_)) => {
                return unsupported("Unicast TCP faces cannot be created with a LocalUri")
            }
            (FaceUri::Tcp(_), None) if persistency == Persistency::OnDemand => {
                return unsupported("Outgoing TCP faces do not support on-demand persistency")
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
            (FaceUri::Ether(mac), Some(FaceUri::Dev(iface))) => {
                if persistency == Persistency::OnDemand {
                    return unsupported(
                        "Outgoing Ethernet faces do not support on-demand persistency",
                    );
                }
                if mac.is_multicast() {
                    return unsupported("Cannot create multicast Ethernet faces");
                }
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
            (FaceUri::Ether(_), _) => {
                return unsupported(
                    "Creation of unicast Ethernet faces requires a LocalUri with dev:// scheme",
                )
            }
            (other, _) => {
                return Err(FaceCommandError::Unsupported(format!(
                    "unsupported protocol {}",
                    other.scheme()
                )))
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
    r: &mut kite_face::reassembly::Reassembler,
    faces: &mut HashMap<FaceId, Face>,
) {
    for (id, n) in r.take_drops() {
        if let Some(face) = faces.get_mut(&id) {
            face.count_reassembly_drops(n);
        }
    }
}
