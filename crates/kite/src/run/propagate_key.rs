//! The key a host signs its prefix propagation with (`rib.propagate_key`), read at start: an
//! `ndnsec export` safe bag decrypted with the password in `propagate_key_password_file`, or
//! a key of python-ndn's file TPM found by `propagate_certificate`'s key name. The daemon
//! serves the key's certificate and `propagate_chain`'s, so that a gateway checking the
//! commands with a trust schema fetches them from this host's face (NFD's direct fetch).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use anyhow::{bail, Context, Result};
use kite_packet::Name;
use kite_security::{cert, Certificate, KeySigner, PrivateKey, SafeBag};

use crate::config;

/// The longest password file read, in octets.
const MAX_PASSWORD_FILE: u64 = 4096;

/// What `rib.propagate_key` and its companions name, read and checked.
#[derive(Debug)]
pub(super) struct PropagationKey {
    /// Signs the commands; its KeyLocator is the certificate's key name.
    pub signer: KeySigner,
    /// The key's certificate, then the chain's, as served.
    pub certificates: Vec<Certificate>,
}

impl PropagationKey {
    /// What is propagated when `propagate_prefixes` is empty: the certificate's identity, as
    /// NFD propagates the host's identity (and, as NFD, without a last component `nrd`).
    pub fn identity(&self) -> Name {
        let identity = self.certificates[0].identity();
        match identity.last() {
            Some(c)
                if c.typ() == kite_packet::tlv_type::GENERIC_NAME_COMPONENT
                    && c.value() == b"nrd" =>
            {
                identity.prefix(identity.len() - 1)
            }
            _ => identity,
        }
    }
}

/// Reads the propagation key `rib` names (paths relative to `base`, the configuration file's
/// directory); none when propagation is off or no key is named: commands are then signed
/// with DigestSha256. Any file that cannot be read, a wrong password, or a key that is not its
/// certificate's is an error that names the key and file.
pub(super) fn read(rib: &config::Rib, base: &Path) -> Result<Option<PropagationKey>> {
    let Some(key) = rib
        .propagate_key
        .as_ref()
        .filter(|_| rib.auto_prefix_propagate)
    else {
        return Ok(None);
    };
    let path = base.join(key);
    let meta = std::fs::metadata(&path)
        .with_context(|| format!("rib.propagate_key: cannot read {}", path.display()))?;
    let (key, certificate) = if meta.is_dir() {
        file_tpm(rib, base, &path)?
    } else {
        safe_bag(rib, base, &path)?
    };
    let mut certificates = vec![certificate];
    for c in &rib.propagate_chain {
        let p = base.join(c);
        certificates.push(
            Certificate::read(&p)
                .with_context(|| format!("rib.propagate_chain: certificate {}", p.display()))?,
        );
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    for c in certificates.iter().filter(|c| !c.is_valid_at(now)) {
        tracing::warn!(certificate = %c.name(), "propagation: certificate not valid now (ValidityPeriod); a gateway checking it refuses the commands");
    }
    let key_name = certificates[0].key_name();
    tracing::info!(
        key = %key_name,
        chain = certificates.len() - 1,
        "propagation signed by this key; its certificates are served"
    );
    Ok(Some(PropagationKey {
        signer: KeySigner::new(key, Some(key_name)),
        certificates,
    }))
}

/// A safe bag: its certificate, and its key decrypted with the password file's password.
fn safe_bag(rib: &config::Rib, base: &Path, path: &Path) -> Result<(PrivateKey, Certificate)> {
    if rib.propagate_certificate.is_some() {
        bail!(
            "rib.propagate_certificate: {} is a safe bag, which holds its certificate; \
             propagate_certificate goes with a file-TPM directory",
            path.display()
        );
    }
    let Some(password_file) = &rib.propagate_key_password_file else {
        bail!(
            "rib.propagate_key: {} is a safe bag (ndnsec export), its key encrypted: \
             propagate_key_password_file must name a file holding the password",
            path.display()
        );
    };
    let password = password(&base.join(password_file))?;
    let bag = SafeBag::read(path)
        .with_context(|| format!("rib.propagate_key: safe bag {}", path.display()))?;
    let key = bag
        .private_key(&password)
        .with_context(|| format!("rib.propagate_key: safe bag {}", path.display()))?;
    Ok((key, bag.certificate))
}

/// A key of python-ndn's file TPM at `dir`, the one `propagate_certificate` certifies.
fn file_tpm(rib: &config::Rib, base: &Path, dir: &Path) -> Result<(PrivateKey, Certificate)> {
    if rib.propagate_key_password_file.is_some() {
        bail!(
            "rib.propagate_key_password_file: {} is a file-TPM directory, whose keys are not \
             encrypted; the password file goes with a safe bag",
            dir.display()
        );
    }
    let Some(cert_file) = &rib.propagate_certificate else {
        bail!(
            "rib.propagate_key: {} is a directory (python-ndn's file TPM): \
             propagate_certificate must name the certificate of the key to sign with",
            dir.display()
        );
    };
    let cert_path = base.join(cert_file);
    let certificate = Certificate::read(&cert_path).with_context(|| {
        format!(
            "rib.propagate_certificate: certificate {}",
            cert_path.display()
        )
    })?;
    let file = cert::tpm_file_path(dir, &certificate.key_name());
    let key = cert::read_tpm_file_key_of(dir, &certificate).with_context(|| {
        format!(
            "rib.propagate_key: the key of {} in {}",
            certificate.key_name(),
            dir.display()
        )
    })?;
    if std::fs::metadata(&file).is_ok_and(|m| m.permissions().mode() & 0o004 != 0) {
        tracing::warn!(file = %file.display(), "propagation: the private key file is readable by every user (chmod o-rwx)");
    }
    Ok((key, certificate))
}

/// The password in `path`, less one trailing line ending. The file must not be readable by
/// every user: it is the safe bag's only protection.
fn password(path: &Path) -> Result<Vec<u8>> {
    let what = || format!("rib.propagate_key_password_file: {}", path.display());
    let meta = std::fs::metadata(path).with_context(what)?;
    if !meta.is_file() {
        bail!("{}: not a file", what());
    }
    if meta.permissions().mode() & 0o004 != 0 {
        bail!(
            "{}: readable by every user; make it readable by kite's user only \
             (chmod o-rwx)",
            what()
        );
    }
    if meta.len() > MAX_PASSWORD_FILE {
        bail!("{}: larger than {MAX_PASSWORD_FILE} octets", what());
    }
    let mut text = std::fs::read(path).with_context(what)?;
    if text.last() == Some(&b'\n') {
        text.pop();
        if text.last() == Some(&b'\r') {
            text.pop();
        }
    }
    Ok(text)
}

#[cfg(test)]
mod tests;
