//! The transport of a WebTransport face: its own UDP socket, connected to the client, and
//! its [`Session`]. A receive burst is one `recvmmsg` fed to the session; a flush queues the
//! face's frames as the session's datagrams, as far as the session's datagram send buffer
//! takes them (the rest wait in the face's output queue); both, and the session's timers, end
//! by writing what QUIC has to send, each run of equal-length datagrams one segmented message
//! (`UDP_SEGMENT`) where the kernel can. What a full socket did not take is held and sent
//! first when it has room, not lost. The face's MTU follows the session's datagram size as
//! QUIC's path MTU discovery moves it.

use std::cell::RefCell;
use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, RawFd};
use std::time::Instant;

use bytes::BytesMut;
use mio::net::UdpSocket;
use mio::Interest;

use super::session::{Sent, Session};
use crate::datagram::send_error_passes;
use crate::queue::OutQueue;
use crate::sys::segment::{send_segmented, Segmenter, MAX_SEGMENTS, SEGMENTED_BATCH};
use crate::sys::{RecvBatch, BATCH};
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
    /// The largest frame a datagram of the session carries, as of the last call.
    mtu: usize,
    /// Whether `mtu` changed since the face took it.
    mtu_moved: bool,
    /// The session's next timer, as of the last call.
    due: Option<Instant>,
    segmenter: Segmenter,
    /// Datagrams QUIC wrote that the socket had no room for, back to back, and their segment
    /// length: sent before QUIC is asked for more. At most one transmit's worth
    /// ([`MAX_SEGMENTS`] datagrams); its buffer is given back once sent.
    held: (Vec<u8>, usize),
}

impl H3Transport {
    /// The transport of `session` over `socket`, its face's MTU `mtu` until the session's
    /// datagram size is known.
    pub fn new(socket: UdpSocket, local: SocketAddr, mut session: Session, mtu: usize) -> Self {
        let remote = session.remote();
        let due = session.timeout();
        let segmenter = Segmenter::for_socket(socket.as_raw_fd());
        H3Transport {
            socket,
            local,
            remote,
            session,
            mtu,
            mtu_moved: false,
            due,
            segmenter,
            held: (Vec::new(), 0),
        }
    }

    /// Takes a datagram the listener read for this session before the face's socket existed.
    pub fn receive_early(&mut self, now: Instant, d: &[u8]) {
        self.session.receive(now, BytesMut::from(d), &mut |_| {});
    }

    /// Writes what QUIC has to send at `now`: first what the socket did not take last time;
    /// `Blocked` when the socket is full again (what QUIC wrote then is held).
    pub fn transmit(&mut self, now: Instant) -> Result<Flushed, FaceError> {
        let r = self.write(now);
        self.due = self.session.timeout();
        if let Some(max) = self.session.max_frame() {
            if max != self.mtu {
                self.mtu = max;
                self.mtu_moved = true;
            }
        }
        r
    }

    fn write(&mut self, now: Instant) -> Result<Flushed, FaceError> {
        let fd = self.socket.as_raw_fd();
        if !self.held.0.is_empty() {
            let (held, seg) = &mut self.held;
            let sent = send_all(fd, &mut self.segmenter, held, *seg)?;
            held.drain(..sent);
            if !held.is_empty() {
                return Ok(Flushed::Blocked);
            }
            *held = Vec::new();
        }
        TX.with_borrow_mut(|buf| loop {
            let Some(t) = self.session.poll_transmit(now, MAX_SEGMENTS, buf) else {
                return Ok(Flushed::Done);
            };
            let seg = t.segment_size.unwrap_or(t.size).max(1);
            let d = &buf[..t.size];
            let sent = send_all(fd, &mut self.segmenter, d, seg)?;
            if sent < d.len() {
                self.held.0.extend_from_slice(&d[sent..]);
                self.held.1 = seg;
                return Ok(Flushed::Blocked);
            }
        })
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

    fn clamp_mtu(&self, mtu: usize) -> usize {
        mtu.min(self.mtu)
    }

    fn take_mtu(&mut self) -> Option<usize> {
        core::mem::take(&mut self.mtu_moved).then_some(self.mtu)
    }

    fn holds_output(&self) -> bool {
        !self.held.0.is_empty()
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
        // Frames go as far as the session's datagram buffer takes them; what it held back
        // waits in `q` for QUIC to send what the buffer holds (after the peer's
        // acknowledgements, or a pacing timer), and the transmit below makes room.
        let mut full = false;
        for _ in 0..2 {
            let (a, b) = q.frames();
            let mut taken = 0;
            for f in a.iter().chain(b) {
                let [head, body] = f.parts_from(0);
                match self.session.send(head, body) {
                    Sent::Queued => c.n_out_bytes += f.len() as u64,
                    Sent::Refused => {}
                    Sent::Full => {
                        full = true;
                        break;
                    }
                }
                taken += 1;
            }
            q.pop_frames(taken);
            if !full {
                break;
            }
            // QUIC may send part of the buffer now (its window open): once more after that.
            if self.transmit(now)? == Flushed::Blocked {
                break;
            }
            full = false;
        }
        c.n_out_too_large += self.session.take_dropped().too_large;
        let r = self.transmit(now)?;
        self.check()?;
        Ok(if q.is_empty() { r } else { Flushed::Blocked })
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

/// Sends `d`, datagrams of `seg` octets back to back (the last may be shorter), until all
/// went or the socket is full; returns the octets that went. A datagram an error that
/// passes refused is lost, as a datagram may be (an ICMP port unreachable anyone may forge,
/// a passing refusal): QUIC sends its content again.
fn send_all(fd: RawFd, segmenter: &mut Segmenter, d: &[u8], seg: usize) -> io::Result<usize> {
    let mut off = 0;
    while off < d.len() {
        let mut frames: [[&[u8]; 1]; SEGMENTED_BATCH] = [[&[]]; SEGMENTED_BATCH];
        let mut n = 0;
        for (slot, datagram) in frames.iter_mut().zip(d[off..].chunks(seg)) {
            *slot = [datagram];
            n += 1;
        }
        match send_segmented(fd, None, &frames[..n], segmenter) {
            Ok(sent) => off += (sent * seg).min(d.len() - off),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if send_error_passes(&e) => off += seg.min(d.len() - off),
            Err(e) => return Err(e),
        }
    }
    Ok(off)
}
