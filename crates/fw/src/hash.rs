//! Name hashes, computed once per packet by the input stage and reused by every table.
//!
//! A keyed SipHash-1-3 runs over a name's component octets; finishing the running state after
//! each component yields the hash of every prefix in one pass. The Name Dispatch Table uses the
//! hash of the first k components, the FIB the hashes of prefixes, the PIT-CS table the hash of
//! the whole name. A prefix's hash equals the hash of its octets ([`NameHasher::hash_octets`]),
//! so tables can be keyed by prefixes built any way.
//!
//! SipHash-1-3 is written out here rather than taken from a crate: the prefix hashes need the
//! state after each whole 8-octet word and a finish over each component boundary's tail, which
//! a streaming `Hasher` can only give by buffering every write (measured: ~800 instructions for
//! a 4-component name through `siphasher`, ~300 this way). The output is standard SipHash-1-3,
//! checked against `siphasher` in the tests.

use kite_packet::Name;
use smallvec::SmallVec;

/// SipHash-1-3 state: one compression round per word, three finalization rounds.
#[derive(Clone, Copy)]
struct Sip13 {
    v: [u64; 4],
}

impl Sip13 {
    #[inline(always)]
    fn new(k0: u64, k1: u64) -> Self {
        Sip13 {
            v: [
                k0 ^ 0x736f_6d65_7073_6575,
                k1 ^ 0x646f_7261_6e64_6f6d,
                k0 ^ 0x6c79_6765_6e65_7261,
                k1 ^ 0x7465_6462_7974_6573,
            ],
        }
    }

    #[inline(always)]
    fn round(&mut self) {
        let [mut v0, mut v1, mut v2, mut v3] = self.v;
        v0 = v0.wrapping_add(v1);
        v1 = v1.rotate_left(13) ^ v0;
        v0 = v0.rotate_left(32);
        v2 = v2.wrapping_add(v3);
        v3 = v3.rotate_left(16) ^ v2;
        v0 = v0.wrapping_add(v3);
        v3 = v3.rotate_left(21) ^ v0;
        v2 = v2.wrapping_add(v1);
        v1 = v1.rotate_left(17) ^ v2;
        v2 = v2.rotate_left(32);
        self.v = [v0, v1, v2, v3];
    }

    #[inline(always)]
    fn compress(&mut self, m: u64) {
        self.v[3] ^= m;
        self.round();
        self.v[0] ^= m;
    }

    /// Hashes every whole word of `octets` into the state.
    #[inline(always)]
    fn words(&mut self, octets: &[u8]) {
        let mut chunks = octets.chunks_exact(8);
        for w in &mut chunks {
            self.compress(u64::from_le_bytes(w.try_into().expect("8-octet chunk")));
        }
    }

    /// The hash of the first `end` octets of `octets`, whose whole words before `end & !7` are
    /// already in the state (the state itself is left as is).
    #[inline(always)]
    fn finish(mut self, octets: &[u8], end: usize) -> u64 {
        let tail_len = end & 7;
        let tail = if tail_len == 0 {
            0
        } else if end >= 8 {
            // The word ending at `end`, shifted so only the tail's octets remain.
            let w = u64::from_le_bytes(octets[end - 8..end].try_into().expect("8 octets"));
            w >> (8 * (8 - tail_len))
        } else {
            octets[..end]
                .iter()
                .rev()
                .fold(0, |acc, &b| (acc << 8) | u64::from(b))
        };
        let b = tail | ((end as u64) << 56);
        self.compress(b);
        self.v[2] ^= 0xff;
        self.round();
        self.round();
        self.round();
        self.v[0] ^ self.v[1] ^ self.v[2] ^ self.v[3]
    }
}

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
            root: Sip13::new(k0, k1).finish(&[], 0),
        }
    }

    /// The SipHash-1-3 key (for a copy of the dispatch outside the process's memory: the
    /// XDP program's, which must hash names as this hasher does).
    pub fn key(&self) -> (u64, u64) {
        (self.k0, self.k1)
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
    /// Always inlined, so that the hashes are written where the caller keeps them (the input
    /// stage's record) rather than returned and copied there.
    #[inline(always)]
    pub fn prefix_hashes(&self, name: &Name) -> NameHashes {
        let mut hashes = SmallVec::with_capacity(name.len() + 1);
        let mut h = Sip13::new(self.k0, self.k1);
        hashes.push(self.root);
        let value = name.value();
        // `done`: octets already folded into `h`, always a multiple of 8.
        let mut done = 0;
        for i in 1..=name.len() {
            let end = name.prefix_len(i);
            let whole = end & !7;
            h.words(&value[done..whole]);
            done = whole;
            hashes.push(h.finish(value, end));
        }
        NameHashes { hashes }
    }

    /// The hash of a prefix given by its component octets (see [`Name::prefix_octets`]).
    #[inline]
    pub fn hash_octets(&self, octets: &[u8]) -> u64 {
        let mut h = Sip13::new(self.k0, self.k1);
        let whole = octets.len() & !7;
        h.words(&octets[..whole]);
        h.finish(octets, octets.len())
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
    fn output_is_standard_siphash13() {
        use core::hash::Hasher;
        let h = NameHasher::with_key(0x0706_0504_0302_0100, 0x0f0e_0d0c_0b0a_0908);
        let octets: Vec<u8> = (0..64u8).collect();
        for len in 0..octets.len() {
            let mut reference = siphasher::sip::SipHasher13::new_with_keys(
                0x0706_0504_0302_0100,
                0x0f0e_0d0c_0b0a_0908,
            );
            reference.write(&octets[..len]);
            assert_eq!(
                h.hash_octets(&octets[..len]),
                reference.finish(),
                "{len} octets"
            );
        }
    }

    #[test]
    fn prefix_hashes_of_long_components_cross_word_boundaries() {
        let h = NameHasher::with_key(5, 6);
        let name: Name = "/aaaaaaaaaaaaaaaaaaaaa/b/ccccccccccccc/d/eeeeeeee"
            .parse()
            .unwrap();
        let hs = h.prefix_hashes(&name);
        for i in 0..=name.len() {
            assert_eq!(
                hs.prefix(i),
                h.hash_octets(name.prefix_octets(i)),
                "prefix {i}"
            );
        }
    }

    #[test]
    fn table_hash_moves_the_low_bits_away() {
        assert_eq!(table_hash(0xFFFF) & 0xFFFF_FFFF, 0);
    }
}
