//! `kite key`: generate a signing key into a PEM file (PKCS#8), and show what a key file holds,
//! for `kite perf server --key` and any application that signs with kite-security.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use kite_packet::Name;
use kite_security::{KeyBlock, KeyFile, KeySigner, SignatureKind};

/// What to do with keys.
#[derive(Subcommand)]
pub enum KeyCommand {
    /// Generate a key and write it as a PEM file (PKCS#8 private key, owner-readable only).
    Generate(GenerateArgs),
    /// Print a key file's type, key name and public key.
    Show(ShowArgs),
}

/// Parameters of `kite key generate`.
#[derive(Args)]
pub struct GenerateArgs {
    /// Signature kind: digest-sha256, hmac-sha256, ecdsa-p256, ecdsa-p384, rsa-1024, rsa-2048,
    /// rsa-3072, ed25519 or null.
    #[arg(long = "type", value_name = "KIND", value_parser = parse_kind)]
    kind: SignatureKind,
    /// The identity; the key is named /<identity>/KEY/<key-id> (the KeyLocator of what it signs).
    #[arg(long, value_name = "IDENTITY")]
    name: String,
    /// Where to write the private key file.
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// Also write the public key file (what verifiers need; for HMAC, the secret) here.
    #[arg(long, value_name = "FILE")]
    pub_out: Option<PathBuf>,
    /// Replace --out and --pub-out when they exist (without it, an existing file is an error:
    /// a key is not lost by mistake).
    #[arg(long)]
    force: bool,
}

/// Parameters of `kite key show`.
#[derive(Args)]
pub struct ShowArgs {
    /// A private or public key file.
    file: PathBuf,
}

/// A clap value parser for signature kinds (the error lists the valid ones).
pub fn parse_kind(s: &str) -> Result<SignatureKind, String> {
    s.parse()
        .map_err(|e: kite_security::KeyError| e.to_string())
}

/// Runs a key command.
pub fn run(cmd: KeyCommand) -> Result<String> {
    match cmd {
        KeyCommand::Generate(a) => generate(a),
        KeyCommand::Show(a) => show(a),
    }
}

fn generate(a: GenerateArgs) -> Result<String> {
    let identity: Name = a
        .name
        .parse()
        .map_err(|e| anyhow::anyhow!("--name {:?}: {e}", a.name))?;
    if !a.force {
        for path in std::iter::once(&a.out).chain(&a.pub_out) {
            if path.exists() {
                bail!("{} already exists; --force replaces it", path.display());
            }
        }
    }
    let signer = KeySigner::generate(a.kind, &identity)?;
    let (key, name) = (signer.key(), signer.key_name().cloned());
    KeyFile::private(key, name.clone())?
        .write(&a.out)
        .with_context(|| format!("writing {}", a.out.display()))?;
    if let Some(p) = &a.pub_out {
        KeyFile::public(key, name.clone())?
            .write(p)
            .with_context(|| format!("writing {}", p.display()))?;
    }
    let shown = name.map_or_else(|| "(no key name)".to_owned(), |n| n.to_string());
    Ok(format!(
        "{} key {shown} written to {}\n",
        a.kind,
        a.out.display()
    ))
}

fn show(a: ShowArgs) -> Result<String> {
    let file = KeyFile::read(&a.file).with_context(|| format!("reading {}", a.file.display()))?;
    let mut out = format!(
        "type: {} (SignatureType {})\nkey name: {}\n",
        file.kind,
        file.kind.signature_type().0,
        file.name
            .as_ref()
            .map_or_else(|| "(none)".to_owned(), |n| n.to_string())
    );
    let public = match &file.block {
        KeyBlock::None => None,
        KeyBlock::Secret(s) => {
            out.push_str(&format!("shared secret: {} octets (not shown)\n", s.len()));
            None
        }
        KeyBlock::Public(d) => Some(d.clone()),
        KeyBlock::Private(_) => Some(file.private_key()?.public_der()?),
    };
    if let Some(der) = public {
        let pem = pem::encode_config(
            &pem::Pem::new("PUBLIC KEY", der),
            pem::EncodeConfig::new().set_line_ending(pem::LineEnding::LF),
        );
        out.push_str("public key:\n");
        out.push_str(&pem);
    }
    Ok(out)
}
