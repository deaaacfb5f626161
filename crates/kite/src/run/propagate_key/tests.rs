use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use kite_packet::{Signer, ValidityPeriod};
use kite_security::SignatureKind;

use super::*;

fn validity() -> ValidityPeriod {
    ValidityPeriod::new("20200101T000000", "20401231T235959").unwrap()
}

/// A key of `kind` under `identity` and its certificate, issued by `issuer` (itself when none).
fn key(
    kind: SignatureKind,
    identity: &str,
    issuer: Option<&KeySigner>,
) -> (KeySigner, Certificate) {
    let k = KeySigner::generate(kind, &identity.parse().unwrap()).unwrap();
    let public = k.key().public_der().unwrap();
    let by = issuer.unwrap_or(&k);
    let c = Certificate::issue(k.key_name().unwrap(), &public, by, b"root", 1, validity()).unwrap();
    (k, c)
}

/// `ndnsec export`'s file for `key` and `cert`: base64 of a SafeBag whose key is encrypted with
/// `password` (PBES2: PBKDF2-HMAC-SHA256, AES-256-CBC).
fn safe_bag_text(key: &KeySigner, cert: &Certificate, password: &[u8]) -> String {
    let der = key.key().to_der().unwrap();
    let info = pkcs8::PrivateKeyInfo::try_from(der.as_slice()).unwrap();
    let params =
        pkcs8::pkcs5::pbes2::Parameters::pbkdf2_sha256_aes256cbc(2048, b"kite-salt", &[7; 16])
            .unwrap();
    let encrypted = info.encrypt_with_params(params, password).unwrap();
    let bag = SafeBag::encode(cert, encrypted.as_bytes());
    base64::engine::general_purpose::STANDARD.encode(bag)
}

fn write(dir: &Path, name: &str, text: &[u8], mode: u32) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
    p
}

fn rib(key: &str) -> config::Rib {
    config::Rib {
        auto_prefix_propagate: true,
        propagate_key: Some(key.into()),
        ..config::Rib::default()
    }
}

fn err(rib: &config::Rib, base: &Path) -> String {
    format!("{:#}", read(rib, base).unwrap_err())
}

#[test]
fn a_safe_bag_and_its_password_file_give_the_signer_and_the_certificates_to_serve() {
    let dir = tempfile::tempdir().unwrap();
    let (root, root_cert) = key(SignatureKind::EcdsaP256, "/site", None);
    let (host, host_cert) = key(SignatureKind::EcdsaP256, "/site/host", Some(&root));
    let bag = safe_bag_text(&host, &host_cert, b"s3cret pass");
    write(dir.path(), "host.safebag", bag.as_bytes(), 0o644);
    // As `echo` writes it: the line ending is not part of the password.
    write(dir.path(), "password", b"s3cret pass\n", 0o600);
    write(
        dir.path(),
        "site.ndncert",
        root_cert.to_base64().as_bytes(),
        0o644,
    );
    let mut r = rib("host.safebag");
    r.propagate_key_password_file = Some("password".into());
    r.propagate_chain = vec!["site.ndncert".into()];

    let k = read(&r, dir.path()).unwrap().expect("a key");
    assert_eq!(k.signer.key_name(), Some(&host_cert.key_name()));
    assert_eq!(
        k.signer.key_locator(),
        Some(kite_packet::KeyLocator::Name(host_cert.key_name()))
    );
    assert_eq!(
        k.signer.key().public_der().unwrap(),
        host.key().public_der().unwrap()
    );
    let names: Vec<_> = k.certificates.iter().map(|c| c.name().clone()).collect();
    assert_eq!(names, [host_cert.name().clone(), root_cert.name().clone()]);
    assert_eq!(k.identity(), "/site/host".parse::<Name>().unwrap());

    // The same with an absolute path, and `\r\n`.
    write(dir.path(), "password", b"s3cret pass\r\n", 0o640);
    let mut r = rib(dir.path().join("host.safebag").to_str().unwrap());
    r.propagate_key_password_file = Some("password".into());
    assert!(
        read(&r, Path::new("/nonexistent")).is_err(),
        "the password file is relative"
    );
    assert!(read(&r, dir.path()).unwrap().is_some());
}

#[test]
fn a_wrong_password_a_readable_password_file_or_none_stops_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let (host, cert) = key(SignatureKind::EcdsaP256, "/site/host", None);
    write(
        dir.path(),
        "host.safebag",
        safe_bag_text(&host, &cert, b"right").as_bytes(),
        0o600,
    );
    let mut r = rib("host.safebag");

    let e = err(&r, dir.path());
    assert!(
        e.contains("propagate_key_password_file must name a file"),
        "{e}"
    );
    r.propagate_key_password_file = Some("password".into());
    let e = err(&r, dir.path());
    assert!(
        e.contains("rib.propagate_key_password_file") && e.contains("password"),
        "{e}"
    );

    write(dir.path(), "password", b"wrong", 0o600);
    let e = err(&r, dir.path());
    assert!(e.contains("wrong password"), "{e}");
    assert!(e.contains("host.safebag"), "{e}");

    write(dir.path(), "password", b"right", 0o604);
    let e = err(&r, dir.path());
    assert!(e.contains("readable by every user"), "{e}");

    write(dir.path(), "password", b"right", 0o400);
    assert!(read(&r, dir.path()).unwrap().is_some());

    // Not a safe bag, a missing file, a certificate beside a safe bag.
    write(dir.path(), "junk", b"not base64!", 0o600);
    r.propagate_key = Some("junk".into());
    let e = err(&r, dir.path());
    assert!(e.contains("safe bag") && e.contains("junk"), "{e}");
    r.propagate_key = Some("missing".into());
    let e = err(&r, dir.path());
    assert!(e.contains("cannot read") && e.contains("missing"), "{e}");
    r.propagate_key = Some("host.safebag".into());
    r.propagate_certificate = Some("host.ndncert".into());
    let e = err(&r, dir.path());
    assert!(e.contains("holds its certificate"), "{e}");
}

#[test]
fn a_file_tpm_key_is_found_by_its_certificate() {
    let dir = tempfile::tempdir().unwrap();
    let tpm = dir.path().join("ndnsec-key-file");
    std::fs::create_dir(&tpm).unwrap();
    // python-ndn keeps an RSA key as base64 of PKCS#1, the key inside PKCS#8.
    let (host, cert) = key(SignatureKind::Rsa2048, "/site/host/nrd", None);
    let der = host.key().to_der().unwrap();
    let pkcs1 = pkcs8::PrivateKeyInfo::try_from(der.as_slice())
        .unwrap()
        .private_key
        .to_vec();
    std::fs::write(
        kite_security::cert::tpm_file_path(&tpm, &cert.key_name()),
        base64::engine::general_purpose::STANDARD.encode(pkcs1),
    )
    .unwrap();
    write(
        dir.path(),
        "host.ndncert",
        cert.to_base64().as_bytes(),
        0o644,
    );
    let mut r = rib("ndnsec-key-file");

    let e = err(&r, dir.path());
    assert!(e.contains("propagate_certificate must name"), "{e}");
    r.propagate_certificate = Some("host.ndncert".into());
    let k = read(&r, dir.path()).unwrap().expect("a key");
    assert_eq!(k.signer.key_name(), Some(&cert.key_name()));
    assert_eq!(
        k.signer.signature_type(),
        SignatureKind::Rsa2048.signature_type()
    );
    assert_eq!(
        k.identity(),
        "/site/host".parse::<Name>().unwrap(),
        "a last component nrd is not propagated, as in NFD"
    );

    // A certificate whose key the TPM does not hold; one whose key another file holds.
    let (_, other) = key(SignatureKind::EcdsaP256, "/site/other", None);
    write(
        dir.path(),
        "other.ndncert",
        other.to_base64().as_bytes(),
        0o644,
    );
    r.propagate_certificate = Some("other.ndncert".into());
    let e = err(&r, dir.path());
    assert!(
        e.contains("/site/other/KEY/") && e.contains(".privkey"),
        "{e}"
    );
    std::fs::copy(
        kite_security::cert::tpm_file_path(&tpm, &cert.key_name()),
        kite_security::cert::tpm_file_path(&tpm, &other.key_name()),
    )
    .unwrap();
    let e = err(&r, dir.path());
    assert!(e.contains("does not match the certificate"), "{e}");

    r.propagate_key_password_file = Some("password".into());
    let e = err(&r, dir.path());
    assert!(e.contains("not encrypted"), "{e}");
}

#[test]
fn without_propagation_or_a_key_commands_stay_digest_signed() {
    let mut r = rib("/nonexistent/key");
    r.auto_prefix_propagate = false;
    assert!(read(&r, Path::new("/")).unwrap().is_none(), "not read");
    assert!(read(&config::Rib::default(), Path::new("/"))
        .unwrap()
        .is_none());
}
