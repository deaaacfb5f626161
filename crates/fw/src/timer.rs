//! A hierarchical timer wheel: each forwarding thread's PIT entry expiry and strategy timers.
//!
//! NDN-DPDK gives each forwarding thread private, lock-free tables (NDN-DPDK paper, sections 2.2
//! and 5) and lets strategies set timers (section 6.1); this module is that thread's timer store.
//! Schedule, cancel and reschedule are O(1) and allocate nothing: every node lives in one slab
//! allocated up front, linked by `u32` indices into a free list or into one doubly-linked list
//! per wheel slot.
//!
//! Geometry: 11 levels of 64 slots. A slot at level `L` spans `64^L` ticks, and `64^11 > 2^64`,
//! so every representable deadline has a slot and nothing needs clamping or wrap-around.
//!
//! Invariants, with `elapsed` the last tick whose timers have all fired:
//! - A pending timer with deadline tick `d <= elapsed` is on the due list (it was scheduled in
//!   the past) and fires on the next [`TimerWheel::advance`].
//! - Otherwise it sits at level `L`, the highest 6-bit digit where `d` and `elapsed` differ, in
//!   the slot numbered by `d`'s digit `L`. That digit is therefore above `elapsed`'s digit `L`,
//!   so slots never wrap, every level-`L` slot starts before any level-`L+1` slot, and the next
//!   slot to process is the lowest set bit of the lowest non-empty level's occupancy bitmap.
//! - Processing a level-`L` slot at its start tick fires the timers due then and re-inserts the
//!   rest, which land on lower levels: a timer moves at most 10 times in its life, so
//!   [`TimerWheel::advance`] costs the timers fired and moved plus the slots visited, however
//!   far the clock jumped.
//!
//! Deadlines are rounded up to a tick: a timer never fires before its deadline and at most one
//! tick after it (given an `advance` at that time).
//!
//! Rough cost, from a throwaway release build on the 2-vCPU development VM (1 ms tick, `u64`
//! payload, runs varied by 2x): with 10k timers pending, 7–11 ns to schedule and cancel the
//! same timer, 25–40 ns to cancel a random one and schedule another, 35–50 ns per timer
//! scheduled and fired (cascades included); with 1M pending (32 MB of nodes, as big as the
//! L3 cache) 160–530 ns for either, all cache misses. Benchmarks are where this is tracked.

use core::time::Duration;

use crate::time::Time;

/// Bits of a tick number consumed by one level.
const SLOT_BITS: u32 = 6;
/// Slots per level: one bit each in a `u64` occupancy bitmap.
const SLOTS: usize = 1 << SLOT_BITS;
/// Enough levels for `64^LEVELS` to exceed every `u64` tick number.
const LEVELS: usize = 11;
/// The list of timers whose deadline had already passed when they were (re)scheduled.
const DUE_LIST: u16 = (LEVELS * SLOTS) as u16;
/// The end of a list (and of the free list).
const NIL: u32 = u32::MAX;

/// A pending timer's handle; stale after it fires or is cancelled (generation-checked).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TimerId {
    index: u32,
    generation: u32,
}

/// Returned by [`TimerWheel::schedule`] when every slot is in use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimersFull;

/// One slab entry: a pending timer (payload present) or a free node (payload absent).
struct Node<T> {
    payload: Option<T>,
    /// Deadline, in ticks.
    deadline: u64,
    prev: u32,
    next: u32,
    /// Bumped each time the node is freed, so old [`TimerId`]s stop matching.
    generation: u32,
    /// Which list the node is on: `level * SLOTS + slot`, or [`DUE_LIST`].
    list: u16,
}

/// A timer wheel holding up to a fixed number of pending timers, each carrying a `T`.
pub struct TimerWheel<T> {
    nodes: Vec<Node<T>>,
    heads: [u32; LEVELS * SLOTS + 1],
    occupied: [u64; LEVELS],
    free: u32,
    len: usize,
    /// Every timer due at or before this tick has fired.
    elapsed: u64,
    tick_ns: u64,
    /// The tick of `Time(u64::MAX)` rounded up: the latest deadline tick, reached only then.
    end_tick: u64,
    /// A lower bound on the due list's deadline ticks, for [`TimerWheel::next_deadline`].
    due_min: u64,
}

impl<T> TimerWheel<T> {
    /// A wheel whose clock starts at `now`, able to hold `capacity` pending timers; ticks are
    /// `tick` long (e.g. 1 ms). A zero tick counts as 1 ns; capacity is capped at `u32::MAX`.
    pub fn new(now: Time, tick: Duration, capacity: usize) -> Self {
        let tick_ns = u64::try_from(tick.as_nanos()).unwrap_or(u64::MAX).max(1);
        let capacity = capacity.min(NIL as usize);
        let nodes = (0..capacity)
            .map(|i| Node {
                payload: None,
                deadline: 0,
                prev: NIL,
                next: if i + 1 < capacity { i as u32 + 1 } else { NIL },
                generation: 0,
                list: DUE_LIST,
            })
            .collect();
        let mut wheel = TimerWheel {
            nodes,
            heads: [NIL; LEVELS * SLOTS + 1],
            occupied: [0; LEVELS],
            free: if capacity > 0 { 0 } else { NIL },
            len: 0,
            elapsed: 0,
            tick_ns,
            end_tick: u64::MAX.div_ceil(tick_ns),
            due_min: u64::MAX,
        };
        wheel.elapsed = wheel.tick_reached_at(now);
        wheel
    }

    /// Schedules `payload` to fire at `at` (in the past or now: fires on the next `advance`).
    pub fn schedule(&mut self, at: Time, payload: T) -> Result<TimerId, TimersFull> {
        if self.free == NIL {
            return Err(TimersFull);
        }
        let index = self.free;
        let deadline = self.deadline_tick(at);
        let node = &mut self.nodes[index as usize];
        self.free = node.next;
        node.payload = Some(payload);
        node.deadline = deadline;
        let generation = node.generation;
        self.len += 1;
        self.place(index);
        Ok(TimerId { index, generation })
    }

    /// Cancels a pending timer and returns its payload; None if it already fired, was
    /// cancelled, or the id is stale.
    pub fn cancel(&mut self, id: TimerId) -> Option<T> {
        if !self.is_pending(id) {
            return None;
        }
        self.unlink(id.index);
        self.release(id.index).map(|(_, payload)| payload)
    }

    /// Moves a pending timer to a new time, keeping its id; false if the id is stale.
    pub fn reschedule(&mut self, id: TimerId, at: Time) -> bool {
        if !self.is_pending(id) {
            return false;
        }
        self.unlink(id.index);
        self.nodes[id.index as usize].deadline = self.deadline_tick(at);
        self.place(id.index);
        true
    }

    /// When a pending timer is due, if any, so an idle thread can sleep until then. Never
    /// later than the earliest deadline rounded up to a tick; it may be earlier (the start of
    /// a higher-level slot that `advance` must first spread out), at most once per level.
    /// In the past or now when a timer was scheduled in the past.
    pub fn next_deadline(&self) -> Option<Time> {
        let tick = if self.heads[DUE_LIST as usize] != NIL {
            self.due_min
        } else {
            self.next_slot()?.2
        };
        Some(Time(tick.saturating_mul(self.tick_ns)))
    }

    /// Fires, in deadline order across ticks, every timer due at or before `now`, calling
    /// `fire(id, payload)` for each. Returns how many fired. Timers scheduled in the past fire
    /// first; an earlier `now` than a previous call's changes nothing else.
    pub fn advance(&mut self, now: Time, mut fire: impl FnMut(TimerId, T)) -> usize {
        let target = self.tick_reached_at(now);
        let head = core::mem::replace(&mut self.heads[DUE_LIST as usize], NIL);
        self.due_min = u64::MAX;
        let mut fired = self.fire_or_place(head, &mut fire);
        while let Some((level, slot, start)) = self.next_slot() {
            if start > target {
                break;
            }
            self.elapsed = start;
            let head = core::mem::replace(&mut self.heads[level * SLOTS + slot], NIL);
            self.occupied[level] &= !(1 << slot);
            fired += self.fire_or_place(head, &mut fire);
        }
        self.elapsed = self.elapsed.max(target);
        fired
    }

    /// Pending timers.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when no timer is pending.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The most timers that can be pending at once.
    pub fn capacity(&self) -> usize {
        self.nodes.len()
    }

    /// The deadline's tick, rounded up so the timer never fires early.
    fn deadline_tick(&self, at: Time) -> u64 {
        at.0.div_ceil(self.tick_ns)
    }

    /// The last tick whose timers are due at `now`; the end of time reaches every deadline.
    fn tick_reached_at(&self, now: Time) -> u64 {
        if now.0 == u64::MAX {
            self.end_tick
        } else {
            now.0 / self.tick_ns
        }
    }

    fn is_pending(&self, id: TimerId) -> bool {
        self.nodes
            .get(id.index as usize)
            .is_some_and(|n| n.generation == id.generation && n.payload.is_some())
    }

    /// The lowest non-empty slot: (level, slot, start tick).
    fn next_slot(&self) -> Option<(usize, usize, u64)> {
        let level = self.occupied.iter().position(|&bits| bits != 0)?;
        let slot = self.occupied[level].trailing_zeros() as usize;
        let shift = SLOT_BITS * level as u32;
        let above = shift + SLOT_BITS;
        let base = if above >= u64::BITS {
            0
        } else {
            self.elapsed >> above << above
        };
        Some((level, slot, base | (slot as u64) << shift))
    }

    /// Walks a detached list, firing the timers due by `elapsed` and re-placing the others.
    fn fire_or_place(&mut self, mut index: u32, fire: &mut impl FnMut(TimerId, T)) -> usize {
        let mut fired = 0;
        while index != NIL {
            let node = &self.nodes[index as usize];
            let next = node.next;
            if node.deadline <= self.elapsed {
                if let Some((id, payload)) = self.release(index) {
                    fire(id, payload);
                    fired += 1;
                }
            } else {
                self.place(index);
            }
            index = next;
        }
        fired
    }

    /// Links a pending node into the list its deadline belongs to, relative to `elapsed`.
    fn place(&mut self, index: u32) {
        let deadline = self.nodes[index as usize].deadline;
        let list = if deadline <= self.elapsed {
            self.due_min = self.due_min.min(deadline);
            DUE_LIST
        } else {
            let differing = (self.elapsed ^ deadline) | (SLOTS as u64 - 1);
            let level = (u64::BITS - 1 - differing.leading_zeros()) / SLOT_BITS;
            let slot = (deadline >> (SLOT_BITS * level)) as usize & (SLOTS - 1);
            self.occupied[level as usize] |= 1 << slot;
            (level as usize * SLOTS + slot) as u16
        };
        let head = self.heads[list as usize];
        if head != NIL {
            self.nodes[head as usize].prev = index;
        }
        let node = &mut self.nodes[index as usize];
        node.list = list;
        node.prev = NIL;
        node.next = head;
        self.heads[list as usize] = index;
    }

    /// Removes a pending node from its list, clearing the slot's bit when it empties.
    fn unlink(&mut self, index: u32) {
        let Node {
            prev, next, list, ..
        } = self.nodes[index as usize];
        if prev == NIL {
            self.heads[list as usize] = next;
            if next == NIL && list != DUE_LIST {
                let list = list as usize;
                self.occupied[list / SLOTS] &= !(1 << (list % SLOTS));
            }
        } else {
            self.nodes[prev as usize].next = next;
        }
        if next != NIL {
            self.nodes[next as usize].prev = prev;
        }
    }

    /// Frees an unlinked node, invalidating its id, and hands back what it held.
    fn release(&mut self, index: u32) -> Option<(TimerId, T)> {
        let node = &mut self.nodes[index as usize];
        let payload = node.payload.take()?;
        let id = TimerId {
            index,
            generation: node.generation,
        };
        node.generation = node.generation.wrapping_add(1);
        node.next = self.free;
        self.free = index;
        self.len -= 1;
        Some((id, payload))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    const MS: Duration = Duration::from_millis(1);

    fn ms(n: u64) -> Time {
        Time::from_millis(n)
    }

    /// Advances and returns the payloads fired, in order.
    fn fired<T>(wheel: &mut TimerWheel<T>, now: Time) -> Vec<T> {
        let mut out = Vec::new();
        let n = wheel.advance(now, |_, p| out.push(p));
        assert_eq!(n, out.len());
        out
    }

    #[test]
    fn never_fires_before_its_deadline() {
        let mut w = TimerWheel::new(ms(0), MS, 8);
        w.schedule(ms(5), 'a').unwrap();
        assert!(fired(&mut w, Time(ms(5).0 - 1)).is_empty());
        assert_eq!(fired(&mut w, ms(5)), vec!['a']);
        assert!(w.is_empty());
    }

    #[test]
    fn sub_tick_deadline_fires_at_most_one_tick_late() {
        let mut w = TimerWheel::new(ms(0), MS, 8);
        let at = ms(2) + Duration::from_micros(500);
        w.schedule(at, 'a').unwrap();
        assert_eq!(w.next_deadline(), Some(ms(3)));
        assert!(fired(&mut w, ms(2) + Duration::from_micros(900)).is_empty());
        assert_eq!(fired(&mut w, ms(3)), vec!['a']);
    }

    #[test]
    fn past_and_present_deadlines_fire_on_next_advance() {
        let mut w = TimerWheel::new(ms(100), MS, 8);
        w.schedule(ms(100), 'a').unwrap();
        w.schedule(ms(7), 'b').unwrap();
        w.schedule(ms(101), 'c').unwrap();
        assert_eq!(w.next_deadline(), Some(ms(7)));
        let mut got = fired(&mut w, ms(100));
        got.sort_unstable();
        assert_eq!(got, vec!['a', 'b']);
        assert_eq!(w.next_deadline(), Some(ms(101)));
    }

    #[test]
    fn fires_in_deadline_order_across_ticks_and_levels() {
        let mut w = TimerWheel::new(ms(3), MS, 64);
        let deadlines = [70_000, 5, 64, 4_095, 63, 4_096, 1_000_000, 65, 6, 262_144];
        for &d in &deadlines {
            w.schedule(ms(d), d).unwrap();
        }
        let got = fired(&mut w, ms(10_000_000));
        let mut want = deadlines.to_vec();
        want.sort_unstable();
        assert_eq!(got, want);
    }

    #[test]
    fn each_advance_fires_exactly_what_is_due() {
        let mut w = TimerWheel::new(ms(0), MS, 4096);
        for d in 1..=3000 {
            w.schedule(ms(d * 7 % 3001), d * 7 % 3001).unwrap();
        }
        let mut now = 0;
        while now < 3001 {
            now += 13;
            for d in fired(&mut w, ms(now)) {
                assert!(d <= now && d + 13 > now, "{d} fired at {now}");
            }
        }
        assert!(w.is_empty());
    }

    #[test]
    fn cancel_returns_payload_and_stops_the_timer() {
        let mut w = TimerWheel::new(ms(0), MS, 8);
        let a = w.schedule(ms(10), 'a').unwrap();
        let b = w.schedule(ms(10), 'b').unwrap();
        let c = w.schedule(ms(10), 'c').unwrap();
        assert_eq!(w.cancel(b), Some('b'));
        assert_eq!(w.cancel(b), None);
        assert_eq!(w.len(), 2);
        let mut got = fired(&mut w, ms(10));
        got.sort_unstable();
        assert_eq!(got, vec!['a', 'c']);
        assert_eq!(w.cancel(a), None);
        assert_eq!(w.cancel(c), None);
    }

    #[test]
    fn cancel_of_the_last_timer_in_a_slot_clears_its_bit() {
        let mut w = TimerWheel::new(ms(0), MS, 8);
        let a = w.schedule(ms(10_000), 'a').unwrap();
        w.schedule(ms(20_000), 'b').unwrap();
        let before = w.next_deadline().unwrap();
        w.cancel(a).unwrap();
        assert!(w.next_deadline().unwrap() > before);
        let past = w.schedule(ms(0), 'p').unwrap();
        assert_eq!(w.cancel(past), Some('p'));
        assert!(w.next_deadline().unwrap() > ms(0));
    }

    #[test]
    fn reschedule_moves_the_timer_and_keeps_its_id() {
        let mut w = TimerWheel::new(ms(0), MS, 8);
        let late = w.schedule(ms(5), 'l').unwrap();
        let early = w.schedule(ms(500), 'e').unwrap();
        assert!(w.reschedule(late, ms(300)));
        assert!(w.reschedule(early, ms(2)));
        assert_eq!(fired(&mut w, ms(200)), vec!['e']);
        assert!(!w.reschedule(early, ms(900)));
        assert!(w.reschedule(late, ms(100)));
        let mut ids = Vec::new();
        w.advance(ms(200), |id, p| ids.push((id, p)));
        assert_eq!(ids, vec![(late, 'l')]);
    }

    #[test]
    fn reschedule_into_the_past_fires_on_next_advance() {
        let mut w = TimerWheel::new(ms(50), MS, 8);
        let id = w.schedule(ms(10_000), 'a').unwrap();
        assert!(w.reschedule(id, ms(1)));
        assert_eq!(w.next_deadline(), Some(ms(1)));
        assert_eq!(fired(&mut w, ms(50)), vec!['a']);
    }

    #[test]
    fn stale_ids_are_rejected_after_slot_reuse() {
        let mut w = TimerWheel::new(ms(0), MS, 1);
        let a = w.schedule(ms(1), 'a').unwrap();
        assert_eq!(fired(&mut w, ms(1)), vec!['a']);
        let b = w.schedule(ms(5), 'b').unwrap();
        assert_ne!(a, b);
        assert_eq!(w.cancel(a), None);
        assert!(!w.reschedule(a, ms(2)));
        assert_eq!(w.cancel(b), Some('b'));
        let c = w.schedule(ms(5), 'c').unwrap();
        assert_eq!(w.cancel(b), None);
        assert_eq!(w.cancel(c), Some('c'));
    }

    #[test]
    fn ids_from_another_wheel_are_rejected() {
        let mut big = TimerWheel::new(ms(0), MS, 8);
        let mut small = TimerWheel::new(ms(0), MS, 1);
        big.schedule(ms(1), 0).unwrap();
        let foreign = big.schedule(ms(1), 1).unwrap();
        small.schedule(ms(1), 2).unwrap();
        assert_eq!(small.cancel(foreign), None);
        assert!(!small.reschedule(foreign, ms(3)));
    }

    #[test]
    fn full_wheel_refuses_then_recovers() {
        let mut w = TimerWheel::new(ms(0), MS, 2);
        assert_eq!(w.capacity(), 2);
        let a = w.schedule(ms(1), 1).unwrap();
        w.schedule(ms(1), 2).unwrap();
        assert_eq!(w.schedule(ms(1), 3), Err(TimersFull));
        assert_eq!(w.len(), 2);
        w.cancel(a).unwrap();
        w.schedule(ms(1), 4).unwrap();
        assert_eq!(w.advance(ms(1), |_, _| ()), 2);
        assert!(w.is_empty());
        let mut none: TimerWheel<u8> = TimerWheel::new(ms(0), MS, 0);
        assert_eq!(none.schedule(ms(1), 0), Err(TimersFull));
        assert_eq!(none.next_deadline(), None);
    }

    #[test]
    fn far_future_deadlines_wait_and_fire() {
        let hour = 3_600_000;
        let day = 24 * hour;
        let mut w = TimerWheel::new(ms(1), MS, 8);
        w.schedule(ms(day), 'd').unwrap();
        w.schedule(ms(hour), 'h').unwrap();
        w.schedule(Time(u64::MAX), 'm').unwrap();
        assert!(fired(&mut w, ms(hour - 1)).is_empty());
        assert_eq!(fired(&mut w, ms(hour)), vec!['h']);
        assert!(fired(&mut w, ms(day - 1)).is_empty());
        assert_eq!(fired(&mut w, ms(day)), vec!['d']);
        assert!(fired(&mut w, Time(u64::MAX - 1)).is_empty());
        assert_eq!(w.next_deadline(), Some(Time(u64::MAX)));
        assert_eq!(fired(&mut w, Time(u64::MAX)), vec!['m']);
    }

    #[test]
    fn clock_at_the_end_of_time_fires_everything_at_once() {
        let mut w = TimerWheel::new(Time(u64::MAX), MS, 4);
        w.schedule(Time(u64::MAX), 'a').unwrap();
        w.schedule(ms(1), 'b').unwrap();
        let mut got = fired(&mut w, Time(u64::MAX));
        got.sort_unstable();
        assert_eq!(got, vec!['a', 'b']);
    }

    #[test]
    fn huge_jump_with_nanosecond_ticks_is_not_per_tick() {
        // Per-tick stepping would take 2^63 iterations here and never finish.
        let mut w = TimerWheel::new(Time(0), Duration::from_nanos(1), 16);
        for (i, at) in [1u64 << 62, 3, 1 << 40, (1 << 40) + 1, u64::MAX - 1]
            .into_iter()
            .enumerate()
        {
            w.schedule(Time(at), i).unwrap();
        }
        assert_eq!(fired(&mut w, Time(1 << 63)), vec![1, 2, 3, 0]);
        assert_eq!(fired(&mut w, Time(u64::MAX)), vec![4]);
    }

    #[test]
    fn next_deadline_is_a_lower_bound_reached_in_few_steps() {
        let mut w = TimerWheel::new(ms(12_345), MS, 8);
        assert_eq!(w.next_deadline(), None);
        let at = ms(12_345 + 9_876_543);
        w.schedule(at, 'a').unwrap();
        w.schedule(at + MS * 50_000, 'b').unwrap();
        let wakeups = (1..=LEVELS).find(|_| {
            let next = w.next_deadline().unwrap();
            assert!(next <= at);
            let got = fired(&mut w, next);
            assert!(got.is_empty() || next == at);
            !got.is_empty()
        });
        assert!(wakeups.is_some(), "not reached in {LEVELS} wake-ups");
    }

    #[test]
    fn stepping_through_deadlines_visits_few_slots() {
        let mut w = TimerWheel::new(ms(0), MS, 1000);
        for i in 0..1000u64 {
            w.schedule(ms(i * i * 997 % 100_000_000 + 1), i).unwrap();
        }
        // Each timer sits on at most 5 levels here (10^8 < 64^5), so each costs at most 5 visits.
        for _ in 0..1000 * 5 {
            match w.next_deadline() {
                Some(next) => w.advance(next, |_, _| ()),
                None => break,
            };
        }
        assert!(w.is_empty(), "{} timers left after 5000 wake-ups", w.len());
    }

    #[test]
    fn idle_advance_moves_the_clock_so_new_timers_land_low() {
        let mut w = TimerWheel::new(ms(0), MS, 4);
        assert_eq!(w.advance(ms(1_000_000), |_, _: char| ()), 0);
        w.schedule(ms(1_000_001), 'a').unwrap();
        assert_eq!(w.next_deadline(), Some(ms(1_000_001)));
    }

    #[test]
    fn clock_going_backwards_changes_nothing() {
        let mut w = TimerWheel::new(ms(100), MS, 4);
        w.schedule(ms(150), 'a').unwrap();
        let next = w.next_deadline();
        assert!(fired(&mut w, ms(10)).is_empty());
        assert_eq!(w.next_deadline(), next);
        assert!(fired(&mut w, ms(149)).is_empty());
        assert_eq!(fired(&mut w, ms(150)), vec!['a']);
    }

    #[test]
    fn odd_and_zero_ticks() {
        let tick = Duration::from_nanos(3);
        let mut w = TimerWheel::new(Time(1), tick, 4);
        w.schedule(Time(7), 'a').unwrap();
        assert_eq!(w.next_deadline(), Some(Time(9)));
        assert!(fired(&mut w, Time(8)).is_empty());
        assert_eq!(fired(&mut w, Time(9)), vec!['a']);
        let mut zero = TimerWheel::new(Time(0), Duration::ZERO, 4);
        zero.schedule(Time(5), 'z').unwrap();
        assert_eq!(zero.next_deadline(), Some(Time(5)));
        assert_eq!(fired(&mut zero, Time(5)), vec!['z']);
    }

    #[derive(Debug, Clone)]
    enum Op {
        Schedule(i128),
        ScheduleAt(u64),
        Cancel(usize),
        Reschedule(usize, i128),
        Advance(u64),
        AdvanceToNext,
    }

    /// Offsets from the current time, in nanoseconds: past, sub-tick, near, far and extreme.
    fn offset() -> impl Strategy<Value = i128> {
        prop_oneof![
            4 => -2_000_000_000i128..=0,
            8 => 0i128..5_000_000,
            6 => 0i128..10_000_000_000,
            2 => 0i128..(1 << 50),
            1 => Just(i128::from(u64::MAX)),
        ]
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            6 => offset().prop_map(Op::Schedule),
            1 => any::<u64>().prop_map(Op::ScheduleAt),
            3 => any::<usize>().prop_map(Op::Cancel),
            3 => (any::<usize>(), offset()).prop_map(|(i, o)| Op::Reschedule(i, o)),
            4 => prop_oneof![
                6 => 0u64..3_000_000,
                3 => 0u64..200_000_000_000,
                1 => 0u64..(1 << 52),
                1 => Just(u64::MAX),
            ]
            .prop_map(Op::Advance),
            2 => Just(Op::AdvanceToNext),
        ]
    }

    fn shifted(now: u64, offset: i128) -> Time {
        Time((i128::from(now) + offset).clamp(0, i128::from(u64::MAX)) as u64)
    }

    /// The reference: a timer is due once the clock reaches its deadline rounded up to a tick.
    fn due_at(at: Time, tick: u64) -> u64 {
        let rounded = u128::from(at.0).div_ceil(u128::from(tick)) * u128::from(tick);
        rounded.min(u128::from(u64::MAX)) as u64
    }

    fn run_against_model(tick: u64, start: u64, capacity: usize, ops: Vec<Op>) {
        let mut wheel = TimerWheel::new(Time(start), Duration::from_nanos(tick), capacity);
        let mut model: HashMap<TimerId, (Time, u64)> = HashMap::new();
        let mut issued: Vec<TimerId> = Vec::new();
        let mut now = start;
        let mut serial = 0u64;
        for op in ops {
            let op = match op {
                Op::ScheduleAt(t) => Op::Schedule(i128::from(t) - i128::from(now)),
                op => op,
            };
            match op {
                Op::ScheduleAt(_) => unreachable!("rewritten above"),
                Op::Schedule(offset) => {
                    let at = shifted(now, offset);
                    serial += 1;
                    match wheel.schedule(at, serial) {
                        Ok(id) => {
                            assert!(model.len() < capacity);
                            assert!(model.insert(id, (at, serial)).is_none(), "id reused");
                            issued.push(id);
                        }
                        Err(TimersFull) => assert_eq!(model.len(), capacity),
                    }
                }
                Op::Cancel(i) if !issued.is_empty() => {
                    let id = issued[i % issued.len()];
                    assert_eq!(wheel.cancel(id), model.remove(&id).map(|(_, p)| p));
                }
                Op::Reschedule(i, o) if !issued.is_empty() => {
                    let id = issued[i % issued.len()];
                    let at = shifted(now, o);
                    let pending = model.get_mut(&id).map(|e| e.0 = at).is_some();
                    assert_eq!(wheel.reschedule(id, at), pending);
                }
                Op::Cancel(_) | Op::Reschedule(..) => {}
                Op::Advance(_) | Op::AdvanceToNext => {
                    let to = match op {
                        Op::Advance(step) => now.saturating_add(step),
                        _ => wheel.next_deadline().map_or(now, |t| t.0.max(now)),
                    };
                    let before = now;
                    now = to;
                    let mut got = Vec::new();
                    wheel.advance(Time(now), |id, p| got.push((id, p)));
                    let mut last = 0;
                    for &(id, p) in &got {
                        let (at, payload) = model.remove(&id).expect("fired a non-pending timer");
                        assert_eq!(p, payload);
                        let due = due_at(at, tick);
                        assert!(at.0 <= now, "fired early");
                        assert!(due <= now, "fired before its tick");
                        let order = due.max(before);
                        assert!(order >= last, "out of order");
                        last = order;
                    }
                    let missed = model.values().find(|(at, _)| due_at(*at, tick) <= now);
                    assert!(missed.is_none(), "not fired: {missed:?} at {now}");
                }
            }
            assert_eq!(wheel.len(), model.len());
            let earliest = model.values().map(|(at, _)| due_at(*at, tick)).min();
            match (wheel.next_deadline(), earliest) {
                (Some(next), Some(earliest)) => assert!(next.0 <= earliest),
                (None, None) => {}
                other => panic!("next_deadline disagrees with the model: {other:?}"),
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn wheel_matches_reference_model(
            tick in prop_oneof![Just(1u64), Just(1_000), Just(1_000_000), 1u64..10_000_000],
            start in prop_oneof![Just(0u64), 0u64..(1 << 45), Just(u64::MAX - 10_000_000_000)],
            capacity in 0usize..48,
            ops in proptest::collection::vec(op(), 1..200),
        ) {
            run_against_model(tick, start, capacity, ops);
        }
    }
}
