//! Finding TLV element boundaries in a byte stream (Unix and TCP faces).
//!
//! Reads append to one large buffer; each complete element is split off the front and frozen,
//! so the packets handed on are slices of the buffer that was read into (no copy). The partial
//! element at the end stays for the next read. An element longer than [`MAX_FRAME_LEN`] or a
//! malformed TLV header is a framing error, which closes the face (NFD does the same).

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, RawFd};

use bytes::{Bytes, BytesMut};
use kite_packet::varnum::read_varnum;
use kite_packet::DecodeError;
use thiserror::Error;

/// NFD's MAX_NDN_PACKET_SIZE: the largest network packet.
pub const MAX_NDN_PACKET_SIZE: usize = 8800;

/// Room for an NDNLPv2 header (PIT token, congestion mark, …) around a largest packet.
pub const LP_HEADROOM: usize = 128;

/// The largest stream element accepted: a largest packet plus its LP header.
pub const MAX_FRAME_LEN: usize = MAX_NDN_PACKET_SIZE + LP_HEADROOM;

/// Octets asked of the socket per read into a fresh buffer.
pub const READ_CHUNK: usize = 64 * 1024;

/// Spare room below which a read starts a fresh buffer: one largest frame, so a read never
/// stops short of completing one.
pub const MIN_READ_ROOM: usize = MAX_FRAME_LEN;

/// Why a stream is no longer framable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum FramingError {
    /// The TLV-TYPE or TLV-LENGTH is malformed (non-minimal, or TLV-TYPE 0).
    #[error("malformed TLV header: {0}")]
    Malformed(DecodeError),
    /// The element announces more octets than [`MAX_FRAME_LEN`].
    #[error("element of {0} octets exceeds the maximum frame length")]
    TooLong(u64),
}

/// What one [`Framer::read_from`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadCount {
    /// Octets read (0: end of stream).
    pub read: usize,
    /// Octets asked for: a shorter read means the socket had no more.
    pub asked: usize,
}

/// The receive buffer of a stream face.
#[derive(Debug, Default)]
pub struct Framer {
    buf: BytesMut,
}

impl Framer {
    /// An empty framer.
    pub fn new() -> Self {
        Self::default()
    }

    /// The buffer reads append to.
    pub fn buffer(&mut self) -> &mut BytesMut {
        &mut self.buf
    }

    /// Makes room for the next read and returns how many octets to ask of the socket: the
    /// buffer's spare room while at least [`MIN_READ_ROOM`] is left, else a fresh
    /// [`READ_CHUNK`]. The packets split off earlier still share the buffer, so making room
    /// allocates a new one (unless they are all gone); demanding a whole chunk for every read
    /// would allocate 64 KiB for each short read of a few Interests.
    pub fn read_room(&mut self) -> usize {
        let spare = self.buf.capacity() - self.buf.len();
        if spare >= MIN_READ_ROOM {
            return spare.min(READ_CHUNK);
        }
        self.buf.reserve(READ_CHUNK);
        READ_CHUNK
    }

    /// Reads once from `fd` into the buffer's spare room ([`Framer::read_room`]), which is not
    /// zeroed first (zeroing 64 KiB per read cost a stream reader ≈2 % of the machine at
    /// 8000-octet Data). A blocking socket's read timeout or a non-blocking socket with nothing
    /// to read is `WouldBlock`.
    pub fn read_from(&mut self, fd: BorrowedFd<'_>) -> io::Result<ReadCount> {
        let asked = self.read_room();
        let read = read_into(fd.as_raw_fd(), &mut self.buf, asked)?;
        Ok(ReadCount { read, asked })
    }

    /// Octets held that do not yet form a complete element.
    pub fn pending(&self) -> usize {
        self.buf.len()
    }

    /// The next complete element, split off the buffer; `Ok(None)` when more octets are needed.
    pub fn next_frame(&mut self) -> Result<Option<Bytes>, FramingError> {
        let Some(total) = element_len(&self.buf)? else {
            return Ok(None);
        };
        if self.buf.len() < total {
            return Ok(None);
        }
        Ok(Some(self.buf.split_to(total).freeze()))
    }
}

/// The length of the element at the start of `buf` (header and value), once its header is
/// complete; checks the bounds as soon as the TLV-LENGTH is known.
pub fn element_len(buf: &[u8]) -> Result<Option<usize>, FramingError> {
    let (typ, tlen) = match read_varnum(buf) {
        Ok(v) => v,
        Err(DecodeError::Truncated) => return Ok(None),
        Err(e) => return Err(FramingError::Malformed(e)),
    };
    if typ == 0 {
        return Err(FramingError::Malformed(DecodeError::ZeroType));
    }
    let (len, llen) = match read_varnum(&buf[tlen..]) {
        Ok(v) => v,
        Err(DecodeError::Truncated) => return Ok(None),
        Err(e) => return Err(FramingError::Malformed(e)),
    };
    // TLV-LENGTH may be as large as 2^64 - 1: the header's octets must not overflow it.
    let total = ((tlen + llen) as u64).saturating_add(len);
    if total > MAX_FRAME_LEN as u64 {
        return Err(FramingError::TooLong(total));
    }
    Ok(Some(total as usize))
}

/// Reads at most `max` octets from `fd` into `buf`'s spare capacity, growing it as needed.
/// Returns the octets read (0: end of stream).
#[allow(unsafe_code)]
fn read_into(fd: RawFd, buf: &mut BytesMut, max: usize) -> io::Result<usize> {
    buf.reserve(max);
    let spare = buf.spare_capacity_mut();
    let len = spare.len().min(max);
    // SAFETY: `spare` is writable memory of at least `len` octets owned by `buf`; `read`
    // writes at most `len` octets into it and does not keep the pointer.
    let n = unsafe { libc::read(fd, spare.as_mut_ptr().cast(), len) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    let n = n as usize;
    // SAFETY: the kernel initialized the first `n` (<= len) octets of the spare capacity.
    unsafe { buf.set_len(buf.len() + n) };
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::BufMut;
    use kite_packet::varnum::put_varnum;
    use proptest::prelude::*;

    fn element(typ: u64, len: usize, fill: u8) -> Vec<u8> {
        let mut v = Vec::new();
        put_varnum(&mut v, typ);
        put_varnum(&mut v, len as u64);
        v.resize(v.len() + len, fill);
        v
    }

    proptest! {
        #[test]
        fn elements_come_out_whole_wherever_the_stream_is_cut(
            lens in proptest::collection::vec(0usize..3000, 1..12),
            cuts in proptest::collection::vec(1usize..5000, 1..40),
        ) {
            let elements: Vec<Vec<u8>> = lens
                .iter()
                .enumerate()
                .map(|(i, &l)| element(5 + (i as u64 % 2), l, i as u8))
                .collect();
            let stream: Vec<u8> = elements.concat();
            let mut f = Framer::new();
            let mut got = Vec::new();
            let mut pos = 0;
            for cut in cuts.iter().cycle() {
                if pos == stream.len() {
                    break;
                }
                let end = (pos + cut).min(stream.len());
                f.buffer().put_slice(&stream[pos..end]);
                pos = end;
                while let Some(e) = f.next_frame().unwrap() {
                    got.push(e.to_vec());
                }
            }
            prop_assert_eq!(got, elements);
            prop_assert_eq!(f.pending(), 0);
        }
    }

    #[test]
    fn read_into_appends_after_existing_octets() {
        use std::os::fd::AsRawFd;
        let (mut a, b) = std::os::unix::net::UnixStream::pair().unwrap();
        std::io::Write::write_all(&mut a, b"hello").unwrap();
        let mut buf = BytesMut::from(&b"> "[..]);
        assert_eq!(read_into(b.as_raw_fd(), &mut buf, 3).unwrap(), 3);
        assert_eq!(&buf[..], b"> hel");
        drop(a);
        assert_eq!(read_into(b.as_raw_fd(), &mut buf, 64).unwrap(), 2);
        assert_eq!(read_into(b.as_raw_fd(), &mut buf, 64).unwrap(), 0);
    }

    #[test]
    fn frames_share_the_read_buffer() {
        let mut f = Framer::new();
        f.buffer().put_slice(&[5, 1, 0xaa, 6, 1]);
        let base = f.buffer().as_ptr();
        let e = f.next_frame().unwrap().unwrap();
        assert_eq!(e.as_ptr(), base, "not copied");
        assert_eq!(f.next_frame(), Ok(None), "partial element waits");
        assert_eq!(f.pending(), 2);
    }

    #[test]
    fn short_reads_fill_the_buffer_before_a_new_one_is_allocated() {
        let mut f = Framer::new();
        assert_eq!(f.read_room(), READ_CHUNK);
        let base = f.buffer().as_ptr();
        f.buffer().put_slice(&element(5, 98, 1));
        let first = f.next_frame().unwrap().unwrap();
        let room = f.read_room();
        assert!((MIN_READ_ROOM..READ_CHUNK).contains(&room), "{room}");
        f.buffer().put_slice(&element(5, 98, 2));
        let second = f.next_frame().unwrap().unwrap();
        assert_eq!(second.as_ptr(), base.wrapping_add(100), "same buffer");
        let left = f.read_room();
        f.buffer().put_slice(&vec![0; left - MIN_READ_ROOM + 1]);
        assert_eq!(
            f.read_room(),
            READ_CHUNK,
            "too little room left: a fresh chunk"
        );
        assert!(f.buffer().capacity() - f.buffer().len() >= READ_CHUNK);
        assert_eq!((first[2], second[2]), (1, 2), "earlier frames untouched");
    }

    #[test]
    fn oversize_and_malformed_headers_are_errors() {
        let mut f = Framer::new();
        f.buffer().put_slice(&element(6, MAX_FRAME_LEN - 3, 0)[..4]);
        assert_eq!(
            f.next_frame(),
            Err(FramingError::TooLong(MAX_FRAME_LEN as u64 + 1))
        );
        let mut f = Framer::new();
        f.buffer().put_slice(&element(6, MAX_FRAME_LEN - 4, 0));
        assert_eq!(f.next_frame().unwrap().unwrap().len(), MAX_FRAME_LEN);
        let mut f = Framer::new();
        f.buffer().put_slice(&[6, 253, 0, 5]);
        assert!(matches!(f.next_frame(), Err(FramingError::Malformed(_))));
        let mut f = Framer::new();
        f.buffer().put_slice(&[0, 0]);
        assert!(matches!(f.next_frame(), Err(FramingError::Malformed(_))));
        let mut f = Framer::new();
        f.buffer().put_slice(&[6, 255, 0xff]);
        assert_eq!(f.next_frame(), Ok(None), "truncated header waits");
        // The largest TLV-LENGTH: its header's octets must not overflow the total.
        let mut f = Framer::new();
        f.buffer()
            .put_slice(&[6, 255, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);
        assert_eq!(f.next_frame(), Err(FramingError::TooLong(u64::MAX)));
    }
}
