//! CoDel on a forwarding thread's input queue, marking instead of dropping (NDN-DPDK paper,
//! section 3: NDN-DPDK sets the NDNLPv2 CongestionMark on the packet CoDel would have dropped, so
//! consumers slow down and nothing is lost).
//!
//! The control law is RFC 8289's: once the queue's sojourn time has stayed above `target` for a
//! whole `interval`, mark one packet, then the next after `interval / sqrt(count)`, until a
//! packet leaves with a sojourn below target.

use core::time::Duration;

use kite_fw::time::Time;

/// CoDel's two settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CoDelConfig {
    /// Acceptable standing queue delay (NDN-DPDK and RFC 8289: 5 ms).
    pub target: Duration,
    /// How long the delay must stay above target before marking starts (100 ms).
    pub interval: Duration,
}

impl Default for CoDelConfig {
    fn default() -> Self {
        CoDelConfig {
            target: Duration::from_millis(5),
            interval: Duration::from_millis(100),
        }
    }
}

/// The state of one queue's CoDel.
#[derive(Debug, Clone)]
pub struct CoDel {
    config: CoDelConfig,
    /// When the sojourn time will have been above target for an interval (None: it is below).
    first_above: Option<Time>,
    /// Whether CoDel is in its marking state.
    marking: bool,
    /// When the next mark is due while marking.
    mark_next: Time,
    /// Marks in the current marking state.
    count: u32,
    /// `count` when the previous marking state ended.
    last_count: u32,
    /// Packets marked so far.
    marked: u64,
}

impl CoDel {
    /// A CoDel with `config`, not marking.
    pub fn new(config: CoDelConfig) -> Self {
        CoDel {
            config,
            first_above: None,
            marking: false,
            mark_next: Time::ZERO,
            count: 0,
            last_count: 0,
            marked: 0,
        }
    }

    /// A packet leaves the queue at `now` after waiting `sojourn`; returns whether to mark it.
    pub fn on_dequeue(&mut self, now: Time, sojourn: Duration) -> bool {
        let above_for_interval = if sojourn < self.config.target {
            self.first_above = None;
            false
        } else {
            match self.first_above {
                None => {
                    self.first_above = Some(now + self.config.interval);
                    false
                }
                Some(t) => now >= t,
            }
        };
        let mark = if self.marking {
            if !above_for_interval {
                self.marking = false;
                false
            } else if now >= self.mark_next {
                self.count = self.count.saturating_add(1);
                self.mark_next = self.control_law(self.mark_next);
                true
            } else {
                false
            }
        } else if above_for_interval {
            self.marking = true;
            // Resume near the previous rate if marking stopped only recently (RFC 8289 5.5).
            let delta = self.count.saturating_sub(self.last_count);
            let recent = now.since(self.mark_next) < self.config.interval * 16;
            self.count = if delta > 1 && recent { delta } else { 1 };
            self.last_count = self.count;
            self.mark_next = self.control_law(now);
            true
        } else {
            false
        };
        self.marked += u64::from(mark);
        mark
    }

    /// The sojourn time above which a queue counts as standing.
    pub fn target(&self) -> Duration {
        self.config.target
    }

    /// Packets marked so far.
    pub fn marked(&self) -> u64 {
        self.marked
    }

    fn control_law(&self, t: Time) -> Time {
        t + self
            .config
            .interval
            .div_f64(f64::from(self.count.max(1)).sqrt())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    /// Feeds one packet per millisecond with the given sojourn; returns the times marked.
    fn run(codel: &mut CoDel, from_ms: u64, to_ms: u64, sojourn: Duration) -> Vec<u64> {
        (from_ms..to_ms)
            .filter(|&t| codel.on_dequeue(Time::from_millis(t), sojourn))
            .collect()
    }

    #[test]
    fn short_queues_are_never_marked() {
        let mut c = CoDel::new(CoDelConfig::default());
        assert!(run(&mut c, 0, 10_000, 4 * MS).is_empty());
        assert_eq!(c.marked(), 0);
    }

    #[test]
    fn a_standing_queue_is_marked_after_one_interval_then_faster() {
        let mut c = CoDel::new(CoDelConfig::default());
        let marks = run(&mut c, 0, 1_000, 20 * MS);
        // Above target from t=0: the first mark once a whole interval has passed.
        assert_eq!(marks[0], 100);
        // Then at interval/sqrt(count): 100 ms, ~71 ms, ~58 ms... gaps shrink.
        let gaps: Vec<u64> = marks.windows(2).map(|w| w[1] - w[0]).collect();
        assert_eq!(gaps[0], 100);
        assert!(gaps.windows(2).all(|g| g[1] <= g[0]), "{gaps:?}");
        assert!(*gaps.last().unwrap() < 50, "{gaps:?}");
    }

    #[test]
    fn marking_stops_when_the_queue_drains_and_a_burst_is_tolerated() {
        let mut c = CoDel::new(CoDelConfig::default());
        run(&mut c, 0, 500, 20 * MS);
        let before = c.marked();
        assert!(run(&mut c, 500, 1_000, MS).is_empty());
        assert_eq!(c.marked(), before);
        // A burst shorter than one interval is absorbed.
        assert!(run(&mut c, 1_000, 1_090, 50 * MS).is_empty());
    }
}
