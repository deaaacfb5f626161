//! NDNLPv2 link-layer packets: header fields around one network-layer fragment.
//!
//! A bare Interest or Data is also a valid frame (an LpPacket with no header fields). Header
//! fields must come in increasing TLV-TYPE order with Fragment last; an unknown field is ignored
//! only in the reserved ignorable range, otherwise the frame is invalid.

use bytes::{Buf, BufMut, Bytes, BytesMut};
use smallvec::SmallVec;

use crate::encode::{nonneg_tlv_len, put_header, put_nonneg_tlv, put_tlv, put_u64_tlv, tlv_len};
use crate::error::{DecodeError, Result};
use crate::tlv::{read_single, read_single_of, set_once, Element};
use crate::tlv_type;

mod fragment;
mod hop;
pub use fragment::{FragmentError, Fragments, FRAG_OVERHEAD};
pub use hop::HopHeader;

/// Longest PIT token NDNLPv2 allows here.
pub const MAX_PIT_TOKEN_LEN: usize = 32;

/// An opaque PIT token of 1 to 32 octets, stored inline so PIT records need no allocation.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct PitToken {
    len: u8,
    bytes: [u8; MAX_PIT_TOKEN_LEN],
}

impl PitToken {
    /// A token holding `v`; `None` unless it is 1 to 32 octets.
    pub fn new(v: &[u8]) -> Option<Self> {
        if v.is_empty() || v.len() > MAX_PIT_TOKEN_LEN {
            return None;
        }
        let mut bytes = [0; MAX_PIT_TOKEN_LEN];
        bytes[..v.len()].copy_from_slice(v);
        Some(PitToken {
            len: v.len() as u8,
            bytes,
        })
    }

    /// An 8-octet token holding `n` big-endian (the form Kite's forwarder issues).
    pub fn from_u64(n: u64) -> Self {
        PitToken::new(&n.to_be_bytes()).expect("8 octets is a valid token length")
    }

    /// The token's octets.
    #[inline]
    pub fn as_slice(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }

    /// The token as a number when it is exactly 8 octets (a Kite token).
    #[inline]
    pub fn as_u64(&self) -> Option<u64> {
        self.as_slice().try_into().ok().map(u64::from_be_bytes)
    }
}

impl core::fmt::Debug for PitToken {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "PitToken(")?;
        for b in self.as_slice() {
            write!(f, "{b:02x}")?;
        }
        write!(f, ")")
    }
}

/// NackReason numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NackReason(pub u64);

impl NackReason {
    /// No reason given (a Nack header without NackReason).
    pub const NONE: Self = NackReason(0);
    /// Congestion.
    pub const CONGESTION: Self = NackReason(50);
    /// Duplicate (a loop was detected).
    pub const DUPLICATE: Self = NackReason(100);
    /// NoRoute.
    pub const NO_ROUTE: Self = NackReason(150);
}

/// CachePolicyType numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CachePolicy(pub u64);

impl CachePolicy {
    /// NoCache: do not store this Data.
    pub const NO_CACHE: Self = CachePolicy(1);
}

/// The header fields of an LpPacket.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LpHeader {
    /// Sequence (of the fragment, for reassembly and reliability).
    pub sequence: Option<u64>,
    /// FragIndex (0 when absent).
    pub frag_index: Option<u64>,
    /// FragCount (1 when absent).
    pub frag_count: Option<u64>,
    /// PitToken.
    pub pit_token: Option<PitToken>,
    /// Nack (the fragment is the Interest being Nacked).
    pub nack: Option<NackReason>,
    /// IncomingFaceId (forwarder to local app).
    pub incoming_face_id: Option<u64>,
    /// NextHopFaceId (local app to forwarder).
    pub next_hop_face_id: Option<u64>,
    /// CachePolicy.
    pub cache_policy: Option<CachePolicy>,
    /// CongestionMark.
    pub congestion_mark: Option<u64>,
    /// Ack (repeatable); inline up to 4.
    pub acks: SmallVec<[u64; 4]>,
    /// TxSequence.
    pub tx_sequence: Option<u64>,
    /// NonDiscovery.
    pub non_discovery: bool,
    /// PrefixAnnouncement: the announcement Data element.
    pub prefix_announcement: Option<Bytes>,
}

/// Sort positions of the header fields (increasing TLV-TYPE; Fragment last).
fn field_rank(typ: u64) -> Option<u8> {
    Some(match typ {
        tlv_type::SEQUENCE => 1,
        tlv_type::FRAG_INDEX => 2,
        tlv_type::FRAG_COUNT => 3,
        tlv_type::PIT_TOKEN => 4,
        tlv_type::NACK => 5,
        tlv_type::INCOMING_FACE_ID => 6,
        tlv_type::NEXT_HOP_FACE_ID => 7,
        tlv_type::CACHE_POLICY => 8,
        tlv_type::CONGESTION_MARK => 9,
        tlv_type::ACK => 10,
        tlv_type::TX_SEQUENCE => 11,
        tlv_type::NON_DISCOVERY => 12,
        tlv_type::PREFIX_ANNOUNCEMENT => 13,
        tlv_type::FRAGMENT => 14,
        _ => return None,
    })
}

impl LpHeader {
    /// Whether no field is set, so the fragment can travel bare.
    pub fn is_empty(&self) -> bool {
        let LpHeader {
            sequence,
            frag_index,
            frag_count,
            pit_token,
            nack,
            incoming_face_id,
            next_hop_face_id,
            cache_policy,
            congestion_mark,
            acks,
            tx_sequence,
            non_discovery,
            prefix_announcement,
        } = self;
        sequence.is_none()
            && frag_index.is_none()
            && frag_count.is_none()
            && pit_token.is_none()
            && nack.is_none()
            && incoming_face_id.is_none()
            && next_hop_face_id.is_none()
            && cache_policy.is_none()
            && congestion_mark.is_none()
            && acks.is_empty()
            && tx_sequence.is_none()
            && !non_discovery
            && prefix_announcement.is_none()
    }

    /// Octets of the header fields.
    #[inline]
    pub fn fields_len(&self) -> usize {
        let u64_field = |typ| tlv_len(typ, 8);
        self.sequence.map_or(0, |_| u64_field(tlv_type::SEQUENCE))
            + self
                .frag_index
                .map_or(0, |n| nonneg_tlv_len(tlv_type::FRAG_INDEX, n))
            + self
                .frag_count
                .map_or(0, |n| nonneg_tlv_len(tlv_type::FRAG_COUNT, n))
            + self
                .pit_token
                .map_or(0, |t| tlv_len(tlv_type::PIT_TOKEN, t.as_slice().len()))
            + self.nack.map_or(0, nack_field_len)
            + self
                .incoming_face_id
                .map_or(0, |n| nonneg_tlv_len(tlv_type::INCOMING_FACE_ID, n))
            + self
                .next_hop_face_id
                .map_or(0, |n| nonneg_tlv_len(tlv_type::NEXT_HOP_FACE_ID, n))
            + self.cache_policy.map_or(0, |p| {
                tlv_len(
                    tlv_type::CACHE_POLICY,
                    nonneg_tlv_len(tlv_type::CACHE_POLICY_TYPE, p.0),
                )
            })
            + self
                .congestion_mark
                .map_or(0, |n| nonneg_tlv_len(tlv_type::CONGESTION_MARK, n))
            + self.acks.len() * u64_field(tlv_type::ACK)
            + self
                .tx_sequence
                .map_or(0, |_| u64_field(tlv_type::TX_SEQUENCE))
            + if self.non_discovery {
                tlv_len(tlv_type::NON_DISCOVERY, 0)
            } else {
                0
            }
            + self
                .prefix_announcement
                .as_ref()
                .map_or(0, |p| tlv_len(tlv_type::PREFIX_ANNOUNCEMENT, p.len()))
    }

    /// Octets [`LpHeader::encode_header`] writes for a fragment of `fragment_len` octets
    /// (`None`: no Fragment field).
    #[inline]
    pub fn header_len(&self, fragment_len: Option<usize>) -> usize {
        let fields = self.fields_len();
        let value_len = fields + fragment_len.map_or(0, |n| tlv_len(tlv_type::FRAGMENT, n));
        let frag_header = fragment_len.map_or(0, |n| tlv_len(tlv_type::FRAGMENT, n) - n);
        tlv_len(tlv_type::LP_PACKET, value_len) - value_len + fields + frag_header
    }

    /// Appends `packet` as a link sends it: bare when no field is set (see
    /// [`LpHeader::is_empty`]), otherwise in an LpPacket with these fields.
    pub fn put_framed(&self, packet: &[u8], out: &mut impl BufMut) {
        if !self.is_empty() {
            self.encode_header(Some(packet.len()), out);
        }
        out.put_slice(packet);
    }

    /// Writes everything of the LpPacket that precedes the fragment's octets: the LpPacket
    /// TLV-TYPE and TLV-LENGTH, the header fields, and the Fragment TLV-TYPE and TLV-LENGTH.
    /// The caller sends these octets followed by the fragment (e.g. with `writev`), so a packet
    /// is wrapped for a link without being copied.
    #[inline]
    pub fn encode_header(&self, fragment_len: Option<usize>, out: &mut impl BufMut) {
        let value_len =
            self.fields_len() + fragment_len.map_or(0, |n| tlv_len(tlv_type::FRAGMENT, n));
        put_header(out, tlv_type::LP_PACKET, value_len);
        if let Some(s) = self.sequence {
            put_u64_tlv(out, tlv_type::SEQUENCE, s);
        }
        if let Some(n) = self.frag_index {
            put_nonneg_tlv(out, tlv_type::FRAG_INDEX, n);
        }
        if let Some(n) = self.frag_count {
            put_nonneg_tlv(out, tlv_type::FRAG_COUNT, n);
        }
        if let Some(t) = &self.pit_token {
            put_tlv(out, tlv_type::PIT_TOKEN, t.as_slice());
        }
        if let Some(r) = self.nack {
            put_nack(out, r);
        }
        if let Some(n) = self.incoming_face_id {
            put_nonneg_tlv(out, tlv_type::INCOMING_FACE_ID, n);
        }
        if let Some(n) = self.next_hop_face_id {
            put_nonneg_tlv(out, tlv_type::NEXT_HOP_FACE_ID, n);
        }
        if let Some(p) = self.cache_policy {
            put_header(
                out,
                tlv_type::CACHE_POLICY,
                nonneg_tlv_len(tlv_type::CACHE_POLICY_TYPE, p.0),
            );
            put_nonneg_tlv(out, tlv_type::CACHE_POLICY_TYPE, p.0);
        }
        if let Some(n) = self.congestion_mark {
            put_nonneg_tlv(out, tlv_type::CONGESTION_MARK, n);
        }
        for &a in &self.acks {
            put_u64_tlv(out, tlv_type::ACK, a);
        }
        if let Some(s) = self.tx_sequence {
            put_u64_tlv(out, tlv_type::TX_SEQUENCE, s);
        }
        if self.non_discovery {
            put_header(out, tlv_type::NON_DISCOVERY, 0);
        }
        if let Some(p) = &self.prefix_announcement {
            put_tlv(out, tlv_type::PREFIX_ANNOUNCEMENT, p);
        }
        if let Some(n) = fragment_len {
            put_header(out, tlv_type::FRAGMENT, n);
        }
    }

    /// Decodes one header field into `self`.
    fn decode_field(&mut self, packet: &Bytes, f: &Element<'_>) -> Result<()> {
        let typ = f.typ;
        match f.typ {
            tlv_type::SEQUENCE => set_once(&mut self.sequence, f.nonneg()?, typ),
            tlv_type::FRAG_INDEX => set_once(&mut self.frag_index, f.nonneg()?, typ),
            tlv_type::FRAG_COUNT => set_once(&mut self.frag_count, f.nonneg()?, typ),
            tlv_type::PIT_TOKEN => {
                let t = PitToken::new(f.value).ok_or(DecodeError::InvalidLength {
                    typ: f.typ,
                    len: f.value.len(),
                })?;
                set_once(&mut self.pit_token, t, typ)
            }
            tlv_type::NACK => {
                let mut reason = NackReason::NONE;
                let mut r = f.children();
                while let Some(c) = r.next_element() {
                    let c = c?;
                    if c.typ == tlv_type::NACK_REASON {
                        reason = NackReason(c.nonneg()?);
                    } else {
                        c.skip_unknown()?;
                    }
                }
                set_once(&mut self.nack, reason, typ)
            }
            tlv_type::INCOMING_FACE_ID => set_once(&mut self.incoming_face_id, f.nonneg()?, typ),
            tlv_type::NEXT_HOP_FACE_ID => set_once(&mut self.next_hop_face_id, f.nonneg()?, typ),
            tlv_type::CACHE_POLICY => {
                let t = f.children().expect(tlv_type::CACHE_POLICY_TYPE)?.nonneg()?;
                set_once(&mut self.cache_policy, CachePolicy(t), typ)
            }
            tlv_type::CONGESTION_MARK => set_once(&mut self.congestion_mark, f.nonneg()?, typ),
            tlv_type::ACK => {
                self.acks.push(f.nonneg()?);
                Ok(())
            }
            tlv_type::TX_SEQUENCE => set_once(&mut self.tx_sequence, f.nonneg()?, typ),
            tlv_type::NON_DISCOVERY => {
                f.expect_len(0)?;
                if self.non_discovery {
                    return Err(DecodeError::Duplicate { typ });
                }
                self.non_discovery = true;
                Ok(())
            }
            tlv_type::PREFIX_ANNOUNCEMENT => {
                read_single_of(f.value, tlv_type::DATA)?;
                set_once(
                    &mut self.prefix_announcement,
                    packet.slice(f.value_range()),
                    typ,
                )
            }
            typ => Err(DecodeError::UnknownCritical { typ }),
        }
    }
}

/// Octets of the whole Nack field for `reason`.
fn nack_field_len(reason: NackReason) -> usize {
    tlv_len(tlv_type::NACK, nack_value_len(reason))
}

/// Writes the Nack field (with NackReason unless it is [`NackReason::NONE`]); shared by the
/// full header and the per-hop writer so both produce the same octets.
fn put_nack(out: &mut impl BufMut, reason: NackReason) {
    put_header(out, tlv_type::NACK, nack_value_len(reason));
    if reason != NackReason::NONE {
        put_nonneg_tlv(out, tlv_type::NACK_REASON, reason.0);
    }
}

/// Octets of the Nack field's value for `reason`.
fn nack_value_len(reason: NackReason) -> usize {
    if reason == NackReason::NONE {
        0
    } else {
        nonneg_tlv_len(tlv_type::NACK_REASON, reason.0)
    }
}

/// An NDNLPv2 frame: header fields and at most one fragment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LpPacket {
    /// Header fields.
    pub header: LpHeader,
    /// The fragment: a whole network-layer packet, or a piece of one when fragmented.
    pub fragment: Option<Bytes>,
}

/// A frame after [`LpPacket::peel`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Peeled {
    /// A bare Interest or Data (no token), or `LpPacket{PitToken, Fragment}`: its token and
    /// the network packet's octets.
    Packet(Option<PitToken>, Bytes),
    /// Any other LpPacket (the whole frame), for [`LpPacket::decode`].
    Lp(Bytes),
}

impl LpPacket {
    /// Decodes a frame that fills `frame`: an LpPacket, or a bare Interest or Data (which
    /// becomes an LpPacket with no header fields and the whole frame as fragment).
    #[inline]
    pub fn decode(frame: Bytes) -> Result<Self> {
        match Self::peel(frame)? {
            Peeled::Packet(pit_token, packet) => Ok(LpPacket {
                header: LpHeader {
                    pit_token,
                    ..LpHeader::default()
                },
                fragment: Some(packet),
            }),
            Peeled::Lp(frame) => Self::decode_fields(&frame, read_single(&frame)?.children()),
        }
    }

    /// Decodes a frame that fills `frame` as far as its shape needs: a bare Interest or Data,
    /// or the usual `LpPacket{PitToken, Fragment}`, comes out as the network packet and its
    /// token without an [`LpHeader`] being built (a receiver then moves a few octets, not the
    /// whole header); any other LpPacket comes out whole, for [`LpPacket::decode`]. Errors
    /// are those `decode` gives for a frame whose outer element is malformed or of another
    /// type.
    #[inline]
    pub fn peel(frame: Bytes) -> Result<Peeled> {
        let outer = read_single(&frame)?;
        match outer.typ {
            tlv_type::INTEREST | tlv_type::DATA => return Ok(Peeled::Packet(None, frame)),
            tlv_type::LP_PACKET => {}
            actual => {
                return Err(DecodeError::UnexpectedType {
                    expected: tlv_type::LP_PACKET,
                    actual,
                })
            }
        }
        if let Some((token, fragment)) = token_only(outer.value) {
            let start = outer.value_start + fragment.start;
            let mut frame = frame;
            frame.truncate(start + fragment.len());
            frame.advance(start);
            return Ok(Peeled::Packet(Some(token), frame));
        }
        Ok(Peeled::Lp(frame))
    }

    /// Reads every header field and the fragment of an LpPacket whose value `r` reads.
    fn decode_fields(frame: &Bytes, mut r: crate::tlv::Reader<'_>) -> Result<Self> {
        let mut lp = LpPacket::default();
        let mut last_rank = 0;
        while let Some(f) = r.next_element() {
            let f = f?;
            if lp.fragment.is_some() {
                return Err(DecodeError::OutOfOrder { typ: f.typ });
            }
            let Some(rank) = field_rank(f.typ) else {
                if tlv_type::lp_can_ignore(f.typ) {
                    continue;
                }
                return Err(DecodeError::UnknownCritical { typ: f.typ });
            };
            if rank < last_rank {
                return Err(DecodeError::OutOfOrder { typ: f.typ });
            }
            last_rank = rank;
            if f.typ == tlv_type::FRAGMENT {
                if f.value.is_empty() {
                    return Err(DecodeError::InvalidLength { typ: f.typ, len: 0 });
                }
                lp.fragment = Some(frame.slice(f.value_range()));
            } else {
                lp.header.decode_field(frame, &f)?;
            }
        }
        let h = &lp.header;
        let count = h.frag_count.unwrap_or(1);
        if count == 0 || h.frag_index.unwrap_or(0) >= count {
            return Err(DecodeError::InvalidValue {
                typ: tlv_type::FRAG_INDEX,
                reason: "FragIndex must be below a non-zero FragCount",
            });
        }
        Ok(lp)
    }

    /// Whether this frame carries one piece of a fragmented packet.
    pub fn is_fragmented(&self) -> bool {
        self.header.frag_count.unwrap_or(1) > 1
    }

    /// Encodes the frame into one new buffer (copying the fragment). An empty header still
    /// produces an LpPacket; send [`LpPacket::fragment`] alone to send a bare packet.
    pub fn encode(&self) -> Bytes {
        let frag_len = self.fragment.as_ref().map(Bytes::len);
        let mut buf =
            BytesMut::with_capacity(self.header.header_len(frag_len) + frag_len.unwrap_or(0));
        self.header.encode_header(frag_len, &mut buf);
        if let Some(f) = &self.fragment {
            buf.put_slice(f);
        }
        buf.freeze()
    }
}

/// The usual frame between forwarders and apps, `LpPacket{PitToken, Fragment}` with one-octet
/// TLV lengths before the fragment, read straight from the LpPacket's value (the general
/// decoder walks every field through the TLV reader): the token and the fragment's range in
/// the value. `None` for any other shape, which the general decoder then handles, errors
/// included.
#[inline]
fn token_only(value: &[u8]) -> Option<(PitToken, core::ops::Range<usize>)> {
    const PIT_TOKEN: u8 = tlv_type::PIT_TOKEN as u8;
    const FRAGMENT: u8 = tlv_type::FRAGMENT as u8;
    let [PIT_TOKEN, token_len @ 1..=32, rest @ ..] = value else {
        return None;
    };
    let token_len = usize::from(*token_len);
    let (token, rest) = rest.split_at_checked(token_len)?;
    let (frag_len, header) = match rest {
        [FRAGMENT, len @ 1..=252, ..] => (usize::from(*len), 2),
        [FRAGMENT, 0xFD, hi, lo, ..] => (usize::from(u16::from_be_bytes([*hi, *lo])), 4),
        _ => return None,
    };
    if rest.len() != header + frag_len || (header == 4 && frag_len < 253) {
        return None;
    }
    let start = 2 + token_len + header;
    Some((PitToken::new(token)?, start..start + frag_len))
}

#[cfg(test)]
mod tests;
