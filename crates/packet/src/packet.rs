//! Telling network-layer packets apart by their outer TLV-TYPE.

use bytes::Bytes;

use crate::data::{Data, DataView};
use crate::error::{DecodeError, Result};
use crate::interest::{Interest, InterestView};
use crate::lp::{LpHeader, LpPacket};
use crate::nack::Nack;
use crate::tlv_type;
use crate::varnum::read_varnum;

/// The forwarder view of a network-layer packet (an LpPacket's reassembled fragment).
#[derive(Debug, Clone)]
pub enum NetPacketView {
    /// An Interest (a Nack when the LP header says so).
    Interest(InterestView),
    /// A Data.
    Data(DataView),
}

impl NetPacketView {
    /// Decodes the forwarder view of an Interest or Data that fills `wire`.
    #[inline]
    pub fn decode(wire: Bytes) -> Result<Self> {
        match outer_type(&wire)? {
            tlv_type::INTEREST => InterestView::decode(wire).map(NetPacketView::Interest),
            tlv_type::DATA => DataView::decode(wire).map(NetPacketView::Data),
            actual => Err(DecodeError::UnexpectedType {
                expected: tlv_type::INTEREST,
                actual,
            }),
        }
    }
}

/// A fully decoded network-layer packet, for applications.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NetPacket {
    /// An Interest.
    Interest(Interest),
    /// A Data.
    Data(Data),
    /// A Nack.
    Nack(Nack),
}

impl NetPacket {
    /// Decodes a whole, unfragmented frame (LpPacket or bare packet) into its header fields and
    /// the packet it carries.
    pub fn decode_frame(frame: Bytes) -> Result<(LpHeader, NetPacket)> {
        let lp = LpPacket::decode(frame)?;
        if lp.is_fragmented() {
            return Err(DecodeError::InvalidValue {
                typ: tlv_type::FRAG_COUNT,
                reason: "a fragment needs reassembly before it can be decoded",
            });
        }
        let packet = if lp.header.nack.is_some() {
            NetPacket::Nack(Nack::from_lp(&lp)?)
        } else {
            let wire = lp.fragment.clone().ok_or(DecodeError::Missing {
                typ: tlv_type::FRAGMENT,
            })?;
            match outer_type(&wire)? {
                tlv_type::INTEREST => NetPacket::Interest(Interest::decode(wire)?),
                tlv_type::DATA => NetPacket::Data(Data::decode(wire)?),
                actual => {
                    return Err(DecodeError::UnexpectedType {
                        expected: tlv_type::INTEREST,
                        actual,
                    })
                }
            }
        };
        Ok((lp.header, packet))
    }
}

/// The TLV-TYPE of the element at the start of `wire`.
#[inline]
fn outer_type(wire: &[u8]) -> Result<u64> {
    read_varnum(wire).map(|(t, _)| t)
}
