//! The read-side table and its 2-stage longest-prefix match (NDN-DPDK paper, section 4).
//!
//! A slab of slots, one per materialised prefix (a real entry, or a virtual marker at depth M),
//! indexed by a [`BucketIndex`] of slot ids keyed by the prefix hash, whose buckets a burst
//! prefetches before its lookups ([`FibGuard::prefetch`]). The root entry lives
//! outside the slab and the index, so a lookup that finds nothing else returns it without a
//! probe. The table changes only by absorbing [`FibOp`]s, which the writer computes in full, so
//! both left-right copies stay identical.

use kite_packet::Name;
use left_right::{Absorb, ReadGuard, ReadHandle, ReadHandleFactory};

use super::FibEntry;
use crate::hash::{NameHasher, NameHashes};
use crate::index::{prefetch, prefetch_all, BucketIndex};

/// What a slot holds.
#[derive(Clone, Debug)]
pub(super) enum Node {
    /// An entry lookups may return.
    Entry(FibEntry),
    /// Only a virtual marker, at this M-component prefix.
    Virtual(Name),
}

/// One materialised prefix.
#[derive(Clone, Debug)]
pub(super) struct Slot {
    /// The prefix's name hash, kept so the index can grow without
    /// hashing names again.
    pub(super) hash: u64,
    /// At depth M: the depth of the deepest entry below this prefix when it is deeper than M
    /// (the virtual marker); 0 when there is none.
    pub(super) max_depth: u8,
    /// The entry, or only the marker.
    pub(super) node: Node,
}

impl Slot {
    fn prefix(&self) -> &Name {
        match &self.node {
            Node::Entry(e) => &e.prefix,
            Node::Virtual(p) => p,
        }
    }

    fn entry(&self) -> Option<&FibEntry> {
        match &self.node {
            Node::Entry(e) => Some(e),
            Node::Virtual(_) => None,
        }
    }

    fn is_prefix(&self, hash: u64, octets: &[u8]) -> bool {
        self.hash == hash && self.prefix().value() == octets
    }
}

/// One change to the table, computed by the writer and applied identically to both copies.
#[derive(Clone, Debug)]
pub(super) enum FibOp {
    /// Replaces the root entry.
    Root(FibEntry),
    /// Writes slot `id`: a free slot is indexed under the slot's hash; an occupied one (always
    /// the same prefix) is overwritten.
    Put(u32, Slot),
    /// Sets the virtual marker of slot `id`.
    Mark(u32, u8),
    /// Frees slot `id`.
    Remove(u32),
}

/// One copy of the read-side table.
#[derive(Clone, Debug)]
pub(super) struct FibTable {
    /// Hashes prefixes for [`FibTable::find_exact`]; the forwarder's lookups bring their own.
    hasher: NameHasher,
    /// M, where the longest-prefix match starts.
    stage1: usize,
    /// The entry for `/`, id 0.
    root: FibEntry,
    /// Slot ids keyed by the prefix hash.
    index: BucketIndex,
    /// Slots by id; id 0 is the root's and stays empty here.
    slots: Vec<Option<Slot>>,
    /// Real entries in `slots`.
    entries: usize,
    /// Slots (entries and markers) per prefix depth; depths from 63 on share the last count.
    depth_slots: [u32; 64],
    /// Bit `d` set while some slot's prefix has `d` components (63: 63 or more). A lookup
    /// probes only those depths: a FIB of one- and two-component prefixes costs a long name
    /// two probes, not one per component.
    depths: u64,
}

/// The bit of [`FibTable::depths`] for prefixes of `depth` components.
#[inline]
fn depth_bit(depth: usize) -> u64 {
    1 << depth.min(63)
}

impl FibTable {
    /// A table holding only `root`.
    pub(super) fn new(hasher: NameHasher, stage1: usize, root: FibEntry) -> Self {
        FibTable {
            hasher,
            stage1,
            root,
            index: BucketIndex::default(),
            slots: vec![None],
            entries: 0,
            depth_slots: [0; 64],
            depths: 0,
        }
    }

    /// Whether some prefix in the table has `depth` components.
    #[inline]
    fn has_depth(&self, depth: usize) -> bool {
        self.depths & depth_bit(depth) != 0
    }

    /// Counts a slot of `depth` components in or out.
    fn count_depth(&mut self, depth: usize, added: bool) {
        let count = &mut self.depth_slots[depth.min(63)];
        if added {
            *count += 1;
            self.depths |= depth_bit(depth);
        } else {
            *count -= 1;
            if *count == 0 {
                self.depths &= !depth_bit(depth);
            }
        }
    }

    fn slot(&self, id: u32) -> Option<&Slot> {
        self.slots.get(id as usize)?.as_ref()
    }

    /// The slot of `name`'s prefix of length `depth` (at least 1).
    #[inline]
    fn slot_at(&self, name: &Name, hashes: &NameHashes, depth: usize) -> Option<&Slot> {
        let hash = hashes.prefix(depth);
        let octets = name.prefix_octets(depth);
        let id = self.index.find(hash, |id| {
            self.slot(id).is_some_and(|s| s.is_prefix(hash, octets))
        })?;
        self.slot(id)
    }

    /// Starts loading what [`FibTable::lpm`] of this name will read first: the index bucket
    /// of every prefix it may probe (M components down to one).
    #[inline]
    fn prefetch(&self, hashes: &NameHashes) {
        let start = hashes.name_len().min(self.stage1);
        for depth in (1..=start).filter(|&d| self.has_depth(d)) {
            self.index.prefetch(hashes.prefix(depth));
        }
    }

    /// Second stage of a prefetched lookup, with the buckets in cache by now: finds the slot
    /// the deepest probed prefix's tag points at (the likeliest hit), starts loading all of
    /// it (the hash is in its first line, the prefix's buffer and bounds in the next ones),
    /// and returns its id for [`FibTable::prefetch_name`].
    #[inline]
    fn prefetch_slot(&self, hashes: &NameHashes) -> Option<u32> {
        let start = hashes.name_len().min(self.stage1);
        (1..=start)
            .rev()
            .filter(|&d| self.has_depth(d))
            .find_map(|depth| {
                let id = self.index.candidates(hashes.prefix(depth)).next()?;
                // The slot's address, not its contents: reading it here would wait for the
                // very miss this starts.
                prefetch_all(self.slots.get(id as usize)?);
                Some(id)
            })
    }

    /// Third stage: starts loading the prefix octets of slot `id`, which the lookup compares.
    #[inline]
    fn prefetch_name(&self, id: u32) {
        if let Some(first) = self.slot(id).and_then(|s| s.prefix().value().first()) {
            prefetch(first);
        }
    }

    #[inline]
    fn entry_at(&self, name: &Name, hashes: &NameHashes, depth: usize) -> Option<&FibEntry> {
        self.slot_at(name, hashes, depth)?.entry()
    }

    /// The 2-stage longest-prefix match.
    #[inline]
    fn lpm(&self, name: &Name, hashes: &NameHashes) -> &FibEntry {
        debug_assert_eq!(hashes.name_len(), name.len(), "hashes of another name");
        let len = name.len();
        let start = len.min(self.stage1);
        if start == 0 {
            return &self.root;
        }
        if let Some(slot) = self
            .has_depth(start)
            .then(|| self.slot_at(name, hashes, start))
            .flatten()
        {
            let deepest = len.min(usize::from(slot.max_depth));
            for depth in (start + 1..=deepest).rev().filter(|&d| self.has_depth(d)) {
                if let Some(e) = self.entry_at(name, hashes, depth) {
                    return e;
                }
            }
            if let Some(e) = slot.entry() {
                return e;
            }
        }
        (1..start)
            .rev()
            .filter(|&d| self.has_depth(d))
            .find_map(|depth| self.entry_at(name, hashes, depth))
            .unwrap_or(&self.root)
    }

    fn get(&self, id: u32) -> Option<&FibEntry> {
        if id == 0 {
            return Some(&self.root);
        }
        self.slot(id)?.entry()
    }

    fn find_slot(&self, prefix: &Name) -> Option<&Slot> {
        let hash = self.hasher.hash_name(prefix);
        let id = self.index.find(hash, |id| {
            self.slot(id)
                .is_some_and(|s| s.is_prefix(hash, prefix.value()))
        })?;
        self.slot(id)
    }

    fn find_exact(&self, prefix: &Name) -> Option<&FibEntry> {
        if prefix.is_empty() {
            return Some(&self.root);
        }
        self.find_slot(prefix)?.entry()
    }

    fn iter(&self) -> impl Iterator<Item = &FibEntry> + '_ {
        core::iter::once(&self.root).chain(
            self.slots
                .iter()
                .filter_map(|s| s.as_ref().and_then(Slot::entry)),
        )
    }

    fn apply(&mut self, op: FibOp) {
        match op {
            FibOp::Root(entry) => self.root = entry,
            FibOp::Put(id, slot) => self.put(id, slot),
            FibOp::Mark(id, depth) => {
                if let Some(Some(slot)) = self.slots.get_mut(id as usize) {
                    slot.max_depth = depth;
                }
            }
            FibOp::Remove(id) => self.remove(id),
        }
    }

    fn put(&mut self, id: u32, slot: Slot) {
        let i = id as usize;
        if i >= self.slots.len() {
            self.slots.resize_with(i + 1, || None);
        }
        let added = usize::from(slot.entry().is_some());
        let hash = slot.hash;
        let depth = slot.prefix().len();
        let Some(place) = self.slots.get_mut(i) else {
            return;
        };
        match place.replace(slot) {
            Some(old) => self.entries = self.entries + added - usize::from(old.entry().is_some()),
            None => {
                self.entries += added;
                self.count_depth(depth, true);
                let slots = &self.slots;
                self.index.insert(hash, id, |j| {
                    slots
                        .get(j as usize)
                        .and_then(Option::as_ref)
                        .map_or(0, |s| s.hash)
                });
            }
        }
    }

    fn remove(&mut self, id: u32) {
        let Some(slot) = self.slots.get_mut(id as usize).and_then(Option::take) else {
            return;
        };
        self.entries -= usize::from(slot.entry().is_some());
        self.index.remove(slot.hash, id);
        self.count_depth(slot.prefix().len(), false);
    }

    /// The virtual marker at `prefix`, if a slot is there.
    #[cfg(test)]
    pub(super) fn marker(&self, prefix: &Name) -> Option<u8> {
        self.find_slot(prefix).map(|s| s.max_depth)
    }

    /// Slots in use (entries and virtual-only markers), the root excluded.
    #[cfg(test)]
    pub(super) fn slots_in_use(&self) -> usize {
        self.slots.iter().flatten().count()
    }
}

impl Absorb<FibOp> for FibTable {
    fn absorb_first(&mut self, op: &mut FibOp, _: &Self) {
        self.apply(op.clone());
    }

    fn absorb_second(&mut self, op: FibOp, _: &Self) {
        self.apply(op);
    }

    fn sync_with(&mut self, first: &Self) {
        self.clone_from(first);
    }
}

/// Creates [`FibReader`]s; shareable across threads so each forwarding thread makes its own.
#[derive(Clone)]
pub struct FibReaderFactory {
    pub(super) factory: ReadHandleFactory<FibTable>,
}

impl FibReaderFactory {
    /// A reader for one forwarding thread.
    pub fn reader(&self) -> FibReader {
        FibReader {
            handle: self.factory.handle(),
        }
    }
}

/// One forwarding thread's access to the FIB.
pub struct FibReader {
    handle: ReadHandle<FibTable>,
}

impl FibReader {
    /// Enters the table for one burst: [`FibWriter::publish`](super::FibWriter::publish) waits
    /// until the copy this guard reads is released, so drop the guard between bursts (the
    /// quiescent state) and before the thread sleeps. `None` once the writer is gone.
    #[inline]
    pub fn enter(&self) -> Option<FibGuard<'_>> {
        self.handle.enter().map(|table| FibGuard { table })
    }
}

/// The FIB as published when the guard was taken; lookups go through it.
pub struct FibGuard<'r> {
    pub(super) table: ReadGuard<'r, FibTable>,
}

impl FibGuard<'_> {
    /// The longest-prefix match of `name`, whose prefix hashes (from the FIB's hasher) are
    /// `hashes`. Never fails: the root entry matches every name. Allocates nothing.
    #[inline]
    pub fn lpm(&self, name: &Name, hashes: &NameHashes) -> &FibEntry {
        self.table.lpm(name, hashes)
    }

    /// Starts loading the index buckets [`FibGuard::lpm`] of a name with these hashes will
    /// read. A burst calls this for all its Interests, then [`FibGuard::prefetch_slot`] for
    /// all, then [`FibGuard::prefetch_name`] with the slots found, then looks them up, so the
    /// cache misses of a burst overlap instead of queueing.
    #[inline]
    pub fn prefetch(&self, hashes: &NameHashes) {
        self.table.prefetch(hashes);
    }

    /// Starts loading the slot the (now cached) buckets point at for the deepest prefix with
    /// a candidate, and returns its id; see [`FibGuard::prefetch`].
    #[inline]
    pub fn prefetch_slot(&self, hashes: &NameHashes) -> Option<u32> {
        self.table.prefetch_slot(hashes)
    }

    /// Starts loading the prefix octets of slot `id` (from [`FibGuard::prefetch_slot`]),
    /// which the lookup compares with the name; see [`FibGuard::prefetch`].
    #[inline]
    pub fn prefetch_name(&self, id: u32) {
        self.table.prefetch_name(id);
    }

    /// The entry with slab index `id`, if one is there; compare its `seq` to know whether it is
    /// still the version a PIT entry remembered.
    #[inline]
    pub fn get(&self, id: u32) -> Option<&FibEntry> {
        self.table.get(id)
    }

    /// The entry whose prefix is exactly `prefix` (hashes it: not for the per-packet path).
    pub fn find_exact(&self, prefix: &Name) -> Option<&FibEntry> {
        self.table.find_exact(prefix)
    }

    /// Number of entries, the root included (virtual markers are not entries).
    pub fn len(&self) -> usize {
        self.table.entries + 1
    }

    /// Always false: the root entry always exists.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Every entry, root first, in no particular order after it.
    pub fn iter(&self) -> impl Iterator<Item = &FibEntry> + '_ {
        self.table.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::face::FaceId;
    use crate::fib::{NextHop, StrategyId};
    use smallvec::smallvec;

    fn hasher() -> NameHasher {
        NameHasher::with_key(7, 11)
    }

    fn n(s: &str) -> Name {
        s.parse().unwrap()
    }

    fn entry(prefix: &str, id: u32, seq: u64) -> FibEntry {
        FibEntry {
            prefix: n(prefix),
            nexthops: smallvec![NextHop {
                face: FaceId(300 + u64::from(id)),
                cost: 0
            }],
            strategy: StrategyId(0),
            id,
            seq,
        }
    }

    fn put_entry(t: &mut FibTable, prefix: &str, id: u32, max_depth: u8) {
        let node = Node::Entry(entry(prefix, id, u64::from(id)));
        t.apply(FibOp::Put(id, slot(prefix, max_depth, node)));
    }

    fn put_virtual(t: &mut FibTable, prefix: &str, id: u32, max_depth: u8) {
        let node = Node::Virtual(n(prefix));
        t.apply(FibOp::Put(id, slot(prefix, max_depth, node)));
    }

    fn slot(prefix: &str, max_depth: u8, node: Node) -> Slot {
        Slot {
            hash: hasher().hash_name(&n(prefix)),
            max_depth,
            node,
        }
    }

    fn table(stage1: usize) -> FibTable {
        FibTable::new(hasher(), stage1, entry("/", 0, 0))
    }

    fn lpm(t: &FibTable, name: &str) -> String {
        let name = n(name);
        t.lpm(&name, &hasher().prefix_hashes(&name))
            .prefix
            .to_string()
    }

    #[test]
    fn empty_table_matches_everything_at_the_root() {
        let t = table(2);
        assert_eq!(lpm(&t, "/"), "/");
        assert_eq!(lpm(&t, "/a/b/c/d"), "/");
        assert_eq!(t.get(0).unwrap().prefix, Name::root());
        assert_eq!(t.find_exact(&Name::root()).unwrap().id, 0);
        assert_eq!(t.iter().count(), 1);
    }

    #[test]
    fn shallow_entries_match_by_longest_prefix() {
        let mut t = table(2);
        put_entry(&mut t, "/a", 1, 0);
        put_entry(&mut t, "/a/b", 2, 0);
        assert_eq!(lpm(&t, "/a"), "/a");
        assert_eq!(lpm(&t, "/a/c/d"), "/a");
        assert_eq!(lpm(&t, "/a/b"), "/a/b");
        assert_eq!(lpm(&t, "/a/b/c/d/e"), "/a/b");
        assert_eq!(lpm(&t, "/b/a"), "/");
        assert_eq!(lpm(&t, "/ab"), "/");
    }

    #[test]
    fn lookups_probe_only_depths_some_prefix_has() {
        let mut t = table(8);
        put_entry(&mut t, "/a", 1, 0);
        put_entry(&mut t, "/b/c/d", 2, 0);
        assert_eq!(t.depths, depth_bit(1) | depth_bit(3));
        assert_eq!(lpm(&t, "/b/c/d/e/f"), "/b/c/d");
        assert_eq!(lpm(&t, "/a/c/d/e/f"), "/a");
        // Overwriting a slot keeps its count; removing the last slot of a depth clears it.
        put_entry(&mut t, "/b/c/d", 2, 0);
        t.apply(FibOp::Remove(2));
        assert_eq!(t.depths, depth_bit(1));
        assert_eq!(lpm(&t, "/b/c/d/e"), "/");
        put_entry(&mut t, "/b/c/d", 3, 0);
        assert_eq!(lpm(&t, "/b/c/d/e"), "/b/c/d");
        t.apply(FibOp::Remove(1));
        assert_eq!(t.depths, depth_bit(3));
        assert_eq!(lpm(&t, "/a/b/c"), "/");
    }

    #[test]
    fn deep_entries_are_found_only_through_a_marker() {
        let mut t = table(2);
        put_entry(&mut t, "/a/b/c/d", 1, 0);
        // without a marker at /a/b the 2-stage lookup never probes depth 4
        assert_eq!(lpm(&t, "/a/b/c/d/e"), "/");
        put_virtual(&mut t, "/a/b", 2, 4);
        assert_eq!(lpm(&t, "/a/b/c/d/e"), "/a/b/c/d");
        assert_eq!(lpm(&t, "/a/b/c/d"), "/a/b/c/d");
        // a marker is not an entry: shorter names fall back past it
        assert_eq!(lpm(&t, "/a/b/c"), "/");
        assert_eq!(lpm(&t, "/a/b"), "/");
        assert_eq!(t.get(2), None);
        assert_eq!(t.find_exact(&n("/a/b")), None);
    }

    #[test]
    fn a_real_entry_can_carry_the_marker() {
        let mut t = table(2);
        put_entry(&mut t, "/a", 1, 0);
        put_entry(&mut t, "/a/b", 2, 3);
        put_entry(&mut t, "/a/b/c", 3, 0);
        assert_eq!(lpm(&t, "/a/b/c/x"), "/a/b/c");
        assert_eq!(lpm(&t, "/a/b/x/y"), "/a/b");
        assert_eq!(lpm(&t, "/a/x/y/z"), "/a");
        t.apply(FibOp::Mark(2, 0));
        assert_eq!(lpm(&t, "/a/b/c/x"), "/a/b");
    }

    #[test]
    fn marker_depth_bounds_the_probe_and_the_name_length_too() {
        let mut t = table(1);
        put_virtual(&mut t, "/a", 1, 5);
        put_entry(&mut t, "/a/b/c/d/e", 2, 0);
        put_entry(&mut t, "/a/b/c/d/e/f", 3, 0);
        assert_eq!(lpm(&t, "/a/b/c/d/e/f/g"), "/a/b/c/d/e");
        assert_eq!(lpm(&t, "/a/b/c"), "/");
        assert_eq!(t.marker(&n("/a")), Some(5));
    }

    #[test]
    fn put_replaces_in_place_and_counts_entries() {
        let mut t = table(2);
        put_virtual(&mut t, "/a/b", 1, 3);
        assert_eq!(t.entries, 0);
        put_entry(&mut t, "/a/b", 1, 3);
        assert_eq!(t.entries, 1);
        assert_eq!(t.index.len(), 1);
        put_virtual(&mut t, "/a/b", 1, 3);
        assert_eq!(t.entries, 0);
        assert_eq!(t.index.len(), 1);
        t.apply(FibOp::Remove(1));
        assert_eq!(t.index.len(), 0);
        assert_eq!(t.slots_in_use(), 0);
        // removing twice, or a slot beyond the slab, changes nothing
        t.apply(FibOp::Remove(1));
        t.apply(FibOp::Remove(99));
        t.apply(FibOp::Mark(99, 3));
        assert_eq!(t.entries, 0);
    }

    #[test]
    fn ids_are_slab_indexes_and_get_sees_replacements() {
        let mut t = table(8);
        put_entry(&mut t, "/x", 5, 0);
        assert_eq!(t.slots.len(), 6);
        assert_eq!(t.get(5).unwrap().prefix, n("/x"));
        assert_eq!(t.get(4), None);
        assert_eq!(t.get(1000), None);
        t.apply(FibOp::Put(
            5,
            slot("/x", 0, Node::Entry(entry("/x", 5, 77))),
        ));
        assert_eq!(t.get(5).unwrap().seq, 77);
        t.apply(FibOp::Root(entry("/", 0, 78)));
        assert_eq!(t.get(0).unwrap().seq, 78);
        assert_eq!(t.iter().map(|e| e.id).collect::<Vec<_>>(), [0, 5]);
    }

    #[test]
    fn the_index_survives_growth() {
        let mut t = table(8);
        for i in 1..=2000u32 {
            put_entry(&mut t, &format!("/p/{i}"), i, 0);
        }
        for i in (1..=2000u32).step_by(3) {
            t.apply(FibOp::Remove(i));
        }
        for i in 1..=2000u32 {
            let found = t.find_exact(&n(&format!("/p/{i}")));
            assert_eq!(found.map(|e| e.id), (i % 3 != 1).then_some(i), "{i}");
        }
    }

    #[test]
    fn both_copies_absorb_to_the_same_state() {
        let mut a = table(2);
        let mut b = a.clone();
        let mut ops = vec![
            FibOp::Put(1, slot("/a", 0, Node::Entry(entry("/a", 1, 1)))),
            FibOp::Put(2, slot("/a/b", 4, Node::Virtual(n("/a/b")))),
            FibOp::Put(3, slot("/a/b/c/d", 0, Node::Entry(entry("/a/b/c/d", 3, 2)))),
            FibOp::Mark(2, 4),
            FibOp::Remove(1),
        ];
        for op in &mut ops {
            a.absorb_first(op, &b);
        }
        for op in ops {
            b.absorb_second(op, &a);
        }
        let ids = |t: &FibTable| t.iter().map(|e| (e.id, e.seq)).collect::<Vec<_>>();
        assert_eq!(ids(&a), ids(&b));
        assert_eq!(lpm(&b, "/a/b/c/d/e"), "/a/b/c/d");
        let mut c = table(2);
        c.sync_with(&a);
        assert_eq!(ids(&c), ids(&a));
        assert_eq!(lpm(&c, "/a/b/c/d/e"), "/a/b/c/d");
    }
}
