//! The transport of a WebTransport face: its own UDP socket, connected to the client, and
//! its [`Session`]. A receive burst is one `recvmmsg` fed to the session; a flush queues the
//! face's frames as the session's datagrams; both, and the session's timers, end by writing
//! what QUIC has to send (a run of equal-length datagrams per `sendmmsg`).

use std::cell::RefCell;
use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, RawFd};
use std::time::Instant;

use bytes::BytesMut;
use mio::net::UdpSocket;
use mio::Interest;

use super::session::Session;
use crate::queue::OutQueue;
use crate::sys::{self, RecvBatch, BATCH};
use crate::transport::{FaceError, Flushed, Progress, RxFrame, Source, Transport};
use crate::uri::FaceUri;
use kite_link::reassembly::Endpoint;
use kite_link::FaceCounters;

/// Octets of a receive slot: the largest UDP payload Kite announces to QUIC peers
/// (`max_udp_payload_size`); a longer datagram is cut and dropped.
pub(crate) const SLOT: usize = 1500;

/// Octets the receive arena grows by.
const ARENA_CHUNK: usize = 64 << 10;

thread_local! {
    /// The receive slots and the arena QUIC packets are copied into (quinn-proto decrypts
    /// them in place, and the datagrams it hands back are slices of them), one per thread.
    static RX: RefCell<(Option<RecvBatch>, BytesMut)> = RefCell::new((None, BytesMut::new()));
    /// The buffer QUIC writes its packets into before they are sent.
    static TX: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// A WebTransport face's transport.
#[derive(Debug)]
pub(crate) struct H3Transport {
    socket: UdpSocket,
    local: SocketAddr,
    remote: SocketAddr,
    session: Session,
    mtu: usize,
    /// The session's next timer, as of the last call.
    due: Option<Instant>,
}

impl H3Transport {
    pub fn new(socket: UdpSocket, local: SocketAddr, mut session: Session, mtu: usize) -> Self {
        let remote = session.remote();
        let due = session.timeout();
        H3Transport {
            socket,
            local,
            remote,
            session,
            mtu,
            due,
        }
    }

    /// Takes a datagram the listener read for this session before the face's socket existed.
    pub fn receive_early(&mut self, now: Instant, d: &[u8]) {
        self.session.receive(now, BytesMut::from(d), &mut |_| {});
    }

    /// Writes what QUIC has to send at `now`; `Blocked` when the socket is full (what QUIC
    /// wrote then is lost to it, and it sends again as after a loss).
    pub fn transmit(&mut self, now: Instant) -> Result<Flushed, FaceError> {
        let fd = self.socket.as_raw_fd();
        let r = TX.with_borrow_mut(|buf| loop {
            let Some(t) = self.session.poll_transmit(now, BATCH, buf) else {
                return Ok(Flushed::Done);
            };
            let seg = t.segment_size.unwrap_or(t.size).max(1);
            let mut frames: [[&[u8]; 1]; BATCH] = [[&[]]; BATCH];
            let mut n = 0;
            for (slot, d) in frames.iter_mut().zip(buf[..t.size].chunks(seg)) {
                *slot = [d];
                n += 1;
            }
            match sys::send_mmsg(fd, None, &frames[..n]) {
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(Flushed::Blocked),
                // An ICMP port unreachable (anyone may forge one) or a passing refusal: lost,
                // as a datagram may be.
                Err(e) if crate::datagram::send_error_passes(&e) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.into()),
            }
        });
        self.due = self.session.timeout();
        r
    }

    /// Closed for good: the face goes.
    fn check(&self) -> Result<(), FaceError> {
        match self.session.is_closed() {
            true => Err(FaceError::Closed),
            false => Ok(()),
        }
    }
}

impl Drop for H3Transport {
    /// Tells the client the session is over (one datagram, once), so that it need not wait
    /// for its idle timeout.
    fn drop(&mut self) {
        if !self.session.is_closed() {
            let now = Instant::now();
            self.session.close(now);
            let _ = self.transmit(now);
        }
    }
}

impl Transport for H3Transport {
    fn remote_uri(&self) -> FaceUri {
        FaceUri::Quic(self.remote)
    }

    fn local_uri(&self) -> FaceUri {
        FaceUri::Quic(self.local)
    }

    fn mtu(&self) -> Option<usize> {
        Some(self.mtu)
    }

    fn sources(&self) -> [Option<Source>; 2] {
        let interest = Interest::READABLE | Interest::WRITABLE;
        [Some((self.socket.as_raw_fd(), interest)), None]
    }

    fn recv_burst(
        &mut self,
        _hangup: bool,
        _budget: usize,
        rx: &mut Vec<RxFrame>,
    ) -> Result<Progress, FaceError> {
        let now = Instant::now();
        let fd: RawFd = self.socket.as_raw_fd();
        let n = RX.with_borrow_mut(|(batch, arena)| {
            let batch = batch.get_or_insert_with(|| RecvBatch::new(SLOT));
            let n = match batch.recv_ready(fd) {
                Ok(Some(n)) => n,
                Ok(None) => return Ok(0),
                // A refused earlier send (ICMP port unreachable), reported once.
                Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => return Ok(BATCH),
                Err(e) => return Err(e),
            };
            let mut deliver = |frame| {
                rx.push(RxFrame {
                    from: Endpoint::Peer,
                    frame,
                    own_buffer: 0,
                })
            };
            for i in 0..n {
                if batch.truncated(i) {
                    continue;
                }
                let d = batch.datagram(i);
                if arena.capacity() - arena.len() < d.len() {
                    arena.reserve(ARENA_CHUNK.max(d.len()));
                }
                arena.extend_from_slice(d);
                let packet = arena.split();
                self.session.receive(now, packet, &mut deliver);
            }
            Ok(n)
        })?;
        // Datagrams not for the session arrive empty, so the link service counts them.
        let dropped = self.session.take_dropped();
        for _ in 0..dropped.datagrams {
            rx.push(RxFrame {
                from: Endpoint::Peer,
                frame: bytes::Bytes::new(),
                own_buffer: 0,
            });
        }
        self.transmit(now)?;
        self.check()?;
        Ok(if n == BATCH {
            Progress::More
        } else {
            Progress::Drained
        })
    }

    fn flush(&mut self, q: &mut OutQueue, c: &mut FaceCounters) -> Result<Flushed, FaceError> {
        let now = Instant::now();
        let (a, b) = q.frames();
        for f in a.iter().chain(b) {
            let [head, body] = f.parts_from(0);
            if self.session.send(head, body) {
                c.n_out_bytes += f.len() as u64;
            }
        }
        let n = q.len();
        q.pop_frames(n);
        c.n_out_too_large += self.session.take_dropped().too_large;
        let r = self.transmit(now);
        self.check()?;
        r
    }

    fn flush_after_recv(&self) -> bool {
        true
    }

    fn timed(&self) -> bool {
        true
    }

    fn deadline(&self) -> Option<Instant> {
        self.due
    }

    fn on_deadline(&mut self, now: Instant) -> Result<(), FaceError> {
        self.session.on_timeout(now, &mut |_| {});
        self.transmit(now)?;
        self.check()
    }
}
