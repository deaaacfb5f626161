//! One end of the load generator's connection to the forwarder: a unix stream (frames batched
//! into `writev` calls, shared payloads not copied) or a connected UDP socket (one packet per
//! datagram, read in `recvmmsg` bursts and written in `sendmmsg` bursts with runs of
//! equal-length datagrams segmented by the kernel, so the generator spends little of the
//! machine; NDNLPv2 fragments reassembled, so a forwarder whose MTU is below the Data size is
//! still measured right).

use std::collections::VecDeque;
use std::io::ErrorKind;
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use bytes::Bytes;
use kite_app::WriteQueue;
use kite_face::burst::{
    enable_gro, send_segmented, Arena, RecvBatch, Segmenter, BATCH, SEGMENTED_BATCH,
};
use kite_link::reassembly::{Endpoint, Reassembler, ReassemblyLimits};
use kite_link::FaceId;
use kite_packet::{LpHeader, LpPacket};
use socket2::{Domain, Protocol, Socket, Type};

use crate::frames::{nothing_yet, Arrived, FrameSource};

/// How long a read waits before the caller gets control back (to keep time, expire lost
/// Interests or notice it should stop).
pub const TICK: Duration = Duration::from_millis(100);

/// Queued stream octets that force a write even while more input is buffered.
const FLUSH_AT: usize = 48 * 1024;

/// Socket buffer asked for each UDP socket: a whole window of 8800-octet datagrams (the
/// kernel caps it at net.core.rmem_max / wmem_max).
const UDP_BUFFER: usize = 8 << 20;

/// Largest datagram read (NDN's largest packet is 8800 octets; room to spare).
const MAX_DATAGRAM: usize = 16 * 1024;

/// What one [`LoadSocket::recv`] got.
// Returned by value once per packet: boxing the packet would allocate each time.
#[allow(clippy::large_enum_variant)]
pub enum Recv {
    /// A whole packet with its NDNLPv2 header (reassembled when it came in fragments).
    Packet(LpPacket),
    /// Nothing within a [`TICK`], or a fragment that completed no packet yet.
    Idle,
    /// The forwarder closed the stream.
    Closed,
}

/// A connection to the forwarder.
pub enum LoadSocket {
    /// A unix stream socket.
    Stream {
        /// Frames read from the socket.
        input: FrameSource,
        /// The socket's write side.
        output: UnixStream,
        /// Frames queued for one `writev`.
        out: WriteQueue,
    },
    /// A UDP socket connected to the forwarder's listener.
    Datagram(Box<Datagrams>),
}

/// The UDP side of a [`LoadSocket`].
pub struct Datagrams {
    /// The socket.
    socket: UdpSocket,
    /// Where bursts are read.
    batch: RecvBatch,
    /// Datagrams read and not handed out yet (copied into `arena`, back to back).
    queue: VecDeque<Bytes>,
    arena: Arena,
    /// Fragments of packets not complete yet.
    reassembler: Reassembler,
    /// Fragments the reassembler received, for the report.
    fragments: u64,
    /// Datagrams queued for the next flush, back to back, and where each ends.
    out: Vec<u8>,
    ends: Vec<usize>,
    /// What the path to the forwarder takes segmented.
    seg: Segmenter,
}

impl LoadSocket {
    /// A link over a connected unix stream.
    pub fn stream(s: UnixStream) -> Result<LoadSocket> {
        Ok(LoadSocket::Stream {
            input: FrameSource::new(s.try_clone()?, TICK)?,
            output: s,
            out: WriteQueue::new(),
        })
    }

    /// A UDP socket with large buffers, connected to `forwarder` from an ephemeral port.
    pub fn udp_socket(forwarder: SocketAddr) -> Result<UdpSocket> {
        let s = Socket::new(
            Domain::for_address(forwarder),
            Type::DGRAM,
            Some(Protocol::UDP),
        )?;
        // Best effort: a smaller buffer only means more drops, which the consumer survives.
        let _ = s.set_recv_buffer_size(UDP_BUFFER);
        let _ = s.set_send_buffer_size(UDP_BUFFER);
        let any: SocketAddr = match forwarder {
            SocketAddr::V4(_) => (std::net::Ipv4Addr::UNSPECIFIED, 0).into(),
            SocketAddr::V6(_) => (std::net::Ipv6Addr::UNSPECIFIED, 0).into(),
        };
        s.bind(&any.into())?;
        s.connect(&forwarder.into())
            .with_context(|| format!("connect udp {forwarder}"))?;
        let s: UdpSocket = s.into();
        s.set_read_timeout(Some(TICK))?;
        Ok(s)
    }

    /// A link over a UDP socket from [`LoadSocket::udp_socket`].
    pub fn datagram(socket: UdpSocket) -> LoadSocket {
        // Coalesced receive where the kernel has it: the forwarder's segmented runs are read
        // whole instead of being cut up in its send path.
        let batch = match enable_gro(socket.as_raw_fd()) {
            Ok(()) => RecvBatch::coalescing(),
            Err(_) => RecvBatch::new(MAX_DATAGRAM),
        };
        let seg = Segmenter::for_socket(socket.as_raw_fd());
        LoadSocket::Datagram(Box::new(Datagrams {
            socket,
            batch,
            queue: VecDeque::with_capacity(4 * BATCH),
            arena: Arena::default(),
            reassembler: Reassembler::new(ReassemblyLimits::default()),
            fragments: 0,
            out: Vec::with_capacity(SEGMENTED_BATCH * MAX_DATAGRAM),
            ends: Vec::with_capacity(SEGMENTED_BATCH),
            seg,
        }))
    }

    /// The next packet, waiting at most a [`TICK`].
    pub fn recv(&mut self) -> Result<Recv> {
        match self {
            LoadSocket::Stream { input, .. } => loop {
                if let Some(frame) = input.next()? {
                    return Ok(Recv::Packet(LpPacket::decode(frame)?));
                }
                match input.fill()? {
                    Arrived::Data => {}
                    Arrived::Idle => return Ok(Recv::Idle),
                    Arrived::Closed => return Ok(Recv::Closed),
                }
            },
            LoadSocket::Datagram(d) => d.recv(),
        }
    }

    /// Whether octets already read may hold another packet (no read needed to get it).
    pub fn buffered(&self) -> bool {
        match self {
            LoadSocket::Stream { input, .. } => input.buffered(),
            LoadSocket::Datagram(d) => !d.queue.is_empty(),
        }
    }

    /// Queues one frame (a datagram, or stream octets) for the next [`LoadSocket::flush`].
    pub fn send(&mut self, frame: &[u8]) -> Result<()> {
        self.send_split(&LpHeader::default(), frame, &Bytes::new());
        Ok(())
    }

    /// Queues the packet `head` followed by `tail` in an LpPacket with `header` (bare when it
    /// has no field) for the next [`LoadSocket::flush`]. Over a stream `tail` is written from where
    /// it is, not copied; a datagram is assembled whole.
    pub fn send_split(&mut self, header: &LpHeader, head: &[u8], tail: &Bytes) {
        match self {
            LoadSocket::Stream { out, .. } => {
                out.push_split(header, head, tail.clone());
            }
            LoadSocket::Datagram(d) => {
                if !header.is_empty() {
                    header.encode_header(Some(head.len() + tail.len()), &mut d.out);
                }
                d.out.extend_from_slice(head);
                d.out.extend_from_slice(tail);
                d.ends.push(d.out.len());
            }
        }
    }

    /// Writes what is queued when no buffered input is left to answer first, or when enough
    /// is queued.
    pub fn flush_if_due(&mut self) -> Result<()> {
        let full = match self {
            LoadSocket::Stream { out, .. } => out.octets() > FLUSH_AT,
            LoadSocket::Datagram(d) => d.ends.len() >= SEGMENTED_BATCH,
        };
        if full || !self.buffered() {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes what is queued.
    pub fn flush(&mut self) -> Result<()> {
        match self {
            LoadSocket::Stream { output, out, .. } => {
                if !out.is_empty() {
                    out.write_to(output)?;
                }
            }
            LoadSocket::Datagram(d) => d.flush()?,
        }
        Ok(())
    }

    /// NDNLPv2 fragments received (UDP only).
    pub fn fragments(&self) -> u64 {
        match self {
            LoadSocket::Stream { .. } => 0,
            LoadSocket::Datagram(d) => d.fragments,
        }
    }
}

impl Datagrams {
    /// The next packet: from the burst already read, else from a new burst, waiting at most
    /// a [`TICK`] for one.
    fn recv(&mut self) -> Result<Recv> {
        let frame = loop {
            if let Some(frame) = self.queue.pop_front() {
                break frame;
            }
            let fd = self.socket.as_raw_fd();
            if let Some(n) = self
                .batch
                .recv_ready(fd)
                .context("receiving from the forwarder")?
            {
                self.take_burst(n);
                continue;
            }
            // Nothing waiting: block (up to the socket's read timeout) until a datagram is.
            match self.socket.peek(&mut [0u8; 1]) {
                Ok(_) => {}
                Err(e) if nothing_yet(&e) => return Ok(Recv::Idle),
                Err(e) => return Err(e).context("receiving from the forwarder"),
            }
        };
        let lp = LpPacket::decode(frame)?;
        if !lp.is_fragmented() {
            return Ok(Recv::Packet(lp));
        }
        self.fragments += 1;
        let now = Instant::now();
        self.reassembler.expire(now);
        // A refused fragment (duplicate, buffers full) loses its packet, as a drop would.
        Ok(
            match self
                .reassembler
                .add(FaceId::INVALID, Endpoint::Peer, lp, now)
            {
                Ok(Some((header, whole))) => Recv::Packet(LpPacket {
                    header,
                    fragment: Some(whole),
                }),
                Ok(None) | Err(_) => Recv::Idle,
            },
        )
    }

    /// Queues the `n` messages of the last burst as datagrams (a coalesced message cut at its
    /// segment length), copied into the arena.
    fn take_burst(&mut self, n: usize) {
        for i in 0..n {
            for d in self.batch.datagrams(i) {
                self.queue.push_back(self.arena.copy(d));
            }
        }
    }

    /// Sends every queued datagram, in `sendmmsg` bursts.
    fn flush(&mut self) -> Result<()> {
        let mut done = 0;
        while done < self.ends.len() {
            let mut frames = [[&[][..]; 1]; SEGMENTED_BATCH];
            let ends = &self.ends[done..(done + SEGMENTED_BATCH).min(self.ends.len())];
            let mut start = if done == 0 { 0 } else { self.ends[done - 1] };
            for (slot, &end) in frames.iter_mut().zip(ends) {
                *slot = [&self.out[start..end]];
                start = end;
            }
            let fd = self.socket.as_raw_fd();
            match send_segmented(fd, None, &frames[..ends.len()], &mut self.seg) {
                Ok(sent) => done += sent,
                // The socket buffer is full: the forwarder is behind; let it catch up.
                Err(e) if e.kind() == ErrorKind::WouldBlock => {
                    std::thread::sleep(Duration::from_micros(50))
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(e).context("sending to the forwarder"),
            }
        }
        self.out.clear();
        self.ends.clear();
        Ok(())
    }
}
