//! Data packets: the forwarder view (name, MetaInfo, where Content starts) and the full decode
//! share one element walk; signing encodes into one exact-size buffer.

use bytes::{BufMut, Bytes};
use sha2::{Digest, Sha256};

use crate::encode::{nonneg_tlv_len, put_header, put_nonneg_tlv, put_tlv, tlv_len};
use crate::error::{DecodeError, Result};
use crate::headroom;
use crate::name::{Name, OwnedComponent, ScannedName};
use crate::signature::{SignError, SignatureInfo, SignatureType, Signer};
use crate::tlv::{read_single, read_single_of, Element, OrderGuard, Reader};
use crate::tlv_type;

/// ContentType numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ContentType(pub u64);

impl ContentType {
    /// BLOB: payload.
    pub const BLOB: Self = ContentType(0);
    /// LINK: a list of delegations.
    pub const LINK: Self = ContentType(1);
    /// KEY: a public key or certificate.
    pub const KEY: Self = ContentType(2);
    /// NACK: an application-level negative answer.
    pub const NACK: Self = ContentType(3);
    /// PREFIX_ANN: a prefix announcement.
    pub const PREFIX_ANN: Self = ContentType(5);
}

/// MetaInfo.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MetaInfo {
    /// ContentType (BLOB when absent).
    pub content_type: Option<ContentType>,
    /// FreshnessPeriod in ms (0 when absent: never fresh).
    pub freshness_period: Option<u64>,
    /// FinalBlockId.
    pub final_block_id: Option<OwnedComponent>,
}

impl MetaInfo {
    fn decode(packet: &Bytes, el: &Element<'_>) -> Result<Self> {
        let mut m = MetaInfo::default();
        let mut guard = OrderGuard::default();
        let mut r = el.children();
        while let Some(child) = r.next_element() {
            let child = child?;
            match child.typ {
                tlv_type::CONTENT_TYPE => {
                    guard.see(child.typ, 1)?;
                    m.content_type = Some(ContentType(child.nonneg()?));
                }
                tlv_type::FRESHNESS_PERIOD => {
                    guard.see(child.typ, 2)?;
                    m.freshness_period = Some(child.nonneg()?);
                }
                tlv_type::FINAL_BLOCK_ID => {
                    guard.see(child.typ, 3)?;
                    let c = read_single(child.value)?;
                    crate::name::validate_components(child.value)?;
                    let value = packet.slice(child.value_start + c.value_start..child.end());
                    m.final_block_id = Some(OwnedComponent::new(c.typ, value).ok_or(
                        DecodeError::InvalidValue {
                            typ: tlv_type::FINAL_BLOCK_ID,
                            reason: "component type outside 1..=65535",
                        },
                    )?);
                }
                _ => child.skip_unknown()?,
            }
        }
        Ok(m)
    }

    fn is_empty(&self) -> bool {
        self.content_type.is_none()
            && self.freshness_period.is_none()
            && self.final_block_id.is_none()
    }

    fn value_len(&self) -> usize {
        self.content_type
            .map_or(0, |t| nonneg_tlv_len(tlv_type::CONTENT_TYPE, t.0))
            + self
                .freshness_period
                .map_or(0, |f| nonneg_tlv_len(tlv_type::FRESHNESS_PERIOD, f))
            + self.final_block_id.as_ref().map_or(0, |c| {
                tlv_len(tlv_type::FINAL_BLOCK_ID, c.as_ref().encoded_len())
            })
    }

    fn encoded_len(&self) -> usize {
        if self.is_empty() {
            0
        } else {
            tlv_len(tlv_type::META_INFO, self.value_len())
        }
    }

    fn encode(&self, out: &mut impl BufMut) {
        if self.is_empty() {
            return;
        }
        put_header(out, tlv_type::META_INFO, self.value_len());
        if let Some(t) = self.content_type {
            put_nonneg_tlv(out, tlv_type::CONTENT_TYPE, t.0);
        }
        if let Some(f) = self.freshness_period {
            put_nonneg_tlv(out, tlv_type::FRESHNESS_PERIOD, f);
        }
        if let Some(c) = &self.final_block_id {
            put_header(out, tlv_type::FINAL_BLOCK_ID, c.as_ref().encoded_len());
            c.as_ref().encode(out);
        }
    }
}

/// Grammar positions of the Data's elements.
mod rank {
    pub const NAME: u8 = 1;
    pub const META_INFO: u8 = 2;
    pub const CONTENT: u8 = 3;
    pub const SIG_INFO: u8 = 4;
    pub const SIG_VALUE: u8 = 5;
}

/// What the forwarder reads of a Data; Content and the signature stay in the packet, unread.
#[derive(Debug, Clone)]
pub struct DataView {
    /// Name. It holds the whole received packet: see [`DataView::wire`].
    pub name: Name,
    /// MetaInfo.
    pub meta: MetaInfo,
    /// Offset in `wire` of the first element after MetaInfo (Content, or SignatureInfo).
    content_at: usize,
    guard: OrderGuard,
}

impl DataView {
    /// Decodes what forwarding needs from a Data element that fills `wire`.
    #[inline]
    pub fn decode(wire: Bytes) -> Result<Self> {
        let el = read_single_of(&wire, tlv_type::DATA)?;
        let mut r = el.children();
        let name = ScannedName::scan(&r.expect(tlv_type::NAME)?)?;
        let mut guard = OrderGuard::default();
        guard.see(tlv_type::NAME, rank::NAME)?;
        let mut meta = MetaInfo::default();
        let mut content_at = wire.len();
        while let Some(typ) = r.peek_type() {
            if matches!(
                typ,
                tlv_type::CONTENT | tlv_type::SIGNATURE_INFO | tlv_type::SIGNATURE_VALUE
            ) {
                // Stop before Content: its length was bounded by the outer element already.
                content_at = r.offset();
                break;
            }
            let child = r.read()?;
            match child.typ {
                tlv_type::META_INFO => {
                    guard.see(child.typ, rank::META_INFO)?;
                    meta = MetaInfo::decode(&wire, &child)?;
                }
                tlv_type::NAME => {
                    return Err(DecodeError::Duplicate {
                        typ: tlv_type::NAME,
                    })
                }
                _ => child.skip_unknown()?,
            }
        }
        if !r.is_empty() && r.peek_type().is_none() {
            // A malformed TLV-TYPE where Content would start.
            r.read()?;
        }
        Ok(DataView {
            name: name.into_name(wire),
            meta,
            content_at,
            guard,
        })
    }

    /// Copies the packet into a buffer of its own, so that keeping the view does not keep the
    /// receive buffer it was read into.
    pub fn detach(&mut self) {
        self.name.detach_backing();
    }

    /// The whole Data element, as received.
    #[inline]
    pub fn wire(&self) -> &Bytes {
        self.name.backing()
    }

    /// FreshnessPeriod in ms (0 when absent).
    #[inline]
    pub fn freshness_ms(&self) -> u64 {
        self.meta.freshness_period.unwrap_or(0)
    }

    /// Offset in `wire` where Content (or, without Content, SignatureInfo) starts.
    #[inline]
    pub fn content_offset(&self) -> usize {
        self.content_at
    }

    /// The implicit SHA-256 digest of the whole Data (the last component of its full name).
    pub fn implicit_digest(&self) -> [u8; 32] {
        Sha256::digest(self.wire()).into()
    }
}

/// A whole Data packet, for applications. Equality compares the fields, not the received
/// encoding.
#[derive(Debug, Clone)]
pub struct Data {
    /// Name.
    pub name: Name,
    /// MetaInfo (omitted from the encoding when empty).
    pub meta: MetaInfo,
    /// Content (absent and empty differ on the wire).
    pub content: Option<Bytes>,
    /// SignatureInfo.
    pub sig_info: SignatureInfo,
    /// SignatureValue.
    pub sig_value: Bytes,
    /// The received encoding, kept by [`Data::decode`] for signature verification.
    wire: Option<Bytes>,
}

impl PartialEq for Data {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
            && self.meta == other.meta
            && self.content == other.content
            && self.sig_info == other.sig_info
            && self.sig_value == other.sig_value
    }
}

impl Eq for Data {}

impl Data {
    /// A Data named `name` with `content`, not yet signed.
    pub fn new(name: Name, content: impl Into<Bytes>) -> Self {
        Data {
            name,
            meta: MetaInfo::default(),
            content: Some(content.into()),
            sig_info: SignatureInfo::new(SignatureType::DIGEST_SHA256),
            sig_value: Bytes::new(),
            wire: None,
        }
    }

    /// Decodes every field of a Data element that fills `wire`.
    pub fn decode(wire: Bytes) -> Result<Self> {
        Self::from_view(DataView::decode(wire)?)
    }

    /// Completes a forwarder view into a whole Data.
    pub fn from_view(v: DataView) -> Result<Self> {
        let wire = v.wire().clone();
        let wire = &wire;
        let mut guard = v.guard;
        let mut content = None;
        let mut sig_info = None;
        let mut sig_value = None;
        // The view stopped inside the Data's value, which ends where `wire` ends.
        let mut r = Reader::with_base(&wire[v.content_at..], v.content_at);
        while let Some(child) = r.next_element() {
            let child = child?;
            match child.typ {
                tlv_type::CONTENT => {
                    guard.see(child.typ, rank::CONTENT)?;
                    content = Some(wire.slice(child.value_range()));
                }
                tlv_type::SIGNATURE_INFO => {
                    guard.see(child.typ, rank::SIG_INFO)?;
                    sig_info = Some(SignatureInfo::decode(wire, &child)?);
                }
                tlv_type::SIGNATURE_VALUE => {
                    guard.see(child.typ, rank::SIG_VALUE)?;
                    sig_value = Some(wire.slice(child.value_range()));
                }
                tlv_type::NAME | tlv_type::META_INFO => {
                    return Err(DecodeError::OutOfOrder { typ: child.typ })
                }
                _ => child.skip_unknown()?,
            }
        }
        Ok(Data {
            name: v.name,
            meta: v.meta,
            content,
            sig_info: sig_info.ok_or(DecodeError::Missing {
                typ: tlv_type::SIGNATURE_INFO,
            })?,
            sig_value: sig_value.ok_or(DecodeError::Missing {
                typ: tlv_type::SIGNATURE_VALUE,
            })?,
            wire: Some(wire.clone()),
        })
    }

    /// The received encoding (only for decoded Data).
    pub fn wire(&self) -> Option<&Bytes> {
        self.wire.as_ref()
    }

    /// The signed portion of a decoded Data: Name through SignatureInfo.
    pub fn signed_portion(&self) -> Option<Bytes> {
        let wire = self.wire.as_ref()?;
        let outer = read_single(wire).ok()?;
        let mut r = outer.children();
        let mut end = outer.value_start;
        while let Some(Ok(el)) = r.next_element() {
            if el.typ == tlv_type::SIGNATURE_VALUE {
                return Some(wire.slice(outer.value_start..end));
            }
            end = el.end();
        }
        None
    }

    /// The implicit SHA-256 digest of a decoded Data; for a built one, of its encoding.
    pub fn implicit_digest(&self) -> [u8; 32] {
        match &self.wire {
            Some(w) => Sha256::digest(w).into(),
            None => Sha256::digest(self.encode()).into(),
        }
    }

    /// Encodes the Data with its current SignatureInfo and SignatureValue.
    pub fn encode(&self) -> Bytes {
        let value_len =
            self.unsigned_len() + tlv_len(tlv_type::SIGNATURE_VALUE, self.sig_value.len());
        let mut buf = headroom::buffer(value_len);
        self.encode_unsigned(&self.sig_info, &mut buf);
        put_tlv(&mut buf, tlv_type::SIGNATURE_VALUE, &self.sig_value);
        headroom::finish(buf, tlv_type::DATA)
    }

    /// What follows the Name in [`Data::encode`]'s octets (MetaInfo, Content, SignatureInfo,
    /// SignatureValue). Encoded once, it answers any number of names: a Data is the DATA TLV
    /// header (value length: the Name's TLV plus these octets), the Name, then these octets.
    /// Producers that answer every Interest with the same content (benchmarks) write only the
    /// header and the Name per packet.
    pub fn encode_after_name(&self) -> Bytes {
        let len = self.unsigned_len() - self.name.encoded_len()
            + tlv_len(tlv_type::SIGNATURE_VALUE, self.sig_value.len());
        let mut out = Vec::with_capacity(len);
        self.encode_after_name_unsigned(&self.sig_info, &mut out);
        put_tlv(&mut out, tlv_type::SIGNATURE_VALUE, &self.sig_value);
        Bytes::from(out)
    }

    /// Encodes the Data signed by `signer`, whose type and KeyLocator replace those in
    /// `sig_info` (its other fields are kept).
    pub fn sign(&self, signer: &dyn Signer) -> core::result::Result<Bytes, SignError> {
        let mut info = self.sig_info.clone();
        info.sig_type = signer.signature_type();
        info.key_locator = signer.key_locator();
        let capacity = self.unsigned_len() - self.sig_info.encoded_len(tlv_type::SIGNATURE_INFO)
            + info.encoded_len(tlv_type::SIGNATURE_INFO)
            + tlv_len(tlv_type::SIGNATURE_VALUE, signer.max_signature_len());
        let mut buf = headroom::buffer(capacity);
        self.encode_unsigned(&info, &mut buf);
        let sig = signer.sign(&[&buf[headroom::HEADROOM..]])?;
        put_tlv(&mut buf, tlv_type::SIGNATURE_VALUE, &sig);
        Ok(headroom::finish(buf, tlv_type::DATA))
    }

    /// Octets from Name through SignatureInfo (with the current SignatureInfo).
    fn unsigned_len(&self) -> usize {
        self.name.encoded_len()
            + self.meta.encoded_len()
            + self
                .content
                .as_ref()
                .map_or(0, |c| tlv_len(tlv_type::CONTENT, c.len()))
            + self.sig_info.encoded_len(tlv_type::SIGNATURE_INFO)
    }

    fn encode_unsigned(&self, info: &SignatureInfo, out: &mut impl BufMut) {
        self.name.encode(out);
        self.encode_after_name_unsigned(info, out);
    }

    /// MetaInfo, Content and SignatureInfo (`info`).
    fn encode_after_name_unsigned(&self, info: &SignatureInfo, out: &mut impl BufMut) {
        self.meta.encode(out);
        if let Some(c) = &self.content {
            put_tlv(out, tlv_type::CONTENT, c);
        }
        info.encode(tlv_type::SIGNATURE_INFO, out);
    }
}

#[cfg(test)]
mod tests;
