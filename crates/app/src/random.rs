//! Unpredictable numbers for Interest nonces and signature nonces, from the standard library's
//! randomly keyed SipHash (no extra dependency; nonces need uniqueness, not secrecy).

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use kite_packet::Nonce;

/// A 64-bit number that differs on every call.
pub fn random_u64() -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut h = RandomState::new().build_hasher();
    h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    h.write_u128(now);
    h.finish()
}

/// A fresh random Nonce.
pub(crate) fn random_nonce() -> Nonce {
    Nonce::from(random_u64() as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn successive_values_differ() {
        let v: Vec<u64> = (0..64).map(|_| random_u64()).collect();
        let mut sorted = v.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), v.len());
    }
}
