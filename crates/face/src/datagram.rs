//! What datagram channels (UDP, Ethernet) hand to their faces: a [`Datagram`] per frame read,
//! copied out of the reusable `recvmmsg` slots into an [`Arena`], back to back in one growing
//! buffer, so the frames handed on are exact-size slices of one allocation; and the way their
//! faces write, [`flush_queue`]: one `sendmmsg` per burst of queued frames (runs of equal-length
//! UDP datagrams segmented by the kernel).

use std::io;
use std::net::SocketAddr;
use std::os::fd::RawFd;

use bytes::{Bytes, BytesMut};

use crate::counters::FaceCounters;
use crate::face::{FaceError, Flushed};
use crate::props::FaceId;
use crate::queue::OutQueue;
use crate::reassembly::Endpoint;
use crate::sys::segment::{send_segmented, Segmenter, SEGMENTED_BATCH};
use crate::sys::{self, BATCH};

/// A frame a channel received for an existing (or just created) face.
#[derive(Debug, Clone)]
pub struct Datagram {
    /// The face it belongs to: pass it to that face's [`Face::receive_frame`](crate::Face::receive_frame).
    pub face: FaceId,
    /// Its sender, as reassembly tells senders apart ([`Endpoint::Peer`] on a
    /// point-to-point face).
    pub from: Endpoint,
    /// The frame (an NDNLPv2 frame or a bare packet); empty for a datagram the channel
    /// could not read whole, which the face counts as malformed.
    pub frame: Bytes,
}

impl Datagram {
    /// What a channel hands `face` for a datagram from `from` it had to cut (longer than a
    /// receive slot): an empty frame, so the face counts the drop too.
    pub(crate) fn cut(face: FaceId, from: Endpoint) -> Self {
        Datagram {
            face,
            from,
            frame: Bytes::new(),
        }
    }
}

/// Octets the arena grows by.
const ARENA_CHUNK: usize = 256 * 1024;

/// A receive arena (one per socket that reads datagrams): each datagram is copied out of the
/// reusable receive slots into one growing buffer, so the frames handed on are exact-size
/// slices that share an allocation.
#[derive(Debug, Default)]
pub struct Arena {
    buf: BytesMut,
}

impl Arena {
    /// A copy of `d` that shares its allocation with the copies before it.
    pub fn copy(&mut self, d: &[u8]) -> Bytes {
        if self.buf.capacity() - self.buf.len() < d.len() {
            self.buf.reserve(ARENA_CHUNK.max(d.len()));
        }
        self.buf.extend_from_slice(d);
        self.buf.split().freeze()
    }
}

/// Writes `q` with `sendmmsg` to `dest` (or the socket's bound peer), each frame sent as
/// `header`, the frame, and `padding(frame length)`, until the queue is empty or the socket is
/// full. With `seg` (UDP), runs of equal-length frames go out as segmented messages. A send
/// error other than "full" drops the frame that caused it and is returned.
pub(crate) fn flush_queue(
    fd: RawFd,
    dest: Option<SocketAddr>,
    header: &[u8],
    padding: fn(usize) -> &'static [u8],
    mut seg: Option<&mut Segmenter>,
    q: &mut OutQueue,
    c: &mut FaceCounters,
) -> Result<Flushed, FaceError> {
    while !q.is_empty() {
        let res = {
            let (front, _) = q.frames();
            let mut frames: [[&[u8]; 4]; SEGMENTED_BATCH] = [[&[]; 4]; SEGMENTED_BATCH];
            let n = front.len().min(SEGMENTED_BATCH);
            for (slot, f) in frames.iter_mut().zip(front) {
                let [head, body] = f.parts_from(0);
                *slot = [header, head, body, padding(f.len())];
            }
            match seg.as_deref_mut() {
                Some(seg) => send_segmented(fd, dest, &frames[..n], seg),
                None => sys::send_mmsg(fd, dest, &frames[..n.min(BATCH)]),
            }
        };
        match res {
            Ok(sent) => c.n_out_bytes += q.pop_frames(sent) as u64,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(Flushed::Blocked),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                q.pop_frames(1);
                return Err(e.into());
            }
        }
    }
    Ok(Flushed::Done)
}

/// No padding: for links without a minimum frame size.
pub(crate) fn no_padding(_: usize) -> &'static [u8] {
    &[]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arena_hands_out_exact_slices_of_one_allocation() {
        let mut a = Arena::default();
        let x = a.copy(b"abc");
        let y = a.copy(b"de");
        assert_eq!(&x[..], b"abc");
        assert_eq!(&y[..], b"de");
        assert_eq!(
            y.as_ptr(),
            x.as_ptr().wrapping_add(3),
            "contiguous, no new allocation"
        );
    }
}
