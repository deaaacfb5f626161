//! How many Nacks a face is sent: a token bucket, as a traffic policer meters a flow. Every
//! Interest a face sends that the forwarder refuses (no room in the PIT, no route) would
//! otherwise cost the forwarder an encode and a send of a Nack, so a face flooding such
//! Interests could make the forwarder spend most of its time answering it. A face is sent
//! Nacks while it has tokens; the bucket holds [`NACK_BURST`] and refills at [`NACK_RATE`] a
//! second, so a consumer whose whole window is Nacked at once (a window is at most a few
//! hundred Interests) gets every Nack, as from NFD, and a flooder gets at most that many a
//! second: the rest are dropped and counted (`out-nack-limited`).

use std::time::Instant;

/// Nacks a face may be sent at once: above any consumer's window (`kite get`'s is at most
/// 512 Interests) and a face's output queue (1,024 frames).
pub const NACK_BURST: u32 = 1024;

/// Nacks a second a face is sent at most over time, past [`NACK_BURST`].
pub const NACK_RATE: u32 = 1024;

/// One token, in the units the bucket counts: a token a second earned over a nanosecond.
const TOKEN: u64 = 1_000_000_000;

/// One face's bucket of Nacks.
#[derive(Debug, Clone, Copy)]
pub struct NackPolicer {
    /// Nacks that may be sent now, in billionths (so refills of a fraction of a Nack add up).
    tokens: u64,
    /// When the bucket was last refilled.
    refilled: Instant,
}

impl NackPolicer {
    /// A full bucket at `now`.
    pub fn new(now: Instant) -> Self {
        NackPolicer {
            tokens: u64::from(NACK_BURST) * TOKEN,
            refilled: now,
        }
    }

    /// Whether a Nack may be sent at `now`; takes its token when it may.
    pub fn admit(&mut self, now: Instant) -> bool {
        let nanos = now.saturating_duration_since(self.refilled).as_nanos();
        if nanos > 0 {
            let earned = u64::try_from(nanos)
                .unwrap_or(u64::MAX)
                .saturating_mul(u64::from(NACK_RATE));
            self.tokens = self
                .tokens
                .saturating_add(earned)
                .min(u64::from(NACK_BURST) * TOKEN);
            self.refilled = now;
        }
        if self.tokens < TOKEN {
            return false;
        }
        self.tokens -= TOKEN;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_window_of_nacks_passes_and_a_flood_gets_the_rate() {
        let t0 = Instant::now();
        let mut p = NackPolicer::new(t0);
        // A whole burst at once.
        assert!((0..NACK_BURST).all(|_| p.admit(t0)));
        assert!(!p.admit(t0), "the bucket is empty");
        // Then the rate: over 10 s of a flood at a Nack every 10 µs, about NACK_RATE a second.
        let mut sent = 0u32;
        for i in 1..=1_000_000u64 {
            sent += u32::from(p.admit(t0 + Duration::from_micros(10 * i)));
        }
        assert!(
            (10 * NACK_RATE - 1..=10 * NACK_RATE).contains(&sent),
            "{sent} Nacks in 10 s"
        );
    }

    #[test]
    fn an_idle_face_gets_its_burst_back_and_no_more() {
        let t0 = Instant::now();
        let mut p = NackPolicer::new(t0);
        assert!((0..NACK_BURST).all(|_| p.admit(t0)));
        let later = t0 + Duration::from_secs(3600);
        assert!((0..NACK_BURST).all(|_| p.admit(later)));
        assert!(!p.admit(later), "an hour idle refills one burst");
        // A clock that went back earns nothing and takes nothing away.
        assert!(!p.admit(t0));
        assert!(p.admit(later + Duration::from_millis(1)));
    }
}
