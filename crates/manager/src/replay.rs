//! Replay protection for signed command Interests, with the parameters of ndn-cxx's
//! `ValidationPolicyCommandInterest`: a timestamp must lie within the grace period of now and
//! be strictly greater than the last one accepted from the same key; at most 1000 keys are
//! remembered, each for 1 hour after its last command.

use std::collections::BTreeMap;

use kite_packet::Name;
use thiserror::Error;

/// Grace period around now (ms).
pub const GRACE_PERIOD_MS: u64 = 120_000;
/// Most signing keys remembered.
pub const MAX_RECORDS: usize = 1000;
/// How long a key's last timestamp is remembered after its last command (ms).
pub const RECORD_LIFETIME_MS: u64 = 3_600_000;

/// Why a command's timestamp is refused (NFD answers 403 "authorization rejected").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum ReplayError {
    /// The signature has no timestamp (a v0.3 Interest without SignatureTime).
    #[error("command has no timestamp")]
    Missing,
    /// The timestamp is more than the grace period away from now.
    #[error("timestamp outside the grace period")]
    OutsideGracePeriod,
    /// The timestamp is not greater than the last one accepted from this key.
    #[error("timestamp is not newer than the last one from this key")]
    Reordered,
}

#[derive(Debug, Clone, Copy)]
struct Record {
    timestamp: u64,
    refreshed_at: u64,
}

/// Last accepted timestamp per signing key.
#[derive(Debug, Default)]
pub struct ReplayGuard {
    records: BTreeMap<Name, Record>,
}

impl ReplayGuard {
    /// An empty guard.
    pub fn new() -> Self {
        Self::default()
    }

    /// Checks `timestamp` (ms since the Unix epoch) signed by `key` at wall-clock `now_ms` and,
    /// when it passes, records it. Call it only once the signature itself is accepted.
    pub fn admit(
        &mut self,
        key: &Name,
        timestamp: Option<u64>,
        now_ms: u64,
    ) -> Result<(), ReplayError> {
        self.records
            .retain(|_, r| r.refreshed_at.saturating_add(RECORD_LIFETIME_MS) >= now_ms);
        let ts = timestamp.ok_or(ReplayError::Missing)?;
        if ts.abs_diff(now_ms) > GRACE_PERIOD_MS {
            return Err(ReplayError::OutsideGracePeriod);
        }
        if self.records.get(key).is_some_and(|r| ts <= r.timestamp) {
            return Err(ReplayError::Reordered);
        }
        self.records.insert(
            key.clone(),
            Record {
                timestamp: ts,
                refreshed_at: now_ms,
            },
        );
        if self.records.len() > MAX_RECORDS {
            let oldest = self
                .records
                .iter()
                .min_by_key(|(_, r)| r.refreshed_at)
                .map(|(k, _)| k.clone())
                .expect("over capacity means not empty");
            self.records.remove(&oldest);
        }
        Ok(())
    }

    /// Number of keys remembered.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// Whether no key is remembered.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(i: u32) -> Name {
        format!("/key/{i}").parse().unwrap()
    }

    const NOW: u64 = 1_800_000_000_000;

    #[test]
    fn timestamps_must_strictly_increase_per_key() {
        let mut g = ReplayGuard::new();
        g.admit(&key(1), Some(NOW), NOW).unwrap();
        assert_eq!(
            g.admit(&key(1), Some(NOW), NOW + 1),
            Err(ReplayError::Reordered)
        );
        assert_eq!(
            g.admit(&key(1), Some(NOW - 5), NOW + 1),
            Err(ReplayError::Reordered)
        );
        g.admit(&key(1), Some(NOW + 1), NOW + 1).unwrap();
        // Another key has its own sequence.
        g.admit(&key(2), Some(NOW - 10), NOW + 1).unwrap();
    }

    #[test]
    fn grace_period_bounds_both_sides() {
        let mut g = ReplayGuard::new();
        assert_eq!(
            g.admit(&key(1), Some(NOW - GRACE_PERIOD_MS - 1), NOW),
            Err(ReplayError::OutsideGracePeriod)
        );
        assert_eq!(
            g.admit(&key(1), Some(NOW + GRACE_PERIOD_MS + 1), NOW),
            Err(ReplayError::OutsideGracePeriod)
        );
        g.admit(&key(1), Some(NOW + GRACE_PERIOD_MS), NOW).unwrap();
        assert_eq!(g.admit(&key(3), None, NOW), Err(ReplayError::Missing));
    }

    #[test]
    fn records_expire_after_an_hour() {
        let mut g = ReplayGuard::new();
        g.admit(&key(1), Some(NOW), NOW).unwrap();
        let later = NOW + RECORD_LIFETIME_MS + 1;
        // Forgotten: an old-looking (but in-grace) timestamp is accepted again.
        g.admit(&key(2), Some(later), later).unwrap();
        assert_eq!(g.len(), 1);
    }

    #[test]
    fn at_most_a_thousand_keys_oldest_evicted() {
        let mut g = ReplayGuard::new();
        for i in 0..=MAX_RECORDS as u32 {
            let now = NOW + u64::from(i);
            g.admit(&key(i), Some(now), now).unwrap();
        }
        assert_eq!(g.len(), MAX_RECORDS);
        // Key 0 was evicted, so its replay is no longer detected; key 1 still is.
        let now = NOW + 2000;
        g.admit(&key(0), Some(NOW), now).unwrap();
        assert_eq!(
            g.admit(&key(2), Some(NOW + 2), now),
            Err(ReplayError::Reordered)
        );
    }
}
