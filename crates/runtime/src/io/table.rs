//! The faces one I/O thread owns, and the lists a turn keeps about them: the faces written
//! to (flushed after the burst), those to read again next turn, those parked while
//! restrained, those with LpReliability timers, and each UDP face's share of the reads. A
//! face leaves every list when it leaves the table, so a face closed or moved to another
//! thread leaves nothing behind here.
//!
//! The lists are swapped with spare buffers while a turn walks them (never reallocated from
//! turn to turn), and nothing here reads the clock: the caller passes `now`.

use std::time::{Duration, Instant};

use bytes::Bytes;
use hashbrown::HashMap;
use kite_face::{Face, FaceUri};
use kite_fw::face::FaceId;
use kite_link::PacketKind;

use crate::share::DatagramShare;

/// A list of faces, with whether each one's peer closed (its last read must see the end).
pub(super) type ReadList = Vec<(FaceId, bool)>;

#[derive(Default)]
pub(super) struct FaceTable {
    faces: HashMap<FaceId, Face>,
    /// Faces written to since the last flush, each once: listed when its queue stops being
    /// empty.
    dirty: Vec<FaceId>,
    /// Faces with more to read than one burst took: read again next turn, after what this
    /// turn read is forwarded and written. At most one entry per (face, closed).
    unread: ReadList,
    /// The spare buffer `unread` is swapped with while a turn rereads.
    rereading: ReadList,
    /// Faces not read while they are restrained: a stream left unread fills its sender's
    /// socket and stops it, a UDP face's own socket fills and the kernel drops the rest, so
    /// a flooder costs the thread nothing until its restraint ends. At most one entry per
    /// face.
    parked: ReadList,
    /// The parked faces one turn takes out to read (kept, so it does not reallocate).
    unparking: ReadList,
    /// The faces with LpReliability on, whose timers (retransmissions, Acks) are checked.
    reliable: Vec<FaceId>,
    /// The faces whose transports keep timers of their own (WebTransport's QUIC).
    timed: Vec<FaceId>,
    /// Each UDP face's share of the reads, in datagrams ([`DatagramShare`]).
    shares: HashMap<FaceId, DatagramShare>,
}

/// Face `face` taken to queue output on, remembered as written to.
pub(super) struct Writer<'a> {
    pub face: &'a mut Face,
    dirty: &'a mut Vec<FaceId>,
}

impl Writer<'_> {
    /// Queues a frame given as link-header octets and the packet's own; the face is listed
    /// to flush when its queue was empty (so once per flush).
    #[inline]
    pub fn send(self, kind: PacketKind, head: &[u8], body: Bytes) {
        let face = self.face;
        if face.pending_output() == 0 {
            self.dirty.push(face.id());
        }
        let blocked = face.output_blocked();
        face.send_parts(kind, head, body);
        if blocked {
            // Its socket is full (it is written when it becomes writable): the frame waits,
            // so it must not keep the buffer it was received in.
            face.detach_waiting();
        }
    }
}

impl FaceTable {
    pub fn get(&self, id: FaceId) -> Option<&Face> {
        self.faces.get(&id)
    }

    pub fn get_mut(&mut self, id: FaceId) -> Option<&mut Face> {
        self.faces.get_mut(&id)
    }

    /// Every face by id (what the logs and the shared-memory poller read).
    pub fn map(&self) -> &HashMap<FaceId, Face> {
        &self.faces
    }

    pub fn map_mut(&mut self) -> &mut HashMap<FaceId, Face> {
        &mut self.faces
    }

    pub fn values(&self) -> impl Iterator<Item = &Face> {
        self.faces.values()
    }

    /// The face whose remote is `remote`, if any.
    pub fn find_remote(&self, remote: &FaceUri) -> Option<FaceId> {
        (self.faces.values())
            .find(|f| f.remote_uri() == remote)
            .map(Face::id)
    }

    /// Adds `face`.
    pub fn insert(&mut self, face: Face) {
        let id = face.id();
        if face.has_transport_timers() {
            self.timed.push(id);
        }
        self.faces.insert(id, face);
        self.follow_reliability(id);
    }

    /// Takes face `id` out, and out of every list but the one being reread (whose walk
    /// skips faces no longer here).
    pub fn remove(&mut self, id: FaceId) -> Option<Face> {
        let face = self.faces.remove(&id)?;
        self.follow_reliability(id);
        if let Some(i) = self.timed.iter().position(|&f| f == id) {
            self.timed.swap_remove(i);
        }
        self.shares.remove(&id);
        self.unread.retain(|&(f, _)| f != id);
        self.parked.retain(|&(f, _)| f != id);
        Some(face)
    }

    /// Keeps the reliable faces in step with face `id` (after it changed, or left).
    pub fn follow_reliability(&mut self, id: FaceId) {
        let on = self.faces.get(&id).is_some_and(Face::lp_reliability);
        match (on, self.reliable.iter().position(|&f| f == id)) {
            (true, None) => self.reliable.push(id),
            (false, Some(i)) => {
                self.reliable.swap_remove(i);
            }
            _ => {}
        }
    }

    /// Face `id`, to queue output on.
    #[inline]
    pub fn writer(&mut self, id: FaceId) -> Option<Writer<'_>> {
        let face = self.faces.get_mut(&id)?;
        Some(Writer {
            face,
            dirty: &mut self.dirty,
        })
    }

    /// The faces written to since the last flush, each once; hand the list back with
    /// [`FaceTable::flushed`].
    pub fn take_dirty(&mut self) -> Vec<FaceId> {
        core::mem::take(&mut self.dirty)
    }

    /// The list [`FaceTable::take_dirty`] gave, flushed.
    pub fn flushed(&mut self, mut dirty: Vec<FaceId>) {
        dirty.clear();
        // Flushing queues nothing, so nothing was listed meanwhile.
        self.dirty = dirty;
    }

    /// Face `id` has more to read: next turn.
    pub fn read_again(&mut self, id: FaceId, hangup: bool) {
        if !self.unread.contains(&(id, hangup)) {
            self.unread.push((id, hangup));
        }
    }

    /// Whether a face waits to be read again.
    pub fn has_unread(&self) -> bool {
        !self.unread.is_empty()
    }

    /// The faces to read again this turn; what their reads leave for the next turn goes to a
    /// fresh list. Hand it back with [`FaceTable::reread`].
    pub fn take_unread(&mut self) -> ReadList {
        let spare = core::mem::take(&mut self.rereading);
        core::mem::replace(&mut self.unread, spare)
    }

    /// The list [`FaceTable::take_unread`] gave, read.
    pub fn reread(&mut self, mut list: ReadList) {
        list.clear();
        self.rereading = list;
    }

    /// Face `id` is restrained: not read until its restraint ends.
    pub fn park(&mut self, id: FaceId, hangup: bool) {
        match self.parked.iter_mut().find(|(f, _)| *f == id) {
            Some((_, closed)) => *closed |= hangup,
            None => self.parked.push((id, hangup)),
        }
    }

    /// Whether a face is parked.
    pub fn has_parked(&self) -> bool {
        !self.parked.is_empty()
    }

    /// Takes out the parked faces no longer restrained, to read; hand the list back with
    /// [`FaceTable::unparked`].
    pub fn take_unparked(&mut self, restrained: impl Fn(FaceId) -> bool) -> ReadList {
        let mut out = core::mem::take(&mut self.unparking);
        let mut i = 0;
        while i < self.parked.len() {
            if restrained(self.parked[i].0) {
                i += 1;
            } else {
                out.push(self.parked.swap_remove(i));
            }
        }
        out
    }

    /// The list [`FaceTable::take_unparked`] gave, read.
    pub fn unparked(&mut self, mut list: ReadList) {
        list.clear();
        self.unparking = list;
    }

    /// How long until the first parked face's restraint ends (`restraint_left` tells each
    /// one's).
    pub fn next_unpark(&self, restraint_left: impl Fn(FaceId) -> Duration) -> Option<Duration> {
        self.parked.iter().map(|&(id, _)| restraint_left(id)).min()
    }

    /// Face `id`'s share of the reads.
    pub fn share(&mut self, id: FaceId) -> &mut DatagramShare {
        self.shares.entry(id).or_default()
    }

    /// When the first reliable face's timer is due.
    pub fn reliability_due(&self) -> Option<Instant> {
        (self.reliable.iter())
            .filter_map(|id| self.faces.get(id)?.reliability_due())
            .min()
    }

    /// Resends the frames the reliable faces found lost and queues their Acks that are due at
    /// `now`; each face that has output then is listed to flush.
    pub fn step_reliability(&mut self, now: Instant) {
        for id in &self.reliable {
            let Some(face) = self.faces.get_mut(id) else {
                continue;
            };
            if face.reliability_due().is_some_and(|d| d <= now) {
                face.step_reliability(now);
                if face.pending_output() > 0 && !self.dirty.contains(id) {
                    self.dirty.push(*id);
                }
            }
        }
    }

    /// When the first transport timer is due.
    pub fn transport_due(&self) -> Option<Instant> {
        (self.timed.iter())
            .filter_map(|id| self.faces.get(id)?.transport_deadline())
            .min()
    }

    /// Runs the transport timers due at `now`; the faces whose transports are done then
    /// (their connection timed out or closed) go to `failed`, for the caller to close.
    pub fn run_transport_timers(&mut self, now: Instant, failed: &mut Vec<FaceId>) {
        for id in &self.timed {
            let Some(face) = self.faces.get_mut(id) else {
                continue;
            };
            if face.transport_deadline().is_some_and(|d| d <= now)
                && face.run_transport_timers(now).is_err()
            {
                failed.push(*id);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kite_face::FaceConfig;
    use kite_link::Persistency;

    /// A face with no socket: a TCP face that has yet to dial.
    fn face(id: u64) -> Face {
        let remote = ([192, 0, 2, 1], 6363 + id as u16).into();
        let config = FaceConfig::default();
        kite_face::tcp::unconnected_face(FaceId(id), remote, Persistency::Permanent, &config)
    }

    fn table(ids: &[u64]) -> FaceTable {
        let mut t = FaceTable::default();
        for &id in ids {
            t.insert(face(id));
        }
        t
    }

    fn write(t: &mut FaceTable, id: u64) {
        let w = t.writer(FaceId(id)).expect("in the table");
        w.send(PacketKind::Data, &[], Bytes::from_static(&[6, 0]));
    }

    #[test]
    fn a_face_written_to_many_times_is_flushed_once() {
        let mut t = table(&[300, 301]);
        write(&mut t, 300);
        write(&mut t, 301);
        write(&mut t, 300);
        assert_eq!(t.get(FaceId(300)).unwrap().pending_output(), 2);
        let dirty = t.take_dirty();
        assert_eq!(dirty, [FaceId(300), FaceId(301)]);
        for &id in &dirty {
            // A face without its connection drops its queue when flushed.
            t.get_mut(id).unwrap().flush().unwrap();
        }
        t.flushed(dirty);
        assert!(t.take_dirty().is_empty(), "nothing written since the flush");
        write(&mut t, 301);
        assert_eq!(
            t.take_dirty(),
            [FaceId(301)],
            "listed again once written again"
        );
    }

    #[test]
    fn a_face_that_leaves_the_table_leaves_every_list() {
        let mut t = table(&[300, 301]);
        t.read_again(FaceId(300), false);
        t.read_again(FaceId(301), true);
        t.park(FaceId(300), false);
        t.share(FaceId(300));
        let gone = t.remove(FaceId(300)).expect("was there");
        assert_eq!(gone.id(), FaceId(300));
        assert!(t.get(FaceId(300)).is_none() && t.remove(FaceId(300)).is_none());
        assert!(!t.has_parked());
        assert!(!t.shares.contains_key(&FaceId(300)));
        assert_eq!(t.take_unread(), [(FaceId(301), true)]);
    }

    #[test]
    fn a_face_is_read_again_once_and_what_a_reread_leaves_waits_for_the_next_turn() {
        let mut t = table(&[300]);
        t.read_again(FaceId(300), false);
        t.read_again(FaceId(300), false);
        let list = t.take_unread();
        assert_eq!(list, [(FaceId(300), false)]);
        assert!(!t.has_unread());
        // Its reread takes one burst and leaves more.
        t.read_again(FaceId(300), false);
        t.reread(list);
        assert_eq!(t.take_unread(), [(FaceId(300), false)]);
        assert!(!t.has_unread());
    }

    #[test]
    fn a_parked_face_is_parked_once_and_unparked_when_its_restraint_ends() {
        let mut t = table(&[300, 301]);
        t.park(FaceId(300), false);
        t.park(FaceId(300), true);
        t.park(FaceId(301), false);
        let restrained = |id: FaceId| id == FaceId(301);
        let left = |id: FaceId| Duration::from_millis(if id == FaceId(300) { 90 } else { 30 });
        assert_eq!(t.next_unpark(left), Some(Duration::from_millis(30)));
        let out = t.take_unparked(restrained);
        assert_eq!(out, [(FaceId(300), true)], "once, its peer's close kept");
        t.unparked(out);
        assert!(t.has_parked(), "the restrained face waits");
        assert!(t.take_unparked(restrained).is_empty());
        assert_eq!(t.take_unparked(|_| false), [(FaceId(301), false)]);
        assert!(!t.has_parked());
        assert_eq!(t.next_unpark(left), None);
    }

    #[test]
    fn faces_without_reliability_have_no_timers() {
        let mut t = table(&[300]);
        assert!(!t.get(FaceId(300)).unwrap().lp_reliability());
        assert!(t.reliable.is_empty());
        assert_eq!(t.reliability_due(), None);
        t.step_reliability(Instant::now());
        assert!(t.take_dirty().is_empty());
    }

    #[test]
    fn a_face_is_found_by_its_remote() {
        let t = table(&[300, 301]);
        let remote = t.get(FaceId(301)).unwrap().remote_uri().clone();
        assert_eq!(t.find_remote(&remote), Some(FaceId(301)));
        let other = FaceUri::Tcp(([192, 0, 2, 9], 1).into());
        assert_eq!(t.find_remote(&other), None);
    }
}
