//! What other I/O threads received for a face: with AF_XDP steering ([`crate::xdp::steer`])
//! an Ethernet face's frames are read by the thread whose forwarding shard they go to (a
//! *lane*), not only by the thread that owns the face. Each lane counts what it received for
//! the face in a slot of its own (one writer, one cache line), and the owner adds the slots
//! to the face's counters when it reports them, and their last arrival to its idle timer.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use kite_link::FaceCounters;

/// The receive counters a lane moves (those [`crate::link_service::receive_whole`] counts).
const FIELDS: usize = 7;

/// One lane's counts for one face: [`FIELDS`] counters, then the time of its last arrival
/// (nanoseconds after the stats' epoch, plus one; zero: never). A cache line, written by
/// its lane alone.
#[repr(align(64))]
#[derive(Debug, Default)]
struct Slot {
    n: [AtomicU64; FIELDS],
    last_rx: AtomicU64,
}

/// The receive counts of one face from each lane.
#[derive(Debug)]
pub struct LaneStats {
    slots: Box<[Slot]>,
    epoch: Instant,
}

/// The counters of `c` a lane moves, in [`Slot`] order.
fn fields(c: &mut FaceCounters) -> [&mut u64; FIELDS] {
    [
        &mut c.n_in_interests,
        &mut c.n_in_data,
        &mut c.n_in_nacks,
        &mut c.n_in_bytes,
        &mut c.n_in_malformed,
        &mut c.n_in_lp_dropped,
        &mut c.n_in_too_large,
    ]
}

impl LaneStats {
    /// Stats for `lanes` lanes, whose arrival times count from `epoch`.
    pub fn new(lanes: usize, epoch: Instant) -> Self {
        LaneStats {
            slots: (0..lanes).map(|_| Slot::default()).collect(),
            epoch,
        }
    }

    /// Adds what lane `lane` counted for one frame, `c` (only its receive counters), received
    /// at `now`. Only that lane's thread calls it, so a load and a store suffice. A lane past
    /// those the stats were made for counts nothing.
    pub fn record(&self, lane: usize, c: &mut FaceCounters, now: Instant) {
        let Some(slot) = self.slots.get(lane) else {
            return;
        };
        for (n, v) in slot.n.iter().zip(fields(c)) {
            if *v != 0 {
                n.store(
                    n.load(Ordering::Relaxed).wrapping_add(*v),
                    Ordering::Relaxed,
                );
            }
        }
        let at = now.saturating_duration_since(self.epoch).as_nanos() as u64;
        slot.last_rx.store(at.saturating_add(1), Ordering::Relaxed);
    }

    /// Adds every lane's counts to `c`.
    pub fn add_to(&self, c: &mut FaceCounters) {
        for slot in self.slots.iter() {
            for (n, v) in slot.n.iter().zip(fields(c)) {
                *v += n.load(Ordering::Relaxed);
            }
        }
    }

    /// When a lane last received for the face, if one did.
    pub fn last_rx(&self) -> Option<Instant> {
        let at = self
            .slots
            .iter()
            .map(|s| s.last_rx.load(Ordering::Relaxed))
            .max()?;
        (at > 0).then(|| self.epoch + Duration::from_nanos(at - 1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_owner_sees_the_sum_of_every_lanes_counts_and_the_latest_arrival() {
        let epoch = Instant::now();
        let stats = LaneStats::new(3, epoch);
        assert_eq!(stats.last_rx(), None);
        let frame = |interests, bytes| FaceCounters {
            n_in_interests: interests,
            n_in_bytes: bytes,
            n_out_data: 9, // not a receive counter: never carried
            ..FaceCounters::default()
        };
        stats.record(0, &mut frame(1, 100), epoch + Duration::from_millis(5));
        stats.record(2, &mut frame(1, 50), epoch + Duration::from_millis(7));
        stats.record(2, &mut frame(0, 7), epoch + Duration::from_millis(9));
        stats.record(3, &mut frame(1, 1000), epoch + Duration::from_secs(1));
        let mut c = FaceCounters {
            n_in_interests: 10,
            ..FaceCounters::default()
        };
        stats.add_to(&mut c);
        assert_eq!((c.n_in_interests, c.n_in_bytes, c.n_out_data), (12, 157, 0));
        // The latest of the lanes' last arrivals (lane 3 does not exist).
        assert_eq!(stats.last_rx(), Some(epoch + Duration::from_millis(9)));
    }

    #[test]
    fn each_lanes_counts_fill_a_cache_line_of_their_own() {
        assert_eq!(std::mem::size_of::<Slot>(), 64);
        assert_eq!(std::mem::align_of::<Slot>(), 64);
    }
}
