//! The I/O side of the TCP redials the [`Redials`](super::connector::Redials) schedule: a
//! face losing its connection, dialing, and connecting again.

use std::time::Instant;

use kite_fw::face::FaceId;
use kite_link::Persistency;
use mio::Token;

use super::commands::status;
use super::connector::{AfterFailure, Due};
use super::IoThread;
use crate::iolog::CloseReason;
use crate::FaceEvent;

impl IoThread {
    /// A face's socket failed or its peer closed: a permanent TCP face keeps its id and
    /// routes and dials its peer again; another permanent face stays as it is; any other face
    /// is closed, for `why`.
    pub(super) fn transport_failed(&mut self, id: FaceId, why: CloseReason, now: Instant) {
        let Some(face) = self.table.get_mut(id) else {
            return;
        };
        if face.persistency() != Persistency::Permanent {
            self.close_face(id, why, now);
            return;
        }
        if face.lose_connection(self.poll.registry()) {
            let backoff = self.redials.initial();
            tracing::warn!(face = id.0, remote = %face.remote_uri(), "connection lost; dialing again in {backoff:?}");
            let _ = self.face_events.send(FaceEvent::Down(status(face)));
            self.redials.schedule(id, now + backoff);
        }
    }

    /// Dials the lost faces whose pause is over, and gives up the dials that took longer than
    /// `kite_face::tcp::CONNECT_TIMEOUT`.
    pub(super) fn run_redials(&mut self, now: Instant) {
        let mut due = core::mem::take(&mut self.due);
        self.redials.take_due(now, &mut due);
        for &d in &due {
            let id = match d {
                Due::Dial(id) | Due::TimedOut(id) => id,
            };
            let Some(face) = self.table.get_mut(id) else {
                self.redials.forget(id);
                continue;
            };
            if let Due::TimedOut(_) = d {
                let t = kite_face::tcp::CONNECT_TIMEOUT;
                self.redial_failed(id, now, &format!("no answer within {t:?}"));
                continue;
            }
            match face.redial(self.poll.registry(), Token(id.0 as usize)) {
                Ok(()) => {
                    tracing::debug!(face = id.0, remote = %face.remote_uri(), "dialing");
                    self.redials.dialing(id, now);
                }
                Err(e) => self.redial_failed(id, now, &e.to_string()),
            }
        }
        due.clear();
        self.due = due;
    }

    /// After an event on a face that is dialing again: once connected, it is up (announced,
    /// and the event goes on to its reads and writes: `true`); once the dial failed, it waits
    /// for the next.
    pub(super) fn redial_progress(&mut self, id: FaceId, now: Instant) -> bool {
        let Some(face) = self.table.get_mut(id) else {
            return false;
        };
        match face.redial_progress() {
            Ok(false) => false,
            Ok(true) => {
                self.redials.connected(id);
                tracing::info!(face = id.0, remote = %face.remote_uri(), local = %face.local_uri(), "connected");
                let _ = self.face_events.send(FaceEvent::Up(status(face)));
                true
            }
            Err(e) => {
                self.redial_failed(id, now, &e.to_string());
                false
            }
        }
    }

    /// A dial failed: the face drops its connection; a permanent face dials again after its
    /// backoff, any other is destroyed.
    fn redial_failed(&mut self, id: FaceId, now: Instant, why: &str) {
        let Some(face) = self.table.get_mut(id) else {
            self.redials.forget(id);
            return;
        };
        face.lose_connection(self.poll.registry());
        let permanent = face.persistency() == Persistency::Permanent;
        match self.redials.failed(id, now, permanent) {
            Some(AfterFailure::Retry(wait)) => {
                tracing::info!(face = id.0, remote = %face.remote_uri(), error = why, "connect failed; dialing again in {wait:?}");
            }
            Some(AfterFailure::GiveUp) | None if !permanent => {
                self.close_face(
                    id,
                    CloseReason::Error(format!("connect failed: {why}")),
                    now,
                );
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use kite_face::tcp::CONNECT_TIMEOUT;
    use kite_face::testing::DialOutcome;

    use super::*;
    use crate::io::testing::{harness, harness_with, interest, stream};
    use crate::RuntimeConfig;

    const S: Duration = Duration::from_secs(1);

    #[test]
    fn a_permanent_face_whose_dials_fail_backs_off_doubling_until_one_connects() {
        let mut config = RuntimeConfig::default();
        (config.face.redial_initial, config.face.redial_max) = (S, 4 * S);
        let mut h = harness_with(config);
        let t0 = Instant::now();
        let t = stream(7000).persistency(Persistency::Permanent);
        let (id, peer) = h.unconnected(t, t0);
        for outcome in [
            DialOutcome::Unreachable,
            DialOutcome::Refused,
            DialOutcome::NoAnswer,
            DialOutcome::Connects,
        ] {
            peer.answer_dial(outcome);
        }
        let next = |h: &crate::io::testing::Harness| h.thread.redials.next_deadline();
        assert_eq!(next(&h), Some(t0), "its first dial is due at once");
        // Unreachable at once: the first pause.
        h.thread.run_redials(t0);
        assert_eq!((peer.dials(), next(&h)), (1, Some(t0 + S)));
        let t1 = t0 + S;
        h.thread.run_redials(t1 - Duration::from_millis(1));
        assert_eq!(peer.dials(), 1, "not before its pause is over");
        // Refused once the poll reports the dial: twice the pause.
        h.thread.run_redials(t1);
        assert!(h.thread.table.get(id).unwrap().is_redialing());
        assert_eq!(
            next(&h),
            Some(t1 + CONNECT_TIMEOUT),
            "given up unless it connects"
        );
        h.poll_and_read(t1);
        assert!(!h.thread.table.get(id).unwrap().is_redialing());
        assert_eq!(next(&h), Some(t1 + 2 * S));
        // No answer: given up at the connect timeout, then four times the pause (the most).
        let t2 = t1 + 2 * S;
        h.thread.run_redials(t2);
        h.poll_and_read(t2);
        assert!(
            h.thread.table.get(id).unwrap().is_redialing(),
            "still dialing"
        );
        let t3 = t2 + CONNECT_TIMEOUT;
        h.thread.run_redials(t3);
        assert_eq!(next(&h), Some(t3 + 4 * S));
        // Connected: up again, announced, and read.
        let t4 = t3 + 4 * S;
        h.thread.run_redials(t4);
        let _ = h.take_events();
        h.poll_and_read(t4);
        assert!(matches!(&h.take_events()[..], [FaceEvent::Up(e)] if e.id == id && e.up));
        assert!(h.thread.redials.is_empty());
        assert_eq!((peer.dials(), peer.connections()), (4, 1));
        peer.arrive(interest("/a"));
        h.readable(id, t4);
        assert_eq!(h.dispatched_interests(), ["/a"]);
        assert_eq!(h.list(t4), [id], "the same face all along");
    }

    #[test]
    fn a_face_that_is_not_permanent_is_given_up_when_its_dial_fails() {
        let mut h = harness();
        let t0 = Instant::now();
        let (refused, peer) = h.unconnected(stream(7000), t0);
        peer.answer_dial(DialOutcome::Refused);
        let (unreachable, peer) = h.unconnected(stream(7001), t0);
        peer.answer_dial(DialOutcome::Unreachable);
        let _ = h.take_events();
        h.thread.run_redials(t0);
        h.poll_and_read(t0);
        let mut destroyed: Vec<FaceId> = (h.take_events().into_iter())
            .map(|e| match e {
                FaceEvent::Destroyed(s) => s.id,
                other => panic!("only destroyed, not {other:?}"),
            })
            .collect();
        destroyed.sort();
        assert_eq!(destroyed, [refused, unreachable]);
        assert!(h.list(t0).is_empty());
        assert!(h.thread.redials.is_empty());
        assert_eq!(h.load(), 0);
    }
}
