//! [`WriteQueue`]: packets bound for a stream socket, written with `writev` so a burst of
//! answers costs one system call and no packet is copied into a send buffer.

use std::io::{self, IoSlice, Write};

use bytes::Bytes;
use kite_packet::LpHeader;

/// Packets gathered into one `writev` (two slices each: header and packet).
const WRITEV_PACKETS: usize = 64;

/// Packets waiting to be written to a stream: their NDNLPv2 headers back to back in one
/// buffer, and each packet (shared, not copied) with the end of its header in that buffer.
#[derive(Debug, Default)]
pub struct WriteQueue {
    headers: Vec<u8>,
    packets: Vec<(usize, Bytes)>,
    octets: usize,
}

impl WriteQueue {
    /// An empty queue.
    pub fn new() -> Self {
        WriteQueue::default()
    }

    /// Queues `packet`, in an LpPacket with `header`'s fields (bare when it has none); returns
    /// the octets queued so far.
    pub fn push(&mut self, header: &LpHeader, packet: Bytes) -> usize {
        self.push_split(header, &[], packet)
    }

    /// Queues a packet given as `head` (copied: a few octets that change per packet, such as
    /// a Data's TLV header and Name) followed by `tail` (shared, not copied: say, a Content
    /// and signature encoded once for many packets), framed as [`WriteQueue::push`] frames
    /// one; returns the octets queued so far. Either part may be empty.
    pub fn push_split(&mut self, header: &LpHeader, head: &[u8], tail: Bytes) -> usize {
        let start = self.headers.len();
        if !header.is_empty() {
            header.encode_header(Some(head.len() + tail.len()), &mut self.headers);
        }
        self.headers.extend_from_slice(head);
        self.octets += self.headers.len() - start + tail.len();
        self.packets.push((self.headers.len(), tail));
        self.octets
    }

    /// Packets queued.
    pub fn len(&self) -> usize {
        self.packets.len()
    }

    /// Octets queued (headers and packets).
    pub fn octets(&self) -> usize {
        self.octets
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.packets.is_empty()
    }

    /// Writes every queued packet to `w`, in order, with as few `writev` calls as it takes;
    /// the queue is empty afterwards, also when a write failed.
    pub fn write_to(&mut self, w: &mut impl Write) -> io::Result<()> {
        let mut header_at = 0;
        let mut result = Ok(());
        for batch in self.packets.chunks(WRITEV_PACKETS) {
            let mut iov = [IoSlice::new(&[]); 2 * WRITEV_PACKETS];
            let mut n = 0;
            for (header_end, packet) in batch {
                if *header_end > header_at {
                    iov[n] = IoSlice::new(&self.headers[header_at..*header_end]);
                    n += 1;
                }
                if !packet.is_empty() {
                    iov[n] = IoSlice::new(packet);
                    n += 1;
                }
                header_at = *header_end;
            }
            result = write_all_vectored(w, &mut iov[..n]);
            if result.is_err() {
                break;
            }
        }
        self.headers.clear();
        self.packets.clear();
        self.octets = 0;
        result
    }
}

/// Writes every slice of `bufs`, in order, however many calls it takes.
fn write_all_vectored(w: &mut impl Write, mut bufs: &mut [IoSlice<'_>]) -> io::Result<()> {
    while !bufs.is_empty() {
        match w.write_vectored(bufs) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => IoSlice::advance_slices(&mut bufs, n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use kite_packet::PitToken;

    /// A writer that takes at most 7 octets per call, as a socket may.
    struct Trickle(Vec<u8>);

    impl Write for Trickle {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            let n = buf.len().min(7);
            self.0.extend_from_slice(&buf[..n]);
            Ok(n)
        }

        fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
            let mut n = 0;
            for b in bufs {
                let took = self.write(b)?;
                n += took;
                if took < b.len() {
                    break;
                }
            }
            Ok(n)
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn packets_come_out_framed_and_in_order_through_short_writes() {
        let mut q = WriteQueue::new();
        let mut expected = Vec::new();
        for i in 0..150u64 {
            let packet = Bytes::from(vec![i as u8; 1 + i as usize % 40]);
            let header = LpHeader {
                pit_token: (i % 3 != 0).then(|| PitToken::from_u64(i)),
                ..LpHeader::default()
            };
            header.put_framed(&packet, &mut expected);
            assert_eq!(q.push(&header, packet), expected.len(), "octets queued");
        }
        assert_eq!(q.len(), 150);
        let mut w = Trickle(Vec::new());
        q.write_to(&mut w).unwrap();
        assert!(w.0 == expected, "every frame whole, in order");
        assert!(q.is_empty());
        assert_eq!(q.push(&LpHeader::default(), Bytes::from_static(b"x")), 1);
    }

    #[test]
    fn split_packets_come_out_as_if_queued_whole() {
        let tail = Bytes::from(vec![0x5A; 3000]);
        let mut q = WriteQueue::new();
        let mut expected = Vec::new();
        for i in 0..40u8 {
            let head = vec![i; usize::from(i % 5)];
            let tail = if i % 7 == 0 {
                Bytes::new()
            } else {
                tail.clone()
            };
            let whole = [&head[..], &tail[..]].concat();
            let header = LpHeader {
                pit_token: (i % 2 == 0).then(|| PitToken::from_u64(u64::from(i))),
                ..LpHeader::default()
            };
            header.put_framed(&whole, &mut expected);
            assert_eq!(q.push_split(&header, &head, tail), expected.len());
        }
        let mut w = Trickle(Vec::new());
        q.write_to(&mut w).unwrap();
        assert!(w.0 == expected, "every frame whole, in order");
    }

    #[test]
    fn a_failed_write_empties_the_queue() {
        struct Broken;
        impl Write for Broken {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::ErrorKind::BrokenPipe.into())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let mut q = WriteQueue::new();
        q.push(&LpHeader::default(), Bytes::from_static(b"abc"));
        assert!(q.write_to(&mut Broken).is_err());
        assert!(q.is_empty());
    }
}
