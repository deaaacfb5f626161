//! The Name Dispatch Table (NDN-DPDK paper, section 3.2): which forwarding thread handles an
//! Interest, from the hash of its first k name components.
//!
//! A flat vector of 2^b thread ids indexed by the low b bits of the prefix hash: one load, no
//! name compare, and Interests sharing a k-prefix always meet in the same thread (aggregation
//! and per-prefix strategy state stay correct). Data and Nacks carrying a Kite token go to the
//! thread named in the token instead; tokenless Data goes to every thread the table names for
//! the Data name's prefixes of length 0..=k.
//!
//! A name's *home* is the thread of its first k components (of all of them when it has fewer,
//! not counting a last implicit digest: a name by full name lives with its Data). Every Data
//! is cached in its home only, so every Interest of k components or more finds all the Data
//! it may take in its own thread. A CanBePrefix Interest with fewer ([`Ndt::is_short`]) may be
//! answered by Data of many homes: it first visits the other threads' CS, then its own thread
//! runs its pipeline (`docs/forwarding.md`, "Shards").

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use smallvec::SmallVec;

use crate::hash::NameHashes;

/// Default prefix length hashed for dispatch.
pub const DEFAULT_PREFIX_LEN: usize = 2;
/// Default table size, as a power of two.
pub const DEFAULT_BITS: u32 = 16;

/// The Name Dispatch Table.
#[derive(Debug, Clone)]
pub struct Ndt {
    prefix_len: usize,
    mask: u64,
    threads: Vec<u8>,
    count: u8,
}

impl Ndt {
    /// A table of 2^`bits` entries over `threads` forwarding threads, filled round-robin,
    /// hashing the first `prefix_len` components (`usize::MAX`: the whole name).
    pub fn new(bits: u32, threads: u8, prefix_len: usize) -> Self {
        let size = 1usize << bits.min(24);
        let threads = threads.max(1);
        Ndt {
            prefix_len,
            mask: size as u64 - 1,
            threads: (0..size)
                .map(|i| (i % usize::from(threads)) as u8)
                .collect(),
            count: threads,
        }
    }

    /// The thread of a name with these hashes: its home.
    #[inline]
    pub fn thread_for(&self, hashes: &NameHashes) -> u8 {
        self.threads[(hashes.prefix(self.prefix_len) & self.mask) as usize]
    }

    /// The thread of an Interest whose name has these hashes: its name's home, where a last
    /// implicit digest does not count (the name of a Data by its full name has one component
    /// fewer). `ends_in_digest` is asked only for names no longer than the dispatch prefix.
    #[inline]
    pub fn interest_thread(
        &self,
        hashes: &NameHashes,
        ends_in_digest: impl FnOnce() -> bool,
    ) -> u8 {
        let len = hashes.name_len();
        if len <= self.prefix_len && len > 0 && ends_in_digest() {
            return self.thread_of(hashes.prefix(len - 1));
        }
        self.thread_for(hashes)
    }

    /// Whether a CanBePrefix Interest with these name hashes is shorter than the dispatch
    /// prefix, so that Data under its name may live in any thread.
    #[inline]
    pub fn is_short(&self, hashes: &NameHashes) -> bool {
        self.count > 1 && hashes.name_len() < self.prefix_len
    }

    /// How many threads the table spreads names over.
    pub fn threads(&self) -> u8 {
        self.count
    }

    /// Entries of the table (a power of two): the thread of entry `i` is
    /// [`Ndt::thread_of`]`(i)`.
    pub fn slots(&self) -> usize {
        self.threads.len()
    }

    /// The thread of a prefix whose hash is `hash`.
    #[inline]
    pub fn thread_of(&self, hash: u64) -> u8 {
        self.threads[(hash & self.mask) as usize]
    }

    /// The threads that may hold a PIT entry a tokenless Data with these name hashes
    /// satisfies: those of its prefixes of length 0..=k, without repeats.
    pub fn threads_for_data(&self, hashes: &NameHashes) -> SmallVec<[u8; 4]> {
        let mut out = SmallVec::new();
        let deepest = self.prefix_len.min(hashes.name_len());
        for len in 0..=deepest {
            let t = self.threads[(hashes.prefix(len) & self.mask) as usize];
            if !out.contains(&t) {
                out.push(t);
            }
        }
        out
    }

    /// Prefix length hashed for dispatch.
    pub fn prefix_len(&self) -> usize {
        self.prefix_len
    }

    /// Reassigns one table entry (load rebalancing).
    pub fn set(&mut self, index: usize, thread: u8) {
        if let Some(slot) = self.threads.get_mut(index) {
            *slot = thread;
        }
    }
}

/// The forwarding threads as each of them sees the others: which one is a name's home (the
/// NDT), and how many CanBePrefix Interests shorter than the dispatch prefix each has pending,
/// so that a thread that got a Data such an Interest takes hands it a copy (NFD satisfies
/// every pending Interest a Data matches). Each count is written by its own thread only.
#[derive(Debug)]
pub struct ShardSet {
    ndt: Arc<Ndt>,
    short_pending: Box<[AtomicU32]>,
}

impl ShardSet {
    /// The threads `ndt` spreads names over, none with anything pending.
    pub fn new(ndt: Arc<Ndt>) -> Self {
        let short_pending = (0..ndt.threads()).map(|_| AtomicU32::new(0)).collect();
        ShardSet { ndt, short_pending }
    }

    /// The Name Dispatch Table.
    pub fn ndt(&self) -> &Ndt {
        &self.ndt
    }

    /// Thread `thread` has one more (`true`) or one fewer short CanBePrefix entry pending.
    pub fn count_short(&self, thread: u8, more: bool) {
        if let Some(c) = self.short_pending.get(usize::from(thread)) {
            if more {
                c.fetch_add(1, Ordering::Relaxed);
            } else {
                c.fetch_sub(1, Ordering::Relaxed);
            }
        }
    }

    /// Whether thread `thread` has short CanBePrefix entries pending.
    pub fn has_short(&self, thread: u8) -> bool {
        self.short_pending
            .get(usize::from(thread))
            .is_some_and(|c| c.load(Ordering::Relaxed) > 0)
    }

    /// Whether any thread but `thread` has short CanBePrefix entries pending.
    pub fn others_have_short(&self, thread: u8) -> bool {
        self.short_pending
            .iter()
            .enumerate()
            .any(|(t, c)| t != usize::from(thread) && c.load(Ordering::Relaxed) > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::NameHasher;

    #[test]
    fn same_prefix_same_thread_and_threads_are_spread() {
        let h = NameHasher::with_key(1, 1);
        let ndt = Ndt::new(16, 4, 2);
        let a = h.prefix_hashes(&"/a/b/c/d".parse().unwrap());
        let b = h.prefix_hashes(&"/a/b/x".parse().unwrap());
        assert_eq!(ndt.thread_for(&a), ndt.thread_for(&b));
        let mut seen = [0u32; 4];
        for i in 0..4000 {
            let n = h.prefix_hashes(&format!("/p{i}/q").parse().unwrap());
            seen[usize::from(ndt.thread_for(&n))] += 1;
        }
        assert!(seen.iter().all(|&c| c > 800), "{seen:?}");
    }

    #[test]
    fn tokenless_data_reaches_every_thread_an_interest_could_have_used() {
        let h = NameHasher::with_key(2, 3);
        let ndt = Ndt::new(16, 8, 2);
        let data = h.prefix_hashes(&"/a/b/c".parse().unwrap());
        let threads = ndt.threads_for_data(&data);
        // a CanBePrefix Interest for /a was dispatched by the hash of /a
        let prefix_interest = h.prefix_hashes(&"/a".parse().unwrap());
        assert!(threads.contains(&ndt.thread_for(&prefix_interest)));
        let exact = h.prefix_hashes(&"/a/b/c".parse().unwrap());
        assert!(threads.contains(&ndt.thread_for(&exact)));
        assert!(threads.len() <= 3);
    }

    #[test]
    fn an_interest_by_full_name_goes_to_the_home_of_its_data() {
        let h = NameHasher::with_key(2, 3);
        let ndt = Ndt::new(16, 8, 2);
        let data: kite_packet::Name = "/a".parse().unwrap();
        let digest = kite_packet::Component::new(1, &[7; 32]).unwrap();
        let by_digest = data.clone().checked_append(digest).unwrap();
        let home = ndt.thread_for(&h.prefix_hashes(&data));
        let hashes = h.prefix_hashes(&by_digest);
        assert_eq!(ndt.interest_thread(&hashes, || true), home);
        // A longer name keeps the thread of its first two components.
        let long: kite_packet::Name = "/a/b/c".parse().unwrap();
        let hashes = h.prefix_hashes(&long);
        assert_eq!(
            ndt.interest_thread(&hashes, || unreachable!("not asked")),
            ndt.thread_for(&hashes)
        );
    }

    #[test]
    fn full_name_dispatch_option() {
        let h = NameHasher::with_key(4, 4);
        let ndt = Ndt::new(16, 16, usize::MAX);
        let a = h.prefix_hashes(&"/a/b/1".parse().unwrap());
        assert_eq!(
            ndt.thread_for(&a),
            ndt.threads[(a.full() & ndt.mask) as usize]
        );
    }
}
