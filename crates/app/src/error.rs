//! [`ClientError`]: everything that can go wrong talking to a forwarder.

use std::io;
use std::time::Duration;

use kite_packet::{DecodeError, NackReason, Name, SignError};
use thiserror::Error;

/// Why a client operation failed.
#[derive(Debug, Error)]
pub enum ClientError {
    /// No forwarder answered at any of the places tried.
    #[error("cannot connect to the forwarder (tried {}): it may not be running", .tried.join("; "))]
    NotRunning {
        /// Each endpoint tried, with the error it gave.
        tried: Vec<String>,
    },
    /// No Data or Nack arrived in time.
    #[error("no answer for {name} within {after:?}")]
    Timeout {
        /// The Interest's name.
        name: Name,
        /// How long the client waited.
        after: Duration,
    },
    /// The network refused the Interest.
    #[error("Nack ({}) for {name}", nack_reason_text(*.reason))]
    Nack {
        /// The NackReason.
        reason: NackReason,
        /// The Interest's name.
        name: Name,
    },
    /// The forwarder answered with a management error status (a ControlResponse that is not
    /// a success, or a dataset refused with a ContentType-Nack Data).
    #[error("the forwarder answered {code} \"{text}\"")]
    Status {
        /// StatusCode.
        code: u64,
        /// StatusText.
        text: String,
    },
    /// The socket failed.
    #[error("I/O error talking to the forwarder: {0}")]
    Io(io::Error),
    /// A packet from the forwarder did not decode.
    #[error("undecodable packet from the forwarder: {0}")]
    Decode(DecodeError),
    /// The forwarder sent a TLV element longer than any packet may be.
    #[error("the forwarder sent a {len}-octet element, longer than any packet may be")]
    FrameTooLarge {
        /// The element's length as its header announces it (header and value).
        len: u64,
    },
    /// The command signer's key failed to sign.
    #[error("signing the command failed: {0}")]
    Sign(SignError),
    /// A status dataset does not follow the segmentation convention (no version or segment
    /// component, or no FinalBlockId within the segment limit).
    #[error("malformed status dataset: {0}")]
    Dataset(&'static str),
}

// The variants that wrap another error say it in their message; they do not also report it
// as their source, or a chain printer (anyhow's `{:#}`) would print it twice.

impl From<io::Error> for ClientError {
    fn from(e: io::Error) -> Self {
        ClientError::Io(e)
    }
}

impl From<DecodeError> for ClientError {
    fn from(e: DecodeError) -> Self {
        ClientError::Decode(e)
    }
}

/// A NackReason as NDNLPv2 names it.
pub fn nack_reason_text(r: NackReason) -> String {
    match r {
        NackReason::NONE => "None".into(),
        NackReason::CONGESTION => "Congestion".into(),
        NackReason::DUPLICATE => "Duplicate".into(),
        NackReason::NO_ROUTE => "NoRoute".into(),
        NackReason(n) => format!("reason {n}"),
    }
}
