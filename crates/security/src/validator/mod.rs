//! Validation of signed Interests and Data against a configured trust schema, as ndn-cxx's
//! `ValidatorConfig` (without its replay protection, which the management server keeps):
//! the first rule whose filter matches the packet decides; one of its checkers must accept the
//! packet's signature type and KeyLocator; then the KeyLocator's certificate is looked up
//! (trust anchors, then certificates verified before) or fetched, each fetched certificate
//! checked in turn by the Data rules, until a trust anchor is reached; every signature on the
//! way is verified. `trust-anchor { type any }` accepts everything, signature unchecked.
//!
//! The validator does no I/O of its own but reading anchor files: when it needs a certificate
//! it returns [`Step::Fetch`], and its caller fetches it (over NDN) and calls
//! [`Validator::resume`]. Bounded: a chain of at most [`MAX_DEPTH`] certificates, a loop
//! refused, at most [`CACHE_ENTRIES`] verified certificates of at most [`CACHE_OCTETS`] octets
//! kept (each for at most an hour), certificates of at most
//! [`MAX_CERTIFICATE_SIZE`] octets, at most
//! [`MAX_DIR_ANCHORS`] anchors read from a directory.

pub mod config;
pub mod info;
pub mod regex;

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use bytes::Bytes;
use kite_packet::{Data, Interest, KeyLocator, Name, SignatureType};
use sha2::{Digest, Sha256};

use crate::cert::{Certificate, MAX_CERTIFICATE_SIZE};
pub use config::{AnchorSource, ConfigError, Policy};

/// Longest certificate chain followed (ndn-cxx's default).
pub const MAX_DEPTH: usize = 25;
/// Most verified certificates kept.
pub const CACHE_ENTRIES: usize = 1000;
/// Most octets of verified certificates kept.
pub const CACHE_OCTETS: usize = 4 << 20;
/// How long a verified certificate is kept (ndn-cxx's).
pub const CACHE_LIFETIME: Duration = Duration::from_secs(3600);
/// Most anchors read from one directory.
pub const MAX_DIR_ANCHORS: usize = 1000;

/// The key name ndn-cxx gives DigestSha256 signatures.
const DIGEST_IDENTITY: &str = "/localhost/identity/digest-sha256";

/// A signed packet, as validation sees it.
#[derive(Debug, Clone)]
pub struct Packet {
    /// Data (certificate, prefix announcement) or Interest.
    pub is_data: bool,
    /// The name rules see: a Data's name; a v0.3 signed Interest's without its
    /// ParametersSha256DigestComponent; a v0.2 one's without SignatureInfo and SignatureValue.
    pub name: Name,
    /// SignatureType.
    pub sig_type: u64,
    /// The KeyLocator name (ndn-cxx's digest identity for DigestSha256); `None` when a keyed
    /// signature has none.
    pub key_locator: Option<Name>,
    /// The signed octets.
    pub signed: Vec<u8>,
    /// SignatureValue.
    pub value: Bytes,
}

impl Packet {
    /// A decoded Data (it must keep its received encoding).
    pub fn data(data: &Data) -> Result<Packet, String> {
        let signed = data
            .signed_portion()
            .ok_or("the Data has no received encoding")?;
        Ok(Packet {
            is_data: true,
            name: data.name.clone(),
            sig_type: data.sig_info.sig_type.0,
            key_locator: locator(data.sig_info.sig_type, data.sig_info.key_locator.as_ref()),
            signed: signed.to_vec(),
            value: data.sig_value.clone(),
        })
    }

    /// A signed Interest's encoding, v0.3 (InterestSignatureInfo) or v0.2 (signature in
    /// the last two name components).
    pub fn interest(wire: &Bytes) -> Result<Packet, String> {
        let i = Interest::decode(wire.clone()).map_err(|e| e.to_string())?;
        if let Some(info) = &i.sig_info {
            let parts = Interest::signed_parts(wire)
                .map_err(|e| e.to_string())?
                .ok_or("no signature")?;
            let n = i.name.len();
            return Ok(Packet {
                is_data: false,
                name: i.name.prefix(n.saturating_sub(1)),
                sig_type: info.sig_type.0,
                key_locator: locator(info.sig_type, info.key_locator.as_ref()),
                signed: parts.concat(),
                value: i.sig_value.clone().unwrap_or_default(),
            });
        }
        let n = i.name.len();
        if n < 2 {
            return Err("not a signed Interest".into());
        }
        let info_comp = i.name.get(n - 2).expect("n >= 2");
        let value_comp = i.name.get(n - 1).expect("n >= 2");
        let info_wire = Bytes::copy_from_slice(info_comp.value());
        let el = one_element(&info_wire, kite_packet::tlv_type::SIGNATURE_INFO)?;
        let info =
            kite_packet::SignatureInfo::decode(&info_wire, &el).map_err(|e| e.to_string())?;
        let value = one_element(value_comp.value(), kite_packet::tlv_type::SIGNATURE_VALUE)?.value;
        Ok(Packet {
            is_data: false,
            name: i.name.prefix(n - 2),
            sig_type: info.sig_type.0,
            key_locator: locator(info.sig_type, info.key_locator.as_ref()),
            signed: i.name.prefix_octets(n - 1).to_vec(),
            value: Bytes::copy_from_slice(value),
        })
    }
}

/// The one TLV element `buf` holds, of type `typ`.
fn one_element(buf: &[u8], typ: u64) -> Result<kite_packet::tlv::Element<'_>, String> {
    let mut r = kite_packet::tlv::Reader::new(buf);
    let el = r
        .next_element()
        .ok_or("empty component")?
        .map_err(|e| e.to_string())?;
    if el.typ != typ || r.next_element().is_some() {
        return Err(format!("not one element of type {typ}"));
    }
    Ok(el)
}

fn locator(t: SignatureType, kl: Option<&KeyLocator>) -> Option<Name> {
    if t == SignatureType::DIGEST_SHA256 {
        return Some(DIGEST_IDENTITY.parse().expect("valid name"));
    }
    match kl? {
        KeyLocator::Name(n) => Some(n.clone()),
        KeyLocator::KeyDigest(_) => None,
    }
}

/// A validation waiting for a certificate.
#[derive(Debug, Clone)]
pub struct Pending {
    packet: Packet,
    /// Certificates fetched so far, the packet's signer's first; none verified yet.
    chain: Vec<Certificate>,
    /// KeyLocator names looked up so far (a loop is refused).
    seen: Vec<Name>,
    want: Name,
}

impl Pending {
    /// The name to fetch (an Interest with CanBePrefix): a key or certificate name.
    pub fn want(&self) -> &Name {
        &self.want
    }

    /// The packet's signer.
    pub fn signer(&self) -> Option<&Name> {
        self.packet.key_locator.as_ref()
    }
}

/// What validation came to, or needs.
#[derive(Debug)]
pub enum Step {
    /// Valid, signed by this key (`None` with `trust-anchor any`).
    Accept(Option<Name>),
    /// Invalid, and why.
    Reject(String),
    /// A certificate must be fetched first.
    Fetch(Box<Pending>),
}

struct Cached {
    cert: Certificate,
    until: Instant,
}

struct AnchorSet {
    source: AnchorSource,
    certs: Vec<Certificate>,
    loaded: Instant,
}

/// One validator: a policy, its anchors, its verified certificates.
pub struct Validator {
    policy: Policy,
    anchors: Vec<AnchorSet>,
    cache: VecDeque<Cached>,
    cache_octets: usize,
}

impl std::fmt::Debug for Validator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Validator(any={}, {} interest rules, {} data rules, {} anchors)",
            self.policy.any,
            self.policy.interest_rules.len(),
            self.policy.data_rules.len(),
            self.anchors.iter().map(|a| a.certs.len()).sum::<usize>()
        )
    }
}

impl Validator {
    /// A validator of `policy`; reads its anchors now (an anchor file that cannot be read is
    /// an error, as in ndn-cxx; a directory may be empty).
    pub fn new(policy: Policy) -> Result<Validator, ConfigError> {
        let now = Instant::now();
        let mut anchors = Vec::new();
        for source in &policy.anchors {
            anchors.push(AnchorSet {
                certs: load(source)?,
                source: source.clone(),
                loaded: now,
            });
        }
        Ok(Validator {
            policy,
            anchors,
            cache: VecDeque::new(),
            cache_octets: 0,
        })
    }

    /// `trust-anchor { type any }`.
    pub fn accept_all() -> Validator {
        Validator::new(Policy::accept_all()).expect("no anchors to read")
    }

    /// Whether it accepts everything unchecked.
    pub fn accepts_all(&self) -> bool {
        self.policy.any
    }

    /// Validates `packet` at `unix_s` (for certificates' validity periods).
    pub fn validate(&mut self, packet: Packet, unix_s: u64) -> Step {
        if self.policy.any {
            return Step::Accept(packet.key_locator);
        }
        self.refresh_anchors();
        let Some(kl) = packet.key_locator.clone() else {
            return Step::Reject("no KeyLocator name".into());
        };
        if let Err(why) = self.check_rules(&packet, &kl) {
            return Step::Reject(why);
        }
        let pending = Pending {
            packet,
            chain: Vec::new(),
            seen: Vec::new(),
            want: kl,
        };
        self.request(pending, unix_s)
    }

    /// Goes on with `pending` once its certificate came (`None`: it did not come in time).
    pub fn resume(&mut self, pending: Box<Pending>, fetched: Option<Bytes>, unix_s: u64) -> Step {
        let Some(wire) = fetched else {
            return Step::Reject(format!("certificate {} not retrieved", pending.want));
        };
        if wire.len() > MAX_CERTIFICATE_SIZE {
            return Step::Reject("certificate larger than a packet".into());
        }
        let cert = match Certificate::decode(wire) {
            Ok(c) => c,
            Err(e) => return Step::Reject(format!("fetched {}: {e}", pending.want)),
        };
        if !pending.want.is_prefix_of(cert.name()) {
            return Step::Reject(format!("fetched {} for {}", cert.name(), pending.want));
        }
        if !cert.is_valid_at(unix_s) {
            return Step::Reject(format!("certificate {} is not valid now", cert.name()));
        }
        let packet = match Packet::data(cert.data()) {
            Ok(p) => p,
            Err(e) => return Step::Reject(e),
        };
        let Some(kl) = packet.key_locator.clone() else {
            return Step::Reject(format!("certificate {} names no signer", cert.name()));
        };
        if let Err(why) = self.check_rules(&packet, &kl) {
            return Step::Reject(why);
        }
        let mut pending = *pending;
        pending.chain.push(cert);
        pending.want = kl;
        self.request(pending, unix_s)
    }

    fn check_rules(&self, packet: &Packet, kl: &Name) -> Result<(), String> {
        let rules = if packet.is_data {
            &self.policy.data_rules
        } else {
            &self.policy.interest_rules
        };
        match rules.iter().find(|r| r.matches(&packet.name)) {
            Some(rule) => rule.check(packet.sig_type, &packet.name, kl),
            None => Err(format!(
                "no rule matches {} {}",
                if packet.is_data { "Data" } else { "Interest" },
                packet.name
            )),
        }
    }

    fn request(&mut self, mut pending: Pending, unix_s: u64) -> Step {
        if pending.chain.len() >= MAX_DEPTH {
            return Step::Reject(format!("certificate chain longer than {MAX_DEPTH}"));
        }
        let want = pending.want.clone();
        if want.to_string() == DIGEST_IDENTITY {
            return if pending.chain.is_empty()
                && Sha256::digest(&pending.packet.signed).as_slice() == &pending.packet.value[..]
            {
                Step::Accept(Some(want))
            } else {
                Step::Reject("DigestSha256 does not match".into())
            };
        }
        if pending.seen.contains(&want) {
            let self_signed = pending
                .chain
                .last()
                .is_some_and(|c| want.is_prefix_of(c.name()));
            return Step::Reject(if self_signed {
                format!("the chain ends at {want}, self-signed and not a trust anchor")
            } else {
                format!("certificate loop at {want}")
            });
        }
        pending.seen.push(want.clone());
        match self.trusted(&want, unix_s) {
            Some(trusted) => self.verify_chain(pending, trusted),
            None => Step::Fetch(Box::new(pending)),
        }
    }

    /// An anchor or a verified certificate `want` names (a key or certificate name).
    fn trusted(&mut self, want: &Name, unix_s: u64) -> Option<Certificate> {
        let anchor = self
            .anchors
            .iter()
            .flat_map(|a| a.certs.iter())
            .find(|c| want.is_prefix_of(c.name()));
        if let Some(a) = anchor {
            return Some(a.clone());
        }
        let now = Instant::now();
        self.evict(now);
        self.cache
            .iter()
            .find(|c| want.is_prefix_of(c.cert.name()) && c.cert.is_valid_at(unix_s))
            .map(|c| c.cert.clone())
    }

    fn verify_chain(&mut self, pending: Pending, trusted: Certificate) -> Step {
        let mut key = trusted;
        for cert in pending.chain.iter().rev() {
            let ok = key.verifier().ok().is_some_and(|v| {
                v.verify_parts(
                    cert.data().sig_info.sig_type.0,
                    &cert.data().signed_portion().unwrap_or_default(),
                    &cert.data().sig_value,
                )
                .is_ok()
            });
            if !ok {
                return Step::Reject(format!(
                    "certificate {} is not signed by {}",
                    cert.name(),
                    key.key_name()
                ));
            }
            key = cert.clone();
        }
        let p = &pending.packet;
        let ok = key
            .verifier()
            .ok()
            .is_some_and(|v| v.verify_parts(p.sig_type, &p.signed, &p.value).is_ok());
        if !ok {
            return Step::Reject(format!("signature does not verify with {}", key.name()));
        }
        for c in pending.chain {
            self.remember(c);
        }
        Step::Accept(p.key_locator.clone())
    }

    fn remember(&mut self, cert: Certificate) {
        let now = Instant::now();
        if self.cache.iter().any(|c| c.cert.name() == cert.name()) {
            return;
        }
        self.cache_octets += cert.wire().len();
        self.cache.push_back(Cached {
            cert,
            until: now + CACHE_LIFETIME,
        });
        while self.cache.len() > CACHE_ENTRIES || self.cache_octets > CACHE_OCTETS {
            let Some(old) = self.cache.pop_front() else {
                break;
            };
            self.cache_octets -= old.cert.wire().len();
        }
    }

    fn evict(&mut self, now: Instant) {
        while self.cache.front().is_some_and(|c| c.until <= now) {
            let old = self.cache.pop_front().expect("front exists");
            self.cache_octets -= old.cert.wire().len();
        }
    }

    /// Verified certificates kept, and their octets.
    pub fn cached(&self) -> (usize, usize) {
        (self.cache.len(), self.cache_octets)
    }

    fn refresh_anchors(&mut self) {
        let now = Instant::now();
        for a in &mut self.anchors {
            let refresh = match &a.source {
                AnchorSource::File { refresh, .. } | AnchorSource::Dir { refresh, .. } => *refresh,
                AnchorSource::Inline(_) => None,
            };
            if refresh.is_some_and(|r| now.duration_since(a.loaded) >= r) {
                // A file that became unreadable keeps the anchors it had.
                if let Ok(certs) = load(&a.source) {
                    a.certs = certs;
                }
                a.loaded = now;
            }
        }
    }
}

fn load(source: &AnchorSource) -> Result<Vec<Certificate>, ConfigError> {
    let err = |file: &std::path::Path, why: String| ConfigError {
        file: file.display().to_string(),
        why,
    };
    match source {
        AnchorSource::Inline(c) => Ok(vec![(**c).clone()]),
        AnchorSource::File { path, .. } => Certificate::read(path)
            .map(|c| vec![c])
            .map_err(|e| err(path, format!("trust anchor: {e}"))),
        AnchorSource::Dir { path, .. } => {
            let entries = match std::fs::read_dir(path) {
                Ok(e) => e,
                Err(_) => return Ok(Vec::new()),
            };
            let mut out = Vec::new();
            for e in entries.flatten().take(MAX_DIR_ANCHORS) {
                if let Ok(c) = Certificate::read(&e.path()) {
                    out.push(c);
                }
            }
            Ok(out)
        }
    }
}

#[cfg(test)]
mod tests;
