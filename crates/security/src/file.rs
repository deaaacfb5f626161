//! Key files: PEM text, with two header lines before the PEM block saying the kind and the key
//! name (PEM readers such as OpenSSL skip text before `-----BEGIN`):
//!
//! ```text
//! Kite-Key-Type: ecdsa-p256
//! Kite-Key-Name: /my/identity/KEY/%1A%2B%3C%4D%5E%6F%70%81
//! -----BEGIN PRIVATE KEY-----          (PKCS#8 v1 DER; "PUBLIC KEY": SubjectPublicKeyInfo)
//! ```
//!
//! HMAC keys are a `HMAC SECRET KEY` block holding the raw secret, in both the private and the
//! "public" file (the verifier needs the secret). DigestSha256 and Null files have no block.

use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use kite_packet::Name;

use crate::error::KeyError;
use crate::key::PrivateKey;
use crate::kind::SignatureKind;
use crate::signer::KeySigner;
use crate::verify::Verifier;

const TYPE_HEADER: &str = "Kite-Key-Type:";
const NAME_HEADER: &str = "Kite-Key-Name:";
const PRIVATE_LABEL: &str = "PRIVATE KEY";
const PUBLIC_LABEL: &str = "PUBLIC KEY";
const SECRET_LABEL: &str = "HMAC SECRET KEY";

/// The key material a file holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyBlock {
    /// PKCS#8 v1 DER private key.
    Private(Vec<u8>),
    /// SubjectPublicKeyInfo DER public key.
    Public(Vec<u8>),
    /// HMAC shared secret.
    Secret(Vec<u8>),
    /// No key (DigestSha256, Null).
    None,
}

/// A key file's content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyFile {
    /// The algorithm.
    pub kind: SignatureKind,
    /// The key name (`/<identity>/KEY/<key-id>`), when the kind has a key.
    pub name: Option<Name>,
    /// The key material.
    pub block: KeyBlock,
}

impl KeyFile {
    /// The private key file of `key`.
    pub fn private(key: &PrivateKey, name: Option<Name>) -> Result<KeyFile, KeyError> {
        let der = key.to_der()?;
        let block = match key.kind() {
            k if !k.has_key() => KeyBlock::None,
            SignatureKind::HmacSha256 => KeyBlock::Secret(der),
            _ => KeyBlock::Private(der),
        };
        Ok(KeyFile {
            kind: key.kind(),
            name,
            block,
        })
    }

    /// What a verifier of `key` needs: its public key (its secret, for HMAC).
    pub fn public(key: &PrivateKey, name: Option<Name>) -> Result<KeyFile, KeyError> {
        let der = key.public_der()?;
        let block = match key.kind() {
            k if !k.has_key() => KeyBlock::None,
            SignatureKind::HmacSha256 => KeyBlock::Secret(der),
            _ => KeyBlock::Public(der),
        };
        Ok(KeyFile {
            kind: key.kind(),
            name,
            block,
        })
    }

    /// The file's text.
    pub fn encode(&self) -> String {
        let mut out = format!("{TYPE_HEADER} {}\n", self.kind);
        if let Some(n) = &self.name {
            out.push_str(&format!("{NAME_HEADER} {n}\n"));
        }
        let (label, der) = match &self.block {
            KeyBlock::Private(d) => (PRIVATE_LABEL, d),
            KeyBlock::Public(d) => (PUBLIC_LABEL, d),
            KeyBlock::Secret(d) => (SECRET_LABEL, d),
            KeyBlock::None => return out,
        };
        let config = pem::EncodeConfig::new().set_line_ending(pem::LineEnding::LF);
        out.push_str(&pem::encode_config(
            &pem::Pem::new(label, der.clone()),
            config,
        ));
        out
    }

    /// Parses a file's text.
    pub fn decode(text: &str) -> Result<KeyFile, KeyError> {
        let bad = |s: &str| KeyError::Format(s.to_owned());
        let mut kind = None;
        let mut name = None;
        for line in text.lines().take_while(|l| !l.starts_with("-----BEGIN")) {
            if let Some(v) = line.strip_prefix(TYPE_HEADER) {
                kind = Some(v.trim().parse::<SignatureKind>()?);
            } else if let Some(v) = line.strip_prefix(NAME_HEADER) {
                let n = v
                    .trim()
                    .parse::<Name>()
                    .map_err(|e| KeyError::Format(format!("key name {v:?}: {e}")))?;
                name = Some(n);
            }
        }
        let kind = kind.ok_or_else(|| bad("no Kite-Key-Type line"))?;
        let block = if text.contains("-----BEGIN") {
            let p = pem::parse(text).map_err(|e| KeyError::Format(e.to_string()))?;
            let der = p.contents().to_vec();
            match p.tag() {
                PRIVATE_LABEL => KeyBlock::Private(der),
                PUBLIC_LABEL => KeyBlock::Public(der),
                SECRET_LABEL => KeyBlock::Secret(der),
                other => return Err(KeyError::Format(format!("unknown PEM label {other:?}"))),
            }
        } else {
            KeyBlock::None
        };
        let consistent = match &block {
            KeyBlock::None => !kind.has_key(),
            KeyBlock::Secret(_) => kind == SignatureKind::HmacSha256,
            KeyBlock::Private(_) | KeyBlock::Public(_) => {
                kind.has_key() && kind != SignatureKind::HmacSha256
            }
        };
        if !consistent {
            return Err(KeyError::Format(format!(
                "a {kind} key file cannot hold this block"
            )));
        }
        Ok(KeyFile { kind, name, block })
    }

    /// Reads and parses the file at `path`.
    pub fn read(path: impl AsRef<Path>) -> Result<KeyFile, KeyError> {
        Self::decode(&std::fs::read_to_string(path)?)
    }

    /// Writes the file at `path`, readable by its owner only when it holds a private key or a
    /// secret.
    pub fn write(&self, path: impl AsRef<Path>) -> Result<(), KeyError> {
        let mode = if matches!(self.block, KeyBlock::Public(_)) {
            0o644
        } else {
            0o600
        };
        let mut f = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(mode)
            .open(path)?;
        f.write_all(self.encode().as_bytes())?;
        Ok(())
    }

    /// The private key (a public key file has none).
    pub fn private_key(&self) -> Result<PrivateKey, KeyError> {
        match &self.block {
            KeyBlock::Public(_) => Err(KeyError::Format(
                "this is a public key file; signing needs the private key".into(),
            )),
            KeyBlock::Private(d) | KeyBlock::Secret(d) => PrivateKey::from_der(self.kind, d),
            KeyBlock::None => PrivateKey::from_der(self.kind, &[]),
        }
    }

    /// A signer with this file's key and key name.
    pub fn signer(&self) -> Result<KeySigner, KeyError> {
        Ok(KeySigner::new(self.private_key()?, self.name.clone()))
    }

    /// A verifier for this file's key (from either a private or a public file).
    pub fn verifier(&self) -> Result<Verifier, KeyError> {
        match &self.block {
            KeyBlock::Private(_) => Verifier::new(self.kind, &self.private_key()?.public_der()?),
            KeyBlock::Public(d) | KeyBlock::Secret(d) => Verifier::new(self.kind, d),
            KeyBlock::None => Verifier::new(self.kind, &[]),
        }
    }
}
