//! ChannelStatus (`faces/channels` items): one listening channel's local URI.

use bytes::Bytes;
use kite_packet::tlv::Element;
use kite_packet::Result;

use crate::tlv_types as t;
use crate::wire::{put_str, required, string, walk_strict, Tlv};

/// A channel (listener).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChannelStatus {
    /// LocalUri, e.g. `udp4://0.0.0.0:6363`.
    pub local_uri: String,
}

impl Tlv for ChannelStatus {
    const TYPE: u64 = t::CHANNEL_STATUS;

    fn encode_value(&self, out: &mut Vec<u8>) {
        put_str(out, t::LOCAL_URI, &self.local_uri);
    }

    fn decode_value(_buf: &Bytes, el: &Element<'_>) -> Result<Self> {
        let mut local_uri = None;
        walk_strict(el.children(), &[t::LOCAL_URI], None, |f| {
            local_uri = Some(string(f)?);
            Ok(())
        })?;
        Ok(ChannelStatus {
            local_uri: required(local_uri, t::LOCAL_URI)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{decode_items, encode_items};

    #[test]
    fn exact_bytes_and_list_round_trip() {
        let c = ChannelStatus {
            local_uri: "tcp4://0.0.0.0:6363".into(),
        };
        let mut want = vec![130, 21, 129, 19];
        want.extend_from_slice(b"tcp4://0.0.0.0:6363");
        assert_eq!(c.encode(), want);
        let list = vec![c.clone(), ChannelStatus::default()];
        let content = Bytes::from(encode_items(&list));
        assert_eq!(decode_items::<ChannelStatus>(&content).unwrap(), list);
        assert!(ChannelStatus::decode(&Bytes::from_static(&[130, 0])).is_err());
    }
}
