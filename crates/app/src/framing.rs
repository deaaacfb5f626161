//! TLV stream framing: a byte stream (Unix or TCP socket) carries whole top-level TLV elements
//! back to back; [`FrameReader`] buffers reads until one element is complete.

use std::io::{self, Read};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::net::UnixStream;

use bytes::Bytes;
use kite_face::framing::Framer;

use crate::error::ClientError;

/// The largest frame accepted: a largest packet (NFD's `MAX_NDN_PACKET_SIZE`, 8800 octets)
/// plus room for its NDNLPv2 header, as a forwarder's stream faces accept.
pub use kite_face::framing::MAX_FRAME_LEN;

/// What a [`FrameReader`] reads from: any byte stream, read into zeroed room, or a socket
/// whose descriptor it may read into uninitialized room (no 64 KiB of zeroes per read).
pub trait Source: Read {
    /// The socket to read with `read(2)` into uninitialized memory, if this is one.
    fn fd(&self) -> Option<BorrowedFd<'_>> {
        None
    }
}

impl Source for UnixStream {
    fn fd(&self) -> Option<BorrowedFd<'_>> {
        Some(self.as_fd())
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

    /// The next whole element when it is already buffered (no read).
    pub fn buffered_frame(&mut self) -> Result<Option<Bytes>, ClientError> {
        let buf = self.framer.buffer();
        Ok(complete_len(buf)?.map(|len| buf.split_to(len).freeze()))
    }

    /// The next whole element, reading from `src` as often as needed. End of stream is an
    /// `UnexpectedEof` I/O error; a frame longer than [`MAX_FRAME_LEN`] is a decode error (the
    /// stream cannot be resynchronized after it).
    pub fn next_frame(&mut self, src: &mut impl Source) -> Result<Bytes, ClientError> {
        loop {
            if let Some(frame) = self.buffered_frame()? {
                return Ok(frame);
            }
            let n = match src.fd() {
                Some(fd) => self.framer.read_from(fd)?.read,
                None => self.read_zeroed(src)?,
            };
            if n == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the forwarder closed the connection",
                )
                .into());
            }
        }
    }

    /// One read of a source without a descriptor, into room zeroed first.
    fn read_zeroed(&mut self, src: &mut impl Read) -> io::Result<usize> {
        let room = self.framer.read_room();
        let buf = self.framer.buffer();
        let at = buf.len();
        buf.resize(at + room, 0);
        let read = src.read(&mut buf[at..]);
        buf.truncate(at + *read.as_ref().unwrap_or(&0));
        read
    }
}

/// The length of the element that starts `buf` (whether or not all of it is there), when its
/// header is whole and it is not too large.
pub(crate) fn element_len(buf: &[u8]) -> Option<usize> {
    let (_, type_len) = varnum(buf)?;
    let (value_len, len_len) = varnum(&buf[type_len..])?;
    usize::try_from(value_len)
        .ok()?
        .checked_add(type_len + len_len)
        .filter(|&t| t <= MAX_FRAME_LEN)
}

/// The length of the whole element at the start of `buf` when it is entirely buffered.
fn complete_len(buf: &[u8]) -> Result<Option<usize>, ClientError> {
    let Some((_, type_len)) = varnum(buf) else {
        return Ok(None);
    };
    let Some((value_len, len_len)) = varnum(&buf[type_len..]) else {
        return Ok(None);
    };
    let total = usize::try_from(value_len)
        .ok()
        .and_then(|v| v.checked_add(type_len + len_len))
        .filter(|&t| t <= MAX_FRAME_LEN)
        .ok_or(ClientError::FrameTooLarge { len: value_len })?;
    Ok((buf.len() >= total).then_some(total))
}

/// A VAR-NUMBER at the start of `buf` and its size, or `None` when it is not all there yet.
fn varnum(buf: &[u8]) -> Option<(u64, usize)> {
    let first = *buf.first()?;
    let size = match first {
        0..=252 => return Some((u64::from(first), 1)),
        253 => 3,
        254 => 5,
        255 => 9,
    };
    let bytes = buf.get(1..size)?;
    Some((bytes.iter().fold(0, |n, &b| n << 8 | u64::from(b)), size))
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
            Err(ClientError::FrameTooLarge { len: 65536 })
        ));
    }
}
