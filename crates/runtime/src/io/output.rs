//! The output stage: running the inline shards, encoding what the shards send onto the
//! faces' queues, and writing each face written to once per burst.

use std::time::Instant;

use kite_face::Flushed;
use kite_fw::face::FaceId;
use kite_fw::out::Out;
use kite_link::PacketKind;
use kite_packet::NackReason;

use super::table::FaceTable;
use super::{IoThread, INLINE_PASSES};
use crate::dispatch::Dispatcher;
use crate::iolog::CloseReason;
use crate::worker::Step;
use crate::IoCommand;

/// Encodes `o` and queues it on its face, counting a Congestion Nack's restraint; returns it
/// when the face is not in `table`. The faces written to are listed to flush. A Nack
/// beyond the face's rate of Nacks ([`kite_face::police`]) is dropped unencoded and
/// restrains the face too: its Interests are only being refused.
fn queue_out(
    table: &mut FaceTable,
    dispatcher: &mut Dispatcher,
    header: &mut Vec<u8>,
    o: Out,
    now: Instant,
) -> Option<Out> {
    let o = match o {
        Out::Shard { shard, packet } => {
            dispatcher.hand_to_shard(shard, *packet);
            return None;
        }
        o => o,
    };
    let id = o.face();
    let Some(w) = table.writer(id) else {
        return Some(o);
    };
    let face = &mut *w.face;
    let kind = match &o {
        Out::Interest { .. } => PacketKind::Interest,
        Out::Data { .. } => PacketKind::Data,
        Out::Nack { reason, .. } => {
            if *reason == NackReason::CONGESTION {
                dispatcher.restrain(id);
            }
            if !face.admit_nack(now) {
                dispatcher.restrain(id);
                return None;
            }
            PacketKind::Nack
        }
        Out::Shard { .. } => unreachable!("handed to its thread above"),
    };
    let mark = face.congestion_mark(now);
    let packet = o.encode_frame(header, face.local_fields(), mark);
    w.send(kind, header, packet);
    None
}

impl IoThread {
    pub(super) fn flush_face(&mut self, id: FaceId, now: Instant) {
        let Some(face) = self.table.get_mut(id) else {
            return;
        };
        match face.flush() {
            Ok(Flushed::Done) | Ok(Flushed::Blocked) => {}
            Err(e) => {
                let why = CloseReason::Error(format!("send failed: {e}"));
                self.transport_failed(id, why, now);
            }
        }
    }

    /// Runs the inline forwarding shards until none has anything left to do, or for
    /// [`INLINE_PASSES`] passes, writing their output after each pass (so no output ring
    /// fills while they work). Returns whether any shard worked, and whether one still holds
    /// management answers for want of room. A shard told to stop is dropped; the thread
    /// itself stops at its own shutdown command.
    pub(super) fn forward_inline(&mut self) -> (bool, bool) {
        let mut worked = false;
        for _ in 0..INLINE_PASSES {
            let mut again = false;
            let mut held = false;
            self.shards.retain_mut(|w| match w.step() {
                Ok(Step::Worked) => {
                    again = true;
                    true
                }
                Ok(Step::Held) => {
                    held = true;
                    true
                }
                Ok(Step::Idle) => true,
                Err(_) => false,
            });
            if !again {
                return (worked, held);
            }
            worked = true;
            self.drain_output();
        }
        (worked, false)
    }

    /// Encodes and queues what the forwarding threads sent; flushes each face written to.
    /// The clock is read once per drain that finds output (the time Nack policing and
    /// congestion marks count by).
    pub(super) fn drain_output(&mut self) -> bool {
        let mut any = false;
        let mut now = None;
        // Bit k: an output went on to I/O thread k (its face moved there).
        let mut passed = 0u64;
        for ring in &mut self.from_fwd {
            let n = ring.slots();
            if n == 0 {
                continue;
            }
            any = true;
            let now = *now.get_or_insert_with(Instant::now);
            // As one chunk: each packet is moved out of its slot once, and the ring's head
            // moves once.
            let Ok(chunk) = ring.read_chunk(n) else {
                continue;
            };
            for o in chunk {
                let out = queue_out(
                    &mut self.table,
                    &mut self.dispatcher,
                    &mut self.header,
                    o,
                    now,
                );
                if let Some(o) = out {
                    if let Some(k) = self.moved.owner(o.face()) {
                        self.place.send(k, IoCommand::Output(o));
                        passed |= 1 << k;
                    }
                }
            }
        }
        while passed != 0 {
            let k = passed.trailing_zeros() as usize;
            self.place.wake(k);
            passed &= passed - 1;
        }
        self.dispatcher.wake();
        if let Some(now) = now {
            self.flush_dirty(now);
        }
        any
    }

    /// Flushes each face written to since the last flush.
    pub(super) fn flush_dirty(&mut self, now: Instant) {
        let dirty = self.table.take_dirty();
        for &id in &dirty {
            self.flush_face(id, now);
        }
        self.table.flushed(dirty);
    }

    /// Queues a shard's output for a face that moved here, sent on by its former owner.
    pub(super) fn output_passed_on(&mut self, o: Out, now: Instant) {
        let _ = queue_out(
            &mut self.table,
            &mut self.dispatcher,
            &mut self.header,
            o,
            now,
        );
        self.flush_dirty(now);
    }
}

#[cfg(test)]
mod tests {
    use kite_link::Persistency;

    use super::*;
    use crate::io::testing::{data, harness, stream};
    use crate::FaceEvent;
    use kite_face::testing::Failure;

    #[test]
    fn output_is_queued_on_its_face_and_each_face_is_flushed_after_the_drain() {
        let mut h = harness();
        let t0 = Instant::now();
        let s = h.create(Persistency::Permanent, t0).unwrap();
        for _ in 0..3 {
            h.output.push(data(s.id)).unwrap();
        }
        assert!(h.thread.drain_output(), "it found output");
        let face = h.thread.table.get(s.id).unwrap();
        // Flushed once, whole: a face without its connection counts its queue dropped.
        assert_eq!(face.pending_output(), 0);
        assert_eq!(face.counters().n_out_link_down, 3);
        assert!(h.thread.table.take_dirty().is_empty());
        assert!(!h.thread.drain_output(), "nothing left");
    }

    #[test]
    fn output_for_a_face_that_moved_away_goes_on_to_its_new_owner() {
        let mut h = harness();
        let t0 = Instant::now();
        // This harness has one I/O thread: the face "moved" to it stands for any other.
        h.thread.moved.record(FaceId(400), 0, t0);
        h.output.push(data(FaceId(400))).unwrap();
        h.output.push(data(FaceId(401))).unwrap();
        assert!(h.thread.drain_output());
        match h.thread.commands.try_recv() {
            Ok(IoCommand::Output(o)) => assert_eq!(o.face(), FaceId(400)),
            other => panic!("the moved face's output should be passed on, got {other:?}"),
        }
        assert!(
            h.thread.commands.try_recv().is_err(),
            "output for a face never here is dropped"
        );
    }

    #[test]
    fn every_face_written_to_in_a_drain_is_written_once_with_all_its_frames() {
        let mut h = harness();
        let t0 = Instant::now();
        let (a, a_peer) = h.memory(stream(7000), t0);
        let (b, b_peer) = h.memory(stream(7001), t0);
        for face in [a, b, a, b] {
            h.output.push(data(face)).unwrap();
        }
        assert!(h.thread.drain_output());
        assert_eq!((a_peer.sent().len(), b_peer.sent().len()), (2, 2));
        assert_eq!((a_peer.flushes(), b_peer.flushes()), (1, 1));
        assert!(
            h.thread.table.take_dirty().is_empty(),
            "the dirty list was emptied"
        );
    }

    #[test]
    fn a_face_that_pushes_back_keeps_its_queue_and_resumes_when_writable() {
        let mut h = harness();
        let t0 = Instant::now();
        let (id, peer) = h.memory(stream(7000), t0);
        peer.stop_reading();
        for _ in 0..3 {
            h.output.push(data(id)).unwrap();
        }
        h.thread.drain_output();
        assert!(peer.sent().is_empty());
        let face = h.thread.table.get(id).unwrap();
        assert_eq!(face.pending_output(), 3, "kept for the next writable event");
        assert!(face.output_blocked());
        assert_eq!(
            face.counters().n_out_link_down + face.counters().n_out_queue_full,
            0
        );
        peer.make_room(2);
        h.writable(id, t0);
        assert_eq!(peer.sent().len(), 2);
        assert_eq!(h.thread.table.get(id).unwrap().pending_output(), 1);
        // Output for a face already blocked waits behind what it holds.
        h.output.push(data(id)).unwrap();
        h.thread.drain_output();
        assert_eq!(h.thread.table.get(id).unwrap().pending_output(), 2);
        peer.read_all();
        h.writable(id, t0);
        assert_eq!(peer.sent().len(), 2);
        let face = h.thread.table.get(id).unwrap();
        assert_eq!(face.pending_output(), 0);
        assert_eq!(face.counters().n_out_bytes, 4 * 5);
    }

    #[test]
    fn a_face_whose_link_is_down_drops_its_output_and_sends_again_once_up() {
        let mut h = harness();
        let t0 = Instant::now();
        let (id, peer) = h.memory(stream(7000), t0);
        peer.set_up(false);
        h.output.push(data(id)).unwrap();
        h.output.push(data(id)).unwrap();
        h.thread.drain_output();
        assert!(peer.sent().is_empty());
        let face = h.thread.table.get(id).unwrap();
        assert_eq!(
            (face.pending_output(), face.counters().n_out_link_down),
            (0, 2)
        );
        peer.set_up(true);
        h.output.push(data(id)).unwrap();
        h.thread.drain_output();
        assert_eq!(peer.sent().len(), 1);
    }

    #[test]
    fn a_face_whose_write_fails_is_closed() {
        let mut h = harness();
        let t0 = Instant::now();
        let (id, peer) = h.memory(stream(7000), t0);
        peer.fail_next_send(Failure::Reset);
        h.output.push(data(id)).unwrap();
        h.thread.drain_output();
        assert!(matches!(h.take_events().last(), Some(FaceEvent::Destroyed(e)) if e.id == id));
        assert!(h.list(t0).is_empty());
    }
}
