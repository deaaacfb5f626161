//! The bounded output queue of a face: frames waiting for the next burst write.
//!
//! A frame is a small header (an NDNLPv2 header or nothing) and a body that is the packet's
//! own `Bytes`, so wrapping a packet for the link never copies it; the two parts go out as one
//! datagram (`sendmmsg` with two iovecs) or one stretch of the stream (`writev`).
//!
//! A body is often a slice of the buffer a burst was read into; frames that wait past the
//! write that follows their burst (the socket is full) are copied out
//! ([`OutQueue::detach_waiting`]), so a blocked face holds at most its capacity in frames of
//! their own size, never the receive buffers they came from.
//!
//! Those copies are what peers that stop reading make the process keep, so all faces
//! together keep at most a budget of them ([`Waiting`], [`crate::FaceConfig::output_queue_bytes`]):
//! without it, each connection of a peer that asks for large Data and never reads held
//! 1,024 frames of up to 8,800 octets, and 4,096 such connections 36 GB.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;
use smallvec::SmallVec;

/// Octets of header kept inline in a queued frame.
pub const INLINE_HEAD: usize = 64;

/// Frames a face's output queue holds by default.
pub const DEFAULT_QUEUE_CAPACITY: usize = 1024;

/// Octets of frames copied out to wait for a blocked socket that the faces of a process keep
/// by default ([`crate::FaceConfig::output_queue_bytes`]).
pub const DEFAULT_WAITING_BYTES: usize = 256 << 20;

/// Octets held by frames that wait, copied out, in the output queues that share it.
#[derive(Debug, Default)]
pub struct Waiting(AtomicUsize);

/// The waiting octets of every face of this process.
pub static WAITING: Waiting = Waiting::new();

impl Waiting {
    /// Nothing waiting.
    pub const fn new() -> Self {
        Waiting(AtomicUsize::new(0))
    }

    /// Octets waiting now.
    #[cfg(test)]
    fn octets(&self) -> usize {
        self.0.load(Ordering::Relaxed)
    }

    /// Takes `n` octets if that keeps the total within `budget`.
    fn take(&self, n: usize, budget: usize) -> bool {
        self.0
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |w| {
                w.checked_add(n).filter(|&t| t <= budget)
            })
            .is_ok()
    }

    /// Takes `n` octets whatever the budget (a frame already partly written must stay).
    fn force(&self, n: usize) {
        self.0.fetch_add(n, Ordering::Relaxed);
    }

    fn give_back(&self, n: usize) {
        if n > 0 {
            self.0.fetch_sub(n, Ordering::Relaxed);
        }
    }
}

/// One frame to send: `head` then `body`.
#[derive(Debug, Clone, Default)]
pub struct OutFrame {
    /// Link header octets (often empty).
    pub head: SmallVec<[u8; INLINE_HEAD]>,
    /// The packet (or fragment) octets.
    pub body: Bytes,
}

impl OutFrame {
    /// Total octets of the frame.
    pub fn len(&self) -> usize {
        self.head.len() + self.body.len()
    }

    /// Whether the frame has no octets.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The frame's octets from `offset` on, as up to two slices.
    pub fn parts_from(&self, offset: usize) -> [&[u8]; 2] {
        let h = self.head.len();
        if offset < h {
            [&self.head[offset..], &self.body[..]]
        } else {
            [&[], &self.body[offset - h..]]
        }
    }

    /// The frame as one `Bytes` (copies only when there is a head).
    pub fn to_bytes(&self) -> Bytes {
        if self.head.is_empty() {
            self.body.clone()
        } else {
            let mut v = Vec::with_capacity(self.len());
            v.extend_from_slice(&self.head);
            v.extend_from_slice(&self.body);
            Bytes::from(v)
        }
    }
}

/// A bounded FIFO of frames, with how much of the front frame a stream already wrote.
#[derive(Debug)]
pub struct OutQueue {
    frames: VecDeque<OutFrame>,
    capacity: usize,
    front_written: usize,
    /// Octets waiting (the frames' lengths less what a stream already wrote of the front).
    octets: usize,
    /// Frames at the front whose bodies are copies of their own ([`OutQueue::detach_waiting`]).
    detached: usize,
    /// Their octets, taken from `waiting`.
    detached_octets: usize,
    waiting: &'static Waiting,
}

impl OutQueue {
    /// An empty queue holding at most `capacity` frames, its waiting frames counted in the
    /// process's [`WAITING`].
    pub fn new(capacity: usize) -> Self {
        Self::sharing(capacity, &WAITING)
    }

    /// An empty queue whose waiting frames count in `waiting`.
    fn sharing(capacity: usize, waiting: &'static Waiting) -> Self {
        OutQueue {
            // Grows on first use and keeps its size: idle faces cost little, busy ones
            // stop allocating once warm.
            frames: VecDeque::new(),
            capacity,
            front_written: 0,
            octets: 0,
            detached: 0,
            detached_octets: 0,
            waiting,
        }
    }

    /// Octets waiting to be written.
    pub fn octets(&self) -> usize {
        self.octets
    }

    /// Frames waiting.
    pub fn len(&self) -> usize {
        self.frames.len()
    }

    /// Whether nothing waits.
    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    /// Whether frames wait past a write (copied out by [`OutQueue::detach_waiting`]).
    pub fn waits_past_write(&self) -> bool {
        self.detached > 0
    }

    /// Free frame slots.
    pub fn room(&self) -> usize {
        self.capacity - self.frames.len()
    }

    /// Appends `frame`; `false` (frame dropped) when the queue is full.
    pub fn push(&mut self, frame: OutFrame) -> bool {
        if self.frames.len() >= self.capacity {
            return false;
        }
        self.octets += frame.len();
        self.frames.push_back(frame);
        true
    }

    /// The waiting frames, front first, as up to two slices.
    pub fn frames(&self) -> (&[OutFrame], &[OutFrame]) {
        self.frames.as_slices()
    }

    /// Fills `iov` with the unwritten parts of the first `iov.len() / 2` frames (a frame is at
    /// most a header and a body), front first, for one vectored write; returns how many slices
    /// it filled and their octets.
    pub fn gather<'a>(&'a self, iov: &mut [std::io::IoSlice<'a>]) -> (usize, usize) {
        let (mut n, mut total) = (0, 0);
        let (a, b) = self.frames.as_slices();
        let mut offset = self.front_written;
        for f in a.iter().chain(b).take(iov.len() / 2) {
            for part in f.parts_from(offset) {
                if !part.is_empty() {
                    iov[n] = std::io::IoSlice::new(part);
                    n += 1;
                    total += part.len();
                }
            }
            offset = 0;
        }
        (n, total)
    }

    /// Octets of the front frame already written.
    pub fn front_written(&self) -> usize {
        self.front_written
    }

    /// Removes `n` whole frames from the front; returns their octets.
    pub fn pop_frames(&mut self, n: usize) -> usize {
        let mut octets = 0;
        for (i, f) in self.frames.drain(..n).enumerate() {
            octets += f.len();
            if i < self.detached {
                self.detached_octets -= f.len();
                self.waiting.give_back(f.len());
            }
        }
        octets -= self.front_written.min(octets);
        self.front_written = 0;
        self.octets -= octets;
        self.detached = self.detached.saturating_sub(n);
        octets
    }

    /// Copies the bodies of the frames not copied yet into exact-size allocations: called when
    /// frames stay queued after a write, so they stop keeping the receive buffers they were
    /// sliced from (a blocked consumer's queue of 1024 frames would otherwise pin up to 1024
    /// burst buffers). Costs nothing while the socket takes every burst. A frame that would
    /// take the octets waiting in all queues past `budget` is dropped instead, with every
    /// frame behind it (unless a stream wrote part of it already); returns how many dropped.
    pub fn detach_waiting(&mut self, budget: usize) -> usize {
        let mut keep = self.frames.len();
        let start = self.detached;
        for (i, f) in (start..).zip(self.frames.range_mut(start..)) {
            if i == 0 && self.front_written > 0 {
                self.waiting.force(f.len());
            } else if !self.waiting.take(f.len(), budget) {
                keep = i;
                break;
            }
            self.detached_octets += f.len();
            f.body = Bytes::copy_from_slice(&f.body);
        }
        let dropped = self.frames.len() - keep;
        for f in self.frames.drain(keep..) {
            self.octets -= f.len();
        }
        self.detached = self.frames.len();
        dropped
    }

    /// Consumes `written` octets of a stream write from the front of the queue.
    pub fn consume_octets(&mut self, mut written: usize) {
        if written >= self.octets {
            // Everything went (the common case: a shared-memory ring or a socket with room
            // takes the whole burst): the frames are dropped where they lie instead of moved
            // out one by one.
            return self.clear();
        }
        self.octets -= written;
        while let Some(front) = self.frames.front() {
            let left = front.len() - self.front_written;
            if written < left {
                self.front_written += written;
                return;
            }
            written -= left;
            self.front_written = 0;
            if let Some(f) = self.frames.pop_front() {
                if self.detached > 0 {
                    self.detached -= 1;
                    self.detached_octets -= f.len();
                    self.waiting.give_back(f.len());
                }
            }
        }
    }

    /// Drops every waiting frame.
    pub fn clear(&mut self) {
        self.frames.clear();
        self.front_written = 0;
        self.octets = 0;
        self.detached = 0;
        self.waiting
            .give_back(std::mem::take(&mut self.detached_octets));
    }
}

impl Drop for OutQueue {
    fn drop(&mut self) {
        self.waiting.give_back(self.detached_octets);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(head: &[u8], body: &'static [u8]) -> OutFrame {
        OutFrame {
            head: SmallVec::from_slice(head),
            body: Bytes::from_static(body),
        }
    }

    #[test]
    fn full_queue_refuses_frames() {
        let mut q = OutQueue::new(2);
        assert!(q.push(frame(b"", b"a")));
        assert!(q.push(frame(b"", b"b")));
        assert!(!q.push(frame(b"", b"c")));
        assert_eq!(q.room(), 0);
    }

    #[test]
    fn partial_stream_writes_resume_mid_frame() {
        let mut q = OutQueue::new(8);
        q.push(frame(b"hh", b"body"));
        q.push(frame(b"", b"xyz"));
        assert_eq!(q.octets(), 9);
        q.consume_octets(3);
        assert_eq!(q.octets(), 6);
        assert_eq!(
            q.frames().0[0].parts_from(q.front_written()),
            [&b""[..], b"ody"]
        );
        q.consume_octets(4);
        assert_eq!(q.len(), 1);
        assert_eq!(q.front_written(), 1);
        q.consume_octets(2);
        assert!(q.is_empty());
        assert_eq!(q.octets(), 0);
    }

    #[test]
    fn a_write_of_everything_waiting_empties_the_queue_and_its_state() {
        let burst = Bytes::from(vec![7u8; 1024]);
        let mut q = OutQueue::new(8);
        q.push(frame(b"hh", b"body"));
        q.push(frame(b"", b"xyz"));
        q.consume_octets(3);
        q.detach_waiting(usize::MAX);
        q.consume_octets(q.octets());
        assert!(q.is_empty());
        assert_eq!((q.octets(), q.front_written()), (0, 0));
        // Nothing counts as copied any more: a new frame waiting is copied out.
        q.push(OutFrame {
            head: SmallVec::new(),
            body: burst.slice(0..10),
        });
        q.detach_waiting(usize::MAX);
        assert_ne!(q.frames().0[0].body.as_ptr(), burst.as_ptr());
    }

    #[test]
    fn waiting_frames_are_copied_out_of_their_buffers_once() {
        let burst = Bytes::from(vec![7u8; 64 * 1024]);
        let inside = |b: &Bytes| burst.as_ptr_range().contains(&b.as_ptr());
        let mut q = OutQueue::new(8);
        let body = |at: usize| OutFrame {
            head: SmallVec::new(),
            body: burst.slice(at..at + 100),
        };
        q.push(body(0));
        q.push(body(100));
        q.detach_waiting(usize::MAX);
        let copied: Vec<*const u8> = q.frames().0.iter().map(|f| f.body.as_ptr()).collect();
        assert!(q
            .frames()
            .0
            .iter()
            .all(|f| !inside(&f.body) && f.body.len() == 100));
        q.push(body(200));
        q.pop_frames(1);
        q.detach_waiting(usize::MAX);
        let (front, back) = q.frames();
        let now: Vec<&OutFrame> = front.iter().chain(back).collect();
        assert_eq!(now[0].body.as_ptr(), copied[1], "not copied twice");
        assert!(!inside(&now[1].body), "the new frame was copied");
        assert_eq!(q.octets(), 200);
    }

    #[test]
    fn waiting_frames_of_all_queues_stay_within_their_budget() {
        let pool: &'static Waiting = Box::leak(Box::default());
        let burst = Bytes::from(vec![7u8; 4096]);
        let body = |at: usize| OutFrame {
            head: SmallVec::from_slice(b"hh"),
            body: burst.slice(at..at + 98),
        };
        // Two blocked faces sharing a budget of three frames.
        let (mut a, mut b) = (OutQueue::sharing(8, pool), OutQueue::sharing(8, pool));
        for i in 0..2 {
            a.push(body(i * 100));
            b.push(body(i * 100));
        }
        assert_eq!(a.detach_waiting(300), 0);
        assert_eq!(pool.octets(), 200);
        // The second face's second frame finds no room: dropped, with none kept behind it.
        assert_eq!(b.detach_waiting(300), 1);
        assert_eq!((b.len(), b.octets(), pool.octets()), (1, 100, 300));
        // A stream that wrote part of its front frame keeps it whatever the budget.
        let mut c = OutQueue::sharing(8, pool);
        c.push(body(0));
        c.push(body(100));
        c.consume_octets(10);
        assert_eq!(c.detach_waiting(300), 1);
        assert_eq!((c.len(), pool.octets()), (1, 400));
        // Written, popped, cleared or dropped, frames give their octets back.
        c.consume_octets(90);
        assert_eq!(pool.octets(), 300);
        a.pop_frames(1);
        assert_eq!(pool.octets(), 200);
        b.clear();
        assert_eq!(pool.octets(), 100);
        drop(a);
        assert_eq!(pool.octets(), 0);
        // Room again: nothing is dropped.
        b.push(body(0));
        assert_eq!(b.detach_waiting(300), 0);
    }

    #[test]
    fn frames_with_a_head_concatenate() {
        assert_eq!(&frame(b"h", b"b").to_bytes()[..], b"hb");
        let f = frame(b"", b"bare");
        assert_eq!(f.to_bytes().as_ptr(), f.body.as_ptr());
    }
}
