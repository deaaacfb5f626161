use super::*;

fn validity() -> ValidityPeriod {
    ValidityPeriod::new("20200101T000000", "20401231T235959").unwrap()
}

fn self_signed(kind: SignatureKind, identity: &str) -> (KeySigner, Certificate) {
    let signer = KeySigner::generate(kind, &identity.parse().unwrap()).unwrap();
    let public = signer.key().public_der().unwrap();
    let cert = Certificate::issue(
        signer.key_name().unwrap(),
        &public,
        &signer,
        b"self",
        1,
        validity(),
    )
    .unwrap();
    (signer, cert)
}

/// 2026-06-01T00:00:00Z.
const JUNE_2026: u64 = 1_780_272_000;

#[test]
fn an_issued_certificate_decodes_with_its_names_key_and_validity() {
    for kind in [
        SignatureKind::EcdsaP256,
        SignatureKind::EcdsaP384,
        SignatureKind::Ed25519,
        SignatureKind::Rsa2048,
    ] {
        let (signer, cert) = self_signed(kind, "/site/router");
        assert_eq!(cert.kind(), kind);
        assert_eq!(cert.identity().to_string(), "/site/router");
        assert_eq!(&cert.key_name(), signer.key_name().unwrap());
        assert_eq!(cert.signer(), signer.key_name());
        assert!(is_certificate_name(cert.name()));
        assert!(is_key_name(&cert.key_name()));
        let again = Certificate::from_base64(&cert.to_base64()).unwrap();
        assert_eq!(again.wire(), cert.wire());
        cert.verifier().unwrap().verify(again.data()).unwrap();
        assert!(cert.is_valid_at(JUNE_2026));
        assert!(!cert.is_valid_at(1_500_000_000), "2017: not yet");
        assert!(!cert.is_valid_at(2_300_000_000), "2042: expired");
    }
}

#[test]
fn civil_timestamps_convert_to_unix_seconds() {
    assert_eq!(timestamp_seconds(b"19700101T000000"), Some(0));
    assert_eq!(timestamp_seconds(b"20260601T000000"), Some(JUNE_2026));
    assert_eq!(timestamp_seconds(b"20240229T235959"), Some(1_709_251_199));
    assert_eq!(timestamp_seconds(b"20241301T000000"), None);
    assert_eq!(timestamp_seconds(b"2024010xT000000"), None);
}

#[test]
fn what_is_not_a_certificate_is_refused() {
    let (signer, cert) = self_signed(SignatureKind::EcdsaP256, "/a");
    // Not named /<id>/KEY/<key-id>/<issuer>/<version>.
    let mut d = Data::new("/a/b/c/d".parse().unwrap(), cert.public_key().to_vec());
    d.meta.content_type = Some(ContentType::KEY);
    let wire = d.sign(&signer).unwrap();
    assert!(matches!(
        Certificate::decode(wire),
        Err(CertError::NotCertificate(_))
    ));
    // Not ContentType KEY.
    let mut d = Data::new(cert.name().clone(), cert.public_key().to_vec());
    let wire = d.sign(&signer).unwrap();
    assert!(matches!(
        Certificate::decode(wire),
        Err(CertError::NotCertificate(_))
    ));
    // A content that is no public key.
    d.meta.content_type = Some(ContentType::KEY);
    d.content = Some(Bytes::from_static(b"junk"));
    let wire = d.sign(&signer).unwrap();
    assert!(matches!(
        Certificate::decode(wire),
        Err(CertError::UnsupportedKey(_))
    ));
    // Larger than a packet.
    let big = Bytes::from(vec![0u8; MAX_CERTIFICATE_SIZE + 1]);
    assert!(Certificate::decode(big).is_err());
    // Truncated, and garbage.
    let w = cert.wire();
    for cut in [0, 1, 10, w.len() / 2, w.len() - 1] {
        assert!(Certificate::decode(w.slice(..cut)).is_err(), "cut at {cut}");
    }
    assert!(Certificate::from_base64("%%%").is_err());
    // A certificate without ValidityPeriod is never valid.
    let mut d = cert.data().clone();
    d.sig_info.validity = None;
    let c = Certificate::decode(d.sign(&signer).unwrap()).unwrap();
    assert!(!c.is_valid_at(JUNE_2026));
}

#[test]
fn a_safe_bag_gives_back_its_certificate_and_key() {
    let encrypted = base64_decode(include_str!("testdata/ec.enc.b64")).unwrap();
    let info = EncryptedPrivateKeyInfo::from_der(&encrypted).unwrap();
    let plain = info.decrypt(b"kite-test").unwrap();
    let key = private_key_from_pkcs8(plain.as_bytes()).unwrap();
    assert_eq!(key.kind(), SignatureKind::EcdsaP256);
    let public = key.public_der().unwrap();
    let name = crate::key_name(&"/exported".parse().unwrap(), &public);
    let signer = KeySigner::new(key, Some(name.clone()));
    let cert = Certificate::issue(&name, &public, &signer, b"self", 7, validity()).unwrap();

    let bag = SafeBag::encode(&cert, &encrypted);
    let text = base64::engine::general_purpose::STANDARD.encode(&bag);
    let decoded = SafeBag::from_base64(&text).unwrap();
    assert_eq!(decoded.certificate.wire(), cert.wire());
    let key = decoded.private_key(b"kite-test").unwrap();
    assert_eq!(key.public_der().unwrap(), public);
    assert!(matches!(
        decoded.private_key(b"wrong"),
        Err(CertError::Decrypt(_))
    ));
    // Another certificate with this key: refused.
    let (_, other) = self_signed(SignatureKind::EcdsaP256, "/other");
    let mismatched = SafeBag::decode(&SafeBag::encode(&other, &encrypted)).unwrap();
    assert!(matches!(
        mismatched.private_key(b"kite-test"),
        Err(CertError::KeyMismatch)
    ));
    // Truncations never panic.
    for cut in 0..bag.len() {
        assert!(SafeBag::decode(&bag[..cut]).is_err(), "cut at {cut}");
    }
}

#[test]
fn python_ndn_file_tpm_keys_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let ec_name: Name = "/py/KEY/%01".parse().unwrap();
    let rsa_name: Name = "/py/KEY/%02".parse().unwrap();
    std::fs::write(
        tpm_file_path(dir.path(), &ec_name),
        include_str!("testdata/ec.sec1.b64"),
    )
    .unwrap();
    std::fs::write(
        tpm_file_path(dir.path(), &rsa_name),
        include_str!("testdata/rsa.pkcs1.b64"),
    )
    .unwrap();
    let ec = read_tpm_file_key(dir.path(), &ec_name).unwrap();
    assert_eq!(ec.kind(), SignatureKind::EcdsaP256);
    let rsa = read_tpm_file_key(dir.path(), &rsa_name).unwrap();
    assert_eq!(rsa.kind(), SignatureKind::Rsa2048);
    // The file name is python-ndn's: SHA-256 of the Name TLV, in hex.
    let file = tpm_file_path(dir.path(), &ec_name);
    let mut tlv = vec![tlv_type::NAME as u8, ec_name.value().len() as u8];
    tlv.extend_from_slice(ec_name.value());
    assert_eq!(
        file.file_name().unwrap().to_str().unwrap(),
        format!("{}.privkey", hex(&Sha256::digest(&tlv)))
    );
    assert!(read_tpm_file_key(dir.path(), &"/py/KEY/%03".parse().unwrap()).is_err());
}

/// The files ndnsec 0.9.0 wrote (testdata/README.md has the command lines).
fn ndnsec_file(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src/cert/testdata")
        .join(name)
}

/// `ndnsec cert-dump -p`'s reading: each heading's indented lines.
fn ndnsec_pretty(heading: &str) -> Vec<String> {
    let text = std::fs::read_to_string(ndnsec_file("ndnsec-alice.pretty.txt")).unwrap();
    text.lines()
        .skip_while(|l| *l != format!("{heading}:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .map(|l| l.trim().to_string())
        .collect()
}

#[test]
fn certificates_ndnsec_dumped_read_as_ndnsec_reads_them() {
    let root = Certificate::read(&ndnsec_file("ndnsec-root.ndncert")).unwrap();
    let alice = Certificate::read(&ndnsec_file("ndnsec-alice.ndncert")).unwrap();
    let name = &ndnsec_pretty("Certificate Name")[0];
    assert_eq!(&alice.name().to_string(), name);
    assert_eq!(alice.identity().to_string(), "/kite/testdata/alice");
    assert_eq!(
        alice.key_name().to_string(),
        name.split("/kite-root/").next().unwrap()
    );
    assert!(is_certificate_name(alice.name()));

    let key = &ndnsec_pretty("Public Key");
    assert_eq!(key[0], "Key Type: 256-bit EC");
    assert_eq!(alice.kind(), SignatureKind::EcdsaP256);
    let spki = base64::engine::general_purpose::STANDARD.encode(alice.public_key());
    assert_eq!(spki, key[1..].concat());

    let validity = ndnsec_pretty("Validity");
    assert_eq!(
        validity,
        [
            "Not Before: 2026-01-01T00:00:00",
            "Not After: 2045-12-31T23:59:59"
        ]
    );
    let v = alice.data().sig_info.validity.unwrap();
    assert_eq!(&v.not_before, b"20260101T000000");
    assert_eq!(&v.not_after, b"20451231T235959");
    assert!(alice.is_valid_at(1_767_225_600), "from its first second");
    assert!(alice.is_valid_at(JUNE_2026));
    assert!(!alice.is_valid_at(1_767_225_599), "not before 2026");
    assert!(!alice.is_valid_at(2_398_377_600), "not from 2046");

    // Issued by the root, whose certificate ndnsec names in the KeyLocator, with RSA.
    let sig = ndnsec_pretty("Signature Information");
    assert_eq!(sig[0], "Signature Type: SignatureSha256WithRsa");
    assert_eq!(sig[1], format!("Key Locator: Name={}", root.name()));
    assert_eq!(alice.signer(), Some(root.name()));
    assert_eq!(root.kind(), SignatureKind::Rsa2048);
    assert_eq!(root.identity().to_string(), "/kite/testdata/root");
    root.verifier().unwrap().verify(alice.data()).unwrap();
    root.verifier().unwrap().verify(root.data()).unwrap();
    assert!(alice.verifier().unwrap().verify(root.data()).is_err());
}

#[test]
fn an_ndnsec_safe_bag_gives_back_the_key_its_certificate_verifies() {
    let bag = SafeBag::read(&ndnsec_file("ndnsec-alice.safebag")).unwrap();
    let alice = Certificate::read(&ndnsec_file("ndnsec-alice.ndncert")).unwrap();
    assert_eq!(bag.certificate.wire(), alice.wire());
    assert!(matches!(
        bag.private_key(b"not-the-password"),
        Err(CertError::Decrypt(_))
    ));
    let key = bag.private_key(b"kite-test").unwrap();
    assert_eq!(key.kind(), SignatureKind::EcdsaP256);

    // What the key signs verifies with the certificate's public key, and nothing else does.
    let signer = KeySigner::new(key, Some(alice.key_name()));
    let wire = Data::new("/kite/testdata/alice/hello".parse().unwrap(), &b"hello"[..])
        .sign(&signer)
        .unwrap();
    let signed = Data::decode(wire).unwrap();
    assert_eq!(
        signed.sig_info.key_locator,
        Some(KeyLocator::Name(alice.key_name()))
    );
    let verifier = alice.verifier().unwrap();
    verifier.verify(&signed).unwrap();
    // Another Data's signature on this one: refused.
    let other = Data::new("/kite/testdata/alice/hello".parse().unwrap(), &b"hellO"[..])
        .sign(&signer)
        .unwrap();
    let mut forged = Data::decode(other).unwrap();
    verifier.verify(&forged).unwrap();
    forged.sig_value = signed.sig_value.clone();
    assert!(verifier.verify(&forged).is_err());
    // A key of another kind cannot pass for the certificate's.
    let (_, rsa) = self_signed(SignatureKind::Rsa2048, "/kite/testdata/alice");
    assert!(rsa.verifier().unwrap().verify(&signed).is_err());
}

#[test]
fn a_file_tpm_key_is_read_for_its_certificate_only() {
    let dir = tempfile::tempdir().unwrap();
    let key =
        PrivateKey::from_sec1_der(&base64_decode(include_str!("testdata/ec.sec1.b64")).unwrap())
            .unwrap();
    let public = key.public_der().unwrap();
    let name = crate::key_name(&"/py".parse().unwrap(), &public);
    let signer = KeySigner::new(key, Some(name.clone()));
    let cert = Certificate::issue(&name, &public, &signer, b"self", 1, validity()).unwrap();
    std::fs::write(
        tpm_file_path(dir.path(), &name),
        include_str!("testdata/ec.sec1.b64"),
    )
    .unwrap();
    let read = read_tpm_file_key_of(dir.path(), &cert).unwrap();
    assert_eq!(read.public_der().unwrap(), public);

    // The file of another certificate's key name holding this key: refused.
    let (_, other) = self_signed(SignatureKind::EcdsaP256, "/other");
    std::fs::write(
        tpm_file_path(dir.path(), &other.key_name()),
        include_str!("testdata/ec.sec1.b64"),
    )
    .unwrap();
    assert!(matches!(
        read_tpm_file_key_of(dir.path(), &other),
        Err(CertError::KeyMismatch)
    ));
    // No file for the key: the path is named.
    let (_, absent) = self_signed(SignatureKind::EcdsaP256, "/absent");
    let e = read_tpm_file_key_of(dir.path(), &absent).unwrap_err();
    assert!(matches!(e, CertError::Io { .. }), "{e}");
}
