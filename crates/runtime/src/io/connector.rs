//! When outgoing TCP connections are dialed and given up, without touching a socket: the
//! I/O thread tells the connector what happened (a connection lost, a dial started, failed or
//! made) and the time, and it answers what to do (dial, give up) and its next deadline. The
//! sockets stay with the faces and the thread; only the scheduling lives here, so that how a
//! face holds its connection can change on its own.

use std::time::{Duration, Instant};

use hashbrown::HashMap;
use kite_face::FaceUri;
use kite_fw::face::FaceId;

/// A TCP face without its connection (lost, or not made yet) that dials its peer again: at
/// `at`, then, while dialing, until `deadline`; after a failed dial it waits `backoff`, which
/// doubles up to the configured most.
#[derive(Debug, Clone, Copy)]
struct Redial {
    at: Instant,
    backoff: Duration,
    deadline: Option<Instant>,
}

/// What a redial that is due asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Due {
    /// Its pause is over: dial the peer (then [`Redials::dialing`] or [`Redials::failed`]).
    Dial(FaceId),
    /// Its dial found no answer within the connect timeout: it failed
    /// ([`Redials::failed`]).
    TimedOut(FaceId),
}

/// What follows a failed dial.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum AfterFailure {
    /// A permanent face dials again after this pause.
    Retry(Duration),
    /// Any other face is given up (its redial forgotten): the caller closes it.
    GiveUp,
}

/// The redials of one I/O thread's TCP faces: their backoff and deadlines. Bounded by the
/// faces (one entry per face, forgotten with it).
pub(super) struct Redials {
    entries: HashMap<FaceId, Redial>,
    /// The earliest entry's deadline (`None` without entries), kept up to date with each
    /// change, so that a turn looks at the entries only when one is due.
    next: Option<Instant>,
    initial: Duration,
    max: Duration,
    connect_timeout: Duration,
}

impl Redials {
    /// Pauses start at `initial` and double up to `max`; a dial is given up after
    /// `connect_timeout`.
    pub fn new(initial: Duration, max: Duration, connect_timeout: Duration) -> Self {
        Redials {
            entries: HashMap::new(),
            next: None,
            initial,
            max,
            connect_timeout,
        }
    }

    /// The pause before a lost connection is dialed again (the first backoff).
    pub fn initial(&self) -> Duration {
        self.initial
    }

    /// Face `id` dials its peer at `at` (a lost face after [`Redials::initial`], a new one at
    /// once), its backoff starting over.
    pub fn schedule(&mut self, id: FaceId, at: Instant) {
        let r = Redial {
            at,
            backoff: self.initial,
            deadline: None,
        };
        self.entries.insert(id, r);
        self.refresh();
    }

    /// Whether no face waits to dial.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Whether face `id` is waiting to dial, or dialing.
    pub fn contains(&self, id: FaceId) -> bool {
        self.entries.contains_key(&id)
    }

    /// When the next redial may be due; `None` without any.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.next
    }

    /// Brings [`Redials::next`] up to date (the entries are one per lost TCP face: few, and
    /// changed only by dial events).
    fn refresh(&mut self) {
        self.next = (self.entries.values())
            .map(|r| r.deadline.unwrap_or(r.at))
            .min();
    }

    /// Adds to `due` the redials due at `now`: each must be answered with
    /// [`Redials::dialing`], [`Redials::failed`] or [`Redials::forget`].
    pub fn take_due(&mut self, now: Instant, due: &mut Vec<Due>) {
        if self.next.is_none_or(|n| now < n) {
            return;
        }
        for (&id, r) in &self.entries {
            if r.deadline.unwrap_or(r.at) > now {
                continue;
            }
            due.push(match r.deadline {
                Some(_) => Due::TimedOut(id),
                None => Due::Dial(id),
            });
        }
    }

    /// Face `id` started dialing at `now`: given up unless it connects within the connect
    /// timeout.
    pub fn dialing(&mut self, id: FaceId, now: Instant) {
        if let Some(r) = self.entries.get_mut(&id) {
            r.deadline = Some(now + self.connect_timeout);
            self.refresh();
        }
    }

    /// Face `id`'s dial failed at `now`: a permanent face waits its backoff (then doubled, up
    /// to the most) and dials again; any other is given up. `None` when `id` was not dialing.
    pub fn failed(&mut self, id: FaceId, now: Instant, permanent: bool) -> Option<AfterFailure> {
        if !permanent {
            self.entries.remove(&id)?;
            self.refresh();
            return Some(AfterFailure::GiveUp);
        }
        let r = self.entries.get_mut(&id)?;
        let wait = r.backoff;
        r.at = now + wait;
        r.deadline = None;
        r.backoff = (wait * 2).min(self.max);
        self.refresh();
        Some(AfterFailure::Retry(wait))
    }

    /// Face `id` connected: it no longer dials.
    pub fn connected(&mut self, id: FaceId) {
        self.forget(id);
    }

    /// Face `id` is gone (closed, or not here): its redial goes with it.
    pub fn forget(&mut self, id: FaceId) {
        if self.entries.remove(&id).is_some() {
            self.refresh();
        }
    }
}

/// Why a new outgoing connection is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Refused {
    /// One to the same remote is on its way.
    OnItsWay,
    /// As many as allowed are on their way.
    TooMany(usize),
}

/// An outgoing connection on its way, and what it is for (`T`: the socket and its request,
/// to the I/O thread).
struct Pending<T> {
    remote: FaceUri,
    deadline: Instant,
    conn: T,
}

/// The outgoing connections `faces/create` started, by the id their face will get (their
/// poll token), each given up at its deadline.
pub(super) struct Connects<T> {
    entries: HashMap<FaceId, Pending<T>>,
    limit: usize,
    timeout: Duration,
}

impl<T> Connects<T> {
    /// At most `limit` at once, each given up after `timeout`.
    pub fn new(limit: usize, timeout: Duration) -> Self {
        Connects {
            entries: HashMap::new(),
            limit,
            timeout,
        }
    }

    /// Whether a connection to `remote` may start.
    pub fn admit(&self, remote: &FaceUri) -> Result<(), Refused> {
        if self.entries.values().any(|p| p.remote == *remote) {
            return Err(Refused::OnItsWay);
        }
        if self.entries.len() >= self.limit {
            return Err(Refused::TooMany(self.limit));
        }
        Ok(())
    }

    /// Connection `conn` to `remote`, for face `id`, started at `now`.
    pub fn start(&mut self, id: FaceId, remote: FaceUri, conn: T, now: Instant) {
        let deadline = now + self.timeout;
        let p = Pending {
            remote,
            deadline,
            conn,
        };
        self.entries.insert(id, p);
    }

    /// Whether face `id`'s connection is on its way.
    pub fn contains(&self, id: FaceId) -> bool {
        self.entries.contains_key(&id)
    }

    /// Whether none is on its way.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Face `id`'s connection on its way.
    pub fn get_mut(&mut self, id: FaceId) -> Option<&mut T> {
        self.entries.get_mut(&id).map(|p| &mut p.conn)
    }

    /// Face `id`'s connection is done (made or failed): no longer waited for.
    pub fn finish(&mut self, id: FaceId) -> Option<(FaceUri, T)> {
        self.entries.remove(&id).map(|p| (p.remote, p.conn))
    }

    /// The earliest deadline; `None` without any connection on its way.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.entries.values().map(|p| p.deadline).min()
    }

    /// Takes out the connections whose time ran out at `now`, calling `give_up` with each.
    pub fn expire(&mut self, now: Instant, mut give_up: impl FnMut(FaceUri, T)) {
        if self.next_deadline().is_none_or(|d| d > now) {
            return;
        }
        for (_, p) in self.entries.extract_if(|_, p| p.deadline <= now) {
            give_up(p.remote, p.conn);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Duration = Duration::from_secs(1);
    const TIMEOUT: Duration = Duration::from_secs(3);

    fn redials() -> Redials {
        Redials::new(S, 8 * S, TIMEOUT)
    }

    fn due(r: &mut Redials, now: Instant) -> Vec<Due> {
        let mut d = Vec::new();
        r.take_due(now, &mut d);
        d
    }

    #[test]
    fn a_lost_face_dials_after_the_first_pause_then_backs_off_doubling_to_the_most() {
        let t0 = Instant::now();
        let mut r = redials();
        let id = FaceId(300);
        r.schedule(id, t0 + r.initial());
        assert_eq!(r.next_deadline(), Some(t0 + S));
        assert!(
            due(&mut r, t0).is_empty(),
            "nothing before the first pause ends"
        );
        let mut now = t0 + S;
        let mut waits = Vec::new();
        for _ in 0..6 {
            assert_eq!(due(&mut r, now), vec![Due::Dial(id)]);
            r.dialing(id, now);
            assert_eq!(r.next_deadline(), Some(now + TIMEOUT));
            let Some(AfterFailure::Retry(wait)) = r.failed(id, now, true) else {
                panic!("a permanent face is never given up");
            };
            waits.push(wait);
            assert_eq!(r.next_deadline(), Some(now + wait));
            assert!(
                due(&mut r, now).is_empty(),
                "not due again within its pause"
            );
            now += wait;
        }
        assert_eq!(waits, [S, 2 * S, 4 * S, 8 * S, 8 * S, 8 * S]);
    }

    #[test]
    fn a_dial_without_answer_times_out_at_the_connect_timeout() {
        let t0 = Instant::now();
        let mut r = redials();
        let id = FaceId(300);
        r.schedule(id, t0);
        assert_eq!(due(&mut r, t0), vec![Due::Dial(id)]);
        r.dialing(id, t0);
        assert!(due(&mut r, t0 + TIMEOUT - Duration::from_millis(1)).is_empty());
        assert_eq!(due(&mut r, t0 + TIMEOUT), vec![Due::TimedOut(id)]);
    }

    #[test]
    fn a_face_that_is_not_permanent_is_given_up_at_its_first_failure() {
        let t0 = Instant::now();
        let mut r = redials();
        let id = FaceId(300);
        r.schedule(id, t0);
        r.dialing(id, t0);
        assert_eq!(r.failed(id, t0, false), Some(AfterFailure::GiveUp));
        assert!(!r.contains(id) && r.is_empty());
        assert_eq!(r.next_deadline(), None);
        assert_eq!(r.failed(id, t0, true), None, "forgotten");
    }

    #[test]
    fn a_face_that_connected_or_closed_dials_no_more() {
        let t0 = Instant::now();
        let mut r = redials();
        let (a, b) = (FaceId(300), FaceId(301));
        r.schedule(a, t0);
        r.schedule(b, t0);
        r.connected(a);
        r.forget(b);
        assert!(due(&mut r, t0 + 100 * S).is_empty());
        assert_eq!(r.next_deadline(), None);
    }

    #[test]
    fn a_new_loss_starts_the_backoff_over() {
        let t0 = Instant::now();
        let mut r = redials();
        let id = FaceId(300);
        r.schedule(id, t0);
        for _ in 0..3 {
            r.failed(id, t0, true);
        }
        r.schedule(id, t0);
        assert_eq!(r.failed(id, t0, true), Some(AfterFailure::Retry(S)));
    }

    #[test]
    fn the_next_deadline_is_the_earliest_of_the_faces_left() {
        let t0 = Instant::now();
        let mut r = redials();
        let (a, b) = (FaceId(300), FaceId(301));
        r.schedule(a, t0);
        r.schedule(b, t0 + 5 * S);
        assert_eq!(due(&mut r, t0), vec![Due::Dial(a)]);
        assert_eq!(r.next_deadline(), Some(t0), "a is due until answered");
        r.dialing(a, t0);
        assert_eq!(
            r.next_deadline(),
            Some(t0 + TIMEOUT),
            "a's dial times out first"
        );
        r.connected(a);
        assert_eq!(r.next_deadline(), Some(t0 + 5 * S), "only b is left");
    }

    fn tcp(port: u16) -> FaceUri {
        FaceUri::Tcp(([192, 0, 2, 1], port).into())
    }

    #[test]
    fn connects_refuse_a_second_to_the_same_remote_and_beyond_their_limit() {
        let t0 = Instant::now();
        let mut c = Connects::new(2, TIMEOUT);
        c.start(FaceId(300), tcp(1), 'a', t0);
        assert_eq!(c.admit(&tcp(1)), Err(Refused::OnItsWay));
        assert_eq!(c.admit(&tcp(2)), Ok(()));
        c.start(FaceId(301), tcp(2), 'b', t0);
        assert_eq!(c.admit(&tcp(3)), Err(Refused::TooMany(2)));
        assert_eq!(c.finish(FaceId(300)), Some((tcp(1), 'a')));
        assert_eq!(c.admit(&tcp(1)), Ok(()), "the first is done");
    }

    #[test]
    fn connects_are_given_up_at_their_deadline_and_only_then() {
        let t0 = Instant::now();
        let mut c = Connects::new(8, TIMEOUT);
        c.start(FaceId(300), tcp(1), 'a', t0);
        c.start(FaceId(301), tcp(2), 'b', t0 + S);
        assert_eq!(c.next_deadline(), Some(t0 + TIMEOUT));
        let mut given_up = Vec::new();
        c.expire(t0 + TIMEOUT - Duration::from_millis(1), |r, t| {
            given_up.push((r, t))
        });
        assert!(given_up.is_empty());
        c.expire(t0 + TIMEOUT, |r, t| given_up.push((r, t)));
        assert_eq!(given_up, [(tcp(1), 'a')]);
        assert!(!c.contains(FaceId(300)) && c.contains(FaceId(301)));
        assert_eq!(c.next_deadline(), Some(t0 + S + TIMEOUT));
        c.expire(t0 + 10 * S, |r, t| given_up.push((r, t)));
        assert!(c.is_empty());
        assert_eq!(c.next_deadline(), None);
    }
}
