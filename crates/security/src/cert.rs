//! NDN certificates (NDN Certificate Format v2) and the files other NDN software keeps them
//! and their keys in.
//!
//! A certificate is a Data named `/<identity>/KEY/<key-id>/<issuer-id>/<version>`, ContentType
//! KEY, whose Content is the public key as SubjectPublicKeyInfo DER and whose SignatureInfo
//! carries a ValidityPeriod. Files read here:
//! - a certificate file as ndn-cxx's `ndnsec cert-dump` writes it: base64 of the Data;
//! - a safe bag as `ndnsec export` writes it: base64 of a SafeBag (TLV 128) holding the
//!   certificate and an EncryptedKey (TLV 129), a PKCS#8 EncryptedPrivateKeyInfo (PBES2, as
//!   OpenSSL writes it for ndn-cxx: PBKDF2 and AES-CBC);
//! - a private key of python-ndn's file TPM: `<hex SHA-256 of the key name's TLV>.privkey`,
//!   base64 of PKCS#1 (RSA) or SEC1 (ECDSA) DER.
//!
//! PKCS#8 decryption and the ASN.1 of SubjectPublicKeyInfo come from RustCrypto's `pkcs8`
//! (with `encryption`) and `spki`, kept by the project that keeps `rsa`, already used here.

use std::path::{Path, PathBuf};

use base64::Engine as _;
use bytes::Bytes;
use kite_packet::name::Component;
use kite_packet::{tlv_type, ContentType, Data, KeyLocator, Name, SignatureInfo, ValidityPeriod};
use pkcs8::der::{Decode, Encode};
use pkcs8::spki::SubjectPublicKeyInfoRef;
use pkcs8::{EncryptedPrivateKeyInfo, ObjectIdentifier, PrivateKeyInfo};
use sha2::{Digest, Sha256};
use thiserror::Error;

use crate::key::PrivateKey;
use crate::kind::SignatureKind;
use crate::signer::KeySigner;
use crate::verify::Verifier;

/// The largest certificate accepted, in octets of its Data: an NDN packet's limit. A
/// certificate is one Data; a larger one is not a certificate any NDN software sends.
pub const MAX_CERTIFICATE_SIZE: usize = 8800;

/// TLV type of a SafeBag.
pub const SAFE_BAG: u64 = 128;
/// TLV type of a SafeBag's EncryptedKey.
pub const ENCRYPTED_KEY: u64 = 129;

const OID_EC: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.2.1");
const OID_P256: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.3.1.7");
const OID_P384: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.132.0.34");
const OID_RSA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.1");
const OID_ED25519: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.101.112");

/// Why a certificate, safe bag or key file was refused.
#[derive(Debug, Error)]
pub enum CertError {
    /// The Data (or SafeBag) does not decode.
    #[error("does not decode: {0}")]
    Decode(String),
    /// A Data that is not a certificate: its name, content type or content.
    #[error("not a certificate: {0}")]
    NotCertificate(&'static str),
    /// A public or private key of a kind Kite does not verify with.
    #[error("unsupported key: {0}")]
    UnsupportedKey(String),
    /// Decrypting a safe bag's key failed: a wrong password, or a scheme not supported.
    #[error("cannot decrypt the private key (wrong password, or a scheme other than PBES2): {0}")]
    Decrypt(String),
    /// The private key does not match the certificate's public key.
    #[error("the private key does not match the certificate")]
    KeyMismatch,
    /// Reading a file failed.
    #[error("{path}: {error}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        error: std::io::Error,
    },
}

/// A decoded NDN certificate.
#[derive(Debug, Clone)]
pub struct Certificate {
    data: Data,
    wire: Bytes,
    kind: SignatureKind,
    public_key: Vec<u8>,
}

impl Certificate {
    /// Decodes and checks a certificate: its name's form, ContentType KEY, and a public key
    /// Kite can verify with.
    pub fn decode(wire: Bytes) -> Result<Certificate, CertError> {
        if wire.len() > MAX_CERTIFICATE_SIZE {
            return Err(CertError::NotCertificate("larger than an NDN packet"));
        }
        let data = Data::decode(wire.clone()).map_err(|e| CertError::Decode(e.to_string()))?;
        if !is_certificate_name(&data.name) {
            return Err(CertError::NotCertificate(
                "the name is not /<identity>/KEY/<key-id>/<issuer>/<version>",
            ));
        }
        if data.meta.content_type != Some(ContentType::KEY) {
            return Err(CertError::NotCertificate("the ContentType is not KEY"));
        }
        let public_key = data.content.clone().unwrap_or_default().to_vec();
        let kind = public_key_kind(&public_key)?;
        Ok(Certificate {
            data,
            wire,
            kind,
            public_key,
        })
    }

    /// Reads base64 text (line breaks allowed), as `ndnsec cert-dump` writes it.
    pub fn from_base64(text: &str) -> Result<Certificate, CertError> {
        Certificate::decode(base64_decode(text)?.into())
    }

    /// Reads a certificate file (base64, as `ndnsec cert-dump` writes it).
    pub fn read(path: &Path) -> Result<Certificate, CertError> {
        Certificate::from_base64(&read_text(path, MAX_CERTIFICATE_SIZE * 2)?)
    }

    /// Issues the certificate of `public` (SubjectPublicKeyInfo DER) for `key_name`
    /// (`/<identity>/KEY/<key-id>`), signed by `issuer` (itself for a self-signed one), valid
    /// for `validity`. The issuer component is `issuer_id`, the version `version`.
    pub fn issue(
        key_name: &Name,
        public: &[u8],
        issuer: &KeySigner,
        issuer_id: &[u8],
        version: u64,
        validity: ValidityPeriod,
    ) -> Result<Certificate, CertError> {
        public_key_kind(public)?;
        let name = key_name
            .clone()
            .append(Component::generic(issuer_id))
            .append(kite_packet::OwnedComponent::version(version).as_ref());
        let mut data = Data::new(name, Bytes::copy_from_slice(public));
        data.meta.content_type = Some(ContentType::KEY);
        data.meta.freshness_period = Some(3_600_000);
        let mut info = SignatureInfo::new(issuer.key().kind().signature_type());
        info.validity = Some(validity);
        data.sig_info = info;
        let wire = data
            .sign(issuer)
            .map_err(|e| CertError::Decode(e.to_string()))?;
        Certificate::decode(wire)
    }

    /// The certificate's name.
    pub fn name(&self) -> &Name {
        &self.data.name
    }

    /// The key it certifies: its name less issuer and version, `/<identity>/KEY/<key-id>`.
    pub fn key_name(&self) -> Name {
        self.data.name.prefix(self.data.name.len() - 2)
    }

    /// The identity, `/<identity>`.
    pub fn identity(&self) -> Name {
        self.data.name.prefix(self.data.name.len() - 4)
    }

    /// The key (or certificate) name its signature's KeyLocator names.
    pub fn signer(&self) -> Option<&Name> {
        match self.data.sig_info.key_locator.as_ref()? {
            KeyLocator::Name(n) => Some(n),
            KeyLocator::KeyDigest(_) => None,
        }
    }

    /// The certified key's kind.
    pub fn kind(&self) -> SignatureKind {
        self.kind
    }

    /// The certified public key, SubjectPublicKeyInfo DER.
    pub fn public_key(&self) -> &[u8] {
        &self.public_key
    }

    /// A verifier of the certified key's signatures.
    pub fn verifier(&self) -> Result<Verifier, crate::KeyError> {
        Verifier::new(self.kind, &self.public_key)
    }

    /// The Data.
    pub fn data(&self) -> &Data {
        &self.data
    }

    /// Its encoding.
    pub fn wire(&self) -> &Bytes {
        &self.wire
    }

    /// Base64 of its encoding, as `ndnsec cert-dump` writes it (64 characters a line).
    pub fn to_base64(&self) -> String {
        let text = base64::engine::general_purpose::STANDARD.encode(&self.wire);
        let mut out = String::with_capacity(text.len() + text.len() / 64 + 1);
        for chunk in text.as_bytes().chunks(64) {
            out.push_str(std::str::from_utf8(chunk).expect("base64 is ASCII"));
            out.push('\n');
        }
        out
    }

    /// Whether `unix_s` (seconds since the Unix epoch) lies within its ValidityPeriod; a
    /// certificate without one is never valid (ndn-cxx requires it).
    pub fn is_valid_at(&self, unix_s: u64) -> bool {
        let Some(v) = &self.data.sig_info.validity else {
            return false;
        };
        match (
            timestamp_seconds(&v.not_before),
            timestamp_seconds(&v.not_after),
        ) {
            (Some(from), Some(until)) => from <= unix_s && unix_s <= until,
            _ => false,
        }
    }
}

/// Whether `name` has a certificate's form: `KEY` fourth from the end.
pub fn is_certificate_name(name: &Name) -> bool {
    name.len() >= 4
        && name
            .get(name.len() - 4)
            .is_some_and(|c| is_key_component(&c))
}

/// Whether `name` has a key name's form, `/<identity>/KEY/<key-id>`.
pub fn is_key_name(name: &Name) -> bool {
    name.len() >= 2
        && name
            .get(name.len() - 2)
            .is_some_and(|c| is_key_component(&c))
}

fn is_key_component(c: &Component<'_>) -> bool {
    c.typ() == tlv_type::GENERIC_NAME_COMPONENT && c.value() == b"KEY"
}

/// The kind of a SubjectPublicKeyInfo's key: ECDSA P-256 or P-384, RSA 1024, 2048 or 3072
/// bits, or Ed25519.
pub fn public_key_kind(spki: &[u8]) -> Result<SignatureKind, CertError> {
    let info = SubjectPublicKeyInfoRef::from_der(spki)
        .map_err(|e| CertError::UnsupportedKey(format!("not SubjectPublicKeyInfo: {e}")))?;
    let curve = || {
        info.algorithm
            .parameters_oid()
            .map_err(|e| CertError::UnsupportedKey(format!("no curve: {e}")))
    };
    match info.algorithm.oid {
        OID_EC => ec_kind(curve()?),
        OID_ED25519 => Ok(SignatureKind::Ed25519),
        OID_RSA => {
            let bits = info.subject_public_key.raw_bytes();
            let key = rsa::pkcs1::RsaPublicKey::from_der(bits)
                .map_err(|e| CertError::UnsupportedKey(format!("RSA public key: {e}")))?;
            rsa_kind(key.modulus.as_bytes())
        }
        other => Err(CertError::UnsupportedKey(format!("algorithm {other}"))),
    }
}

fn ec_kind(curve: ObjectIdentifier) -> Result<SignatureKind, CertError> {
    match curve {
        OID_P256 => Ok(SignatureKind::EcdsaP256),
        OID_P384 => Ok(SignatureKind::EcdsaP384),
        other => Err(CertError::UnsupportedKey(format!("curve {other}"))),
    }
}

fn rsa_kind(modulus: &[u8]) -> Result<SignatureKind, CertError> {
    let len = modulus.iter().skip_while(|&&b| b == 0).count();
    match len {
        128 => Ok(SignatureKind::Rsa1024),
        256 => Ok(SignatureKind::Rsa2048),
        384 => Ok(SignatureKind::Rsa3072),
        n => Err(CertError::UnsupportedKey(format!(
            "RSA with {} bits",
            n * 8
        ))),
    }
}

/// A private key from PKCS#8 PrivateKeyInfo DER, of whatever kind its algorithm says.
pub fn private_key_from_pkcs8(der: &[u8]) -> Result<PrivateKey, CertError> {
    let info = PrivateKeyInfo::from_der(der)
        .map_err(|e| CertError::UnsupportedKey(format!("not PKCS#8: {e}")))?;
    let kind = match info.algorithm.oid {
        OID_EC => ec_kind(
            info.algorithm
                .parameters_oid()
                .map_err(|e| CertError::UnsupportedKey(format!("no curve: {e}")))?,
        )?,
        OID_ED25519 => SignatureKind::Ed25519,
        OID_RSA => {
            let key = rsa::pkcs1::RsaPrivateKey::from_der(info.private_key)
                .map_err(|e| CertError::UnsupportedKey(format!("RSA private key: {e}")))?;
            rsa_kind(key.modulus.as_bytes())?
        }
        other => return Err(CertError::UnsupportedKey(format!("algorithm {other}"))),
    };
    PrivateKey::from_der(kind, der).map_err(|e| CertError::UnsupportedKey(e.to_string()))
}

/// A certificate with its private key, encrypted: what `ndnsec export` writes.
#[derive(Debug, Clone)]
pub struct SafeBag {
    /// The certificate.
    pub certificate: Certificate,
    /// PKCS#8 EncryptedPrivateKeyInfo DER.
    pub encrypted_key: Bytes,
}

impl SafeBag {
    /// Decodes a SafeBag TLV.
    pub fn decode(wire: &[u8]) -> Result<SafeBag, CertError> {
        let bad = |why: &str| CertError::Decode(format!("SafeBag: {why}"));
        let (typ, value) = tlv(wire).ok_or_else(|| bad("truncated"))?;
        if typ != SAFE_BAG || value.len() + header_len(wire) != wire.len() {
            return Err(bad("not one SafeBag element"));
        }
        let (ctyp, _) = tlv(value).ok_or_else(|| bad("no certificate"))?;
        if ctyp != tlv_type::DATA {
            return Err(bad("the first element is not a certificate"));
        }
        let cert_len = header_len(value) + tlv(value).map_or(0, |(_, v)| v.len());
        let certificate = Certificate::decode(Bytes::copy_from_slice(&value[..cert_len]))?;
        let rest = &value[cert_len..];
        let (ktyp, key) = tlv(rest).ok_or_else(|| bad("no EncryptedKey"))?;
        if ktyp != ENCRYPTED_KEY || header_len(rest) + key.len() != rest.len() {
            return Err(bad("the second element is not one EncryptedKey"));
        }
        Ok(SafeBag {
            certificate,
            encrypted_key: Bytes::copy_from_slice(key),
        })
    }

    /// Reads base64 text, as `ndnsec export` writes it.
    pub fn from_base64(text: &str) -> Result<SafeBag, CertError> {
        SafeBag::decode(&base64_decode(text)?)
    }

    /// Reads a safe bag file.
    pub fn read(path: &Path) -> Result<SafeBag, CertError> {
        SafeBag::from_base64(&read_text(path, 64 * 1024)?)
    }

    /// The private key, decrypted with `password`; it must be the certificate's key.
    pub fn private_key(&self, password: &[u8]) -> Result<PrivateKey, CertError> {
        let info = EncryptedPrivateKeyInfo::from_der(&self.encrypted_key)
            .map_err(|e| CertError::Decrypt(e.to_string()))?;
        let plain = info
            .decrypt(password)
            .map_err(|e| CertError::Decrypt(e.to_string()))?;
        let key = private_key_from_pkcs8(plain.as_bytes())?;
        let public = key
            .public_der()
            .map_err(|e| CertError::UnsupportedKey(e.to_string()))?;
        if public != self.certificate.public_key() {
            return Err(CertError::KeyMismatch);
        }
        Ok(key)
    }

    /// Encodes a SafeBag of `certificate` and `encrypted_key` (EncryptedPrivateKeyInfo DER).
    pub fn encode(certificate: &Certificate, encrypted_key: &[u8]) -> Vec<u8> {
        let mut value = certificate.wire().to_vec();
        put_tlv(&mut value, ENCRYPTED_KEY, encrypted_key);
        let mut out = Vec::with_capacity(value.len() + 10);
        put_tlv(&mut out, SAFE_BAG, &value);
        out
    }
}

/// The file python-ndn's file TPM keeps `key_name`'s private key in, under `dir`.
pub fn tpm_file_path(dir: &Path, key_name: &Name) -> PathBuf {
    let mut tlv = Vec::new();
    put_tlv(&mut tlv, tlv_type::NAME, key_name.value());
    dir.join(format!("{}.privkey", hex(&Sha256::digest(&tlv))))
}

/// Reads `key_name`'s private key from python-ndn's file TPM at `dir` (`~/.ndn/ndnsec-key-file`
/// by default): base64 of PKCS#1 (RSA) or SEC1 (ECDSA) DER.
pub fn read_tpm_file_key(dir: &Path, key_name: &Name) -> Result<PrivateKey, CertError> {
    let path = tpm_file_path(dir, key_name);
    let der = base64_decode(&read_text(&path, 64 * 1024)?)?;
    if let Ok(key) = rsa::pkcs1::RsaPrivateKey::from_der(&der) {
        let kind = rsa_kind(key.modulus.as_bytes())?;
        let pkcs8 = PrivateKeyInfo::new(
            pkcs8::AlgorithmIdentifierRef {
                oid: OID_RSA,
                parameters: Some(pkcs8::der::asn1::AnyRef::NULL),
            },
            &der,
        )
        .to_der()
        .map_err(|e| CertError::UnsupportedKey(e.to_string()))?;
        return PrivateKey::from_der(kind, &pkcs8)
            .map_err(|e| CertError::UnsupportedKey(e.to_string()));
    }
    PrivateKey::from_sec1_der(&der).map_err(|e| CertError::UnsupportedKey(e.to_string()))
}

/// [`read_tpm_file_key`] for `certificate`'s key, refused unless it is the key the
/// certificate certifies.
pub fn read_tpm_file_key_of(
    dir: &Path,
    certificate: &Certificate,
) -> Result<PrivateKey, CertError> {
    let key = read_tpm_file_key(dir, &certificate.key_name())?;
    let public = key
        .public_der()
        .map_err(|e| CertError::UnsupportedKey(e.to_string()))?;
    if public != certificate.public_key() {
        return Err(CertError::KeyMismatch);
    }
    Ok(key)
}

fn read_text(path: &Path, limit: usize) -> Result<String, CertError> {
    let io = |error| CertError::Io {
        path: path.to_path_buf(),
        error,
    };
    let meta = std::fs::metadata(path).map_err(io)?;
    if meta.len() > limit as u64 {
        return Err(CertError::Decode(format!(
            "{}: larger than {limit} octets",
            path.display()
        )));
    }
    std::fs::read_to_string(path).map_err(io)
}

fn base64_decode(text: &str) -> Result<Vec<u8>, CertError> {
    let compact: String = text.split_whitespace().collect();
    base64::engine::general_purpose::STANDARD
        .decode(compact)
        .map_err(|e| CertError::Decode(format!("not base64: {e}")))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The type and value of the first TLV element of `buf`.
fn tlv(buf: &[u8]) -> Option<(u64, &[u8])> {
    let (typ, a) = varnum(buf)?;
    let (len, b) = varnum(&buf[a..])?;
    let start = a + b;
    let end = start.checked_add(usize::try_from(len).ok()?)?;
    Some((typ, buf.get(start..end)?))
}

fn header_len(buf: &[u8]) -> usize {
    let a = varnum(buf).map_or(0, |(_, n)| n);
    a + varnum(&buf[a..]).map_or(0, |(_, n)| n)
}

fn varnum(buf: &[u8]) -> Option<(u64, usize)> {
    let first = *buf.first()?;
    let n = match first {
        0..=252 => return Some((u64::from(first), 1)),
        253 => 2,
        254 => 4,
        255 => 8,
    };
    let bytes = buf.get(1..1 + n)?;
    let v = bytes.iter().fold(0u64, |acc, &b| acc << 8 | u64::from(b));
    Some((v, 1 + n))
}

fn put_tlv(out: &mut Vec<u8>, typ: u64, value: &[u8]) {
    put_varnum(out, typ);
    put_varnum(out, value.len() as u64);
    out.extend_from_slice(value);
}

fn put_varnum(out: &mut Vec<u8>, v: u64) {
    match v {
        0..=252 => out.push(v as u8),
        253..=0xffff => {
            out.push(253);
            out.extend_from_slice(&(v as u16).to_be_bytes());
        }
        0x1_0000..=0xffff_ffff => {
            out.push(254);
            out.extend_from_slice(&(v as u32).to_be_bytes());
        }
        _ => {
            out.push(255);
            out.extend_from_slice(&v.to_be_bytes());
        }
    }
}

/// Seconds since the Unix epoch of a `YYYYMMDDThhmmss` UTC timestamp.
fn timestamp_seconds(t: &[u8; 15]) -> Option<u64> {
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        std::str::from_utf8(&t[r]).ok()?.parse().ok()
    };
    let (y, m, d) = (num(0..4)?, num(4..6)?, num(6..8)?);
    let (hh, mm, ss) = (num(9..11)?, num(11..13)?, num(13..15)?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || hh > 23 || mm > 59 || ss > 60 {
        return None;
    }
    let days = kite_packet::signature::days_from_civil(y, m, d);
    u64::try_from(days * 86_400 + hh * 3600 + mm * 60 + ss).ok()
}

#[cfg(test)]
mod tests;
