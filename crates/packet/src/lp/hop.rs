//! The NDNLPv2 header a forwarder writes on every packet it sends: at most a PIT token, a Nack
//! and a CongestionMark. Written straight from those three values instead of through a full
//! [`LpHeader`](super::LpHeader), whose thirteen optional fields cost more to build and walk
//! than the packet's whole header takes to write; the octets are the same (checked in tests).

use bytes::BufMut;

use super::{nack_field_len, put_nack, NackReason, PitToken};
use crate::encode::{nonneg_tlv_len, put_header, put_nonneg_tlv, put_tlv, tlv_len};
use crate::tlv_type;

/// The per-hop link fields of an outgoing packet.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HopHeader<'a> {
    /// The PIT token to attach (Kite's own upstream; the downstream's, echoed, downstream).
    pub pit_token: Option<&'a PitToken>,
    /// Set when the packet is a Nack of the fragment Interest.
    pub nack: Option<NackReason>,
    /// IncomingFaceId, for a local app that enabled local fields.
    pub incoming_face_id: Option<u64>,
    /// The CongestionMark (0: none).
    pub congestion_mark: u64,
}

impl HopHeader<'_> {
    /// Whether no field is set, so the packet can travel bare.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.pit_token.is_none()
            && self.nack.is_none()
            && self.incoming_face_id.is_none()
            && self.congestion_mark == 0
    }

    #[inline]
    fn fields_len(&self) -> usize {
        self.pit_token
            .map_or(0, |t| tlv_len(tlv_type::PIT_TOKEN, t.as_slice().len()))
            + self.nack.map_or(0, nack_field_len)
            + self
                .incoming_face_id
                .map_or(0, |n| nonneg_tlv_len(tlv_type::INCOMING_FACE_ID, n))
            + if self.congestion_mark > 0 {
                nonneg_tlv_len(tlv_type::CONGESTION_MARK, self.congestion_mark)
            } else {
                0
            }
    }

    /// Octets [`HopHeader::encode_header`] writes for a fragment of `fragment_len` octets.
    #[inline]
    pub fn header_len(&self, fragment_len: usize) -> usize {
        let value_len = self.fields_len() + tlv_len(tlv_type::FRAGMENT, fragment_len);
        tlv_len(tlv_type::LP_PACKET, value_len) - fragment_len
    }

    /// Writes the LpPacket TLV-TYPE and TLV-LENGTH, the fields, and the Fragment TLV-TYPE and
    /// TLV-LENGTH: everything that precedes the fragment's octets on the wire.
    #[inline]
    pub fn encode_header(&self, fragment_len: usize, out: &mut impl BufMut) {
        let value_len = self.fields_len() + tlv_len(tlv_type::FRAGMENT, fragment_len);
        put_header(out, tlv_type::LP_PACKET, value_len);
        if let Some(t) = self.pit_token {
            put_tlv(out, tlv_type::PIT_TOKEN, t.as_slice());
        }
        if let Some(r) = self.nack {
            put_nack(out, r);
        }
        if let Some(n) = self.incoming_face_id {
            put_nonneg_tlv(out, tlv_type::INCOMING_FACE_ID, n);
        }
        if self.congestion_mark > 0 {
            put_nonneg_tlv(out, tlv_type::CONGESTION_MARK, self.congestion_mark);
        }
        put_header(out, tlv_type::FRAGMENT, fragment_len);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::LpHeader;

    #[test]
    fn same_octets_as_the_full_header() {
        let tokens = [None, Some(PitToken::from_u64(7)), PitToken::new(&[9; 32])];
        let nacks = [
            None,
            Some(NackReason::NONE),
            Some(NackReason::NO_ROUTE),
            Some(NackReason(1000)),
        ];
        for token in &tokens {
            for nack in nacks {
                for (mark, incoming) in
                    [(0, None), (1, Some(256)), (300, None), (u64::MAX, Some(1))]
                {
                    for frag_len in [1, 252, 253, 70_000] {
                        let hop = HopHeader {
                            pit_token: token.as_ref(),
                            nack,
                            incoming_face_id: incoming,
                            congestion_mark: mark,
                        };
                        let full = LpHeader {
                            pit_token: *token,
                            nack,
                            incoming_face_id: incoming,
                            congestion_mark: (mark > 0).then_some(mark),
                            ..LpHeader::default()
                        };
                        let (mut a, mut b) = (Vec::new(), Vec::new());
                        hop.encode_header(frag_len, &mut a);
                        full.encode_header(Some(frag_len), &mut b);
                        assert_eq!(a, b, "{hop:?} fragment {frag_len}");
                        assert_eq!(hop.header_len(frag_len), a.len());
                        assert_eq!(hop.is_empty(), full.is_empty());
                    }
                }
            }
        }
    }
}
