//! The fetch's retransmission timeout: `kite-link`'s RFC 6298 estimator (smoothed RTT and RTT
//! variation from each sample, doubled on each timeout) with floating-point gains, within the
//! fetch's bounds ([200 ms, 60 s] by default).

use std::time::Duration;

pub use kite_link::rtt::RttEstimator;
use kite_link::rtt::{RttConfig, Smoothing};

/// An estimator starting at `initial` RTO (RFC 6298: 1 s), kept within `min`..=`max`.
pub fn estimator(initial: Duration, min: Duration, max: Duration) -> RttEstimator {
    RttEstimator::new(RttConfig {
        initial,
        min,
        max,
        granularity: Duration::ZERO,
        smoothing: Smoothing::Float,
    })
}

/// The smoothed RTT; the RTO until a first sample.
pub fn srtt(e: &RttEstimator) -> Duration {
    e.srtt().unwrap_or(e.rto())
}

/// RFC 6298's RTO formula, SRTT + 4 × RTTVAR, before the floor and the backoff: how long an
/// answer may take on this path's record (the RTO until a first sample).
pub fn rtt_bound(e: &RttEstimator) -> Duration {
    e.rtt_bound().unwrap_or(e.rto())
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    fn default() -> RttEstimator {
        estimator(Duration::from_secs(1), 200 * MS, Duration::from_secs(60))
    }

    #[test]
    fn first_sample_then_smoothing_as_rfc_6298() {
        let mut e = default();
        assert_eq!(e.rto(), Duration::from_secs(1));
        assert_eq!(
            (srtt(&e), rtt_bound(&e)),
            (e.rto(), e.rto()),
            "before a sample"
        );
        e.add_sample(100 * MS);
        // SRTT = 100, RTTVAR = 50, RTO = 100 + 4 * 50.
        assert_eq!(srtt(&e), 100 * MS);
        assert_eq!(e.rto(), 300 * MS);
        e.add_sample(200 * MS);
        // RTTVAR = 0.75 * 50 + 0.25 * 100 = 62.5; SRTT = 0.875 * 100 + 0.125 * 200 = 112.5.
        assert_eq!(srtt(&e), Duration::from_micros(112_500));
        assert_eq!(e.rto(), Duration::from_micros(112_500 + 250_000));
    }

    #[test]
    fn clamped_to_min_and_backoff_to_max() {
        let mut e = default();
        e.add_sample(MS);
        assert_eq!(e.rto(), 200 * MS, "never below 200 ms");
        assert_eq!(rtt_bound(&e), 3 * MS, "the bound is not floored");
        for _ in 0..20 {
            e.backoff();
        }
        assert_eq!(e.rto(), Duration::from_secs(60));
        e.add_sample(MS);
        assert_eq!(e.rto(), 200 * MS, "a new sample resets the backoff");
    }
}
