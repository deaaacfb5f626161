//! ChannelStatus (`faces/channels` items): one listening channel's local URI, and Kite's
//! counters of what a datagram channel read but handed to no face.

use bytes::Bytes;
use kite_packet::tlv::Element;
use kite_packet::Result;

use crate::nfd;
use crate::wire::{put_nonneg, put_str, required, string, walk_strict, Tlv};
use kite_link::ChannelCounters;

/// Field order of ChannelStatus: NFD's LocalUri, then Kite's drop counters.
const ORDER: [u64; 1 + ChannelCounters::TYPES.len()] = {
    let mut o = [nfd::LOCAL_URI; 1 + ChannelCounters::TYPES.len()];
    let mut i = 0;
    while i < ChannelCounters::TYPES.len() {
        o[i + 1] = ChannelCounters::TYPES[i];
        i += 1;
    }
    o
};

/// A channel (listener).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChannelStatus {
    /// LocalUri, e.g. `udp4://0.0.0.0:6363`.
    pub local_uri: String,
    /// Drop counters (Kite's extension).
    pub counters: ChannelCounters,
}

impl Tlv for ChannelStatus {
    const TYPE: u64 = nfd::CHANNEL_STATUS;

    fn encode_value(&self, out: &mut Vec<u8>) {
        put_str(out, nfd::LOCAL_URI, &self.local_uri);
        for &typ in ChannelCounters::TYPES {
            put_nonneg(out, typ, self.counters.get(typ).expect("a counter"));
        }
    }

    fn decode_value(_buf: &Bytes, el: &Element<'_>) -> Result<Self> {
        let mut local_uri = None;
        let mut counters = ChannelCounters::default();
        walk_strict(el.children(), &ORDER, None, |f| {
            if f.typ == nfd::LOCAL_URI {
                local_uri = Some(string(f)?);
            } else if let Some(c) = counters.get_mut(f.typ) {
                *c = f.nonneg()?;
            }
            Ok(())
        })?;
        Ok(ChannelStatus {
            local_uri: required(local_uri, nfd::LOCAL_URI)?,
            counters,
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
            counters: ChannelCounters::default(),
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
        put_nested(&mut nfd, nfd::CHANNEL_STATUS, |v| {
            put_str(v, nfd::LOCAL_URI, "dev://eth0")
        });
        let c = ChannelStatus::decode(&Bytes::from(nfd)).unwrap();
        assert_eq!(c.local_uri, "dev://eth0");
        assert_eq!(c.counters, ChannelCounters::default());
    }
}
