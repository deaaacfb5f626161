//! One end of the load generator's connection to the forwarder: a unix stream (frames batched
//! into large writes) or a connected UDP socket (one packet per datagram, NDNLPv2 fragments
//! reassembled, so a forwarder whose MTU is below the Data size is still measured right).

use std::io::Write;
use std::net::{SocketAddr, UdpSocket};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use bytes::Bytes;
use kite_face::reassembly::{Endpoint, Reassembler, ReassemblyLimits};
use kite_packet::{LpHeader, LpPacket};
use socket2::{Domain, Protocol, Socket, Type};

use crate::frames::{nothing_yet, Fill, FrameSource};

/// How long a read waits before the caller gets control back (to keep time, expire lost
/// Interests or notice it should stop).
pub const TICK: Duration = Duration::from_millis(100);

/// Queued stream octets that force a write even while more input is buffered.
const FLUSH_AT: usize = 48 * 1024;

/// Socket buffer asked for each UDP socket: a whole window of 8800-octet datagrams (the
/// kernel caps it at net.core.rmem_max / wmem_max).
const UDP_BUFFER: usize = 8 << 20;

/// Largest datagram read (NDN's largest packet is 8800 octets; room to spare).
const MAX_DATAGRAM: usize = 65_536;

/// What one [`Link::recv`] got.
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
pub enum Link {
    /// A unix stream socket.
    Stream {
        /// Frames read from the socket.
        input: FrameSource,
        /// The socket's write side.
        output: UnixStream,
        /// Frames queued for one large write.
        out: Vec<u8>,
    },
    /// A UDP socket connected to the forwarder's listener.
    Datagram {
        /// The socket.
        socket: UdpSocket,
        /// Receive buffer.
        buf: Vec<u8>,
        /// Fragments of packets not complete yet.
        reassembler: Reassembler,
        /// Fragments the reassembler received, for the report.
        fragments: u64,
        /// Where an LpPacket is encoded before it is sent.
        scratch: Vec<u8>,
    },
}

impl Link {
    /// A link over a connected unix stream.
    pub fn stream(s: UnixStream) -> Result<Link> {
        Ok(Link::Stream {
            input: FrameSource::new(s.try_clone()?, TICK)?,
            output: s,
            out: Vec::with_capacity(2 * FLUSH_AT),
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

    /// A link over a UDP socket from [`Link::udp_socket`].
    pub fn datagram(socket: UdpSocket) -> Link {
        Link::Datagram {
            socket,
            buf: vec![0; MAX_DATAGRAM],
            reassembler: Reassembler::new(ReassemblyLimits::default()),
            fragments: 0,
            scratch: Vec::with_capacity(MAX_DATAGRAM),
        }
    }

    /// The next packet, waiting at most a [`TICK`].
    pub fn recv(&mut self) -> Result<Recv> {
        match self {
            Link::Stream { input, .. } => loop {
                if let Some(frame) = input.next()? {
                    return Ok(Recv::Packet(LpPacket::decode(frame)?));
                }
                match input.fill()? {
                    Fill::Data => {}
                    Fill::Idle => return Ok(Recv::Idle),
                    Fill::Closed => return Ok(Recv::Closed),
                }
            },
            Link::Datagram {
                socket,
                buf,
                reassembler,
                fragments,
                ..
            } => {
                let n = match socket.recv(buf) {
                    Ok(n) => n,
                    Err(e) if nothing_yet(&e) => return Ok(Recv::Idle),
                    Err(e) => return Err(e).context("receiving from the forwarder"),
                };
                let lp = LpPacket::decode(Bytes::copy_from_slice(&buf[..n]))?;
                if !lp.is_fragmented() {
                    return Ok(Recv::Packet(lp));
                }
                *fragments += 1;
                let now = Instant::now();
                reassembler.expire(now);
                // A refused fragment (duplicate, buffers full) loses its packet, as a drop would.
                Ok(match reassembler.add(Endpoint::Peer, lp, now) {
                    Ok(Some((header, whole))) => Recv::Packet(LpPacket {
                        header,
                        fragment: Some(whole),
                    }),
                    Ok(None) | Err(_) => Recv::Idle,
                })
            }
        }
    }

    /// Whether octets already read may hold another packet (no read needed to get it).
    pub fn buffered(&self) -> bool {
        match self {
            Link::Stream { input, .. } => input.buffered(),
            Link::Datagram { .. } => false,
        }
    }

    /// Sends one frame: a UDP datagram at once, stream octets at the next [`Link::flush`].
    pub fn send(&mut self, frame: &[u8]) -> Result<()> {
        match self {
            Link::Stream { out, .. } => out.extend_from_slice(frame),
            Link::Datagram { socket, .. } => {
                socket.send(frame).context("sending to the forwarder")?;
            }
        }
        Ok(())
    }

    /// Sends `packet` in an LpPacket with `header`, encoded straight into the stream's queue.
    pub fn send_lp(&mut self, header: &LpHeader, packet: &[u8]) -> Result<()> {
        match self {
            Link::Stream { out, .. } => {
                header.encode_header(Some(packet.len()), out);
                out.extend_from_slice(packet);
            }
            Link::Datagram {
                socket, scratch, ..
            } => {
                scratch.clear();
                header.encode_header(Some(packet.len()), scratch);
                scratch.extend_from_slice(packet);
                socket.send(scratch).context("sending to the forwarder")?;
            }
        }
        Ok(())
    }

    /// Writes the queued stream octets when no buffered input is left to answer first, or
    /// when enough are queued.
    pub fn flush_if_due(&mut self) -> Result<()> {
        if !self.buffered() || matches!(self, Link::Stream { out, .. } if out.len() > FLUSH_AT) {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes the queued stream octets.
    pub fn flush(&mut self) -> Result<()> {
        if let Link::Stream { output, out, .. } = self {
            if !out.is_empty() {
                output.write_all(out)?;
                out.clear();
            }
        }
        Ok(())
    }

    /// NDNLPv2 fragments received (UDP only).
    pub fn fragments(&self) -> u64 {
        match self {
            Link::Stream { .. } => 0,
            Link::Datagram { fragments, .. } => *fragments,
        }
    }
}
