//! The Dead Nonce List of one forwarding thread: loop detection after the PIT entry is gone.
//!
//! When a PIT entry is erased, the (name, nonce) pairs it saw are recorded here, so an Interest
//! that comes back around a loop after its PIT entry expired is still caught (NFD semantics, as
//! the NFD Developer's Guide describes its Dead Nonce List; one list per forwarding thread as in
//! the YaNFD paper, sections 2 and 3.2.2).
//!
//! The list is probabilistic: it keeps a 64-bit fingerprint of the name hash mixed with the
//! nonce, not the name. Fingerprints sit in a ring buffer in insertion order (eviction is FIFO)
//! and in an open-addressing multiset that answers membership in O(1); a pair added twice is
//! counted, so evicting the older copy keeps the newer one.
//!
//! Entries should live about one `lifetime`. Instead of timestamps, the list adapts how many
//! entries it keeps (its capacity): every lifetime / 5 a mark records the current position in
//! the insertion stream, and the number of marks newer than the oldest kept entry tells its age
//! in fifths of a lifetime. If, over one lifetime, every count exceeded 5 the oldest entry
//! outlived the lifetime and capacity shrinks ×0.9; if every count fell short of 5 it grows
//! ×1.2; capacity stays within [min, max]. Marks are kept apart from the entries (a small fixed
//! queue of positions), so capacity counts entries only and marks never push one out.
//!
//! Invariants: all memory is allocated in [`DeadNonceList::new`] for `max_capacity` entries and
//! never again; the number of entries never exceeds `max_capacity`; a call evicts at most 64
//! entries, so after a shrink the excess drains over several calls.

use core::time::Duration;

use kite_packet::Nonce;

use crate::time::Time;

/// Shortest lifetime accepted; shorter configured values are raised to it.
const MIN_LIFETIME: Duration = Duration::from_millis(50);
/// Largest `max_capacity` accepted (NFD's upper bound); larger values are lowered to it.
const CAPACITY_LIMIT: usize = 1 << 24;
/// Marks inserted per lifetime, and the mark count that means "entries live one lifetime".
const MARKS_PER_LIFETIME: u32 = 5;
/// Mark positions remembered; more than `MARKS_PER_LIFETIME + 1` so "too old" stays visible.
const MARK_SLOTS: usize = 16;
/// Most entries one call evicts, bounding the work of any single call.
const EVICT_LIMIT: usize = 64;
/// Most marks one `tick` inserts after the thread was idle; older ones carry no extra meaning.
const CATCH_UP_MARKS: u64 = MARKS_PER_LIFETIME as u64;

/// Settings of a Dead Nonce List. Out-of-range values are clamped by [`DeadNonceList::new`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DnlConfig {
    /// How long an entry should stay (default 6 s; at least 50 ms).
    pub lifetime: Duration,
    /// Capacity at start, in entries (default 2^14).
    pub initial_capacity: usize,
    /// Lowest capacity adaptation may reach (default 2^10).
    pub min_capacity: usize,
    /// Highest capacity, and what memory is allocated for (default 2^16; at most 2^24).
    pub max_capacity: usize,
    /// Whether capacity adapts to the insertion rate; `false` keeps `initial_capacity`.
    pub adaptive: bool,
}

impl Default for DnlConfig {
    fn default() -> Self {
        DnlConfig {
            lifetime: Duration::from_secs(6),
            initial_capacity: 1 << 14,
            min_capacity: 1 << 10,
            max_capacity: 1 << 16,
            adaptive: true,
        }
    }
}

impl DnlConfig {
    /// The configuration with every value moved into its allowed range.
    fn clamped(self) -> DnlConfig {
        let max_capacity = self.max_capacity.clamp(1, CAPACITY_LIMIT);
        let min_capacity = self.min_capacity.clamp(1, max_capacity);
        DnlConfig {
            lifetime: self.lifetime.max(MIN_LIFETIME),
            initial_capacity: self.initial_capacity.clamp(min_capacity, max_capacity),
            min_capacity,
            max_capacity,
            adaptive: self.adaptive,
        }
    }
}

/// A fixed-memory, probabilistic set of (name, nonce) pairs from PIT entries that are gone.
#[derive(Debug)]
pub struct DeadNonceList {
    config: DnlConfig,
    ring: Ring,
    table: FingerprintTable,
    marks: MarkQueue,
    capacity: usize,
    /// Entries ever added: the stream position the next entry takes.
    added: u64,
    mark_interval_ns: u64,
    /// When the next mark is due; `u64::MAX` when capacity is fixed.
    next_mark_ns: u64,
    marks_this_period: u32,
    period_min_marks: usize,
    period_max_marks: usize,
}

impl DeadNonceList {
    /// An empty list; allocates all its memory now, for `config.max_capacity` entries.
    pub fn new(config: DnlConfig, now: Time) -> Self {
        let config = config.clamped();
        let lifetime_ns = u64::try_from(config.lifetime.as_nanos()).unwrap_or(u64::MAX);
        let mark_interval_ns = lifetime_ns / u64::from(MARKS_PER_LIFETIME);
        let next_mark_ns = if config.adaptive {
            now.0.saturating_add(mark_interval_ns)
        } else {
            u64::MAX
        };
        DeadNonceList {
            config,
            ring: Ring::new(config.max_capacity),
            table: FingerprintTable::new(config.max_capacity),
            marks: MarkQueue::default(),
            capacity: config.initial_capacity,
            added: 0,
            mark_interval_ns,
            next_mark_ns,
            marks_this_period: 0,
            period_min_marks: usize::MAX,
            period_max_marks: 0,
        }
    }

    /// Records that (name, nonce) was seen by a PIT entry that is now gone.
    ///
    /// `name_hash` is the full-name hash the input stage computed (`NameHashes::full()`).
    /// Makes room first by evicting the oldest entries, at most 64 of them. `now` is unused:
    /// the list keeps no timestamps, and [`tick`](Self::tick) places the marks.
    pub fn add(&mut self, name_hash: u64, nonce: Nonce, _now: Time) {
        self.evict_above(self.capacity - 1);
        let fp = fingerprint(name_hash, nonce);
        if let Some(old) = self.ring.push(fp) {
            self.table.remove_one(old);
        }
        self.table.insert(fp);
        self.added += 1;
    }

    /// Whether (name, nonce) is in the list (a loop).
    pub fn has(&self, name_hash: u64, nonce: Nonce) -> bool {
        self.table.contains(fingerprint(name_hash, nonce))
    }

    /// Starts loading the table slot [`DeadNonceList::has`] of this pair reads first, so a
    /// burst's checks do not each wait for memory.
    #[inline]
    pub fn prefetch(&self, name_hash: u64, nonce: Nonce) {
        let fp = fingerprint(name_hash, nonce);
        crate::index::prefetch(&self.table.keys[self.table.home(fp)]);
    }

    /// Inserts marks and adjusts capacity when due; cheap (a comparison) when nothing is due.
    /// Called once per burst by the forwarding thread.
    pub fn tick(&mut self, now: Time) {
        if now.0 < self.next_mark_ns || !self.config.adaptive {
            return;
        }
        let due = ((now.0 - self.next_mark_ns) / self.mark_interval_ns).saturating_add(1);
        for _ in 0..due.min(CATCH_UP_MARKS) {
            self.place_mark();
        }
        self.next_mark_ns = self
            .next_mark_ns
            .saturating_add(due.saturating_mul(self.mark_interval_ns));
        self.evict_above(self.capacity);
    }

    /// Number of entries (marks are not entries).
    pub fn len(&self) -> usize {
        self.ring.len
    }

    /// Whether the list holds no entry.
    pub fn is_empty(&self) -> bool {
        self.ring.len == 0
    }

    /// Current capacity in entries: how many the list keeps before evicting the oldest.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// How long entries should stay, after clamping.
    pub fn lifetime(&self) -> Duration {
        self.config.lifetime
    }

    /// Bytes allocated (for the memory report); fixed at construction.
    pub fn memory_bytes(&self) -> usize {
        self.ring.memory_bytes() + self.table.memory_bytes()
    }

    /// Evicts oldest entries while more than `target` remain, at most [`EVICT_LIMIT`].
    fn evict_above(&mut self, target: usize) {
        for _ in 0..EVICT_LIMIT {
            if self.ring.len <= target {
                return;
            }
            if let Some(fp) = self.ring.pop() {
                self.table.remove_one(fp);
            }
        }
    }

    /// Records the current stream position as a mark; adjusts capacity once per lifetime.
    fn place_mark(&mut self) {
        let oldest = self.added - self.ring.len as u64;
        self.marks.push(self.added, oldest);
        let present = self.marks.len;
        self.period_min_marks = self.period_min_marks.min(present);
        self.period_max_marks = self.period_max_marks.max(present);
        self.marks_this_period += 1;
        if self.marks_this_period == MARKS_PER_LIFETIME {
            self.adjust_capacity();
        }
    }

    /// Shrinks when entries outlived the lifetime all period long, grows when they never
    /// reached it; a period that straddles the target leaves capacity alone.
    fn adjust_capacity(&mut self) {
        let expected = MARKS_PER_LIFETIME as usize;
        let c = self.capacity;
        if self.period_min_marks > expected {
            self.capacity = (c - c / 10).max(self.config.min_capacity);
        } else if self.period_max_marks < expected {
            self.capacity = (c + c.div_ceil(5)).min(self.config.max_capacity);
        }
        self.marks_this_period = 0;
        self.period_min_marks = usize::MAX;
        self.period_max_marks = 0;
    }
}

/// The fingerprint of (name, nonce): the name hash with the nonce mixed in, never zero.
///
/// The nonce goes through an odd multiplier (a bijection) and the sum through a 64-bit
/// finaliser (also a bijection), so two nonces of one name never share a fingerprint and
/// every output bit depends on every input bit (the table indexes by the low bits).
#[inline]
fn fingerprint(name_hash: u64, nonce: Nonce) -> u64 {
    let mut x = name_hash ^ u64::from(nonce.as_u32()).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^= x >> 31;
    if x == EMPTY {
        1
    } else {
        x
    }
}

/// Fingerprints in insertion order, oldest first, in a buffer allocated once.
#[derive(Debug)]
struct Ring {
    slots: Box<[u64]>,
    head: usize,
    len: usize,
}

impl Ring {
    fn new(size: usize) -> Self {
        Ring {
            slots: vec![0; size].into_boxed_slice(),
            head: 0,
            len: 0,
        }
    }

    /// Appends `fp`; when full, first removes the oldest fingerprint and returns it.
    fn push(&mut self, fp: u64) -> Option<u64> {
        let displaced = if self.len == self.slots.len() {
            self.pop()
        } else {
            None
        };
        let mut tail = self.head + self.len;
        if tail >= self.slots.len() {
            tail -= self.slots.len();
        }
        self.slots[tail] = fp;
        self.len += 1;
        displaced
    }

    fn pop(&mut self) -> Option<u64> {
        if self.len == 0 {
            return None;
        }
        let fp = self.slots[self.head];
        self.head += 1;
        if self.head == self.slots.len() {
            self.head = 0;
        }
        self.len -= 1;
        Some(fp)
    }

    fn memory_bytes(&self) -> usize {
        core::mem::size_of_val(&*self.slots)
    }
}

/// The key of a free table slot; [`fingerprint`] never yields it.
const EMPTY: u64 = 0;

/// A multiset of fingerprints: linear probing with backward-shift deletion, at most 3/4 full.
///
/// Hand-rolled rather than a preallocated hash map because deletion leaves no tombstones, so
/// the table never needs the whole-table rehash a tombstoned table eventually does (a latency
/// spike on the packet path), and the memory is plainly fixed.
#[derive(Debug)]
struct FingerprintTable {
    keys: Box<[u64]>,
    counts: Box<[u32]>,
    mask: usize,
}

impl FingerprintTable {
    /// A table for up to `entries` fingerprints; always keeps a free slot so probes end.
    fn new(entries: usize) -> Self {
        let size = (entries + entries / 3 + 1).next_power_of_two();
        FingerprintTable {
            keys: vec![EMPTY; size].into_boxed_slice(),
            counts: vec![0; size].into_boxed_slice(),
            mask: size - 1,
        }
    }

    #[inline]
    fn home(&self, fp: u64) -> usize {
        fp as usize & self.mask
    }

    /// The slot holding `fp`, or the free slot where it would go.
    #[inline]
    fn probe(&self, fp: u64) -> usize {
        let mut i = self.home(fp);
        while self.keys[i] != fp && self.keys[i] != EMPTY {
            i = (i + 1) & self.mask;
        }
        i
    }

    fn contains(&self, fp: u64) -> bool {
        self.keys[self.probe(fp)] == fp
    }

    fn insert(&mut self, fp: u64) {
        let i = self.probe(fp);
        self.keys[i] = fp;
        self.counts[i] += 1;
    }

    /// Removes one copy of `fp`, if present.
    fn remove_one(&mut self, fp: u64) {
        let i = self.probe(fp);
        if self.keys[i] != fp {
            return;
        }
        self.counts[i] -= 1;
        if self.counts[i] == 0 {
            self.close_gap(i);
        }
    }

    /// Empties slot `hole`, moving later keys of its probe run back so no search stops early.
    fn close_gap(&mut self, mut hole: usize) {
        let mut j = (hole + 1) & self.mask;
        while self.keys[j] != EMPTY {
            let home = self.home(self.keys[j]);
            // The key at j may fill the hole only if the hole lies between its home and j.
            if j.wrapping_sub(home) & self.mask >= j.wrapping_sub(hole) & self.mask {
                self.keys[hole] = self.keys[j];
                self.counts[hole] = self.counts[j];
                hole = j;
            }
            j = (j + 1) & self.mask;
        }
        self.keys[hole] = EMPTY;
        self.counts[hole] = 0;
    }

    fn memory_bytes(&self) -> usize {
        core::mem::size_of_val(&*self.keys) + core::mem::size_of_val(&*self.counts)
    }
}

/// Stream positions of recent marks, oldest first, in a fixed array.
#[derive(Debug, Default)]
struct MarkQueue {
    positions: [u64; MARK_SLOTS],
    head: usize,
    len: usize,
}

impl MarkQueue {
    /// Adds a mark at `position`, first dropping marks older than the oldest kept entry
    /// (`oldest`), then the oldest mark if still full: a full queue already means "too old".
    fn push(&mut self, position: u64, oldest: u64) {
        while self.len > 0 && self.positions[self.head] < oldest {
            self.drop_front();
        }
        if self.len == MARK_SLOTS {
            self.drop_front();
        }
        self.positions[(self.head + self.len) % MARK_SLOTS] = position;
        self.len += 1;
    }

    fn drop_front(&mut self) {
        self.head = (self.head + 1) % MARK_SLOTS;
        self.len -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const NAME_A: u64 = 0x1234_5678_9abc_def0;
    const NAME_B: u64 = 0x0fed_cba9_8765_4321;

    fn fixed(capacity: usize) -> DeadNonceList {
        let config = DnlConfig {
            initial_capacity: capacity,
            min_capacity: 1,
            max_capacity: capacity,
            adaptive: false,
            ..DnlConfig::default()
        };
        DeadNonceList::new(config, Time::ZERO)
    }

    fn n(x: u32) -> Nonce {
        Nonce::from(x)
    }

    /// Name hashes shaped like one forwarding thread's: all share their low 16 bits.
    fn name(i: u64) -> u64 {
        (i.wrapping_mul(0x9e37_79b9_7f4a_7c15) << 16) | 0xbeef
    }

    #[test]
    fn add_then_has() {
        let mut d = fixed(16);
        assert!(d.is_empty());
        assert!(!d.has(NAME_A, n(7)));
        d.add(NAME_A, n(7), Time::ZERO);
        assert!(d.has(NAME_A, n(7)));
        assert_eq!(d.len(), 1);
        assert!(!d.is_empty());
    }

    #[test]
    fn other_nonce_or_other_name_is_not_found() {
        let mut d = fixed(16);
        d.add(NAME_A, n(7), Time::ZERO);
        assert!(!d.has(NAME_A, n(8)));
        assert!(!d.has(NAME_B, n(7)));
        assert!(!d.has(NAME_A ^ 1, n(7)));
    }

    #[test]
    fn nonces_of_one_name_never_share_a_fingerprint() {
        let mut seen = hashbrown::HashSet::new();
        for x in 0..100_000 {
            assert!(seen.insert(fingerprint(NAME_A, n(x))), "nonce {x}");
        }
        assert_ne!(fingerprint(NAME_A, n(0)), EMPTY);
    }

    #[test]
    fn duplicates_are_counted() {
        let mut d = fixed(3);
        d.add(NAME_A, n(1), Time::ZERO);
        d.add(NAME_A, n(1), Time::ZERO);
        d.add(NAME_B, n(2), Time::ZERO);
        d.add(NAME_B, n(3), Time::ZERO); // evicts the first copy of (A, 1)
        assert!(d.has(NAME_A, n(1)));
        d.add(NAME_B, n(4), Time::ZERO); // evicts the second copy
        assert!(!d.has(NAME_A, n(1)));
        assert!(d.has(NAME_B, n(2)));
        assert_eq!(d.len(), 3);
    }

    #[test]
    fn eviction_is_fifo_when_over_capacity() {
        let mut d = fixed(4);
        for x in 0..6 {
            d.add(name(x), n(x as u32), Time::ZERO);
        }
        assert_eq!(d.len(), 4);
        for x in 0..2 {
            assert!(!d.has(name(x), n(x as u32)), "{x} should be evicted");
        }
        for x in 2..6 {
            assert!(d.has(name(x), n(x as u32)), "{x} should be kept");
        }
    }

    #[test]
    fn config_values_are_clamped() {
        let d = DeadNonceList::new(
            DnlConfig {
                lifetime: Duration::from_millis(1),
                initial_capacity: 0,
                min_capacity: 100,
                max_capacity: 10,
                adaptive: true,
            },
            Time::ZERO,
        );
        assert_eq!(d.lifetime(), Duration::from_millis(50));
        assert_eq!(d.capacity(), 10);
        let big = DnlConfig {
            max_capacity: usize::MAX,
            initial_capacity: usize::MAX,
            ..DnlConfig::default()
        }
        .clamped();
        assert_eq!(big.max_capacity, 1 << 24);
        assert_eq!(big.initial_capacity, 1 << 24);
        let d = DeadNonceList::new(DnlConfig::default(), Time::ZERO);
        assert_eq!(d.lifetime(), Duration::from_secs(6));
        assert_eq!(d.capacity(), 1 << 14);
    }

    /// Adds `rate` entries per second, evenly spaced, ticking after each, for `secs` seconds.
    fn drive(d: &mut DeadNonceList, start: Time, rate: u64, secs: u64) -> Time {
        let mut t = start;
        if rate == 0 {
            for _ in 0..secs * 100 {
                t = t + Duration::from_millis(10);
                d.tick(t);
            }
            return t;
        }
        let step = Duration::from_nanos(1_000_000_000 / rate);
        for i in 0..rate * secs {
            t = t + step;
            d.add(name(i), n(i as u32), t);
            d.tick(t);
        }
        t
    }

    fn adaptive(initial: usize) -> DeadNonceList {
        let config = DnlConfig {
            lifetime: Duration::from_secs(1),
            initial_capacity: initial,
            min_capacity: 64,
            max_capacity: 1 << 15,
            adaptive: true,
        };
        DeadNonceList::new(config, Time::ZERO)
    }

    fn assert_near(capacity: usize, target: usize) {
        let (lo, hi) = (target * 6 / 10, target * 14 / 10);
        assert!(
            (lo..=hi).contains(&capacity),
            "capacity {capacity} not within [{lo}, {hi}]"
        );
    }

    #[test]
    fn capacity_grows_under_a_high_rate() {
        let mut d = adaptive(1024);
        drive(&mut d, Time::ZERO, 8000, 30);
        assert_near(d.capacity(), 8000);
    }

    #[test]
    fn capacity_shrinks_under_a_low_rate() {
        let mut d = adaptive(16384);
        drive(&mut d, Time::ZERO, 500, 60);
        assert_near(d.capacity(), 500);
    }

    #[test]
    fn capacity_follows_a_rate_change() {
        let mut d = adaptive(1024);
        let t = drive(&mut d, Time::ZERO, 4000, 20);
        assert_near(d.capacity(), 4000);
        drive(&mut d, t, 1000, 30);
        assert_near(d.capacity(), 1000);
    }

    #[test]
    fn capacity_stays_within_bounds() {
        let mut d = adaptive(8192);
        drive(&mut d, Time::ZERO, 100_000, 20);
        assert_eq!(d.capacity(), 1 << 15);
        assert_eq!(d.len(), 1 << 15);
        let mut d = adaptive(1024);
        drive(&mut d, Time::ZERO, 0, 60);
        assert_eq!(d.capacity(), 64);
    }

    #[test]
    fn fixed_mode_never_changes_capacity() {
        let config = DnlConfig {
            lifetime: Duration::from_secs(1),
            initial_capacity: 1000,
            min_capacity: 64,
            adaptive: false,
            ..DnlConfig::default()
        };
        for rate in [0, 100, 20_000] {
            let mut d = DeadNonceList::new(config, Time::ZERO);
            drive(&mut d, Time::ZERO, rate, 20);
            assert_eq!(d.capacity(), 1000, "rate {rate}");
            assert_eq!(d.len(), 1000.min(rate as usize * 20));
        }
    }

    #[test]
    fn one_call_evicts_at_most_the_limit() {
        let config = DnlConfig {
            lifetime: Duration::from_secs(1),
            initial_capacity: 4096,
            min_capacity: 16,
            max_capacity: 4096,
            adaptive: true,
        };
        let mut d = DeadNonceList::new(config, Time::ZERO);
        for i in 0..4096 {
            d.add(name(i), n(1), Time::ZERO);
        }
        // First lifetime: mark counts 1..=5, no change. Second: 6..=10, shrink at 2 s.
        let mut t = Time::ZERO;
        for _ in 0..9 {
            t = t + Duration::from_millis(200);
            d.tick(t);
            assert_eq!(d.capacity(), 4096);
        }
        t = t + Duration::from_millis(200);
        d.tick(t);
        assert_eq!(d.capacity(), 3687);
        assert_eq!(d.len(), 4096 - 64);
        d.add(name(9999), n(1), t);
        assert_eq!(d.len(), 4096 - 64 - 64 + 1);
        assert!(d.has(name(9999), n(1)));
        assert!(!d.has(name(127), n(1)));
        assert!(d.has(name(128), n(1)));
    }

    #[test]
    fn a_late_tick_catches_up_a_bounded_number_of_marks() {
        let mut d = adaptive(1024);
        d.add(NAME_A, n(1), Time::ZERO);
        d.tick(Time::from_millis(3_600_000));
        assert_eq!(d.marks.len, CATCH_UP_MARKS as usize);
        assert_eq!(d.next_mark_ns, Time::from_millis(3_600_200).0);
        d.tick(Time::from_millis(3_600_100));
        assert_eq!(d.marks.len, CATCH_UP_MARKS as usize);
    }

    #[test]
    fn mark_queue_forgets_marks_older_than_the_oldest_entry() {
        let mut q = MarkQueue::default();
        for p in 0..MARK_SLOTS as u64 + 3 {
            q.push(p, 0);
        }
        assert_eq!(q.len, MARK_SLOTS);
        assert_eq!(q.positions[q.head], 3);
        q.push(30, 10);
        assert_eq!(q.len, MARK_SLOTS - 6);
    }

    #[test]
    fn table_keeps_probe_runs_intact_across_removals() {
        let mut t = FingerprintTable::new(5);
        assert_eq!(t.keys.len(), 8);
        // Homes 6, 6, 7, 6 wrap around the end; then remove from the middle of the run.
        let keys = [0x16, 0x26, 0x17, 0x36, 0x11];
        for k in keys {
            t.insert(k);
        }
        t.remove_one(0x26);
        t.remove_one(0x16);
        for k in [0x17, 0x36, 0x11] {
            assert!(t.contains(k), "{k:#x}");
        }
        assert!(!t.contains(0x26) && !t.contains(0x16));
        t.remove_one(0x99);
        t.remove_one(0x36);
        t.remove_one(0x17);
        t.remove_one(0x11);
        assert!(t.keys.iter().all(|&k| k == EMPTY));
        assert!(t.counts.iter().all(|&c| c == 0));
    }

    #[test]
    fn memory_is_fixed_after_construction() {
        let mut d = DeadNonceList::new(DnlConfig::default(), Time::ZERO);
        assert_eq!(d.memory_bytes(), (1 << 16) * 8 + (1 << 17) * 12);
        let storage = |d: &DeadNonceList| {
            (
                d.memory_bytes(),
                d.ring.slots.as_ptr(),
                d.ring.slots.len(),
                d.table.keys.as_ptr(),
                d.table.keys.len(),
                d.table.counts.as_ptr(),
            )
        };
        let before = storage(&d);
        let mut t = Time::ZERO;
        for i in 0..1_000_000u64 {
            t = t + Duration::from_micros(10);
            d.add(name(i % 300_000), n((i % 7) as u32), t);
            assert!(d.has(name(i % 300_000), n((i % 7) as u32)));
            d.tick(t);
        }
        assert_eq!(storage(&d), before);
        assert!(d.len() <= 1 << 16);
    }

    #[derive(Debug, Clone)]
    enum Op {
        Add(u64, u32),
        Tick(u64),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => (0..8u64, 0..8u32).prop_map(|(a, b)| Op::Add(a, b)),
            1 => (0..700u64).prop_map(Op::Tick),
        ]
    }

    proptest! {
        #[test]
        fn bounded_and_recent_additions_are_kept(
            adaptive in any::<bool>(),
            ops in proptest::collection::vec(op(), 1..400),
        ) {
            let config = DnlConfig {
                lifetime: Duration::from_millis(500),
                initial_capacity: 16,
                min_capacity: 8,
                max_capacity: 64,
                adaptive,
            };
            let mut d = DeadNonceList::new(config, Time::ZERO);
            let mut t = Time::ZERO;
            let mut history: Vec<(u64, u32)> = Vec::new();
            for op in ops {
                match op {
                    Op::Add(a, b) => {
                        d.add(name(a), n(b), t);
                        history.push((a, b));
                    }
                    Op::Tick(ms) => {
                        t = t + Duration::from_millis(ms);
                        d.tick(t);
                    }
                }
                prop_assert!(d.len() <= 64);
                prop_assert!((8..=64).contains(&d.capacity()));
                prop_assert!(d.len() >= history.len().min(8));
                // The list holds exactly the newest len() additions.
                let kept = &history[history.len() - d.len()..];
                for a in 0..8 {
                    for b in 0..8 {
                        prop_assert_eq!(d.has(name(a), n(b)), kept.contains(&(a, b)));
                    }
                }
            }
        }
    }
}
