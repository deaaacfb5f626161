//! Interest packets (NDN Packet Format v0.3): the forwarder view and the full decode share one
//! element walk; the view stops where ApplicationParameters begin.

use bytes::{BufMut, Bytes};
use sha2::{Digest, Sha256};

use crate::encode::{nonneg_tlv_len, put_header, put_nonneg_tlv, put_tlv, tlv_len};
use crate::error::{DecodeError, Result};
use crate::headroom;
use crate::name::{Name, ParamsDigest, ScannedName};
use crate::signature::{SignError, SignatureInfo, Signer};
use crate::tlv::{read_single_of, Element, OrderGuard, Reader};
use crate::tlv_type;

/// InterestLifetime when the element is absent (ms).
pub const DEFAULT_LIFETIME_MS: u64 = 4000;

/// Octets of a ParametersSha256DigestComponent (TLV-TYPE, TLV-LENGTH, 32-octet digest).
const DIGEST_COMPONENT_LEN: usize = 34;

/// A 4-octet Interest nonce.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Nonce(pub [u8; 4]);

impl Nonce {
    /// The nonce as a big-endian number.
    pub fn as_u32(self) -> u32 {
        u32::from_be_bytes(self.0)
    }
}

impl From<u32> for Nonce {
    fn from(n: u32) -> Self {
        Nonce(n.to_be_bytes())
    }
}

/// Checks a ForwardingHint element: one or more names.
fn validate_forwarding_hint(el: &Element<'_>) -> Result<()> {
    let mut r = el.children();
    if r.is_empty() {
        return Err(DecodeError::Missing {
            typ: tlv_type::NAME,
        });
    }
    while let Some(child) = r.next_element() {
        delegation_name(&child?)?;
    }
    Ok(())
}

/// The Name element of one ForwardingHint entry (a Name, or a Delegation's Name), validated.
fn delegation_name<'a>(child: &Element<'a>) -> Result<Element<'a>> {
    let name = match child.typ {
        tlv_type::NAME => *child,
        tlv_type::DELEGATION => {
            let mut r = child.children();
            r.expect(tlv_type::PREFERENCE)?.nonneg()?;
            r.expect(tlv_type::NAME)?
        }
        typ => {
            return Err(DecodeError::UnexpectedType {
                expected: tlv_type::NAME,
                actual: typ,
            })
        }
    };
    crate::name::validate_components(name.value)?;
    Ok(name)
}

/// Grammar positions of the Interest's elements.
mod rank {
    pub const NAME: u8 = 1;
    pub const CAN_BE_PREFIX: u8 = 2;
    pub const MUST_BE_FRESH: u8 = 3;
    pub const FORWARDING_HINT: u8 = 4;
    pub const NONCE: u8 = 5;
    pub const LIFETIME: u8 = 6;
    pub const HOP_LIMIT: u8 = 7;
    pub const APP_PARAMS: u8 = 8;
    pub const SIG_INFO: u8 = 9;
    pub const SIG_VALUE: u8 = 10;
}

/// What the forwarder reads of an Interest; the rest stays in the packet, unread.
#[derive(Debug, Clone)]
pub struct InterestView {
    /// Name (at least one component). It holds the whole received packet: see
    /// [`InterestView::wire`].
    pub name: Name,
    /// CanBePrefix.
    pub can_be_prefix: bool,
    /// MustBeFresh.
    pub must_be_fresh: bool,
    /// Nonce.
    pub nonce: Option<Nonce>,
    /// InterestLifetime in ms, if present.
    pub lifetime: Option<u64>,
    /// HopLimit.
    pub hop_limit: Option<u8>,
    /// Range in `wire` of the ForwardingHint's value, validated.
    hint: Option<(u32, u32)>,
    /// Offsets in `wire` of the Nonce's and HopLimit's values, to patch them in place.
    nonce_at: Option<u32>,
    hop_limit_at: Option<u32>,
    /// Offset in `wire` of ApplicationParameters (`wire.len()` when there are none).
    params_at: usize,
    /// Where the name's ParametersSha256DigestComponent is.
    params_digest: ParamsDigest,
    /// Order state after the last element the view read, for the full decode to continue.
    guard: OrderGuard,
}

impl InterestView {
    /// Decodes what forwarding needs from an Interest element that fills `wire`.
    #[inline]
    pub fn decode(wire: Bytes) -> Result<Self> {
        let el = read_single_of(&wire, tlv_type::INTEREST)?;
        let mut r = el.children();
        let name = ScannedName::scan(&r.expect(tlv_type::NAME)?)?;
        if name.is_empty() {
            return Err(DecodeError::InvalidValue {
                typ: tlv_type::NAME,
                reason: "an Interest name needs at least one component",
            });
        }
        let mut guard = OrderGuard::default();
        guard.see(tlv_type::NAME, rank::NAME)?;
        let (mut can_be_prefix, mut must_be_fresh) = (false, false);
        let (mut nonce, mut lifetime, mut hop_limit, mut hint) = (None, None, None, None);
        let (mut nonce_at, mut hop_limit_at) = (None, None);
        let mut params_at = wire.len();
        while !r.is_empty() {
            let child = r.read()?;
            match child.typ {
                tlv_type::CAN_BE_PREFIX => {
                    guard.see(child.typ, rank::CAN_BE_PREFIX)?;
                    child.expect_len(0)?;
                    can_be_prefix = true;
                }
                tlv_type::MUST_BE_FRESH => {
                    guard.see(child.typ, rank::MUST_BE_FRESH)?;
                    child.expect_len(0)?;
                    must_be_fresh = true;
                }
                tlv_type::FORWARDING_HINT => {
                    guard.see(child.typ, rank::FORWARDING_HINT)?;
                    validate_forwarding_hint(&child)?;
                    hint = Some((child.value_start as u32, child.end() as u32));
                }
                tlv_type::NONCE => {
                    guard.see(child.typ, rank::NONCE)?;
                    let n: [u8; 4] =
                        child
                            .value
                            .try_into()
                            .map_err(|_| DecodeError::InvalidLength {
                                typ: child.typ,
                                len: child.value.len(),
                            })?;
                    nonce = Some(Nonce(n));
                    nonce_at = Some(child.value_start as u32);
                }
                tlv_type::INTEREST_LIFETIME => {
                    guard.see(child.typ, rank::LIFETIME)?;
                    lifetime = Some(child.nonneg()?);
                }
                tlv_type::HOP_LIMIT => {
                    guard.see(child.typ, rank::HOP_LIMIT)?;
                    child.expect_len(1)?;
                    hop_limit = Some(child.value[0]);
                    hop_limit_at = Some(child.value_start as u32);
                }
                tlv_type::APPLICATION_PARAMETERS => {
                    guard.see(child.typ, rank::APP_PARAMS)?;
                    params_at = child.start;
                    break;
                }
                tlv_type::INTEREST_SIGNATURE_INFO | tlv_type::INTEREST_SIGNATURE_VALUE => {
                    return Err(DecodeError::Missing {
                        typ: tlv_type::APPLICATION_PARAMETERS,
                    })
                }
                tlv_type::NAME => {
                    return Err(DecodeError::Duplicate {
                        typ: tlv_type::NAME,
                    })
                }
                _ => child.skip_unknown()?,
            }
        }
        let has_params = params_at < wire.len();
        let params_digest = name.params_digest;
        if params_digest.index()?.is_some() != has_params {
            return Err(DecodeError::ParamsDigestPlacement);
        }
        Ok(InterestView {
            name: name.into_name(wire),
            can_be_prefix,
            must_be_fresh,
            nonce,
            lifetime,
            hop_limit,
            hint,
            nonce_at,
            hop_limit_at,
            params_at,
            params_digest,
            guard,
        })
    }

    /// Copies the packet into a buffer of its own, so that keeping the view does not keep the
    /// receive buffer it was read into.
    pub fn detach(&mut self) {
        self.name.detach_backing();
    }

    /// [`InterestView::detach`] into a reusable buffer ([`crate::pool::copy_reusable`]):
    /// the copy's last owner hands it back with [`Name::give_back_backing`] on its name.
    pub fn detach_reusable(&mut self) {
        self.name.detach_backing_reusable();
    }

    /// The whole Interest element, as received.
    #[inline]
    pub fn wire(&self) -> &Bytes {
        self.name.backing()
    }

    /// Whether ApplicationParameters follow the fields the view read.
    #[inline]
    pub fn has_params(&self) -> bool {
        self.params_at < self.wire().len()
    }

    /// InterestLifetime in ms, with the default applied.
    #[inline]
    pub fn lifetime_ms(&self) -> u64 {
        self.lifetime.unwrap_or(DEFAULT_LIFETIME_MS)
    }

    /// Whether the Interest carries a ForwardingHint.
    #[inline]
    pub fn has_forwarding_hint(&self) -> bool {
        self.hint.is_some()
    }

    /// The ForwardingHint's names in order (none without a hint), sharing `wire`.
    pub fn forwarding_hint(&self) -> impl Iterator<Item = Name> + '_ {
        let (start, end) = self.hint.unwrap_or((0, 0));
        let (start, end) = (start as usize, end as usize);
        let wire = self.wire();
        let mut r = Reader::with_base(&wire[start..end], start);
        core::iter::from_fn(move || {
            let child = r.next_element()?.expect("forwarding hint was validated");
            let name = delegation_name(&child).expect("forwarding hint was validated");
            Some(Name::from_element(wire, &name).expect("forwarding hint was validated"))
        })
    }
}

/// A whole Interest, for applications.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interest {
    /// Name. When ApplicationParameters are present, encoding puts the
    /// ParametersSha256DigestComponent in it (replacing one already there, else appended).
    pub name: Name,
    /// CanBePrefix.
    pub can_be_prefix: bool,
    /// MustBeFresh.
    pub must_be_fresh: bool,
    /// ForwardingHint names (empty when absent).
    pub forwarding_hint: Vec<Name>,
    /// Nonce.
    pub nonce: Option<Nonce>,
    /// InterestLifetime (ms).
    pub lifetime: Option<u64>,
    /// HopLimit.
    pub hop_limit: Option<u8>,
    /// ApplicationParameters.
    pub app_params: Option<Bytes>,
    /// InterestSignatureInfo.
    pub sig_info: Option<SignatureInfo>,
    /// InterestSignatureValue.
    pub sig_value: Option<Bytes>,
}

impl Interest {
    /// An Interest for `name` with every optional field absent.
    pub fn new(name: Name) -> Self {
        Interest {
            name,
            can_be_prefix: false,
            must_be_fresh: false,
            forwarding_hint: Vec::new(),
            nonce: None,
            lifetime: None,
            hop_limit: None,
            app_params: None,
            sig_info: None,
            sig_value: None,
        }
    }

    /// Decodes every field of an Interest element that fills `wire`, checking the
    /// ParametersSha256DigestComponent against the parameters.
    pub fn decode(wire: Bytes) -> Result<Self> {
        Self::from_view(InterestView::decode(wire)?)
    }

    /// Completes a forwarder view into a whole Interest.
    pub fn from_view(v: InterestView) -> Result<Self> {
        let mut i = Interest {
            name: v.name.clone(),
            can_be_prefix: v.can_be_prefix,
            must_be_fresh: v.must_be_fresh,
            forwarding_hint: v.forwarding_hint().collect(),
            nonce: v.nonce,
            lifetime: v.lifetime,
            hop_limit: v.hop_limit,
            app_params: None,
            sig_info: None,
            sig_value: None,
        };
        if !v.has_params() {
            return Ok(i);
        }
        let wire = v.wire();
        let mut guard = v.guard;
        let mut r = Reader::with_base(&wire[v.params_at..], v.params_at);
        let params = r.read()?;
        i.app_params = Some(wire.slice(params.value_range()));
        while let Some(child) = r.next_element() {
            let child = child?;
            match child.typ {
                tlv_type::INTEREST_SIGNATURE_INFO => {
                    guard.see(child.typ, rank::SIG_INFO)?;
                    i.sig_info = Some(SignatureInfo::decode(wire, &child)?);
                }
                tlv_type::INTEREST_SIGNATURE_VALUE => {
                    guard.see(child.typ, rank::SIG_VALUE)?;
                    if i.sig_info.is_none() {
                        return Err(DecodeError::Missing {
                            typ: tlv_type::INTEREST_SIGNATURE_INFO,
                        });
                    }
                    i.sig_value = Some(wire.slice(child.value_range()));
                }
                tlv_type::NAME
                | tlv_type::CAN_BE_PREFIX
                | tlv_type::MUST_BE_FRESH
                | tlv_type::FORWARDING_HINT
                | tlv_type::NONCE
                | tlv_type::INTEREST_LIFETIME
                | tlv_type::HOP_LIMIT
                | tlv_type::APPLICATION_PARAMETERS => {
                    return Err(if child.typ == tlv_type::APPLICATION_PARAMETERS {
                        DecodeError::Duplicate { typ: child.typ }
                    } else {
                        DecodeError::OutOfOrder { typ: child.typ }
                    })
                }
                _ => child.skip_unknown()?,
            }
        }
        if i.sig_info.is_some() && i.sig_value.is_none() {
            return Err(DecodeError::Missing {
                typ: tlv_type::INTEREST_SIGNATURE_VALUE,
            });
        }
        let digest_at = v
            .params_digest
            .index()?
            .ok_or(DecodeError::ParamsDigestPlacement)?;
        let want = Sha256::digest(&wire[v.params_at..]);
        let have = v.name.get(digest_at).expect("index from the name").value();
        if have != want.as_slice() {
            return Err(DecodeError::ParamsDigestMismatch);
        }
        Ok(i)
    }

    /// Encodes the Interest. With ApplicationParameters (or a signature), the
    /// ParametersSha256DigestComponent is computed and placed in the name.
    pub fn encode(&self) -> Bytes {
        self.encode_inner(None)
            .expect("encoding without a signer cannot fail")
    }

    /// Encodes the Interest signed by `signer` (v0.3 signed Interest): `sig_info`'s nonce, time
    /// and sequence number are kept; its type and KeyLocator come from the signer; absent
    /// ApplicationParameters are encoded empty, as signing requires them.
    pub fn encode_signed(&self, signer: &dyn Signer) -> core::result::Result<Bytes, SignError> {
        self.encode_inner(Some(signer))
    }

    fn encode_inner(&self, signer: Option<&dyn Signer>) -> core::result::Result<Bytes, SignError> {
        let sig_info = signer.map(|s| {
            let mut info = self
                .sig_info
                .clone()
                .unwrap_or_else(|| SignatureInfo::new(s.signature_type()));
            info.sig_type = s.signature_type();
            info.key_locator = s.key_locator();
            info
        });
        let sig_info = sig_info.as_ref().or(self.sig_info.as_ref());
        let params: Option<&[u8]> = match (&self.app_params, sig_info) {
            (Some(p), _) => Some(p),
            (None, Some(_)) => Some(&[]),
            (None, None) => None,
        };

        // Name components other than a ParametersSha256DigestComponent, split where it goes.
        let digest_at = self.name.params_digest().index().ok().flatten();
        let comps = self.name.value();
        let (before, after): (&[u8], &[u8]) = match (params.is_some(), digest_at) {
            (true, Some(i)) => {
                let p = self.name.prefix_octets(i).len();
                let q = self.name.prefix_octets(i + 1).len();
                (&comps[..p], &comps[q..])
            }
            _ => (comps, &[]),
        };
        let name_value_len = before.len()
            + after.len()
            + if params.is_some() {
                DIGEST_COMPONENT_LEN
            } else {
                0
            };

        let hint_value_len: usize = self.forwarding_hint.iter().map(Name::encoded_len).sum();
        let sig_value_max = match (signer, &self.sig_value) {
            (Some(s), _) => tlv_len(tlv_type::INTEREST_SIGNATURE_VALUE, s.max_signature_len()),
            (None, Some(v)) if sig_info.is_some() => {
                tlv_len(tlv_type::INTEREST_SIGNATURE_VALUE, v.len())
            }
            _ => 0,
        };
        let capacity = tlv_len(tlv_type::NAME, name_value_len)
            + if self.can_be_prefix { 2 } else { 0 }
            + if self.must_be_fresh { 2 } else { 0 }
            + if self.forwarding_hint.is_empty() {
                0
            } else {
                tlv_len(tlv_type::FORWARDING_HINT, hint_value_len)
            }
            + if self.nonce.is_some() { 6 } else { 0 }
            + self
                .lifetime
                .map_or(0, |l| nonneg_tlv_len(tlv_type::INTEREST_LIFETIME, l))
            + if self.hop_limit.is_some() { 3 } else { 0 }
            + params.map_or(0, |p| tlv_len(tlv_type::APPLICATION_PARAMETERS, p.len()))
            + sig_info.map_or(0, |s| s.encoded_len(tlv_type::INTEREST_SIGNATURE_INFO))
            + sig_value_max;

        let mut buf = headroom::buffer(capacity);
        put_header(&mut buf, tlv_type::NAME, name_value_len);
        let before_at = buf.len();
        buf.put_slice(before);
        let digest_slot = buf.len() + 2;
        if params.is_some() {
            put_header(&mut buf, tlv_type::PARAMETERS_SHA256_DIGEST_COMPONENT, 32);
            buf.put_bytes(0, 32);
        }
        let after_at = buf.len();
        buf.put_slice(after);
        if self.can_be_prefix {
            put_header(&mut buf, tlv_type::CAN_BE_PREFIX, 0);
        }
        if self.must_be_fresh {
            put_header(&mut buf, tlv_type::MUST_BE_FRESH, 0);
        }
        if !self.forwarding_hint.is_empty() {
            put_header(&mut buf, tlv_type::FORWARDING_HINT, hint_value_len);
            for n in &self.forwarding_hint {
                n.encode(&mut buf);
            }
        }
        if let Some(n) = self.nonce {
            put_tlv(&mut buf, tlv_type::NONCE, &n.0);
        }
        if let Some(l) = self.lifetime {
            put_nonneg_tlv(&mut buf, tlv_type::INTEREST_LIFETIME, l);
        }
        if let Some(h) = self.hop_limit {
            put_tlv(&mut buf, tlv_type::HOP_LIMIT, &[h]);
        }
        let params_at = buf.len();
        if let Some(p) = params {
            put_tlv(&mut buf, tlv_type::APPLICATION_PARAMETERS, p);
            if let Some(info) = sig_info {
                info.encode(tlv_type::INTEREST_SIGNATURE_INFO, &mut buf);
                match signer {
                    Some(s) => {
                        let parts = [
                            &buf[before_at..before_at + before.len()],
                            &buf[after_at..after_at + after.len()],
                            &buf[params_at..],
                        ];
                        let sig = s.sign(&parts)?;
                        put_tlv(&mut buf, tlv_type::INTEREST_SIGNATURE_VALUE, &sig);
                    }
                    None => {
                        if let Some(v) = &self.sig_value {
                            put_tlv(&mut buf, tlv_type::INTEREST_SIGNATURE_VALUE, v);
                        }
                    }
                }
            }
            let digest = Sha256::digest(&buf[params_at..]);
            buf[digest_slot..digest_slot + 32].copy_from_slice(&digest);
        }
        Ok(headroom::finish(buf, tlv_type::INTEREST))
    }

    /// The signed portion of a decoded signed Interest `wire` as the pieces a verifier
    /// concatenates: name components other than the ParametersSha256DigestComponent, then
    /// ApplicationParameters through InterestSignatureInfo.
    pub fn signed_parts(wire: &Bytes) -> Result<Option<[Bytes; 3]>> {
        let v = InterestView::decode(wire.clone())?;
        let i = Interest::from_view(v.clone())?;
        if i.sig_info.is_none() {
            return Ok(None);
        }
        let digest_at = v
            .params_digest
            .index()?
            .ok_or(DecodeError::ParamsDigestPlacement)?;
        let comps = v.name.value_bytes();
        let p = v.name.prefix_octets(digest_at).len();
        let q = v.name.prefix_octets(digest_at + 1).len();
        let wire = v.wire();
        let mut r = Reader::with_base(&wire[v.params_at..], v.params_at);
        let mut end = v.params_at;
        while let Some(el) = r.next_element() {
            let el = el?;
            if el.typ == tlv_type::INTEREST_SIGNATURE_VALUE {
                break;
            }
            end = el.end();
        }
        Ok(Some([
            comps.slice(..p),
            comps.slice(q..),
            wire.slice(v.params_at..end),
        ]))
    }
}

mod outgoing;

pub use outgoing::OutgoingInterest;

#[cfg(test)]
mod tests;
