//! UDP datagrams in the Ethernet frames Kite's XDP program hands over: the IPv4 or IPv6 and
//! UDP headers checked as the kernel's receive path checks them, since here it does not run.
//! The program looked only at the version, the fragment fields, the next protocol and the
//! destination; everything else in the frame comes from the wire unchecked, so [`parse`]
//! takes no length on trust and never reads past the frame.

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};

use thiserror::Error;

use super::filter::{ETHERTYPE_IPV4, ETHERTYPE_IPV6};
use kite_link::ETHER_HEADER_LEN as HEADER_LEN;

/// IP's protocol number of UDP.
const IPPROTO_UDP: u8 = 17;
/// Octets of a UDP header.
const UDP_HLEN: usize = 8;

/// What a datagram's UDP checksum says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Checksum {
    /// It matches the datagram.
    Valid,
    /// Zero over IPv4: the sender computed none (RFC 768), which IPv4 allows.
    Absent,
    /// It does not match, or is zero over IPv6, where RFC 8200 (section 8.1) makes it
    /// mandatory: the datagram is dropped and counted.
    Bad,
}

/// A UDP datagram from a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UdpDatagram<'a> {
    /// The sender. An IPv6 link-local sender carries the interface's index as its scope, as a
    /// socket reports it.
    pub src: SocketAddr,
    /// Where it was sent.
    pub dst: SocketAddr,
    /// Its payload, as long as the UDP header says (Ethernet padding cut off).
    pub payload: &'a [u8],
    /// Its checksum's verdict; the caller drops a datagram whose checksum is [`Checksum::Bad`].
    pub checksum: Checksum,
}

/// Why a frame holds no UDP datagram to take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum Malformed {
    /// Not IPv4 or IPv6 over Ethernet, untagged.
    #[error("not an IP packet")]
    NotIp,
    /// The IP header is cut short, has another version or a header length below 20 octets,
    /// or its lengths disagree with the frame.
    #[error("malformed IP header")]
    Ip,
    /// The IPv4 header's checksum does not match.
    #[error("bad IPv4 header checksum")]
    IpChecksum,
    /// A fragment, or a protocol other than UDP right after the IP header.
    #[error("not a whole UDP datagram")]
    NotUdp,
    /// The UDP length is below 8 or beyond the IP payload.
    #[error("malformed UDP header")]
    Udp,
}

/// The UDP datagram in Ethernet frame `frame` (from its destination address on) received on
/// interface `ifindex`. Checks, for IPv4: version 4, a header of at least 20 octets within
/// the total length, a total length within the frame (the rest is padding), the header's
/// checksum, no fragment, protocol UDP; for IPv6: version 6, the payload length within the
/// frame, UDP as the next header. Then the UDP length within the IP payload and at least 8,
/// and the checksum over the pseudo-header ([`UdpDatagram::checksum`]).
pub fn parse(frame: &[u8], ifindex: u32) -> Result<UdpDatagram<'_>, Malformed> {
    let ethertype = frame
        .get(12..HEADER_LEN)
        .map(|t| u16::from_be_bytes([t[0], t[1]]));
    let ip = &frame[HEADER_LEN.min(frame.len())..];
    match ethertype {
        Some(ETHERTYPE_IPV4) => parse_v4(ip),
        Some(ETHERTYPE_IPV6) => parse_v6(ip, ifindex),
        _ => Err(Malformed::NotIp),
    }
}

fn parse_v4(ip: &[u8]) -> Result<UdpDatagram<'_>, Malformed> {
    let h = ip.get(..20).ok_or(Malformed::Ip)?;
    let ihl = usize::from(h[0] & 0x0f) * 4;
    let total = usize::from(u16::from_be_bytes([h[2], h[3]]));
    if h[0] >> 4 != 4 || ihl < 20 || total < ihl || total > ip.len() {
        return Err(Malformed::Ip);
    }
    if fold(sum(&ip[..ihl], 0)) != 0xffff {
        return Err(Malformed::IpChecksum);
    }
    if h[9] != IPPROTO_UDP || h[6] & 0x3f != 0 || h[7] != 0 {
        return Err(Malformed::NotUdp);
    }
    let src = Ipv4Addr::new(h[12], h[13], h[14], h[15]);
    let dst = Ipv4Addr::new(h[16], h[17], h[18], h[19]);
    let (udp, sport, dport, stored) = udp(&ip[ihl..total])?;
    // The pseudo-header: the addresses, a zero and the protocol, the UDP length.
    let pseudo = sum(&h[12..20], u64::from(IPPROTO_UDP) + udp.len() as u64);
    let checksum = match stored {
        0 => Checksum::Absent,
        _ => verdict(udp, pseudo),
    };
    Ok(UdpDatagram {
        src: SocketAddr::V4(SocketAddrV4::new(src, sport)),
        dst: SocketAddr::V4(SocketAddrV4::new(dst, dport)),
        payload: &udp[UDP_HLEN..],
        checksum,
    })
}

fn parse_v6(ip: &[u8], ifindex: u32) -> Result<UdpDatagram<'_>, Malformed> {
    let h = ip.get(..40).ok_or(Malformed::Ip)?;
    let payload_len = usize::from(u16::from_be_bytes([h[4], h[5]]));
    if h[0] >> 4 != 6 || 40 + payload_len > ip.len() {
        return Err(Malformed::Ip);
    }
    if h[6] != IPPROTO_UDP {
        return Err(Malformed::NotUdp);
    }
    let addr = |at: usize| {
        let mut a = [0; 16];
        a.copy_from_slice(&h[at..at + 16]);
        Ipv6Addr::from(a)
    };
    let (src, dst) = (addr(8), addr(24));
    let (udp, sport, dport, stored) = udp(&ip[40..40 + payload_len])?;
    let pseudo = sum(&h[8..40], u64::from(IPPROTO_UDP) + udp.len() as u64);
    let checksum = match stored {
        0 => Checksum::Bad,
        _ => verdict(udp, pseudo),
    };
    let scope = |a: &Ipv6Addr| match a.is_unicast_link_local() {
        true => ifindex,
        false => 0,
    };
    Ok(UdpDatagram {
        src: SocketAddr::V6(SocketAddrV6::new(src, sport, 0, scope(&src))),
        dst: SocketAddr::V6(SocketAddrV6::new(dst, dport, 0, scope(&dst))),
        payload: &udp[UDP_HLEN..],
        checksum,
    })
}

/// The UDP datagram at the start of `ip_payload`, cut to its UDP length, with its ports and
/// stored checksum.
fn udp(ip_payload: &[u8]) -> Result<(&[u8], u16, u16, u16), Malformed> {
    let h = ip_payload.get(..UDP_HLEN).ok_or(Malformed::Udp)?;
    let len = usize::from(u16::from_be_bytes([h[4], h[5]]));
    if len < UDP_HLEN || len > ip_payload.len() {
        return Err(Malformed::Udp);
    }
    let word = |at: usize| u16::from_be_bytes([h[at], h[at + 1]]);
    Ok((&ip_payload[..len], word(0), word(2), word(6)))
}

/// Whether `udp` (header and payload) sums with the pseudo-header's `pseudo` to all ones.
fn verdict(udp: &[u8], pseudo: u64) -> Checksum {
    match fold(sum(udp, pseudo)) {
        0xffff => Checksum::Valid,
        _ => Checksum::Bad,
    }
}

/// The Internet checksum's sum (RFC 1071) of `octets` added to `acc`, not yet folded: 32-bit
/// big-endian words summed in 64 bits, which folds to the sum of 16-bit words; an odd last
/// octet is the high half of a word.
pub(crate) fn sum(octets: &[u8], mut acc: u64) -> u64 {
    let mut words = octets.chunks_exact(4);
    for w in &mut words {
        acc += u64::from(u32::from_be_bytes([w[0], w[1], w[2], w[3]]));
    }
    let rest = words.remainder();
    let mut pairs = rest.chunks_exact(2);
    for p in &mut pairs {
        acc += u64::from(u16::from_be_bytes([p[0], p[1]]));
    }
    if let [odd] = pairs.remainder() {
        acc += u64::from(*odd) << 8;
    }
    acc
}

/// `acc` folded to 16 bits with end-around carries.
pub(crate) fn fold(mut acc: u64) -> u16 {
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc as u16
}

/// Frames for tests: UDP datagrams in Ethernet frames, their checksums right.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;
    use std::net::IpAddr;

    /// The Ethernet header of a frame from 02:00:00:00:00:02 to 02:00:00:00:00:01.
    fn ether(ethertype: u16) -> Vec<u8> {
        let mut f = vec![2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2];
        f.extend_from_slice(&ethertype.to_be_bytes());
        f
    }

    fn udp_header(src: SocketAddr, dst: SocketAddr, payload: &[u8]) -> Vec<u8> {
        let mut u = Vec::new();
        u.extend_from_slice(&src.port().to_be_bytes());
        u.extend_from_slice(&dst.port().to_be_bytes());
        u.extend_from_slice(&((UDP_HLEN + payload.len()) as u16).to_be_bytes());
        u.extend_from_slice(&[0, 0]);
        u.extend_from_slice(payload);
        u
    }

    fn set_checksum(udp: &mut [u8], pseudo: u64) {
        let c = !fold(sum(udp, pseudo));
        let c = if c == 0 { 0xffff } else { c };
        udp[6..8].copy_from_slice(&c.to_be_bytes());
    }

    /// An IPv4 frame from `src` to `dst` carrying `payload`, with `options` octets (a
    /// multiple of 4) of IP options (no-ops).
    pub fn ipv4_with_options(
        src: SocketAddr,
        dst: SocketAddr,
        payload: &[u8],
        options: usize,
    ) -> Vec<u8> {
        let (IpAddr::V4(s), IpAddr::V4(d)) = (src.ip(), dst.ip()) else {
            panic!("IPv4 addresses");
        };
        let mut udp = udp_header(src, dst, payload);
        let mut pseudo_addrs = s.octets().to_vec();
        pseudo_addrs.extend_from_slice(&d.octets());
        let pseudo = sum(&pseudo_addrs, u64::from(IPPROTO_UDP) + udp.len() as u64);
        set_checksum(&mut udp, pseudo);
        let ihl = 20 + options;
        let mut ip = vec![0u8; ihl];
        ip[0] = 0x40 | (ihl / 4) as u8;
        ip[2..4].copy_from_slice(&((ihl + udp.len()) as u16).to_be_bytes());
        ip[6] = 0x40;
        ip[8] = 64;
        ip[9] = IPPROTO_UDP;
        ip[12..16].copy_from_slice(&s.octets());
        ip[16..20].copy_from_slice(&d.octets());
        for o in &mut ip[20..] {
            *o = 1;
        }
        let c = !fold(sum(&ip, 0));
        ip[10..12].copy_from_slice(&c.to_be_bytes());
        let mut f = ether(ETHERTYPE_IPV4);
        f.extend_from_slice(&ip);
        f.extend_from_slice(&udp);
        f
    }

    /// An IPv4 frame from `src` to `dst` carrying `payload`.
    pub fn ipv4(src: SocketAddr, dst: SocketAddr, payload: &[u8]) -> Vec<u8> {
        ipv4_with_options(src, dst, payload, 0)
    }

    /// An IPv6 frame from `src` to `dst` carrying `payload`.
    pub fn ipv6(src: SocketAddr, dst: SocketAddr, payload: &[u8]) -> Vec<u8> {
        let (IpAddr::V6(s), IpAddr::V6(d)) = (src.ip(), dst.ip()) else {
            panic!("IPv6 addresses");
        };
        let mut udp = udp_header(src, dst, payload);
        let mut addrs = s.octets().to_vec();
        addrs.extend_from_slice(&d.octets());
        let pseudo = sum(&addrs, u64::from(IPPROTO_UDP) + udp.len() as u64);
        set_checksum(&mut udp, pseudo);
        let mut ip = vec![0u8; 8];
        ip[0] = 0x60;
        ip[4..6].copy_from_slice(&(udp.len() as u16).to_be_bytes());
        ip[6] = IPPROTO_UDP;
        ip[7] = 64;
        ip.extend_from_slice(&addrs);
        let mut f = ether(ETHERTYPE_IPV6);
        f.extend_from_slice(&ip);
        f.extend_from_slice(&udp);
        f
    }

    /// Where in a frame the UDP header starts (no IPv4 options).
    pub fn udp_at(frame: &[u8]) -> usize {
        match u16::from_be_bytes([frame[12], frame[13]]) {
            ETHERTYPE_IPV4 => HEADER_LEN + 20,
            _ => HEADER_LEN + 40,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::testing::*;
    use super::*;
    use proptest::prelude::*;

    const IF: u32 = 7;

    fn a4() -> (SocketAddr, SocketAddr) {
        (
            "10.0.0.2:5000".parse().unwrap(),
            "10.0.0.1:6363".parse().unwrap(),
        )
    }

    fn a6() -> (SocketAddr, SocketAddr) {
        (
            "[2001:db8::2]:5000".parse().unwrap(),
            "[2001:db8::1]:6363".parse().unwrap(),
        )
    }

    #[test]
    fn well_formed_datagrams_parse_with_their_addresses_and_payload() {
        let (s, d) = a4();
        let f = ipv4(s, d, b"hello");
        let u = parse(&f, IF).unwrap();
        assert_eq!(
            (u.src, u.dst, u.payload, u.checksum),
            (s, d, &b"hello"[..], Checksum::Valid)
        );
        let (s6, d6) = a6();
        let f6 = ipv6(s6, d6, b"hi!");
        let u = parse(&f6, IF).unwrap();
        assert_eq!(
            (u.src, u.dst, u.payload, u.checksum),
            (s6, d6, &b"hi!"[..], Checksum::Valid)
        );
        // Odd and empty payloads, options.
        for p in [&b""[..], b"x", b"abc", &[0xff; 1001]] {
            assert_eq!(parse(&ipv4(s, d, p), IF).unwrap().checksum, Checksum::Valid);
            assert_eq!(
                parse(&ipv6(s6, d6, p), IF).unwrap().checksum,
                Checksum::Valid
            );
            let o = ipv4_with_options(s, d, p, 12);
            assert_eq!(parse(&o, IF).unwrap().payload, p);
        }
    }

    #[test]
    fn ethernet_padding_is_cut_off() {
        let (s, d) = a4();
        let mut f = ipv4(s, d, b"x");
        f.resize(60, 0);
        assert_eq!(parse(&f, IF).unwrap().payload, b"x");
    }

    #[test]
    fn a_link_local_sender_has_the_interfaces_scope() {
        let s: SocketAddr = "[fe80::2]:5000".parse().unwrap();
        let d: SocketAddr = "[fe80::1]:6363".parse().unwrap();
        let f = ipv6(s, d, b"x");
        let u = parse(&f, IF).unwrap();
        let SocketAddr::V6(src) = u.src else { panic!() };
        assert_eq!(src.scope_id(), IF);
    }

    #[test]
    fn a_zero_checksum_is_none_over_ipv4_and_bad_over_ipv6() {
        let (s, d) = a4();
        let mut f = ipv4(s, d, b"abc");
        let at = udp_at(&f) + 6;
        f[at..at + 2].copy_from_slice(&[0, 0]);
        assert_eq!(parse(&f, IF).unwrap().checksum, Checksum::Absent);
        let (s, d) = a6();
        let mut f = ipv6(s, d, b"abc");
        let at = udp_at(&f) + 6;
        f[at..at + 2].copy_from_slice(&[0, 0]);
        assert_eq!(parse(&f, IF).unwrap().checksum, Checksum::Bad);
    }

    #[test]
    fn any_flipped_payload_bit_makes_the_checksum_bad() {
        let (s, d) = a4();
        let (s6, d6) = a6();
        for f in [ipv4(s, d, b"some payload"), ipv6(s6, d6, b"some payload")] {
            for at in udp_at(&f) + 8..f.len() {
                for bit in 0..8 {
                    let mut g = f.clone();
                    g[at] ^= 1 << bit;
                    assert_eq!(parse(&g, IF).unwrap().checksum, Checksum::Bad, "{at} {bit}");
                }
            }
        }
    }

    #[test]
    fn lengths_beyond_the_frame_and_bad_headers_are_malformed() {
        let (s, d) = a4();
        let f = ipv4(s, d, b"abcd");
        let ip = HEADER_LEN;
        let with = |at: usize, v: &[u8]| {
            let mut g = f.clone();
            g[at..at + v.len()].copy_from_slice(v);
            g
        };
        // A total length past the frame, below the header; a header length below 5 words,
        // past the total length; version 6 in an IPv4 frame.
        assert_eq!(parse(&with(ip + 2, &[0, 200]), IF), Err(Malformed::Ip));
        assert_eq!(parse(&with(ip + 2, &[0, 19]), IF), Err(Malformed::Ip));
        assert_eq!(parse(&with(ip, &[0x44]), IF), Err(Malformed::Ip));
        assert_eq!(parse(&with(ip, &[0x4f]), IF), Err(Malformed::Ip));
        assert_eq!(parse(&with(ip, &[0x65]), IF), Err(Malformed::Ip));
        // The header's checksum.
        assert_eq!(parse(&with(ip + 8, &[1]), IF), Err(Malformed::IpChecksum));
        // A UDP length past the IP payload, or below its header.
        let u = udp_at(&f);
        assert_eq!(parse(&with(u + 4, &[0, 13]), IF), Err(Malformed::Udp));
        assert_eq!(parse(&with(u + 4, &[0, 7]), IF), Err(Malformed::Udp));
        // Not IP at all.
        assert_eq!(parse(&with(12, &[0x86, 0x24]), IF), Err(Malformed::NotIp));
        // IPv6: a payload length past the frame, an extension header.
        let (s6, d6) = a6();
        let f6 = ipv6(s6, d6, b"abcd");
        let mut g = f6.clone();
        g[ip + 5] += 1;
        assert_eq!(parse(&g, IF), Err(Malformed::Ip));
        let mut g = f6.clone();
        g[ip + 6] = 0;
        assert_eq!(parse(&g, IF), Err(Malformed::NotUdp));
    }

    #[test]
    fn every_truncation_is_malformed_not_a_panic() {
        let (s, d) = a4();
        let (s6, d6) = a6();
        for f in [ipv4(s, d, b"payload"), ipv6(s6, d6, b"payload")] {
            for cut in 0..f.len() {
                assert!(parse(&f[..cut], IF).is_err(), "{cut}");
            }
        }
    }

    #[test]
    fn the_checksum_sum_is_rfc_1071s() {
        // RFC 1071's example: 00 01 f2 03 f4 f5 f6 f7 sums to ddf2.
        let octets = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
        assert_eq!(fold(sum(&octets, 0)), 0xddf2);
        assert_eq!(
            fold(sum(&octets[..7], 0)),
            fold(sum(&[0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0], 0))
        );
    }

    proptest! {
        /// Any octets, as an IPv4 or IPv6 frame or not: an answer, never a panic, and a
        /// payload within the frame.
        #[test]
        fn any_frame_parses_or_is_malformed(
            mut f in proptest::collection::vec(any::<u8>(), 0..200),
            ethertype in prop_oneof![Just(0x0800u16), Just(0x86dd), any::<u16>()],
            version in 0u8..16,
        ) {
            if f.len() > HEADER_LEN {
                f[12..14].copy_from_slice(&ethertype.to_be_bytes());
                f[HEADER_LEN] = (version << 4) | (f[HEADER_LEN] & 0x0f);
            }
            if let Ok(u) = parse(&f, IF) {
                prop_assert!(u.payload.len() + HEADER_LEN + 28 <= f.len());
            }
        }

        /// A well-formed datagram whose lengths are then set at random parses or is
        /// malformed, never reading past the frame.
        #[test]
        fn lengths_at_random_never_read_past_the_frame(
            payload in proptest::collection::vec(any::<u8>(), 0..64),
            v6 in any::<bool>(),
            ip_len in any::<u16>(),
            udp_len in any::<u16>(),
        ) {
            let mut f = match v6 {
                false => { let (s, d) = a4(); ipv4(s, d, &payload) }
                true => { let (s, d) = a6(); ipv6(s, d, &payload) }
            };
            let at = if v6 { HEADER_LEN + 4 } else { HEADER_LEN + 2 };
            f[at..at + 2].copy_from_slice(&ip_len.to_be_bytes());
            let u = udp_at(&f) + 4;
            f[u..u + 2].copy_from_slice(&udp_len.to_be_bytes());
            if let Ok(d) = parse(&f, IF) {
                prop_assert!(d.payload.len() <= payload.len());
            }
        }
    }
}
