//! A forwarding thread: takes bursts from its input rings (one set per I/O thread; Data and
//! Nacks before Interests), marks what CoDel says, runs the pipelines, and hands each outgoing
//! packet to the I/O thread that owns its face (or to management for the internal face).
//! Parks when it has nothing to do and no timer due.
//! With inline forwarding the I/O thread owns the `Worker` and calls [`Worker::step`] itself.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender};
use hashbrown::HashMap;
use rtrb::{Consumer, Producer, PushError};

use super::codel::CoDel;
use super::dispatch::{InputRings, Stamped};
use super::park::{Waker, SPIN_POLLS};
use super::{
    BusyTime, FwCommand, InternalInterest, QueueDepths, RingDepth, RuntimeConfig, ThreadCounters,
};
use crate::lograte::DROP_CHECK_INTERVAL;
use kite_fw::face::{FaceId, FaceScope, LinkType};
use kite_fw::fib::FibReader;
use kite_fw::forwarder::{Forwarder, InData, InInterest, InNack};
use kite_fw::hash::NameHasher;
use kite_fw::out::Out;
use kite_fw::strategy::{FaceInfo, StrategyTable};
use kite_fw::time::{Clock, MonotonicClock, Time};

/// How the forwarding thread wakes the I/O thread (an eventfd write, only when it sleeps).
pub(crate) struct IoWake {
    pub waker: Arc<mio::Waker>,
    pub sleep: Arc<super::park::SleepFlag>,
}

/// Where an outgoing packet goes: the output ring toward the I/O thread that owns the face
/// (its index, learnt from the face's `AddFace`: one lookup per run of packets to one face),
/// or management.
#[derive(Clone, Copy)]
enum Port {
    Io(u8),
    Internal,
    /// The content store's and the null face: what a route sends there is dropped, as NFD's
    /// null faces drop it (a blackhole route), and the Interest waits out its lifetime.
    Null,
}

/// Management answers a thread holds back while the I/O thread's ring is full.
const HELD_ANSWERS: usize = 256;

/// Three CoDel instances, one per input ring.
struct Aqm {
    interests: CoDel,
    data: CoDel,
    nacks: CoDel,
}

pub(crate) struct Worker {
    fwd: Forwarder,
    clock: MonotonicClock,
    burst: usize,
    /// The input rings each I/O thread feeds, in I/O thread order (each ring has one
    /// producer), with the CoDel instances of each set.
    inputs: Vec<(InputRings, Aqm)>,
    /// The output ring toward each I/O thread, and how to wake it, in I/O thread order.
    out_rings: Vec<(Producer<Out>, IoWake)>,
    commands: Receiver<FwCommand>,
    internal: Sender<InternalInterest>,
    ports: HashMap<FaceId, Port>,
    interests: Vec<InInterest>,
    data: Vec<InData>,
    nacks: Vec<InNack>,
    out: Vec<Out>,
    /// Management's answers that found their I/O thread's ring full, with that ring's index,
    /// sent first next time (at most [`HELD_ANSWERS`]): under a flood a dropped answer is a
    /// command that times out.
    held: VecDeque<(u8, Out)>,
    out_dropped: u64,
    thread: u8,
    spin_when_idle: bool,
    log: super::fwdlog::FwdLog,
    /// Time spent in turns that did work (`Worker::step` returning [`Step::Worked`]).
    busy: Arc<BusyTime>,
}

impl Worker {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        thread: u8,
        config: &RuntimeConfig,
        fib: FibReader,
        strategies: StrategyTable,
        hasher: NameHasher,
        clock: MonotonicClock,
        inputs: Vec<InputRings>,
        out_rings: Vec<(Producer<Out>, IoWake)>,
        commands: Receiver<FwCommand>,
        internal: Sender<InternalInterest>,
        busy: Arc<BusyTime>,
    ) -> Self {
        let mut fwd = Forwarder::new(
            thread,
            config.forwarder.clone(),
            fib,
            strategies,
            hasher,
            clock.now(),
        );
        let internal_info = FaceInfo {
            scope: FaceScope::Local,
            link_type: LinkType::PointToPoint,
        };
        let mut ports = HashMap::new();
        for id in FaceId::RESERVED {
            // Local, as NFD's: a blackhole route may be made under /localhost too.
            fwd.add_face(id, internal_info);
            let port = if id == FaceId::INTERNAL {
                Port::Internal
            } else {
                Port::Null
            };
            ports.insert(id, port);
        }
        Worker {
            fwd,
            clock,
            burst: config.burst,
            inputs: inputs
                .into_iter()
                .map(|i| {
                    let aqm = Aqm {
                        interests: CoDel::new(config.codel),
                        data: CoDel::new(config.codel),
                        nacks: CoDel::new(config.codel),
                    };
                    (i, aqm)
                })
                .collect(),
            out_rings,
            commands,
            internal,
            ports,
            interests: Vec::with_capacity(config.burst),
            data: Vec::with_capacity(config.burst),
            nacks: Vec::with_capacity(config.burst),
            out: Vec::with_capacity(config.burst * 4),
            held: VecDeque::new(),
            out_dropped: 0,
            thread,
            spin_when_idle: config.spin_when_idle,
            log: super::fwdlog::FwdLog::new(thread),
            busy,
        }
    }

    /// The thread's loop; `ready` gets this thread's waker once it runs.
    pub fn run(mut self, ready: Sender<(u8, Waker)>) {
        let waker = Waker::for_current_thread();
        if ready.send((self.thread, waker.clone())).is_err() {
            return;
        }
        drop(ready);
        let mut idle = 0u32;
        loop {
            match self.step() {
                Err(Stop) => return,
                Ok(Step::Worked) => {
                    idle = 0;
                    continue;
                }
                // the I/O thread is draining its ring; retry the held answers shortly
                Ok(Step::Held) => {
                    std::hint::spin_loop();
                    continue;
                }
                Ok(Step::Idle) => {}
            }
            idle += 1;
            if idle < SPIN_POLLS || self.spin_when_idle {
                std::hint::spin_loop();
                continue;
            }
            let timeout = self.timer_due_in();
            waker.park(timeout, || self.has_work());
            idle = 0;
        }
    }

    /// One pass: takes a burst from the rings, applies management's commands, and runs the
    /// pipelines when there was a packet or a timer due. The thread's loop calls it, and so
    /// does the I/O thread when it runs this shard itself.
    pub fn step(&mut self) -> Result<Step, Stop> {
        let now = self.clock.now();
        // Rings before commands: a face's AddFace was sent before its first packet was
        // queued, so any packet taken here has its face known once commands are applied.
        let took = self.take_burst(now);
        self.apply_commands()?;
        // Drop lines at most once a second: one comparison per step, not per packet.
        (self.log).check(self.fwd.counters(), self.out_dropped, now);
        let due = self.fwd.next_deadline().is_some_and(|t| t <= now);
        if took || !self.data.is_empty() || due {
            self.fwd.process_burst(
                now,
                &self.data,
                &self.nacks,
                &mut self.interests,
                &mut self.out,
            );
            self.data.clear();
            self.nacks.clear();
            self.route_out();
            // One clock read per burst that did work (the one at the top is shared).
            self.busy.add(self.clock.now().since(now));
            return Ok(Step::Worked);
        }
        if !self.held.is_empty() {
            self.route_out();
            return Ok(Step::Held);
        }
        Ok(Step::Idle)
    }

    /// How long until the next timer (PIT expiry, strategy timer) is due, at least 100 µs;
    /// `None` when none is set. Drops not yet logged count as a timer due within a second.
    pub fn timer_due_in(&self) -> Option<Duration> {
        let timer = self
            .fwd
            .next_deadline()
            .map(|t| t.since(self.clock.now()).max(Duration::from_micros(100)));
        match self.log.owes(self.fwd.counters(), self.out_dropped) {
            true => Some(timer.map_or(DROP_CHECK_INTERVAL, |t| t.min(DROP_CHECK_INTERVAL))),
            false => timer,
        }
    }

    /// Whether a packet or a command waits (checked before the I/O thread sleeps).
    pub fn has_work(&self) -> bool {
        self.inputs.iter().any(|(i, _)| i.has_work())
            || !self.commands.is_empty()
            || !self.held.is_empty()
    }

    /// Moves up to one burst from each ring of each I/O thread into the burst vectors,
    /// marking per CoDel.
    fn take_burst(&mut self, now: Time) -> bool {
        let n = self.burst;
        let mut took = false;
        for (inputs, aqm) in &mut self.inputs {
            // `/localhost` Interests from local faces first, unmarked: management must
            // answer even when the Interest ring is congested.
            let mut local = 0;
            while local < n {
                let Ok(Stamped { pkt, .. }) = inputs.local.pop() else {
                    break;
                };
                self.interests.push(pkt);
                local += 1;
            }
            let data = take(
                &mut inputs.data,
                n,
                now,
                &mut aqm.data,
                &inputs.overflowed.data,
                &mut self.data,
            );
            let nacks = take(
                &mut inputs.nacks,
                n,
                now,
                &mut aqm.nacks,
                &inputs.overflowed.nacks,
                &mut self.nacks,
            );
            let interests = take(
                &mut inputs.interests,
                n,
                now,
                &mut aqm.interests,
                &inputs.overflowed.interests,
                &mut self.interests,
            );
            took |= local + data + nacks + interests > 0;
        }
        took
    }

    fn apply_commands(&mut self) -> Result<(), Stop> {
        while let Ok(cmd) = self.commands.try_recv() {
            match cmd {
                FwCommand::AddFace(id, info, owner) => {
                    self.fwd.add_face(id, info);
                    self.ports.insert(id, Port::Io(owner));
                }
                FwCommand::RemoveFace(id) => {
                    self.fwd.remove_face(id);
                    self.ports.remove(&id);
                }
                FwCommand::InternalData(data, token) => {
                    self.data.push(InData {
                        data,
                        hashes: None,
                        face: FaceId::INTERNAL,
                        token,
                        congestion_mark: 0,
                        // Management answers are per request (NFD sends them NoCache).
                        no_cache: true,
                        own_buffer: 0,
                        rehomed: false,
                    });
                }
                FwCommand::SetCs {
                    capacity,
                    admit,
                    serve,
                } => {
                    if let Some(c) = capacity {
                        self.fwd.set_cs_capacity(c);
                    }
                    let (a, s) = self.fwd.cs_flags();
                    self.fwd
                        .set_cs_flags(admit.unwrap_or(a), serve.unwrap_or(s));
                }
                FwCommand::SetCsPolicy { bytes, unsolicited } => {
                    if let Some(b) = bytes {
                        self.fwd.set_cs_bytes(b);
                    }
                    if let Some(u) = unsolicited {
                        self.fwd.set_unsolicited(u);
                    }
                }
                FwCommand::Counters(reply) => {
                    let _ = reply.send(self.counters());
                }
                FwCommand::CsErase(prefix, limit, reply) => {
                    let _ = reply.send(self.fwd.cs_erase(&prefix, limit));
                }
                FwCommand::Shutdown => {
                    (self.log).flush(self.fwd.counters(), self.out_dropped);
                    return Err(Stop);
                }
            }
        }
        Ok(())
    }

    fn counters(&self) -> ThreadCounters {
        let (admit, serve) = self.fwd.cs_flags();
        ThreadCounters {
            forwarder: self.fwd.counters().clone(),
            pit_entries: self.fwd.pcct().pit_len(),
            cs_entries: self.fwd.pcct().cs_len(),
            cs_capacity: self.fwd.pcct().cs_capacity(),
            cs_admit: admit,
            cs_serve: serve,
            codel_marked: (self.inputs.iter())
                .map(|(_, a)| a.interests.marked() + a.data.marked() + a.nacks.marked())
                .sum(),
            queue_dropped: self.out_dropped,
            // With several I/O threads, each kind's rings add up (one per I/O thread).
            queues: self.inputs.iter().fold(
                QueueDepths {
                    output: (self.out_rings.iter()).fold(RingDepth::default(), |d, (r, _)| {
                        let capacity = r.buffer().capacity();
                        add(
                            d,
                            RingDepth {
                                len: capacity - r.slots(),
                                capacity,
                            },
                        )
                    }),
                    ..QueueDepths::default()
                },
                |q, (i, _)| QueueDepths {
                    local: add(q.local, depth(&i.local)),
                    interests: add(q.interests, depth(&i.interests)),
                    data: add(q.data, depth(&i.data)),
                    nacks: add(q.nacks, depth(&i.nacks)),
                    output: q.output,
                },
            ),
        }
    }

    /// Hands each outgoing packet to its port; wakes each I/O thread it wrote to once, if it
    /// sleeps.
    fn route_out(&mut self) {
        // Bit i: the ring toward I/O thread i got packets (at most 64 I/O threads).
        let mut to_io = 0u64;
        while let Some((owner, o)) = self.held.pop_front() {
            let Some((ring, _)) = self.out_rings.get_mut(usize::from(owner)) else {
                continue;
            };
            match ring.push(o) {
                Ok(()) => to_io |= 1 << owner,
                Err(PushError::Full(o)) => {
                    self.held.push_front((owner, o));
                    break;
                }
            }
        }
        // The port of the last face looked up: a burst's output comes in runs to one face
        // (its Data to one consumer, its Interests to one producer), so most packets skip the
        // map.
        let mut last: Option<(FaceId, Port)> = None;
        for o in self.out.drain(..) {
            let face = o.face();
            let port = match last {
                Some((f, p)) if f == face => Some(p),
                _ => {
                    let p = self.ports.get(&face).copied();
                    last = p.map(|p| (face, p));
                    p
                }
            };
            // A packet for another shard goes through any I/O thread (each feeds every
            // shard): the one of the face it came from, else the first.
            let port = match (&o, port) {
                (Out::Shard { .. }, Some(Port::Internal) | None) => Some(Port::Io(0)),
                (_, port) => port,
            };
            match port {
                Some(Port::Io(owner)) => {
                    let answer =
                        matches!(&o, Out::Data { ingress, .. } if *ingress == FaceId::INTERNAL);
                    // behind held answers, an answer waits its turn
                    let pushed = match self.out_rings.get_mut(usize::from(owner)) {
                        Some(_) if answer && !self.held.is_empty() => Err(PushError::Full(o)),
                        Some((ring, _)) => ring.push(o),
                        None => {
                            self.out_dropped += 1;
                            continue;
                        }
                    };
                    match pushed {
                        Ok(()) => to_io |= 1 << owner,
                        Err(PushError::Full(o)) if answer && self.held.len() < HELD_ANSWERS => {
                            self.held.push_back((owner, o))
                        }
                        Err(_) => self.out_dropped += 1,
                    }
                }
                Some(Port::Internal) => {
                    if let Out::Interest {
                        interest,
                        token,
                        ingress,
                        ..
                    } = o
                    {
                        let _ = self.internal.send(InternalInterest {
                            wire: interest.encode(),
                            token,
                            ingress,
                        });
                    }
                }
                Some(Port::Null) => {}
                None => self.out_dropped += 1,
            }
        }
        while to_io != 0 {
            let i = to_io.trailing_zeros() as usize;
            let io = &self.out_rings[i].1;
            if io.sleep.needs_wake() {
                let _ = io.waker.wake();
            }
            to_io &= to_io - 1;
        }
    }
}

/// The thread was told to stop.
pub(crate) struct Stop;

/// What one [`Worker::step`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// Ran the pipelines: there may be more to do at once.
    Worked,
    /// Nothing new, but management answers wait for room in the I/O thread's ring.
    Held,
    /// Nothing to do.
    Idle,
}

/// Two rings' occupancy together.
fn add(a: RingDepth, b: RingDepth) -> RingDepth {
    RingDepth {
        len: a.len + b.len,
        capacity: a.capacity + b.capacity,
    }
}

/// A ring's occupancy, read by its consumer.
fn depth<T>(ring: &Consumer<T>) -> RingDepth {
    RingDepth {
        len: ring.slots(),
        capacity: ring.buffer().capacity(),
    }
}

/// Takes up to `n` packets from `ring` into `into`, setting the congestion mark on those CoDel
/// picks; returns how many were taken. While `overflowed` says the ring refused packets since
/// it last ran empty, each packet counts as having waited at least CoDel's target.
fn take<T: Marked>(
    ring: &mut Consumer<Stamped<T>>,
    n: usize,
    now: Time,
    codel: &mut CoDel,
    overflowed: &AtomicBool,
    into: &mut Vec<T>,
) -> usize {
    let floor = if overflowed.load(Ordering::Relaxed) {
        codel.target()
    } else {
        Duration::ZERO
    };
    // One chunk, read before the ring's head moves on, so each record goes from its slot
    // straight into `into` (popping one at a time copied it to the stack first: a record is
    // ≈370 octets, and the extra copies cost ≈250 instructions per exchange).
    let taken = ring.slots().min(n);
    let Ok(chunk) = ring.read_chunk(taken) else {
        return 0;
    };
    for Stamped { at, pkt } in chunk {
        let waited = now.since(at).max(floor);
        into.push(pkt);
        if codel.on_dequeue(now, waited) {
            if let Some(p) = into.last_mut() {
                p.mark();
            }
        }
    }
    if floor > Duration::ZERO && ring.is_empty() {
        overflowed.store(false, Ordering::Relaxed);
    }
    taken
}

/// A packet CoDel can mark.
trait Marked {
    fn mark(&mut self);
}

impl Marked for InInterest {
    fn mark(&mut self) {
        self.congestion_mark = self.congestion_mark.max(1);
    }
}

impl Marked for InData {
    fn mark(&mut self) {
        self.congestion_mark = self.congestion_mark.max(1);
    }
}

impl Marked for InNack {
    /// Nacks carry no congestion mark field to the forwarder; CoDel still counts them.
    fn mark(&mut self) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codel::CoDelConfig;

    /// A packet that records its mark.
    #[derive(Default)]
    struct Pkt(bool);

    impl Marked for Pkt {
        fn mark(&mut self) {
            self.0 = true;
        }
    }

    /// Feeds 256 packets that waited 1 ms (under CoDel's 5 ms target) every millisecond for
    /// 300 ms, taken 64 at a time; `overflow` says whether the ring overflowed each time before
    /// it was refilled. Returns how many were marked.
    fn marks_with(overflow: bool) -> usize {
        let (mut tx, mut rx) = rtrb::RingBuffer::<Stamped<Pkt>>::new(256);
        let flag = AtomicBool::new(false);
        let mut codel = CoDel::new(CoDelConfig::default());
        let mut out = Vec::new();
        let mut marked = 0;
        for ms in 1..=300u64 {
            let now = Time::ZERO + Duration::from_millis(ms);
            let at = Time::ZERO + Duration::from_millis(ms - 1);
            while tx
                .push(Stamped {
                    at,
                    pkt: Pkt(false),
                })
                .is_ok()
            {}
            flag.store(overflow, Ordering::Relaxed);
            while take(&mut rx, 64, now, &mut codel, &flag, &mut out) > 0 {
                marked += out.drain(..).filter(|p| p.0).count();
            }
            assert!(!flag.load(Ordering::Relaxed), "an emptied ring clears it");
        }
        marked
    }

    #[test]
    fn a_ring_that_keeps_overflowing_gets_marks_though_it_drains_fast() {
        assert_eq!(marks_with(false), 0, "1 ms waits are under target");
        assert!(marks_with(true) > 0, "a standing full ring is congestion");
    }
}
