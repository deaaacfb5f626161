//! The stream transport (Unix and TCP faces): large reads cut into TLV elements, `writev`
//! of the output queue. An accepted Unix connection may be offered shared memory: its
//! first packet may ask for it, and the transport then hands back the one that replaces it
//! ([`crate::shm`]).

use std::io::{self, IoSlice, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};

use bytes::Bytes;

use crate::queue::OutQueue;
use crate::shm::ShmIo;
use crate::transport::{
    FaceError, Flushed, Progress, Replace, RxFrame, Source, Transport, Upgrade,
};
use crate::uri::FaceUri;
use kite_link::framing::Framer;
use kite_link::reassembly::Endpoint;
use kite_link::FaceCounters;

/// Reads per receive burst before the face yields to others: 128 KiB, sixteen 8000-octet
/// Data. Fewer, smaller bursts let the I/O thread forward and write what it read sooner
/// (measured through `kite run` at 8000 B: 4 reads 183 k exchanges/s, 2 reads 192 k; 1000 B
/// unchanged).
const READS_PER_BURST: usize = 2;

/// Frames gathered into one `writev`.
const WRITEV_FRAMES: usize = 64;

/// A connected stream socket.
#[derive(Debug)]
pub(crate) enum Conn {
    /// A Unix stream socket.
    Unix(mio::net::UnixStream),
    /// A TCP connection.
    Tcp(mio::net::TcpStream),
}

impl AsFd for Conn {
    fn as_fd(&self) -> BorrowedFd<'_> {
        match self {
            Conn::Unix(s) => s.as_fd(),
            Conn::Tcp(s) => s.as_fd(),
        }
    }
}

/// A stream socket and its receive buffer.
#[derive(Debug)]
pub(crate) struct StreamIo {
    conn: Conn,
    framer: Framer,
    remote: FaceUri,
    local: FaceUri,
    /// The ring size to offer while the connection has received nothing yet (see
    /// [`crate::shm`]; accepted Unix connections only).
    shm_offer: Option<usize>,
    /// The first packet, which asked for shared memory: [`Transport::take_upgrade`]
    /// answers it.
    shm_request: Option<Bytes>,
}

impl StreamIo {
    /// Wraps a non-blocking stream socket between `local` and `remote`.
    pub fn new(conn: Conn, remote: FaceUri, local: FaceUri) -> Self {
        StreamIo {
            conn,
            framer: Framer::new(),
            remote,
            local,
            shm_offer: None,
            shm_request: None,
        }
    }

    /// Offers shared memory with rings of `ring` octets if the first packet asks for it.
    pub fn offering_shm(mut self, ring: Option<usize>) -> Self {
        self.shm_offer = ring;
        self
    }

    pub fn raw_fd(&self) -> RawFd {
        self.conn.as_fd().as_raw_fd()
    }

    /// A second handle on a Unix connection (for the shared-memory face that replaces this
    /// one); other connections are `Unsupported`.
    pub fn unix_clone(&self) -> io::Result<mio::net::UnixStream> {
        match &self.conn {
            Conn::Unix(s) => Ok(mio::net::UnixStream::from_std(
                std::os::unix::net::UnixStream::from(s.as_fd().try_clone_to_owned()?),
            )),
            Conn::Tcp(_) => Err(io::ErrorKind::Unsupported.into()),
        }
    }

    /// Hands at most `budget` complete elements to `deliver`: first those a previous burst
    /// read but had no budget for, then from up to [`READS_PER_BURST`] reads. A read shorter
    /// than asked means the socket is drained (readiness fires again on new data), unless
    /// `hangup` says the peer already closed: its end of stream raises no new readiness, so
    /// the stream is then read until the read that returns 0. Elements beyond the budget stay
    /// in the receive buffer (bounded like any partial element) and the socket is not read
    /// while they wait: that is how a face whose packets the forwarder has no room for pushes
    /// back on its sender (`Progress::More`: call again, with a budget, later).
    pub fn recv_burst(
        &mut self,
        hangup: bool,
        budget: usize,
        mut deliver: impl FnMut(Bytes),
    ) -> Result<Progress, FaceError> {
        let mut left = budget;
        if !deliver_buffered(&mut self.framer, &mut left, &mut deliver)? {
            return Ok(Progress::More);
        }
        let fd = self.conn.as_fd();
        for _ in 0..READS_PER_BURST {
            let filled = match self.framer.read_from(fd) {
                Ok(f) if f.read == 0 => return Err(FaceError::Closed),
                Ok(f) => f,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(Progress::Drained),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e.into()),
            };
            if !deliver_buffered(&mut self.framer, &mut left, &mut deliver)? {
                return Ok(Progress::More);
            }
            if filled.read < filled.asked && !hangup {
                return Ok(Progress::Drained);
            }
        }
        Ok(Progress::More)
    }

    /// Writes the queue with `writev` calls until it is empty or the socket is full.
    pub fn flush(&mut self, q: &mut OutQueue, c: &mut FaceCounters) -> Result<Flushed, FaceError> {
        loop {
            let mut iov = [IoSlice::new(&[]); 2 * WRITEV_FRAMES];
            let (n_iov, total) = q.gather(&mut iov);
            let res = match &mut self.conn {
                Conn::Unix(s) => s.write_vectored(&iov[..n_iov]),
                Conn::Tcp(s) => s.write_vectored(&iov[..n_iov]),
            };
            match res {
                Ok(0) => return Err(FaceError::Closed),
                Ok(n) => {
                    c.n_out_bytes += n as u64;
                    q.consume_octets(n);
                    if q.is_empty() {
                        return Ok(Flushed::Done);
                    }
                    if n < total {
                        return Ok(Flushed::Blocked);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(Flushed::Blocked),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.into()),
            }
        }
    }
}

impl Transport for StreamIo {
    fn remote_uri(&self) -> FaceUri {
        self.remote.clone()
    }

    fn local_uri(&self) -> FaceUri {
        self.local.clone()
    }

    fn mtu(&self) -> Option<usize> {
        None
    }

    fn sources(&self) -> [Option<Source>; 2] {
        let rw = mio::Interest::READABLE | mio::Interest::WRITABLE;
        [Some((self.raw_fd(), rw)), None]
    }

    fn recv_burst(
        &mut self,
        hangup: bool,
        budget: usize,
        rx: &mut Vec<RxFrame>,
    ) -> Result<Progress, FaceError> {
        let frame = |frame| RxFrame {
            from: Endpoint::Peer,
            frame,
            own_buffer: 0,
        };
        if self.shm_offer.is_none() {
            return StreamIo::recv_burst(self, hangup, budget, |f| rx.push(frame(f)));
        }
        let mut offer = self.shm_offer;
        let mut request = self.shm_request.take();
        let progress = StreamIo::recv_burst(self, hangup, budget, |f| {
            if request.is_some() {
                // The client waits for the answer: nothing follows the request.
            } else if kite_shm::is_request(&f) {
                request = Some(f);
            } else {
                offer = None;
                rx.push(frame(f))
            }
        });
        (self.shm_offer, self.shm_request) = (offer, request);
        progress
    }

    fn flush(&mut self, q: &mut OutQueue, c: &mut FaceCounters) -> Result<Flushed, FaceError> {
        StreamIo::flush(self, q, c)
    }

    fn pushes_back(&self) -> bool {
        true
    }

    fn upgrade_requested(&self) -> bool {
        self.shm_request.is_some()
    }

    fn take_upgrade(&mut self) -> Option<Upgrade> {
        let (Some(request), Some(ring)) = (self.shm_request.take(), self.shm_offer.take()) else {
            return None;
        };
        let (remote, local) = (self.remote.clone(), self.local.clone());
        let replace = self.unix_clone().map(|conn| -> Replace {
            Box::new(move || {
                let shm = ShmIo::offer(conn, ring, remote, local)?;
                Ok(Box::new(shm) as Box<dyn Transport>)
            })
        });
        Some(Upgrade { request, replace })
    }
}

/// Delivers complete elements from the receive buffer while `left` allows; false when the
/// budget ran out (elements may remain).
fn deliver_buffered(
    framer: &mut Framer,
    left: &mut usize,
    deliver: &mut impl FnMut(Bytes),
) -> Result<bool, FaceError> {
    while *left > 0 {
        match framer.next_frame()? {
            Some(frame) => {
                deliver(frame);
                *left -= 1;
            }
            None => return Ok(true),
        }
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A slow producer's packets, each read on its own and all kept (as a Content Store keeps
    /// them), share the receive buffer instead of pinning 64 KiB each.
    #[test]
    fn packets_read_one_at_a_time_share_one_buffer() {
        let (mut peer, ours) = std::os::unix::net::UnixStream::pair().unwrap();
        ours.set_nonblocking(true).unwrap();
        let conn = Conn::Unix(mio::net::UnixStream::from_std(ours));
        let mut io = StreamIo::new(conn, FaceUri::Fd(0), FaceUri::Fd(0));
        let frame = [6u8, 98].into_iter().chain([0xab; 98]).collect::<Vec<u8>>();
        let mut kept: Vec<Bytes> = Vec::new();
        for _ in 0..100 {
            peer.write_all(&frame).unwrap();
            let progress = io.recv_burst(false, usize::MAX, |f| kept.push(f)).unwrap();
            assert_eq!(progress, Progress::Drained);
        }
        assert_eq!(kept.len(), 100);
        let contiguous = kept
            .windows(2)
            .filter(|w| w[1].as_ptr() == w[0].as_ptr().wrapping_add(w[0].len()))
            .count();
        assert_eq!(contiguous, 99, "each packet follows the last in one buffer");
        assert!(kept.iter().all(|f| f[..] == frame[..]));
    }

    /// Elements beyond the budget wait in the receive buffer, and the socket is not read again
    /// until they are delivered: what the peer sends meanwhile stays in the kernel.
    #[test]
    fn a_burst_delivers_no_more_than_its_budget_and_keeps_the_rest() {
        let (mut peer, ours) = std::os::unix::net::UnixStream::pair().unwrap();
        ours.set_nonblocking(true).unwrap();
        let conn = Conn::Unix(mio::net::UnixStream::from_std(ours));
        let mut io = StreamIo::new(conn, FaceUri::Fd(0), FaceUri::Fd(0));
        let frame = |k: u8| [6u8, 2, 0xab, k];
        for k in 0..5 {
            peer.write_all(&frame(k)).unwrap();
        }
        let mut got: Vec<Bytes> = Vec::new();
        assert_eq!(
            io.recv_burst(false, 2, |f| got.push(f)).unwrap(),
            Progress::More
        );
        assert_eq!(got.len(), 2);
        peer.write_all(&frame(5)).unwrap();
        assert_eq!(
            io.recv_burst(false, 3, |f| got.push(f)).unwrap(),
            Progress::More
        );
        assert_eq!(got.len(), 5, "the buffered elements first");
        assert_eq!(
            io.recv_burst(false, 0, |f| got.push(f)).unwrap(),
            Progress::More
        );
        assert_eq!(
            io.recv_burst(false, 10, |f| got.push(f)).unwrap(),
            Progress::Drained
        );
        let order: Vec<u8> = got.iter().map(|f| f[3]).collect();
        assert_eq!(order, [0, 1, 2, 3, 4, 5], "nothing lost or reordered");
    }
}
