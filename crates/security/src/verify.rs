//! [`Verifier`]: checks a decoded Data's signature against one known key.

use aws_lc_rs::hmac;
use aws_lc_rs::signature::{
    ParsedPublicKey, VerificationAlgorithm, ECDSA_P256_SHA256_ASN1, ECDSA_P384_SHA256_ASN1,
    ED25519, RSA_PKCS1_1024_8192_SHA256_FOR_LEGACY_USE_ONLY, RSA_PKCS1_2048_8192_SHA256,
};
use kite_packet::Data;
use sha2::{Digest, Sha256};

use crate::error::{KeyError, VerifyError};
use crate::kind::SignatureKind;

enum Check {
    Digest,
    Null,
    Hmac(Box<hmac::Key>),
    Public(ParsedPublicKey),
}

/// Verifies signatures of one kind under one key.
pub struct Verifier {
    kind: SignatureKind,
    check: Check,
}

impl std::fmt::Debug for Verifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Verifier({})", self.kind)
    }
}

impl Verifier {
    /// A verifier for `kind` with `public`: SubjectPublicKeyInfo DER for ECDSA, RSA and
    /// Ed25519, the shared secret for HMAC, ignored for DigestSha256 and Null.
    pub fn new(kind: SignatureKind, public: &[u8]) -> Result<Verifier, KeyError> {
        let parsed = |alg: &'static dyn VerificationAlgorithm| {
            ParsedPublicKey::new(alg, public)
                .map(Check::Public)
                .map_err(|e| KeyError::Rejected {
                    kind,
                    reason: e.to_string(),
                })
        };
        let check = match kind {
            SignatureKind::DigestSha256 => Check::Digest,
            SignatureKind::Null => Check::Null,
            SignatureKind::HmacSha256 => {
                if public.is_empty() {
                    return Err(KeyError::Rejected {
                        kind,
                        reason: "empty secret".into(),
                    });
                }
                Check::Hmac(Box::new(hmac::Key::new(hmac::HMAC_SHA256, public)))
            }
            SignatureKind::EcdsaP256 => parsed(&ECDSA_P256_SHA256_ASN1)?,
            SignatureKind::EcdsaP384 => parsed(&ECDSA_P384_SHA256_ASN1)?,
            SignatureKind::Rsa1024 => parsed(&RSA_PKCS1_1024_8192_SHA256_FOR_LEGACY_USE_ONLY)?,
            SignatureKind::Rsa2048 | SignatureKind::Rsa3072 => parsed(&RSA_PKCS1_2048_8192_SHA256)?,
            SignatureKind::Ed25519 => parsed(&ED25519)?,
        };
        Ok(Verifier { kind, check })
    }

    /// The kind it verifies.
    pub fn kind(&self) -> SignatureKind {
        self.kind
    }

    /// Checks a decoded Data: its SignatureType must be this verifier's and its SignatureValue
    /// must sign its signed portion (Name through SignatureInfo) under this key.
    pub fn verify(&self, data: &Data) -> Result<(), VerifyError> {
        let signed = data.signed_portion().ok_or(VerifyError::NotDecoded)?;
        self.verify_parts(data.sig_info.sig_type.0, &signed, &data.sig_value)
    }

    /// Checks `value` as a signature of type `sig_type` over `signed`.
    pub fn verify_parts(
        &self,
        sig_type: u64,
        signed: &[u8],
        value: &[u8],
    ) -> Result<(), VerifyError> {
        let expected = self.kind.signature_type().0;
        if sig_type != expected {
            return Err(VerifyError::WrongType {
                expected,
                actual: sig_type,
            });
        }
        let ok = match &self.check {
            Check::Digest => Sha256::digest(signed).as_slice() == value,
            Check::Null => value.is_empty(),
            Check::Hmac(key) => hmac::verify(key, signed, value).is_ok(),
            Check::Public(key) => key.verify_sig(signed, value).is_ok(),
        };
        if ok {
            Ok(())
        } else {
            Err(VerifyError::Mismatch { kind: self.kind })
        }
    }
}
