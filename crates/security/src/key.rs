//! [`PrivateKey`]: key material parsed once and held in memory, so signing never touches the
//! key file (NDNperf measured 250 µs per signature spent re-reading it).
//!
//! aws-lc-rs does every algorithm but two corners it refuses: RSA keys under 2048 bits (its
//! safe API rejects them outright), for which RSA-1024 uses the RustCrypto `rsa` crate; and
//! P-384 with SHA-256 (it pairs P-384 with SHA-384 only), handled by hand in this module.

use aws_lc_rs::digest::{self, Digest};
use aws_lc_rs::encoding::{AsDer, Pkcs8V1Der, PublicKeyX509Der};
use aws_lc_rs::rand::{SecureRandom, SystemRandom};
use aws_lc_rs::signature::{
    EcdsaKeyPair, Ed25519KeyPair, KeyPair as _, ECDSA_P256_SHA256_ASN1_SIGNING,
    ECDSA_P384_SHA384_ASN1_SIGNING, RSA_PKCS1_SHA256,
};
use aws_lc_rs::{hmac, rsa as lc_rsa};
use kite_packet::{SignError, SignatureBytes};
use rsa::pkcs1v15::SigningKey as LegacyRsaSigningKey;
use rsa::pkcs8::{DecodePrivateKey, EncodePrivateKey, EncodePublicKey};
use rsa::signature::{SignatureEncoding, Signer as _};
use sha2::Sha256;

use crate::error::KeyError;
use crate::kind::SignatureKind;

/// Octets of a generated HMAC secret (the SHA-256 block's worth recommended by RFC 2104 is
/// more than needed; the output length is enough).
pub const HMAC_KEY_LEN: usize = 32;

/// The algorithm-specific key.
enum Material {
    /// DigestSha256 and Null sign without a key.
    None,
    Hmac {
        key: Box<hmac::Key>,
        secret: Vec<u8>,
    },
    Ecdsa(EcdsaKeyPair),
    Ed25519(Ed25519KeyPair),
    Rsa(lc_rsa::KeyPair),
    LegacyRsa(Box<LegacyRsaSigningKey<Sha256>>),
}

/// A signing key of one [`SignatureKind`], ready to sign.
pub struct PrivateKey {
    kind: SignatureKind,
    material: Material,
}

impl std::fmt::Debug for PrivateKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PrivateKey({})", self.kind)
    }
}

fn rejected(kind: SignatureKind, reason: impl ToString) -> KeyError {
    KeyError::Rejected {
        kind,
        reason: reason.to_string(),
    }
}

impl PrivateKey {
    /// A new random key of `kind`.
    pub fn generate(kind: SignatureKind) -> Result<PrivateKey, KeyError> {
        let fail = |_| KeyError::Generate(kind);
        let material = match kind {
            SignatureKind::DigestSha256 | SignatureKind::Null => Material::None,
            SignatureKind::HmacSha256 => {
                let mut secret = vec![0; HMAC_KEY_LEN];
                SystemRandom::new().fill(&mut secret).map_err(fail)?;
                return Self::from_der(kind, &secret);
            }
            SignatureKind::EcdsaP256 => Material::Ecdsa(
                EcdsaKeyPair::generate(&ECDSA_P256_SHA256_ASN1_SIGNING).map_err(fail)?,
            ),
            SignatureKind::EcdsaP384 => Material::Ecdsa(
                EcdsaKeyPair::generate(&ECDSA_P384_SHA384_ASN1_SIGNING).map_err(fail)?,
            ),
            SignatureKind::Ed25519 => Material::Ed25519(Ed25519KeyPair::generate().map_err(fail)?),
            SignatureKind::Rsa1024 => {
                let key = rsa::RsaPrivateKey::new(&mut rsa::rand_core::OsRng, 1024)
                    .map_err(|_| KeyError::Generate(kind))?;
                Material::LegacyRsa(Box::new(LegacyRsaSigningKey::new(key)))
            }
            SignatureKind::Rsa2048 => {
                Material::Rsa(lc_rsa::KeyPair::generate(lc_rsa::KeySize::Rsa2048).map_err(fail)?)
            }
            SignatureKind::Rsa3072 => {
                Material::Rsa(lc_rsa::KeyPair::generate(lc_rsa::KeySize::Rsa3072).map_err(fail)?)
            }
        };
        Ok(PrivateKey { kind, material })
    }

    /// Parses what [`PrivateKey::to_der`] wrote: PKCS#8 (v1 or v2) for public-key kinds, the
    /// raw secret for HMAC, nothing for DigestSha256 and Null. The key must match `kind`
    /// (curve, RSA modulus size).
    pub fn from_der(kind: SignatureKind, der: &[u8]) -> Result<PrivateKey, KeyError> {
        let no = |e: aws_lc_rs::error::KeyRejected| rejected(kind, e);
        let material = match kind {
            SignatureKind::DigestSha256 | SignatureKind::Null => Material::None,
            SignatureKind::HmacSha256 => {
                if der.is_empty() {
                    return Err(rejected(kind, "empty secret"));
                }
                Material::Hmac {
                    key: Box::new(hmac::Key::new(hmac::HMAC_SHA256, der)),
                    secret: der.to_vec(),
                }
            }
            SignatureKind::EcdsaP256 => Material::Ecdsa(
                EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, der).map_err(no)?,
            ),
            SignatureKind::EcdsaP384 => Material::Ecdsa(
                EcdsaKeyPair::from_pkcs8(&ECDSA_P384_SHA384_ASN1_SIGNING, der).map_err(no)?,
            ),
            SignatureKind::Ed25519 => {
                Material::Ed25519(Ed25519KeyPair::from_pkcs8_maybe_unchecked(der).map_err(no)?)
            }
            SignatureKind::Rsa1024 => {
                let key = rsa::RsaPrivateKey::from_pkcs8_der(der).map_err(|e| rejected(kind, e))?;
                if rsa::traits::PublicKeyParts::size(&key) != 128 {
                    return Err(rejected(kind, "the modulus is not 1024 bits"));
                }
                Material::LegacyRsa(Box::new(LegacyRsaSigningKey::new(key)))
            }
            SignatureKind::Rsa2048 | SignatureKind::Rsa3072 => {
                let key = lc_rsa::KeyPair::from_pkcs8(der).map_err(no)?;
                let bytes = if kind == SignatureKind::Rsa2048 {
                    256
                } else {
                    384
                };
                if key.public_modulus_len() != bytes {
                    return Err(rejected(kind, "the modulus has another size"));
                }
                Material::Rsa(key)
            }
        };
        Ok(PrivateKey { kind, material })
    }

    /// Parses an ECDSA private key in SEC1 DER (RFC 5915 ECPrivateKey, with its curve), as
    /// python-ndn's file TPM stores it; P-256 and P-384.
    pub fn from_sec1_der(der: &[u8]) -> Result<PrivateKey, KeyError> {
        for (kind, alg) in [
            (SignatureKind::EcdsaP256, &ECDSA_P256_SHA256_ASN1_SIGNING),
            (SignatureKind::EcdsaP384, &ECDSA_P384_SHA384_ASN1_SIGNING),
        ] {
            if let Ok(k) = EcdsaKeyPair::from_private_key_der(alg, der) {
                return Ok(PrivateKey {
                    kind,
                    material: Material::Ecdsa(k),
                });
            }
        }
        Err(KeyError::Format(
            "not a SEC1 ECDSA P-256 or P-384 private key".into(),
        ))
    }

    /// The kind of key.
    pub fn kind(&self) -> SignatureKind {
        self.kind
    }

    /// The private key as stored: PKCS#8 v1 DER, the raw HMAC secret, or nothing.
    pub fn to_der(&self) -> Result<Vec<u8>, KeyError> {
        let fail = |e: &dyn std::fmt::Display| rejected(self.kind, e);
        Ok(match &self.material {
            Material::None => Vec::new(),
            Material::Hmac { secret, .. } => secret.clone(),
            Material::Ecdsa(k) => k.to_pkcs8v1().map_err(|e| fail(&e))?.as_ref().to_vec(),
            Material::Ed25519(k) => k.to_pkcs8v1().map_err(|e| fail(&e))?.as_ref().to_vec(),
            Material::Rsa(k) => {
                let der: Pkcs8V1Der<'static> = k.as_der().map_err(|e| fail(&e))?;
                der.as_ref().to_vec()
            }
            Material::LegacyRsa(k) => k
                .as_ref()
                .as_ref()
                .to_pkcs8_der()
                .map_err(|e| fail(&e))?
                .as_bytes()
                .to_vec(),
        })
    }

    /// What a verifier needs: the public key as SubjectPublicKeyInfo DER, the secret for HMAC,
    /// nothing for DigestSha256 and Null.
    pub fn public_der(&self) -> Result<Vec<u8>, KeyError> {
        let fail = |e: &dyn std::fmt::Display| rejected(self.kind, e);
        let spki = |d: Result<PublicKeyX509Der<'static>, _>| {
            d.map(|d| d.as_ref().to_vec())
                .map_err(|e: aws_lc_rs::error::Unspecified| fail(&e))
        };
        match &self.material {
            Material::None => Ok(Vec::new()),
            Material::Hmac { secret, .. } => Ok(secret.clone()),
            Material::Ecdsa(k) => spki(k.public_key().as_der()),
            Material::Ed25519(k) => spki(k.public_key().as_der()),
            Material::Rsa(k) => spki(k.public_key().as_der()),
            Material::LegacyRsa(k) => Ok(k
                .as_ref()
                .as_ref()
                .to_public_key()
                .to_public_key_der()
                .map_err(|e| fail(&e))?
                .into_vec()),
        }
    }

    /// The longest signature this key produces.
    pub fn max_signature_len(&self) -> usize {
        match &self.material {
            Material::None => 32,
            Material::Hmac { .. } => 32,
            // DER of two integers of the curve's size, each with a possible sign octet.
            Material::Ecdsa(k) => k.public_key().as_ref().len() + 8,
            Material::Ed25519(_) => 64,
            Material::Rsa(k) => k.public_modulus_len(),
            Material::LegacyRsa(_) => 128,
        }
    }

    /// Signs `msg` (the whole signed portion).
    pub fn sign(&self, msg: &[u8]) -> Result<SignatureBytes, SignError> {
        let fail = |what: &str| SignError(format!("{} signing failed: {what}", self.kind));
        Ok(match &self.material {
            Material::None if self.kind == SignatureKind::Null => SignatureBytes::new(),
            Material::None => {
                SignatureBytes::from_slice(digest::digest(&digest::SHA256, msg).as_ref())
            }
            Material::Hmac { key, .. } => SignatureBytes::from_slice(hmac::sign(key, msg).as_ref()),
            Material::Ecdsa(k) if self.kind == SignatureKind::EcdsaP384 => {
                sign_p384_sha256(k, msg).map_err(|_| fail("P-384"))?
            }
            Material::Ecdsa(k) => SignatureBytes::from_slice(
                k.sign(&SystemRandom::new(), msg)
                    .map_err(|_| fail("ECDSA"))?
                    .as_ref(),
            ),
            Material::Ed25519(k) => SignatureBytes::from_slice(k.sign(msg).as_ref()),
            Material::Rsa(k) => {
                let mut sig = SignatureBytes::from_elem(0, k.public_modulus_len());
                k.sign(&RSA_PKCS1_SHA256, &SystemRandom::new(), msg, &mut sig)
                    .map_err(|_| fail("RSA"))?;
                sig
            }
            Material::LegacyRsa(k) => SignatureBytes::from_slice(&k.sign(msg).to_bytes()),
        })
    }
}

/// ECDSA on P-384 over SHA-256, as NDN's SignatureSha256WithEcdsa requires for every curve.
///
/// aws-lc-rs binds P-384 keys to SHA-384 digests. ECDSA turns a digest into the integer of its
/// leftmost bits (as many as the curve order has), so a 48-octet value made of 16 zero octets
/// and the 32-octet SHA-256 digest is the same integer as the SHA-256 digest alone: signing it
/// gives a valid SHA-256 ECDSA signature, which the tests check with an independent verifier.
fn sign_p384_sha256(k: &EcdsaKeyPair, msg: &[u8]) -> Result<SignatureBytes, ()> {
    let sha256 = digest::digest(&digest::SHA256, msg);
    let mut widened = [0u8; 48];
    widened[16..].copy_from_slice(sha256.as_ref());
    let d = Digest::import_less_safe(&widened, &digest::SHA384).map_err(|_| ())?;
    let sig = k.sign_digest(&d).map_err(|_| ())?;
    Ok(SignatureBytes::from_slice(sig.as_ref()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn der_round_trip_keeps_the_key_for_every_kind() {
        for kind in SignatureKind::ALL {
            let k = PrivateKey::generate(kind).unwrap();
            let back = PrivateKey::from_der(kind, &k.to_der().unwrap()).unwrap();
            assert_eq!(
                back.public_der().unwrap(),
                k.public_der().unwrap(),
                "{kind}"
            );
            assert_eq!(back.kind(), kind);
            let sig = k.sign(b"abc").unwrap();
            assert!(sig.len() <= k.max_signature_len(), "{kind}");
        }
    }

    #[test]
    fn a_key_of_another_kind_is_refused() {
        let p256 = PrivateKey::generate(SignatureKind::EcdsaP256).unwrap();
        let der = p256.to_der().unwrap();
        for kind in [
            SignatureKind::EcdsaP384,
            SignatureKind::Ed25519,
            SignatureKind::Rsa2048,
            SignatureKind::Rsa1024,
        ] {
            assert!(matches!(
                PrivateKey::from_der(kind, &der),
                Err(KeyError::Rejected { .. })
            ));
        }
        let rsa3072 = PrivateKey::generate(SignatureKind::Rsa3072).unwrap();
        assert!(PrivateKey::from_der(SignatureKind::Rsa2048, &rsa3072.to_der().unwrap()).is_err());
        assert!(PrivateKey::from_der(SignatureKind::HmacSha256, &[]).is_err());
    }
}
