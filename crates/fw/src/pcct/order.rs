//! The cached names in NDN canonical order, so that a CanBePrefix Interest finds the first
//! cached Data under its name, as NFD's CS does, without a scan.
//!
//! An adaptive radix tree (V. Leis, A. Kemper, T. Neumann, "The Adaptive Radix Tree: ARTful
//! Indexing for Main-Memory Databases", ICDE 2013) over the octets of each CS entry's key:
//! - A name's TLV-VALUE compares octet by octet in canonical order: VAR-NUMBERs are minimal, so
//!   their encodings keep the order of the numbers, and a proper prefix sorts first. All names
//!   under a prefix are therefore one subtree.
//! - A key is the name's octets, then `00 00` (no forwarding hint) or `00 01`, the hint's
//!   octets, `00`. Component types are never 0, so no key is a prefix of another, and a name's
//!   keys sort before those of the longer names under it.
//! - The tree holds slot numbers only; key octets are read from the PCCT's entries
//!   ([`Keys`]). Inner nodes keep up to [`STORED_PREFIX`] octets of their compressed path; a
//!   longer path is read from a leaf below ("optimistic" path compression).
//! - Nodes have 4, 16 or 256 children, taken from per-size pools and given back through free
//!   lists: after the pools reach the most nodes the index ever held, nothing is allocated.
//!   There are never more inner nodes than leaves.
//!
//! Only the CS's Data are indexed (one leaf per cached Data); an exact lookup never touches the
//! tree.

use core::ops::ControlFlow;

/// Octets of an inner node's compressed path kept in the node.
const STORED_PREFIX: usize = 8;

/// Where a key's octets come from: the PCCT entry in a slot.
pub(super) trait Keys {
    /// The key of the live entry in `slot`.
    fn key(&self, slot: u32) -> Key<'_>;
}

/// An index key: a name's octets with the suffix that keeps keys prefix-free.
#[derive(Debug, Clone, Copy)]
pub(super) struct Key<'a> {
    name: &'a [u8],
    hint: Option<&'a [u8]>,
}

impl<'a> Key<'a> {
    /// The key of a name (its TLV-VALUE) in the partition of `hint` (a TLV-VALUE too).
    pub fn new(name: &'a [u8], hint: Option<&'a [u8]>) -> Self {
        Key { name, hint }
    }

    fn len(&self) -> usize {
        self.name.len() + self.hint.map_or(2, |h| h.len() + 3)
    }

    /// Octet `i`, 0 past the end (never read there: keys are prefix-free and distinct).
    #[inline]
    fn at(&self, i: usize) -> u8 {
        match self.name.get(i) {
            Some(&b) => b,
            None => self.suffix_at(i),
        }
    }

    /// Octet `i` past the name: the partition suffix.
    #[cold]
    fn suffix_at(&self, i: usize) -> u8 {
        let i = i - self.name.len();
        match (self.hint, i) {
            (_, 0) | (None, _) => 0,
            (Some(_), 1) => 1,
            (Some(h), i) => h.get(i - 2).copied().unwrap_or(0),
        }
    }
}

/// Octets `a` and `b` share from `from` on (up to the shorter one's end).
fn common_from(a: &Key<'_>, b: &Key<'_>, from: usize) -> usize {
    let mut i = from;
    // Most keys part within their names: compare those eight octets at a time.
    let n = a.name.len().min(b.name.len());
    while i + 8 <= n && a.name[i..i + 8] == b.name[i..i + 8] {
        i += 8;
    }
    let end = a.len().min(b.len());
    while i < end && a.at(i) == b.at(i) {
        i += 1;
    }
    i - from
}

/// A child reference: none, a leaf (a slot), or an inner node (its size and pool index).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Ref(u32);

impl Ref {
    const NONE: Ref = Ref(0);
    const LEAF: u32 = 1 << 31;
    const SMALL: u32 = 1 << 28;
    const MEDIUM: u32 = 2 << 28;
    const BIG: u32 = 3 << 28;
    const KIND: u32 = 3 << 28;
    const INDEX: u32 = (1 << 28) - 1;

    fn leaf(slot: u32) -> Ref {
        Ref(Self::LEAF | slot)
    }

    fn leaf_slot(self) -> Option<u32> {
        (self.0 & Self::LEAF != 0).then_some(self.0 & !Self::LEAF)
    }

    fn index(self) -> usize {
        (self.0 & Self::INDEX) as usize
    }

    fn kind(self) -> u32 {
        self.0 & Self::KIND
    }
}

/// What every inner node starts with: its compressed path and how many children it has.
#[derive(Debug, Clone, Copy, Default)]
struct Header {
    /// The first octets of the path (at most [`STORED_PREFIX`]).
    prefix: [u8; STORED_PREFIX],
    /// Octets of the whole path.
    prefix_len: u32,
    count: u16,
}

/// An inner node of up to `N` children, by ascending octet.
#[derive(Debug, Clone, Copy)]
struct Small<const N: usize> {
    h: Header,
    octets: [u8; N],
    children: [Ref; N],
}

impl<const N: usize> Default for Small<N> {
    fn default() -> Self {
        Small {
            h: Header::default(),
            octets: [0; N],
            children: [Ref::NONE; N],
        }
    }
}

impl<const N: usize> Small<N> {
    /// The index of the child under octet `b`.
    #[inline]
    fn find(&self, b: u8) -> Option<usize> {
        self.octets[..usize::from(self.h.count)]
            .iter()
            .position(|&o| o == b)
    }

    fn insert(&mut self, b: u8, child: Ref) {
        let n = usize::from(self.h.count);
        debug_assert!(n < N);
        // A few entries at most: shifted one by one (a memmove call costs more).
        let mut i = n;
        while i > 0 && self.octets[i - 1] > b {
            self.octets[i] = self.octets[i - 1];
            self.children[i] = self.children[i - 1];
            i -= 1;
        }
        self.octets[i] = b;
        self.children[i] = child;
        self.h.count += 1;
    }

    fn remove(&mut self, b: u8) {
        let n = usize::from(self.h.count);
        if let Some(i) = self.find(b) {
            for j in i..n - 1 {
                self.octets[j] = self.octets[j + 1];
                self.children[j] = self.children[j + 1];
            }
            self.h.count -= 1;
        }
    }
}

/// What the descent reads of an inner node, whatever its size.
trait Inner {
    fn header(&self) -> &Header;
    /// The child under octet `b`, or [`Ref::NONE`].
    fn child(&self, b: u8) -> Ref;
}

impl<const N: usize> Inner for Small<N> {
    #[inline]
    fn header(&self) -> &Header {
        &self.h
    }

    #[inline]
    fn child(&self, b: u8) -> Ref {
        match self.find(b) {
            Some(i) => self.children[i],
            None => Ref::NONE,
        }
    }
}

impl Inner for Big {
    #[inline]
    fn header(&self) -> &Header {
        &self.h
    }

    #[inline]
    fn child(&self, b: u8) -> Ref {
        self.children[usize::from(b)]
    }
}

/// One step of a descent through an inner node.
enum Step {
    /// The key leaves the node's path after this many octets.
    Off(usize),
    /// The path matched (this long); the child under the key's next octet (which may be
    /// [`Ref::NONE`]).
    Down { len: usize, octet: u8, child: Ref },
}

/// An inner node with a child slot for every octet.
#[derive(Debug, Clone, Copy)]
struct Big {
    h: Header,
    children: [Ref; 256],
}

impl Default for Big {
    fn default() -> Self {
        Big {
            h: Header::default(),
            children: [Ref::NONE; 256],
        }
    }
}

/// Nodes of one size, reused through a free list.
#[derive(Debug)]
struct Pool<T> {
    nodes: Vec<T>,
    free: Vec<u32>,
}

impl<T: Default> Pool<T> {
    fn new() -> Self {
        Pool {
            nodes: Vec::new(),
            free: Vec::new(),
        }
    }

    fn take(&mut self, value: T) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.nodes[i as usize] = value;
                i
            }
            None => {
                self.nodes.push(value);
                (self.nodes.len() - 1) as u32
            }
        }
    }

    fn give_back(&mut self, i: usize) {
        self.free.push(i as u32);
    }

    #[cfg(test)]
    fn in_use(&self) -> usize {
        self.nodes.len() - self.free.len()
    }
}

/// Where a reference lives: the root, or a child slot of an inner node.
#[derive(Debug, Clone, Copy)]
enum Loc {
    Root,
    Child(Ref, u8),
}

/// The ordered index of the CS entries' keys.
#[derive(Debug)]
pub(super) struct NameOrder {
    root: Ref,
    small: Pool<Small<4>>,
    medium: Pool<Small<16>>,
    big: Pool<Big>,
    leaves: usize,
    /// The in-order walk's stack, kept to reuse its memory.
    stack: Vec<(Ref, u16)>,
}

impl NameOrder {
    /// An empty index.
    pub fn new() -> Self {
        NameOrder {
            root: Ref::NONE,
            small: Pool::new(),
            medium: Pool::new(),
            big: Pool::new(),
            leaves: 0,
            stack: Vec::new(),
        }
    }

    /// Keys indexed.
    pub fn len(&self) -> usize {
        self.leaves
    }

    /// Forgets every key (the pools keep their memory for the next ones).
    pub fn clear(&mut self) {
        self.root = Ref::NONE;
        self.leaves = 0;
        for free in [
            &mut self.small.free,
            &mut self.medium.free,
            &mut self.big.free,
        ] {
            free.clear();
        }
        self.small.nodes.clear();
        self.medium.nodes.clear();
        self.big.nodes.clear();
    }

    /// Inner nodes in use.
    #[cfg(test)]
    fn inner_nodes(&self) -> usize {
        self.small.in_use() + self.medium.in_use() + self.big.in_use()
    }

    fn header(&self, r: Ref) -> &Header {
        match r.kind() {
            Ref::SMALL => &self.small.nodes[r.index()].h,
            Ref::MEDIUM => &self.medium.nodes[r.index()].h,
            _ => &self.big.nodes[r.index()].h,
        }
    }

    fn header_mut(&mut self, r: Ref) -> &mut Header {
        match r.kind() {
            Ref::SMALL => &mut self.small.nodes[r.index()].h,
            Ref::MEDIUM => &mut self.medium.nodes[r.index()].h,
            _ => &mut self.big.nodes[r.index()].h,
        }
    }

    #[inline]
    fn child(&self, r: Ref, b: u8) -> Option<Ref> {
        let c = match r.kind() {
            Ref::SMALL => {
                let n = &self.small.nodes[r.index()];
                n.children[n.find(b)?]
            }
            Ref::MEDIUM => {
                let n = &self.medium.nodes[r.index()];
                n.children[n.find(b)?]
            }
            _ => self.big.nodes[r.index()].children[usize::from(b)],
        };
        (c != Ref::NONE).then_some(c)
    }

    fn set_child(&mut self, r: Ref, b: u8, child: Ref) {
        match r.kind() {
            Ref::SMALL => {
                let n = &mut self.small.nodes[r.index()];
                if let Some(i) = n.find(b) {
                    n.children[i] = child;
                }
            }
            Ref::MEDIUM => {
                let n = &mut self.medium.nodes[r.index()];
                if let Some(i) = n.find(b) {
                    n.children[i] = child;
                }
            }
            _ => self.big.nodes[r.index()].children[usize::from(b)] = child,
        }
    }

    fn set(&mut self, at: Loc, r: Ref) {
        match at {
            Loc::Root => self.root = r,
            Loc::Child(parent, b) => self.set_child(parent, b, r),
        }
    }

    /// The first child at octet `from` or above, in order.
    fn next_child(&self, r: Ref, from: u16) -> Option<(u8, Ref)> {
        let pick = |octets: &[u8], children: &[Ref]| {
            octets
                .iter()
                .zip(children)
                .find(|(&o, _)| u16::from(o) >= from)
                .map(|(&o, &c)| (o, c))
        };
        match r.kind() {
            Ref::SMALL => {
                let n = &self.small.nodes[r.index()];
                let k = usize::from(n.h.count);
                pick(&n.octets[..k], &n.children[..k])
            }
            Ref::MEDIUM => {
                let n = &self.medium.nodes[r.index()];
                let k = usize::from(n.h.count);
                pick(&n.octets[..k], &n.children[..k])
            }
            _ => {
                let n = &self.big.nodes[r.index()];
                (usize::from(from)..256)
                    .find(|&o| n.children[o] != Ref::NONE)
                    .map(|o| (o as u8, n.children[o]))
            }
        }
    }

    /// The smallest leaf under `r`: every leaf below a node shares the node's whole path.
    fn min_leaf(&self, mut r: Ref) -> u32 {
        loop {
            if let Some(slot) = r.leaf_slot() {
                return slot;
            }
            r = self.next_child(r, 0).expect("inner nodes have children").1;
        }
    }

    /// A new node of 4 children with this path (`prefix_len` octets of `key` from `depth`).
    fn new_small(&mut self, key: &Key<'_>, depth: usize, prefix_len: usize) -> Ref {
        let mut h = Header {
            prefix_len: prefix_len as u32,
            ..Header::default()
        };
        let stored = prefix_len.min(STORED_PREFIX);
        match key.name.get(depth..depth + stored) {
            Some(octets) => h.prefix[..stored].copy_from_slice(octets),
            None => {
                for (i, p) in h.prefix.iter_mut().enumerate().take(stored) {
                    *p = key.at(depth + i);
                }
            }
        }
        Ref(Ref::SMALL
            | self.small.take(Small {
                h,
                ..Small::default()
            }))
    }

    /// Adds `child` under octet `b` of node `r` (at `at`), growing the node when full.
    fn add_child(&mut self, at: Loc, r: Ref, b: u8, child: Ref) {
        match r.kind() {
            Ref::SMALL if self.small.nodes[r.index()].h.count < 4 => {
                self.small.nodes[r.index()].insert(b, child);
            }
            Ref::SMALL => {
                let old = self.small.nodes[r.index()];
                self.small.give_back(r.index());
                let mut n = Small::<16> {
                    h: old.h,
                    ..Small::default()
                };
                n.octets[..4].copy_from_slice(&old.octets);
                n.children[..4].copy_from_slice(&old.children);
                n.insert(b, child);
                let grown = Ref(Ref::MEDIUM | self.medium.take(n));
                self.set(at, grown);
            }
            Ref::MEDIUM if self.medium.nodes[r.index()].h.count < 16 => {
                self.medium.nodes[r.index()].insert(b, child);
            }
            Ref::MEDIUM => {
                let old = self.medium.nodes[r.index()];
                self.medium.give_back(r.index());
                let mut n = Big {
                    h: old.h,
                    ..Big::default()
                };
                for (&o, &c) in old.octets.iter().zip(&old.children) {
                    n.children[usize::from(o)] = c;
                }
                n.children[usize::from(b)] = child;
                n.h.count += 1;
                let grown = Ref(Ref::BIG | self.big.take(n));
                self.set(at, grown);
            }
            _ => {
                let n = &mut self.big.nodes[r.index()];
                n.children[usize::from(b)] = child;
                n.h.count += 1;
            }
        }
    }

    /// Reads inner node `r` for `key` at `depth`: where the key leaves its path, or the
    /// child it goes on to. One lookup of the node, whatever its size.
    #[inline(always)]
    fn step(&self, r: Ref, key: &Key<'_>, depth: usize, keys: &impl Keys) -> Step {
        match r.kind() {
            Ref::SMALL => self.step_in(&self.small.nodes[r.index()], r, key, depth, keys),
            Ref::MEDIUM => self.step_in(&self.medium.nodes[r.index()], r, key, depth, keys),
            _ => self.step_in(&self.big.nodes[r.index()], r, key, depth, keys),
        }
    }

    #[inline(always)]
    fn step_in(
        &self,
        node: &impl Inner,
        r: Ref,
        key: &Key<'_>,
        depth: usize,
        keys: &impl Keys,
    ) -> Step {
        let len = node.header().prefix_len as usize;
        if len > 0 {
            let matched = self.path_match(node.header(), r, key, depth, keys);
            if matched < len {
                return Step::Off(matched);
            }
        }
        let octet = key.at(depth + len);
        Step::Down {
            len,
            octet,
            child: node.child(octet),
        }
    }

    /// How many octets of node `r`'s path (header `h`) `key` matches from `depth` (the whole
    /// path length when all of it does).
    #[inline(always)]
    fn path_match(
        &self,
        h: &Header,
        r: Ref,
        key: &Key<'_>,
        depth: usize,
        keys: &impl Keys,
    ) -> usize {
        let len = h.prefix_len as usize;
        if len == 0 {
            return 0;
        }
        // A short path within the name (nearly always): eight octets at once.
        if len <= STORED_PREFIX {
            if let Some(bytes) = key.name.get(depth..depth + STORED_PREFIX) {
                let theirs = u64::from_be_bytes(h.prefix);
                let ours = u64::from_be_bytes(bytes.try_into().expect("eight octets"));
                let same = ((theirs ^ ours).leading_zeros() / 8) as usize;
                return same.min(len);
            }
        }
        self.path_match_slow(h, r, key, depth, keys)
    }

    /// [`NameOrder::path_match`] for a path near the key's end, or longer than the node
    /// keeps (the rest read from a leaf below it).
    #[cold]
    #[inline(never)]
    fn path_match_slow(
        &self,
        h: &Header,
        r: Ref,
        key: &Key<'_>,
        depth: usize,
        keys: &impl Keys,
    ) -> usize {
        let len = h.prefix_len as usize;
        let stored = len.min(STORED_PREFIX);
        for (i, &p) in h.prefix[..stored].iter().enumerate() {
            if key.at(depth + i) != p {
                return i;
            }
        }
        if len <= STORED_PREFIX {
            return len;
        }
        let leaf = keys.key(self.min_leaf(r));
        STORED_PREFIX + common_from(key, &leaf, depth + STORED_PREFIX).min(len - STORED_PREFIX)
    }

    /// Inserts `slot`, whose key `keys` gives. A key already present is left alone.
    pub fn insert(&mut self, slot: u32, keys: &impl Keys) {
        let key = keys.key(slot);
        let mut at = Loc::Root;
        let mut r = self.root;
        let mut depth = 0;
        loop {
            if r == Ref::NONE {
                self.root = Ref::leaf(slot);
                self.leaves += 1;
                return;
            }
            if let Some(other) = r.leaf_slot() {
                let theirs = keys.key(other);
                let shared = common_from(&key, &theirs, depth);
                if depth + shared >= key.len() {
                    debug_assert_eq!(other, slot, "distinct entries have distinct keys");
                    return;
                }
                let n = self.new_small(&key, depth, shared);
                let node = &mut self.small.nodes[n.index()];
                let (ours, other) = (key.at(depth + shared), theirs.at(depth + shared));
                let (first, second) = if ours < other {
                    ((ours, Ref::leaf(slot)), (other, r))
                } else {
                    ((other, r), (ours, Ref::leaf(slot)))
                };
                node.octets[..2].copy_from_slice(&[first.0, second.0]);
                node.children[..2].copy_from_slice(&[first.1, second.1]);
                node.h.count = 2;
                self.set(at, n);
                self.leaves += 1;
                return;
            }
            match self.step(r, &key, depth, keys) {
                Step::Off(matched) => {
                    let n = self.split_path(at, r, &key, depth, matched, keys);
                    self.small.nodes[n.index()].insert(key.at(depth + matched), Ref::leaf(slot));
                    self.leaves += 1;
                    return;
                }
                Step::Down { octet, child, .. } if child == Ref::NONE => {
                    self.add_child(at, r, octet, Ref::leaf(slot));
                    self.leaves += 1;
                    return;
                }
                Step::Down { len, octet, child } => {
                    at = Loc::Child(r, octet);
                    r = child;
                    depth += len + 1;
                }
            }
        }
    }

    /// Splits node `r`'s path after its first `matched` octets (they match `key` from
    /// `depth`): a new node of 4 children, returned, takes those octets and `r` as a child
    /// under the next octet of the path; `r` keeps the rest.
    fn split_path(
        &mut self,
        at: Loc,
        r: Ref,
        key: &Key<'_>,
        depth: usize,
        matched: usize,
        keys: &impl Keys,
    ) -> Ref {
        let h = *self.header(r);
        let len = h.prefix_len as usize;
        // The path's octets past the split come from the node or, beyond what it stores, from
        // a leaf below it.
        let leaf_slot = (len > STORED_PREFIX).then(|| self.min_leaf(r));
        let leaf = leaf_slot.map(|s| keys.key(s));
        let path_at = |i: usize| match &leaf {
            Some(l) => l.at(depth + i),
            None => h.prefix[i],
        };
        let branch = path_at(matched);
        let rest = len - matched - 1;
        let mut shortened = Header {
            prefix_len: rest as u32,
            count: h.count,
            ..Header::default()
        };
        for i in 0..rest.min(STORED_PREFIX) {
            shortened.prefix[i] = path_at(matched + 1 + i);
        }
        *self.header_mut(r) = shortened;
        let n = self.new_small(key, depth, matched);
        self.small.nodes[n.index()].insert(branch, r);
        self.set(at, n);
        n
    }

    /// Removes `slot`, whose key `keys` gives (still readable). False when it was not indexed.
    pub fn remove(&mut self, slot: u32, keys: &impl Keys) -> bool {
        let key = keys.key(slot);
        let mut parent_at = Loc::Root;
        let mut at = Loc::Root;
        let mut r = self.root;
        let mut depth = 0;
        loop {
            if r == Ref::NONE {
                return false;
            }
            if let Some(s) = r.leaf_slot() {
                if s != slot {
                    return false;
                }
                self.leaves -= 1;
                match at {
                    Loc::Root => self.root = Ref::NONE,
                    Loc::Child(parent, b) => self.remove_child(parent_at, parent, b),
                }
                return true;
            }
            match self.step(r, &key, depth, keys) {
                Step::Down { len, octet, child } if child != Ref::NONE => {
                    parent_at = at;
                    at = Loc::Child(r, octet);
                    r = child;
                    depth += len + 1;
                }
                _ => return false,
            }
        }
    }

    /// Takes the child under octet `b` out of node `r` (at `at`), shrinking the node, or
    /// replacing it by its last child when one is left.
    fn remove_child(&mut self, at: Loc, r: Ref, b: u8) {
        match r.kind() {
            Ref::SMALL => self.small.nodes[r.index()].remove(b),
            Ref::MEDIUM => self.medium.nodes[r.index()].remove(b),
            _ => {
                let n = &mut self.big.nodes[r.index()];
                n.children[usize::from(b)] = Ref::NONE;
                n.h.count -= 1;
            }
        }
        let count = self.header(r).count;
        match r.kind() {
            Ref::SMALL if count == 1 => self.collapse(at, r),
            Ref::MEDIUM if count <= 3 => {
                let old = self.medium.nodes[r.index()];
                self.medium.give_back(r.index());
                let mut n = Small::<4> {
                    h: old.h,
                    ..Small::default()
                };
                let k = usize::from(count);
                n.octets[..k].copy_from_slice(&old.octets[..k]);
                n.children[..k].copy_from_slice(&old.children[..k]);
                let shrunk = Ref(Ref::SMALL | self.small.take(n));
                self.set(at, shrunk);
            }
            Ref::BIG if count <= 12 => {
                let old = &self.big.nodes[r.index()];
                let mut n = Small::<16> {
                    h: old.h,
                    ..Small::default()
                };
                let mut k = 0;
                for (o, &c) in old.children.iter().enumerate() {
                    if c != Ref::NONE {
                        n.octets[k] = o as u8;
                        n.children[k] = c;
                        k += 1;
                    }
                }
                self.big.give_back(r.index());
                let shrunk = Ref(Ref::MEDIUM | self.medium.take(n));
                self.set(at, shrunk);
            }
            _ => {}
        }
    }

    /// Replaces a node left with one child by that child, its path joined to the child's.
    fn collapse(&mut self, at: Loc, r: Ref) {
        let node = self.small.nodes[r.index()];
        let (b, child) = (node.octets[0], node.children[0]);
        self.small.give_back(r.index());
        if child.leaf_slot().is_none() {
            let outer = node.h;
            let inner = *self.header(child);
            let outer_len = outer.prefix_len as usize;
            let mut joined = Header {
                prefix_len: outer.prefix_len + 1 + inner.prefix_len,
                count: inner.count,
                ..Header::default()
            };
            let path = outer.prefix[..outer_len.min(STORED_PREFIX)]
                .iter()
                .chain(core::iter::once(&b))
                .chain(&inner.prefix[..(inner.prefix_len as usize).min(STORED_PREFIX)]);
            for (d, &s) in joined.prefix.iter_mut().zip(path) {
                *d = s;
            }
            *self.header_mut(child) = joined;
        }
        self.set(at, child);
    }

    /// Visits, in canonical order, every slot whose key's name has `prefix` (a name's
    /// TLV-VALUE) as a prefix, until `visit` breaks.
    pub fn under(
        &mut self,
        prefix: &[u8],
        keys: &impl Keys,
        mut visit: impl FnMut(u32) -> ControlFlow<()>,
    ) {
        let query = Key {
            name: prefix,
            hint: None,
        };
        let mut r = self.root;
        let mut depth = 0;
        loop {
            if r == Ref::NONE {
                return;
            }
            if let Some(slot) = r.leaf_slot() {
                if keys.key(slot).name.starts_with(prefix) {
                    let _ = visit(slot);
                }
                return;
            }
            let len = self.header(r).prefix_len as usize;
            let left = prefix.len() - depth;
            // Only the query's own octets may be compared: past them it is a wildcard.
            let wanted = len.min(left);
            let matched = self
                .path_match(self.header(r), r, &query, depth, keys)
                .min(wanted);
            if matched < wanted {
                return;
            }
            if left <= len {
                return self.walk(r, visit);
            }
            depth += len;
            let Some(c) = self.child(r, prefix[depth]) else {
                return;
            };
            r = c;
            depth += 1;
            if depth == prefix.len() {
                return self.walk(r, visit);
            }
        }
    }

    /// Visits every slot under `r` in order, until `visit` breaks.
    fn walk(&mut self, r: Ref, mut visit: impl FnMut(u32) -> ControlFlow<()>) {
        let mut stack = core::mem::take(&mut self.stack);
        stack.clear();
        stack.push((r, 0));
        while let Some((node, from)) = stack.pop() {
            if let Some(slot) = node.leaf_slot() {
                if visit(slot).is_break() {
                    break;
                }
                continue;
            }
            if let Some((o, c)) = self.next_child(node, from) {
                stack.push((node, u16::from(o) + 1));
                stack.push((c, 0));
            }
        }
        self.stack = stack;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{BTreeMap, HashMap};

    /// Keys by slot, as the PCCT's entries give them.
    #[derive(Default)]
    struct Table(HashMap<u32, (Vec<u8>, Option<Vec<u8>>)>);

    impl Keys for Table {
        fn key(&self, slot: u32) -> Key<'_> {
            let (n, h) = &self.0[&slot];
            Key::new(n, h.as_deref())
        }
    }

    fn full_key(n: &[u8], h: Option<&[u8]>) -> Vec<u8> {
        let k = Key::new(n, h);
        (0..k.len()).map(|i| k.at(i)).collect()
    }

    #[test]
    fn keys_are_prefix_free_and_sort_a_name_before_the_names_under_it() {
        let a = full_key(b"\x08\x01a", None);
        let ah = full_key(b"\x08\x01a", Some(b"\x08\x01h"));
        let ae = full_key(b"\x08\x01a", Some(b""));
        let ab = full_key(b"\x08\x01a\x08\x01b", None);
        let mut all = [&ab, &ah, &a, &ae];
        all.sort();
        assert_eq!(all, [&a, &ae, &ah, &ab]);
        for x in &all {
            for y in &all {
                assert!(x == y || !y.starts_with(x), "{x:?} is a prefix of {y:?}");
            }
        }
    }

    /// A name's TLV-VALUE from components (type, value).
    fn name(components: &[(u8, Vec<u8>)]) -> Vec<u8> {
        let mut v = Vec::new();
        for (t, c) in components {
            v.push(*t);
            v.push(c.len() as u8);
            v.extend_from_slice(c);
        }
        v
    }

    /// Names from a small alphabet, so that many share prefixes, with components long enough
    /// (up to 20 octets) to pass the octets a node keeps of its path.
    fn arb_name() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
        use proptest::prelude::*;
        let component = (
            prop::sample::select(vec![8u8, 8, 8, 50, 252]),
            0..3usize,
            0..3u8,
        )
            .prop_map(|(t, len_class, fill)| {
                let len = [1usize, 9, 20][len_class];
                (
                    t,
                    (0..len)
                        .map(|i| b'a' + ((fill as usize + i * 3) % 4) as u8)
                        .collect(),
                )
            });
        prop::collection::vec(component, 0..5).prop_map(|c| name(&c))
    }

    #[derive(Debug, Clone)]
    enum Op {
        Insert(Vec<u8>, Option<Vec<u8>>),
        Remove(usize),
        Under(Vec<u8>),
    }

    fn arb_op() -> impl proptest::strategy::Strategy<Value = Op> {
        use proptest::prelude::*;
        prop_oneof![
            4 => (arb_name(), prop::option::weighted(0.2, arb_name())).prop_map(|(n, h)| Op::Insert(n, h)),
            2 => any::<usize>().prop_map(Op::Remove),
            2 => arb_name().prop_map(Op::Under),
        ]
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(400))]

        /// Against a sorted map of whole keys: the same slots under every prefix, in the same
        /// order, through any interleaving of inserts and removes; never more inner nodes than
        /// keys.
        #[test]
        fn agrees_with_a_sorted_map(ops in proptest::collection::vec(arb_op(), 1..120)) {
            let mut table = Table::default();
            let mut model: BTreeMap<Vec<u8>, u32> = BTreeMap::new();
            let mut order = NameOrder::new();
            let mut next = 0u32;
            for op in ops {
                match op {
                    Op::Insert(n, h) => {
                        let k = full_key(&n, h.as_deref());
                        if model.contains_key(&k) {
                            continue;
                        }
                        table.0.insert(next, (n, h));
                        order.insert(next, &table);
                        model.insert(k, next);
                        next += 1;
                    }
                    Op::Remove(i) => {
                        if model.is_empty() {
                            continue;
                        }
                        let k = model.keys().nth(i % model.len()).unwrap().clone();
                        let slot = model.remove(&k).unwrap();
                        proptest::prop_assert!(order.remove(slot, &table));
                        proptest::prop_assert!(!order.remove(slot, &table), "removed twice");
                        table.0.remove(&slot);
                    }
                    Op::Under(p) => {
                        let mut got = Vec::new();
                        order.under(&p, &table, |s| {
                            got.push(s);
                            ControlFlow::Continue(())
                        });
                        let want: Vec<u32> = model
                            .iter()
                            .filter(|(_, s)| table.0[s].0.starts_with(&p))
                            .map(|(_, &s)| s)
                            .collect();
                        proptest::prop_assert_eq!(got, want);
                    }
                }
                proptest::prop_assert_eq!(order.len(), model.len());
                proptest::prop_assert!(order.inner_nodes() <= model.len());
            }
            // A walk stops when asked to.
            if let Some((_, &first)) = model.iter().next() {
                let mut got = Vec::new();
                order.under(&[], &table, |s| {
                    got.push(s);
                    ControlFlow::Break(())
                });
                proptest::prop_assert_eq!(got, vec![first]);
            }
        }
    }

    #[test]
    fn many_children_grow_and_shrink_the_nodes() {
        let mut table = Table::default();
        let mut order = NameOrder::new();
        for i in 0..300u32 {
            let n = name(&[
                (8, b"p".to_vec()),
                (8, vec![(i % 256) as u8, (i / 256) as u8]),
            ]);
            table.0.insert(i, (n, None));
            order.insert(i, &table);
        }
        let mut all = Vec::new();
        order.under(&name(&[(8, b"p".to_vec())]), &table, |s| {
            all.push(s);
            ControlFlow::Continue(())
        });
        assert_eq!(all.len(), 300);
        for i in 0..300u32 {
            assert!(order.remove(i, &table));
        }
        assert_eq!((order.len(), order.inner_nodes()), (0, 0));
    }
}
