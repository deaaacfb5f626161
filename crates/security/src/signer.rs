//! [`KeySigner`]: a [`PrivateKey`] and the KeyLocator that names it, as a `kite_packet`
//! [`Signer`]; cheap to clone and shareable between signing threads.

use std::sync::Arc;

use kite_packet::name::Component;
use kite_packet::{KeyLocator, Name, SignError, SignatureBytes, SignatureType, Signer};
use sha2::{Digest, Sha256};

use crate::error::KeyError;
use crate::key::PrivateKey;
use crate::kind::SignatureKind;

/// Octets of the KeyId component Kite derives from the public key.
const KEY_ID_LEN: usize = 8;

/// The key name NDN certificates expect, `/<identity>/KEY/<key-id>`, with a KeyId of the first
/// 8 octets of the SHA-256 of `public` (so the same key always gets the same name).
pub fn key_name(identity: &Name, public: &[u8]) -> Name {
    let id = Sha256::digest(public);
    identity
        .clone()
        .append(Component::generic(b"KEY"))
        .append(Component::generic(&id[..KEY_ID_LEN]))
}

/// Signs with one key held in memory.
#[derive(Debug, Clone)]
pub struct KeySigner {
    key: Arc<PrivateKey>,
    locator: Option<KeyLocator>,
}

impl KeySigner {
    /// A signer whose KeyLocator is `key_name` (none for DigestSha256 and Null, which have no
    /// key to locate).
    pub fn new(key: PrivateKey, key_name: Option<Name>) -> Self {
        let locator = key_name
            .filter(|_| key.kind().has_key())
            .map(KeyLocator::Name);
        KeySigner {
            key: Arc::new(key),
            locator,
        }
    }

    /// A signer with a new random key of `kind`, named `/<identity>/KEY/<key-id>`.
    pub fn generate(kind: SignatureKind, identity: &Name) -> Result<Self, KeyError> {
        let key = PrivateKey::generate(kind)?;
        let name = key_name(identity, &key.public_der()?);
        Ok(KeySigner::new(key, Some(name)))
    }

    /// The key name its KeyLocator carries (none for DigestSha256 and Null).
    pub fn key_name(&self) -> Option<&Name> {
        match &self.locator {
            Some(KeyLocator::Name(n)) => Some(n),
            _ => None,
        }
    }

    /// The key.
    pub fn key(&self) -> &PrivateKey {
        &self.key
    }
}

impl Signer for KeySigner {
    fn signature_type(&self) -> SignatureType {
        self.key.kind().signature_type()
    }

    fn key_locator(&self) -> Option<KeyLocator> {
        self.locator.clone()
    }

    fn max_signature_len(&self) -> usize {
        self.key.max_signature_len()
    }

    fn sign(&self, parts: &[&[u8]]) -> Result<SignatureBytes, SignError> {
        match parts {
            [one] => self.key.sign(one),
            _ => self.key.sign(&parts.concat()),
        }
    }
}
