//! A hash index of `u32` ids in cache-line buckets, made to be prefetched.
//!
//! The FIB and the PIT-CS table keep their entries in slabs and find them through an index of
//! slot ids keyed by name hash. At 10^6 FIB entries a lookup through hashbrown touched two
//! cold cache lines before reaching the entry (a control group, then the id), and hashbrown
//! offers no way to prefetch either; a burst of Interests then waits for each miss in turn.
//! Here one 64-octet bucket holds seven (tag, id) lanes, so a probe is one line whose address
//! is known from the hash alone: [`BucketIndex::prefetch`] lets a burst issue all its misses
//! at once before the first lookup (NDN-DPDK paper, section 4; measured on a 2-vCPU x86-64 VM, a bare
//! hash-table forwarding kernel with staged prefetch reached 7.8–8.6 M exchanges/s).
//!
//! Collisions: an insertion into a full bucket moves on to the next one (linear probing by
//! bucket) and counts itself in the `overflow` of every bucket it passes; a lookup stops at the
//! first bucket whose `overflow` is zero, and a removal decrements the counts it added, so
//! churn never leaves a probe longer than the table's contents require. The load is kept at
//! or under half the lanes, where fewer than 2 % of buckets overflow.

/// Lanes per bucket.
const LANES: usize = 7;
/// An empty lane's id.
const EMPTY: u32 = u32::MAX;

/// One cache line: seven lanes and the count of entries that overflowed past it.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
struct Bucket {
    tags: [u32; LANES],
    overflow: u32,
    ids: [u32; LANES],
    _pad: u32,
}

const _: () = assert!(core::mem::size_of::<Bucket>() == 64);

impl Bucket {
    const EMPTY: Bucket = Bucket {
        tags: [0; LANES],
        overflow: 0,
        ids: [EMPTY; LANES],
        _pad: 0,
    };

    /// Bit `l` set when lane `l` holds `tag` (written so the compiler compares all lanes at
    /// once, without branches).
    #[inline(always)]
    fn matches(&self, tag: u32) -> u32 {
        let mut mask = 0;
        for (l, &t) in self.tags.iter().enumerate() {
            mask |= u32::from(t == tag) << l;
        }
        mask
    }
}

/// Where a hash lives: its home bucket (from the high half) and its tag (a multiplicative mix
/// of all of it). The high half, not the low: every name one forwarding thread owns shares the
/// low bits of its dispatch hash (measured: fed to hashbrown unchanged they
/// slowed lookups 35–150×).
#[inline(always)]
fn split(hash: u64, mask: usize) -> (usize, u32) {
    let home = (hash >> 32) as usize & mask;
    // Never 0, the tag of an empty lane, so a match needs no second look at the id.
    let tag = (hash.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as u32 | 1;
    (home, tag)
}

/// Ids keyed by 64-bit hashes; several ids may share a hash (callers compare their entries).
#[derive(Clone, Debug)]
pub struct BucketIndex {
    buckets: Vec<Bucket>,
    mask: usize,
    len: usize,
}

impl Default for BucketIndex {
    fn default() -> Self {
        Self::with_capacity(0)
    }
}

impl BucketIndex {
    /// An index that holds `capacity` ids without growing.
    pub fn with_capacity(capacity: usize) -> Self {
        let buckets = (capacity * 2).div_ceil(LANES).next_power_of_two().max(1);
        BucketIndex {
            buckets: vec![Bucket::EMPTY; buckets],
            mask: buckets - 1,
            len: 0,
        }
    }

    /// Ids held.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Starts loading the bucket `hash` lives in, so a lookup shortly after finds it in cache.
    #[inline(always)]
    pub fn prefetch(&self, hash: u64) {
        let (home, _) = split(hash, self.mask);
        prefetch(&self.buckets[home]);
    }

    /// Calls `each` with every id stored under `hash`'s tag until it returns true; returns
    /// that id. Ids of other hashes may be offered (tags are 32 bits): `each` must compare.
    #[inline]
    pub fn find(&self, hash: u64, mut each: impl FnMut(u32) -> bool) -> Option<u32> {
        let (mut i, tag) = split(hash, self.mask);
        loop {
            let b = &self.buckets[i];
            let mut mask = b.matches(tag);
            while mask != 0 {
                let id = b.ids[mask.trailing_zeros() as usize];
                if each(id) {
                    return Some(id);
                }
                mask &= mask - 1;
            }
            if b.overflow == 0 {
                return None;
            }
            i = (i + 1) & self.mask;
        }
    }

    /// Every id stored under `hash`'s tag (a superset of the ids inserted with `hash`).
    #[inline]
    pub fn candidates(&self, hash: u64) -> Candidates<'_> {
        let (bucket, tag) = split(hash, self.mask);
        Candidates {
            index: self,
            bucket,
            tag,
            mask: self.buckets[bucket].matches(tag),
        }
    }

    /// Adds `id` under `hash`. `hash_of` gives the hash of any id already held, for when the
    /// index grows (it then doubles, so growth is amortised O(1)).
    pub fn insert(&mut self, hash: u64, id: u32, hash_of: impl Fn(u32) -> u64) {
        debug_assert_ne!(id, EMPTY, "the empty id cannot be stored");
        if (self.len + 1) * 2 > self.buckets.len() * LANES {
            self.grow(hash_of);
        }
        self.place(hash, id);
        self.len += 1;
    }

    /// Removes `id`, stored under `hash`; false when it is not there.
    pub fn remove(&mut self, hash: u64, id: u32) -> bool {
        let (home, tag) = split(hash, self.mask);
        let mut i = home;
        loop {
            let b = &mut self.buckets[i];
            if let Some(lane) = (0..LANES).find(|&l| b.ids[l] == id && b.tags[l] == tag) {
                b.ids[lane] = EMPTY;
                b.tags[lane] = 0;
                self.len -= 1;
                // Undo the overflow counts this id added on its way from home to here.
                let mut j = home;
                while j != i {
                    self.buckets[j].overflow -= 1;
                    j = (j + 1) & self.mask;
                }
                return true;
            }
            if b.overflow == 0 {
                return false;
            }
            i = (i + 1) & self.mask;
        }
    }

    /// Stores without counting or growing: the first free lane from `hash`'s home bucket on.
    fn place(&mut self, hash: u64, id: u32) {
        let (mut i, tag) = split(hash, self.mask);
        loop {
            let b = &mut self.buckets[i];
            if let Some(lane) = b.ids.iter().position(|&x| x == EMPTY) {
                b.ids[lane] = id;
                b.tags[lane] = tag;
                return;
            }
            b.overflow += 1;
            i = (i + 1) & self.mask;
        }
    }

    fn grow(&mut self, hash_of: impl Fn(u32) -> u64) {
        let bigger = vec![Bucket::EMPTY; self.buckets.len() * 2];
        let old = core::mem::replace(&mut self.buckets, bigger);
        self.mask = self.buckets.len() - 1;
        for b in &old {
            for &id in b.ids.iter().filter(|&&id| id != EMPTY) {
                self.place(hash_of(id), id);
            }
        }
    }

    /// Octets of index per id held at the maximum load (for memory reports).
    pub const BYTES_PER_ID: usize = 2 * core::mem::size_of::<Bucket>() / LANES;
}

/// The iterator of [`BucketIndex::candidates`].
pub struct Candidates<'a> {
    index: &'a BucketIndex,
    bucket: usize,
    tag: u32,
    /// Lanes of `bucket` still to yield.
    mask: u32,
}

impl Iterator for Candidates<'_> {
    type Item = u32;

    #[inline]
    fn next(&mut self) -> Option<u32> {
        loop {
            let b = &self.index.buckets[self.bucket];
            if self.mask != 0 {
                let lane = self.mask.trailing_zeros() as usize;
                self.mask &= self.mask - 1;
                return Some(b.ids[lane]);
            }
            if b.overflow == 0 {
                return None;
            }
            self.bucket = (self.bucket + 1) & self.index.mask;
            self.mask = self.index.buckets[self.bucket].matches(self.tag);
        }
    }
}

/// Starts loading the cache line holding `r`.
#[inline(always)]
pub fn prefetch<T>(r: &T) {
    prefetch_ptr((r as *const T).cast());
}

/// Octets in a cache line.
const LINE: usize = 64;

/// Starts loading every cache line of `*r` (for objects larger than one line), from the line
/// holding its first octet to the line holding its last.
#[inline(always)]
pub fn prefetch_all<T>(r: &T) {
    let start: *const u8 = (r as *const T).cast();
    let first_line = start.wrapping_sub(start.addr() % LINE);
    for k in 0..lines_spanned(start.addr(), core::mem::size_of::<T>()) {
        prefetch_ptr(first_line.wrapping_add(k * LINE));
    }
}

/// How many cache lines `size` octets starting at address `addr` touch. Not `size / 64`
/// rounded up: an object that does not start on a line boundary reaches one line further
/// (a 248-octet PCCT entry most often spans five lines, and its last one holds the LRU links
/// an eviction reads first).
#[inline(always)]
fn lines_spanned(addr: usize, size: usize) -> usize {
    (addr % LINE + size).div_ceil(LINE)
}

/// Starts loading the cache line holding `p`.
#[inline(always)]
#[allow(unsafe_code)]
fn prefetch_ptr(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: `_mm_prefetch` needs SSE, which every x86-64 CPU has (it is in the target's
        // baseline features); a prefetch is a hint that never faults, whatever the address,
        // and callers pass addresses inside live objects anyway.
        unsafe {
            _mm_prefetch::<_MM_HINT_T0>(p.cast::<i8>());
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    #[test]
    fn finds_what_was_inserted_and_not_what_was_removed() {
        let mut ix = BucketIndex::with_capacity(4);
        let h = |id: u32| u64::from(id).wrapping_mul(0x1234_5678_9abc_def1);
        for id in 0..1000 {
            ix.insert(h(id), id, h);
        }
        assert_eq!(ix.len(), 1000);
        for id in 0..1000 {
            assert_eq!(ix.find(h(id), |x| x == id), Some(id));
        }
        for id in (0..1000).step_by(2) {
            assert!(ix.remove(h(id), id));
            assert!(!ix.remove(h(id), id));
        }
        for id in 0..1000 {
            let want = (id % 2 == 1).then_some(id);
            assert_eq!(ix.find(h(id), |x| x == id), want);
        }
        assert_eq!(ix.len(), 500);
    }

    #[test]
    fn ids_sharing_a_hash_are_all_candidates() {
        let mut ix = BucketIndex::with_capacity(16);
        // Twenty ids under one hash: they spill over three buckets.
        for id in 0..20 {
            ix.insert(42, id, |_| 42);
        }
        let mut got: Vec<u32> = ix.candidates(42).collect();
        got.sort_unstable();
        assert_eq!(got, (0..20).collect::<Vec<_>>());
        for id in 0..20 {
            assert!(ix.remove(42, id));
        }
        // Every overflow count went back to zero with the removals.
        assert!(ix.buckets.iter().all(|b| b.overflow == 0));
        assert_eq!(ix.candidates(42).count(), 0);
    }

    #[test]
    fn the_hashes_low_half_does_not_choose_the_bucket() {
        // Hashes equal in their low 32 bits (one thread's dispatch hashes) spread anyway.
        let mut ix = BucketIndex::with_capacity(1 << 12);
        for id in 0..(1u32 << 12) {
            let hash = (u64::from(id).wrapping_mul(0x9E37_79B9) << 32) | 0xABCD;
            ix.insert(hash, id, |_| unreachable!("no growth at this capacity"));
        }
        let overflowing = ix.buckets.iter().filter(|b| b.overflow > 0).count();
        assert!(
            overflowing * 10 < ix.buckets.len(),
            "{overflowing} overflow"
        );
    }

    #[test]
    fn prefetch_accepts_any_bucket() {
        let ix = BucketIndex::with_capacity(100);
        for h in [0, 1, u64::MAX, 0xFFFF_FFFF_0000_0000] {
            ix.prefetch(h);
        }
        prefetch(&ix);
        prefetch_all(&[0u8; 1000]);
    }

    #[test]
    fn a_misaligned_object_spans_one_line_more() {
        assert_eq!(lines_spanned(0, 248), 4);
        assert_eq!(lines_spanned(56, 248), 5);
        assert_eq!(lines_spanned(63, 2), 2);
        assert_eq!(lines_spanned(64, 64), 1);
    }

    proptest! {
        #[test]
        fn the_lines_spanned_cover_every_octet_and_no_more(addr in 0usize..1 << 20, size in 1usize..2000) {
            let n = lines_spanned(addr, size);
            let first = addr - addr % LINE;
            prop_assert!(first + n * LINE >= addr + size, "the last octet's line is counted");
            prop_assert!(first + (n - 1) * LINE < addr + size, "no line past the last octet");
        }

        #[test]
        fn agrees_with_a_map(ops in proptest::collection::vec((0u8..3, 0u32..300, 0u64..40), 1..600)) {
            // Hashes drawn from a small set so ids collide and buckets overflow.
            let mut ix = BucketIndex::with_capacity(8);
            let mut model: HashMap<u32, u64> = HashMap::new();
            for (op, id, h) in ops {
                let hash = h.wrapping_mul(0xD6E8_FEB8_6659_FD93) & 0xFFFF_0000_0000_00FF;
                match op {
                    0 if !model.contains_key(&id) => {
                        let m = model.clone();
                        ix.insert(hash, id, |x| m[&x]);
                        model.insert(id, hash);
                    }
                    1 => {
                        let had = model.remove(&id);
                        prop_assert_eq!(ix.remove(had.unwrap_or(hash), id), had.is_some());
                    }
                    _ => {}
                }
                prop_assert_eq!(ix.len(), model.len());
            }
            for (&id, &hash) in &model {
                prop_assert_eq!(ix.find(hash, |x| x == id), Some(id));
                prop_assert!(ix.candidates(hash).any(|x| x == id));
            }
        }
    }
}
