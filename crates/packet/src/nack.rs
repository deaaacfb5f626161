//! Network Nacks: an LpPacket whose Nack header carries a reason and whose fragment is the
//! Interest being refused.

use bytes::Bytes;

use crate::error::{DecodeError, Result};
use crate::interest::Interest;
use crate::lp::{LpHeader, LpPacket, NackReason};
use crate::tlv_type;

/// A Nack for an Interest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Nack {
    /// Why the Interest was refused.
    pub reason: NackReason,
    /// The Interest.
    pub interest: Interest,
}

impl Nack {
    /// The Nack carried by a decoded frame; fails unless `lp` has a Nack header and an
    /// unfragmented Interest.
    pub fn from_lp(lp: &LpPacket) -> Result<Self> {
        let reason = lp.header.nack.ok_or(DecodeError::Missing {
            typ: tlv_type::NACK,
        })?;
        if lp.is_fragmented() {
            return Err(DecodeError::InvalidValue {
                typ: tlv_type::NACK,
                reason: "a Nack must not be fragmented",
            });
        }
        let fragment = lp.fragment.clone().ok_or(DecodeError::Missing {
            typ: tlv_type::FRAGMENT,
        })?;
        Ok(Nack {
            reason,
            interest: Interest::decode(fragment)?,
        })
    }

    /// Decodes a frame holding a Nack.
    pub fn decode(frame: Bytes) -> Result<Self> {
        Self::from_lp(&LpPacket::decode(frame)?)
    }

    /// Encodes the Nack as an LpPacket around the encoded Interest.
    pub fn encode(&self) -> Bytes {
        Self::encode_for(self.reason, self.interest.encode())
    }

    /// Encodes a Nack with `reason` for an already-encoded Interest.
    pub fn encode_for(reason: NackReason, interest_wire: Bytes) -> Bytes {
        LpPacket {
            header: LpHeader {
                nack: Some(reason),
                ..LpHeader::default()
            },
            fragment: Some(interest_wire),
        }
        .encode()
    }
}
