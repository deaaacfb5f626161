//! The consumer's window: the Interests outstanding, named `<prefix>/<seq>`, and when to give
//! one up for lost (a dropped UDP datagram would otherwise hold its slot for the whole run).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use bytes::Bytes;
use kite_packet::{Interest, Name, Nonce};

/// InterestLifetime of every Interest, in ms.
const LIFETIME_MS: u64 = 4000;

/// Outstanding Interests by sequence number, with when each was sent.
pub struct Window {
    prefix: Name,
    next: u64,
    outstanding: BTreeMap<u64, Instant>,
    timeout: Duration,
}

impl Window {
    /// An empty window for names under `prefix`; an Interest unanswered for `timeout` is lost.
    pub fn new(prefix: Name, timeout: Duration) -> Self {
        Window {
            prefix,
            next: 0,
            outstanding: BTreeMap::new(),
            timeout,
        }
    }

    /// The next Interest's wire encoding, recorded as sent at `now`.
    pub fn next_interest(&mut self, now: Instant) -> Bytes {
        let seq = self.next;
        self.next += 1;
        self.outstanding.insert(seq, now);
        let mut i = Interest::new(
            self.prefix
                .clone()
                .append_generic(seq.to_string().as_bytes()),
        );
        i.nonce = Some(Nonce::from(seq as u32));
        i.lifetime = Some(LIFETIME_MS);
        i.encode()
    }

    /// Marks the Interest named `name` answered; `true` when it was outstanding (its slot is
    /// free), `false` for a late answer to one already given up, or a foreign name.
    pub fn answered(&mut self, name: &Name) -> bool {
        if name.len() != self.prefix.len() + 1 {
            return false;
        }
        let seq = name
            .last()
            .and_then(|c| std::str::from_utf8(c.value()).ok()?.parse::<u64>().ok());
        seq.is_some_and(|s| self.outstanding.remove(&s).is_some())
    }

    /// Gives up the Interests sent more than the timeout before `now`; returns how many.
    pub fn expire(&mut self, now: Instant) -> usize {
        let mut n = 0;
        while let Some((&seq, &sent)) = self.outstanding.first_key_value() {
            if now.duration_since(sent) < self.timeout {
                break;
            }
            self.outstanding.remove(&seq);
            n += 1;
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name_of(wire: Bytes) -> Name {
        Interest::decode(wire).unwrap().name
    }

    #[test]
    fn an_answer_frees_its_slot_once() {
        let now = Instant::now();
        let mut w = Window::new("/bench/1".parse().unwrap(), Duration::from_secs(1));
        let a = name_of(w.next_interest(now));
        let b = name_of(w.next_interest(now));
        assert_eq!(a.to_string(), "/bench/1/0");
        assert_eq!(w.outstanding.len(), 2);
        assert!(w.answered(&b));
        assert!(!w.answered(&b), "a second answer frees nothing");
        assert!(!w.answered(&"/bench/1/x".parse().unwrap()));
        assert!(!w.answered(&"/bench/1/0/more".parse().unwrap()));
        assert!(w.answered(&a));
        assert_eq!(w.outstanding.len(), 0);
    }

    #[test]
    fn only_interests_older_than_the_timeout_expire() {
        let t0 = Instant::now();
        let timeout = Duration::from_millis(500);
        let mut w = Window::new("/bench/2".parse().unwrap(), timeout);
        let first = name_of(w.next_interest(t0));
        w.next_interest(t0 + Duration::from_millis(100));
        w.next_interest(t0 + Duration::from_millis(200));
        assert_eq!(w.expire(t0 + Duration::from_millis(499)), 0);
        assert_eq!(w.expire(t0 + Duration::from_millis(600)), 2);
        assert_eq!(w.outstanding.len(), 1);
        assert!(!w.answered(&first), "an expired Interest's Data is late");
        assert_eq!(w.expire(t0 + timeout * 2), 1);
    }
}
