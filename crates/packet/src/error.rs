//! Typed decoding errors. Every decoder in this crate returns one of these and never panics.
//! The variants are small and `Copy` so a forwarder can count drops by reason without allocating.

use thiserror::Error;

/// Why a byte string is not a valid NDN element or packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum DecodeError {
    /// The buffer ends inside a TLV-TYPE or TLV-LENGTH.
    #[error("truncated TLV header")]
    Truncated,
    /// TLV-LENGTH says the value is longer than what remains of the buffer.
    #[error("TLV-TYPE {typ}: TLV-LENGTH {len} exceeds the {available} remaining octets")]
    LengthExceedsBuffer {
        /// TLV-TYPE of the element.
        typ: u64,
        /// TLV-LENGTH it announced.
        len: u64,
        /// Octets actually remaining.
        available: usize,
    },
    /// A VAR-NUMBER was not in its shortest form.
    #[error("VAR-NUMBER not in its shortest encoding")]
    NonMinimalVarNumber,
    /// TLV-TYPE 0 is reserved and never valid.
    #[error("TLV-TYPE 0 is invalid")]
    ZeroType,
    /// A NonNegativeInteger whose length is not 1, 2, 4 or 8.
    #[error("TLV-TYPE {typ}: NonNegativeInteger of {len} octets")]
    InvalidNonNegInt {
        /// TLV-TYPE of the element.
        typ: u64,
        /// Its length.
        len: usize,
    },
    /// A different element was required here.
    #[error("expected TLV-TYPE {expected}, found {actual}")]
    UnexpectedType {
        /// What the grammar requires.
        expected: u64,
        /// What was found.
        actual: u64,
    },
    /// A recognized element appeared after one the grammar puts after it.
    #[error("TLV-TYPE {typ} is out of order")]
    OutOfOrder {
        /// The misplaced element.
        typ: u64,
    },
    /// A non-repeatable element appeared twice.
    #[error("TLV-TYPE {typ} is repeated")]
    Duplicate {
        /// The repeated element.
        typ: u64,
    },
    /// An unrecognized critical element (or an unknown NDNLPv2 field that cannot be ignored).
    #[error("unrecognized critical TLV-TYPE {typ}")]
    UnknownCritical {
        /// The unknown element.
        typ: u64,
    },
    /// A required element is absent.
    #[error("required TLV-TYPE {typ} is missing")]
    Missing {
        /// The missing element.
        typ: u64,
    },
    /// An element's length is not allowed (Nonce not 4 octets, HopLimit not 1, …).
    #[error("TLV-TYPE {typ}: length {len} is not allowed")]
    InvalidLength {
        /// The element.
        typ: u64,
        /// Its length.
        len: usize,
    },
    /// An element's value breaks a rule of the format.
    #[error("TLV-TYPE {typ}: {reason}")]
    InvalidValue {
        /// The element.
        typ: u64,
        /// Which rule.
        reason: &'static str,
    },
    /// Octets remain after the outermost element.
    #[error("{0} trailing octet(s) after the end of the packet")]
    TrailingBytes(usize),
    /// ApplicationParameters present but the name has no ParametersSha256DigestComponent, or
    /// the reverse, or the name has more than one.
    #[error(
        "ParametersSha256DigestComponent does not match the presence of ApplicationParameters"
    )]
    ParamsDigestPlacement,
    /// The ParametersSha256DigestComponent differs from the digest of the parameters.
    #[error("ParametersSha256DigestComponent does not match the parameters")]
    ParamsDigestMismatch,
}

/// Shorthand for results of decoders.
pub type Result<T> = core::result::Result<T, DecodeError>;
