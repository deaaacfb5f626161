//! The one place the I/O thread's poll timeout is made: each part reports its next deadline
//! (the inline shards' timers, connects, redials, parked faces, LpReliability) and the
//! earliest wins, never later than the housekeeping tick.

use std::time::{Duration, Instant};

/// The earliest of the deadlines reported at `now`, as a poll timeout.
#[derive(Debug, Clone, Copy)]
pub(super) struct Deadlines {
    now: Instant,
    timeout: Duration,
}

impl Deadlines {
    /// No timeout longer than `most` (the housekeeping tick).
    pub fn new(now: Instant, most: Duration) -> Self {
        Deadlines { now, timeout: most }
    }

    /// Something is due at `at` (`None`: nothing).
    pub fn at(&mut self, at: Option<Instant>) {
        if let Some(at) = at {
            self.within(Some(at.saturating_duration_since(self.now)));
        }
    }

    /// Something is due in `d` (`None`: nothing).
    pub fn within(&mut self, d: Option<Duration>) {
        if let Some(d) = d {
            self.timeout = self.timeout.min(d);
        }
    }

    /// How long the poll may sleep.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TICK: Duration = Duration::from_secs(1);

    #[test]
    fn without_deadlines_the_poll_sleeps_until_the_tick() {
        let d = Deadlines::new(Instant::now(), TICK);
        assert_eq!(d.timeout(), TICK);
    }

    #[test]
    fn the_earliest_deadline_wins_whatever_the_order() {
        let now = Instant::now();
        let ms = Duration::from_millis;
        let mut d = Deadlines::new(now, TICK);
        d.at(Some(now + ms(300)));
        d.within(Some(ms(40)));
        d.at(None);
        d.at(Some(now + ms(70)));
        d.within(None);
        d.within(Some(ms(500)));
        assert_eq!(d.timeout(), ms(40));
    }

    #[test]
    fn a_deadline_past_or_beyond_the_tick_is_bounded() {
        let now = Instant::now();
        let mut d = Deadlines::new(now, TICK);
        d.at(Some(now + 5 * TICK));
        assert_eq!(d.timeout(), TICK, "never later than the tick");
        d.at(Some(now.checked_sub(TICK).unwrap_or(now)));
        assert_eq!(d.timeout(), Duration::ZERO, "a deadline passed is due now");
    }
}
