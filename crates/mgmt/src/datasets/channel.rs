//! ChannelStatus (`faces/channels` items): one listening channel's local URI, and Kite's
//! counters of what a datagram channel read but handed to no face.

use bytes::Bytes;
use kite_packet::tlv::Element;
use kite_packet::Result;

use crate::tlv_types as t;
use crate::wire::{put_nonneg, put_str, required, string, walk_strict, Tlv};

/// Field order of ChannelStatus: NFD's LocalUri, then Kite's drop counters.
const ORDER: [u64; 6] = [
    t::LOCAL_URI,
    t::KITE_N_CHANNEL_TRUNCATED,
    t::KITE_N_CHANNEL_MALFORMED,
    t::KITE_N_CHANNEL_FOREIGN,
    t::KITE_N_CHANNEL_NO_FACE,
    t::KITE_N_CHANNEL_SOCKET_DROPS,
];

/// What a channel dropped before any face saw it (Kite's extension; zero when absent, as
/// from NFD).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ChannelDrops {
    /// Datagrams longer than a receive slot.
    pub n_truncated: u64,
    /// Frames that did not parse: the link-layer envelope, or the NDN packet of a sender with
    /// no face.
    pub n_malformed: u64,
    /// Frames for no face here (another host's or group's, this host's own).
    pub n_foreign: u64,
    /// Frames whose face does not exist and is not made on demand.
    pub n_no_face: u64,
    /// Frames the kernel dropped for a full socket receive buffer (Ethernet).
    pub n_socket_drops: u64,
}

impl ChannelDrops {
    /// Each counter with a short name (as `kite channel list --json` names them).
    pub fn by_reason(&self) -> [(&'static str, u64); 5] {
        [
            ("truncated", self.n_truncated),
            ("malformed", self.n_malformed),
            ("foreign", self.n_foreign),
            ("no_face", self.n_no_face),
            ("socket", self.n_socket_drops),
        ]
    }

    fn to_array(self) -> [u64; 5] {
        [
            self.n_truncated,
            self.n_malformed,
            self.n_foreign,
            self.n_no_face,
            self.n_socket_drops,
        ]
    }

    fn from_array(a: [u64; 5]) -> Self {
        ChannelDrops {
            n_truncated: a[0],
            n_malformed: a[1],
            n_foreign: a[2],
            n_no_face: a[3],
            n_socket_drops: a[4],
        }
    }
}

/// A channel (listener).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChannelStatus {
    /// LocalUri, e.g. `udp4://0.0.0.0:6363`.
    pub local_uri: String,
    /// Drop counters (Kite's extension).
    pub drops: ChannelDrops,
}

impl Tlv for ChannelStatus {
    const TYPE: u64 = t::CHANNEL_STATUS;

    fn encode_value(&self, out: &mut Vec<u8>) {
        put_str(out, t::LOCAL_URI, &self.local_uri);
        for (typ, n) in ORDER[1..].iter().zip(self.drops.to_array()) {
            put_nonneg(out, *typ, n);
        }
    }

    fn decode_value(_buf: &Bytes, el: &Element<'_>) -> Result<Self> {
        let mut local_uri = None;
        let mut drops = [0u64; 5];
        walk_strict(el.children(), &ORDER, None, |f| {
            if f.typ == t::LOCAL_URI {
                local_uri = Some(string(f)?);
            } else if let Some(i) = ORDER[1..].iter().position(|&x| x == f.typ) {
                drops[i] = f.nonneg()?;
            }
            Ok(())
        })?;
        Ok(ChannelStatus {
            local_uri: required(local_uri, t::LOCAL_URI)?,
            drops: ChannelDrops::from_array(drops),
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
            drops: ChannelDrops::default(),
        };
        let mut want = vec![130, 46, 129, 19];
        want.extend_from_slice(b"tcp4://0.0.0.0:6363");
        for typ in [0x12, 0x14, 0x16, 0x18, 0x1A] {
            want.extend_from_slice(&[0xFD, 0x4B, typ, 1, 0]);
        }
        assert_eq!(c.encode(), want);
        let counted = ChannelStatus {
            local_uri: "udp4://0.0.0.0:6363".into(),
            drops: ChannelDrops {
                n_truncated: 3,
                n_no_face: 300,
                n_socket_drops: 7,
                ..Default::default()
            },
        };
        let list = vec![c.clone(), counted, ChannelStatus::default()];
        let content = Bytes::from(encode_items(&list));
        assert_eq!(decode_items::<ChannelStatus>(&content).unwrap(), list);
        assert!(ChannelStatus::decode(&Bytes::from_static(&[130, 0])).is_err());
    }

    #[test]
    fn drop_counters_are_non_critical_and_absent_from_nfd() {
        assert!(ORDER[1..].iter().all(|&x| x > 31 && x % 2 == 0));
        let mut nfd = Vec::new();
        put_nested(&mut nfd, t::CHANNEL_STATUS, |v| {
            put_str(v, t::LOCAL_URI, "dev://eth0")
        });
        let c = ChannelStatus::decode(&Bytes::from(nfd)).unwrap();
        assert_eq!(c.local_uri, "dev://eth0");
        assert_eq!(c.drops, ChannelDrops::default());
    }
}
