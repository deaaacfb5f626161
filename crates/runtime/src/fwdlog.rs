//! What a forwarding thread logs: its drops by reason, summed from its counters at most once
//! a second ([`DropReport`]), never where they happen.

use std::time::Instant;

use tracing::Level;

use crate::lograte::{DropKind, DropReport, DROP_CHECK_INTERVAL};
use kite_fw::forwarder::{Counters, DropReason};
use kite_fw::time::Time;

/// The forwarder's drop reasons in [`DropReason::ALL`]'s order, then the output ring's.
const KINDS: usize = DropReason::ALL.len() + 1;

static FWD_DROPS: [DropKind; KINDS] = [
    DropKind {
        reason: "unknown-face",
        level: Level::DEBUG,
        what: "packets dropped: from a face the thread does not know (closing)",
    },
    DropKind {
        reason: "hop-limit-zero",
        level: Level::DEBUG,
        what: "Interests dropped: HopLimit 0",
    },
    DropKind {
        reason: "scope-violation",
        level: Level::INFO,
        what: "packets dropped: /localhost from a non-local face",
    },
    DropKind {
        reason: "loop",
        level: Level::DEBUG,
        what: "Interests dropped: looped (duplicate Nonce)",
    },
    DropKind {
        reason: "table-full",
        level: Level::WARN,
        what: "PIT full: Interests Nacked with Congestion (no PIT, CS or timer room)",
    },
    DropKind {
        reason: "token-mismatch",
        level: Level::INFO,
        what: "Data dropped: its PIT token names an entry of another name (forged or stale)",
    },
    DropKind {
        reason: "unsolicited",
        level: Level::DEBUG,
        what: "Data dropped: unsolicited",
    },
    DropKind {
        reason: "nack-unmatched",
        level: Level::DEBUG,
        what: "Nacks dropped: no matching upstream",
    },
    DropKind {
        reason: "bad-next-hop",
        level: Level::INFO,
        what: "Interests dropped: NextHopFaceId names no face or came from a non-local face",
    },
    DropKind {
        reason: "no-hint-route",
        level: Level::DEBUG,
        what: "Interests Nacked NoRoute: no route for any forwarding hint",
    },
    DropKind {
        reason: "out-ring-full",
        level: Level::WARN,
        what: "packets dropped: the I/O thread's output ring was full",
    },
];

/// A forwarding thread's drop report.
pub(super) struct FwdLog {
    report: DropReport<KINDS>,
    /// The next check, on the thread's own clock (read once per step anyway).
    next: Time,
}

impl FwdLog {
    pub fn new(thread: u8) -> Self {
        FwdLog {
            report: DropReport::new(format!("fwd{thread}"), &FWD_DROPS),
            next: Time::ZERO,
        }
    }

    fn totals(counters: &Counters, out_dropped: u64) -> [u64; KINDS] {
        let mut t = [0; KINDS];
        for (slot, (_, n)) in t.iter_mut().zip(counters.all_drops()) {
            *slot = n;
        }
        t[KINDS - 1] = out_dropped;
        t
    }

    /// Writes the drop lines due, at most once per [`DROP_CHECK_INTERVAL`] of `now`: one
    /// comparison per call otherwise.
    pub fn check(&mut self, counters: &Counters, out_dropped: u64, now: Time) {
        if now < self.next {
            return;
        }
        self.next = now + DROP_CHECK_INTERVAL;
        let totals = Self::totals(counters, out_dropped);
        self.report.report(&totals, Instant::now());
    }

    /// Writes every drop not yet said (the thread is stopping).
    pub fn flush(&mut self, counters: &Counters, out_dropped: u64) {
        let totals = Self::totals(counters, out_dropped);
        self.report.flush(&totals, Instant::now());
    }

    /// Whether drops wait to be reported (so an idle thread wakes once more to say them).
    pub fn owes(&self, counters: &Counters, out_dropped: u64) -> bool {
        self.report.owes(&Self::totals(counters, out_dropped))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kinds_follow_the_forwarders_reasons() {
        for (kind, reason) in FWD_DROPS.iter().zip(DropReason::ALL) {
            assert_eq!(kind.reason, reason.as_str());
        }
    }
}
