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
//!
//! A turn of its loop reads: poll (skipped, while busy, when an AF_XDP ring already held
//! frames: [`IoThread::next_timeout`]), read (the ready sockets, then what the last turn left
//! unread, the parked faces whose restraint ended, the shared-memory faces), management's
//! commands, dispatch and flush (the inline shards, the forwarding threads' output, each face
//! written to once), then the timers; the earliest deadline its parts report bounds the
//! next poll. The parts take the time from the loop, which reads the clock after each poll
//! and before the timers (the output stage reads it too, once per drain that finds output,
//! for Nack policing and congestion marks):
//!
//! - [`table`]: the faces and the lists a turn keeps about them (to flush, to read again,
//!   parked, reliable);
//! - [`connector`]: when TCP faces dial again and outgoing connections are given up, without
//!   sockets; [`dial`] carries out what it answers;
//! - [`migration`]: faces handed between I/O threads, each counted by exactly one;
//! - [`commands`]: management's commands;
//! - [`deadlines`]: the poll timeout, from every part's next deadline (transports with
//!   timers of their own, WebTransport's QUIC, among them);
//! - [`listeners`], [`input`], [`output`], [`housekeeping`]: the channels, the input and
//!   output stages, and the once-a-second tick.

mod commands;
mod connector;
mod deadlines;
mod dial;
mod housekeeping;
mod input;
mod listeners;
mod migration;
mod output;
mod table;
#[cfg(test)]
mod testing;

use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};
use kite_face::ether::lanes::EtherLane;
use kite_face::{
    Datagram, EtherChannel, Face, FaceConfig, LinkMonitor, Listener, Received, UdpChannel,
};
use kite_fw::face::FaceId;
use kite_fw::out::Out;
use kite_fw::strategy::FaceInfo;
use kite_link::FaceIds;
use mio::{Events, Poll, Token};
use rtrb::Consumer;

use crate::dispatch::Dispatcher;
use crate::iolog::{CloseReason, IoLog};
use crate::park::{SleepFlag, Waker, SPIN_TIME};
use crate::shm::ShmFaces;
use crate::worker::Worker;
use crate::{FaceEvent, FaceStatus, FwCommand, IoCommand, RuntimeConfig};
use commands::{status, Connect};
use connector::{Connects, Due, Redials};
use deadlines::Deadlines;
use listeners::DatagramChannel;
use migration::Moved;
use table::FaceTable;

pub(crate) use listeners::{open_listeners, placement, steer, Owned};
pub(crate) use migration::{least_loaded, Place};

/// The token of the waker forwarding threads and management use.
pub(crate) const WAKE_TOKEN: Token = Token(0);
/// The token of the link monitor Ethernet channels follow their interfaces with.
const LINK_TOKEN: Token = Token(1);
/// The token of every lane's sockets: its event only ends a poll, and each turn reads the
/// lanes whose rings hold frames ([`IoThread::read_lanes`]).
const LANE_TOKEN: Token = Token(2);
/// Tokens of stream listeners start here; UDP channels, then Ethernet channels (their
/// AF_PACKET sockets), then the Ethernet channels' AF_XDP sockets follow. Face tokens are
/// their ids (at least 256), so the two ranges never meet.
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
/// Turns in a row a busy I/O thread may start without its poll because an AF_XDP socket's
/// RX ring already held frames (seen without a system call): the other sockets' events wait
/// at most that many turns for their poll.
const MAX_UNPOLLED_TURNS: u32 = 8;
/// How often faces are checked for idleness and reassembly timeouts.
const HOUSEKEEPING: Duration = Duration::from_secs(1);

/// Outgoing TCP connections on their way at once: each holds a socket for up to
/// `kite_face::tcp::CONNECT_TIMEOUT`, and any local application may ask for one unsigned.
const MAX_CONNECTING: usize = 64;

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
    channels: Vec<Box<dyn Listener>>,
    udp: Vec<UdpChannel>,
    ether: Vec<EtherChannel>,
    /// Lanes of other threads' steered Ethernet channels, each with its home's waker: this
    /// thread reads them for its shards.
    lanes: Vec<(EtherLane, Waker)>,
    links: Option<LinkMonitor>,
    /// The faces, and the lists a turn keeps about them.
    table: FaceTable,
    received: Vec<Received>,
    datagrams: Vec<Datagram>,
    /// UDP datagrams an Ethernet channel's AF_XDP path read, each with the index of its UDP
    /// channel in `udp`.
    xdp_udp: Vec<(usize, Datagram)>,
    /// Where `xdp_udp`'s datagrams for other channels wait while one channel's are given
    /// out (kept, so it does not reallocate).
    xdp_udp_rest: Vec<(usize, Datagram)>,
    created: Vec<Face>,
    /// On-demand faces a datagram channel gave up to make room for new senders.
    evicted: Vec<FaceId>,
    /// Outgoing connections `faces/create` started, by the id their face will get.
    connects: Connects<Connect>,
    /// TCP faces without their connection, dialing their peer again.
    redials: Redials,
    /// The redials due in one turn (kept, so it does not reallocate).
    due: Vec<Due>,
    header: Vec<u8>,
    /// (token, readable, peer closed, writable) of the events of one poll.
    ready: Vec<(Token, bool, bool, bool)>,
    /// Restrained faces met in one datagram burst and the bare Interests each may still hand
    /// over in it (kept across bursts, so it does not reallocate).
    restrained_room: Vec<(FaceId, usize)>,
    /// Datagram channels (by poll token) with more to read than one burst took: read again
    /// next turn, like the faces the table lists to read again.
    unread_channels: Vec<Token>,
    /// The channels `unread_channels` held at the start of this turn's reads.
    rereading_channels: Vec<Token>,
    /// Stream listeners whose last accept failed, tried again at each housekeeping.
    accept_retry: Vec<usize>,
    last_housekeeping: Instant,
    spin_when_idle: bool,
    /// Turns begun without a poll since the last poll (see [`MAX_UNPOLLED_TURNS`]).
    unpolled_turns: u32,
    log: IoLog,
    /// Time spent in turns that did work (handled an event, forwarded or wrote).
    busy: Arc<crate::BusyTime>,
    /// Shared-memory faces, polled every turn while the thread is awake.
    shm: ShmFaces,
    /// Faces this thread handed to another lately.
    moved: Moved,
    /// The moves [`Affinity`](crate::affinity::Affinity) decided in this turn's reads, made
    /// after them.
    moving: Vec<(FaceId, usize)>,
    /// The shared-memory faces one turn reads (kept across turns, so it does not reallocate).
    shm_ready: Vec<FaceId>,
    /// The faces whose transport timers ended their connection in one turn (kept, so it does
    /// not reallocate).
    timer_failed: Vec<FaceId>,
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
        busy: Arc<crate::BusyTime>,
    ) -> Result<Self, crate::StartError> {
        let Owned {
            mut channels,
            udp,
            ether,
            links,
            udp_multicast,
            lanes,
        } = owned;
        if CHANNEL_TOKEN + channels.len() + udp.len() + 2 * ether.len()
            > FaceId::FIRST_DYNAMIC.0 as usize
        {
            return Err(crate::StartError::Config("too many listeners".into()));
        }
        for (i, c) in channels.iter_mut().enumerate() {
            c.register(poll.registry(), Token(CHANNEL_TOKEN + i))?;
        }
        for (i, u) in udp.iter().enumerate() {
            u.register(poll.registry(), Token(CHANNEL_TOKEN + channels.len() + i))?;
        }
        for (i, e) in ether.iter().enumerate() {
            let token = CHANNEL_TOKEN + channels.len() + udp.len() + i;
            e.register(poll.registry(), Token(token), Token(token + ether.len()))?;
        }
        if let Some(l) = &links {
            l.register(poll.registry(), LINK_TOKEN)?;
        }
        for (lane, _) in &lanes {
            lane.register(poll.registry(), LANE_TOKEN)?;
            tracing::info!(
                interface = lane.iface(),
                thread = place.index,
                "reading the NDN frames of this I/O thread's shards from the interface"
            );
        }
        let ids = place.ids.clone();
        let now = Instant::now();
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
            lanes,
            links,
            table: FaceTable::default(),
            received: Vec::with_capacity(256),
            datagrams: Vec::with_capacity(64),
            xdp_udp: Vec::new(),
            xdp_udp_rest: Vec::new(),
            created: Vec::new(),
            evicted: Vec::new(),
            connects: Connects::new(MAX_CONNECTING, kite_face::tcp::CONNECT_TIMEOUT),
            redials: Redials::new(
                config.face.redial_initial,
                config.face.redial_max,
                kite_face::tcp::CONNECT_TIMEOUT,
            ),
            due: Vec::new(),
            header: Vec::with_capacity(64),
            ready: Vec::with_capacity(256),
            unread_channels: Vec::new(),
            accept_retry: Vec::new(),
            restrained_room: Vec::new(),
            rereading_channels: Vec::new(),
            last_housekeeping: now,
            spin_when_idle: config.spin_when_idle,
            unpolled_turns: 0,
            log: IoLog::new(),
            busy,
            shm: ShmFaces::default(),
            shm_ready: Vec::new(),
            timer_failed: Vec::new(),
            moved: Moved::default(),
            moving: Vec::new(),
        };
        for i in 0..thread.ether.len() {
            let id = thread.ids.next_id();
            if let Ok(face) = thread.ether[i].multicast_face(id) {
                thread.add_face(face, now);
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
            thread.add_face(face, now);
        }
        Ok(thread)
    }

    /// Says what each AF_XDP interface's program did with its frames (the thread is
    /// stopping, and the program goes with it).
    fn log_xdp_counts(&self) {
        for ch in &self.ether {
            if let Some(c) = ch.xdp_counts() {
                tracing::info!(
                    interface = ch.name(),
                    ndn = c.ndn,
                    udp = c.udp,
                    passed = c.passed,
                    runt = c.runt,
                    "XDP program's verdicts"
                );
            }
        }
    }

    pub fn run(mut self) {
        // The first poll returns at once: the first turn looks at what starting left.
        let mut timeout = Some(Duration::ZERO);
        let mut spin_until = Instant::now();
        loop {
            match timeout {
                Some(t) => self.poll(t),
                None => self.events.clear(),
            }
            let now = Instant::now();
            let had_events = !self.events.is_empty();
            self.read(now);
            if !self.handle_commands(now) {
                (self.log).flush(self.table.map(), &self.udp, &self.ether);
                self.log_xdp_counts();
                return;
            }
            let (forwarded, held) = self.forward_inline();
            let worked = self.drain_output() || forwarded || held;
            let t = Instant::now();
            self.timers(t);
            if worked {
                spin_until = t + SPIN_TIME;
            }
            if worked || had_events {
                self.busy.add(t.saturating_duration_since(now));
            }
            timeout = self.next_timeout(t, spin_until, worked);
        }
    }

    /// Waits for events, at most `timeout`.
    fn poll(&mut self, timeout: Duration) {
        let polled = self.poll.poll(&mut self.events, Some(timeout));
        self.sleep.clear();
        if let Err(e) = polled {
            // Without its poll the thread can serve no socket: fail loudly (`kite run` ends
            // the process on a panic, for its supervisor to restart) rather than leave the
            // process up without its I/O.
            assert!(
                e.kind() == std::io::ErrorKind::Interrupted,
                "epoll_wait failed: {e}"
            );
        }
    }

    /// The read stage: the events of the last poll, then the faces and channels the last turn
    /// left unread, the parked faces whose restraint ended and the shared-memory faces; then
    /// the moves the reads decided.
    fn read(&mut self, now: Instant) {
        // The events are copied out (into a buffer kept across polls) because handling one
        // needs the whole thread mutably.
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
        let rereading = self.table.take_unread();
        for &(id, hangup) in &rereading {
            self.read_face(id, now, hangup);
        }
        self.table.reread(rereading);
        self.queue_lane_work();
        core::mem::swap(&mut self.unread_channels, &mut self.rereading_channels);
        for i in 0..self.rereading_channels.len() {
            let token = self.rereading_channels[i];
            self.read_channel(token, now);
        }
        self.rereading_channels.clear();
        if self.lanes_have_frames() {
            self.read_lanes(now);
        }
        if self.table.has_parked() {
            self.unpark(now);
        }
        let mut shm_ready = core::mem::take(&mut self.shm_ready);
        self.shm.ready(self.table.map(), &mut shm_ready);
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
    }

    /// The timers stage: connects given up, redials due, LpReliability's retransmissions and
    /// Acks, and the housekeeping tick.
    fn timers(&mut self, now: Instant) {
        if !self.connects.is_empty() {
            self.expire_connects(now);
        }
        self.run_redials(now);
        self.table.step_reliability(now);
        self.run_transport_timers(now);
        self.flush_dirty(now);
        if now.duration_since(self.last_housekeeping) >= HOUSEKEEPING {
            self.last_housekeeping = now;
            self.housekeeping(now);
        }
    }

    /// Runs the transport timers due at `now` (WebTransport's QUIC: retransmissions,
    /// acknowledgements, the idle timeout); a face whose connection they end is closed.
    fn run_transport_timers(&mut self, now: Instant) {
        let mut failed = core::mem::take(&mut self.timer_failed);
        self.table.run_transport_timers(now, &mut failed);
        for &id in &failed {
            self.transport_failed(id, CloseReason::Idle, now);
        }
        failed.clear();
        self.timer_failed = failed;
    }

    /// How long the next poll may wait, at `now`: not at all while busy (the thread spins for
    /// [`SPIN_TIME`] after work, and while reads are left over), otherwise until the earliest
    /// deadline its parts report (the housekeeping tick's a second after it last ran),
    /// unless work slipped in after the thread announced its sleep. `None`: no poll at all,
    /// because while busy an AF_XDP ring was seen to hold frames (at most
    /// [`MAX_UNPOLLED_TURNS`] turns in a row): the next turn reads its channel without the
    /// poll's system call.
    fn next_timeout(
        &mut self,
        now: Instant,
        spin_until: Instant,
        worked: bool,
    ) -> Option<Duration> {
        let unread = self.table.has_unread() || !self.unread_channels.is_empty();
        let busy = self.spin_when_idle || now < spin_until || unread;
        if busy {
            if self.unpolled_turns < MAX_UNPOLLED_TURNS && self.xdp_frames_waiting() {
                self.unpolled_turns += 1;
                return None;
            }
            self.unpolled_turns = 0;
            if !worked && !self.spin_when_idle && !unread {
                // An empty spin: let a thread waiting for this core (an application, the
                // forwarder's other threads) run first; on an idle core this returns at once.
                std::thread::yield_now();
            }
            return Some(Duration::ZERO);
        }
        self.unpolled_turns = 0;
        let mut deadlines = Deadlines::new(now, HOUSEKEEPING);
        deadlines.at(Some(self.last_housekeeping + HOUSEKEEPING));
        for w in &self.shards {
            deadlines.within(w.timer_due_in());
        }
        deadlines.at(self.connects.next_deadline());
        deadlines.at(self.redials.next_deadline());
        let dispatcher = &self.dispatcher;
        deadlines.within(self.table.next_unpark(|id| dispatcher.restraint_left(id)));
        deadlines.at(self.table.reliability_due());
        deadlines.at(self.table.transport_due());
        self.sleep.announce();
        if self.from_fwd.iter().any(|c| !c.is_empty())
            || !self.commands.is_empty()
            || self.shards.iter().any(Worker::has_work)
            || self.shm.announce_sleep(self.table.map())
            || self.lanes_have_frames()
            || self.ether.iter().any(EtherChannel::has_lane_work)
        {
            return Some(Duration::ZERO);
        }
        Some(deadlines.timeout())
    }

    /// Lists every Ethernet channel whose AF_XDP RX ring holds frames to be read next turn;
    /// whether there was one.
    fn xdp_frames_waiting(&mut self) -> bool {
        let mut any = false;
        for e in 0..self.ether.len() {
            if self.ether[e].xdp_has_frames() {
                let token = self.channel_token(DatagramChannel::Ether(e));
                if !self.unread_channels.contains(&token) {
                    self.unread_channels.push(token);
                }
                any = true;
            }
        }
        any | self.lanes_have_frames()
    }

    /// Lists every Ethernet channel whose lanes left it work ([`EtherChannel::has_lane_work`])
    /// to be read this turn.
    fn queue_lane_work(&mut self) {
        for e in 0..self.ether.len() {
            if self.ether[e].has_lane_work() {
                let token = self.channel_token(DatagramChannel::Ether(e));
                if !self.unread_channels.contains(&token) {
                    self.unread_channels.push(token);
                }
            }
        }
    }

    /// Whether a lane's RX ring holds frames (a load per socket, no system call).
    fn lanes_have_frames(&mut self) -> bool {
        self.lanes.iter_mut().any(|(l, _)| l.has_frames())
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
        if token == LANE_TOKEN {
            return;
        }
        if token == LINK_TOKEN {
            self.follow_links();
            return;
        }
        if t >= FaceId::FIRST_DYNAMIC.0 as usize {
            let id = FaceId(t as u64);
            if self.connects.contains(id) {
                self.connect_progress(id, now);
                return;
            }
            if !self.redials.is_empty()
                && self.redials.contains(id)
                && !self.redial_progress(id, now)
            {
                return;
            }
            if writable {
                self.flush_face(id, now);
            }
            if readable {
                self.read_face(id, now, hangup);
            }
            return;
        }
        let i = t - CHANNEL_TOKEN;
        if i < self.channels.len() {
            self.accept_all(i, now);
            return;
        }
        let Some(channel) = self.datagram_channel(token) else {
            return;
        };
        if readable {
            if let DatagramChannel::Ether(e) = channel {
                if token == self.channel_token(channel) {
                    self.ether[e].packet_readable();
                }
            }
            self.read_channel(token, now);
        }
        if writable {
            for id in self.waiting_on(&self.datagram_local_uri(channel)) {
                self.flush_face(id, now);
            }
        }
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
        self.table.insert(face);
    }

    /// Adds a new face (made here, or accepted for this thread), announced at `now`.
    fn add_face(&mut self, face: Face, now: Instant) -> FaceStatus {
        self.place.count_in();
        let status = status(&face);
        self.log.created(&status, now);
        let _ = self.face_events.send(FaceEvent::Created(status.clone()));
        self.own(face);
        status
    }

    /// Closes face `id` for `why` at `now`; its status, or `None` when it is not here.
    fn close_face(&mut self, id: FaceId, why: CloseReason, now: Instant) -> Option<FaceStatus> {
        let face = self.table.remove(id)?;
        self.dispatcher.affinity.forget(id);
        self.place.count_out();
        self.redials.forget(id);
        let _ = face.deregister(self.poll.registry());
        self.forget_in_channel(&face);
        for (tx, w) in &self.fwd {
            let _ = tx.send(FwCommand::RemoveFace(id));
            w.wake();
        }
        let status = status(&face);
        self.log.closed(&status, &why, now);
        let _ = self.face_events.send(FaceEvent::Destroyed(status.clone()));
        Some(status)
    }
}

#[cfg(test)]
mod tests;
