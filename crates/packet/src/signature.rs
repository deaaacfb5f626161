//! SignatureInfo (of Data and of signed Interests), KeyLocator, ValidityPeriod, and the
//! [`Signer`] seam through which `kite-security` plugs real algorithms into encoding.
//!
//! This crate ships only [`DigestSha256`], which needs no key.

use bytes::{BufMut, Bytes};
use sha2::{Digest, Sha256};
use smallvec::SmallVec;
use thiserror::Error;

use crate::encode::{nonneg_tlv_len, put_header, put_nonneg_tlv, put_tlv, tlv_len};
use crate::error::{DecodeError, Result};
use crate::name::Name;
use crate::tlv::{set_once, Element};
use crate::tlv_type;

/// SignatureType numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SignatureType(pub u64);

impl SignatureType {
    /// DigestSha256.
    pub const DIGEST_SHA256: Self = SignatureType(0);
    /// SignatureSha256WithRsa.
    pub const SHA256_WITH_RSA: Self = SignatureType(1);
    /// SignatureSha256WithEcdsa.
    pub const SHA256_WITH_ECDSA: Self = SignatureType(3);
    /// SignatureHmacWithSha256.
    pub const HMAC_WITH_SHA256: Self = SignatureType(4);
    /// SignatureEd25519.
    pub const ED25519: Self = SignatureType(5);
    /// Null signature (no integrity protection).
    pub const NULL: Self = SignatureType(200);
}

/// Where the verification key is found.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum KeyLocator {
    /// The name of the key or certificate.
    Name(Name),
    /// The SHA-256 digest of the public key.
    KeyDigest(Bytes),
}

impl KeyLocator {
    fn decode(packet: &Bytes, el: &Element<'_>) -> Result<Self> {
        let mut r = el.children();
        let inner = r.next_element().ok_or(DecodeError::Missing {
            typ: tlv_type::NAME,
        })??;
        let kl = match inner.typ {
            tlv_type::NAME => KeyLocator::Name(Name::from_element(packet, &inner)?),
            tlv_type::KEY_DIGEST => KeyLocator::KeyDigest(packet.slice(inner.value_range())),
            typ => {
                return Err(DecodeError::UnexpectedType {
                    expected: tlv_type::NAME,
                    actual: typ,
                })
            }
        };
        while let Some(extra) = r.next_element() {
            extra?.skip_unknown()?;
        }
        Ok(kl)
    }

    fn value_len(&self) -> usize {
        match self {
            KeyLocator::Name(n) => n.encoded_len(),
            KeyLocator::KeyDigest(d) => tlv_len(tlv_type::KEY_DIGEST, d.len()),
        }
    }

    fn encode(&self, out: &mut impl BufMut) {
        put_header(out, tlv_type::KEY_LOCATOR, self.value_len());
        match self {
            KeyLocator::Name(n) => n.encode(out),
            KeyLocator::KeyDigest(d) => put_tlv(out, tlv_type::KEY_DIGEST, d),
        }
    }
}

/// A certificate's validity period: two `YYYYMMDDThhmmss` timestamps (UTC).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ValidityPeriod {
    /// NotBefore.
    pub not_before: [u8; 15],
    /// NotAfter.
    pub not_after: [u8; 15],
}

impl ValidityPeriod {
    /// Builds one from two `YYYYMMDDThhmmss` strings; `None` if either is malformed.
    pub fn new(not_before: &str, not_after: &str) -> Option<Self> {
        Some(ValidityPeriod {
            not_before: parse_timestamp(not_before.as_bytes())?,
            not_after: parse_timestamp(not_after.as_bytes())?,
        })
    }

    /// Decodes a ValidityPeriod element (in SignatureInfo, or in a prefix announcement's
    /// Content); unknown non-critical elements after NotAfter are skipped.
    pub fn decode(el: &Element<'_>) -> Result<Self> {
        let mut r = el.children();
        let nb = r.expect(tlv_type::NOT_BEFORE)?;
        let na = r.expect(tlv_type::NOT_AFTER)?;
        while let Some(extra) = r.next_element() {
            extra?.skip_unknown()?;
        }
        let bad = |typ| DecodeError::InvalidValue {
            typ,
            reason: "timestamp is not YYYYMMDDThhmmss",
        };
        Ok(ValidityPeriod {
            not_before: parse_timestamp(nb.value).ok_or(bad(tlv_type::NOT_BEFORE))?,
            not_after: parse_timestamp(na.value).ok_or(bad(tlv_type::NOT_AFTER))?,
        })
    }

    const VALUE_LEN: usize = tlv_len(tlv_type::NOT_BEFORE, 15) + tlv_len(tlv_type::NOT_AFTER, 15);

    fn encode(&self, out: &mut impl BufMut) {
        put_header(out, tlv_type::VALIDITY_PERIOD, Self::VALUE_LEN);
        put_tlv(out, tlv_type::NOT_BEFORE, &self.not_before);
        put_tlv(out, tlv_type::NOT_AFTER, &self.not_after);
    }
}

/// Checks the `YYYYMMDDThhmmss` shape.
fn parse_timestamp(v: &[u8]) -> Option<[u8; 15]> {
    let ts: [u8; 15] = v.try_into().ok()?;
    let shape_ok = ts.iter().enumerate().all(|(i, &b)| {
        if i == 8 {
            b == b'T'
        } else {
            b.is_ascii_digit()
        }
    });
    shape_ok.then_some(ts)
}

/// Days from 1970-01-01 to the proleptic Gregorian date `y-m-d` (negative before it), to
/// read a ValidityPeriod timestamp as Unix time (the days-from-civil algorithm of Howard
/// Hinnant's "chrono-Compatible Low-Level Date Algorithms").
pub fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// SignatureInfo / InterestSignatureInfo.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignatureInfo {
    /// SignatureType.
    pub sig_type: SignatureType,
    /// KeyLocator.
    pub key_locator: Option<KeyLocator>,
    /// ValidityPeriod (certificates).
    pub validity: Option<ValidityPeriod>,
    /// SignatureNonce (signed Interests).
    pub nonce: Option<Bytes>,
    /// SignatureTime in ms since the Unix epoch (signed Interests).
    pub time: Option<u64>,
    /// SignatureSeqNum (signed Interests).
    pub seq_num: Option<u64>,
}

impl SignatureInfo {
    /// A SignatureInfo with only a type.
    pub fn new(sig_type: SignatureType) -> Self {
        SignatureInfo {
            sig_type,
            key_locator: None,
            validity: None,
            nonce: None,
            time: None,
            seq_num: None,
        }
    }

    /// Decodes the value of a SignatureInfo or InterestSignatureInfo element `el` of `packet`.
    ///
    /// SignatureType comes first; the other fields may come in any order (implementations differ),
    /// each at most once.
    pub fn decode(packet: &Bytes, el: &Element<'_>) -> Result<Self> {
        let mut r = el.children();
        let st = r.expect(tlv_type::SIGNATURE_TYPE)?;
        let mut info = SignatureInfo::new(SignatureType(st.nonneg()?));
        while let Some(child) = r.next_element() {
            let child = child?;
            let typ = child.typ;
            match child.typ {
                tlv_type::KEY_LOCATOR => set_once(
                    &mut info.key_locator,
                    KeyLocator::decode(packet, &child)?,
                    typ,
                )?,
                tlv_type::VALIDITY_PERIOD => {
                    set_once(&mut info.validity, ValidityPeriod::decode(&child)?, typ)?
                }
                tlv_type::SIGNATURE_NONCE => {
                    if child.value.is_empty() {
                        return Err(DecodeError::InvalidLength {
                            typ: child.typ,
                            len: 0,
                        });
                    }
                    set_once(&mut info.nonce, packet.slice(child.value_range()), typ)?
                }
                tlv_type::SIGNATURE_TIME => set_once(&mut info.time, child.nonneg()?, typ)?,
                tlv_type::SIGNATURE_SEQ_NUM => set_once(&mut info.seq_num, child.nonneg()?, typ)?,
                tlv_type::SIGNATURE_TYPE => return Err(DecodeError::Duplicate { typ }),
                _ => child.skip_unknown()?,
            }
        }
        Ok(info)
    }

    /// Octets of the TLV-VALUE.
    pub fn value_len(&self) -> usize {
        nonneg_tlv_len(tlv_type::SIGNATURE_TYPE, self.sig_type.0)
            + self
                .key_locator
                .as_ref()
                .map_or(0, |k| tlv_len(tlv_type::KEY_LOCATOR, k.value_len()))
            + self.validity.map_or(0, |_| {
                tlv_len(tlv_type::VALIDITY_PERIOD, ValidityPeriod::VALUE_LEN)
            })
            + self
                .nonce
                .as_ref()
                .map_or(0, |n| tlv_len(tlv_type::SIGNATURE_NONCE, n.len()))
            + self
                .time
                .map_or(0, |t| nonneg_tlv_len(tlv_type::SIGNATURE_TIME, t))
            + self
                .seq_num
                .map_or(0, |s| nonneg_tlv_len(tlv_type::SIGNATURE_SEQ_NUM, s))
    }

    /// Octets of the element with TLV-TYPE `typ` (22 for Data, 44 for Interests).
    pub fn encoded_len(&self, typ: u64) -> usize {
        tlv_len(typ, self.value_len())
    }

    /// Writes the element with TLV-TYPE `typ` (22 for Data, 44 for Interests).
    pub fn encode(&self, typ: u64, out: &mut impl BufMut) {
        put_header(out, typ, self.value_len());
        put_nonneg_tlv(out, tlv_type::SIGNATURE_TYPE, self.sig_type.0);
        if let Some(k) = &self.key_locator {
            k.encode(out);
        }
        if let Some(v) = &self.validity {
            v.encode(out);
        }
        if let Some(n) = &self.nonce {
            put_tlv(out, tlv_type::SIGNATURE_NONCE, n);
        }
        if let Some(t) = self.time {
            put_nonneg_tlv(out, tlv_type::SIGNATURE_TIME, t);
        }
        if let Some(s) = self.seq_num {
            put_nonneg_tlv(out, tlv_type::SIGNATURE_SEQ_NUM, s);
        }
    }
}

/// A signature value; inline up to 112 octets (digests, HMAC, ECDSA, Ed25519), so signing
/// with those allocates nothing.
pub type SignatureBytes = SmallVec<[u8; 112]>;

/// Why signing failed (a key that cannot sign, a backend error).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("signing failed: {0}")]
pub struct SignError(pub String);

/// Something that signs packets while they are encoded.
pub trait Signer {
    /// The SignatureType it produces.
    fn signature_type(&self) -> SignatureType;
    /// The KeyLocator to put in SignatureInfo, if any.
    fn key_locator(&self) -> Option<KeyLocator>;
    /// The longest signature it can produce, so encoders size buffers once.
    fn max_signature_len(&self) -> usize;
    /// Signs the concatenation of `parts` (the signed portion, which for Interests is not
    /// contiguous).
    fn sign(&self, parts: &[&[u8]]) -> core::result::Result<SignatureBytes, SignError>;
}

/// The DigestSha256 "signature": a SHA-256 digest of the signed portion, for integrity only.
#[derive(Debug, Clone, Copy, Default)]
pub struct DigestSha256;

impl Signer for DigestSha256 {
    fn signature_type(&self) -> SignatureType {
        SignatureType::DIGEST_SHA256
    }

    fn key_locator(&self) -> Option<KeyLocator> {
        None
    }

    fn max_signature_len(&self) -> usize {
        32
    }

    fn sign(&self, parts: &[&[u8]]) -> core::result::Result<SignatureBytes, SignError> {
        let mut h = Sha256::new();
        for p in parts {
            h.update(p);
        }
        Ok(SignatureBytes::from_slice(&h.finalize()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tlv::read_single;

    fn round(info: &SignatureInfo) -> Result<SignatureInfo> {
        let mut v = Vec::new();
        info.encode(tlv_type::SIGNATURE_INFO, &mut v);
        assert_eq!(v.len(), info.encoded_len(tlv_type::SIGNATURE_INFO));
        let b = Bytes::from(v);
        let el = read_single(&b)?;
        SignatureInfo::decode(&b, &el)
    }

    #[test]
    fn days_count_from_the_unix_epoch() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(1969, 12, 31), -1);
        // 2000 is a leap year (divisible by 400): 29 February comes before 1 March.
        assert_eq!(days_from_civil(2000, 2, 29), 11_016);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        assert_eq!(
            days_from_civil(2100, 3, 1) - days_from_civil(2100, 2, 28),
            1
        );
    }

    #[test]
    fn every_field_round_trips() {
        let mut info = SignatureInfo::new(SignatureType::SHA256_WITH_ECDSA);
        info.key_locator = Some(KeyLocator::Name("/k/KEY/1".parse().unwrap()));
        info.validity = ValidityPeriod::new("20260101T000000", "20361231T235959");
        info.nonce = Some(Bytes::from_static(&[1, 2, 3, 4, 5, 6, 7, 8]));
        info.time = Some(1_700_000_000_000);
        info.seq_num = Some(42);
        assert_eq!(round(&info).unwrap(), info);
        info.key_locator = Some(KeyLocator::KeyDigest(Bytes::from_static(&[9; 32])));
        assert_eq!(round(&info).unwrap(), info);
    }

    fn decode_raw(v: &[u8]) -> Result<SignatureInfo> {
        let b = Bytes::copy_from_slice(v);
        let el = read_single(&b)?;
        SignatureInfo::decode(&b, &el)
    }

    #[test]
    fn fields_after_type_in_any_order_but_once() {
        // type, seqnum, time
        let ok = decode_raw(&[22, 9, 27, 1, 0, 42, 1, 5, 40, 1, 7]).unwrap();
        assert_eq!((ok.seq_num, ok.time), (Some(5), Some(7)));
        assert_eq!(
            decode_raw(&[22, 9, 27, 1, 0, 42, 1, 5, 42, 1, 7]),
            Err(DecodeError::Duplicate { typ: 42 })
        );
        assert_eq!(
            decode_raw(&[22, 3, 42, 1, 5]),
            Err(DecodeError::UnexpectedType {
                expected: 27,
                actual: 42
            })
        );
        assert_eq!(decode_raw(&[22, 0]), Err(DecodeError::Missing { typ: 27 }));
        // unknown critical inside
        assert_eq!(
            decode_raw(&[22, 5, 27, 1, 0, 31, 0]),
            Err(DecodeError::UnknownCritical { typ: 31 })
        );
        // unknown non-critical skipped
        assert!(decode_raw(&[22, 5, 27, 1, 0, 50, 0]).is_ok());
    }

    #[test]
    fn malformed_parts() {
        // empty key locator
        assert!(decode_raw(&[22, 5, 27, 1, 0, 28, 0]).is_err());
        // bad validity timestamp: 'T' replaced by a digit
        let mut info = SignatureInfo::new(SignatureType::SHA256_WITH_ECDSA);
        info.validity = ValidityPeriod::new("20260101T000000", "20361231T235959");
        let mut v = Vec::new();
        info.encode(tlv_type::SIGNATURE_INFO, &mut v);
        let t = v.iter().position(|&b| b == b'T').unwrap();
        v[t] = b'0';
        assert!(matches!(
            decode_raw(&v),
            Err(DecodeError::InvalidValue { typ: 254, .. })
        ));
        assert!(ValidityPeriod::new("2026-01-01T0000", "20361231T235959").is_none());
        // empty signature nonce
        assert_eq!(
            decode_raw(&[22, 5, 27, 1, 0, 38, 0]),
            Err(DecodeError::InvalidLength { typ: 38, len: 0 })
        );
    }

    #[test]
    fn digest_signer_hashes_the_concatenation() {
        let s = DigestSha256;
        let a = s.sign(&[b"ab", b"c"]).unwrap();
        let b = s.sign(&[b"abc"]).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.len(), 32);
        assert!(!a.spilled());
    }
}
