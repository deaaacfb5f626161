//! The UDP transport: one NDNLPv2 frame per datagram, as a forwarder's UDP face speaks it.
//!
//! A forwarder cuts a packet larger than its face MTU into NDNLPv2 fragments; [`UdpLink`]
//! reassembles them with kite-link's [`Reassembler`] (bounded: 256 packets, 4 MiB, a partial
//! packet dropped 500 ms after its last fragment). It cuts a packet larger than [`UDP_MTU`]
//! the same way before sending. A datagram that is not one whole element, or a fragment the
//! reassembler refuses, is dropped.

use std::io;
use std::net::{ToSocketAddrs, UdpSocket};
use std::time::Instant;

use bytes::Bytes;
use kite_link::reassembly::{Endpoint, Reassembler, ReassemblyLimits};
use kite_link::FaceId;
use kite_packet::{tlv_type, Fragments, LpPacket};

use crate::framing::is_one_element;
use crate::random::random_u64;

/// The largest datagram sent: NFD's and Kite's default UDP face MTU, which their receive
/// buffers hold whole.
pub const UDP_MTU: usize = 8800;

/// Most fragments one packet is cut into (NFD's reassembly limit).
const MAX_FRAGMENTS: usize = 400;

/// Receive buffer asked of the kernel, so a window of fragmented Data survives a burst (the
/// kernel caps it at `net.core.rmem_max`).
const RECV_BUFFER: usize = 4 << 20;

/// A connected UDP socket with NDNLPv2 fragmentation and reassembly.
#[derive(Debug)]
pub(crate) struct UdpLink {
    socket: UdpSocket,
    mtu: usize,
    reassembler: Reassembler,
    next_seq: u64,
}

impl UdpLink {
    /// Connects to `addr` (`host:port`) from an ephemeral port.
    pub fn connect(addr: &str) -> io::Result<UdpLink> {
        let remote = addr
            .to_socket_addrs()?
            .next()
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no address"))?;
        let local = if remote.is_ipv4() {
            "0.0.0.0:0"
        } else {
            "[::]:0"
        };
        let socket = UdpSocket::bind(local)?;
        // Best effort: a smaller buffer only means more retransmissions.
        let _ = socket2::SockRef::from(&socket).set_recv_buffer_size(RECV_BUFFER);
        socket.connect(remote)?;
        Ok(UdpLink::new(socket, UDP_MTU))
    }

    /// A link over the connected `socket` sending datagrams of at most `mtu` octets.
    pub fn new(socket: UdpSocket, mtu: usize) -> UdpLink {
        UdpLink {
            socket,
            mtu,
            reassembler: Reassembler::new(ReassemblyLimits::default()),
            next_seq: random_u64(),
        }
    }

    /// The socket (for its read timeout).
    pub fn socket(&self) -> &UdpSocket {
        &self.socket
    }

    /// Sends one packet or LP frame, in fragments when it is larger than the MTU.
    pub fn send(&mut self, frame: &[u8]) -> io::Result<()> {
        if frame.len() <= self.mtu {
            self.socket.send(frame)?;
            return Ok(());
        }
        for piece in fragment(frame, self.mtu, &mut self.next_seq)? {
            self.socket.send(&piece)?;
        }
        Ok(())
    }

    /// Receives into `out` the next whole element (a packet, or an LP frame around one),
    /// reassembling fragments; returns its length. Blocks as the socket's timeout allows.
    pub fn recv(&mut self, out: &mut [u8]) -> io::Result<usize> {
        loop {
            let n = self.socket.recv(out)?;
            let now = Instant::now();
            self.reassembler.expire(now);
            if !is_one_element(&out[..n]) {
                continue;
            }
            if out[0] != tlv_type::LP_PACKET as u8 {
                return Ok(n);
            }
            let Ok(lp) = LpPacket::decode(Bytes::copy_from_slice(&out[..n])) else {
                continue;
            };
            if !lp.is_fragmented() {
                return Ok(n);
            }
            let Ok(Some((header, packet))) =
                self.reassembler
                    .add(FaceId::INVALID, Endpoint::Peer, lp, now)
            else {
                continue;
            };
            let whole = if header.is_empty() {
                packet
            } else {
                LpPacket {
                    header,
                    fragment: Some(packet),
                }
                .encode()
            };
            if whole.len() <= out.len() && is_one_element(&whole) {
                out[..whole.len()].copy_from_slice(&whole);
                return Ok(whole.len());
            }
        }
    }
}

/// Cuts `frame` (a packet, or an LP frame around one) into NDNLPv2 fragments of at most `mtu`
/// octets, numbered from `*seq`; the first fragment carries the frame's header fields.
pub(crate) fn fragment(frame: &[u8], mtu: usize, seq: &mut u64) -> io::Result<Vec<Bytes>> {
    let refuse = |why: &str| io::Error::new(io::ErrorKind::InvalidInput, why.to_owned());
    let lp = LpPacket::decode(Bytes::copy_from_slice(frame))
        .map_err(|e| refuse(&format!("cannot fragment an undecodable frame: {e}")))?;
    let (header, Some(payload)) = (lp.header, lp.fragment) else {
        return Err(refuse("cannot fragment a frame without a packet"));
    };
    let pieces = Fragments::new(header, payload, mtu, *seq).map_err(|e| refuse(&e.to_string()))?;
    if pieces.len() > MAX_FRAGMENTS {
        return Err(refuse("packet too large to fragment"));
    }
    *seq = seq.wrapping_add(pieces.len() as u64);
    Ok(pieces.map(|p| p.encode()).collect())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use kite_packet::{Data, DigestSha256, LpHeader, Name, NetPacket, PitToken};

    use super::*;

    fn big_data(len: usize) -> Bytes {
        let content: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
        Data::new("/udp/big".parse::<Name>().unwrap(), content)
            .sign(&DigestSha256)
            .unwrap()
    }

    /// A link to a peer socket of the test's, both on loopback.
    fn pair(mtu: usize) -> (UdpLink, UdpSocket) {
        let peer = UdpSocket::bind("127.0.0.1:0").unwrap();
        let s = UdpSocket::bind("127.0.0.1:0").unwrap();
        s.connect(peer.local_addr().unwrap()).unwrap();
        peer.connect(s.local_addr().unwrap()).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        peer.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        (UdpLink::new(s, mtu), peer)
    }

    #[test]
    fn fragments_fit_the_mtu_and_the_first_keeps_the_header() {
        let data = big_data(5000);
        let framed = LpPacket {
            header: LpHeader {
                pit_token: Some(PitToken::from_u64(9)),
                ..LpHeader::default()
            },
            fragment: Some(data.clone()),
        }
        .encode();
        let mut seq = u64::MAX - 1;
        let pieces = fragment(&framed, 1400, &mut seq).unwrap();
        assert_eq!(pieces.len(), 4);
        assert!(pieces.iter().all(|p| p.len() <= 1400));
        let mut r = Reassembler::new(ReassemblyLimits::default());
        let now = Instant::now();
        let mut whole = None;
        for p in pieces.iter().rev() {
            whole = r
                .add(
                    FaceId::INVALID,
                    Endpoint::Peer,
                    LpPacket::decode(p.clone()).unwrap(),
                    now,
                )
                .unwrap();
        }
        let (h, packet) = whole.expect("reassembled, Sequence wrapping around");
        assert_eq!(packet, data);
        assert_eq!(h.pit_token, Some(PitToken::from_u64(9)));
    }

    #[test]
    fn what_cannot_be_fragmented_is_refused() {
        let mut seq = 0;
        assert!(
            fragment(&[7, 1, 0], 1400, &mut seq).is_err(),
            "not a packet"
        );
        assert!(fragment(&big_data(100), 20, &mut seq).is_err(), "no room");
        assert!(
            fragment(&big_data(60_000), 100, &mut seq).is_err(),
            "over 400 fragments"
        );
    }

    #[test]
    fn sends_in_fragments_and_receives_reassembled() {
        let (mut link, peer) = pair(1400);
        let data = big_data(5000);
        link.send(&data).unwrap();
        let mut buf = vec![0u8; 65536];
        let mut pieces = Vec::new();
        while pieces.len() < 4 {
            let n = peer.recv(&mut buf).unwrap();
            assert!(n <= 1400);
            pieces.push(Bytes::copy_from_slice(&buf[..n]));
        }
        // Back out of order, with garbage and a stray fragment of nothing in between.
        let stray = fragment(&big_data(3000), 1400, &mut 1_000_000).unwrap();
        peer.send(&pieces[2]).unwrap();
        peer.send(&[0xff, 0xff]).unwrap();
        peer.send(&stray[0]).unwrap();
        for i in [0, 3, 1] {
            peer.send(&pieces[i]).unwrap();
        }
        let n = link.recv(&mut buf).unwrap();
        assert_eq!(&buf[..n], &data[..]);
        let (_, packet) = NetPacket::decode_frame(Bytes::copy_from_slice(&buf[..n])).unwrap();
        assert!(matches!(packet, NetPacket::Data(_)));
        // A small packet passes as it is.
        peer.send(&[5, 1, 0]).unwrap();
        assert_eq!(link.recv(&mut buf).unwrap(), 3);
    }

    #[test]
    fn bad_fragments_are_dropped_and_incomplete_packets_time_out() {
        let (mut link, peer) = pair(UDP_MTU);
        let pieces = fragment(&big_data(3000), 1400, &mut 7).unwrap();
        let bad_count = LpPacket {
            header: LpHeader {
                sequence: Some(8),
                frag_index: Some(1),
                frag_count: Some(9),
                ..LpHeader::default()
            },
            fragment: Some(Bytes::from_static(b"x")),
        }
        .encode();
        let no_seq = LpPacket {
            header: LpHeader {
                frag_index: Some(0),
                frag_count: Some(2),
                ..LpHeader::default()
            },
            fragment: Some(Bytes::from_static(b"x")),
        }
        .encode();
        peer.send(&pieces[0]).unwrap();
        for bad in [&bad_count, &no_seq, &pieces[0]] {
            peer.send(bad).unwrap();
        }
        link.socket()
            .set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        let mut buf = vec![0u8; 65536];
        let e = link.recv(&mut buf).unwrap_err();
        assert!(matches!(
            e.kind(),
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
        ));
        assert_eq!(link.reassembler.partials(), 1);
        // After the reassembly timeout, the next datagram clears the stale partial packet.
        std::thread::sleep(ReassemblyLimits::default().timeout);
        peer.send(&[5, 1, 0]).unwrap();
        assert_eq!(link.recv(&mut buf).unwrap(), 3);
        assert_eq!(link.reassembler.partials(), 0);
    }
}
