//! The consumer's window: the Interests outstanding, named `<prefix>/<seq>`, and when to give
//! one up for lost (a dropped UDP datagram would otherwise hold its slot for the whole run).
//! The timeout follows the measured round-trip time as TCP's does (RFC 6298: smoothed RTT
//! plus four deviations), so a loss costs its slot a few RTTs rather than a fixed wait that
//! would shrink the effective window whenever a socket buffer overflows.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use bytes::Bytes;
use kite_link::rtt::{RttConfig, RttEstimator, Smoothing};
use kite_packet::{Interest, Name, Nonce};

/// InterestLifetime of every Interest, in ms.
const LIFETIME_MS: u64 = 4000;

/// Bounds of the loss timeout.
const MIN_TIMEOUT: Duration = Duration::from_millis(20);
const MAX_TIMEOUT: Duration = Duration::from_secs(1);

/// The loss timeout: RFC 6298's RTO, the longest until an answer came, never backed off.
const RTT: RttConfig = RttConfig {
    initial: MAX_TIMEOUT,
    min: MIN_TIMEOUT,
    max: MAX_TIMEOUT,
    granularity: Duration::ZERO,
    smoothing: Smoothing::PerTerm,
};

/// Interests in the order sent (so by sequence number), each with when it was sent until it
/// is answered or given up: finding one by its number is an index, the oldest is the front.
pub struct Window {
    prefix: Name,
    /// Sequence number of `sent[0]`.
    base: u64,
    sent: VecDeque<Option<Instant>>,
    /// Smoothed RTT and its mean deviation, from the answers.
    rtt: RttEstimator,
}

impl Window {
    /// An empty window for names under `prefix`.
    pub fn new(prefix: Name) -> Self {
        Window {
            prefix,
            base: 0,
            sent: VecDeque::new(),
            rtt: RttEstimator::new(RTT),
        }
    }

    /// How long an Interest may go unanswered before it counts as lost: the smoothed RTT
    /// plus four deviations, within 20 ms and 1 s (1 s before any answer).
    pub fn timeout(&self) -> Duration {
        self.rtt.rto()
    }

    /// The next Interest's wire encoding, recorded as sent at `now`.
    pub fn next_interest(&mut self, now: Instant) -> Bytes {
        let seq = self.base + self.sent.len() as u64;
        self.sent.push_back(Some(now));
        let mut i = Interest::new(
            self.prefix
                .clone()
                .append_generic(seq.to_string().as_bytes()),
        );
        i.nonce = Some(Nonce::from(seq as u32));
        i.lifetime = Some(LIFETIME_MS);
        i.encode()
    }

    /// Marks the Interest named `name` answered at `now`; `true` when it was outstanding (its
    /// slot is free), `false` for a late answer to one already given up, or a foreign name.
    pub fn answered(&mut self, name: &Name, now: Instant) -> bool {
        if name.len() != self.prefix.len() + 1 {
            return false;
        }
        let seq = name
            .last()
            .and_then(|c| std::str::from_utf8(c.value()).ok()?.parse::<u64>().ok());
        let slot = seq
            .and_then(|s| s.checked_sub(self.base))
            .and_then(|i| self.sent.get_mut(usize::try_from(i).ok()?));
        let Some(sent) = slot.and_then(Option::take) else {
            return false;
        };
        self.drop_settled();
        self.rtt.add_sample(now.saturating_duration_since(sent));
        true
    }

    /// Gives up the Interests sent more than [`Window::timeout`] before `now`; returns how
    /// many.
    pub fn expire(&mut self, now: Instant) -> usize {
        let timeout = self.timeout();
        let mut n = 0;
        while let Some(&Some(sent)) = self.sent.front() {
            if now.saturating_duration_since(sent) < timeout {
                break;
            }
            self.sent.pop_front();
            self.base += 1;
            n += 1;
            self.drop_settled();
        }
        n
    }

    /// Forgets the answered Interests at the front, so the front is the oldest outstanding.
    fn drop_settled(&mut self) {
        while let Some(None) = self.sent.front() {
            self.sent.pop_front();
            self.base += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name_of(wire: Bytes) -> Name {
        Interest::decode(wire).unwrap().name
    }

    fn outstanding(w: &Window) -> usize {
        w.sent.iter().flatten().count()
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn an_answer_frees_its_slot_once() {
        let now = Instant::now();
        let mut w = Window::new("/bench/1".parse().unwrap());
        let a = name_of(w.next_interest(now));
        let b = name_of(w.next_interest(now));
        assert_eq!(a.to_string(), "/bench/1/0");
        assert_eq!(outstanding(&w), 2);
        assert!(w.answered(&b, now));
        assert!(!w.answered(&b, now), "a second answer frees nothing");
        assert!(!w.answered(&"/bench/1/x".parse().unwrap(), now));
        assert!(!w.answered(&"/bench/1/0/more".parse().unwrap(), now));
        assert!(w.answered(&a, now));
        assert_eq!(outstanding(&w), 0);
    }

    #[test]
    fn the_timeout_follows_the_round_trip_time() {
        let t0 = Instant::now();
        let mut w = Window::new("/bench/2".parse().unwrap());
        assert_eq!(w.timeout(), MAX_TIMEOUT, "no RTT measured yet");
        for i in 0..50 {
            let sent = t0 + ms(i * 10);
            let name = name_of(w.next_interest(sent));
            assert!(w.answered(&name, sent + ms(40)));
        }
        // A steady 40 ms RTT: the deviation decays, the timeout nears the RTT.
        assert!(
            w.timeout() >= ms(40) && w.timeout() < ms(45),
            "{:?}",
            w.timeout()
        );
        for _ in 0..50 {
            let name = name_of(w.next_interest(t0));
            assert!(w.answered(&name, t0 + ms(1)));
        }
        assert_eq!(w.timeout(), MIN_TIMEOUT, "1 ms answers: the floor");
    }

    #[test]
    fn only_interests_older_than_the_timeout_expire() {
        let t0 = Instant::now();
        let mut w = Window::new("/bench/3".parse().unwrap());
        let first = name_of(w.next_interest(t0));
        w.next_interest(t0 + ms(100));
        w.next_interest(t0 + ms(200));
        assert_eq!(w.expire(t0 + ms(999)), 0);
        assert_eq!(w.expire(t0 + ms(1100)), 2);
        assert_eq!(outstanding(&w), 1);
        assert!(
            !w.answered(&first, t0 + ms(1100)),
            "an expired Interest's Data is late"
        );
        assert_eq!(w.expire(t0 + ms(1200)), 1);
    }

    #[test]
    fn expiry_passes_over_answered_interests() {
        let t0 = Instant::now();
        let mut w = Window::new("/bench/4".parse().unwrap());
        w.next_interest(t0);
        let b = name_of(w.next_interest(t0));
        let c = name_of(w.next_interest(t0 + ms(500)));
        assert!(w.answered(&b, t0 + ms(100)));
        assert_eq!(
            w.timeout(),
            ms(300),
            "one 100 ms sample: SRTT 100, RTTVAR 50"
        );
        assert_eq!(
            w.expire(t0 + ms(400)),
            1,
            "the first, not the answered second"
        );
        assert_eq!(outstanding(&w), 1);
        assert!(w.answered(&c, t0 + ms(600)));
        assert!(w.sent.is_empty());
    }
}
