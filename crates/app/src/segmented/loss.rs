//! Loss detection ahead of the retransmission timer, after RACK-TLP (RFC 8985): an
//! unanswered Interest counts as lost once an Interest sent after it has been answered and
//! it has waited that one's round trip plus a reordering window; in the tail of a fetch,
//! where nothing is sent after the last Interests, one unanswered for two smoothed RTTs
//! while answers to others still came after it was sent is probed (sent again).
//!
//! Unlike TCP's, an NDN path is not first in, first out: a later segment may come from a
//! cache nearer than an earlier one's source. So neither waits less than the RTT bound
//! the samples give (SRTT + 4 × RTTVAR, RFC 6298's timer before its floor), which RTTs
//! that differ by segment widen. A path that
//! answers nothing gets neither: its Interests wait for the retransmission timer, which
//! backs off.
//!
//! On a fast path the retransmission timer's floor (100 ms) is hundreds of round trips: a
//! lost segment waiting for it stalls the in-order output and, at the tail, the whole fetch.
//!
//! A retransmission must also get past the forwarders. NFD and Kite hold back a
//! retransmitted Interest (same name, new nonce) that reaches them within the PIT entry's
//! suppression interval of the last one forwarded: 10 ms, doubling with each forwarded
//! retransmission (NFD's RetxSuppressionExponential defaults). One sent sooner is dropped
//! and the segment waits for its timer after all, so a segment is never declared lost, nor
//! its timer fires, before [`suppression_wait`] has passed since it was last sent.

use std::time::{Duration, Instant};

use super::rto::{self, RttEstimator};

/// The forwarders' first retransmission suppression interval (NFD's default).
pub const RETX_SUPPRESSION_INITIAL: Duration = Duration::from_millis(10);

/// The forwarders' longest retransmission suppression interval (NFD's default).
pub const RETX_SUPPRESSION_MAX: Duration = Duration::from_millis(250);

/// The smallest reordering window: what a burst spread over several forwarding threads
/// may reorder by.
const MIN_REORDERING_WINDOW: Duration = Duration::from_millis(1);

/// How long after sending an Interest that has been sent `retries` times before a new
/// transmission gets past the forwarders' retransmission suppression: the suppression
/// interval it meets, plus a quarter for the jitter between the consumer and each hop.
pub fn suppression_wait(retries: u32) -> Duration {
    let interval = RETX_SUPPRESSION_INITIAL
        .saturating_mul(1 << retries.min(16))
        .min(RETX_SUPPRESSION_MAX);
    interval + interval / 4
}

/// Why an Interest counts as lost before its timer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lost {
    /// An Interest sent after it was answered (RACK): a loss, a congestion signal.
    Overtaken,
    /// The fetch sends nothing new, others were answered since it was sent, and it is
    /// overdue (a tail loss probe): not a congestion signal on its own.
    Probe,
}

/// What the answers so far say about when an unanswered Interest is lost.
#[derive(Debug, Clone, Default)]
pub struct LossDetector {
    /// The send time of the most recently sent Interest answered so far, and its RTT.
    latest: Option<(Instant, Duration)>,
    /// The smallest RTT seen.
    min_rtt: Option<Duration>,
    /// When the last answer arrived.
    last_answer: Option<Instant>,
}

impl LossDetector {
    /// Notes an answer (a Data) to an Interest sent at `sent_at`, after `rtt`; `retried`: that
    /// Interest was a retransmission.
    ///
    /// An answer to a retransmission says the path answers (for the tail probe), but not that
    /// it overtook anything: a forwarder that still has the segment's PIT entry answers the
    /// retransmission with the Data of the first transmission, which waited in the same
    /// queues as the Interests sent before the retransmission. Counted as overtaking, one
    /// spurious timeout under a standing queue declared the rest of the window lost (RFC
    /// 8985 likewise ignores an ACK that may be for the original transmission).
    pub fn on_answer(&mut self, sent_at: Instant, rtt: Duration, retried: bool) {
        let arrived = sent_at + rtt;
        self.last_answer = Some(self.last_answer.map_or(arrived, |a| a.max(arrived)));
        if retried {
            return;
        }
        self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
        if self.latest.is_none_or(|(latest, _)| sent_at > latest) {
            self.latest = Some((sent_at, rtt));
        }
    }

    /// RACK's reordering window: a quarter of the smallest RTT, at least
    /// [`MIN_REORDERING_WINDOW`].
    fn reordering_window(&self) -> Duration {
        self.min_rtt
            .map_or(MIN_REORDERING_WINDOW, |m| m / 4)
            .max(MIN_REORDERING_WINDOW)
    }

    /// What the answers so far say about every unanswered Interest, computed once for a pass
    /// over them: `tail`, the fetch has nothing new to send; `rtt`, the RTT estimator.
    pub fn scan(&self, tail: bool, rtt: &RttEstimator) -> LossScan {
        LossScan {
            latest: self.latest,
            last_answer: tail.then_some(self.last_answer).flatten(),
            bound: rto::rtt_bound(rtt),
            srtt: rto::srtt(rtt),
            reo: self.reordering_window(),
        }
    }
}

/// [`LossDetector`]'s verdicts for one pass over the unanswered Interests, with what they
/// share (the RTT bound, the reordering window) computed once.
#[derive(Debug, Clone, Copy)]
pub struct LossScan {
    latest: Option<(Instant, Duration)>,
    /// When the last answer arrived, in the tail of a fetch only.
    last_answer: Option<Instant>,
    bound: Duration,
    srtt: Duration,
    reo: Duration,
}

impl LossScan {
    /// The RTT of the answered Interest that overtook one sent at `sent_at`: one sent more
    /// than a reordering window after it (RACK).
    #[inline]
    fn overtaken(&self, sent_at: Instant) -> Option<Duration> {
        self.latest
            .filter(|&(latest, _)| latest > sent_at + self.reo)
            .map(|(_, rtt)| rtt)
    }

    /// Whether one sent at `sent_at` is in the tail and was followed by an answer (TLP).
    #[inline]
    fn probed(&self, sent_at: Instant) -> bool {
        self.last_answer.is_some_and(|a| a > sent_at)
    }

    /// Whether an Interest sent at `sent_at` can count as lost before its timer at all. False
    /// for one sent at `sent_at` means false for every one sent later, so a pass oldest first
    /// stops there.
    #[inline]
    pub fn may_lose(&self, sent_at: Instant) -> bool {
        self.overtaken(sent_at).is_some() || self.probed(sent_at)
    }

    /// When an Interest sent at `sent_at` after `retries` earlier transmissions, still
    /// unanswered, counts as lost, and why; `None` while nothing says it will.
    pub fn lost_at(&self, sent_at: Instant, retries: u32) -> Option<(Instant, Lost)> {
        let earliest = sent_at + suppression_wait(retries).max(self.bound);
        if let Some(latest_rtt) = self.overtaken(sent_at) {
            Some((
                (sent_at + latest_rtt + self.reo).max(earliest),
                Lost::Overtaken,
            ))
        } else if self.probed(sent_at) {
            Some(((sent_at + self.srtt * 2).max(earliest), Lost::Probe))
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    /// An estimator whose SRTT is `srtt`, with no variation.
    fn steady(srtt: Duration) -> RttEstimator {
        let mut e = rto::estimator(Duration::from_secs(1), MS, Duration::from_secs(60));
        for _ in 0..100 {
            e.add_sample(srtt);
        }
        e
    }

    #[test]
    fn suppression_wait_follows_the_forwarders_intervals() {
        assert_eq!(suppression_wait(0), Duration::from_micros(12_500));
        assert_eq!(suppression_wait(1), 25 * MS);
        assert_eq!(suppression_wait(4), 200 * MS);
        assert_eq!(
            suppression_wait(5),
            250 * MS + 250 * MS / 4,
            "capped at 250 ms"
        );
        assert_eq!(suppression_wait(u32::MAX), suppression_wait(5));
    }

    #[test]
    fn nothing_is_lost_before_a_later_interest_is_answered() {
        let t0 = Instant::now();
        let d = LossDetector::default();
        assert_eq!(d.scan(false, &steady(MS)).lost_at(t0, 0), None);
        let mut d = LossDetector::default();
        // Answered: one sent at the same time (inside the reordering window).
        d.on_answer(t0 + MS / 2, MS, false);
        assert_eq!(d.scan(false, &steady(MS)).lost_at(t0, 0), None);
    }

    #[test]
    fn overtaken_interest_is_lost_after_the_later_rtt_and_the_suppression_wait() {
        let t0 = Instant::now();
        let mut d = LossDetector::default();
        d.on_answer(t0 + 5 * MS, 4 * MS, false);
        d.on_answer(t0 + 6 * MS, 40 * MS, false);
        // Sent 6 ms before one answered after 40 ms (and a reordering window of 1 ms, a
        // quarter of the smallest RTT): lost 40 ms + 1 ms after it was sent.
        assert_eq!(
            d.scan(false, &steady(MS)).lost_at(t0, 0),
            Some((t0 + 41 * MS, Lost::Overtaken))
        );
        let mut d = LossDetector::default();
        d.on_answer(t0 + 5 * MS, MS, false);
        // A fast path: the forwarders' suppression interval decides.
        assert_eq!(
            d.scan(false, &steady(MS)).lost_at(t0, 0),
            Some((t0 + suppression_wait(0), Lost::Overtaken))
        );
        assert_eq!(
            d.scan(false, &steady(MS)).lost_at(t0, 2),
            Some((t0 + suppression_wait(2), Lost::Overtaken))
        );
    }

    #[test]
    fn an_answer_to_a_retransmission_overtakes_nothing_but_keeps_the_tail_probe() {
        // Interests sent at t0 wait in a queue; one of them timed out and went again at
        // t0 + 100 ms, and a forwarder answered it at once with the Data of its first
        // transmission: that says nothing about the others, still queued.
        let t0 = Instant::now();
        let mut d = LossDetector::default();
        d.on_answer(t0 - 10 * MS, MS, false);
        d.on_answer(t0 + 100 * MS, MS, true);
        assert_eq!(d.scan(false, &steady(MS)).lost_at(t0, 0), None);
        assert!(!d.scan(false, &steady(MS)).may_lose(t0));
        // In the tail it still shows the path answers.
        assert_eq!(
            d.scan(true, &steady(MS)).lost_at(t0, 0),
            Some((t0 + suppression_wait(0), Lost::Probe))
        );
        // A first transmission sent after them, answered, does overtake them.
        d.on_answer(t0 + 101 * MS, MS, false);
        assert_eq!(
            d.scan(false, &steady(MS)).lost_at(t0, 0),
            Some((t0 + suppression_wait(0), Lost::Overtaken))
        );
    }

    #[test]
    fn reordering_window_grows_with_the_smallest_rtt() {
        let t0 = Instant::now();
        let mut d = LossDetector::default();
        d.on_answer(t0, 40 * MS, false);
        // min RTT 40 ms: a window of 10 ms, so an answer sent 8 ms later proves nothing.
        d.on_answer(t0 + 8 * MS, 40 * MS, false);
        assert_eq!(d.scan(false, &steady(MS)).lost_at(t0, 0), None);
        d.on_answer(t0 + 11 * MS, 40 * MS, false);
        assert_eq!(
            d.scan(false, &steady(MS)).lost_at(t0, 0),
            Some((t0 + 50 * MS, Lost::Overtaken))
        );
    }

    #[test]
    fn rtts_that_differ_by_segment_widen_the_wait() {
        // Later segments from a cache next door (0.1 ms), earlier ones from far (50 ms): an
        // earlier one is not lost when a later one comes back first.
        let t0 = Instant::now();
        let mut e = steady(MS / 10);
        for i in 0..10 {
            e.add_sample(if i % 2 == 0 { 50 * MS } else { MS / 10 });
        }
        let mut d = LossDetector::default();
        d.on_answer(t0 + 2 * MS, MS / 10, false);
        let (at, why) = d.scan(false, &e).lost_at(t0, 0).unwrap();
        assert_eq!(why, Lost::Overtaken);
        assert!(at >= t0 + 50 * MS, "lost after {:?}", at - t0);
        assert_eq!(at, t0 + rto::rtt_bound(&e));
    }

    #[test]
    fn tail_interest_is_probed_after_two_srtt_while_others_are_answered() {
        let t0 = Instant::now();
        let mut d = LossDetector::default();
        assert_eq!(
            d.scan(true, &steady(30 * MS)).lost_at(t0, 0),
            None,
            "nothing answered"
        );
        // Sent before t0, answered after it.
        d.on_answer(t0 - 3 * MS, 4 * MS, false);
        assert_eq!(
            d.scan(false, &steady(30 * MS)).lost_at(t0, 0),
            None,
            "not in the tail"
        );
        assert_eq!(
            d.scan(true, &steady(30 * MS)).lost_at(t0, 0),
            Some((t0 + 60 * MS, Lost::Probe))
        );
        assert_eq!(
            d.scan(true, &steady(MS)).lost_at(t0, 0),
            Some((t0 + suppression_wait(0), Lost::Probe))
        );
        // Sent after the last answer (a dead path, or a probe already sent): no probe.
        assert_eq!(d.scan(true, &steady(MS)).lost_at(t0 + 2 * MS, 1), None);
    }

    #[test]
    fn a_pass_oldest_first_stops_at_the_first_interest_that_cannot_be_lost() {
        let t0 = Instant::now();
        let mut d = LossDetector::default();
        d.on_answer(t0 + 20 * MS, 4 * MS, false);
        for tail in [false, true] {
            let scan = d.scan(tail, &steady(4 * MS));
            let verdicts: Vec<bool> = (0..40).map(|i| scan.may_lose(t0 + i * MS)).collect();
            for (i, &may) in verdicts.iter().enumerate() {
                let sent = t0 + i as u32 * MS;
                assert_eq!(
                    may,
                    scan.lost_at(sent, 0).is_some(),
                    "tail {tail}, sent {i} ms"
                );
            }
            let first_not = verdicts
                .iter()
                .position(|&m| !m)
                .expect("later ones cannot");
            assert!(first_not > 0, "tail {tail}: older ones can");
            assert!(
                verdicts[first_not..].iter().all(|&m| !m),
                "tail {tail}: none after the first that cannot"
            );
        }
    }
}
