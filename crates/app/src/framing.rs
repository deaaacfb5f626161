//! TLV stream framing for applications and tools: a byte stream (Unix or TCP socket, a
//! shared-memory ring, or a datagram or WebSocket link seen as one) carries whole top-level TLV
//! elements back to back; [`FrameReader`] buffers reads until one element is complete. It cuts
//! elements with the forwarder's own [`Framer`] (same bounds, same header rules), and every
//! reader of a forwarder connection, in this crate and in the `kite` tools, goes through it.

use std::io::{self, Read};
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;

use bytes::Bytes;
use kite_link::framing::{Framer, FramingError};

use crate::error::ClientError;

/// The largest frame accepted: a largest packet (NFD's `MAX_NDN_PACKET_SIZE`, 8800 octets)
/// plus room for its NDNLPv2 header, as a forwarder's stream faces accept.
pub use kite_link::framing::MAX_FRAME_LEN;

/// What a [`FrameReader`] reads from: any byte stream, read into room zeroed first, or one
/// that can read into the frame buffer's uninitialized room itself (a socket by `read(2)`, a
/// shared-memory ring by copying), which spares 64 KiB of zeroes per read.
pub trait Source: Read {
    /// One read into `framer`'s buffer, of at most [`Framer::read_room`] octets; 0: the stream
    /// ended.
    fn read_into(&mut self, framer: &mut Framer) -> io::Result<usize> {
        read_zeroed(self, framer)
    }
}

/// One read of `src` into `framer`'s buffer, into room zeroed first.
pub(crate) fn read_zeroed<R: Read + ?Sized>(src: &mut R, framer: &mut Framer) -> io::Result<usize> {
    let room = framer.read_room();
    let buf = framer.buffer();
    let at = buf.len();
    buf.resize(at + room, 0);
    let read = src.read(&mut buf[at..]);
    buf.truncate(at + *read.as_ref().unwrap_or(&0));
    read
}

impl Source for UnixStream {
    fn read_into(&mut self, framer: &mut Framer) -> io::Result<usize> {
        Ok(framer.read_from(self.as_fd())?.read)
    }
}

/// Splits a byte stream into whole TLV elements. Reads fill the buffer's free room while a
/// largest frame still fits ([`Framer::read_room`]), so packets the application keeps share
/// one buffer rather than pinning a fresh 64 KiB each.
#[derive(Debug, Default)]
pub struct FrameReader {
    framer: Framer,
}

impl FrameReader {
    /// A reader with an empty buffer.
    pub fn new() -> Self {
        FrameReader::default()
    }

    /// Whether octets were read that no frame has returned yet.
    pub fn has_buffered(&self) -> bool {
        self.framer.pending() > 0
    }

    /// Every octet read that no frame has returned yet, leaving the buffer empty.
    pub fn take_buffered(&mut self) -> Bytes {
        self.framer.buffer().split().freeze()
    }

    /// The next whole element when it is already buffered (no read). An element longer than
    /// [`MAX_FRAME_LEN`] or a malformed TLV header is an error: the stream cannot be
    /// resynchronized after it.
    pub fn buffered_frame(&mut self) -> Result<Option<Bytes>, ClientError> {
        self.framer.next_frame().map_err(|e| match e {
            FramingError::TooLong(len) => ClientError::FrameTooLarge { len },
            FramingError::Malformed(e) => ClientError::Decode(e),
        })
    }

    /// One read from `src` into the buffer; 0: the stream ended. For a caller that keeps
    /// time between reads (a read timeout is the source's error, as `read` gives it).
    pub fn fill(&mut self, src: &mut impl Source) -> io::Result<usize> {
        src.read_into(&mut self.framer)
    }

    /// The next whole element, reading from `src` as often as needed. End of stream is an
    /// `UnexpectedEof` I/O error; a frame longer than [`MAX_FRAME_LEN`] is an error (the
    /// stream cannot be resynchronized after it).
    pub fn next_frame(&mut self, src: &mut impl Source) -> Result<Bytes, ClientError> {
        loop {
            if let Some(frame) = self.buffered_frame()? {
                return Ok(frame);
            }
            if self.fill(src)? == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the forwarder closed the connection",
                )
                .into());
            }
        }
    }
}

/// Whether `datagram` is exactly one whole TLV element within the frame bounds.
pub(crate) fn is_one_element(datagram: &[u8]) -> bool {
    kite_link::framing::element_len(datagram) == Ok(Some(datagram.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A source that hands out its data in pieces of at most `step` octets.
    struct Trickle {
        data: Vec<u8>,
        at: usize,
        step: usize,
    }

    impl Source for Trickle {}

    impl Read for Trickle {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let n = self.step.min(out.len()).min(self.data.len() - self.at);
            out[..n].copy_from_slice(&self.data[self.at..self.at + n]);
            self.at += n;
            Ok(n)
        }
    }

    #[test]
    fn splits_back_to_back_elements_read_one_octet_at_a_time() {
        let mut big = vec![6, 253, 0x01, 0x2C];
        big.extend(std::iter::repeat_n(7u8, 300));
        let mut data = vec![5, 2, 1, 2];
        data.extend_from_slice(&big);
        data.extend_from_slice(&[100, 0]);
        let mut src = Trickle {
            data,
            at: 0,
            step: 1,
        };
        let mut r = FrameReader::new();
        assert_eq!(&r.next_frame(&mut src).unwrap()[..], &[5, 2, 1, 2]);
        assert_eq!(&r.next_frame(&mut src).unwrap()[..], &big[..]);
        assert_eq!(&r.next_frame(&mut src).unwrap()[..], &[100, 0]);
        match r.next_frame(&mut src) {
            Err(ClientError::Io(e)) => assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof),
            other => panic!("expected end of stream, got {other:?}"),
        }
    }

    /// Packets an application keeps, read one at a time from a socket, share one buffer
    /// instead of pinning 64 KiB each.
    #[test]
    fn frames_read_one_at_a_time_share_one_buffer() {
        use std::io::Write;
        let (mut peer, mut ours) = UnixStream::pair().unwrap();
        let frame = [6u8, 98].into_iter().chain([0xab; 98]).collect::<Vec<u8>>();
        let mut r = FrameReader::new();
        let kept: Vec<Bytes> = (0..100)
            .map(|_| {
                peer.write_all(&frame).unwrap();
                r.next_frame(&mut ours).unwrap()
            })
            .collect();
        let contiguous = kept
            .windows(2)
            .filter(|w| w[1].as_ptr() == w[0].as_ptr().wrapping_add(w[0].len()))
            .count();
        assert_eq!(contiguous, 99, "each frame follows the last in one buffer");
        assert!(kept.iter().all(|f| f[..] == frame[..]));
        drop(peer);
        assert!(matches!(
            r.next_frame(&mut ours),
            Err(ClientError::Io(e)) if e.kind() == io::ErrorKind::UnexpectedEof
        ));
    }

    #[test]
    fn oversized_frame_is_refused_before_it_is_read() {
        let mut src = Trickle {
            data: vec![6, 254, 0, 1, 0, 0],
            at: 0,
            step: 64,
        };
        assert!(matches!(
            FrameReader::new().next_frame(&mut src),
            Err(ClientError::FrameTooLarge { len: 65542 })
        ));
    }
}
