//! What datagram channels (UDP, Ethernet) hand to their faces: a [`Datagram`] per frame read,
//! copied out of the reusable `recvmmsg` slots into an [`Arena`], back to back in one growing
//! buffer, so the frames handed on are exact-size slices of one allocation.

use bytes::{Bytes, BytesMut};

use crate::props::FaceId;
use crate::reassembly::Endpoint;

/// A frame a channel received for an existing (or just created) face.
#[derive(Debug, Clone)]
pub struct Datagram {
    /// The face it belongs to: pass it to that face's [`Face::receive_frame`](crate::Face::receive_frame).
    pub face: FaceId,
    /// Its sender, as reassembly tells senders apart ([`Endpoint::Peer`] on a
    /// point-to-point face).
    pub from: Endpoint,
    /// The frame (an NDNLPv2 frame or a bare packet).
    pub frame: Bytes,
}

/// Octets the arena grows by.
const ARENA_CHUNK: usize = 256 * 1024;

/// A receive arena (one per socket that reads datagrams).
#[derive(Debug, Default)]
pub(crate) struct Arena {
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
