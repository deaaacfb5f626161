//! A transport in memory, for the tests of what drives faces (the I/O thread of
//! `kite-runtime`): a [`Face`] whose [`Transport`] is a script instead of a socket. The test
//! holds the other end, a [`MemoryPeer`]: it queues the frames the face's receive bursts
//! return, ends a burst where the socket would run empty, fails a read or a write as a reset
//! or closed connection would, pushes back on sends as a full socket does, takes what the
//! face sent, and sets the link up or down. A face made to dial again (as a TCP face does)
//! dials through its peer too, and the peer says how each dial ends ([`DialOutcome`]).
//!
//! Built only with the `testing` feature, which crates enable as a dev-dependency feature, so
//! no production build contains it.
//!
//! Descriptors: a memory transport has none (its sources are empty, as a UDP face's that
//! shares its channel's socket), so a test hands readiness to the code under test directly.
//! A dial needs one, since [`Dial::raw_fd`] names the descriptor its face registers: a
//! memory dial holds a pipe, whose writing end is ready for writing at once, so a poll
//! reports the dial's progress as it reports a TCP connection's. No socket is ever opened.

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use bytes::Bytes;
use mio::unix::pipe;
use mio::{Interest, Registry, Token};

use crate::config::FaceConfig;
use crate::face::{Face, FaceParts};
use crate::listener::{Accepted, Listener};
use crate::queue::OutQueue;
use crate::transport::{Dial, FaceError, Flushed, Progress, RxFrame, Source, Transport};
use crate::uri::FaceUri;
use kite_link::reassembly::Endpoint;
use kite_link::FaceCounters;
use kite_link::{FaceId, FaceIds, FaceScope, LinkType, Persistency};

/// How a read or a write fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// The peer closed its end ([`FaceError::Closed`]).
    Closed,
    /// The connection was reset ([`FaceError::Io`] of `ConnectionReset`).
    Reset,
}

impl Failure {
    fn error(self) -> FaceError {
        match self {
            Failure::Closed => FaceError::Closed,
            Failure::Reset => FaceError::Io(io::ErrorKind::ConnectionReset.into()),
        }
    }
}

/// How a memory face's dial ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DialOutcome {
    /// It fails at once, before it starts (as a connect to an unreachable network).
    Unreachable,
    /// It starts, then fails at its first progress (as a connection refused).
    Refused,
    /// It starts and never answers: the caller's connect timeout gives it up.
    NoAnswer,
    /// It starts and connects at its first progress: the face carries packets with the
    /// same peer again.
    Connects,
}

/// What a receive burst meets next.
#[derive(Debug)]
enum Arrival {
    Frame(Bytes),
    /// The socket runs empty here: the burst ends.
    Pause,
    Fail(Failure),
}

/// The kind of transport a memory face stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A stream (Unix, TCP): pushes back on its sender, never fragments.
    Stream,
    /// A unicast datagram face read through its channel (UDP, Ethernet): fragments to its
    /// MTU, may run LpReliability, and closes when idle if on-demand.
    Datagram,
}

/// What a memory transport is, kept so that a dial can make it again.
#[derive(Debug, Clone)]
struct Shape {
    remote: FaceUri,
    local: FaceUri,
    mtu: Option<usize>,
    kind: Kind,
}

/// What the face and its peer share.
#[derive(Debug)]
struct State {
    shape: Shape,
    arrivals: VecDeque<Arrival>,
    sent: Vec<Bytes>,
    /// Frames the peer takes before it pushes back; `None`: all.
    room: Option<usize>,
    send_failure: Option<Failure>,
    up: bool,
    dials: VecDeque<DialOutcome>,
    dialed: usize,
    connections: usize,
    bursts: usize,
    flushes: usize,
    timed: bool,
    deadline: Option<Instant>,
    timer_runs: usize,
    fail_at_deadline: bool,
}

type Shared = Arc<Mutex<State>>;

fn lock(s: &Shared) -> MutexGuard<'_, State> {
    s.lock().unwrap_or_else(PoisonError::into_inner)
}

thread_local! {
    /// The peers of this thread's redialing memory faces, by remote URI: what their dials
    /// reach (a [`crate::transport::Redial`] is told the remote alone).
    static PEERS: RefCell<HashMap<FaceUri, Shared>> = RefCell::new(HashMap::new());
}

/// A face over a memory transport, to be made ([`MemoryTransport::face`]).
#[derive(Debug, Clone)]
pub struct MemoryTransport {
    shape: Shape,
    scope: FaceScope,
    persistency: Persistency,
    redials: bool,
    timed: bool,
}

impl MemoryTransport {
    /// A stream face between `local` and `remote` (as a TCP or Unix face): it pushes back on
    /// its sender and never fragments. Non-local and persistent unless told otherwise.
    pub fn stream(remote: FaceUri, local: FaceUri) -> Self {
        Self::of(remote, local, None, Kind::Stream)
    }

    /// A unicast datagram face read through its channel (as a UDP or Ethernet face), with
    /// MTU `mtu`: it may run LpReliability and, on-demand, closes when idle.
    pub fn datagram(remote: FaceUri, local: FaceUri, mtu: usize) -> Self {
        Self::of(remote, local, Some(mtu), Kind::Datagram)
    }

    fn of(remote: FaceUri, local: FaceUri, mtu: Option<usize>, kind: Kind) -> Self {
        MemoryTransport {
            shape: Shape {
                remote,
                local,
                mtu,
                kind,
            },
            scope: FaceScope::NonLocal,
            persistency: Persistency::Persistent,
            redials: false,
            timed: false,
        }
    }

    /// With timers of its own, as a QUIC transport keeps: due when
    /// [`MemoryPeer::set_deadline`] says, run by the caller as the face's transport timers.
    pub fn timed(mut self) -> Self {
        self.timed = true;
        self
    }

    /// With persistency `p`.
    pub fn persistency(mut self, p: Persistency) -> Self {
        self.persistency = p;
        self
    }

    /// With scope `s`.
    pub fn scope(mut self, s: FaceScope) -> Self {
        self.scope = s;
        self
    }

    /// Dialing its peer again once its connection is lost, as a TCP face does; each dial
    /// ends as [`MemoryPeer::answer_dial`] says. The dials run on the thread that made the
    /// face, and reach the peer made last for its remote on that thread.
    pub fn redialing(mut self) -> Self {
        self.redials = true;
        self
    }

    /// The face `id`, connected, and its peer.
    pub fn face(self, id: FaceId, config: &FaceConfig) -> (Face, MemoryPeer) {
        let (parts, peer) = self.parts();
        let io = MemoryIo {
            state: peer.state.clone(),
        };
        (Face::new(id, parts, Box::new(io), config), peer)
    }

    /// The face `id` without its connection yet: it dials its peer as
    /// [`MemoryTransport::redialing`] says.
    pub fn unconnected(mut self, id: FaceId, config: &FaceConfig) -> (Face, MemoryPeer) {
        self.redials = true;
        let (remote, local) = (self.shape.remote.clone(), self.shape.local.clone());
        let (parts, peer) = self.parts();
        (Face::unconnected(id, parts, remote, local, config), peer)
    }

    fn parts(self) -> (FaceParts, MemoryPeer) {
        let state = Arc::new(Mutex::new(State {
            shape: self.shape.clone(),
            arrivals: VecDeque::new(),
            sent: Vec::new(),
            room: None,
            send_failure: None,
            up: true,
            dials: VecDeque::new(),
            dialed: 0,
            connections: 0,
            bursts: 0,
            flushes: 0,
            timed: self.timed,
            deadline: None,
            timer_runs: 0,
            fail_at_deadline: false,
        }));
        if self.redials {
            let remote = self.shape.remote.clone();
            PEERS.with(|p| p.borrow_mut().insert(remote, state.clone()));
        }
        let parts = FaceParts {
            scope: self.scope,
            persistency: self.persistency,
            link_type: LinkType::PointToPoint,
            redial: self.redials.then_some(dial as crate::transport::Redial),
        };
        (parts, MemoryPeer { state })
    }
}

/// The test's end of a memory face.
#[derive(Debug, Clone)]
pub struct MemoryPeer {
    state: Shared,
}

impl MemoryPeer {
    fn state(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }

    /// Frame `frame` arrives: a receive burst returns it, after those that arrived before.
    pub fn arrive(&self, frame: impl Into<Bytes>) {
        self.state()
            .arrivals
            .push_back(Arrival::Frame(frame.into()));
    }

    /// The socket runs empty here: the burst that reaches this point ends, and the next
    /// reads what arrives after it.
    pub fn pause(&self) {
        self.state().arrivals.push_back(Arrival::Pause);
    }

    /// The peer closes its end: the read that reaches this point fails (what arrived before
    /// is read first).
    pub fn close(&self) {
        self.state()
            .arrivals
            .push_back(Arrival::Fail(Failure::Closed));
    }

    /// The connection is reset: the read that reaches this point fails.
    pub fn reset(&self) {
        self.state()
            .arrivals
            .push_back(Arrival::Fail(Failure::Reset));
    }

    /// Frames arrived and not read yet.
    pub fn unread(&self) -> usize {
        (self.state().arrivals.iter())
            .filter(|a| matches!(a, Arrival::Frame(_)))
            .count()
    }

    /// Takes the frames the face sent (link header and packet as one), in order.
    pub fn sent(&self) -> Vec<Bytes> {
        core::mem::take(&mut self.state().sent)
    }

    /// The peer stops reading: the face's writes find the socket full.
    pub fn stop_reading(&self) {
        self.state().room = Some(0);
    }

    /// The peer makes room for `n` more frames (after [`MemoryPeer::stop_reading`]).
    pub fn make_room(&self, n: usize) {
        let mut s = self.state();
        s.room = Some(s.room.unwrap_or(0) + n);
    }

    /// The peer reads all the face sends again.
    pub fn read_all(&self) {
        self.state().room = None;
    }

    /// The face's next write fails.
    pub fn fail_next_send(&self, f: Failure) {
        self.state().send_failure = Some(f);
    }

    /// The link goes up or down (a face whose link is down drops what it would send).
    pub fn set_up(&self, up: bool) {
        self.state().up = up;
    }

    /// The face's next dial not yet answered ends as `outcome`; a dial with no answer
    /// queued is [`DialOutcome::NoAnswer`].
    pub fn answer_dial(&self, outcome: DialOutcome) {
        self.state().dials.push_back(outcome);
    }

    /// Dials the face made.
    pub fn dials(&self) -> usize {
        self.state().dialed
    }

    /// Dials that connected.
    pub fn connections(&self) -> usize {
        self.state().connections
    }

    /// Receive bursts the face read.
    pub fn bursts(&self) -> usize {
        self.state().bursts
    }

    /// Writes the face made (each a flush that found frames queued).
    pub fn flushes(&self) -> usize {
        self.state().flushes
    }

    /// The transport's timers are due at `at` (a [`MemoryTransport::timed`] face).
    pub fn set_deadline(&self, at: Option<Instant>) {
        self.state().deadline = at;
    }

    /// Times the transport's timers ran; each run clears the deadline.
    pub fn timer_runs(&self) -> usize {
        self.state().timer_runs
    }

    /// The next run of the timers finds the connection gone (as a QUIC idle timeout).
    pub fn fail_at_deadline(&self) {
        self.state().fail_at_deadline = true;
    }
}

/// The transport of a memory face.
#[derive(Debug)]
struct MemoryIo {
    state: Shared,
}

impl MemoryIo {
    fn kind(&self) -> Kind {
        lock(&self.state).shape.kind
    }
}

impl Transport for MemoryIo {
    fn remote_uri(&self) -> FaceUri {
        lock(&self.state).shape.remote.clone()
    }

    fn local_uri(&self) -> FaceUri {
        lock(&self.state).shape.local.clone()
    }

    fn mtu(&self) -> Option<usize> {
        lock(&self.state).shape.mtu
    }

    fn sources(&self) -> [Option<Source>; 2] {
        [None, None]
    }

    fn recv_burst(
        &mut self,
        _hangup: bool,
        budget: usize,
        rx: &mut Vec<RxFrame>,
    ) -> Result<Progress, FaceError> {
        let mut s = lock(&self.state);
        s.bursts += 1;
        let mut taken = 0;
        while taken < budget {
            match s.arrivals.pop_front() {
                None | Some(Arrival::Pause) => return Ok(Progress::Drained),
                Some(Arrival::Fail(f)) => return Err(f.error()),
                Some(Arrival::Frame(frame)) => {
                    rx.push(RxFrame {
                        from: Endpoint::Peer,
                        frame,
                        own_buffer: 0,
                    });
                    taken += 1;
                }
            }
        }
        Ok(match s.arrivals.is_empty() {
            true => Progress::Drained,
            false => Progress::More,
        })
    }

    fn flush(&mut self, q: &mut OutQueue, c: &mut FaceCounters) -> Result<Flushed, FaceError> {
        let mut s = lock(&self.state);
        s.flushes += 1;
        if let Some(f) = s.send_failure.take() {
            return Err(f.error());
        }
        let n = q.len().min(s.room.unwrap_or(usize::MAX));
        let (a, b) = q.frames();
        let frames: Vec<Bytes> = a.iter().chain(b).take(n).map(|f| f.to_bytes()).collect();
        s.sent.extend(frames);
        c.n_out_bytes += q.pop_frames(n) as u64;
        if let Some(room) = &mut s.room {
            *room -= n;
        }
        Ok(match q.is_empty() {
            true => Flushed::Done,
            false => Flushed::Blocked,
        })
    }

    fn via_channel(&self) -> bool {
        self.kind() == Kind::Datagram
    }

    fn timed(&self) -> bool {
        lock(&self.state).timed
    }

    fn deadline(&self) -> Option<Instant> {
        lock(&self.state).deadline
    }

    fn on_deadline(&mut self, _now: Instant) -> Result<(), FaceError> {
        let mut s = lock(&self.state);
        s.timer_runs += 1;
        s.deadline = None;
        match s.fail_at_deadline {
            true => Err(FaceError::Closed),
            false => Ok(()),
        }
    }

    fn pushes_back(&self) -> bool {
        self.kind() == Kind::Stream
    }

    fn reliable_capable(&self) -> bool {
        self.kind() == Kind::Datagram
    }

    fn is_up(&self) -> bool {
        lock(&self.state).up
    }
}

/// A memory face's dial on its way.
#[derive(Debug)]
struct MemoryDial {
    state: Shared,
    outcome: DialOutcome,
    /// What the face registers: its writing end is ready for writing at once. The reading
    /// end is kept open so that it stays so.
    ready: (pipe::Sender, pipe::Receiver),
}

/// Dials the peer of a memory face (its [`crate::transport::Redial`]).
fn dial(remote: &FaceUri) -> io::Result<Box<dyn Dial>> {
    let state = PEERS
        .with(|p| p.borrow().get(remote).cloned())
        .ok_or_else(|| io::Error::other("no memory peer for this remote on this thread"))?;
    let outcome = {
        let mut s = lock(&state);
        s.dialed += 1;
        s.dials.pop_front().unwrap_or(DialOutcome::NoAnswer)
    };
    if outcome == DialOutcome::Unreachable {
        return Err(io::ErrorKind::NetworkUnreachable.into());
    }
    Ok(Box::new(MemoryDial {
        state,
        outcome,
        ready: pipe::new()?,
    }))
}

impl Dial for MemoryDial {
    fn register(&mut self, registry: &Registry, token: Token) -> io::Result<()> {
        let rw = Interest::READABLE | Interest::WRITABLE;
        registry.register(&mut self.ready.0, token, rw)
    }

    fn raw_fd(&self) -> RawFd {
        self.ready.0.as_raw_fd()
    }

    fn progress(&mut self) -> io::Result<bool> {
        match self.outcome {
            DialOutcome::Connects => Ok(true),
            DialOutcome::NoAnswer => Ok(false),
            DialOutcome::Refused | DialOutcome::Unreachable => {
                Err(io::ErrorKind::ConnectionRefused.into())
            }
        }
    }

    fn connected(self: Box<Self>) -> io::Result<Box<dyn Transport>> {
        lock(&self.state).connections += 1;
        Ok(Box::new(MemoryIo { state: self.state }))
    }
}

/// What a [`MemoryListener`]'s next `accept` does.
#[derive(Debug)]
pub enum Arrives {
    /// A peer whose face is made over this transport, with the id `accept` is given; the
    /// listener gives up the face named, if any, to make room for it.
    Peer(MemoryTransport, Option<FaceId>),
    /// A peer the listener refuses (no room).
    Refused,
    /// Accepting fails with this error, as `accept(2)` does out of descriptors.
    Fails(io::ErrorKind),
}

/// A listener in memory: each `accept` takes what the test queued, in order, then reports
/// none pending. Its descriptor is a pipe's reading end, so it registers as a socket does.
#[derive(Debug)]
pub struct MemoryListener {
    local: FaceUri,
    queue: Arc<Mutex<VecDeque<Arrives>>>,
    config: FaceConfig,
    pipe: pipe::Receiver,
}

impl MemoryListener {
    /// A listener at `local`, and the queue the test fills.
    pub fn new(local: FaceUri, config: &FaceConfig) -> (Self, Arc<Mutex<VecDeque<Arrives>>>) {
        let (_, pipe) = pipe::new().expect("a pipe");
        let queue = Arc::new(Mutex::new(VecDeque::new()));
        let l = MemoryListener {
            local,
            queue: queue.clone(),
            config: *config,
            pipe,
        };
        (l, queue)
    }
}

impl Listener for MemoryListener {
    fn local_uri(&self) -> &FaceUri {
        &self.local
    }

    fn register(&mut self, registry: &Registry, token: Token) -> io::Result<()> {
        registry.register(&mut self.pipe, token, Interest::READABLE)
    }

    fn accept(&mut self, ids: &mut FaceIds, _now: Instant) -> io::Result<Option<Accepted>> {
        let next = self
            .queue
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop_front();
        Ok(Some(match next {
            None => return Ok(None),
            Some(Arrives::Peer(t, evict)) => {
                let (face, _) = t
                    .persistency(Persistency::OnDemand)
                    .face(ids.next_id(), &self.config);
                Accepted::Face(Box::new(face), evict)
            }
            Some(Arrives::Refused) => Accepted::Refused,
            Some(Arrives::Fails(kind)) => return Err(kind.into()),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link_service::Received;
    use kite_link::PacketKind;
    use Instant;

    const INTEREST: &[u8] = &[5, 5, 7, 3, 8, 1, b'a'];

    fn tcp(port: u16) -> FaceUri {
        FaceUri::Tcp(([192, 0, 2, 1], port).into())
    }

    fn stream(port: u16) -> MemoryTransport {
        MemoryTransport::stream(tcp(port), tcp(1))
    }

    fn read(face: &mut Face, budget: usize) -> (Result<Progress, FaceError>, usize) {
        let mut out: Vec<Received> = Vec::new();
        let r = face.recv_burst(Instant::now(), false, budget, &mut out);
        (r, out.len())
    }

    #[test]
    fn bursts_return_what_arrived_up_to_a_pause_the_budget_or_a_failure() {
        let (mut face, peer) = stream(6363).face(FaceId(300), &FaceConfig::default());
        for _ in 0..3 {
            peer.arrive(INTEREST);
        }
        peer.pause();
        peer.arrive(INTEREST);
        peer.close();
        assert!(matches!(read(&mut face, 2), (Ok(Progress::More), 2)));
        assert!(matches!(read(&mut face, 64), (Ok(Progress::Drained), 1)));
        assert!(matches!(read(&mut face, 64), (Err(FaceError::Closed), 1)));
        assert_eq!(face.counters().n_in_interests, 4);
        assert_eq!((peer.bursts(), peer.unread()), (3, 0));
    }

    #[test]
    fn sends_are_captured_held_back_while_the_peer_does_not_read_and_failed_when_told() {
        let (mut face, peer) = stream(6363).face(FaceId(300), &FaceConfig::default());
        peer.make_room(1);
        for _ in 0..3 {
            assert!(face.send(PacketKind::Interest, Bytes::from_static(INTEREST)));
        }
        assert!(matches!(face.flush(), Ok(Flushed::Blocked)));
        assert_eq!(peer.sent(), [Bytes::from_static(INTEREST)]);
        assert_eq!(face.pending_output(), 2);
        peer.read_all();
        assert!(matches!(face.flush(), Ok(Flushed::Done)));
        assert_eq!(peer.sent().len(), 2);
        assert_eq!(face.counters().n_out_bytes, 3 * INTEREST.len() as u64);
        face.send(PacketKind::Interest, Bytes::from_static(INTEREST));
        peer.fail_next_send(Failure::Reset);
        assert!(
            matches!(face.flush(), Err(FaceError::Io(e)) if e.kind() == io::ErrorKind::ConnectionReset)
        );
        assert_eq!(peer.flushes(), 3);
    }

    #[test]
    fn a_face_whose_link_is_down_drops_what_it_would_send() {
        let config = FaceConfig::default();
        let t = MemoryTransport::datagram(tcp(6363), tcp(1), 1400);
        let (mut face, peer) = t.face(FaceId(300), &config);
        assert_eq!(face.mtu(), Some(1400));
        peer.set_up(false);
        assert!(!face.is_up());
        face.send(PacketKind::Interest, Bytes::from_static(INTEREST));
        assert!(matches!(face.flush(), Ok(Flushed::Done)));
        assert!(peer.sent().is_empty());
        assert_eq!(face.counters().n_out_link_down, 1);
    }

    #[test]
    fn an_unconnected_face_dials_as_its_peer_answers() {
        let mut poll = mio::Poll::new().unwrap();
        let mut events = mio::Events::with_capacity(4);
        let token = Token(300);
        let (mut face, peer) = stream(6364).unconnected(FaceId(300), &FaceConfig::default());
        assert!(face.is_lost() && !face.is_up());
        peer.answer_dial(DialOutcome::Unreachable);
        peer.answer_dial(DialOutcome::Refused);
        peer.answer_dial(DialOutcome::Connects);
        assert!(face.redial(poll.registry(), token).is_err(), "unreachable");
        face.redial(poll.registry(), token).unwrap();
        assert!(
            face.is_redialing() && face.redial_progress().is_err(),
            "refused"
        );
        assert!(face.lose_connection(poll.registry()));
        face.redial(poll.registry(), token).unwrap();
        poll.poll(&mut events, Some(std::time::Duration::ZERO))
            .unwrap();
        let ready: Vec<_> = events
            .iter()
            .map(|e| (e.token(), e.is_writable()))
            .collect();
        assert_eq!(ready, [(token, true)], "the dial is reported ready");
        assert!(face.redial_progress().unwrap());
        assert!(face.is_up() && !face.is_lost());
        assert_eq!((peer.dials(), peer.connections()), (3, 1));
    }
}
