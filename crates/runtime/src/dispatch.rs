//! The input stage's dispatch: a received packet, already decoded by the face's link service,
//! gets its name hashes and goes to the forwarding thread that owns it (NDN-DPDK paper, section 2):
//! Interests by the Name Dispatch Table, Data and Nacks by the thread inside Kite's PIT token,
//! or, without one, to each thread the NDT names for the Data name's prefixes 0..=k.
//!
//! `/localhost` Interests from local faces (management commands and dataset requests, local
//! apps talking to each other) take a small ring of their own that the forwarding thread
//! drains first, so `kite status` or a prefix registration still gets through while a flood
//! keeps the Interest ring full.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use hashbrown::HashMap;
use kite_face::{Received, RxPacket, RxSink};
use kite_packet::{CachePolicy, PitToken};
use rtrb::{Consumer, Producer, RingBuffer};

use kite_fw::face::FaceId;
use kite_fw::forwarder::{InData, InInterest, InNack};
use kite_fw::hash::NameHasher;
use kite_fw::ndt::Ndt;
use kite_fw::out::ToShard;
use kite_fw::pcct::{NameScope, Pcct};
use kite_fw::time::{Clock, MonotonicClock, Time};

use super::affinity::Affinity;
use super::park::Waker;

/// A packet with the time it entered its ring (CoDel measures the wait).
pub(crate) struct Stamped<T> {
    pub at: Time,
    pub pkt: T,
}

/// Slots of the ring for `/localhost` Interests from local faces.
const LOCAL_RING: usize = 256;

/// Which of a thread's CoDel-managed rings refused a packet since it last ran empty: set by
/// the dispatcher, cleared by the forwarding thread when it empties the ring. A full ring is a
/// standing queue even when it drains faster than CoDel's target delay (4096 slots at a
/// million packets a second wait 4 ms), so CoDel treats its packets as late and marks rather
/// than letting the overload show only as drops.
#[derive(Debug, Default)]
pub(crate) struct Overflowed {
    pub interests: AtomicBool,
    pub data: AtomicBool,
    pub nacks: AtomicBool,
}

/// Each face's share of one Interest ring, kept by the dispatcher alone (no atomics, no lock):
/// the ingress face of every Interest it queued, in ring order, and how many each face has
/// queued. The ring is FIFO, so once the forwarding thread has taken `k` Interests (the
/// ring's occupancy says how many remain) the first `k` faces here are theirs.
///
/// The rule (a dynamic threshold, as shared-buffer switches share memory among ports): a face
/// may queue one more Interest only while it has fewer queued than the ring has free slots.
/// One face alone fills at most half the ring; n faces flooding at once settle at 1/(n+1) of
/// it each with 1/(n+1) left free, so a face with fewer Interests queued always finds room.
struct Share {
    /// Ingress faces of the queued Interests, oldest first (never longer than the ring).
    queued: VecDeque<FaceId>,
    /// Interests queued per face; only faces with some have a key (at most the ring's
    /// capacity of them).
    per_face: HashMap<FaceId, u32>,
    capacity: usize,
}

impl Share {
    fn new(capacity: usize) -> Self {
        Share {
            queued: VecDeque::with_capacity(capacity),
            per_face: HashMap::with_capacity(capacity),
            capacity,
        }
    }

    /// Forgets the Interests the forwarding thread has taken, given how many remain queued.
    fn settle(&mut self, occupied: usize) {
        while self.queued.len() > occupied {
            let Some(face) = self.queued.pop_front() else {
                return;
            };
            if let Some(n) = self.per_face.get_mut(&face) {
                *n -= 1;
                if *n == 0 {
                    self.per_face.remove(&face);
                }
            }
        }
    }

    fn held(&self, face: FaceId) -> usize {
        self.per_face.get(&face).map_or(0, |&n| n as usize)
    }

    /// Free slots, counting every Interest not yet known to be taken.
    fn free(&self) -> usize {
        self.capacity - self.queued.len()
    }

    /// Whether `face` may queue one more Interest, holding at most `cap` queued.
    fn admits(&self, face: FaceId, cap: usize) -> bool {
        let held = self.held(face);
        held < self.free() && held < cap
    }

    /// How many Interests in a row `face` may queue now: the admissions `admits` would grant
    /// one after another (each takes a slot and adds to the face's count).
    fn room(&self, face: FaceId, cap: usize) -> usize {
        let held = self.held(face);
        self.free()
            .saturating_sub(held)
            .div_ceil(2)
            .min(cap.saturating_sub(held))
    }

    fn queue(&mut self, face: FaceId) {
        self.queued.push_back(face);
        *self.per_face.entry(face).or_insert(0) += 1;
    }
}

/// The producing ends of one forwarding thread's input rings.
pub(crate) struct Inputs {
    local: Producer<Stamped<InInterest>>,
    interests: Producer<Stamped<InInterest>>,
    share: Share,
    data: Producer<Stamped<InData>>,
    nacks: Producer<Stamped<InNack>>,
    overflowed: Arc<Overflowed>,
}

impl Inputs {
    /// Queues an Interest: `/localhost` ones from local faces on the local ring, the rest on
    /// the CoDel-managed Interest ring if its face is within its share. False when refused.
    #[inline]
    fn push_interest(&mut self, s: Stamped<InInterest>, local: bool, cap: usize) -> bool {
        if local {
            return self.local.push(s).is_ok();
        }
        let face = s.pkt.face;
        if !self.share.admits(face, cap) {
            self.overflowed.interests.store(true, Ordering::Relaxed);
            return false;
        }
        let ok = push_managed(&mut self.interests, &self.overflowed.interests, s);
        if ok {
            self.share.queue(face);
        }
        ok
    }

    /// Brings the Interest ring's share up to date with what the forwarding thread took.
    fn settle(&mut self) {
        let occupied = self.share.capacity - self.interests.slots();
        self.share.settle(occupied);
    }

    /// How many packets `face` (local or not) may hand this thread now with none refused:
    /// its room in the Interest ring, and the free slots of the other rings.
    /// A face left without room in the Interest ring waits, so the ring counts as having
    /// refused it (CoDel then treats the queue as standing, as for a refused packet); a
    /// restrained face that waits for its cap alone does not.
    fn room(&self, face: FaceId, local: bool, cap: usize) -> usize {
        let interests = self.share.room(face, cap);
        if interests == 0 && self.share.room(face, usize::MAX) == 0 {
            self.overflowed.interests.store(true, Ordering::Relaxed);
        }
        let mut room = interests.min(self.data.slots()).min(self.nacks.slots());
        if local {
            room = room.min(self.local.slots());
        }
        room
    }

    /// Queues a Data; false when the ring is full.
    #[inline]
    fn push_data(&mut self, s: Stamped<InData>) -> bool {
        push_managed(&mut self.data, &self.overflowed.data, s)
    }

    /// Queues a Nack; false when the ring is full.
    #[inline]
    fn push_nack(&mut self, s: Stamped<InNack>) -> bool {
        push_managed(&mut self.nacks, &self.overflowed.nacks, s)
    }
}

/// Pushes `s` onto a CoDel-managed ring; a refusal raises that ring's `overflowed` flag.
#[inline]
fn push_managed<T>(
    ring: &mut Producer<Stamped<T>>,
    overflowed: &AtomicBool,
    s: Stamped<T>,
) -> bool {
    let ok = ring.push(s).is_ok();
    if !ok {
        overflowed.store(true, Ordering::Relaxed);
    }
    ok
}

/// The consuming ends, held by the forwarding thread.
pub(crate) struct InputRings {
    /// `/localhost` Interests from local faces, taken before everything else.
    pub local: Consumer<Stamped<InInterest>>,
    pub interests: Consumer<Stamped<InInterest>>,
    pub data: Consumer<Stamped<InData>>,
    pub nacks: Consumer<Stamped<InNack>>,
    /// Which rings overflowed since they last ran empty.
    pub overflowed: Arc<Overflowed>,
}

impl InputRings {
    /// Whether any ring holds a packet.
    pub fn has_work(&self) -> bool {
        !self.local.is_empty()
            || !self.data.is_empty()
            || !self.nacks.is_empty()
            || !self.interests.is_empty()
    }
}

/// Interest, Data and Nack rings of `capacity` slots each, and the local ring.
pub(crate) fn rings(capacity: usize) -> (Inputs, InputRings) {
    let (lp, lc) = RingBuffer::new(LOCAL_RING.min(capacity));
    let (ip, ic) = RingBuffer::new(capacity);
    let (dp, dc) = RingBuffer::new(capacity);
    let (np, nc) = RingBuffer::new(capacity);
    let overflowed = Arc::new(Overflowed::default());
    (
        Inputs {
            local: lp,
            interests: ip,
            share: Share::new(capacity),
            data: dp,
            nacks: np,
            overflowed: overflowed.clone(),
        },
        InputRings {
            local: lc,
            interests: ic,
            data: dc,
            nacks: nc,
            overflowed,
        },
    )
}

/// The forwarding thread of `threads` that a Kite PIT token names, if it is one and that
/// thread exists. A Data or Nack goes there; without one, a Data goes to every thread the
/// NDT names for its name's short prefixes, a Nack to the thread the NDT gives its Interest.
pub(crate) fn token_thread(token: Option<&PitToken>, threads: usize) -> Option<usize> {
    let t = usize::from(Pcct::token_thread(token?)?);
    (t < threads).then_some(t)
}

/// Packets one I/O thread queued for a shard another I/O thread runs (inline forwarding): each
/// crossed between threads through a ring, with a wake-up. The owning thread adds a burst's
/// count once per burst; any thread reads it. Aligned to a cache line, so two threads'
/// counters never share one.
#[repr(align(64))]
#[derive(Debug, Default)]
pub struct Crossed(AtomicU64);

impl Crossed {
    /// Adds `n`. Only the owning thread calls it: a load and a store suffice.
    fn add(&self, n: u64) {
        let v = self.0.load(Ordering::Relaxed);
        self.0.store(v.wrapping_add(n), Ordering::Relaxed);
    }

    /// The total so far.
    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// Routes received packets to forwarding threads.
pub(crate) struct Dispatcher {
    hasher: NameHasher,
    ndt: Arc<Ndt>,
    inputs: Vec<Inputs>,
    wakers: Vec<Waker>,
    /// Threads that got packets since the last `wake`.
    pending: u64,
    /// Packets queued since the last `wake` for shards other I/O threads run, and the total.
    crossed_burst: u64,
    crossed: Arc<Crossed>,
    clock: MonotonicClock,
    /// The ingress face of each packet dropped because its ring was full, since the last
    /// [`Dispatcher::take_dropped`] (its capacity is kept, so counting allocates nothing).
    dropped: Vec<FaceId>,
    /// Faces the forwarder refused room (a Congestion Nack went back to them), and until
    /// when they are restrained to [`RESTRAINED_QUEUE`] Interests queued per thread. Only
    /// faces refused in the last [`RESTRAINT`] have a key.
    restrained: HashMap<FaceId, Time>,
    /// The accepted faces watched for the I/O thread whose shards their packets go to.
    pub affinity: Affinity,
}

/// The packets of one face's burst, queued as they come ([`Dispatcher::direct`]).
pub(crate) struct DirectSink<'a> {
    dispatcher: &'a mut Dispatcher,
    /// The burst's arrival time, read (and the rings settled) at its first packet.
    at: Option<Time>,
    local: bool,
}

impl RxSink for DirectSink<'_> {
    #[inline]
    fn take(&mut self, r: Received) {
        let at = match self.at {
            Some(at) => at,
            None => *self.at.insert(self.dispatcher.begin_burst()),
        };
        let local = self.local;
        self.dispatcher.dispatch(r, at, |_| local);
    }
}

impl DirectSink<'_> {
    /// Ends the burst: wakes the threads that got packets.
    pub fn finish(self) {
        if self.at.is_some() {
            self.dispatcher.wake();
        }
    }
}

/// How long a face the forwarder refused room stays restrained.
const RESTRAINT: core::time::Duration = core::time::Duration::from_millis(100);

/// Interests a restrained face may have queued in each thread's ring. A face past its share
/// of the PIT has its new Interests Nacked; each still costs a turn of the pipelines (table
/// lookups, the Nack), so a flooder left at its full share of the ring would keep most of the
/// forwarder's time. Restrained, a stream face or a UDP face with its own socket is not read
/// at all until its restraint ends (the I/O thread parks it: its sender's socket fills, or the
/// kernel drops into the face's), and the Interests of a face sharing a datagram channel's
/// socket beyond this cap are dropped before the pipelines. A consumer within its share is
/// never Nacked for want of room, so never restrained; one whose upstreams Nack it with
/// Congestion is paused for as long.
const RESTRAINED_QUEUE: usize = 4;

impl Dispatcher {
    pub fn new(
        hasher: NameHasher,
        ndt: Arc<Ndt>,
        inputs: Vec<Inputs>,
        wakers: Vec<Waker>,
        clock: MonotonicClock,
        affinity: Affinity,
        crossed: Arc<Crossed>,
    ) -> Self {
        Dispatcher {
            hasher,
            ndt,
            inputs,
            wakers,
            pending: 0,
            crossed_burst: 0,
            crossed,
            clock,
            dropped: Vec::new(),
            restrained: HashMap::new(),
            affinity,
        }
    }

    /// Restrains `face` for [`RESTRAINT`]: the forwarder refused it room.
    pub fn restrain(&mut self, face: FaceId) {
        let until = self.clock.now() + RESTRAINT;
        self.restrained.insert(face, until);
    }

    /// Forgets restraints that ended (and those of faces gone).
    pub fn forget_restraints(&mut self) {
        let now = self.clock.now();
        self.restrained.retain(|_, until| *until > now);
    }

    /// The faces restrained (some may have ended since the last
    /// [`Dispatcher::forget_restraints`]).
    pub fn restrained_faces(&self) -> impl ExactSizeIterator<Item = FaceId> + '_ {
        self.restrained.keys().copied()
    }

    /// Whether `face` is restrained now (it was refused room in the last [`RESTRAINT`]).
    pub fn is_restrained(&self, face: FaceId) -> bool {
        !self.restrained.is_empty() && self.cap(face, self.clock.now()) != usize::MAX
    }

    /// How long `face` stays restrained from now (zero when it is not).
    pub fn restraint_left(&self, face: FaceId) -> core::time::Duration {
        let now = self.clock.now();
        match self.restrained.get(&face) {
            Some(&until) if until > now => core::time::Duration::from_nanos(until.0 - now.0),
            _ => core::time::Duration::ZERO,
        }
    }

    /// The most Interests `face` may have queued in a thread's ring at `now`.
    fn cap(&self, face: FaceId, now: Time) -> usize {
        if self.restrained.is_empty() {
            return usize::MAX;
        }
        match self.restrained.get(&face) {
            Some(&until) if until > now => RESTRAINED_QUEUE,
            _ => usize::MAX,
        }
    }

    /// The ingress faces of the packets dropped for a full ring since the last call, one
    /// entry per packet, for the caller to count against each face; empty afterwards.
    pub fn take_dropped(&mut self) -> std::vec::Drain<'_, FaceId> {
        self.dropped.drain(..)
    }

    /// How many packets `face` may hand over now with none refused for want of room (its
    /// share of each thread's Interest ring, and the other rings' free slots): a face that
    /// can push back reads no more than this. `local`: the face has local scope (its
    /// `/localhost` Interests take the local ring).
    pub fn room(&mut self, face: FaceId, local: bool) -> usize {
        let cap = self.cap(face, self.clock.now());
        self.inputs
            .iter_mut()
            .map(|i| {
                i.settle();
                i.room(face, local, cap)
            })
            .min()
            .unwrap_or(0)
    }

    fn token_thread(&self, token: Option<&PitToken>) -> Option<usize> {
        token_thread(token, self.inputs.len())
    }

    /// Queues a burst of received packets (`received` is left empty), stamped with one
    /// arrival time, and wakes the threads that got any. `is_local` tells a face's scope
    /// (asked only for `/localhost` Interests, whose local-face ones take the local ring).
    pub fn dispatch_burst(
        &mut self,
        received: &mut Vec<Received>,
        waited: Duration,
        is_local: impl Fn(FaceId) -> bool,
    ) {
        if received.is_empty() {
            return;
        }
        let at = self.begin_burst() - waited;
        for r in received.drain(..) {
            self.dispatch(r, at, &is_local);
        }
        self.wake();
    }

    /// A sink that queues each packet as a face's link service completes it, for a burst
    /// read from one face whose scope `local` says (see [`Dispatcher::dispatch_burst`]):
    /// the packet goes straight to its ring instead of through a `Vec`. Call
    /// [`DirectSink::finish`] after the burst to wake the threads that got packets.
    pub fn direct(&mut self, local: bool) -> DirectSink<'_> {
        DirectSink {
            dispatcher: self,
            at: None,
            local,
        }
    }

    /// Brings each Interest ring's share up to date and reads the burst's arrival time.
    fn begin_burst(&mut self) -> Time {
        for i in &mut self.inputs {
            i.settle();
        }
        self.clock.now()
    }

    /// Queues one received packet for its thread(s).
    fn dispatch(&mut self, r: Received, at: Time, is_local: impl Fn(FaceId) -> bool) {
        match r.packet {
            RxPacket::Interest(interest) => {
                kite_fw::fault::panic_if_asked("io", &interest.name);
                let hashes = self.hasher.prefix_hashes(&interest.name);
                let home = self
                    .ndt
                    .interest_thread(&hashes, || interest.name.ends_in_implicit_digest());
                // A CanBePrefix Interest shorter than the dispatch prefix visits every
                // thread's CS, its home's first (kite_fw::forwarder::InInterest::cs_probe).
                let t = usize::from(home);
                let cs_probe = (interest.can_be_prefix && self.ndt.is_short(&hashes))
                    .then(|| kite_fw::forwarder::CsProbe::new(home));
                let local =
                    NameScope::of(&interest.name) == NameScope::Localhost && is_local(r.face);
                let cap = self.cap(r.face, at);
                // Built in the call (the push inlined), not first in a local and then moved.
                let ok = self.inputs[t].push_interest(
                    Stamped {
                        at,
                        pkt: InInterest {
                            interest,
                            hashes,
                            face: r.face,
                            token: r.pit_token,
                            next_hop: r.next_hop_face_id.map(kite_fw::face::FaceId),
                            congestion_mark: r.congestion_mark,
                            cs_probe,
                        },
                    },
                    local,
                    cap,
                );
                self.counted(t, ok, r.face);
            }
            RxPacket::Data(data) => {
                let no_cache = r.cache_policy == Some(CachePolicy::NO_CACHE);
                let in_data = |data| InData {
                    data,
                    hashes: None,
                    face: r.face,
                    token: r.pit_token,
                    congestion_mark: r.congestion_mark,
                    no_cache,
                    own_buffer: r.own_buffer,
                    rehomed: false,
                };
                if let Some(t) = self.token_thread(r.pit_token.as_ref()) {
                    let pkt = in_data(data);
                    let ok = self.inputs[t].push_data(Stamped { at, pkt });
                    self.counted(t, ok, r.face);
                    return;
                }
                let mut pkt = in_data(data);
                let hashes = self.hasher.prefix_hashes(&pkt.data.name);
                let threads = self.ndt.threads_for_data(&hashes);
                pkt.hashes = Some(hashes);
                for &t in &threads {
                    let t = usize::from(t);
                    let ok = self.inputs[t].push_data(Stamped {
                        at,
                        pkt: pkt.clone(),
                    });
                    self.counted(t, ok, r.face);
                }
            }
            RxPacket::Nack(reason, interest) => {
                let hashes = self.hasher.prefix_hashes(&interest.name);
                let t = self.token_thread(r.pit_token.as_ref()).unwrap_or_else(|| {
                    let digest = || interest.name.ends_in_implicit_digest();
                    usize::from(self.ndt.interest_thread(&hashes, digest))
                });
                let pkt = InNack {
                    interest,
                    hashes,
                    reason,
                    face: r.face,
                    token: r.pit_token,
                };
                let ok = self.inputs[t].push_nack(Stamped { at, pkt });
                self.counted(t, ok, r.face);
            }
        }
    }

    /// Queues a packet one forwarding thread hands another (through the output stage: each
    /// ring has one producer). Woken with the next [`Dispatcher::wake`].
    pub fn hand_to_shard(&mut self, shard: u8, packet: ToShard) {
        let t = usize::from(shard);
        if t >= self.inputs.len() {
            return;
        }
        let at = self.clock.now();
        self.inputs[t].settle();
        let (ok, face) = match packet {
            ToShard::Interest(pkt) => {
                let face = pkt.face;
                let cap = self.cap(face, at);
                (
                    self.inputs[t].push_interest(Stamped { at, pkt }, false, cap),
                    face,
                )
            }
            ToShard::Data(pkt) => {
                let face = pkt.face;
                (self.inputs[t].push_data(Stamped { at, pkt }), face)
            }
        };
        self.counted(t, ok, face);
    }

    fn counted(&mut self, thread: usize, ok: bool, face: FaceId) {
        if ok {
            self.pending |= 1 << thread;
            self.crossed_burst += u64::from(self.affinity.crosses(thread));
            self.affinity.count(face, thread);
        } else {
            self.dropped.push(face);
        }
    }

    /// Wakes the threads that got packets since the last call (once per burst).
    pub fn wake(&mut self) {
        let mut p = self.pending;
        while p != 0 {
            let t = p.trailing_zeros() as usize;
            self.wakers[t].wake();
            p &= p - 1;
        }
        self.pending = 0;
        if self.crossed_burst > 0 {
            self.crossed.add(self.crossed_burst);
            self.crossed_burst = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_face_queues_while_it_has_fewer_queued_than_the_ring_has_free() {
        let (a, b) = (FaceId(300), FaceId(301));
        let mut s = Share::new(8);
        let all = usize::MAX;
        assert_eq!(s.room(a, all), 4);
        assert_eq!(s.room(a, 3), 3, "a restrained face has a smaller cap");
        let mut queued = 0;
        while s.admits(a, all) {
            s.queue(a);
            queued += 1;
        }
        assert_eq!(queued, 4, "alone, a face fills half the ring");
        assert_eq!(s.room(b, all), 2, "another face gets half of what is left");
        s.queue(b);
        s.queue(b);
        assert!(!s.admits(a, all) && !s.admits(b, all));
        // The forwarding thread took three (three remain): the first three queued, all a's.
        s.settle(3);
        assert_eq!((s.held(a), s.held(b), s.free()), (1, 2, 5));
        assert!(s.admits(a, all) && !s.admits(b, 2));
        s.settle(0);
        assert!(s.per_face.is_empty() && s.queued.is_empty());
    }

    /// I/O thread 1 of 2 with inline forwarding runs shards 1 and 3: what it queues for
    /// shards 0 and 2 counts as crossed, published once per burst; with the shards on threads
    /// of their own nothing counts.
    #[test]
    fn packets_for_shards_another_io_thread_runs_count_as_crossed() {
        let make = |inline| {
            let crossed = Arc::new(Crossed::default());
            let (inputs, _rings): (Vec<_>, Vec<_>) = (0..4).map(|_| rings(8)).unzip();
            let d = Dispatcher::new(
                NameHasher::with_key(1, 2),
                Arc::new(Ndt::new(16, 4, 2)),
                inputs,
                (0..4).map(|_| Waker::for_current_thread()).collect(),
                MonotonicClock::new(),
                Affinity::new(1, 2, inline),
                crossed.clone(),
            );
            (d, crossed)
        };
        let face = FaceId(300);
        let (mut d, crossed) = make(true);
        for shard in [0, 1, 2, 3, 2] {
            d.counted(shard, true, face);
        }
        d.counted(0, false, face);
        assert_eq!(crossed.get(), 0, "published with the burst's wake-up");
        d.wake();
        assert_eq!(crossed.get(), 3);
        d.wake();
        assert_eq!(crossed.get(), 3);
        let (mut d, crossed) = make(false);
        for shard in 0..4 {
            d.counted(shard, true, face);
        }
        d.wake();
        assert_eq!(crossed.get(), 0);
    }
}
