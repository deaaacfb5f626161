//! The XDP program's verdict on a frame, in user space: the same rules as `kite_xdp` in
//! `xdp/kite_xdp.c`, written twice so the tests can hold the program to them on any input.

use std::net::{IpAddr, SocketAddr};

use kite_link::{ETHERTYPE_NDN, ETHER_HEADER_LEN as HEADER_LEN};

/// EtherType of IPv4.
pub const ETHERTYPE_IPV4: u16 = 0x0800;
/// EtherType of IPv6.
pub const ETHERTYPE_IPV6: u16 = 0x86dd;
/// IP's protocol number of UDP.
const IPPROTO_UDP: u8 = 17;

/// A UDP destination the program hands to Kite: a key of its `kite_udp_dsts` map.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct UdpDst {
    /// An IPv6 address, or an IPv4 one mapped into IPv6 (`::ffff:a.b.c.d`).
    pub addr: [u8; 16],
    /// The port.
    pub port: u16,
}

impl UdpDst {
    /// The destination of datagrams to `addr`.
    pub fn of(addr: SocketAddr) -> UdpDst {
        let ip = match addr.ip() {
            IpAddr::V4(v4) => v4.to_ipv6_mapped(),
            IpAddr::V6(v6) => v6,
        };
        UdpDst {
            addr: ip.octets(),
            port: addr.port(),
        }
    }

    /// The map's key, as `struct udp_dst` lays it out: the address, the port as on the wire,
    /// two octets of padding.
    pub fn key(&self) -> [u8; 20] {
        let mut k = [0; 20];
        k[..16].copy_from_slice(&self.addr);
        k[16..18].copy_from_slice(&self.port.to_be_bytes());
        k
    }
}

/// What the XDP program does with a frame; each verdict has its own counter in `kite_counts`,
/// at the index [`Verdict::index`] gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// An NDN frame (EtherType 0x8624): redirected to the AF_XDP socket of its receive queue,
    /// or passed to the kernel when that queue has none.
    Ndn,
    /// A whole Ethernet header of another EtherType: passed to the kernel.
    Passed,
    /// Shorter than an Ethernet header: passed to the kernel.
    Runt,
    /// A whole UDP datagram to one of Kite's (address, port) pairs: redirected to the AF_XDP
    /// socket of its receive queue, or passed when that queue has none.
    Udp,
}

impl Verdict {
    /// The verdict's index in the program's `kite_counts` map.
    pub const fn index(self) -> u32 {
        match self {
            Verdict::Ndn => 0,
            Verdict::Passed => 1,
            Verdict::Runt => 2,
            Verdict::Udp => 3,
        }
    }
}

/// The program's verdict on `frame` (an Ethernet frame from its destination address on) with
/// no UDP destination in its map (an interface without UDP listeners).
pub fn verdict(frame: &[u8]) -> Verdict {
    verdict_with(frame, &[])
}

/// The program's verdict on `frame` with `dsts` in its map of UDP destinations.
pub fn verdict_with(frame: &[u8], dsts: &[UdpDst]) -> Verdict {
    let Some(t) = frame.get(12..HEADER_LEN) else {
        return Verdict::Runt;
    };
    let ethertype = u16::from_be_bytes([t[0], t[1]]);
    if ethertype == ETHERTYPE_NDN {
        return Verdict::Ndn;
    }
    match udp_dst(ethertype, &frame[HEADER_LEN..]) {
        Some(dst) if dsts.contains(&dst) => Verdict::Udp,
        _ => Verdict::Passed,
    }
}

/// The destination of the whole UDP datagram at `ip` (a packet of EtherType `ethertype`), as
/// the program reads it: IPv4 with a header of at least 20 octets, neither a fragment nor the
/// first of several; IPv6 with UDP right after its fixed header; the UDP header within the
/// frame. Lengths and checksums are not looked at.
fn udp_dst(ethertype: u16, ip: &[u8]) -> Option<UdpDst> {
    let (addr, udp) = match ethertype {
        ETHERTYPE_IPV4 => {
            let h = ip.get(..20)?;
            let ihl = usize::from(h[0] & 0x0f) * 4;
            if h[0] >> 4 != 4 || ihl < 20 || h[9] != IPPROTO_UDP || h[6] & 0x3f != 0 || h[7] != 0 {
                return None;
            }
            let mut addr = [0; 16];
            addr[10] = 0xff;
            addr[11] = 0xff;
            addr[12..].copy_from_slice(&h[16..20]);
            (addr, ip.get(ihl..)?)
        }
        ETHERTYPE_IPV6 => {
            let udp = ip.get(40..)?;
            if udp.len() < 8 || ip[0] >> 4 != 6 || ip[6] != IPPROTO_UDP {
                return None;
            }
            let mut addr = [0; 16];
            addr.copy_from_slice(&ip[24..40]);
            (addr, udp)
        }
        _ => return None,
    };
    let port = udp.get(..8)?;
    Some(UdpDst {
        addr,
        port: u16::from_be_bytes([port[2], port[3]]),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn frame(len: usize, ethertype: [u8; 2]) -> Vec<u8> {
        let mut f = vec![0xaa; len];
        if len >= HEADER_LEN {
            f[12..14].copy_from_slice(&ethertype);
        }
        f
    }

    #[test]
    fn frames_shorter_than_a_header_are_runts() {
        for len in 0..HEADER_LEN {
            assert_eq!(verdict(&frame(len, [0x86, 0x24])), Verdict::Runt, "{len}");
        }
        // 13 octets that would be NDN's if the header were whole.
        let mut short = frame(13, [0, 0]);
        short[12] = 0x86;
        assert_eq!(verdict(&short), Verdict::Runt);
    }

    #[test]
    fn the_ndn_ethertype_is_ndn_from_a_bare_header_on() {
        for len in [HEADER_LEN, HEADER_LEN + 1, 60, 1514, 9000] {
            assert_eq!(verdict(&frame(len, [0x86, 0x24])), Verdict::Ndn, "{len}");
        }
    }

    #[test]
    fn other_ethertypes_pass() {
        // IPv4, ARP, IPv6, a VLAN tag (a tagged NDN frame is not taken), NDN's octets swapped,
        // and one octet off either way.
        for t in [
            [0x08, 0x00],
            [0x08, 0x06],
            [0x86, 0xdd],
            [0x81, 0x00],
            [0x24, 0x86],
            [0x86, 0x23],
            [0x86, 0x25],
        ] {
            assert_eq!(verdict(&frame(HEADER_LEN, t)), Verdict::Passed, "{t:x?}");
        }
    }

    #[test]
    fn indexes_are_the_programs_counters() {
        // COUNT_NDN, COUNT_PASSED, COUNT_RUNT and COUNT_UDP in xdp/kite_xdp.c.
        assert_eq!(Verdict::Ndn.index(), 0);
        assert_eq!(Verdict::Passed.index(), 1);
        assert_eq!(Verdict::Runt.index(), 2);
        assert_eq!(Verdict::Udp.index(), 3);
    }

    const V4: SocketAddr = SocketAddr::V4(std::net::SocketAddrV4::new(
        std::net::Ipv4Addr::new(10, 0, 0, 1),
        6363,
    ));

    fn v6() -> SocketAddr {
        "[2001:db8::1]:6363".parse().unwrap()
    }

    #[test]
    fn kites_udp_datagrams_are_taken_whole_and_nothing_else() {
        use crate::xdp::udp::testing::{ipv4, ipv6};
        let peer4: SocketAddr = "10.0.0.2:5000".parse().unwrap();
        let peer6: SocketAddr = "[2001:db8::2]:5000".parse().unwrap();
        let dsts = [UdpDst::of(V4), UdpDst::of(v6())];
        let v4 = ipv4(peer4, V4, b"ndn");
        let v6f = ipv6(peer6, v6(), b"ndn");
        assert_eq!(verdict_with(&v4, &dsts), Verdict::Udp);
        assert_eq!(verdict_with(&v6f, &dsts), Verdict::Udp);
        assert_eq!(verdict(&v4), Verdict::Passed, "no listener");
        // Another port, another address.
        let other_port = ipv4(peer4, "10.0.0.1:6364".parse().unwrap(), b"ndn");
        assert_eq!(verdict_with(&other_port, &dsts), Verdict::Passed);
        let other_host = ipv6(peer6, "[2001:db8::3]:6363".parse().unwrap(), b"ndn");
        assert_eq!(verdict_with(&other_host, &dsts), Verdict::Passed);
        // IPv4 fragments: more to come, or an offset.
        for (b6, b7) in [(0x20, 0), (0, 1), (0x01, 0), (0x20, 0x10)] {
            let mut f = v4.clone();
            f[HEADER_LEN + 6] = b6;
            f[HEADER_LEN + 7] = b7;
            assert_eq!(verdict_with(&f, &dsts), Verdict::Passed, "{b6:x} {b7:x}");
        }
        // Don't-fragment is not a fragment.
        let mut df = v4.clone();
        df[HEADER_LEN + 6] = 0x40;
        assert_eq!(verdict_with(&df, &dsts), Verdict::Udp);
        // Options: the UDP header moves with the header length.
        let opts = crate::xdp::udp::testing::ipv4_with_options(peer4, V4, b"ndn", 8);
        assert_eq!(verdict_with(&opts, &dsts), Verdict::Udp);
        // A header length below 5 words, or another version, or TCP.
        for (at, value) in [(0, 0x44), (0, 0x55), (9, 6)] {
            let mut f = v4.clone();
            f[HEADER_LEN + at] = value;
            assert_eq!(verdict_with(&f, &dsts), Verdict::Passed, "{at} {value}");
        }
        // IPv6 with an extension header before UDP (hop-by-hop) passes.
        let mut ext = v6f.clone();
        ext[HEADER_LEN + 6] = 0;
        assert_eq!(verdict_with(&ext, &dsts), Verdict::Passed);
        // Tagged: the EtherType is the VLAN's.
        let mut tagged = v4[..12].to_vec();
        tagged.extend_from_slice(&[0x81, 0x00, 0x00, 0x01]);
        tagged.extend_from_slice(&v4[12..]);
        assert_eq!(verdict_with(&tagged, &dsts), Verdict::Passed);
        // The UDP header cut short.
        for f in [&v4, &v6f] {
            let whole = f.len() - 3 - 8;
            for cut in [whole, whole + 7] {
                let v = verdict_with(&f[..cut], &dsts);
                assert_eq!(v, Verdict::Passed, "{cut}");
            }
            assert_eq!(verdict_with(&f[..whole + 8], &dsts), Verdict::Udp);
        }
    }

    proptest! {
        /// No octet of a frame makes the twin panic, whatever its map holds.
        #[test]
        fn any_frame_has_a_verdict(
            f in proptest::collection::vec(any::<u8>(), 0..120),
            ip in prop_oneof![Just(0x0800u16), Just(0x86dd)],
        ) {
            let mut f = f;
            if f.len() >= HEADER_LEN {
                f[12..14].copy_from_slice(&ip.to_be_bytes());
            }
            let _ = verdict_with(&f, &[UdpDst::of(V4), UdpDst::of(v6())]);
        }

        /// Only the length and octets 12 and 13 decide.
        #[test]
        fn only_the_length_and_the_ethertype_decide(
            f in proptest::collection::vec(any::<u8>(), 0..100),
        ) {
            let want = if f.len() < HEADER_LEN {
                Verdict::Runt
            } else if f[12] == 0x86 && f[13] == 0x24 {
                Verdict::Ndn
            } else {
                Verdict::Passed
            };
            prop_assert_eq!(verdict(&f), want);
            let mut other = vec![0x55; f.len()];
            if f.len() >= HEADER_LEN {
                other[12..14].copy_from_slice(&f[12..14]);
            }
            prop_assert_eq!(verdict(&other), want);
        }
    }
}
