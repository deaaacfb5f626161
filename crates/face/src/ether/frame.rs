//! Ethernet II framing of NDN packets: a 14-octet header (destination, source, EtherType
//! 0x8624) before an NDNLPv2 frame, and zero padding up to Ethernet's 46-octet minimum
//! payload. A receiver takes the length of the payload's first TLV element as the frame's, so
//! padding is never read as data.

use kite_packet::varnum::read_varnum;
use thiserror::Error;

use kite_link::MacAddr;

pub use kite_link::ETHERTYPE_NDN;

/// NDN's Ethernet multicast group (NFD's `face_system.ether.mcast_group` default).
pub const NDN_MULTICAST: MacAddr = MacAddr([0x01, 0x00, 0x5e, 0x00, 0x17, 0xaa]);

/// Octets of the Ethernet II header.
pub const HEADER_LEN: usize = kite_link::ETHER_HEADER_LEN;

/// The smallest payload Ethernet carries; shorter ones are padded with zeros.
pub const MIN_PAYLOAD: usize = 46;

/// Zeros to pad short payloads with.
static PADDING: [u8; MIN_PAYLOAD] = [0; MIN_PAYLOAD];

/// Why a received frame is not an NDN frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum FrameError {
    /// Shorter than an Ethernet header.
    #[error("frame of {0} octets is shorter than an Ethernet header")]
    Truncated(usize),
    /// Another protocol's frame.
    #[error("EtherType {0:#06x} is not NDN's")]
    EtherType(u16),
}

/// An Ethernet II header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EtherHeader {
    /// Destination address.
    pub dst: MacAddr,
    /// Source address.
    pub src: MacAddr,
    /// EtherType.
    pub ethertype: u16,
}

impl EtherHeader {
    /// An NDN frame's header from `src` to `dst`.
    pub fn ndn(dst: MacAddr, src: MacAddr) -> Self {
        EtherHeader {
            dst,
            src,
            ethertype: ETHERTYPE_NDN,
        }
    }

    /// The header's octets.
    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let mut h = [0u8; HEADER_LEN];
        h[..6].copy_from_slice(&self.dst.0);
        h[6..12].copy_from_slice(&self.src.0);
        h[12..].copy_from_slice(&self.ethertype.to_be_bytes());
        h
    }

    /// Splits an NDN frame into its header and payload.
    pub fn parse(frame: &[u8]) -> Result<(EtherHeader, &[u8]), FrameError> {
        let (h, payload) = frame
            .split_first_chunk::<HEADER_LEN>()
            .ok_or(FrameError::Truncated(frame.len()))?;
        let ethertype = u16::from_be_bytes([h[12], h[13]]);
        if ethertype != ETHERTYPE_NDN {
            return Err(FrameError::EtherType(ethertype));
        }
        let mac = |o: usize| MacAddr([h[o], h[o + 1], h[o + 2], h[o + 3], h[o + 4], h[o + 5]]);
        Ok((
            EtherHeader {
                dst: mac(0),
                src: mac(6),
                ethertype,
            },
            payload,
        ))
    }
}

/// The octets of `payload` that are the NDNLPv2 frame: its first TLV element when that element's
/// header decodes and it fits, else the whole payload (which the link service then rejects as
/// malformed).
pub fn packet_len(payload: &[u8]) -> usize {
    let element = read_varnum(payload).and_then(|(_, tlen)| {
        read_varnum(&payload[tlen..]).map(|(len, llen)| ((tlen + llen) as u64).saturating_add(len))
    });
    match element {
        Ok(total) if total <= payload.len() as u64 => total as usize,
        _ => payload.len(),
    }
}

/// The zeros to append to a payload of `len` octets so the frame meets Ethernet's minimum.
pub fn padding(len: usize) -> &'static [u8] {
    &PADDING[..MIN_PAYLOAD.saturating_sub(len)]
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const A: MacAddr = MacAddr([0x02, 0, 0, 0, 0, 0x0a]);

    #[test]
    fn headers_round_trip_and_carry_ndn_ethertype() {
        let h = EtherHeader::ndn(NDN_MULTICAST, A);
        let mut frame = h.encode().to_vec();
        assert_eq!(&frame[12..], &[0x86, 0x24]);
        frame.extend_from_slice(b"pay");
        assert_eq!(EtherHeader::parse(&frame), Ok((h, &b"pay"[..])));
    }

    #[test]
    fn short_and_foreign_frames_are_typed_errors() {
        assert_eq!(EtherHeader::parse(&[0; 13]), Err(FrameError::Truncated(13)));
        let mut ipv4 = EtherHeader::ndn(A, A).encode();
        ipv4[12..].copy_from_slice(&[0x08, 0x00]);
        assert_eq!(
            EtherHeader::parse(&ipv4),
            Err(FrameError::EtherType(0x0800))
        );
    }

    #[test]
    fn padding_fills_to_the_minimum_payload_and_is_ignored_on_receipt() {
        let interest = [5u8, 3, 7, 1, 8];
        let pad = padding(interest.len());
        assert_eq!(interest.len() + pad.len(), MIN_PAYLOAD);
        assert!(pad.iter().all(|&b| b == 0));
        assert!(padding(MIN_PAYLOAD).is_empty());
        assert!(padding(1500).is_empty());
        let padded = [&interest[..], pad].concat();
        assert_eq!(packet_len(&padded), interest.len());
    }

    #[test]
    fn undecodable_or_overlong_elements_keep_the_whole_payload() {
        assert_eq!(packet_len(&[]), 0);
        assert_eq!(packet_len(&[5]), 1, "no length");
        assert_eq!(packet_len(&[5, 10, 1, 2]), 4, "longer than the payload");
        assert_eq!(packet_len(&[5, 253, 0]), 3, "truncated length");
        assert_eq!(
            packet_len(&[100, 0, 0, 0]),
            2,
            "empty LpPacket, then padding"
        );
        let huge = [5, 255, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff];
        assert_eq!(packet_len(&huge), huge.len(), "length near u64::MAX");
    }

    proptest! {
        #[test]
        fn any_octets_parse_to_the_frame_they_came_from_or_a_typed_error(
            frame in proptest::collection::vec(any::<u8>(), 0..80),
        ) {
            if let Ok((h, payload)) = EtherHeader::parse(&frame) {
                prop_assert_eq!([&h.encode()[..], payload].concat(), frame);
            }
        }

        #[test]
        fn packet_len_never_exceeds_the_payload(payload in proptest::collection::vec(any::<u8>(), 0..300)) {
            prop_assert!(packet_len(&payload) <= payload.len());
        }
    }
}
