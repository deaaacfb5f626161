//! The signing options every Data-publishing subcommand shares (`kite put`, `kite ping
//! --server`, `kite perf server`): which signature kind, which key file, and where to write
//! the public key for verifiers.

use std::path::PathBuf;

use anyhow::{anyhow, Context, Result};
use clap::Args;
use kite_packet::Name;
use kite_security::{KeyFile, KeySigner, SignatureKind};

/// `--sign KIND [--key FILE] [--pub-out FILE]`.
#[derive(Args, Debug, Clone)]
pub struct SignArgs {
    /// Signature kind: digest-sha256, hmac-sha256, ecdsa-p256, ecdsa-p384, rsa-1024, rsa-2048,
    /// rsa-3072, ed25519 or null.
    #[arg(long, value_name = "KIND", default_value = "digest-sha256", value_parser = crate::key::parse_kind)]
    pub sign: SignatureKind,
    /// Private key file (from `kite key generate`); without it, a new key of --sign's kind is
    /// generated in memory, named /<prefix>/KEY/<key-id>.
    #[arg(long, value_name = "FILE")]
    pub key: Option<PathBuf>,
    /// Write the public key file here (for a verifier such as `kite perf client --verify
    /// --key-pub`; for HMAC it holds the secret).
    #[arg(long, value_name = "FILE")]
    pub pub_out: Option<PathBuf>,
}

impl SignArgs {
    /// The signer these options name, its key generated under `identity` when no file is
    /// given; writes the public key file when asked.
    pub fn signer(&self, identity: &Name) -> Result<KeySigner> {
        let signer = match &self.key {
            Some(path) => {
                let f =
                    KeyFile::read(path).with_context(|| format!("reading {}", path.display()))?;
                if f.kind != self.sign {
                    return Err(anyhow!(
                        "{} holds a {} key, not {}",
                        path.display(),
                        f.kind,
                        self.sign
                    ));
                }
                f.signer()?
            }
            None => KeySigner::generate(self.sign, identity)?,
        };
        if let Some(p) = &self.pub_out {
            KeyFile::public(signer.key(), signer.key_name().cloned())?
                .write(p)
                .with_context(|| format!("writing {}", p.display()))?;
        }
        Ok(signer)
    }
}
