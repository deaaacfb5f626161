//! Sign-then-verify for every kind, tampering, wrong keys, and key files.

use bytes::Bytes;
use kite_packet::{Data, KeyLocator, Name, SignatureType};

use super::*;

fn identity() -> Name {
    "/kite/test".parse().unwrap()
}

fn signer(kind: SignatureKind) -> KeySigner {
    let key = PrivateKey::generate(kind).unwrap();
    let name = key_name(&identity(), &key.public_der().unwrap());
    KeySigner::new(key, Some(name))
}

fn signed(s: &KeySigner) -> Bytes {
    let mut d = Data::new("/kite/test/data/1".parse().unwrap(), vec![7u8; 1000]);
    d.meta.freshness_period = Some(0);
    d.sign(s).unwrap()
}

fn verifier_of(s: &KeySigner) -> Verifier {
    Verifier::new(s.key().kind(), &s.key().public_der().unwrap()).unwrap()
}

#[test]
fn every_kind_verifies_and_rejects_a_flipped_bit_anywhere_signed() {
    for kind in SignatureKind::ALL {
        let s = signer(kind);
        let wire = signed(&s);
        let data = Data::decode(wire.clone()).unwrap();
        assert_eq!(data.sig_info.sig_type, kind.signature_type(), "{kind}");
        let v = verifier_of(&s);
        assert_eq!(v.verify(&data), Ok(()), "{kind}");
        if kind == SignatureKind::Null {
            assert!(data.sig_value.is_empty());
            continue;
        }
        // A content octet, then the last octet of the signature value.
        for at in [wire.len() - data.sig_value.len() - 20, wire.len() - 1] {
            let mut bad = wire.to_vec();
            bad[at] ^= 0x01;
            let d = Data::decode(Bytes::from(bad)).unwrap();
            assert_eq!(
                v.verify(&d),
                Err(VerifyError::Mismatch { kind }),
                "{kind} at {at}"
            );
        }
    }
}

#[test]
fn a_wrong_key_or_type_fails_with_a_typed_error() {
    for kind in SignatureKind::ALL.into_iter().filter(|k| k.has_key()) {
        let data = Data::decode(signed(&signer(kind))).unwrap();
        let other = verifier_of(&signer(kind));
        assert_eq!(
            other.verify(&data),
            Err(VerifyError::Mismatch { kind }),
            "{kind}"
        );
    }
    let data = Data::decode(signed(&signer(SignatureKind::Ed25519))).unwrap();
    let v = Verifier::new(SignatureKind::DigestSha256, &[]).unwrap();
    assert_eq!(
        v.verify(&data),
        Err(VerifyError::WrongType {
            expected: 0,
            actual: 5
        })
    );
    let built = Data::new("/a".parse().unwrap(), &b"x"[..]);
    assert_eq!(v.verify(&built), Err(VerifyError::NotDecoded));
}

#[test]
fn key_locator_is_the_key_name_for_keyed_kinds_only() {
    for kind in SignatureKind::ALL {
        let s = signer(kind);
        let data = Data::decode(signed(&s)).unwrap();
        match (&data.sig_info.key_locator, kind.has_key()) {
            (Some(KeyLocator::Name(n)), true) => {
                assert_eq!(n.len(), 4, "{kind}");
                assert!(identity().is_prefix_of(n));
                assert_eq!(n.get(2).unwrap().value(), b"KEY");
                assert_eq!(n.get(3).unwrap().value().len(), 8);
            }
            (None, false) => {}
            other => panic!("{kind}: {other:?}"),
        }
    }
}

#[test]
fn digest_signer_matches_kite_packets_own() {
    let s = signer(SignatureKind::DigestSha256);
    let d = Data::new("/x".parse().unwrap(), &b"y"[..]);
    assert_eq!(
        d.sign(&s).unwrap(),
        d.sign(&kite_packet::DigestSha256).unwrap()
    );
    assert_eq!(
        s.key().kind().signature_type(),
        SignatureType::DIGEST_SHA256
    );
}

#[test]
fn key_files_round_trip_and_sign_like_the_original() {
    let dir = tempfile::tempdir().unwrap();
    for kind in SignatureKind::ALL {
        let key = PrivateKey::generate(kind).unwrap();
        let name = kind
            .has_key()
            .then(|| key_name(&identity(), &key.public_der().unwrap()));
        let private = KeyFile::private(&key, name.clone()).unwrap();
        let public = KeyFile::public(&key, name.clone()).unwrap();
        let path = dir.path().join(format!("{kind}.key"));
        let pub_path = dir.path().join(format!("{kind}.pub"));
        private.write(&path).unwrap();
        public.write(&pub_path).unwrap();
        let back = KeyFile::read(&path).unwrap();
        assert_eq!(back, private, "{kind}");
        let back_pub = KeyFile::read(&pub_path).unwrap();
        assert_eq!(back_pub, public, "{kind}");
        // Signed with the reloaded key, verified with the public file and the private file.
        let data = Data::decode(signed(&back.signer().unwrap())).unwrap();
        assert_eq!(back_pub.verifier().unwrap().verify(&data), Ok(()), "{kind}");
        assert_eq!(back.verifier().unwrap().verify(&data), Ok(()), "{kind}");
        if matches!(public.block, KeyBlock::Public(_)) {
            assert!(back_pub.private_key().is_err());
        }
    }
}

#[test]
fn malformed_key_files_are_refused() {
    let e = KeyFile::decode("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n");
    assert!(matches!(e, Err(KeyError::Format(_))));
    let e = KeyFile::decode("Kite-Key-Type: ecdsa-p999\n");
    assert!(matches!(e, Err(KeyError::UnknownKind { .. })));
    // A keyed kind without a block, and a block the kind cannot hold.
    assert!(KeyFile::decode("Kite-Key-Type: ecdsa-p256\n").is_err());
    let secret = KeyFile::public(
        &PrivateKey::generate(SignatureKind::HmacSha256).unwrap(),
        None,
    )
    .unwrap()
    .encode()
    .replace("hmac-sha256", "ed25519");
    assert!(KeyFile::decode(&secret).is_err());
    // Garbage DER under the right label.
    let junk =
        "Kite-Key-Type: ecdsa-p256\n-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n";
    assert!(matches!(
        KeyFile::decode(junk).unwrap().private_key(),
        Err(KeyError::Rejected { .. })
    ));
}
