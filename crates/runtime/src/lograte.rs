//! Log lines that a peer can provoke, kept to a bounded rate.
//!
//! Two tools, both plain counters owned by one thread (no lock, no allocation per event):
//! - [`LineBudget`]: at most a few lines per window for an event a peer can repeat at will
//!   (a face created for each new UDP sender, a refused management command); the lines
//!   refused are counted and the next line allowed says how many.
//! - [`DropReport`]: drops are never logged where they happen. The thread that owns the
//!   counters compares them with what it last reported, at most once a second, and writes
//!   one line per reason that grew: at most one line per reason per [`DROP_LOG_INTERVAL`],
//!   carrying the count since its last line.

use std::time::{Duration, Instant};

use tracing::Level;

/// The shortest time between two lines for the same drop reason.
pub const DROP_LOG_INTERVAL: Duration = Duration::from_secs(10);

/// How often the owner of drop counters should call [`DropReport::report`].
pub const DROP_CHECK_INTERVAL: Duration = Duration::from_secs(1);

/// At most `lines` log lines per `window`; the rest are counted.
#[derive(Debug, Clone)]
pub struct LineBudget {
    lines: u32,
    window: Duration,
    start: Option<Instant>,
    used: u32,
    suppressed: u64,
}

impl LineBudget {
    /// A budget of `lines` per `window`.
    pub const fn new(lines: u32, window: Duration) -> Self {
        LineBudget {
            lines,
            window,
            start: None,
            used: 0,
            suppressed: 0,
        }
    }

    /// Whether one more line may be written at `now`: `Some(n)` with the lines refused since
    /// the last one allowed (to say in it), or `None` when the window's lines are spent.
    pub fn allow(&mut self, now: Instant) -> Option<u64> {
        if self
            .start
            .is_none_or(|s| now.saturating_duration_since(s) >= self.window)
        {
            self.start = Some(now);
            self.used = 0;
        }
        if self.used >= self.lines {
            self.suppressed += 1;
            return None;
        }
        self.used += 1;
        Some(std::mem::take(&mut self.suppressed))
    }

    /// Lines refused in a window that has ended and not yet said: for a closing summary
    /// when no further line comes to carry the count.
    pub fn take_suppressed(&mut self, now: Instant) -> u64 {
        match self.start {
            Some(s) if now.saturating_duration_since(s) >= self.window => {
                std::mem::take(&mut self.suppressed)
            }
            _ => 0,
        }
    }
}

/// A kind of drop: its name in logs, the level its lines are written at and what it means.
#[derive(Debug, Clone, Copy)]
pub struct DropKind {
    /// The `reason` field, stable for grep (`in-queue-full`, `table-full`).
    pub reason: &'static str,
    /// `WARN` for overload an operator should act on, `INFO` for a broken or hostile peer,
    /// `DEBUG` for what happens in a healthy network (loops, unsolicited Data).
    pub level: Level,
    /// The message.
    pub what: &'static str,
}

/// Per reason: the total last reported and when its last line was written.
#[derive(Debug, Clone, Copy, Default)]
struct Reported {
    total: u64,
    at: Option<Instant>,
}

/// Turns monotonic drop totals into rate-limited log lines (see the module documentation).
#[derive(Debug)]
pub struct DropReport<const N: usize> {
    kinds: &'static [DropKind; N],
    /// What the lines are about (`io`, `fwd0`): the `thread` field.
    thread: String,
    reported: [Reported; N],
    next_check: Option<Instant>,
}

impl<const N: usize> DropReport<N> {
    /// A report of `kinds`, whose totals start at zero.
    pub fn new(thread: impl Into<String>, kinds: &'static [DropKind; N]) -> Self {
        DropReport {
            kinds,
            thread: thread.into(),
            reported: [Reported::default(); N],
            next_check: None,
        }
    }

    /// Whether a check is due at `now` (once per [`DROP_CHECK_INTERVAL`]): lets a caller
    /// skip gathering totals in between.
    pub fn due(&self, now: Instant) -> bool {
        self.next_check.is_none_or(|t| now >= t)
    }

    /// Whether some total in `totals` grew past what was reported (a line is owed).
    pub fn owes(&self, totals: &[u64; N]) -> bool {
        totals.iter().zip(&self.reported).any(|(t, r)| *t > r.total)
    }

    /// Writes one line for each reason whose total grew and whose last line is at least
    /// [`DROP_LOG_INTERVAL`] old, with the count since that line; `totals` are in the order
    /// of the kinds and never decrease.
    pub fn report(&mut self, totals: &[u64; N], now: Instant) {
        self.write(totals, now, false);
    }

    /// Writes a line for every reason whose total grew, however recent its last line: what
    /// a thread says as it stops, so that no drop goes unsaid.
    pub fn flush(&mut self, totals: &[u64; N], now: Instant) {
        self.write(totals, now, true);
    }

    fn write(&mut self, totals: &[u64; N], now: Instant, all: bool) {
        self.next_check = Some(now + DROP_CHECK_INTERVAL);
        for ((kind, r), &total) in self.kinds.iter().zip(&mut self.reported).zip(totals) {
            if total <= r.total {
                continue;
            }
            let recent =
                r.at.is_some_and(|at| now.saturating_duration_since(at) < DROP_LOG_INTERVAL);
            if recent && !all {
                continue;
            }
            let count = total - r.total;
            let seconds =
                r.at.map_or(0, |at| now.saturating_duration_since(at).as_secs());
            line(kind, &self.thread, count, total, seconds);
            *r = Reported {
                total,
                at: Some(now),
            };
        }
    }
}

/// One drop line at the kind's level. `since_s` is 0 for a reason's first line.
fn line(kind: &DropKind, thread: &str, count: u64, total: u64, since_s: u64) {
    let what = kind.what;
    let reason = kind.reason;
    if kind.level == Level::WARN {
        tracing::warn!(%thread, %reason, count, total, since_s, "{what}");
    } else if kind.level == Level::INFO {
        tracing::info!(%thread, %reason, count, total, since_s, "{what}");
    } else if kind.level == Level::ERROR {
        tracing::error!(%thread, %reason, count, total, since_s, "{what}");
    } else if kind.level == Level::DEBUG {
        tracing::debug!(%thread, %reason, count, total, since_s, "{what}");
    } else {
        tracing::trace!(%thread, %reason, count, total, since_s, "{what}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_allows_its_lines_per_window_and_counts_the_rest() {
        let t0 = Instant::now();
        let mut b = LineBudget::new(2, Duration::from_secs(1));
        assert_eq!(b.allow(t0), Some(0));
        assert_eq!(b.allow(t0), Some(0));
        assert_eq!(b.allow(t0), None);
        assert_eq!(b.allow(t0 + Duration::from_millis(500)), None);
        assert_eq!(b.take_suppressed(t0 + Duration::from_millis(900)), 0);
        // the next window's first line carries the count
        assert_eq!(b.allow(t0 + Duration::from_secs(1)), Some(2));
        assert_eq!(b.allow(t0 + Duration::from_secs(1)), Some(0));
        assert_eq!(b.allow(t0 + Duration::from_secs(1)), None);
        assert_eq!(b.take_suppressed(t0 + Duration::from_secs(2)), 1);
        assert_eq!(b.take_suppressed(t0 + Duration::from_secs(2)), 0);
    }

    static KINDS: [DropKind; 2] = [
        DropKind {
            reason: "a",
            level: Level::WARN,
            what: "a",
        },
        DropKind {
            reason: "b",
            level: Level::DEBUG,
            what: "b",
        },
    ];

    #[test]
    fn a_report_writes_a_reason_at_most_once_per_interval() {
        let t0 = Instant::now();
        let mut r = DropReport::new("test", &KINDS);
        assert!(r.due(t0));
        assert!(!r.owes(&[0, 0]));
        r.report(&[5, 0], t0);
        assert!(!r.due(t0 + Duration::from_millis(500)));
        assert!(!r.owes(&[5, 0]), "the first drops were reported at once");
        // within the interval: owed, not written
        r.report(&[9, 1], t0 + Duration::from_secs(1));
        assert!(r.owes(&[9, 1]));
        assert_eq!(
            r.reported[1].total, 1,
            "another reason has its own interval"
        );
        r.report(&[9, 1], t0 + DROP_LOG_INTERVAL);
        assert!(!r.owes(&[9, 1]), "the count since the last line is written");
        assert_eq!(r.reported[0].at, Some(t0 + DROP_LOG_INTERVAL));
        // stopping: what grew is written at once
        r.flush(&[10, 1], t0 + DROP_LOG_INTERVAL + Duration::from_secs(1));
        assert!(!r.owes(&[10, 1]));
    }
}
