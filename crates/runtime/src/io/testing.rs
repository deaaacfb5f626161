//! A test I/O thread: no shard, no listener but those in memory a test gives it, one forwarding thread's command channel and
//! input rings. Commands are handed to it directly, its faces are TCP faces that never dial
//! or faces over `kite_face::testing`'s memory transport, and no socket is ever opened.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use crossbeam_channel::Receiver;
use kite_face::testing::{MemoryPeer, MemoryTransport};
use kite_face::FaceUri;
use kite_fw::face::FaceId;
use kite_fw::hash::NameHasher;
use kite_fw::ndt::Ndt;
use kite_fw::out::Out;
use kite_fw::time::MonotonicClock;
use kite_link::{FaceIds, Persistency};

use super::{IoThread, Owned, Place, WAKE_TOKEN};
use crate::affinity::Affinity;
use crate::command::CreateRequest;
use crate::dispatch::{Dispatcher, InputRings};
use crate::park::{SleepFlag, Waker};
use crate::{
    FaceCommandError, FaceEvent, FaceOptions, FaceStatus, FwCommand, IoCommand, RuntimeConfig,
};

/// Slots of each input ring of the forwarding thread.
const RING: usize = 1024;

/// An I/O thread with no listener, no shard and one forwarding thread's command channel:
/// commands are handed to it directly, and no socket is ever opened.
pub(super) struct Harness {
    pub thread: IoThread,
    pub commands: crossbeam_channel::Sender<IoCommand>,
    pub events: Receiver<FaceEvent>,
    pub fwd: Receiver<FwCommand>,
    /// The forwarding thread's input rings: what the I/O thread dispatched.
    pub rings: InputRings,
    /// The forwarding thread's output ring toward this I/O thread.
    pub output: rtrb::Producer<Out>,
    loads: Arc<[AtomicUsize]>,
}

pub(super) fn harness() -> Harness {
    harness_with(RuntimeConfig::default())
}

/// [`harness`] with `config`.
pub(super) fn harness_with(config: RuntimeConfig) -> Harness {
    harness_listening(config, Vec::new())
}

/// [`harness`] with `config` and the listeners `channels` (no socket of their own).
pub(super) fn harness_listening(
    config: RuntimeConfig,
    channels: Vec<Box<dyn kite_face::Listener>>,
) -> Harness {
    let poll = mio::Poll::new().unwrap();
    let waker = Arc::new(mio::Waker::new(poll.registry(), WAKE_TOKEN).unwrap());
    let (tx, rx) = crossbeam_channel::unbounded();
    let loads: Arc<[AtomicUsize]> = Arc::new([AtomicUsize::new(0)]);
    let place = Place {
        index: 0,
        peers: vec![(tx.clone(), waker)],
        loads: loads.clone(),
        ids: FaceIds::new(),
    };
    let owned = Owned {
        channels,
        udp: Vec::new(),
        ether: Vec::new(),
        links: None,
        udp_multicast: Vec::new(),
        lanes: Vec::new(),
    };
    let ndt = Arc::new(Ndt::new(16, 1, config.dispatch_prefix_len));
    let (inputs, rings) = crate::dispatch::rings(RING);
    let dispatcher = Dispatcher::new(
        NameHasher::with_key(1, 2),
        ndt,
        vec![inputs],
        vec![Waker::for_current_thread()],
        MonotonicClock::new(),
        Affinity::new(0, 1, false),
        Arc::new(crate::dispatch::Crossed::default()),
    );
    let (fwd_tx, fwd) = crossbeam_channel::unbounded();
    let (events_tx, events) = crossbeam_channel::unbounded();
    let (output, from_fwd) = rtrb::RingBuffer::new(64);
    let thread = IoThread::new(
        &config,
        place,
        owned,
        poll,
        Arc::new(SleepFlag::default()),
        rx,
        dispatcher,
        vec![from_fwd],
        vec![(fwd_tx, Waker::for_current_thread())],
        Vec::new(),
        events_tx,
        Arc::default(),
    )
    .unwrap();
    Harness {
        thread,
        commands: tx,
        events,
        fwd,
        rings,
        output,
        loads,
    }
}

pub(super) const PEER: &str = "192.0.2.1:6363";

impl Harness {
    pub fn run(&mut self, cmd: IoCommand, now: Instant) {
        self.commands.send(cmd).unwrap();
        assert!(self.thread.handle_commands(now));
    }

    /// `faces/create` of a TCP face made at once and dialed in the background.
    pub fn create(
        &mut self,
        persistency: Persistency,
        now: Instant,
    ) -> Result<FaceStatus, FaceCommandError> {
        let (reply, rx) = crossbeam_channel::bounded(1);
        let cmd = IoCommand::Create {
            remote: FaceUri::Tcp(PEER.parse().unwrap()),
            local: None,
            background: true,
            request: CreateRequest {
                persistency,
                options: FaceOptions::default(),
                tag: 7,
                reply,
            },
        };
        self.run(cmd, now);
        let (tag, r) = rx.try_recv().expect("answered at once");
        assert_eq!(tag, 7);
        r
    }

    pub fn list(&mut self, now: Instant) -> Vec<FaceId> {
        let (reply, rx) = crossbeam_channel::bounded(1);
        self.run(IoCommand::List { reply }, now);
        rx.try_recv().unwrap().into_iter().map(|s| s.id).collect()
    }

    pub fn destroy(&mut self, id: FaceId, now: Instant) -> Option<FaceStatus> {
        let (reply, rx) = crossbeam_channel::bounded(1);
        self.run(IoCommand::Destroy { id, reply }, now);
        rx.try_recv().unwrap()
    }

    pub fn load(&self) -> usize {
        self.loads[0].load(Ordering::Relaxed)
    }

    /// Adds a face over memory transport `t`, as a listener's or a command's would be.
    pub fn memory(&mut self, t: MemoryTransport, now: Instant) -> (FaceId, MemoryPeer) {
        let id = self.thread.ids.next_id();
        let (face, peer) = t.face(id, &self.thread.config);
        self.thread.add_face(face, now);
        (id, peer)
    }

    /// Adds a face over memory transport `t` that has yet to connect, as a background
    /// `faces/create` does: it dials its peer now, then as the redials schedule.
    pub fn unconnected(&mut self, t: MemoryTransport, now: Instant) -> (FaceId, MemoryPeer) {
        let id = self.thread.ids.next_id();
        let (face, peer) = t.unconnected(id, &self.thread.config);
        let added = self
            .thread
            .add_unconnected(face, FaceOptions::default(), now);
        assert_eq!(added.map(|s| s.id), Ok(id));
        (id, peer)
    }

    /// Face `id`'s socket reported readable at `now`, as a poll would.
    pub fn readable(&mut self, id: FaceId, now: Instant) {
        let token = mio::Token(id.0 as usize);
        self.thread.handle_event(token, true, false, false, now);
    }

    /// Face `id`'s socket reported writable at `now`, as a poll would.
    pub fn writable(&mut self, id: FaceId, now: Instant) {
        let token = mio::Token(id.0 as usize);
        self.thread.handle_event(token, false, false, true, now);
    }

    /// A poll that does not wait, then the read stage at `now`.
    pub fn poll_and_read(&mut self, now: Instant) {
        self.thread.poll(std::time::Duration::ZERO);
        self.thread.read(now);
    }

    /// `faces/update` of face `id` with `options`.
    pub fn update(&mut self, id: FaceId, options: FaceOptions, now: Instant) -> FaceStatus {
        let (reply, rx) = crossbeam_channel::bounded(1);
        let cmd = IoCommand::Update {
            id,
            persistency: None,
            options,
            reply,
        };
        self.run(cmd, now);
        rx.try_recv().unwrap().expect("updated")
    }

    /// The face events so far.
    pub fn take_events(&self) -> Vec<FaceEvent> {
        self.events.try_iter().collect()
    }

    /// The names of the Interests dispatched so far, in order.
    pub fn dispatched_interests(&mut self) -> Vec<String> {
        let ring = &mut self.rings.interests;
        std::iter::from_fn(|| ring.pop().ok())
            .map(|s| s.pkt.interest.name.to_string())
            .collect()
    }
}

/// A TCP remote in the documentation range, port `port`.
pub(super) fn tcp(port: u16) -> FaceUri {
    FaceUri::Tcp(([192, 0, 2, 1], port).into())
}

/// A stream face's memory transport toward port `port`.
pub(super) fn stream(port: u16) -> MemoryTransport {
    MemoryTransport::stream(tcp(port), FaceUri::Tcp(([192, 0, 2, 2], 6363).into()))
}

/// A UDP face's memory transport toward port `port` (read through its channel).
pub(super) fn datagram(port: u16) -> MemoryTransport {
    let (remote, local) = ([192, 0, 2, 1], port);
    let udp = |a: ([u8; 4], u16)| FaceUri::Udp(a.into());
    MemoryTransport::datagram(udp((remote, local)), udp(([192, 0, 2, 2], 6363)), 1400)
}

/// An encoded Interest for `name`.
pub(super) fn interest(name: &str) -> bytes::Bytes {
    kite_testkit::packet::interest(name, 1u32, 4000)
}

/// A small Data for `face`, as the forwarding thread hands output to the I/O thread.
pub(super) fn data(face: FaceId) -> Out {
    Out::Data {
        face,
        wire: bytes::Bytes::from_static(&[6, 3, 7, 1, 8]),
        token: None,
        ingress: FaceId(1),
        congestion_mark: 0,
        from_cs: false,
    }
}
