//! A test I/O thread: no listener, no shard, one forwarding thread's command channel.
//! Commands are handed to it directly, and no socket is ever opened.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use crossbeam_channel::Receiver;
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
use crate::dispatch::Dispatcher;
use crate::park::{SleepFlag, Waker};
use crate::{
    FaceCommandError, FaceEvent, FaceOptions, FaceStatus, FwCommand, IoCommand, RuntimeConfig,
};

/// An I/O thread with no listener, no shard and one forwarding thread's command channel:
/// commands are handed to it directly, and no socket is ever opened.
pub(super) struct Harness {
    pub thread: IoThread,
    pub commands: crossbeam_channel::Sender<IoCommand>,
    pub events: Receiver<FaceEvent>,
    pub fwd: Receiver<FwCommand>,
    /// The forwarding thread's output ring toward this I/O thread.
    pub output: rtrb::Producer<Out>,
    loads: Arc<[AtomicUsize]>,
}

pub(super) fn harness() -> Harness {
    harness_with(RuntimeConfig::default())
}

/// [`harness`] with `config`.
pub(super) fn harness_with(config: RuntimeConfig) -> Harness {
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
        channels: Vec::new(),
        udp: Vec::new(),
        ether: Vec::new(),
        links: None,
        udp_multicast: Vec::new(),
    };
    let ndt = Arc::new(Ndt::new(16, 1, config.dispatch_prefix_len));
    let dispatcher = Dispatcher::new(
        NameHasher::with_key(1, 2),
        ndt,
        Vec::new(),
        Vec::new(),
        MonotonicClock::new(),
        Affinity::new(0, 1, false),
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
}
