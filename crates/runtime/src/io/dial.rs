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
