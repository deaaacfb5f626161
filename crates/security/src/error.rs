//! The errors of key handling ([`KeyError`]) and of verification ([`VerifyError`]).

use std::io;

use thiserror::Error;

use crate::kind::SignatureKind;

/// Why a key could not be parsed, generated, read or written.
#[derive(Debug, Error)]
pub enum KeyError {
    /// A signature kind name that is not one of Kite's.
    #[error("unknown signature kind {given:?}; valid kinds: {valid}")]
    UnknownKind {
        /// What was given.
        given: String,
        /// The valid names.
        valid: String,
    },
    /// The crypto library refused the key material.
    #[error("not a valid {kind} key: {reason}")]
    Rejected {
        /// The kind the key was meant to be.
        kind: SignatureKind,
        /// What the crypto library said.
        reason: String,
    },
    /// Generating a key failed.
    #[error("cannot generate a {0} key")]
    Generate(SignatureKind),
    /// A key file does not follow Kite's key file format.
    #[error("malformed key file: {0}")]
    Format(String),
    /// Reading or writing a key file failed.
    #[error("key file I/O: {0}")]
    Io(io::Error),
}

// A variant that wraps another error says it in its message and does not also report it as
// its source, or a chain printer (anyhow's `{:#}`) would print it twice.
impl From<io::Error> for KeyError {
    fn from(e: io::Error) -> Self {
        KeyError::Io(e)
    }
}

/// Why a signature did not verify.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum VerifyError {
    /// The Data was built, not decoded, so its signed octets are unknown.
    #[error("the Data has no received encoding to verify")]
    NotDecoded,
    /// The Data carries another SignatureType than the verifier's.
    #[error("SignatureType {actual} where {expected} was expected")]
    WrongType {
        /// The verifier's type.
        expected: u64,
        /// The Data's type.
        actual: u64,
    },
    /// The SignatureValue does not match the signed portion under this key.
    #[error("the signature does not match ({kind})")]
    Mismatch {
        /// The verifier's kind.
        kind: SignatureKind,
    },
}
