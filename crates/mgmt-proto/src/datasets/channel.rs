//! ChannelStatus (`faces/channels` items): one listening channel's local URI, and Kite's
//! counters of what a datagram channel read but handed to no face; for an Ethernet channel,
//! its I/O path and, on AF_XDP, the XDP program's verdict counts.
//!
//! Kite's elements follow LocalUri at even TLV-TYPEs (non-critical under the NDN Packet
//! Format's rule: an unrecognized type that is even, or below 32, may be skipped), so NFD's
//! clients read such an item as a plain ChannelStatus.

use bytes::Bytes;
use kite_packet::tlv::Element;
use kite_packet::Result;

use crate::nfd;
use crate::wire::{put_nonneg, put_str, required, string, walk_strict, Tlv};
use kite_link::tlv::{
    KITE_CHANNEL_CERT_SHA256, KITE_CHANNEL_IO_PATH, KITE_N_XDP_NDN, KITE_N_XDP_PASSED,
    KITE_N_XDP_RUNT, KITE_N_XDP_UDP,
};
use kite_link::ChannelCounters;

/// Kite's elements after the drop counters: the I/O path, the XDP verdict counts, then a
/// WebTransport channel's certificate hash.
const AFTER_COUNTERS: [u64; 6] = [
    KITE_CHANNEL_IO_PATH,
    KITE_N_XDP_NDN,
    KITE_N_XDP_PASSED,
    KITE_N_XDP_RUNT,
    KITE_N_XDP_UDP,
    KITE_CHANNEL_CERT_SHA256,
];

/// Field order of ChannelStatus: NFD's LocalUri, Kite's drop counters, its I/O path and XDP
/// counts.
const ORDER: [u64; 1 + ChannelCounters::TYPES.len() + AFTER_COUNTERS.len()] = {
    let mut o = [nfd::LOCAL_URI; 1 + ChannelCounters::TYPES.len() + AFTER_COUNTERS.len()];
    let mut i = 0;
    while i < ChannelCounters::TYPES.len() {
        o[i + 1] = ChannelCounters::TYPES[i];
        i += 1;
    }
    let mut j = 0;
    while j < AFTER_COUNTERS.len() {
        o[i + 1 + j] = AFTER_COUNTERS[j];
        j += 1;
    }
    o
};

/// What Kite's XDP program did with an interface's frames since it was attached.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct XdpVerdicts {
    /// NDN frames, handed to Kite's AF_XDP sockets.
    pub ndn: u64,
    /// Frames of other EtherTypes (VLAN-tagged ones included), passed to the kernel.
    pub passed: u64,
    /// Frames shorter than an Ethernet header, passed to the kernel.
    pub runt: u64,
    /// UDP datagrams to Kite's listeners, handed to Kite's AF_XDP sockets.
    pub udp: u64,
}

/// A channel (listener).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChannelStatus {
    /// LocalUri, e.g. `udp4://0.0.0.0:6363`.
    pub local_uri: String,
    /// Drop counters (Kite's extension).
    pub counters: ChannelCounters,
    /// How an Ethernet channel reads its interface, as text whose first word names the path
    /// (`af_packet`, `af_packet (AF_XDP refused: …)`, `af_xdp (driver mode, copy, 1 queues)`);
    /// absent for socket channels (Kite's extension).
    pub io_path: Option<String>,
    /// The XDP program's verdicts, on an AF_XDP channel (Kite's extension).
    pub xdp: Option<XdpVerdicts>,
    /// A WebTransport channel's certificate's SHA-256 hash in hexadecimal (Kite's
    /// extension).
    pub cert_sha256: Option<String>,
}

impl ChannelStatus {
    /// What a listing shows of the channel beyond its counters: an Ethernet channel's I/O
    /// path, a WebTransport channel's certificate hash (`cert sha-256 HEX`).
    pub fn detail(&self) -> Option<String> {
        let cert = || {
            self.cert_sha256
                .as_ref()
                .map(|h| format!("cert sha-256 {h}"))
        };
        self.io_path.clone().or_else(cert)
    }

    /// The name of the I/O path: the first word of [`ChannelStatus::io_path`].
    pub fn io_path_name(&self) -> Option<&str> {
        let path = self.io_path.as_deref()?;
        path.split_whitespace().next()
    }
}

impl Tlv for ChannelStatus {
    const TYPE: u64 = nfd::CHANNEL_STATUS;

    fn encode_value(&self, out: &mut Vec<u8>) {
        put_str(out, nfd::LOCAL_URI, &self.local_uri);
        for &typ in ChannelCounters::TYPES {
            put_nonneg(out, typ, self.counters.get(typ).expect("a counter"));
        }
        if let Some(path) = &self.io_path {
            put_str(out, KITE_CHANNEL_IO_PATH, path);
        }
        if let Some(x) = &self.xdp {
            put_nonneg(out, KITE_N_XDP_NDN, x.ndn);
            put_nonneg(out, KITE_N_XDP_PASSED, x.passed);
            put_nonneg(out, KITE_N_XDP_RUNT, x.runt);
            put_nonneg(out, KITE_N_XDP_UDP, x.udp);
        }
        if let Some(h) = &self.cert_sha256 {
            put_str(out, KITE_CHANNEL_CERT_SHA256, h);
        }
    }

    fn decode_value(_buf: &Bytes, el: &Element<'_>) -> Result<Self> {
        let mut local_uri = None;
        let mut counters = ChannelCounters::default();
        let mut io_path = None;
        let mut xdp: Option<XdpVerdicts> = None;
        let mut cert_sha256 = None;
        walk_strict(el.children(), &ORDER, None, |f| {
            match f.typ {
                nfd::LOCAL_URI => local_uri = Some(string(f)?),
                KITE_CHANNEL_IO_PATH => io_path = Some(string(f)?),
                KITE_CHANNEL_CERT_SHA256 => cert_sha256 = Some(string(f)?),
                KITE_N_XDP_NDN => xdp.get_or_insert_with(Default::default).ndn = f.nonneg()?,
                KITE_N_XDP_PASSED => {
                    xdp.get_or_insert_with(Default::default).passed = f.nonneg()?
                }
                KITE_N_XDP_RUNT => xdp.get_or_insert_with(Default::default).runt = f.nonneg()?,
                KITE_N_XDP_UDP => xdp.get_or_insert_with(Default::default).udp = f.nonneg()?,
                typ => {
                    if let Some(c) = counters.get_mut(typ) {
                        *c = f.nonneg()?;
                    }
                }
            }
            Ok(())
        })?;
        Ok(ChannelStatus {
            local_uri: required(local_uri, nfd::LOCAL_URI)?,
            counters,
            io_path,
            xdp,
            cert_sha256,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{decode_items, encode_items, put_nested};

    #[test]
    fn exact_bytes_and_list_round_trip() {
        let c = ChannelStatus {
            local_uri: "tcp4://0.0.0.0:6363".into(),
            ..Default::default()
        };
        let mut want = vec![130, 51, 129, 19];
        want.extend_from_slice(b"tcp4://0.0.0.0:6363");
        for typ in [0x12, 0x14, 0x16, 0x18, 0x1A, 0x1C] {
            want.extend_from_slice(&[0xFD, 0x4B, typ, 1, 0]);
        }
        assert_eq!(c.encode(), want);
        let counted = ChannelStatus {
            local_uri: "udp4://0.0.0.0:6363".into(),
            counters: ChannelCounters {
                n_truncated: 3,
                n_no_face: 300,
                n_socket_drops: 7,
                ..Default::default()
            },
            ..Default::default()
        };
        let h3 = ChannelStatus {
            local_uri: "quic://0.0.0.0:4433".into(),
            cert_sha256: Some("ab".repeat(32)),
            ..Default::default()
        };
        assert_eq!(
            h3.detail(),
            Some(format!("cert sha-256 {}", "ab".repeat(32)))
        );
        let list = vec![c.clone(), counted, h3, ChannelStatus::default()];
        let content = Bytes::from(encode_items(&list));
        assert_eq!(decode_items::<ChannelStatus>(&content).unwrap(), list);
        assert!(ChannelStatus::decode(&Bytes::from_static(&[130, 0])).is_err());
    }

    /// An Ethernet channel's I/O path and XDP counts go after the drop counters, at 0x4B30 to
    /// 0x4B36, and come back as they went; a channel on AF_PACKET has a path and no counts.
    #[test]
    fn io_path_and_xdp_counts_round_trip() {
        let xdp = ChannelStatus {
            local_uri: "dev://eth0".into(),
            counters: ChannelCounters {
                n_socket_drops: 2,
                ..Default::default()
            },
            io_path: Some("af_xdp (driver mode, copy, 1 queues)".into()),
            xdp: Some(XdpVerdicts {
                ndn: 300,
                passed: 7,
                runt: 1,
                udp: 20,
            }),
            cert_sha256: None,
        };
        let wire = xdp.encode();
        let tail = wire.len() - (4 + 36 + 4 * 5 + 1);
        let mut want = vec![0xFD, 0x4B, 0x30, 36];
        want.extend_from_slice(b"af_xdp (driver mode, copy, 1 queues)");
        want.extend_from_slice(&[0xFD, 0x4B, 0x32, 2, 1, 44]);
        want.extend_from_slice(&[0xFD, 0x4B, 0x34, 1, 7]);
        want.extend_from_slice(&[0xFD, 0x4B, 0x36, 1, 1]);
        want.extend_from_slice(&[0xFD, 0x4B, 0x38, 1, 20]);
        assert_eq!(&wire[tail..], want);
        let back = ChannelStatus::decode(&Bytes::from(wire)).unwrap();
        assert_eq!(back, xdp);
        assert_eq!(back.io_path_name(), Some("af_xdp"));

        let packet = ChannelStatus {
            local_uri: "dev://eth1".into(),
            io_path: Some("af_packet (AF_XDP refused: interface 3 is busy)".into()),
            ..Default::default()
        };
        let back = ChannelStatus::decode(&Bytes::from(packet.encode())).unwrap();
        assert_eq!(back, packet);
        assert_eq!(back.io_path_name(), Some("af_packet"));
        assert_eq!(ChannelStatus::default().io_path_name(), None);

        // Out of order is refused, as for every field.
        let mut swapped = Vec::new();
        put_nested(&mut swapped, nfd::CHANNEL_STATUS, |v| {
            put_str(v, nfd::LOCAL_URI, "dev://eth0");
            put_nonneg(v, KITE_N_XDP_NDN, 1);
            put_str(v, KITE_CHANNEL_IO_PATH, "af_xdp");
        });
        assert!(ChannelStatus::decode(&Bytes::from(swapped)).is_err());
    }

    #[test]
    fn drop_counters_are_non_critical_and_absent_from_nfd() {
        assert!(ORDER[1..].iter().all(|&x| x > 31 && x % 2 == 0));
        let mut nfd = Vec::new();
        put_nested(&mut nfd, nfd::CHANNEL_STATUS, |v| {
            put_str(v, nfd::LOCAL_URI, "dev://eth0")
        });
        let c = ChannelStatus::decode(&Bytes::from(nfd)).unwrap();
        assert_eq!(c.local_uri, "dev://eth0");
        assert_eq!(c.counters, ChannelCounters::default());
        assert_eq!((c.io_path, c.xdp), (None, None));
    }
}
