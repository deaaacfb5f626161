//! The retransmission timeout of RFC 6298 ("Computing TCP's Retransmission Timer"), for the
//! senders that wait for an answer: a face's LpReliability, the segmented fetch and the daemon
//! benchmark's consumer (ASF keeps a packed copy in its FIB scratch area).
//!
//! From each round-trip sample R: the first sets SRTT = R and RTTVAR = R/2; later ones set
//! RTTVAR = 3/4·RTTVAR + 1/4·|SRTT − R| (with the SRTT before this sample), then
//! SRTT = 7/8·SRTT + 1/8·R. RTO = SRTT + max(G, 4·RTTVAR), kept within
//! [`RttConfig::min`]..=[`RttConfig::max`]; each [`RttEstimator::backoff`] doubles it up to the
//! maximum, and the next sample computes it afresh. Which samples to take (Karn's rule) is
//! the caller's business.

use std::time::Duration;

/// RFC 6298's K: the weight of the variation in the RTO.
const K: u32 = 4;

/// How the gains 1/8 and 1/4 are applied to [`Duration`]s: each user keeps the rounding it
/// was built with, so its timeouts do not move by a nanosecond.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Smoothing {
    /// (7·SRTT + R) / 8 and (3·RTTVAR + |SRTT − R|) / 4, rounded down once.
    Combined,
    /// 7·SRTT / 8 + R / 8 and 3·RTTVAR / 4 + |SRTT − R| / 4, each term rounded down.
    PerTerm,
    /// The gains and K as `f64` factors ([`Duration::mul_f64`]).
    Float,
}

/// An estimator's parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RttConfig {
    /// The RTO before any sample (RFC 6298: 1 s); kept within `min..=max`.
    pub initial: Duration,
    /// The smallest RTO (RFC 6298 recommends 1 s; LpReliability and fetches use less).
    pub min: Duration,
    /// The largest RTO, also the limit of the backoff (RFC 6298: at least 60 s).
    pub max: Duration,
    /// G, the clock granularity: the least the variation adds to SRTT.
    pub granularity: Duration,
    /// How the gains are rounded.
    pub smoothing: Smoothing,
}

/// SRTT and RTTVAR from the samples so far, and the RTO they give.
#[derive(Debug, Clone, Copy)]
pub struct RttEstimator {
    cfg: RttConfig,
    /// SRTT and RTTVAR, once a sample came.
    smoothed: Option<(Duration, Duration)>,
    rto: Duration,
}

impl RttEstimator {
    /// An estimator with no sample yet: its RTO is `cfg.initial` (within the bounds).
    pub fn new(cfg: RttConfig) -> Self {
        RttEstimator {
            cfg,
            smoothed: None,
            rto: cfg.initial.clamp(cfg.min, cfg.max),
        }
    }

    /// Takes one round-trip sample and computes the RTO afresh (ending any backoff).
    pub fn add_sample(&mut self, r: Duration) {
        let (srtt, rttvar) = match self.smoothed {
            None => (r, r / 2),
            Some((srtt, rttvar)) => {
                let diff = srtt.abs_diff(r);
                match self.cfg.smoothing {
                    Smoothing::Combined => ((srtt * 7 + r) / 8, (rttvar * 3 + diff) / 4),
                    Smoothing::PerTerm => (srtt * 7 / 8 + r / 8, rttvar * 3 / 4 + diff / 4),
                    Smoothing::Float => (
                        srtt.mul_f64(7.0 / 8.0) + r.mul_f64(1.0 / 8.0),
                        rttvar.mul_f64(3.0 / 4.0) + diff.mul_f64(1.0 / 4.0),
                    ),
                }
            }
        };
        self.smoothed = Some((srtt, rttvar));
        self.rto = self.bound(srtt, rttvar).clamp(self.cfg.min, self.cfg.max);
    }

    /// Doubles the RTO after a timeout, up to [`RttConfig::max`].
    pub fn backoff(&mut self) {
        self.rto = (self.rto * 2).min(self.cfg.max);
    }

    /// The current retransmission timeout.
    pub fn rto(&self) -> Duration {
        self.rto
    }

    /// The smoothed RTT, once a sample came.
    pub fn srtt(&self) -> Option<Duration> {
        self.smoothed.map(|(srtt, _)| srtt)
    }

    /// The RTT variation (zero before the first sample).
    pub fn rttvar(&self) -> Duration {
        self.smoothed.map_or(Duration::ZERO, |(_, rttvar)| rttvar)
    }

    /// SRTT + max(G, 4·RTTVAR) before the bounds and the backoff, once a sample came: how
    /// long an answer may take on this path's record.
    pub fn rtt_bound(&self) -> Option<Duration> {
        self.smoothed.map(|(srtt, rttvar)| self.bound(srtt, rttvar))
    }

    fn bound(&self, srtt: Duration, rttvar: Duration) -> Duration {
        let var = match self.cfg.smoothing {
            Smoothing::Combined | Smoothing::PerTerm => rttvar * K,
            Smoothing::Float => rttvar.mul_f64(f64::from(K)),
        };
        srtt + var.max(self.cfg.granularity)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);
    const NS: Duration = Duration::from_nanos(1);

    fn estimator(smoothing: Smoothing) -> RttEstimator {
        RttEstimator::new(RttConfig {
            initial: Duration::from_secs(1),
            min: Duration::ZERO,
            max: Duration::from_secs(60),
            granularity: Duration::ZERO,
            smoothing,
        })
    }

    #[test]
    fn first_sample_then_smoothing_as_rfc_6298() {
        for smoothing in [Smoothing::Combined, Smoothing::PerTerm, Smoothing::Float] {
            let mut e = estimator(smoothing);
            assert_eq!((e.rto(), e.srtt(), e.rtt_bound()), (1000 * MS, None, None));
            e.add_sample(100 * MS);
            // SRTT = 100, RTTVAR = 50, RTO = 100 + 4 * 50.
            assert_eq!((e.srtt(), e.rttvar()), (Some(100 * MS), 50 * MS));
            assert_eq!(e.rto(), 300 * MS, "{smoothing:?}");
            e.add_sample(200 * MS);
            // RTTVAR = 0.75 * 50 + 0.25 * 100 = 62.5; SRTT = 0.875 * 100 + 0.125 * 200 = 112.5.
            assert_eq!(e.srtt(), Some(Duration::from_micros(112_500)));
            assert_eq!(e.rttvar(), Duration::from_micros(62_500));
            assert_eq!(e.rto(), Duration::from_micros(112_500 + 250_000));
            assert_eq!(e.rtt_bound(), Some(e.rto()));
        }
    }

    #[test]
    fn the_integer_smoothings_round_where_they_say() {
        let mut combined = estimator(Smoothing::Combined);
        let mut per_term = estimator(Smoothing::PerTerm);
        for e in [&mut combined, &mut per_term] {
            e.add_sample(3 * NS);
            e.add_sample(4 * NS);
        }
        // (7·3 + 4) / 8 = 3 and (3·1 + 1) / 4 = 1, against 21/8 + 4/8 = 2 and 3/4 + 1/4 = 0.
        assert_eq!((combined.srtt(), combined.rttvar()), (Some(3 * NS), NS));
        assert_eq!(
            (per_term.srtt(), per_term.rttvar()),
            (Some(2 * NS), Duration::ZERO)
        );
        assert_eq!((combined.rto(), per_term.rto()), (7 * NS, 2 * NS));
    }

    #[test]
    fn bounds_backoff_and_granularity() {
        let mut e = RttEstimator::new(RttConfig {
            initial: Duration::from_secs(5),
            min: 200 * MS,
            max: Duration::from_secs(2),
            granularity: 10 * MS,
            smoothing: Smoothing::Combined,
        });
        assert_eq!(
            e.rto(),
            Duration::from_secs(2),
            "the initial RTO is bounded too"
        );
        e.add_sample(MS);
        assert_eq!(e.rto(), 200 * MS, "never below the minimum");
        assert_eq!(
            e.rtt_bound(),
            Some(11 * MS),
            "G, not 4 · 0.5 ms, above SRTT"
        );
        e.backoff();
        assert_eq!(e.rto(), 400 * MS);
        for _ in 0..10 {
            e.backoff();
        }
        assert_eq!(
            e.rto(),
            Duration::from_secs(2),
            "backoff stops at the maximum"
        );
        e.add_sample(MS);
        assert_eq!(e.rto(), 200 * MS, "a new sample ends the backoff");
        e.add_sample(Duration::from_secs(30));
        assert_eq!(e.rto(), Duration::from_secs(2), "never above the maximum");
    }
}
