//! The retransmission timeout, estimated as RFC 6298 does for TCP: smoothed RTT and RTT
//! variation from each sample, doubled on each timeout, within [200 ms, 60 s].

use std::time::Duration;

/// RFC 6298's alpha (gain of the smoothed RTT).
const ALPHA: f64 = 1.0 / 8.0;
/// RFC 6298's beta (gain of the RTT variation).
const BETA: f64 = 1.0 / 4.0;
/// RFC 6298's K (weight of the variation in the RTO).
const K: f64 = 4.0;

/// The RTT estimator and the RTO it gives.
#[derive(Debug, Clone)]
pub struct RttEstimator {
    srtt: Option<Duration>,
    rttvar: Duration,
    rto: Duration,
    min_rto: Duration,
    max_rto: Duration,
}

impl Default for RttEstimator {
    fn default() -> Self {
        Self::new(
            Duration::from_secs(1),
            Duration::from_millis(200),
            Duration::from_secs(60),
        )
    }
}

impl RttEstimator {
    /// An estimator starting at `initial` RTO (RFC 6298: 1 s), kept within `min`..=`max`.
    pub fn new(initial: Duration, min: Duration, max: Duration) -> Self {
        RttEstimator {
            srtt: None,
            rttvar: Duration::ZERO,
            rto: initial.clamp(min, max),
            min_rto: min,
            max_rto: max,
        }
    }

    /// Takes one RTT sample (only from Data answering an Interest sent once: Karn's rule).
    pub fn add_sample(&mut self, rtt: Duration) {
        let (srtt, rttvar) = match self.srtt {
            None => (rtt, rtt / 2),
            Some(srtt) => {
                let diff = srtt.abs_diff(rtt);
                (
                    srtt.mul_f64(1.0 - ALPHA) + rtt.mul_f64(ALPHA),
                    self.rttvar.mul_f64(1.0 - BETA) + diff.mul_f64(BETA),
                )
            }
        };
        self.srtt = Some(srtt);
        self.rttvar = rttvar;
        self.rto = (srtt + rttvar.mul_f64(K)).clamp(self.min_rto, self.max_rto);
    }

    /// Doubles the RTO after a timeout (up to the maximum).
    pub fn backoff(&mut self) {
        self.rto = (self.rto * 2).min(self.max_rto);
    }

    /// The current retransmission timeout.
    pub fn rto(&self) -> Duration {
        self.rto
    }

    /// RFC 6298's RTO formula, SRTT + 4 × RTTVAR, before the floor and the backoff: how long
    /// an answer may take on this path's record (the RTO until a first sample).
    pub fn rtt_bound(&self) -> Duration {
        self.srtt
            .map_or(self.rto, |srtt| srtt + self.rttvar.mul_f64(K))
    }

    /// The smoothed RTT; the RTO until a first sample.
    pub fn srtt(&self) -> Duration {
        self.srtt.unwrap_or(self.rto)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn first_sample_then_smoothing_as_rfc_6298() {
        let mut e = RttEstimator::default();
        assert_eq!(e.rto(), Duration::from_secs(1));
        e.add_sample(100 * MS);
        // SRTT = 100, RTTVAR = 50, RTO = 100 + 4 * 50.
        assert_eq!(e.srtt(), 100 * MS);
        assert_eq!(e.rto(), 300 * MS);
        e.add_sample(200 * MS);
        // RTTVAR = 0.75 * 50 + 0.25 * 100 = 62.5; SRTT = 0.875 * 100 + 0.125 * 200 = 112.5.
        assert_eq!(e.srtt(), Duration::from_micros(112_500));
        assert_eq!(e.rto(), Duration::from_micros(112_500 + 250_000));
    }

    #[test]
    fn clamped_to_min_and_backoff_to_max() {
        let mut e = RttEstimator::default();
        e.add_sample(MS);
        assert_eq!(e.rto(), 200 * MS, "never below 200 ms");
        for _ in 0..20 {
            e.backoff();
        }
        assert_eq!(e.rto(), Duration::from_secs(60));
        e.add_sample(MS);
        assert_eq!(e.rto(), 200 * MS, "a new sample resets the backoff");
    }
}
