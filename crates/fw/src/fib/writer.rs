//! The write side: authoritative routes and strategy choices, and their materialisation into
//! read-side entries and virtual markers (NDN-DPDK paper, sections 4 and 6.2, with NFD
//! semantics).
//!
//! A change at prefix P rewrites P's entry and those below P whose nexthops or strategy come
//! from P or above (names under P are contiguous in canonical order), and the virtual marker of
//! P's M-component prefix when P is deeper than M. Everything else keeps its `seq`.
//!
//! The maps are keyed by [`Key`], a name ordered by its octets: since VAR-NUMBERs are in
//! shortest form, octet order is exactly NDN's canonical order, so ranges are the same, while
//! comparing is one `memcmp` and the prefix of a name is looked up by its octets
//! ([`Name::prefix_octets`]) without building a name.

use core::borrow::Borrow;
use core::cmp::Ordering;
use std::collections::BTreeMap;
use std::ops::Bound::{Excluded, Unbounded};

use kite_packet::Name;
use left_right::WriteHandle;
use smallvec::SmallVec;

use super::table::{FibOp, FibTable, Node, Slot};
use super::{FibConfig, FibEntry, FibError, FibReaderFactory, NextHop, StrategyId, MAX_PREFIX_LEN};
use crate::face::FaceId;
use crate::hash::NameHasher;

/// Nexthops of one route prefix, sorted by cost; equal costs in the order they were added.
type NextHops = SmallVec<[NextHop; 4]>;

/// A stored prefix, ordered (and borrowed) as its octets.
#[derive(Clone, PartialEq, Eq, Debug)]
struct Key(Name);

impl Ord for Key {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.value().cmp(other.0.value())
    }
}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Borrow<[u8]> for Key {
    fn borrow(&self) -> &[u8] {
        self.0.value()
    }
}

/// What the writer knows of a materialised prefix other than the root.
#[derive(Clone, Copy, Debug)]
struct SlotInfo {
    /// Slab index of its slot.
    id: u32,
    /// Its virtual marker (depth M only), as the read side has it.
    max_depth: u8,
    /// It has routes of its own.
    route: bool,
    /// It has a strategy choice of its own.
    choice: bool,
}

impl SlotInfo {
    fn is_entry(&self) -> bool {
        self.route || self.choice
    }
}

/// Which kind of state changed at a prefix, deciding which entries below it are rewritten.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Change {
    Routes,
    Strategy,
}

/// The FIB's single writer, owned by the management thread.
pub struct FibWriter {
    handle: WriteHandle<FibTable, FibOp>,
    /// Hashes prefixes; forwarding threads must hash names with the same hasher.
    hasher: NameHasher,
    /// M, where the longest-prefix match starts.
    stage1: usize,
    /// Routes by prefix, never empty.
    routes: BTreeMap<Key, NextHops>,
    /// Strategy choices other than the root's.
    choices: BTreeMap<Key, StrategyId>,
    /// The root's strategy choice, which always exists.
    root_strategy: StrategyId,
    /// The root name, so strategy choices can be listed by reference.
    root: Name,
    /// Every materialised prefix other than the root: entries and virtual-only markers. Every
    /// route and choice prefix is one, so this is where stored names are found.
    slots: BTreeMap<Key, SlotInfo>,
    /// Slab indexes freed by removed slots.
    free: Vec<u32>,
    /// The next never-used slab index.
    next_id: u32,
    /// The last `seq` given to an entry.
    seq: u64,
}

impl FibWriter {
    /// A FIB holding only the root entry, without nexthops, choosing `default_strategy`; and
    /// the factory forwarding threads take their readers from. Names looked up must be hashed
    /// with `hasher`.
    pub fn new(
        hasher: NameHasher,
        config: FibConfig,
        default_strategy: StrategyId,
    ) -> (FibWriter, FibReaderFactory) {
        let stage1 = config.max_depth_stage1.clamp(1, MAX_PREFIX_LEN);
        let root = FibEntry {
            prefix: Name::root(),
            nexthops: SmallVec::new(),
            strategy: default_strategy,
            id: 0,
            seq: 1,
        };
        let (handle, reader) = left_right::new_from_empty(FibTable::new(hasher, stage1, root));
        let factory = FibReaderFactory {
            factory: reader.factory(),
        };
        let writer = FibWriter {
            handle,
            hasher,
            stage1,
            routes: BTreeMap::new(),
            choices: BTreeMap::new(),
            root_strategy: default_strategy,
            root: Name::root(),
            slots: BTreeMap::new(),
            free: Vec::new(),
            next_id: 1,
            seq: 1,
        };
        (writer, factory)
    }

    /// Adds `face` as a nexthop of `prefix` with `cost`, or changes its cost: it goes after
    /// the nexthops of the same cost, as NFD's FIB appends a nexthop and sorts by cost. Which
    /// of several equal-cost nexthops comes first decides where a strategy sends a new
    /// Interest, so the RIB adds a prefix's own routes before those it inherits.
    pub fn add_nexthop(&mut self, prefix: &Name, face: FaceId, cost: u32) -> Result<(), FibError> {
        check_len(prefix)?;
        let hop = NextHop { face, cost };
        let hops = match self.routes.get_mut(prefix.value()) {
            Some(hops) => hops,
            None => {
                let key = self.stored_key(prefix);
                self.routes.entry(key).or_default()
            }
        };
        if hops.contains(&hop) {
            return Ok(());
        }
        hops.retain(|h| h.face != face);
        let at = hops.partition_point(|h| h.cost <= cost);
        hops.insert(at, hop);
        self.refresh(prefix, Change::Routes);
        Ok(())
    }

    /// Removes `face` from the nexthops of `prefix`; the route goes with its last nexthop.
    /// Whether there was such a nexthop.
    pub fn remove_nexthop(&mut self, prefix: &Name, face: FaceId) -> bool {
        let Some(hops) = self.routes.get_mut(prefix.value()) else {
            return false;
        };
        let before = hops.len();
        hops.retain(|h| h.face != face);
        if hops.len() == before {
            return false;
        }
        if hops.is_empty() {
            self.routes.remove(prefix.value());
        }
        self.refresh(prefix, Change::Routes);
        true
    }

    /// Chooses strategy `s` for the namespace `prefix`.
    pub fn set_strategy(&mut self, prefix: &Name, s: StrategyId) -> Result<(), FibError> {
        check_len(prefix)?;
        if prefix.is_empty() {
            if self.root_strategy == s {
                return Ok(());
            }
            self.root_strategy = s;
        } else {
            if self.choices.get(prefix.value()) == Some(&s) {
                return Ok(());
            }
            let key = self.stored_key(prefix);
            self.choices.insert(key, s);
        }
        self.refresh(prefix, Change::Strategy);
        Ok(())
    }

    /// Removes the strategy choice at `prefix`, so the namespace inherits its parent's.
    /// Whether there was one; the root's choice cannot be removed (false).
    pub fn unset_strategy(&mut self, prefix: &Name) -> bool {
        if self.choices.remove(prefix.value()).is_none() {
            return false;
        }
        self.refresh(prefix, Change::Strategy);
        true
    }

    /// Removes every nexthop toward `face` (a destroyed face); how many were removed.
    pub fn remove_face(&mut self, face: FaceId) -> usize {
        let prefixes: Vec<Name> = self
            .routes
            .iter()
            .filter(|(_, hops)| hops.iter().any(|h| h.face == face))
            .map(|(p, _)| p.0.clone())
            .collect();
        let mut removed = 0;
        for p in &prefixes {
            removed += usize::from(self.remove_nexthop(p, face));
        }
        removed
    }

    /// Every strategy choice, root first, in canonical name order.
    pub fn strategy_choices(&self) -> impl Iterator<Item = (&Name, StrategyId)> + '_ {
        core::iter::once((&self.root, self.root_strategy))
            .chain(self.choices.iter().map(|(p, s)| (&p.0, *s)))
    }

    /// The nexthops of exactly `prefix` (empty when it has none).
    pub fn nexthops(&self, prefix: &Name) -> &[NextHop] {
        self.routes
            .get(prefix.value())
            .map_or(&[][..], |h| h.as_slice())
    }

    /// Every prefix with nexthops and its nexthops, in name order (management's `fib/list`).
    pub fn routes(&self) -> impl Iterator<Item = (&Name, &[NextHop])> + '_ {
        self.routes.iter().map(|(p, h)| (&p.0, h.as_slice()))
    }

    /// Makes every change so far visible to readers at once. Waits until every reader has left
    /// the copy it is about to reuse, i.e. for the bursts in progress to end.
    pub fn publish(&mut self) {
        self.handle.publish();
    }

    /// Brings `p`'s entry, the entries below it that inherit what changed, and `p`'s virtual
    /// marker in line with the authoritative state.
    fn refresh(&mut self, p: &Name, change: Change) {
        if p.is_empty() {
            let entry = self.entry(Name::root(), 0);
            self.handle.append(FibOp::Root(entry));
        } else {
            self.refresh_slot(p);
        }
        self.rewrite_below(p, change);
    }

    fn refresh_slot(&mut self, p: &Name) {
        let route = self.routes.contains_key(p.value());
        let choice = self.choices.contains_key(p.value());
        let deep = p.len() > self.stage1;
        match self.slots.get_mut(p.value()) {
            None if route || choice => {
                let id = self.alloc_id();
                let key = self.stored_key(p);
                let info = SlotInfo {
                    id,
                    max_depth: 0,
                    route,
                    choice,
                };
                let name = key.0.clone();
                self.slots.insert(key, info);
                self.put_entry(name, info);
                if deep {
                    self.raise_marker(p);
                }
            }
            None => {}
            Some(info) => {
                let was_entry = info.is_entry();
                info.route = route;
                info.choice = choice;
                let info = *info;
                let name = self.stored_key(p).0;
                if info.is_entry() {
                    self.put_entry(name, info);
                } else if info.max_depth > 0 {
                    let slot = self.slot(name.clone(), info.max_depth, Node::Virtual(name));
                    self.handle.append(FibOp::Put(info.id, slot));
                } else {
                    self.remove_slot(p.value(), info.id);
                }
                if deep && was_entry && !info.is_entry() {
                    self.lower_marker(p.prefix_octets(self.stage1));
                }
            }
        }
    }

    /// Rewrites the entries strictly below `p` whose nexthops (`Change::Routes`) or strategy
    /// (`Change::Strategy`) come from `p` or above, i.e. with no route (choice) between.
    fn rewrite_below(&mut self, p: &Name, change: Change) {
        let from_p_hops = self.nexthops_for(p);
        let from_p_strategy = self.strategy_for(p);
        let FibWriter {
            handle,
            hasher,
            routes,
            choices,
            slots,
            seq,
            ..
        } = self;
        // Prefixes below p with routes (choices) of their own, innermost last. The values of
        // the kind that changed are never read (an entry under such a prefix is not rewritten),
        // so they are not looked up: a walk over a large FIB mostly just iterates.
        let mut hop_stack: Vec<(&[u8], Option<&NextHops>)> = Vec::new();
        let mut choice_stack: Vec<(&[u8], Option<StrategyId>)> = Vec::new();
        for (q, info) in below(slots, p.value()) {
            let octets = q.0.value();
            while hop_stack
                .last()
                .is_some_and(|(a, _)| !octets.starts_with(a))
            {
                hop_stack.pop();
            }
            while choice_stack
                .last()
                .is_some_and(|(a, _)| !octets.starts_with(a))
            {
                choice_stack.pop();
            }
            if info.route {
                let hops = (change != Change::Routes).then(|| routes.get(octets));
                hop_stack.push((octets, hops.flatten()));
            }
            if info.choice {
                let s = (change != Change::Strategy).then(|| choices.get(octets).copied());
                choice_stack.push((octets, s.flatten()));
            }
            let inherits = match change {
                Change::Routes => hop_stack.is_empty(),
                Change::Strategy => choice_stack.is_empty(),
            };
            if !info.is_entry() || !inherits {
                continue;
            }
            *seq += 1;
            let entry = FibEntry {
                prefix: q.0.clone(),
                nexthops: match hop_stack.last() {
                    Some((_, Some(hops))) => (*hops).clone(),
                    _ => from_p_hops.clone(),
                },
                strategy: match choice_stack.last() {
                    Some((_, Some(s))) => *s,
                    _ => from_p_strategy,
                },
                id: info.id,
                seq: *seq,
            };
            let slot = Slot {
                hash: hasher.hash_octets(octets),
                max_depth: info.max_depth,
                node: Node::Entry(entry),
            };
            handle.append(FibOp::Put(info.id, slot));
        }
    }

    /// Records a new entry at `p`, deeper than M, in the marker at its M-component prefix.
    fn raise_marker(&mut self, p: &Name) {
        let depth = depth_u8(p.len());
        match self.slots.get_mut(p.prefix_octets(self.stage1)) {
            Some(info) if info.max_depth < depth => {
                info.max_depth = depth;
                let id = info.id;
                self.handle.append(FibOp::Mark(id, depth));
            }
            Some(_) => {}
            None => {
                let id = self.alloc_id();
                let key = self.stored_key(&p.prefix(self.stage1));
                let info = SlotInfo {
                    id,
                    max_depth: depth,
                    route: false,
                    choice: false,
                };
                let name = key.0.clone();
                self.slots.insert(key, info);
                let slot = self.slot(name.clone(), depth, Node::Virtual(name));
                self.handle.append(FibOp::Put(id, slot));
            }
        }
    }

    /// Recomputes the marker at the M-component prefix `v` after an entry below it went away.
    fn lower_marker(&mut self, v: &[u8]) {
        let Some(info) = self.slots.get(v).copied() else {
            return;
        };
        let deepest = below(&self.slots, v)
            .filter(|(_, i)| i.is_entry())
            .map(|(q, _)| depth_u8(q.0.len()))
            .max()
            .unwrap_or(0);
        if deepest == info.max_depth {
            return;
        }
        if deepest == 0 && !info.is_entry() {
            self.remove_slot(v, info.id);
            return;
        }
        if let Some(i) = self.slots.get_mut(v) {
            i.max_depth = deepest;
        }
        self.handle.append(FibOp::Mark(info.id, deepest));
    }

    fn put_entry(&mut self, name: Name, info: SlotInfo) {
        let entry = self.entry(name.clone(), info.id);
        let slot = self.slot(name, info.max_depth, Node::Entry(entry));
        self.handle.append(FibOp::Put(info.id, slot));
    }

    fn remove_slot(&mut self, p: &[u8], id: u32) {
        self.slots.remove(p);
        self.free.push(id);
        self.handle.append(FibOp::Remove(id));
    }

    /// The materialised entry for `prefix`, with a new `seq`.
    fn entry(&mut self, prefix: Name, id: u32) -> FibEntry {
        self.seq += 1;
        FibEntry {
            nexthops: self.nexthops_for(&prefix),
            strategy: self.strategy_for(&prefix),
            prefix,
            id,
            seq: self.seq,
        }
    }

    fn slot(&self, prefix: Name, max_depth: u8, node: Node) -> Slot {
        Slot {
            hash: self.hasher.hash_name(&prefix),
            max_depth,
            node,
        }
    }

    /// The routes of the longest route prefix of `q` (none when no route covers it).
    fn nexthops_for(&self, q: &Name) -> NextHops {
        (0..=q.len())
            .rev()
            .find_map(|d| self.routes.get(q.prefix_octets(d)))
            .cloned()
            .unwrap_or_default()
    }

    /// The strategy of the longest strategy-choice prefix of `q`.
    fn strategy_for(&self, q: &Name) -> StrategyId {
        (1..=q.len())
            .rev()
            .find_map(|d| self.choices.get(q.prefix_octets(d)).copied())
            .unwrap_or(self.root_strategy)
    }

    /// `p` as the FIB stores names: sharing the buffer of a copy already stored, or in a
    /// buffer of its own, so an entry never keeps the command packet `p` came from alive.
    fn stored_key(&self, p: &Name) -> Key {
        let octets = p.value();
        self.slots
            .get_key_value(octets)
            .map(|(k, _)| k)
            .or_else(|| self.routes.get_key_value(octets).map(|(k, _)| k))
            .or_else(|| self.choices.get_key_value(octets).map(|(k, _)| k))
            .cloned()
            .unwrap_or_else(|| Key(Name::from_components(p.iter())))
    }

    fn alloc_id(&mut self) -> u32 {
        self.free.pop().unwrap_or_else(|| {
            let id = self.next_id;
            self.next_id += 1;
            id
        })
    }
}

/// The materialised prefixes strictly below the prefix whose octets are `p`, in canonical
/// order (they follow `p` contiguously).
fn below<'a>(
    slots: &'a BTreeMap<Key, SlotInfo>,
    p: &'a [u8],
) -> impl Iterator<Item = (&'a Key, &'a SlotInfo)> + 'a {
    slots
        .range::<[u8], _>((Excluded(p), Unbounded))
        .take_while(move |(q, _)| q.0.value().starts_with(p))
}

fn check_len(prefix: &Name) -> Result<(), FibError> {
    if prefix.len() > MAX_PREFIX_LEN {
        return Err(FibError::PrefixTooLong { len: prefix.len() });
    }
    Ok(())
}

/// A prefix depth (at most [`MAX_PREFIX_LEN`]) as a marker.
fn depth_u8(len: usize) -> u8 {
    u8::try_from(len).unwrap_or(u8::MAX)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    use kite_packet::Component;
    use proptest::prelude::*;

    use super::*;
    use crate::fib::FibReader;
    use crate::hash::NameHashes;

    fn hasher() -> NameHasher {
        NameHasher::with_key(0x5eed, 0xf1b)
    }
    const BEST_ROUTE: StrategyId = StrategyId(1);
    const MULTICAST: StrategyId = StrategyId(2);

    fn n(s: &str) -> Name {
        s.parse().unwrap()
    }

    fn fib(stage1: usize) -> (FibWriter, FibReader) {
        let config = FibConfig {
            max_depth_stage1: stage1,
        };
        let (w, factory) = FibWriter::new(hasher(), config, BEST_ROUTE);
        (w, factory.reader())
    }

    fn lpm(r: &FibReader, name: &str) -> FibEntry {
        let name = n(name);
        let guard = r.enter().unwrap();
        guard.lpm(&name, &hasher().prefix_hashes(&name)).clone()
    }

    fn exact(r: &FibReader, prefix: &str) -> Option<FibEntry> {
        r.enter().unwrap().find_exact(&n(prefix)).cloned()
    }

    fn faces(e: &FibEntry) -> Vec<u32> {
        e.nexthops.iter().map(|h| h.face.0 as u32).collect()
    }

    fn marker(r: &FibReader, prefix: &str) -> Option<u8> {
        r.enter().unwrap().table.marker(&n(prefix))
    }

    fn add(w: &mut FibWriter, prefix: &str, face: u32, cost: u32) {
        w.add_nexthop(&n(prefix), FaceId(face.into()), cost)
            .unwrap();
    }

    #[test]
    fn a_new_fib_holds_only_the_root() {
        let (_w, r) = fib(8);
        let g = r.enter().unwrap();
        assert_eq!(g.len(), 1);
        assert!(!g.is_empty());
        let root = g.get(0).unwrap();
        assert_eq!(root.prefix, Name::root());
        assert!(root.nexthops.is_empty());
        assert_eq!(root.strategy, BEST_ROUTE);
        let name = n("/a/b");
        assert_eq!(g.lpm(&name, &hasher().prefix_hashes(&name)).id, 0);
    }

    #[test]
    fn readers_see_nothing_until_publish() {
        let (mut w, r) = fib(8);
        add(&mut w, "/a", 300, 1);
        w.set_strategy(&n("/a"), MULTICAST).unwrap();
        assert_eq!(lpm(&r, "/a/x").prefix, Name::root());
        assert_eq!(r.enter().unwrap().len(), 1);
        w.publish();
        let e = lpm(&r, "/a/x");
        assert_eq!((e.prefix.to_string(), faces(&e)), ("/a".into(), vec![300]));
        assert_eq!(e.strategy, MULTICAST);
        // and after the first publish too (left-right's second copy is synchronised then)
        add(&mut w, "/b", 301, 1);
        assert_eq!(lpm(&r, "/b").prefix, Name::root());
        w.publish();
        assert_eq!(lpm(&r, "/b").prefix, n("/b"));
        add(&mut w, "/c", 302, 1);
        w.publish();
        assert_eq!(lpm(&r, "/c").prefix, n("/c"));
        assert_eq!(lpm(&r, "/a").prefix, n("/a"));
    }

    #[test]
    fn nexthops_sort_by_cost_then_the_order_added_and_costs_update() {
        let (mut w, r) = fib(8);
        add(&mut w, "/a", 302, 5);
        add(&mut w, "/a", 301, 5);
        add(&mut w, "/a", 303, 1);
        w.publish();
        assert_eq!(faces(&lpm(&r, "/a")), [303, 302, 301]);
        add(&mut w, "/a", 302, 5);
        w.publish();
        assert_eq!(faces(&lpm(&r, "/a")), [303, 302, 301], "unchanged");
        add(&mut w, "/a", 303, 5);
        w.publish();
        let e = lpm(&r, "/a");
        assert_eq!(
            faces(&e),
            [302, 301, 303],
            "after the others of its new cost"
        );
        assert_eq!(e.nexthops[2].cost, 5);
    }

    #[test]
    fn nexthops_of_an_exact_prefix_without_inheritance() {
        let (mut w, _r) = fib(8);
        add(&mut w, "/a", 301, 5);
        add(&mut w, "/a/b", 302, 1);
        let faces = |p: &str| -> Vec<u64> { w.nexthops(&n(p)).iter().map(|h| h.face.0).collect() };
        assert_eq!(faces("/a"), [301]);
        assert_eq!(faces("/a/b"), [302]);
        assert!(faces("/a/b/c").is_empty());
        assert!(faces("/").is_empty());
    }

    #[test]
    fn repeating_a_nexthop_rewrites_nothing() {
        let (mut w, r) = fib(8);
        add(&mut w, "/a", 300, 5);
        w.publish();
        let before = lpm(&r, "/a");
        add(&mut w, "/a", 300, 5);
        w.set_strategy(&Name::root(), BEST_ROUTE).unwrap();
        w.publish();
        assert_eq!(lpm(&r, "/a"), before);
        assert_eq!(lpm(&r, "/").seq, 1);
    }

    #[test]
    fn longest_prefix_wins() {
        let (mut w, r) = fib(8);
        add(&mut w, "/", 1, 0);
        add(&mut w, "/a", 300, 0);
        add(&mut w, "/a/b/c", 301, 0);
        w.publish();
        assert_eq!(lpm(&r, "/x").prefix, Name::root());
        assert_eq!(faces(&lpm(&r, "/x")), [1]);
        assert_eq!(lpm(&r, "/a/b").prefix, n("/a"));
        assert_eq!(lpm(&r, "/a/b/c/d").prefix, n("/a/b/c"));
        assert_eq!(lpm(&r, "/a/b/cd").prefix, n("/a"));
    }

    #[test]
    fn a_strategy_choice_entry_inherits_nexthops() {
        let (mut w, r) = fib(8);
        add(&mut w, "/a", 300, 0);
        w.set_strategy(&n("/a/b"), MULTICAST).unwrap();
        w.publish();
        let e = lpm(&r, "/a/b/c");
        assert_eq!(e.prefix, n("/a/b"));
        assert_eq!((faces(&e), e.strategy), (vec![300], MULTICAST));
        // its own route replaces the inherited nexthops...
        add(&mut w, "/a/b", 301, 0);
        w.publish();
        let own = lpm(&r, "/a/b/c");
        assert_eq!((faces(&own), own.strategy), (vec![301], MULTICAST));
        assert_eq!(own.id, e.id);
        assert!(own.seq > e.seq);
        // ...and removing it inherits them again: the choice keeps the entry
        assert!(w.remove_nexthop(&n("/a/b"), FaceId(301)));
        w.publish();
        let again = lpm(&r, "/a/b/c");
        assert_eq!((faces(&again), again.prefix), (vec![300], n("/a/b")));
        assert!(again.seq > own.seq);
        // the parent's nexthops flow down to it
        add(&mut w, "/a", 302, 0);
        w.publish();
        assert_eq!(faces(&lpm(&r, "/a/b/c")), [300, 302]);
    }

    #[test]
    fn removing_the_last_nexthop_removes_the_route_and_the_entry() {
        let (mut w, r) = fib(8);
        add(&mut w, "/a", 300, 0);
        add(&mut w, "/a", 301, 0);
        w.publish();
        assert!(!w.remove_nexthop(&n("/a"), FaceId(399)));
        assert!(!w.remove_nexthop(&n("/b"), FaceId(300)));
        assert!(w.remove_nexthop(&n("/a"), FaceId(300)));
        w.publish();
        assert_eq!(faces(&lpm(&r, "/a")), [301]);
        assert!(w.remove_nexthop(&n("/a"), FaceId(301)));
        assert!(!w.remove_nexthop(&n("/a"), FaceId(301)));
        w.publish();
        assert_eq!(exact(&r, "/a"), None);
        assert_eq!(lpm(&r, "/a/b").prefix, Name::root());
        assert_eq!(r.enter().unwrap().len(), 1);
        assert!(w.routes.is_empty() && w.slots.is_empty());
    }

    #[test]
    fn a_parent_route_change_rewrites_only_inheriting_entries() {
        let (mut w, r) = fib(8);
        add(&mut w, "/a", 300, 0);
        add(&mut w, "/a/b", 301, 0);
        w.set_strategy(&n("/a/c"), MULTICAST).unwrap();
        w.set_strategy(&n("/a/b/d"), MULTICAST).unwrap();
        w.publish();
        let b = exact(&r, "/a/b").unwrap();
        let c = exact(&r, "/a/c").unwrap();
        let bd = exact(&r, "/a/b/d").unwrap();
        assert_eq!(faces(&bd), [301]);
        add(&mut w, "/a", 302, 0);
        w.publish();
        assert_eq!(exact(&r, "/a/b").unwrap(), b);
        assert_eq!(exact(&r, "/a/b/d").unwrap(), bd);
        let c2 = exact(&r, "/a/c").unwrap();
        assert_eq!(faces(&c2), [300, 302]);
        assert!(c2.seq > c.seq);
    }

    #[test]
    fn a_strategy_change_flows_down_to_entries_without_their_own() {
        let (mut w, r) = fib(8);
        add(&mut w, "/a/b", 300, 0);
        add(&mut w, "/a/c/d", 301, 0);
        w.set_strategy(&n("/a/c"), StrategyId(7)).unwrap();
        w.publish();
        let cd = exact(&r, "/a/c/d").unwrap();
        assert_eq!(cd.strategy, StrategyId(7));
        w.set_strategy(&n("/a"), MULTICAST).unwrap();
        w.publish();
        let a = exact(&r, "/a").unwrap();
        assert_eq!((faces(&a), a.strategy), (vec![], MULTICAST));
        assert_eq!(exact(&r, "/a/b").unwrap().strategy, MULTICAST);
        assert_eq!(exact(&r, "/a/c/d").unwrap(), cd);
        assert!(w.unset_strategy(&n("/a/c")));
        w.publish();
        assert_eq!(exact(&r, "/a/c"), None);
        assert_eq!(exact(&r, "/a/c/d").unwrap().strategy, MULTICAST);
        w.set_strategy(&Name::root(), StrategyId(9)).unwrap();
        assert!(w.unset_strategy(&n("/a")));
        w.publish();
        assert_eq!(exact(&r, "/a"), None);
        assert_eq!(lpm(&r, "/a/b/x").strategy, StrategyId(9));
        assert_eq!(lpm(&r, "/zz").strategy, StrategyId(9));
    }

    #[test]
    fn the_root_choice_cannot_be_unset_and_is_listed_first() {
        let (mut w, _r) = fib(8);
        assert!(!w.unset_strategy(&Name::root()));
        assert!(!w.unset_strategy(&n("/never")));
        w.set_strategy(&n("/z"), MULTICAST).unwrap();
        w.set_strategy(&n("/b"), StrategyId(3)).unwrap();
        let listed: Vec<(String, StrategyId)> = w
            .strategy_choices()
            .map(|(p, s)| (p.to_string(), s))
            .collect();
        assert_eq!(
            listed,
            [
                ("/".into(), BEST_ROUTE),
                ("/b".into(), StrategyId(3)),
                ("/z".into(), MULTICAST)
            ]
        );
    }

    #[test]
    fn remove_face_purges_every_nexthop_of_the_face() {
        let (mut w, r) = fib(2);
        add(&mut w, "/", 300, 0);
        add(&mut w, "/a", 300, 0);
        add(&mut w, "/a", 301, 0);
        add(&mut w, "/a/b/c/d", 300, 0);
        add(&mut w, "/e", 302, 0);
        w.set_strategy(&n("/a/b/c/d/e"), MULTICAST).unwrap();
        w.publish();
        assert_eq!(w.remove_face(FaceId(300)), 3);
        assert_eq!(w.remove_face(FaceId(300)), 0);
        w.publish();
        assert!(faces(&lpm(&r, "/x")).is_empty());
        assert_eq!(faces(&lpm(&r, "/a/b")), [301]);
        let deep = lpm(&r, "/a/b/c/d/e/f");
        assert_eq!(
            (deep.prefix.clone(), faces(&deep)),
            (n("/a/b/c/d/e"), vec![301])
        );
        assert_eq!(exact(&r, "/a/b/c/d"), None);
        assert_eq!(marker(&r, "/a/b"), Some(5));
        assert_eq!(r.enter().unwrap().len(), 4);
    }

    #[test]
    fn entries_deeper_than_m_are_found_through_virtual_markers() {
        let (mut w, r) = fib(2);
        add(&mut w, "/a/b/c/d", 300, 0);
        w.publish();
        assert_eq!(lpm(&r, "/a/b/c/d/e").prefix, n("/a/b/c/d"));
        assert_eq!(lpm(&r, "/a/b/c").prefix, Name::root());
        assert_eq!(marker(&r, "/a/b"), Some(4));
        assert_eq!(exact(&r, "/a/b"), None);
        add(&mut w, "/a/b/c/d/e/f", 301, 0);
        add(&mut w, "/a/b/x/y/z", 302, 0);
        w.publish();
        assert_eq!(marker(&r, "/a/b"), Some(6));
        assert_eq!(lpm(&r, "/a/b/c/d/e/f/g").prefix, n("/a/b/c/d/e/f"));
        assert_eq!(lpm(&r, "/a/b/c/d/e/g").prefix, n("/a/b/c/d"));
        assert_eq!(lpm(&r, "/a/b/x/y/z").prefix, n("/a/b/x/y/z"));
        // removing the deepest route lowers the marker
        assert!(w.remove_nexthop(&n("/a/b/c/d/e/f"), FaceId(301)));
        w.publish();
        assert_eq!(marker(&r, "/a/b"), Some(5));
        assert!(w.remove_nexthop(&n("/a/b/x/y/z"), FaceId(302)));
        w.publish();
        assert_eq!(marker(&r, "/a/b"), Some(4));
        // the last one takes the virtual marker with it
        assert!(w.remove_nexthop(&n("/a/b/c/d"), FaceId(300)));
        w.publish();
        assert_eq!(marker(&r, "/a/b"), None);
        assert_eq!(r.enter().unwrap().table.slots_in_use(), 0);
        assert!(w.slots.is_empty());
    }

    #[test]
    fn a_real_entry_at_depth_m_carries_the_marker() {
        let (mut w, r) = fib(2);
        add(&mut w, "/a/b/c", 301, 0);
        add(&mut w, "/a/b", 300, 0);
        w.publish();
        let ab = exact(&r, "/a/b").unwrap();
        assert_eq!(marker(&r, "/a/b"), Some(3));
        assert_eq!(lpm(&r, "/a/b/c/x").prefix, n("/a/b/c"));
        assert_eq!(lpm(&r, "/a/b/x/y").prefix, n("/a/b"));
        // the entry goes, the marker stays in the same slot
        assert!(w.remove_nexthop(&n("/a/b"), FaceId(300)));
        w.publish();
        assert_eq!(exact(&r, "/a/b"), None);
        assert_eq!(r.enter().unwrap().get(ab.id), None);
        assert_eq!(marker(&r, "/a/b"), Some(3));
        assert_eq!(lpm(&r, "/a/b/c/x").prefix, n("/a/b/c"));
        assert_eq!(lpm(&r, "/a/b/x/y").prefix, Name::root());
        // and the entry comes back into it, the marker intact
        add(&mut w, "/a/b", 300, 0);
        w.publish();
        assert_eq!(exact(&r, "/a/b").unwrap().id, ab.id);
        assert_eq!(marker(&r, "/a/b"), Some(3));
        assert!(w.remove_nexthop(&n("/a/b/c"), FaceId(301)));
        w.publish();
        assert_eq!(marker(&r, "/a/b"), Some(0));
        assert_eq!(lpm(&r, "/a/b/c/x").prefix, n("/a/b"));
    }

    #[test]
    fn seq_changes_on_every_rewrite_and_get_detects_replacement() {
        let (mut w, r) = fib(8);
        add(&mut w, "/a", 300, 0);
        w.publish();
        let remembered = lpm(&r, "/a/x");
        let still = |r: &FibReader, id: u32, seq: u64| {
            r.enter().unwrap().get(id).is_some_and(|e| e.seq == seq)
        };
        assert!(still(&r, remembered.id, remembered.seq));
        add(&mut w, "/a", 301, 0);
        w.publish();
        let rewritten = lpm(&r, "/a/x");
        assert_eq!(rewritten.id, remembered.id);
        assert!(rewritten.seq > remembered.seq);
        assert!(!still(&r, remembered.id, remembered.seq));
        // removed, then the id reused by another prefix: a new seq again
        w.remove_face(FaceId(300));
        w.remove_face(FaceId(301));
        w.publish();
        assert!(r.enter().unwrap().get(remembered.id).is_none());
        add(&mut w, "/b", 302, 0);
        w.publish();
        let reused = lpm(&r, "/b");
        assert_eq!(reused.id, remembered.id);
        assert!(reused.seq > rewritten.seq);
        assert!(!still(&r, remembered.id, remembered.seq));
        // root rewrites bump the root's seq too
        let root = r.enter().unwrap().get(0).unwrap().seq;
        add(&mut w, "/", 303, 0);
        w.publish();
        assert!(r.enter().unwrap().get(0).unwrap().seq > root);
    }

    #[test]
    fn prefixes_longer_than_32_components_are_refused() {
        let (mut w, r) = fib(8);
        let long = |len: usize| Name::from_components((0..len).map(|_| Component::generic(b"x")));
        assert_eq!(
            w.add_nexthop(&long(33), FaceId(300), 0),
            Err(FibError::PrefixTooLong { len: 33 })
        );
        assert_eq!(
            w.set_strategy(&long(40), MULTICAST),
            Err(FibError::PrefixTooLong { len: 40 })
        );
        assert!(!w.remove_nexthop(&long(33), FaceId(300)));
        assert!(!w.unset_strategy(&long(33)));
        w.add_nexthop(&long(32), FaceId(300), 0).unwrap();
        w.publish();
        let name = long(40);
        let g = r.enter().unwrap();
        assert_eq!(
            g.lpm(&name, &hasher().prefix_hashes(&name)).prefix,
            long(32)
        );
        assert_eq!(g.len(), 2);
        drop(g);
        assert_eq!(marker(&r, &"/x".repeat(8)), Some(32));
    }

    #[test]
    fn stage1_depth_is_clamped() {
        for m in [0, 1, 32, 100] {
            let (mut w, r) = fib(m);
            add(&mut w, "/a/b/c", 300, 0);
            add(&mut w, "/a", 301, 0);
            w.publish();
            assert_eq!(lpm(&r, "/a/b/c/d").prefix, n("/a/b/c"), "M = {m}");
            assert_eq!(lpm(&r, "/a/b").prefix, n("/a"), "M = {m}");
        }
    }

    #[test]
    fn entries_do_not_keep_the_command_packet_alive() {
        let (mut w, r) = fib(8);
        let packet = n("/command/a/b/c/with/a/long/tail");
        let prefix = packet.prefix(2);
        w.add_nexthop(&prefix, FaceId(300), 0).unwrap();
        w.publish();
        let stored = exact(&r, "/command/a").unwrap().prefix;
        let range = packet.value().as_ptr_range();
        assert!(!range.contains(&stored.value().as_ptr()));
        let key = w.routes.keys().next().unwrap();
        assert!(!range.contains(&key.0.value().as_ptr()));
    }

    #[test]
    fn readers_end_with_the_writer_and_the_factory_is_shareable() {
        fn shareable<T: Send + Sync + Clone>(_: &T) {}
        fn sendable<T: Send>(_: &T) {}
        let (w, factory) = FibWriter::new(hasher(), FibConfig::default(), BEST_ROUTE);
        shareable(&factory);
        let r = factory.clone().reader();
        sendable(&r);
        assert!(r.enter().is_some());
        drop(w);
        assert!(r.enter().is_none());
        assert!(factory.reader().enter().is_none());
    }

    #[test]
    fn a_reader_thread_never_sees_a_torn_or_rootless_fib() {
        const GROUP: u32 = 50;
        let (mut w, factory) = FibWriter::new(
            hasher(),
            FibConfig {
                max_depth_stage1: 2,
            },
            BEST_ROUTE,
        );
        let group: Vec<Name> = (0..GROUP).map(|i| n(&format!("/t/{i}/x/y"))).collect();
        for p in &group {
            w.add_nexthop(&p.prefix(2), FaceId(1000), 0).unwrap();
        }
        w.publish();
        let stop = Arc::new(AtomicBool::new(false));
        let reader = {
            let stop = Arc::clone(&stop);
            let group: Vec<(Name, NameHashes)> = group
                .iter()
                .map(|p| (p.clone(), hasher().prefix_hashes(p)))
                .collect();
            let bulk: Vec<(Name, NameHashes)> = (0..200)
                .map(|i| n(&format!("/bulk/{i}/a/b/c")))
                .map(|p| (p.clone(), hasher().prefix_hashes(&p)))
                .collect();
            let r = factory.reader();
            std::thread::spawn(move || {
                let mut bursts = 0u64;
                while !stop.load(Ordering::Relaxed) || bursts == 0 {
                    let g = r.enter().expect("the writer lives until the end");
                    let root = g.get(0).expect("the root entry always exists");
                    assert_eq!(root.prefix, Name::root());
                    let (name, hashes) = &group[0];
                    let face = g.lpm(name, hashes).nexthops[0].face;
                    for (name, hashes) in &group {
                        let e = g.lpm(name, hashes);
                        assert_eq!(e.prefix.len(), 2, "{name}");
                        assert_eq!(faces(e), [face.0 as u32], "torn group at {name}");
                    }
                    for (name, hashes) in &bulk {
                        let e = g.lpm(name, hashes);
                        assert!(e.prefix.is_prefix_of(name));
                        if e.id != 0 {
                            assert!(!e.nexthops.is_empty(), "{name}");
                            assert!(g.get(e.id).is_some_and(|x| x.seq == e.seq));
                        }
                    }
                    drop(g);
                    bursts += 1;
                }
                bursts
            })
        };
        for round in 0..6u32 {
            let (old, new) = (
                FaceId(1000 + u64::from(round)),
                FaceId(1001 + u64::from(round)),
            );
            for p in &group {
                w.add_nexthop(&p.prefix(2), new, 0).unwrap();
                w.remove_nexthop(&p.prefix(2), old);
            }
            for i in 0..1000u32 {
                let p = n(&format!("/bulk/{}/a/b", (i * 7 + round) % 200));
                w.add_nexthop(
                    &p.prefix(2 + (i % 3) as usize),
                    FaceId(2000 + u64::from(i % 5)),
                    i,
                )
                .unwrap();
                if i % 100 == 99 {
                    w.publish();
                }
            }
            w.publish();
            for i in 0..5 {
                w.remove_face(FaceId(2000 + i));
                w.publish();
            }
        }
        stop.store(true, Ordering::Relaxed);
        let bursts = reader.join().expect("reader assertions held");
        assert!(bursts > 0);
        let r = factory.reader();
        assert_eq!(r.enter().unwrap().len(), 1 + GROUP as usize);
    }

    /// Component `i` of the test alphabet.
    fn comp(i: u8) -> Component<'static> {
        const ALPHABET: [&[u8]; 3] = [b"a", b"b", b"c"];
        Component::generic(ALPHABET[usize::from(i % 3)])
    }

    fn name_of(comps: &[u8]) -> Name {
        Name::from_components(comps.iter().map(|&c| comp(c)))
    }

    /// A change to the routes or choices, on names drawn from a shared pool.
    #[derive(Clone, Debug)]
    enum Op {
        Add(usize, u32, u32),
        Remove(usize, u32),
        Set(usize, u16),
        Unset(usize),
        RemoveFace(u32),
        Publish,
    }

    /// The brute-force reference: routes and choices as plain maps.
    #[derive(Default)]
    struct Model {
        /// Each prefix's (face, cost) in the order the FIB must keep them.
        routes: BTreeMap<Vec<u8>, Vec<(u32, u32)>>,
        choices: BTreeMap<Vec<u8>, u16>,
    }

    impl Model {
        fn apply(&mut self, op: &Op, pool: &[Vec<u8>]) {
            match *op {
                Op::Add(i, face, cost) => {
                    let r = self.routes.entry(pool[i].clone()).or_default();
                    if !r.contains(&(face, cost)) {
                        r.retain(|&(f, _)| f != face);
                        let at = r.iter().take_while(|&&(_, c)| c <= cost).count();
                        r.insert(at, (face, cost));
                    }
                }
                Op::Remove(i, face) => {
                    if let Some(r) = self.routes.get_mut(&pool[i]) {
                        r.retain(|&(f, _)| f != face);
                        if r.is_empty() {
                            self.routes.remove(&pool[i]);
                        }
                    }
                }
                Op::Set(i, s) => {
                    self.choices.insert(pool[i].clone(), s);
                }
                Op::Unset(i) => {
                    if !pool[i].is_empty() {
                        self.choices.remove(&pool[i]);
                    }
                }
                Op::RemoveFace(face) => {
                    for r in self.routes.values_mut() {
                        r.retain(|&(f, _)| f != face);
                    }
                    self.routes.retain(|_, r| !r.is_empty());
                }
                Op::Publish => {}
            }
        }

        fn longest<'a, V>(map: &'a BTreeMap<Vec<u8>, V>, name: &[u8]) -> Option<(&'a [u8], &'a V)> {
            (0..=name.len())
                .rev()
                .find_map(|d| map.get_key_value(&name[..d]))
                .map(|(k, v)| (k.as_slice(), v))
        }

        /// The prefixes that must have entries.
        fn entries(&self) -> BTreeSet<Vec<u8>> {
            let mut set: BTreeSet<Vec<u8>> = self.routes.keys().cloned().collect();
            set.extend(self.choices.keys().cloned());
            set.insert(Vec::new());
            set
        }

        /// What the entry for `prefix` must hold: nexthops and strategy.
        fn expected(&self, prefix: &[u8]) -> (Vec<NextHop>, StrategyId) {
            let hops: Vec<NextHop> = Self::longest(&self.routes, prefix)
                .map(|(_, r)| {
                    r.iter()
                        .map(|&(f, c)| NextHop {
                            face: FaceId(f.into()),
                            cost: c,
                        })
                        .collect()
                })
                .unwrap_or_default();
            let s =
                Self::longest(&self.choices, prefix).map_or(BEST_ROUTE, |(_, s)| StrategyId(*s));
            (hops, s)
        }

        fn check(&self, r: &FibReader, lookups: &[Vec<u8>]) -> Result<(), TestCaseError> {
            let g = r.enter().unwrap();
            let want = self.entries();
            prop_assert_eq!(g.len(), want.len());
            let mut seqs = BTreeSet::new();
            for e in g.iter() {
                prop_assert!(seqs.insert(e.seq), "seq {} twice", e.seq);
                prop_assert_eq!(g.get(e.id), Some(e));
            }
            for p in &want {
                let e = g.find_exact(&name_of(p));
                prop_assert!(e.is_some(), "no entry for {}", name_of(p));
                let e = e.unwrap();
                let (hops, s) = self.expected(p);
                prop_assert_eq!(e.nexthops.as_slice(), hops.as_slice(), "{}", e.prefix);
                prop_assert_eq!(e.strategy, s, "{}", e.prefix);
            }
            for l in lookups {
                let name = name_of(l);
                let e = g.lpm(&name, &hasher().prefix_hashes(&name));
                let longest = (0..=l.len()).rev().find(|&d| want.contains(&l[..d]));
                prop_assert_eq!(Some(e.prefix.len()), longest, "lookup {}", name);
                prop_assert!(e.prefix.is_prefix_of(&name));
                let (hops, s) = self.expected(&l[..e.prefix.len()]);
                prop_assert_eq!(e.nexthops.as_slice(), hops.as_slice());
                prop_assert_eq!(e.strategy, s);
            }
            Ok(())
        }
    }

    fn comps(max: usize) -> impl Strategy<Value = Vec<u8>> {
        prop::collection::vec(0u8..3, 0..=max)
    }

    /// M, the pool of prefixes, the changes, the names looked up.
    type Case = (usize, Vec<Vec<u8>>, Vec<Op>, Vec<Vec<u8>>);

    fn case() -> impl Strategy<Value = Case> {
        (1usize..=10, prop::collection::vec(comps(20), 1..16)).prop_flat_map(|(m, pool)| {
            let k = pool.len();
            let op = prop_oneof![
                6 => (0..k, 300u32..304, 0u32..3).prop_map(|(i, f, c)| Op::Add(i, f, c)),
                3 => (0..k, 300u32..304).prop_map(|(i, f)| Op::Remove(i, f)),
                2 => (0..k, 3u16..6).prop_map(|(i, s)| Op::Set(i, s)),
                1 => (0..k).prop_map(Op::Unset),
                1 => (300u32..304).prop_map(Op::RemoveFace),
                2 => Just(Op::Publish),
            ];
            let extended = (0..k, comps(4)).prop_map({
                let pool = pool.clone();
                move |(i, tail)| [pool[i].as_slice(), &tail].concat()
            });
            let lookup = prop_oneof![extended, comps(22)];
            (
                Just(m),
                Just(pool),
                prop::collection::vec(op, 0..60),
                prop::collection::vec(lookup, 1..40),
            )
        })
    }

    /// A component with any type and a value long enough for 1- and 3-octet lengths.
    fn any_component() -> impl Strategy<Value = (u64, Vec<u8>)> {
        let typ = prop_oneof![1u64..4, 250u64..260, 65_530u64..=65_535];
        let value = prop_oneof![
            prop::collection::vec(0u8..3, 0..3),
            prop::collection::vec(any::<u8>(), 250..256),
        ];
        (typ, value)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// The maps rely on it: octet order is canonical order, and octet prefix is name prefix.
        #[test]
        fn key_order_is_canonical_order(
            a in prop::collection::vec(any_component(), 0..4),
            b in prop::collection::vec(any_component(), 0..4),
            shared in 0usize..4,
        ) {
            // b often extends a prefix of a, so prefixes and near-prefixes are compared too
            let b = [&a[..shared.min(a.len())], &b[..]].concat();
            let name = |cs: &[(u64, Vec<u8>)]| {
                Name::from_components(cs.iter().map(|(t, v)| Component::new(*t, v).unwrap()))
            };
            let (a, b) = (name(&a), name(&b));
            prop_assert_eq!(Key(a.clone()).cmp(&Key(b.clone())), a.cmp(&b));
            prop_assert_eq!(b.value().starts_with(a.value()), a.is_prefix_of(&b));
            prop_assert_eq!(a.is_prefix_of(&b), a.len() <= b.len() && b.prefix(a.len()) == a);
        }

        #[test]
        fn lpm_matches_a_brute_force_reference((m, pool, ops, lookups) in case()) {
            let (mut w, r) = fib(m);
            let names: Vec<Name> = pool.iter().map(|p| name_of(p)).collect();
            let mut model = Model::default();
            for op in &ops {
                model.apply(op, &pool);
                match *op {
                    Op::Add(i, f, c) => w.add_nexthop(&names[i], FaceId(f.into()), c).unwrap(),
                    Op::Remove(i, f) => {
                        w.remove_nexthop(&names[i], FaceId(f.into()));
                    }
                    Op::Set(i, s) => w.set_strategy(&names[i], StrategyId(s)).unwrap(),
                    Op::Unset(i) => {
                        w.unset_strategy(&names[i]);
                    }
                    Op::RemoveFace(f) => {
                        w.remove_face(FaceId(f.into()));
                    }
                    Op::Publish => {
                        w.publish();
                        model.check(&r, &lookups)?;
                    }
                }
            }
            w.publish();
            model.check(&r, &lookups)?;
            // the writer's markers are exactly the read side's
            let g = r.enter().unwrap();
            for (p, info) in &w.slots {
                prop_assert_eq!(g.table.marker(&p.0), Some(info.max_depth));
            }
            prop_assert_eq!(g.table.slots_in_use(), w.slots.len());
        }
    }
}
