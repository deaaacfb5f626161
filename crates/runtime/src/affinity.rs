//! Which I/O thread an accepted stream face belongs on. With inline forwarding shard i runs
//! on I/O thread i mod N, and a packet read by one I/O thread for a shard another runs
//! crosses between them (a ring, and a wake-up or a yield of the core), as does the shard's
//! output for a face the first thread owns. An application's traffic mostly goes to one shard
//! (the Name Dispatch Table hashes the first components of the name, its prefix), so the
//! I/O thread that accepted the connection watches the face's first [`SAMPLE`] packets and,
//! when nearly all of them went to shards one other I/O thread runs, hands the face to that
//! thread, once: its exchanges then stay on one thread (docs/performance.md, "Two I/O
//! threads").

use std::time::{Duration, Instant};

use kite_fw::face::FaceId;

/// Packets of a watched face counted before it is decided.
pub(crate) const SAMPLE: u16 = 32;

/// Of [`SAMPLE`], how many must have gone to shards of one other I/O thread for the face to
/// move there (seven eighths: an application's management commands and the odd name under
/// another prefix do not keep it from moving; a face spread over several prefixes stays).
pub(crate) const MOVE_SHARE: u16 = 28;

/// Faces watched at once per I/O thread: the bound on the scan each dispatched packet makes
/// while any is watched. A face accepted while as many are watched is not watched (stays).
pub(crate) const WATCHED: usize = 16;

/// How long a face is watched at most: a face that sent fewer than [`SAMPLE`] packets by
/// then stays where it is.
pub(crate) const WATCH_FOR: Duration = Duration::from_secs(1);

/// The faces one I/O thread watches, and the moves decided.
#[derive(Debug)]
pub(crate) struct Affinity {
    /// This I/O thread's index, and how many there are (0: no watching, when the shards have
    /// threads of their own or there is one I/O thread).
    index: usize,
    io_threads: usize,
    watched: Vec<Watched>,
    /// (face, I/O thread) decided since the last [`Affinity::take_moves`].
    moves: Vec<(FaceId, usize)>,
}

#[derive(Debug)]
struct Watched {
    face: FaceId,
    since: Instant,
    total: u16,
    /// Packets per I/O thread whose shards they went to.
    per_thread: Vec<u16>,
}

/// The I/O thread of `io_threads` that runs forwarding shard `shard` with inline forwarding.
pub(crate) fn shard_io_thread(shard: usize, io_threads: usize) -> usize {
    shard % io_threads
}

impl Affinity {
    /// For I/O thread `index` of `io_threads`; watches only when the shards run inline.
    pub fn new(index: usize, io_threads: usize, inline: bool) -> Self {
        Affinity {
            index,
            io_threads: if inline && io_threads > 1 {
                io_threads
            } else {
                0
            },
            watched: Vec::new(),
            moves: Vec::new(),
        }
    }

    /// Whether forwarding shard `shard` runs on another I/O thread than this one (inline
    /// forwarding), so a packet for it crosses between threads.
    #[inline]
    pub fn crosses(&self, shard: usize) -> bool {
        self.io_threads != 0 && shard_io_thread(shard, self.io_threads) != self.index
    }

    /// Starts watching an accepted face (unless [`WATCHED`] are watched already).
    pub fn watch(&mut self, face: FaceId, now: Instant) {
        if self.io_threads == 0 || self.watched.len() >= WATCHED {
            return;
        }
        self.watched.push(Watched {
            face,
            since: now,
            total: 0,
            per_thread: vec![0; self.io_threads],
        });
    }

    /// A packet of `face` went to forwarding shard `shard`.
    #[inline]
    pub fn count(&mut self, face: FaceId, shard: usize) {
        if self.watched.is_empty() {
            return;
        }
        let Some(i) = self.watched.iter().position(|w| w.face == face) else {
            return;
        };
        let w = &mut self.watched[i];
        w.per_thread[shard_io_thread(shard, self.io_threads)] += 1;
        w.total += 1;
        if w.total < SAMPLE {
            return;
        }
        let w = self.watched.swap_remove(i);
        if let Some((k, &n)) = (w.per_thread.iter().enumerate()).max_by_key(|&(_, n)| *n) {
            if k != self.index && n >= MOVE_SHARE {
                self.moves.push((face, k));
            }
        }
    }

    /// Stops watching `face` (it closed).
    pub fn forget(&mut self, face: FaceId) {
        self.watched.retain(|w| w.face != face);
    }

    /// Stops watching faces watched for [`WATCH_FOR`].
    pub fn expire(&mut self, now: Instant) {
        self.watched
            .retain(|w| now.saturating_duration_since(w.since) < WATCH_FOR);
    }

    /// The moves decided since the last call: (face, I/O thread to own it).
    pub fn take_moves(&mut self) -> std::vec::Drain<'_, (FaceId, usize)> {
        self.moves.drain(..)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_face_whose_packets_go_to_another_threads_shards_moves_there_once() {
        let now = Instant::now();
        // I/O thread 0 of 2: shards 1 and 3 run on thread 1.
        let mut a = Affinity::new(0, 2, true);
        let f = FaceId(400);
        a.watch(f, now);
        a.count(f, 0); // a management command, to shard 0
        for i in 0..SAMPLE - 2 {
            a.count(f, if i % 2 == 0 { 1 } else { 3 });
            assert_eq!(a.take_moves().count(), 0, "decided before the sample");
        }
        a.count(f, 1);
        assert_eq!(a.take_moves().collect::<Vec<_>>(), [(f, 1)]);
        for _ in 0..SAMPLE {
            a.count(f, 1);
        }
        assert_eq!(a.take_moves().count(), 0, "a face is decided once");
    }

    #[test]
    fn a_face_spread_over_threads_or_already_home_stays() {
        let now = Instant::now();
        let mut a = Affinity::new(0, 2, true);
        let (spread, home) = (FaceId(401), FaceId(402));
        a.watch(spread, now);
        a.watch(home, now);
        for i in 0..SAMPLE {
            a.count(spread, usize::from(i % 4 == 0));
            a.count(home, 2);
        }
        assert_eq!(a.take_moves().count(), 0);
    }

    #[test]
    fn watching_is_bounded_in_faces_and_time_and_off_without_inline_shards() {
        let now = Instant::now();
        let mut a = Affinity::new(0, 2, true);
        for i in 0..WATCHED as u64 + 4 {
            a.watch(FaceId(500 + i), now);
        }
        assert_eq!(a.watched.len(), WATCHED);
        a.expire(now + WATCH_FOR);
        assert!(a.watched.is_empty());
        let mut own_threads = Affinity::new(0, 2, false);
        own_threads.watch(FaceId(600), now);
        assert!(own_threads.watched.is_empty());
        let mut one = Affinity::new(0, 1, true);
        one.watch(FaceId(601), now);
        assert!(one.watched.is_empty());
    }
}
