//! Replay protection for signed command Interests, as one of ndn-cxx's `ValidatorConfig`s
//! keeps it (its signed-Interest policy over its command-Interest policy): one
//! [`ReplayGuard`] per validator, so NFD's `rib` validator for `/localhost/nfd` and the one for
//! `/localhop/nfd` each remember their own keys.
//!
//! A command's timestamp (v0.3 SignatureTime, or the v0.2 timestamp name component) must lie
//! within the grace period of now and must not be older than the last one accepted from the
//! same key; a v0.3 command must carry a SignatureNonce not among the key's last
//! [`MAX_NONCES`]. At most [`MAX_RECORDS`] keys are remembered, each for
//! [`RECORD_LIFETIME_MS`] after its last command. [`ReplayGuard::check`] only reads;
//! [`ReplayGuard::record`] writes, and the caller calls it once the whole validation has
//! succeeded (a command refused later leaves no trace), as ndn-cxx does.
//!
//! One difference from ndn-cxx, which refuses a timestamp equal to the key's last: an equal
//! timestamp is accepted when its nonce (SignatureNonce, or the v0.2 nonce component) was not
//! seen from that key. Signers stamp commands in milliseconds, and Kite answers a command in
//! less than one: python-ndn's `NDNApp.register` sends its next command as soon as the answer
//! comes, stamped with the same millisecond, which NFD (slower to answer) never sees. The
//! nonce still tells a replay from a new command, so a replayed command is refused as before.

use std::collections::hash_map::RandomState;
use std::collections::{BTreeMap, VecDeque};
use std::hash::BuildHasher;

use kite_mgmt_proto::command::CommandSignature;
use kite_packet::{Name, SignatureType};
use thiserror::Error;

/// Grace period around now (ms).
pub const GRACE_PERIOD_MS: u64 = 120_000;
/// Most signing keys remembered.
pub const MAX_RECORDS: usize = 1000;
/// How long a key's record is kept after its last accepted command (ms).
pub const RECORD_LIFETIME_MS: u64 = 3_600_000;
/// Nonces remembered per key (ndn-cxx's `maxNonceRecordCount`).
pub const MAX_NONCES: usize = 1000;

/// The key name ndn-cxx gives every DigestSha256 signature (they carry no KeyLocator), so
/// that all such signers share one record.
pub const DIGEST_SHA256_KEY: &str = "/localhost/identity/digest-sha256";

/// Why a command is refused (NFD answers 403).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum ReplayError {
    /// The signature names no key: neither DigestSha256 nor a KeyLocator Name.
    #[error("no KeyLocator name")]
    NoKeyName,
    /// The signature has no timestamp (a v0.3 Interest without SignatureTime).
    #[error("no signature time")]
    Missing,
    /// A v0.3 signed Interest without SignatureNonce.
    #[error("no signature nonce")]
    NoNonce,
    /// The timestamp is more than the grace period away from now.
    #[error("signature time outside the grace period")]
    OutsideGracePeriod,
    /// The timestamp is older than the last one accepted from this key.
    #[error("signature time older than this key's last")]
    Reordered,
    /// The nonce is among those already accepted from this key: a replay.
    #[error("nonce already seen from this key")]
    NonceReplayed,
}

/// What replay protection reads from one signed command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamp {
    /// The signing key the record is kept for.
    pub key: Name,
    /// Milliseconds since the Unix epoch.
    pub timestamp: Option<u64>,
    /// SignatureNonce (v0.3) or the nonce component (v0.2).
    pub nonce: Option<Vec<u8>>,
    /// Whether it is a v0.3 signed Interest, for which a nonce is required and must be new
    /// whatever the timestamp.
    pub v03: bool,
}

impl Stamp {
    /// The stamp of a signed command; `None` for an unsigned one.
    pub fn of(sig: &CommandSignature) -> Option<Result<Stamp, ReplayError>> {
        let (info, nonce, v03) = match sig {
            CommandSignature::Unsigned => return None,
            CommandSignature::V03 { info, .. } => (info, info.nonce.as_deref(), true),
            CommandSignature::V02 { info, nonce, .. } => (info, Some(&nonce[..]), false),
        };
        let key = if info.sig_type == SignatureType::DIGEST_SHA256 {
            DIGEST_SHA256_KEY.parse().expect("valid name")
        } else {
            match sig.key_name() {
                Some(k) => k.clone(),
                None => return Some(Err(ReplayError::NoKeyName)),
            }
        };
        Some(Ok(Stamp {
            key,
            timestamp: sig.timestamp(),
            nonce: nonce.map(<[u8]>::to_vec),
            v03,
        }))
    }
}

#[derive(Debug)]
struct Record {
    timestamp: u64,
    refreshed_at: u64,
    /// Hashes of the last [`MAX_NONCES`] nonces, oldest first: 8 octets each, whatever the
    /// nonce's length. A collision can only refuse a new command, never admit a replay.
    nonces: VecDeque<u64>,
}

/// One validator's replay records: the last accepted timestamp and nonces per signing key.
#[derive(Debug, Default)]
pub struct ReplayGuard {
    records: BTreeMap<Name, Record>,
    hasher: RandomState,
}

impl ReplayGuard {
    /// An empty guard.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether `stamp` may be accepted at wall-clock `now_ms`. Forgets expired records, and
    /// records nothing: call [`ReplayGuard::record`] once the command is accepted.
    pub fn check(&mut self, stamp: &Stamp, now_ms: u64) -> Result<(), ReplayError> {
        // Measured back from now, so that a record refreshed at the end of the clock's range
        // (a signer's timestamp near u64::MAX, which the grace period lets through when the
        // clock is there too) is not forgotten at once.
        self.records
            .retain(|_, r| now_ms.saturating_sub(r.refreshed_at) < RECORD_LIFETIME_MS);
        let ts = stamp.timestamp.ok_or(ReplayError::Missing)?;
        if stamp.v03 && stamp.nonce.is_none() {
            return Err(ReplayError::NoNonce);
        }
        if ts.abs_diff(now_ms) > GRACE_PERIOD_MS {
            return Err(ReplayError::OutsideGracePeriod);
        }
        let Some(r) = self.records.get(&stamp.key) else {
            return Ok(());
        };
        if ts < r.timestamp {
            return Err(ReplayError::Reordered);
        }
        let seen = stamp
            .nonce
            .as_ref()
            .is_some_and(|n| r.nonces.contains(&self.hasher.hash_one(n)));
        // An equal timestamp needs a nonce, and a new one; a v0.3 nonce must be new always.
        match (ts == r.timestamp, stamp.nonce.is_some(), seen) {
            (true, false, _) => Err(ReplayError::Reordered),
            (true, true, true) => Err(ReplayError::NonceReplayed),
            (false, _, true) if stamp.v03 => Err(ReplayError::NonceReplayed),
            _ => Ok(()),
        }
    }

    /// Records `stamp`, which [`ReplayGuard::check`] passed and whose command was then
    /// accepted, at wall-clock `now_ms`; forgets the least recently refreshed key beyond
    /// [`MAX_RECORDS`].
    pub fn record(&mut self, stamp: &Stamp, now_ms: u64) {
        let Some(ts) = stamp.timestamp else {
            return;
        };
        let nonce = stamp.nonce.as_ref().map(|n| self.hasher.hash_one(n));
        let r = self.records.entry(stamp.key.clone()).or_insert(Record {
            timestamp: ts,
            refreshed_at: now_ms,
            nonces: VecDeque::new(),
        });
        // Another command of the key may have been accepted since this one was checked.
        r.timestamp = r.timestamp.max(ts);
        r.refreshed_at = now_ms;
        if let Some(n) = nonce {
            if r.nonces.len() == MAX_NONCES {
                r.nonces.pop_front();
            }
            r.nonces.push_back(n);
        }
        if self.records.len() > MAX_RECORDS {
            let oldest = self
                .records
                .iter()
                .min_by_key(|(_, r)| r.refreshed_at)
                .map(|(k, _)| k.clone())
                .expect("over capacity means not empty");
            self.records.remove(&oldest);
        }
    }

    /// [`ReplayGuard::check`] then, when it passes, [`ReplayGuard::record`]: for a validator
    /// that has nothing else to check.
    pub fn admit(&mut self, stamp: &Stamp, now_ms: u64) -> Result<(), ReplayError> {
        self.check(stamp, now_ms)?;
        self.record(stamp, now_ms);
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
    use bytes::Bytes;
    use kite_packet::{KeyLocator, SignatureInfo};

    fn key(i: u32) -> Name {
        format!("/key/{i}").parse().unwrap()
    }

    const NOW: u64 = 1_800_000_000_000;

    /// A v0.3 stamp from key `k` with time `ts` and nonce `n`.
    fn v03(k: u32, ts: u64, n: u64) -> Stamp {
        Stamp {
            key: key(k),
            timestamp: Some(ts),
            nonce: Some(n.to_be_bytes().to_vec()),
            v03: true,
        }
    }

    fn v02(k: u32, ts: u64, n: u64) -> Stamp {
        Stamp {
            v03: false,
            ..v03(k, ts, n)
        }
    }

    #[test]
    fn older_timestamps_are_refused_per_key() {
        let mut g = ReplayGuard::new();
        g.admit(&v03(1, NOW, 1), NOW).unwrap();
        assert_eq!(
            g.admit(&v03(1, NOW - 5, 2), NOW + 1),
            Err(ReplayError::Reordered)
        );
        g.admit(&v03(1, NOW + 1, 3), NOW + 1).unwrap();
        assert_eq!(
            g.admit(&v02(1, NOW, 4), NOW + 1),
            Err(ReplayError::Reordered)
        );
        // Another key has its own sequence.
        g.admit(&v03(2, NOW - 10, 5), NOW + 1).unwrap();
    }

    #[test]
    fn an_equal_timestamp_with_a_new_nonce_is_accepted_and_a_replay_is_not() {
        for stamp in [v03, v02] {
            let mut g = ReplayGuard::new();
            g.admit(&stamp(1, NOW, 10), NOW).unwrap();
            // Two commands signed in one millisecond, as python-ndn sends them.
            g.admit(&stamp(1, NOW, 11), NOW).unwrap();
            assert_eq!(
                g.admit(&stamp(1, NOW, 11), NOW),
                Err(ReplayError::NonceReplayed),
                "the same command again"
            );
            assert_eq!(
                g.admit(&stamp(1, NOW, 10), NOW + 1),
                Err(ReplayError::NonceReplayed)
            );
            let no_nonce = Stamp {
                nonce: None,
                v03: false,
                ..stamp(1, NOW, 0)
            };
            assert_eq!(g.admit(&no_nonce, NOW), Err(ReplayError::Reordered));
        }
    }

    #[test]
    fn a_v03_nonce_is_required_and_must_be_new_whatever_the_time() {
        let mut g = ReplayGuard::new();
        let bare = Stamp {
            nonce: None,
            ..v03(1, NOW, 0)
        };
        assert_eq!(g.admit(&bare, NOW), Err(ReplayError::NoNonce));
        g.admit(&v03(1, NOW, 7), NOW).unwrap();
        assert_eq!(
            g.admit(&v03(1, NOW + 5, 7), NOW + 5),
            Err(ReplayError::NonceReplayed)
        );
        // ndn-cxx checks no v0.2 nonce: a newer v0.2 timestamp may reuse one.
        g.admit(&v02(1, NOW + 6, 7), NOW + 6).unwrap();
    }

    #[test]
    fn nothing_is_recorded_until_the_command_is_accepted() {
        let mut g = ReplayGuard::new();
        // Checked, then refused by a later stage (its certificate, say): no record.
        g.check(&v03(1, NOW + 50, 1), NOW).unwrap();
        g.admit(&v03(1, NOW + 1, 2), NOW).unwrap();
        // Refused by the guard itself: no record either.
        assert_eq!(
            g.admit(&v03(1, NOW + GRACE_PERIOD_MS + 2, 3), NOW),
            Err(ReplayError::OutsideGracePeriod)
        );
        g.admit(&v03(1, NOW + 2, 4), NOW).unwrap();
        assert_eq!(g.len(), 1);
    }

    #[test]
    fn a_record_keeps_the_newest_timestamp() {
        let mut g = ReplayGuard::new();
        let (early, late) = (v03(1, NOW, 1), v03(1, NOW + 9, 2));
        g.check(&early, NOW).unwrap();
        g.admit(&late, NOW).unwrap();
        // The early command's certificate arrived last.
        g.record(&early, NOW);
        assert_eq!(
            g.admit(&v03(1, NOW + 5, 3), NOW),
            Err(ReplayError::Reordered)
        );
    }

    #[test]
    fn grace_period_bounds_both_sides() {
        let mut g = ReplayGuard::new();
        assert_eq!(
            g.admit(&v03(1, NOW - GRACE_PERIOD_MS - 1, 1), NOW),
            Err(ReplayError::OutsideGracePeriod)
        );
        assert_eq!(
            g.admit(&v03(1, NOW + GRACE_PERIOD_MS + 1, 2), NOW),
            Err(ReplayError::OutsideGracePeriod)
        );
        g.admit(&v03(1, NOW + GRACE_PERIOD_MS, 3), NOW).unwrap();
        g.admit(&v03(2, NOW - GRACE_PERIOD_MS, 3), NOW).unwrap();
        let untimed = Stamp {
            timestamp: None,
            ..v03(3, NOW, 4)
        };
        assert_eq!(g.admit(&untimed, NOW), Err(ReplayError::Missing));
    }

    #[test]
    fn records_expire_an_hour_after_the_last_command() {
        let mut g = ReplayGuard::new();
        g.admit(&v03(1, NOW, 1), NOW).unwrap();
        let later = NOW + RECORD_LIFETIME_MS;
        // Forgotten: nonce 1 (with an in-grace timestamp) is accepted again.
        g.admit(&v03(1, later, 1), later).unwrap();
        assert_eq!(g.len(), 1);
    }

    #[test]
    fn a_record_made_at_the_end_of_the_clock_is_kept() {
        let mut g = ReplayGuard::new();
        for stamp in [v03(1, u64::MAX, 1), v02(2, u64::MAX, 1)] {
            g.admit(&stamp, u64::MAX).unwrap();
            assert_eq!(g.admit(&stamp, u64::MAX), Err(ReplayError::NonceReplayed));
        }
        assert_eq!(g.len(), 2);
    }

    #[test]
    fn at_most_a_thousand_keys_oldest_evicted() {
        let mut g = ReplayGuard::new();
        for i in 0..=MAX_RECORDS as u32 {
            let now = NOW + u64::from(i);
            g.admit(&v03(i, now, 1), now).unwrap();
        }
        assert_eq!(g.len(), MAX_RECORDS);
        // Key 0 was evicted, so its replay is no longer detected; key 1 still is.
        let now = NOW + 2000;
        g.admit(&v03(0, NOW, 1), now).unwrap();
        assert_eq!(
            g.admit(&v03(2, NOW + 2, 1), now),
            Err(ReplayError::NonceReplayed)
        );
    }

    #[test]
    fn at_most_a_thousand_nonces_per_key() {
        let mut g = ReplayGuard::new();
        for n in 0..=MAX_NONCES as u64 {
            g.admit(&v03(1, NOW, n), NOW).unwrap();
        }
        assert_eq!(g.records[&key(1)].nonces.len(), MAX_NONCES);
        // The first nonce is forgotten, the second still known.
        assert_eq!(
            g.admit(&v03(1, NOW, 1), NOW),
            Err(ReplayError::NonceReplayed)
        );
        g.admit(&v03(1, NOW, 0), NOW).unwrap();
    }

    #[test]
    fn every_digest_signer_shares_one_key_and_a_keyless_signature_is_refused() {
        let mut info = SignatureInfo::new(SignatureType::DIGEST_SHA256);
        info.time = Some(NOW);
        info.nonce = Some(Bytes::from_static(b"n"));
        let digest = CommandSignature::V03 {
            info: info.clone(),
            value: Bytes::new(),
        };
        let s = Stamp::of(&digest).unwrap().unwrap();
        assert_eq!(s.key.to_string(), DIGEST_SHA256_KEY);
        assert_eq!(s.nonce.as_deref(), Some(&b"n"[..]));
        info.sig_type = SignatureType::SHA256_WITH_ECDSA;
        let keyless = CommandSignature::V02 {
            timestamp: NOW,
            nonce: Bytes::from_static(b"x"),
            info: info.clone(),
            value: Bytes::new(),
        };
        assert_eq!(Stamp::of(&keyless), Some(Err(ReplayError::NoKeyName)));
        info.key_locator = Some(KeyLocator::Name(key(9)));
        let keyed = CommandSignature::V02 {
            timestamp: NOW,
            nonce: Bytes::from_static(b"x"),
            info,
            value: Bytes::new(),
        };
        let s = Stamp::of(&keyed).unwrap().unwrap();
        assert_eq!((s.key, s.timestamp, s.v03), (key(9), Some(NOW), false));
        assert_eq!(Stamp::of(&CommandSignature::Unsigned), None);
    }
}
