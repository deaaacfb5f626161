use bytes::Bytes;
use sha2::{Digest, Sha256};

use super::*;
use crate::signature::{DigestSha256, KeyLocator, SignatureType};
use crate::testutil::{cat, tlv};
use crate::tlv::read_single;

fn name(uri: &str) -> Name {
    uri.parse().unwrap()
}

fn full() -> Interest {
    let mut i = Interest::new(name("/a/b/c"));
    i.can_be_prefix = true;
    i.must_be_fresh = true;
    i.forwarding_hint = vec![name("/hint/one"), name("/hint/two")];
    i.nonce = Some(Nonce::from(0xA1B2C3D4));
    i.lifetime = Some(1234);
    i.hop_limit = Some(7);
    i.app_params = Some(Bytes::from_static(b"params"));
    i
}

/// Interest element around `parts`.
fn interest(parts: &[&[u8]]) -> Bytes {
    Bytes::from(tlv(tlv_type::INTEREST, &cat(parts)))
}

fn name_ab() -> Vec<u8> {
    tlv(tlv_type::NAME, &cat(&[&tlv(8, b"a"), &tlv(8, b"b")]))
}

#[test]
fn every_field_round_trips_through_view_and_full_decode() {
    let i = full();
    let wire = i.encode();
    let v = InterestView::decode(wire.clone()).unwrap();
    assert!(v.can_be_prefix && v.must_be_fresh && v.has_params());
    assert_eq!(v.nonce, Some(Nonce::from(0xA1B2C3D4)));
    assert_eq!(v.lifetime_ms(), 1234);
    assert_eq!(v.hop_limit, Some(7));
    let hint: Vec<Name> = v.forwarding_hint().collect();
    assert_eq!(hint, i.forwarding_hint);
    // the params digest was appended to the name
    assert_eq!(v.name.len(), 4);
    assert_eq!(v.name.prefix(3), i.name);
    let back = Interest::decode(wire.clone()).unwrap();
    assert_eq!(back.app_params.as_deref(), Some(&b"params"[..]));
    assert_eq!(back.name, v.name);
    // re-encoding the decoded Interest gives the same octets
    assert_eq!(back.encode(), wire);
}

#[test]
fn minimal_interest_and_defaults() {
    let wire = Interest::new(name("/x")).encode();
    assert_eq!(&wire[..], &[5, 5, 7, 3, 8, 1, b'x']);
    let v = InterestView::decode(wire).unwrap();
    assert_eq!(v.lifetime_ms(), DEFAULT_LIFETIME_MS);
    assert!(!v.has_params() && v.nonce.is_none() && !v.has_forwarding_hint());
}

#[test]
fn view_shares_the_buffer() {
    let wire = full().encode();
    let v = InterestView::decode(wire.clone()).unwrap();
    assert_eq!(v.wire().as_ptr(), wire.as_ptr());
    let name_at = v.name.value().as_ptr() as usize - wire.as_ptr() as usize;
    assert!(name_at < wire.len());
}

#[test]
fn view_stops_before_application_parameters() {
    // A critical unknown element after ApplicationParameters: the view does not look there,
    // the full decode rejects it.
    let mut i = Interest::new(name("/p"));
    i.app_params = Some(Bytes::from_static(b"x"));
    let good = i.encode();
    let el = read_single(&good).unwrap();
    let mut value = el.value.to_vec();
    value.extend(tlv(99, b""));
    let bad = Bytes::from(tlv(tlv_type::INTEREST, &value));
    assert!(InterestView::decode(bad.clone()).is_ok());
    assert_eq!(
        Interest::decode(bad),
        Err(DecodeError::UnknownCritical { typ: 99 })
    );
}

#[test]
fn params_digest_is_verified() {
    let mut i = Interest::new(name("/p"));
    i.app_params = Some(Bytes::from_static(b"hello"));
    let wire = i.encode();
    let digest = Sha256::digest(tlv(tlv_type::APPLICATION_PARAMETERS, b"hello"));
    let decoded = Interest::decode(wire.clone()).unwrap();
    assert_eq!(decoded.name.last().unwrap().value(), digest.as_slice());
    assert_eq!(
        decoded.name.last().unwrap().typ(),
        tlv_type::PARAMETERS_SHA256_DIGEST_COMPONENT
    );
    // tamper with the parameters
    let mut bytes = wire.to_vec();
    let n = bytes.len();
    bytes[n - 1] ^= 1;
    assert_eq!(
        Interest::decode(Bytes::from(bytes)),
        Err(DecodeError::ParamsDigestMismatch)
    );
}

#[test]
fn params_digest_replaces_an_existing_one_in_place() {
    let mut i =
        Interest::new(Name::from_uri(&format!("/a/params-sha256={}/z", "00".repeat(32))).unwrap());
    i.app_params = Some(Bytes::from_static(b"q"));
    let back = Interest::decode(i.encode()).unwrap();
    assert_eq!(back.name.len(), 3);
    assert_eq!(back.name.get(2).unwrap().value(), b"z");
    assert_ne!(back.name.get(1).unwrap().value(), &[0; 32]);
}

#[test]
fn params_digest_placement_errors() {
    let digest = tlv(tlv_type::PARAMETERS_SHA256_DIGEST_COMPONENT, &[0; 32]);
    let params = tlv(tlv_type::APPLICATION_PARAMETERS, b"");
    // parameters without a digest component
    assert_eq!(
        InterestView::decode(interest(&[&name_ab(), &params])).unwrap_err(),
        DecodeError::ParamsDigestPlacement
    );
    // a digest component without parameters
    let n = tlv(tlv_type::NAME, &cat(&[&tlv(8, b"a"), &digest]));
    assert_eq!(
        InterestView::decode(interest(&[&n])).unwrap_err(),
        DecodeError::ParamsDigestPlacement
    );
    // two digest components
    let n = tlv(tlv_type::NAME, &cat(&[&digest, &digest]));
    assert_eq!(
        InterestView::decode(interest(&[&n, &params])).unwrap_err(),
        DecodeError::ParamsDigestPlacement
    );
}

#[test]
fn signed_interest_round_trips_and_signature_covers_the_right_octets() {
    let mut i = Interest::new(name("/localhost/nfd/rib/register"));
    i.nonce = Some(Nonce::from(1));
    let mut info = SignatureInfo::new(SignatureType::SHA256_WITH_ECDSA);
    info.nonce = Some(Bytes::from_static(&[9; 8]));
    info.time = Some(1_800_000_000_000);
    info.seq_num = Some(3);
    i.sig_info = Some(info);
    let wire = i.encode_signed(&DigestSha256).unwrap();
    let back = Interest::decode(wire.clone()).unwrap();
    let si = back.sig_info.as_ref().unwrap();
    assert_eq!(si.sig_type, SignatureType::DIGEST_SHA256);
    assert_eq!((si.time, si.seq_num), (Some(1_800_000_000_000), Some(3)));
    assert_eq!(back.app_params.as_deref(), Some(&b""[..]));
    let parts = Interest::signed_parts(&wire).unwrap().unwrap();
    let expect = Sha256::digest(parts.concat());
    assert_eq!(back.sig_value.as_deref(), Some(expect.as_slice()));
    // the signed portion starts with the name components, not the Name header
    assert_eq!(&parts[0][..], back.name.prefix_octets(4));
    assert_eq!(back.encode(), wire);
    assert!(Interest::signed_parts(&Interest::new(name("/u")).encode())
        .unwrap()
        .is_none());
}

#[test]
fn signer_key_locator_is_written() {
    struct Named;
    impl Signer for Named {
        fn signature_type(&self) -> SignatureType {
            SignatureType::HMAC_WITH_SHA256
        }
        fn key_locator(&self) -> Option<KeyLocator> {
            Some(KeyLocator::Name("/key".parse().unwrap()))
        }
        fn max_signature_len(&self) -> usize {
            40
        }
        fn sign(&self, _: &[&[u8]]) -> core::result::Result<crate::SignatureBytes, SignError> {
            Ok(crate::SignatureBytes::from_slice(&[7; 40]))
        }
    }
    let wire = Interest::new(name("/s")).encode_signed(&Named).unwrap();
    let back = Interest::decode(wire).unwrap();
    let si = back.sig_info.unwrap();
    assert_eq!(si.sig_type, SignatureType::HMAC_WITH_SHA256);
    assert_eq!(
        si.key_locator,
        Some(KeyLocator::Name("/key".parse().unwrap()))
    );
    assert_eq!(back.sig_value.unwrap().len(), 40);
}

#[test]
fn forwarding_hint_accepts_both_forms() {
    let pref = tlv(tlv_type::PREFERENCE, &[1]);
    let delegation = tlv(tlv_type::DELEGATION, &cat(&[&pref, &name_ab()]));
    let hint = tlv(tlv_type::FORWARDING_HINT, &cat(&[&delegation, &name_ab()]));
    let v = InterestView::decode(interest(&[&name_ab(), &hint])).unwrap();
    let names: Vec<String> = v.forwarding_hint().map(|n| n.to_uri()).collect();
    assert_eq!(names, ["/a/b", "/a/b"]);
}

#[test]
fn forwarding_hint_errors() {
    let empty = tlv(tlv_type::FORWARDING_HINT, b"");
    assert_eq!(
        InterestView::decode(interest(&[&name_ab(), &empty])).unwrap_err(),
        DecodeError::Missing {
            typ: tlv_type::NAME
        }
    );
    let wrong = tlv(tlv_type::FORWARDING_HINT, &tlv(8, b"x"));
    assert!(matches!(
        InterestView::decode(interest(&[&name_ab(), &wrong])).unwrap_err(),
        DecodeError::UnexpectedType { .. }
    ));
    let bad_name = tlv(
        tlv_type::FORWARDING_HINT,
        &tlv(tlv_type::NAME, &tlv(1, &[0; 3])),
    );
    assert_eq!(
        InterestView::decode(interest(&[&name_ab(), &bad_name])).unwrap_err(),
        DecodeError::InvalidLength { typ: 1, len: 3 }
    );
}

#[test]
fn malformed_interests_are_typed_errors() {
    let n = name_ab();
    let nonce = tlv(tlv_type::NONCE, &[1, 2, 3, 4]);
    let cases: Vec<(Bytes, DecodeError)> = vec![
        (Bytes::from_static(&[5]), DecodeError::Truncated),
        (
            Bytes::from_static(&[5, 10, 7, 0]),
            DecodeError::LengthExceedsBuffer {
                typ: 5,
                len: 10,
                available: 2,
            },
        ),
        (
            Bytes::from(cat(&[&[5, 253, 0, 5], &tlv(tlv_type::NAME, &tlv(8, b"a"))])),
            DecodeError::NonMinimalVarNumber,
        ),
        (
            interest(&[
                &n,
                &tlv(tlv_type::MUST_BE_FRESH, b""),
                &tlv(tlv_type::CAN_BE_PREFIX, b""),
            ]),
            DecodeError::OutOfOrder {
                typ: tlv_type::CAN_BE_PREFIX,
            },
        ),
        (
            interest(&[&n, &nonce, &nonce]),
            DecodeError::Duplicate {
                typ: tlv_type::NONCE,
            },
        ),
        (
            interest(&[&n, &tlv(tlv_type::NONCE, &[1, 2, 3])]),
            DecodeError::InvalidLength {
                typ: tlv_type::NONCE,
                len: 3,
            },
        ),
        (
            interest(&[&n, &tlv(tlv_type::HOP_LIMIT, &[1, 2])]),
            DecodeError::InvalidLength {
                typ: tlv_type::HOP_LIMIT,
                len: 2,
            },
        ),
        (
            interest(&[&n, &tlv(tlv_type::CAN_BE_PREFIX, b"x")]),
            DecodeError::InvalidLength {
                typ: tlv_type::CAN_BE_PREFIX,
                len: 1,
            },
        ),
        (
            interest(&[&n, &tlv(tlv_type::INTEREST_LIFETIME, &[0, 0, 1])]),
            DecodeError::InvalidNonNegInt {
                typ: tlv_type::INTEREST_LIFETIME,
                len: 3,
            },
        ),
        (
            interest(&[&n, &tlv(29, b"")]),
            DecodeError::UnknownCritical { typ: 29 },
        ),
        (
            interest(&[&n, &tlv(201, b"")]),
            DecodeError::UnknownCritical { typ: 201 },
        ),
        (
            interest(&[&tlv(tlv_type::NAME, b"")]),
            DecodeError::InvalidValue {
                typ: tlv_type::NAME,
                reason: "an Interest name needs at least one component",
            },
        ),
        (
            interest(&[&nonce, &n]),
            DecodeError::UnexpectedType {
                expected: tlv_type::NAME,
                actual: tlv_type::NONCE,
            },
        ),
        (
            interest(&[]),
            DecodeError::Missing {
                typ: tlv_type::NAME,
            },
        ),
        (
            interest(&[&n, &n]),
            DecodeError::Duplicate {
                typ: tlv_type::NAME,
            },
        ),
        (
            interest(&[&n, &tlv(tlv_type::INTEREST_SIGNATURE_INFO, &tlv(27, &[0]))]),
            DecodeError::Missing {
                typ: tlv_type::APPLICATION_PARAMETERS,
            },
        ),
        (
            Bytes::from(cat(&[&interest(&[&n]), &[0]])),
            DecodeError::TrailingBytes(1),
        ),
        (
            Bytes::from(tlv(tlv_type::DATA, &n)),
            DecodeError::UnexpectedType {
                expected: tlv_type::INTEREST,
                actual: tlv_type::DATA,
            },
        ),
    ];
    for (i, (wire, err)) in cases.into_iter().enumerate() {
        assert_eq!(
            InterestView::decode(wire.clone()).unwrap_err(),
            err,
            "case {i}"
        );
        assert_eq!(Interest::decode(wire).unwrap_err(), err, "case {i}");
    }
}

#[test]
fn unknown_non_critical_elements_are_skipped() {
    let wire = interest(&[&name_ab(), &tlv(200, b"zz"), &tlv(tlv_type::NONCE, &[0; 4])]);
    let v = InterestView::decode(wire).unwrap();
    assert_eq!(v.nonce, Some(Nonce([0; 4])));
}

#[test]
fn malformed_signed_parts_are_typed_errors() {
    let mut i = Interest::new(name("/s"));
    i.sig_info = Some(SignatureInfo::new(SignatureType::DIGEST_SHA256));
    let good = i.encode_signed(&DigestSha256).unwrap();
    let el = read_single(&good).unwrap();
    let mut r = el.children();
    let mut kept = Vec::new();
    while let Some(Ok(c)) = r.next_element() {
        if c.typ != tlv_type::INTEREST_SIGNATURE_VALUE {
            kept.extend_from_slice(&good[c.range()]);
        }
    }
    // SignatureInfo without SignatureValue (digest recomputed so only that is wrong)
    let mut j = Interest::decode(good.clone()).unwrap();
    j.sig_value = None;
    let wire = j.encode();
    assert_eq!(
        Interest::decode(wire).unwrap_err(),
        DecodeError::Missing {
            typ: tlv_type::INTEREST_SIGNATURE_VALUE
        }
    );
    // repeated ApplicationParameters
    let dup = Bytes::from(tlv(
        tlv_type::INTEREST,
        &cat(&[&kept, &tlv(tlv_type::APPLICATION_PARAMETERS, b"")]),
    ));
    assert!(matches!(
        Interest::decode(dup).unwrap_err(),
        DecodeError::Duplicate { .. } | DecodeError::OutOfOrder { .. }
    ));
}

#[test]
fn outgoing_reuses_patches_or_reencodes() {
    let mut i = Interest::new(name("/w/x"));
    i.nonce = Some(Nonce::from(1));
    i.hop_limit = Some(9);
    i.app_params = Some(Bytes::from_static(b"p"));
    let wire = i.encode();
    let v = InterestView::decode(wire.clone()).unwrap();
    // unchanged: the same octets, not a copy
    let same = v.outgoing(Nonce::from(1), Some(9)).encode();
    assert_eq!(same.as_ptr(), wire.as_ptr());
    // changed in place
    let patched = InterestView::decode(v.outgoing(Nonce::from(2), Some(8)).encode()).unwrap();
    assert_eq!(
        (patched.nonce, patched.hop_limit),
        (Some(Nonce::from(2)), Some(8))
    );
    assert_eq!(patched.name, v.name);
    assert!(
        Interest::decode(patched.wire().clone()).is_ok(),
        "parameters digest still valid"
    );
    // a HopLimit added to an Interest that had none: re-encoded
    let mut j = Interest::new(name("/w/y"));
    j.nonce = Some(Nonce::from(5));
    let v = InterestView::decode(j.encode()).unwrap();
    let added = InterestView::decode(v.outgoing(Nonce::from(5), Some(3)).encode()).unwrap();
    assert_eq!(added.hop_limit, Some(3));
    // and a nonce added to one without
    let v = InterestView::decode(Interest::new(name("/w/z")).encode()).unwrap();
    let with_nonce = InterestView::decode(v.outgoing(Nonce::from(6), None).encode()).unwrap();
    assert_eq!(with_nonce.nonce, Some(Nonce::from(6)));
    // a HopLimit removed: re-encoded without it
    let v = InterestView::decode(wire.clone()).unwrap();
    let removed = InterestView::decode(v.outgoing(Nonce::from(1), None).encode()).unwrap();
    assert_eq!(
        (removed.nonce, removed.hop_limit),
        (Some(Nonce::from(1)), None)
    );
}

#[test]
fn outgoing_patches_only_what_changed() {
    let mut i = Interest::new(name("/w/h"));
    i.nonce = Some(Nonce::from(7));
    i.hop_limit = Some(4);
    let wire = i.encode();
    let v = InterestView::decode(wire.clone()).unwrap();
    let out = v.outgoing(Nonce::from(7), Some(3));
    assert_eq!(out.name_octets().unwrap(), v.name.value());
    let sent = out.encode();
    assert_eq!(sent.len(), wire.len(), "changed in place, same length");
    let diff: Vec<usize> = (0..wire.len()).filter(|&k| sent[k] != wire[k]).collect();
    assert_eq!(diff.len(), 1, "only the HopLimit octet changes");
    assert_eq!(InterestView::decode(sent).unwrap().hop_limit, Some(3));
}
