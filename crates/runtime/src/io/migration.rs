//! Faces changing I/O threads: an accepted connection handed to the thread with the fewest
//! faces, and a face moved to the thread that runs the shards its packets go to
//! ([`Affinity`](crate::affinity::Affinity)). A face is counted in exactly one thread's load
//! at any time: the thread that hands it over counts it out and the receiving one in before
//! it is sent, and a hand-over to a thread that stopped is counted back.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::Sender;
use kite_face::Face;
use kite_fw::face::FaceId;
use kite_link::FaceIds;

use super::IoThread;
use crate::IoCommand;

/// How long an I/O thread passes on the shards' output for a face it moved to another: far
/// longer than the shards take to apply the new owner (their next turn).
const MOVED_FOR: Duration = Duration::from_secs(1);

/// Where an I/O thread stands among the others.
pub(crate) struct Place {
    /// Its index.
    pub index: usize,
    /// Every I/O thread's commands and waker, in thread order (this one's too).
    pub peers: Vec<(Sender<IoCommand>, Arc<mio::Waker>)>,
    /// Faces each I/O thread owns, and those handed to it not yet adopted.
    pub loads: Arc<[AtomicUsize]>,
    /// The face id allocator all I/O threads share.
    pub ids: FaceIds,
}

impl Place {
    /// This thread owns one more face.
    pub fn count_in(&self) {
        self.loads[self.index].fetch_add(1, Ordering::Relaxed);
    }

    /// This thread owns one face less.
    pub fn count_out(&self) {
        self.loads[self.index].fetch_sub(1, Ordering::Relaxed);
    }

    /// Sends I/O thread `k` a face to own (`cmd`), counted in its load, and wakes it; false
    /// when that thread is stopping (the face closed with the command, and is not counted).
    pub fn hand_over(&self, k: usize, cmd: IoCommand) -> bool {
        self.loads[k].fetch_add(1, Ordering::Relaxed);
        let (tx, waker) = &self.peers[k];
        if tx.send(cmd).is_err() {
            self.loads[k].fetch_sub(1, Ordering::Relaxed);
            return false;
        }
        let _ = waker.wake();
        true
    }

    /// Sends `cmd` to I/O thread `k` without waking it (a caller sending several wakes each
    /// thread once, with [`Place::wake`]); false when that thread is stopping.
    pub fn send(&self, k: usize, cmd: IoCommand) -> bool {
        self.peers[k].0.send(cmd).is_ok()
    }

    /// Wakes I/O thread `k`.
    pub fn wake(&self, k: usize) {
        let _ = self.peers[k].1.wake();
    }

    /// The I/O thread with the fewest faces.
    pub fn least_loaded(&self) -> usize {
        least_loaded(&self.loads)
    }
}

/// The I/O thread with the fewest faces (the first of those tied).
pub(crate) fn least_loaded(loads: &[AtomicUsize]) -> usize {
    (loads.iter().enumerate())
        .min_by_key(|(_, l)| l.load(Ordering::Relaxed))
        .map_or(0, |(k, _)| k)
}

/// The faces this thread handed to another in the last [`MOVED_FOR`]: a shard's output for
/// one of them still reaching this thread goes on there. At most one entry per face moved in
/// that time (a face moves once).
#[derive(Default)]
pub(super) struct Moved {
    recent: Vec<(FaceId, usize, Instant)>,
}

impl Moved {
    /// Face `id` moved to I/O thread `k` at `now`.
    pub fn record(&mut self, id: FaceId, k: usize, now: Instant) {
        self.recent.push((id, k, now));
    }

    /// The thread face `id` moved to lately, if it did.
    #[inline]
    pub fn owner(&self, id: FaceId) -> Option<usize> {
        self.recent.iter().find(|m| m.0 == id).map(|m| m.1)
    }

    /// Forgets the moves older than [`MOVED_FOR`] at `now`.
    pub fn expire(&mut self, now: Instant) {
        self.recent
            .retain(|m| now.saturating_duration_since(m.2) < MOVED_FOR);
    }
}

impl IoThread {
    /// Hands face `id` to I/O thread `k`, which runs the shards its packets go to (see
    /// [`Affinity`](crate::affinity::Affinity)). Shared-memory faces stay (their region
    /// is polled by this thread).
    pub(super) fn move_face(&mut self, id: FaceId, k: usize, now: Instant) {
        if (self.table.get(id)).is_none_or(|f| f.is_polled() || f.upgrade_requested()) {
            return;
        }
        let Some(face) = self.table.remove(id) else {
            return;
        };
        let _ = face.deregister(self.poll.registry());
        self.log.moved_out(face.counters());
        self.place.count_out();
        if !self.place.hand_over(k, IoCommand::Migrate(Box::new(face))) {
            return;
        }
        tracing::debug!(
            face = id.0,
            to = k,
            "face moved to the I/O thread of its shards"
        );
        self.moved.record(id, k, now);
    }

    /// Takes a face another I/O thread moved here ([`IoThread::move_face`]): watched by
    /// this thread's poll, and every shard sends its output here from now on.
    pub(super) fn adopt_moved(&mut self, face: Face) {
        self.log.moved_in(face.counters());
        self.own(face);
    }

    /// Takes a face another I/O thread accepted for this one (counted here by that thread).
    pub(super) fn adopt_accepted(&mut self, face: Face, now: Instant) {
        // `add_face` counts it.
        self.place.count_out();
        let id = face.id();
        self.add_face(face, now);
        self.dispatcher.affinity.watch(id, now);
    }

    /// Keeps an accepted connection, or hands it to the I/O thread with the fewest faces
    /// (counted there at once, so a burst of accepts spreads).
    pub(super) fn place_face(&mut self, face: Face, now: Instant) {
        let k = self.place.least_loaded();
        if k == self.place.index {
            let id = face.id();
            self.add_face(face, now);
            self.dispatcher.affinity.watch(id, now);
            return;
        }
        self.place.hand_over(k, IoCommand::Adopt(Box::new(face)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossbeam_channel::Receiver;
    use kite_face::FaceConfig;
    use kite_link::Persistency;

    /// `m` threads' places over shared loads, with each thread's command receiver (and the
    /// polls their wakers need).
    fn places(m: usize) -> (Vec<Place>, Vec<Receiver<IoCommand>>, Vec<mio::Poll>) {
        let loads: Arc<[AtomicUsize]> = (0..m).map(|_| AtomicUsize::new(0)).collect();
        let mut peers = Vec::new();
        let mut rxs = Vec::new();
        let mut polls = Vec::new();
        for _ in 0..m {
            let poll = mio::Poll::new().unwrap();
            let waker =
                Arc::new(mio::Waker::new(poll.registry(), super::super::WAKE_TOKEN).unwrap());
            let (tx, rx) = crossbeam_channel::unbounded();
            peers.push((tx, waker));
            rxs.push(rx);
            polls.push(poll);
        }
        let ids = FaceIds::new();
        let places = (0..m)
            .map(|index| Place {
                index,
                peers: peers.clone(),
                loads: loads.clone(),
                ids: ids.clone(),
            })
            .collect();
        (places, rxs, polls)
    }

    fn loads(p: &Place) -> Vec<usize> {
        p.loads.iter().map(|l| l.load(Ordering::Relaxed)).collect()
    }

    fn face(id: u64) -> Face {
        let remote = ([192, 0, 2, 1], 6363).into();
        let config = FaceConfig::default();
        kite_face::tcp::unconnected_face(FaceId(id), remote, Persistency::Persistent, &config)
    }

    #[test]
    fn a_moved_face_is_counted_and_held_by_exactly_one_thread() {
        let (places, rxs, _polls) = places(2);
        places[0].count_in();
        assert_eq!(loads(&places[0]), [1, 0]);
        // Thread 0 moves it to thread 1.
        places[0].count_out();
        assert!(places[0].hand_over(1, IoCommand::Migrate(Box::new(face(300)))));
        assert_eq!(loads(&places[0]), [0, 1]);
        assert!(rxs[0].try_recv().is_err(), "thread 0 keeps nothing");
        match rxs[1].try_recv() {
            Ok(IoCommand::Migrate(f)) => assert_eq!(f.id(), FaceId(300)),
            other => panic!("thread 1 should be sent the face, got {other:?}"),
        }
        assert!(rxs[1].try_recv().is_err(), "once");
    }

    #[test]
    fn a_face_handed_to_a_stopped_thread_is_counted_nowhere() {
        let (places, mut rxs, _polls) = places(2);
        drop(rxs.remove(1));
        assert!(!places[0].hand_over(1, IoCommand::Adopt(Box::new(face(300)))));
        assert_eq!(loads(&places[0]), [0, 0]);
    }

    #[test]
    fn accepted_connections_spread_over_the_least_loaded_threads() {
        let (places, _rxs, _polls) = places(3);
        let mut to = Vec::new();
        for id in 300..306 {
            let k = places[0].least_loaded();
            assert!(places[0].hand_over(k, IoCommand::Adopt(Box::new(face(id)))));
            to.push(k);
        }
        assert_eq!(to, [0, 1, 2, 0, 1, 2]);
        assert_eq!(loads(&places[0]), [2, 2, 2]);
    }

    #[test]
    fn output_for_a_moved_face_follows_it_until_the_shards_know() {
        let t0 = Instant::now();
        let mut m = Moved::default();
        m.record(FaceId(300), 2, t0);
        assert_eq!(m.owner(FaceId(300)), Some(2));
        assert_eq!(m.owner(FaceId(301)), None);
        m.expire(t0 + MOVED_FOR - Duration::from_millis(1));
        assert_eq!(m.owner(FaceId(300)), Some(2));
        m.expire(t0 + MOVED_FOR);
        assert_eq!(m.owner(FaceId(300)), None);
    }
}
