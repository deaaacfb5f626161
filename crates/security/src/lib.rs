//! `kite-security`: the signers and verifiers Kite's tools use, and the key files behind them.
//!
//! Every [`SignatureKind`] (DigestSha256, HMAC-SHA256, ECDSA P-256 and P-384, RSA 1024, 2048
//! and 3072 with PKCS#1 v1.5, Ed25519, Null) signs through [`KeySigner`], which implements
//! `kite_packet`'s [`Signer`](kite_packet::Signer) so `Data::sign` encodes and signs in one
//! buffer, with the key parsed once and held in memory ([`PrivateKey`]). KeyLocator is the key
//! name `/<identity>/KEY/<key-id>` ([`key_name`]), as NDN certificates name keys.
//! [`Verifier`] checks a decoded Data's signed portion against its SignatureValue under a known
//! key. [`KeyFile`] stores keys as PEM (PKCS#8 private keys, SubjectPublicKeyInfo public keys).
//! Crypto is aws-lc-rs, except RSA-1024, which its safe API refuses (see [`key`]).

pub mod cert;
pub mod error;
pub mod file;
pub mod key;
pub mod kind;
pub mod signer;
pub mod validator;
pub mod verify;

pub use cert::{CertError, Certificate, SafeBag};
pub use error::{KeyError, VerifyError};
pub use file::{KeyBlock, KeyFile};
pub use key::PrivateKey;
pub use kind::SignatureKind;
pub use signer::{key_name, KeySigner};
pub use verify::Verifier;

#[cfg(test)]
mod tests;
