//! Name hashes, computed once per packet by the input stage and reused by every table.
//!
//! A keyed SipHash-1-3 runs over a name's component octets; finishing the running state after
//! each component yields the hash of every prefix in one pass. The Name Dispatch Table uses the
//! hash of the first k components, the FIB the hashes of prefixes, the PIT-CS table the hash of
//! the whole name. A prefix's hash equals the hash of its octets ([`NameHasher::hash_octets`]),
//! so tables can be keyed by prefixes built any way.

use core::hash::Hasher;

use kite_packet::Name;
use siphasher::sip::SipHasher13;
use smallvec::SmallVec;

/// The key of the name hash, shared by the input stage and every forwarding thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NameHasher {
    k0: u64,
    k1: u64,
    /// The hash of the empty prefix, which depends only on the key.
    root: u64,
}

impl NameHasher {
    /// A hasher with a fixed key (tests, reproducible benchmarks).
    pub fn with_key(k0: u64, k1: u64) -> Self {
        NameHasher {
            k0,
            k1,
            root: SipHasher13::new_with_keys(k0, k1).finish(),
        }
    }

    /// A hasher with a key drawn from the operating system's randomness, so that remote
    /// parties cannot choose names that collide in the forwarder's tables.
    pub fn random() -> Self {
        use std::hash::BuildHasher;
        let state = std::collections::hash_map::RandomState::new();
        Self::with_key(
            state.hash_one(0x6b69_7465_u64),
            state.hash_one(0x006e_646e_u64),
        )
    }

    /// Hashes of every prefix of `name`: element `i` is the hash of the first `i` components.
    #[inline]
    pub fn prefix_hashes(&self, name: &Name) -> NameHashes {
        let mut hashes = SmallVec::with_capacity(name.len() + 1);
        let mut h = SipHasher13::new_with_keys(self.k0, self.k1);
        hashes.push(self.root);
        let value = name.value();
        let mut start = 0;
        for i in 1..=name.len() {
            let end = name.prefix_octets(i).len();
            h.write(&value[start..end]);
            hashes.push(h.finish());
            start = end;
        }
        NameHashes { hashes }
    }

    /// The hash of a prefix given by its component octets (see [`Name::prefix_octets`]).
    #[inline]
    pub fn hash_octets(&self, octets: &[u8]) -> u64 {
        let mut h = SipHasher13::new_with_keys(self.k0, self.k1);
        h.write(octets);
        h.finish()
    }

    /// The hash of a whole name.
    #[inline]
    pub fn hash_name(&self, name: &Name) -> u64 {
        self.hash_octets(name.value())
    }
}

/// The hash of each prefix of a name, indexed by prefix length (inline up to 16 components).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameHashes {
    hashes: SmallVec<[u64; 17]>,
}

impl NameHashes {
    /// The hash of the first `len` components (of the whole name when `len` exceeds it).
    #[inline]
    pub fn prefix(&self, len: usize) -> u64 {
        self.hashes[len.min(self.hashes.len() - 1)]
    }

    /// The hash of the whole name.
    #[inline]
    pub fn full(&self) -> u64 {
        self.hashes[self.hashes.len() - 1]
    }

    /// Number of components of the hashed name.
    #[inline]
    pub fn name_len(&self) -> usize {
        self.hashes.len() - 1
    }
}

/// Spreads a name hash for use as a hash-table key.
///
/// Every name one forwarding thread owns shares the low bits of its dispatch hash (that is how
/// it got there), and for names no longer than the dispatch prefix the full-name hash is the
/// dispatch hash. Fed to a table unchanged those bits would pile entries into a few buckets
/// (measured 35–150x slower lookups); taking the index bits from the other half avoids that.
#[inline]
pub const fn table_hash(h: u64) -> u64 {
    h.rotate_left(32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_hashes_equal_hashes_of_prefix_octets() {
        let h = NameHasher::with_key(1, 2);
        let name: Name = "/a/bb/seg=3/v=7".parse().unwrap();
        let hs = h.prefix_hashes(&name);
        assert_eq!(hs.name_len(), 4);
        for i in 0..=4 {
            assert_eq!(
                hs.prefix(i),
                h.hash_octets(name.prefix_octets(i)),
                "prefix {i}"
            );
            assert_eq!(hs.prefix(i), h.hash_name(&name.prefix(i)));
        }
        assert_eq!(hs.prefix(9), hs.full());
        assert_eq!(hs.full(), h.hash_name(&name));
    }

    #[test]
    fn keys_matter_and_component_boundaries_matter() {
        let a = NameHasher::with_key(1, 2);
        let b = NameHasher::with_key(3, 4);
        let n: Name = "/x".parse().unwrap();
        assert_ne!(a.hash_name(&n), b.hash_name(&n));
        // /ab and /a/b have different octets, so different hashes
        let ab: Name = "/ab".parse().unwrap();
        let a_b: Name = "/a/b".parse().unwrap();
        assert_ne!(a.hash_name(&ab), a.hash_name(&a_b));
        assert_ne!(NameHasher::random(), NameHasher::random());
    }

    #[test]
    fn table_hash_moves_the_low_bits_away() {
        assert_eq!(table_hash(0xFFFF) & 0xFFFF_FFFF, 0);
    }
}
