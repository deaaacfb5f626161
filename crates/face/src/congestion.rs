//! Congestion marking on a face's output, as NFD's link service does it (NFD developer guide,
//! "congestion detection"): while more than a threshold of octets waits to be written to the
//! link, the face sets the NDNLPv2 CongestionMark on an outgoing packet once the congestion
//! has lasted a base interval, then again at intervals shrinking as 1/sqrt(marks + 1), and
//! starts over once the backlog falls below the threshold. Consumers (ndncatchunks, `kite
//! get`) shrink their window on a mark before the queue overflows and drops.
//!
//! Kite measures the backlog in its own output queue only (what the socket did not take): the
//! kernel's share would cost a syscall per packet.

use std::time::{Duration, Instant};

/// NFD's default base marking interval.
pub const DEFAULT_BASE_INTERVAL: Duration = Duration::from_millis(100);
/// NFD's default congestion threshold, in octets.
pub const DEFAULT_THRESHOLD: usize = 65_536;

/// When a face marks its outgoing packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MarkingConfig {
    /// Whether the face marks at all (NFD's CongestionMarking face flag).
    pub enabled: bool,
    /// How long the backlog must stay above the threshold before the first mark.
    pub base_interval: Duration,
    /// Octets of backlog above which the link counts as congested.
    pub threshold: usize,
}

impl Default for MarkingConfig {
    fn default() -> Self {
        MarkingConfig {
            enabled: true,
            base_interval: DEFAULT_BASE_INTERVAL,
            threshold: DEFAULT_THRESHOLD,
        }
    }
}

/// The marking state of one face.
#[derive(Debug, Clone)]
pub struct CongestionMarker {
    config: MarkingConfig,
    /// When the next packet may be marked; `None` while not congested.
    next_mark: Option<Instant>,
    /// Marks since this congestion began.
    marked: u32,
}

impl CongestionMarker {
    /// A marker not in congestion.
    pub fn new(config: MarkingConfig) -> Self {
        CongestionMarker {
            config,
            next_mark: None,
            marked: 0,
        }
    }

    /// The settings.
    pub fn config(&self) -> MarkingConfig {
        self.config
    }

    /// Changes the settings (`faces/update`); an ongoing congestion starts over.
    pub fn set_config(&mut self, config: MarkingConfig) {
        *self = CongestionMarker::new(config);
    }

    /// Whether the packet about to be queued, with `backlog` octets already waiting, carries
    /// a CongestionMark.
    pub fn mark(&mut self, backlog: usize, now: Instant) -> bool {
        if !self.config.enabled || backlog <= self.config.threshold {
            self.next_mark = None;
            self.marked = 0;
            return false;
        }
        let Some(next) = self.next_mark else {
            self.next_mark = Some(now + self.config.base_interval);
            return false;
        };
        if now < next {
            return false;
        }
        // Saturating: a congestion that lasts long enough (a tiny base interval set by
        // `faces/update`, a link congested for hours) must not overflow the count.
        self.marked = self.marked.saturating_add(1);
        let shrink = (f64::from(self.marked) + 1.0).sqrt();
        self.next_mark = Some(next + self.config.base_interval.div_f64(shrink));
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn marks_after_an_interval_of_congestion_then_faster() {
        let mut m = CongestionMarker::new(MarkingConfig::default());
        let t0 = Instant::now();
        let big = DEFAULT_THRESHOLD + 1;
        assert!(
            !m.mark(DEFAULT_THRESHOLD, t0),
            "at the threshold is not above it"
        );
        assert!(!m.mark(big, t0), "congestion starts: no mark yet");
        assert!(!m.mark(big, t0 + 99 * MS));
        assert!(m.mark(big, t0 + 100 * MS), "one base interval later");
        assert!(!m.mark(big, t0 + 101 * MS), "one mark per interval");
        // the next interval is 100 ms / sqrt(2) ≈ 70.7 ms after the previous mark time
        assert!(!m.mark(big, t0 + 170 * MS));
        assert!(m.mark(big, t0 + 171 * MS));
        // then 100 / sqrt(3) ≈ 57.7 ms
        assert!(!m.mark(big, t0 + 228 * MS));
        assert!(m.mark(big, t0 + 229 * MS));
    }

    #[test]
    fn a_drained_backlog_ends_the_congestion() {
        let mut m = CongestionMarker::new(MarkingConfig::default());
        let t0 = Instant::now();
        let big = DEFAULT_THRESHOLD * 2;
        m.mark(big, t0);
        assert!(m.mark(big, t0 + 100 * MS));
        assert!(!m.mark(0, t0 + 150 * MS));
        assert!(
            !m.mark(big, t0 + 200 * MS),
            "a new congestion waits an interval again"
        );
        assert!(m.mark(big, t0 + 300 * MS));
    }

    #[test]
    fn the_mark_count_saturates() {
        let mut m = CongestionMarker::new(MarkingConfig {
            base_interval: Duration::from_nanos(1),
            ..MarkingConfig::default()
        });
        let t0 = Instant::now();
        let big = DEFAULT_THRESHOLD + 1;
        m.mark(big, t0);
        m.marked = u32::MAX;
        assert!(m.mark(big, t0 + MS));
        assert!(m.mark(big, t0 + 2 * MS));
        assert_eq!(m.marked, u32::MAX);
    }

    #[test]
    fn disabled_never_marks() {
        let mut m = CongestionMarker::new(MarkingConfig {
            enabled: false,
            ..MarkingConfig::default()
        });
        let t0 = Instant::now();
        for k in 0..10 {
            assert!(!m.mark(usize::MAX, t0 + k * 100 * MS));
        }
    }
}
