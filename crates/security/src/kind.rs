//! [`SignatureKind`]: the signing algorithms Kite offers, named as the command line spells them.

use std::fmt;
use std::str::FromStr;

use kite_packet::SignatureType;

use crate::error::KeyError;

/// A signing algorithm and, for RSA, its key size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SignatureKind {
    /// DigestSha256: integrity only, no key.
    DigestSha256,
    /// HMAC with SHA-256 and a 32-octet shared secret.
    HmacSha256,
    /// ECDSA on P-256 over SHA-256, DER-encoded signature.
    EcdsaP256,
    /// ECDSA on P-384 over SHA-256 (NDN's SignatureSha256WithEcdsa), DER-encoded signature.
    EcdsaP384,
    /// RSA 1024-bit, PKCS#1 v1.5 over SHA-256 (legacy; for comparison with NDNperf).
    Rsa1024,
    /// RSA 2048-bit, PKCS#1 v1.5 over SHA-256.
    Rsa2048,
    /// RSA 3072-bit, PKCS#1 v1.5 over SHA-256.
    Rsa3072,
    /// Ed25519.
    Ed25519,
    /// No signature: type 200, empty value.
    Null,
}

impl SignatureKind {
    /// Every kind, in the order help texts list them.
    pub const ALL: [SignatureKind; 9] = [
        SignatureKind::DigestSha256,
        SignatureKind::HmacSha256,
        SignatureKind::EcdsaP256,
        SignatureKind::EcdsaP384,
        SignatureKind::Rsa1024,
        SignatureKind::Rsa2048,
        SignatureKind::Rsa3072,
        SignatureKind::Ed25519,
        SignatureKind::Null,
    ];

    /// The name the command line and key files use (`ecdsa-p256`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            SignatureKind::DigestSha256 => "digest-sha256",
            SignatureKind::HmacSha256 => "hmac-sha256",
            SignatureKind::EcdsaP256 => "ecdsa-p256",
            SignatureKind::EcdsaP384 => "ecdsa-p384",
            SignatureKind::Rsa1024 => "rsa-1024",
            SignatureKind::Rsa2048 => "rsa-2048",
            SignatureKind::Rsa3072 => "rsa-3072",
            SignatureKind::Ed25519 => "ed25519",
            SignatureKind::Null => "null",
        }
    }

    /// The SignatureType it puts in SignatureInfo.
    pub fn signature_type(self) -> SignatureType {
        match self {
            SignatureKind::DigestSha256 => SignatureType::DIGEST_SHA256,
            SignatureKind::HmacSha256 => SignatureType::HMAC_WITH_SHA256,
            SignatureKind::EcdsaP256 | SignatureKind::EcdsaP384 => SignatureType::SHA256_WITH_ECDSA,
            SignatureKind::Rsa1024 | SignatureKind::Rsa2048 | SignatureKind::Rsa3072 => {
                SignatureType::SHA256_WITH_RSA
            }
            SignatureKind::Ed25519 => SignatureType::ED25519,
            SignatureKind::Null => SignatureType::NULL,
        }
    }

    /// Whether it signs with a key (every kind but DigestSha256 and Null).
    pub fn has_key(self) -> bool {
        !matches!(self, SignatureKind::DigestSha256 | SignatureKind::Null)
    }

    /// The valid names, comma separated, for error and help texts.
    pub fn valid_names() -> String {
        Self::ALL.map(Self::as_str).join(", ")
    }
}

impl fmt::Display for SignatureKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for SignatureKind {
    type Err = KeyError;

    fn from_str(s: &str) -> Result<Self, KeyError> {
        Self::ALL
            .into_iter()
            .find(|k| k.as_str().eq_ignore_ascii_case(s))
            .ok_or_else(|| KeyError::UnknownKind {
                given: s.to_owned(),
                valid: Self::valid_names(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_lists_the_valid_ones() {
        for k in SignatureKind::ALL {
            assert_eq!(k.as_str().parse::<SignatureKind>().unwrap(), k);
        }
        let err = "ecdsa-p512"
            .parse::<SignatureKind>()
            .unwrap_err()
            .to_string();
        assert!(err.contains("ecdsa-p512"), "{err}");
        for k in SignatureKind::ALL {
            assert!(err.contains(k.as_str()), "{err}");
        }
    }

    #[test]
    fn signature_types_follow_the_packet_format() {
        let t = |k: SignatureKind| k.signature_type().0;
        assert_eq!(t(SignatureKind::DigestSha256), 0);
        assert_eq!(t(SignatureKind::Rsa2048), 1);
        assert_eq!(t(SignatureKind::EcdsaP384), 3);
        assert_eq!(t(SignatureKind::HmacSha256), 4);
        assert_eq!(t(SignatureKind::Ed25519), 5);
        assert_eq!(t(SignatureKind::Null), 200);
    }
}
