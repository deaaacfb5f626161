//! The Forwarding Information Base: name prefixes, their nexthops and their strategy, shared by
//! every forwarding thread and written by the management thread (NDN-DPDK paper, sections 4
//! and 6.2).
//!
//! **Read side** ([`FibReader`], [`FibGuard`]): a hash table keyed by prefix hash over a slab of
//! entries, searched with the 2-stage longest-prefix match: the lookup starts at depth M
//! ([`FibConfig::max_depth_stage1`]); an entry deeper than M leaves a *virtual* marker at its
//! M-component prefix recording the deepest entry below it, so only names under such a marker
//! probe deeper. The root entry `/` always exists, so every lookup returns an entry. A
//! forwarding thread enters the table once per burst (its quiescent state is between bursts)
//! and looks names up with the hashes the input stage computed, hashing nothing again.
//!
//! **Write side** ([`FibWriter`]): the authoritative routes and strategy choices, from which it
//! *materialises* the read-side entries so one lookup yields both nexthops and strategy, with
//! NFD's semantics: the entries are the root, every route prefix and every strategy-choice
//! prefix; an entry's nexthops are its own routes, or else those of the longest route prefix
//! above it; its strategy is that of the longest strategy-choice prefix of it. Changes reach the
//! two copies of the table as fully materialised operations through the `left-right` crate
//! (RCU-like: readers never wait and never see a half-applied change) and become visible at
//! [`FibWriter::publish`].
//!
//! Invariants: exactly one slot per materialised prefix; entry ids are slab indexes, stable
//! while the entry exists; `seq` is globally increasing, so `(id, seq)` names one version of
//! one entry and a PIT entry revalidates it with [`FibGuard::get`] instead of holding a
//! reference (NDN-DPDK paper, section 6.2: a changed entry sends returning packets to the
//! fallback).

mod table;
mod writer;

use core::fmt;

use kite_packet::Name;
use smallvec::SmallVec;

use crate::face::FaceId;

pub use table::{FibGuard, FibReader, FibReaderFactory};
pub use writer::FibWriter;

/// Longest prefix (in components) a route or strategy choice may have, as in NFD.
pub const MAX_PREFIX_LEN: usize = 32;

/// A face an Interest may be forwarded to, and the routing cost of doing so.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct NextHop {
    /// The upstream face.
    pub face: FaceId,
    /// Routing cost; lower is preferred.
    pub cost: u32,
}

/// Which forwarding strategy handles Interests under an entry: an index into the strategy
/// registry, so an entry names its strategy without holding it (NDN-DPDK paper, section 6.2).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct StrategyId(pub u16);

/// A FIB entry as forwarding threads see it: everything the pipeline needs from one lookup.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct FibEntry {
    /// The entry's name prefix.
    pub prefix: Name,
    /// Where to forward, sorted by cost, equal costs in the order they were added (a
    /// prefix's own routes before inherited ones); its own routes or inherited ones.
    pub nexthops: SmallVec<[NextHop; 4]>,
    /// The strategy of the longest strategy-choice prefix of `prefix`.
    pub strategy: StrategyId,
    /// Slab index, stable while the entry exists; may be reused afterwards, with a new `seq`.
    pub id: u32,
    /// Changes every time the entry is written (globally increasing), so a remembered
    /// `(id, seq)` detects a replaced or removed entry.
    pub seq: u64,
}

/// Tuning of the FIB lookup.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct FibConfig {
    /// M, the depth where the 2-stage longest-prefix match starts: lookups of names under no
    /// deeper entry probe at most M prefixes. Clamped to `1..=MAX_PREFIX_LEN`.
    pub max_depth_stage1: usize,
}

impl Default for FibConfig {
    /// M = 8, NDN-DPDK's default (NDN-DPDK paper, section 7).
    fn default() -> Self {
        FibConfig {
            max_depth_stage1: 8,
        }
    }
}

/// Why the FIB refused a change.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum FibError {
    /// The prefix has more than [`MAX_PREFIX_LEN`] components (NFD answers 414).
    PrefixTooLong {
        /// Components in the refused prefix.
        len: usize,
    },
}

impl fmt::Display for FibError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FibError::PrefixTooLong { len } => write!(
                f,
                "prefix has {len} components, more than the {MAX_PREFIX_LEN} allowed"
            ),
        }
    }
}

impl std::error::Error for FibError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_config_starts_at_depth_8() {
        assert_eq!(FibConfig::default().max_depth_stage1, 8);
    }

    #[test]
    fn error_names_the_limit() {
        let e = FibError::PrefixTooLong { len: 33 };
        assert_eq!(
            e.to_string(),
            "prefix has 33 components, more than the 32 allowed"
        );
    }
}
