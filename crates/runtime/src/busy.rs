//! Time the data-plane threads spend working, for the operator (`kite run --metrics`): each
//! thread adds the length of a turn that did work, once per turn (a burst, never per
//! packet), to an atomic that any other thread reads without a lock.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Nanoseconds one thread (or one forwarding shard) spent on turns that did work: reading,
/// dispatching, running the pipelines, writing. Spinning on empty polls and sleeping are
/// not counted. One thread writes it; any thread reads it. Aligned to a cache line, so two
/// threads' counters never share one.
#[repr(align(64))]
#[derive(Debug, Default)]
pub struct BusyTime(AtomicU64);

impl BusyTime {
    /// Adds `d`. Only the owning thread calls it, so a load and a store suffice (no locked
    /// read-modify-write on the hot path).
    pub(crate) fn add(&self, d: Duration) {
        let n = self.0.load(Ordering::Relaxed);
        let d = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        self.0.store(n.wrapping_add(d), Ordering::Relaxed);
    }

    /// The total so far.
    pub fn get(&self) -> Duration {
        Duration::from_nanos(self.0.load(Ordering::Relaxed))
    }
}

/// Busy time of the I/O threads and of each forwarding shard.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BusyTimes {
    /// The I/O threads together (with inline forwarding, their shards' time is part of it).
    pub io: Duration,
    /// Each I/O thread, in thread order.
    pub io_threads: Vec<Duration>,
    /// The faces each I/O thread owns now, in thread order.
    pub io_faces: Vec<usize>,
    /// Each forwarding shard, in thread order: a forwarding thread's, or with inline
    /// forwarding the part of the I/O thread's time spent in that shard's pipelines.
    pub shards: Vec<Duration>,
    /// Packets each I/O thread queued for a shard another I/O thread runs (inline
    /// forwarding), in thread order: each crossed between threads.
    pub io_crossed: Vec<u64>,
    /// Whether the shards run inline in the I/O thread.
    pub inline: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds_up_and_reads_back() {
        let b = BusyTime::default();
        assert_eq!(b.get(), Duration::ZERO);
        b.add(Duration::from_micros(3));
        b.add(Duration::from_nanos(500));
        assert_eq!(b.get(), Duration::from_nanos(3_500));
        assert_eq!(std::mem::align_of::<BusyTime>(), 64);
    }
}
