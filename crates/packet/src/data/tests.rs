use bytes::Bytes;
use sha2::{Digest, Sha256};

use super::*;
use crate::signature::{DigestSha256, KeyLocator, ValidityPeriod};
use crate::testutil::{cat, tlv};

fn full() -> Data {
    let mut d = Data::new("/a/b/v=3/seg=0".parse().unwrap(), &b"hello world"[..]);
    d.meta.content_type = Some(ContentType::KEY);
    d.meta.freshness_period = Some(10_000);
    d.meta.final_block_id = Some(OwnedComponent::segment(9));
    d.sig_info.validity = ValidityPeriod::new("20260101T000000", "20270101T000000");
    d
}

fn data(parts: &[&[u8]]) -> Bytes {
    Bytes::from(tlv(tlv_type::DATA, &cat(parts)))
}

fn name_a() -> Vec<u8> {
    tlv(tlv_type::NAME, &tlv(8, b"a"))
}

fn sig() -> Vec<u8> {
    cat(&[
        &tlv(
            tlv_type::SIGNATURE_INFO,
            &tlv(tlv_type::SIGNATURE_TYPE, &[0]),
        ),
        &tlv(tlv_type::SIGNATURE_VALUE, &[0; 32]),
    ])
}

#[test]
fn every_field_round_trips() {
    let d = full();
    let wire = d.sign(&DigestSha256).unwrap();
    let back = Data::decode(wire.clone()).unwrap();
    assert_eq!(back.name, d.name);
    assert_eq!(back.meta, d.meta);
    assert_eq!(back.content, d.content);
    assert_eq!(back.sig_info.sig_type, SignatureType::DIGEST_SHA256);
    assert_eq!(back.sig_info.validity, d.sig_info.validity);
    assert_eq!(back.encode(), wire);
    // the DigestSha256 value is the digest of Name through SignatureInfo
    let portion = back.signed_portion().unwrap();
    assert_eq!(&back.sig_value[..], Sha256::digest(&portion).as_slice());
    assert_eq!(
        &portion[..back.name.encoded_len()],
        &back.name.to_wire()[..]
    );
}

#[test]
fn sign_exactly_fills_its_buffer() {
    let wire = full().sign(&DigestSha256).unwrap();
    // one allocation sized for the packet: no slack beyond the fixed headroom
    let d = Data::decode(wire.clone()).unwrap();
    assert_eq!(d.encode().len(), wire.len());
}

#[test]
fn key_locator_variants() {
    let mut d = full();
    d.sig_info.key_locator = Some(KeyLocator::KeyDigest(Bytes::from_static(&[1; 32])));
    let back = Data::decode(d.encode()).unwrap();
    assert_eq!(back.sig_info.key_locator, d.sig_info.key_locator);
}

#[test]
fn absent_and_empty_content_differ() {
    let mut d = Data::new("/c".parse().unwrap(), Bytes::new());
    let empty = Data::decode(d.sign(&DigestSha256).unwrap()).unwrap();
    assert_eq!(empty.content, Some(Bytes::new()));
    d.content = None;
    let absent = Data::decode(d.sign(&DigestSha256).unwrap()).unwrap();
    assert_eq!(absent.content, None);
    assert_eq!(absent.meta, MetaInfo::default());
}

#[test]
fn view_reads_meta_and_stops_at_content() {
    let wire = full().sign(&DigestSha256).unwrap();
    let v = DataView::decode(wire.clone()).unwrap();
    assert_eq!(v.freshness_ms(), 10_000);
    assert_eq!(
        v.meta
            .final_block_id
            .as_ref()
            .unwrap()
            .as_ref()
            .as_segment(),
        Some(9)
    );
    assert_eq!(wire[v.content_offset()], tlv_type::CONTENT as u8);
    assert_eq!(v.implicit_digest(), <[u8; 32]>::from(Sha256::digest(&wire)));
    assert_eq!(
        Data::decode(wire).unwrap().implicit_digest(),
        v.implicit_digest()
    );
    // Content and signature are not examined by the view
    let bad = data(&[&name_a(), &tlv(tlv_type::CONTENT, b"x"), &tlv(99, b"")]);
    assert!(DataView::decode(bad.clone()).is_ok());
    assert_eq!(
        Data::decode(bad).unwrap_err(),
        DecodeError::UnknownCritical { typ: 99 }
    );
    // without Content, the offset points at SignatureInfo
    let v = DataView::decode(data(&[&name_a(), &sig()])).unwrap();
    assert_eq!(v.wire()[v.content_offset()], tlv_type::SIGNATURE_INFO as u8);
    assert_eq!(v.freshness_ms(), 0);
}

#[test]
fn empty_name_is_allowed_for_data() {
    let d = Data::decode(data(&[&tlv(tlv_type::NAME, b""), &sig()])).unwrap();
    assert!(d.name.is_empty());
}

#[test]
fn malformed_data_are_typed_errors() {
    let content = tlv(tlv_type::CONTENT, b"c");
    let meta = tlv(tlv_type::META_INFO, &tlv(tlv_type::FRESHNESS_PERIOD, &[1]));
    let si = tlv(
        tlv_type::SIGNATURE_INFO,
        &tlv(tlv_type::SIGNATURE_TYPE, &[0]),
    );
    let sv = tlv(tlv_type::SIGNATURE_VALUE, b"");
    let cases: Vec<(Bytes, DecodeError)> = vec![
        (
            data(&[&name_a(), &content]),
            DecodeError::Missing {
                typ: tlv_type::SIGNATURE_INFO,
            },
        ),
        (
            data(&[&name_a(), &si]),
            DecodeError::Missing {
                typ: tlv_type::SIGNATURE_VALUE,
            },
        ),
        (
            data(&[&name_a(), &content, &meta, &si, &sv]),
            DecodeError::OutOfOrder {
                typ: tlv_type::META_INFO,
            },
        ),
        (
            data(&[&name_a(), &content, &content, &si, &sv]),
            DecodeError::Duplicate {
                typ: tlv_type::CONTENT,
            },
        ),
        (
            data(&[&name_a(), &meta, &meta, &si, &sv]),
            DecodeError::Duplicate {
                typ: tlv_type::META_INFO,
            },
        ),
        (
            data(&[&name_a(), &sv, &si]),
            DecodeError::OutOfOrder {
                typ: tlv_type::SIGNATURE_INFO,
            },
        ),
        (
            data(&[&content, &name_a()]),
            DecodeError::UnexpectedType {
                expected: tlv_type::NAME,
                actual: tlv_type::CONTENT,
            },
        ),
        (
            data(&[&name_a(), &si, &sv, &name_a()]),
            DecodeError::OutOfOrder {
                typ: tlv_type::NAME,
            },
        ),
        (
            data(&[
                &name_a(),
                &tlv(
                    tlv_type::META_INFO,
                    &cat(&[
                        &tlv(tlv_type::FRESHNESS_PERIOD, &[1]),
                        &tlv(tlv_type::CONTENT_TYPE, &[1]),
                    ]),
                ),
                &si,
                &sv,
            ]),
            DecodeError::OutOfOrder {
                typ: tlv_type::CONTENT_TYPE,
            },
        ),
        (
            data(&[
                &name_a(),
                &tlv(
                    tlv_type::META_INFO,
                    &tlv(tlv_type::FRESHNESS_PERIOD, &[0; 3]),
                ),
                &si,
                &sv,
            ]),
            DecodeError::InvalidNonNegInt {
                typ: tlv_type::FRESHNESS_PERIOD,
                len: 3,
            },
        ),
        (
            data(&[
                &name_a(),
                &tlv(tlv_type::META_INFO, &tlv(31, b"")),
                &si,
                &sv,
            ]),
            DecodeError::UnknownCritical { typ: 31 },
        ),
        (
            data(&[
                &name_a(),
                &tlv(
                    tlv_type::META_INFO,
                    &tlv(
                        tlv_type::FINAL_BLOCK_ID,
                        &cat(&[&tlv(8, b"a"), &tlv(8, b"b")]),
                    ),
                ),
                &si,
                &sv,
            ]),
            DecodeError::TrailingBytes(3),
        ),
        (
            data(&[
                &name_a(),
                &tlv(tlv_type::META_INFO, &tlv(tlv_type::FINAL_BLOCK_ID, b"")),
                &si,
                &sv,
            ]),
            DecodeError::Truncated,
        ),
        (
            data(&[&name_a(), &tlv(tlv_type::SIGNATURE_INFO, b""), &sv]),
            DecodeError::Missing {
                typ: tlv_type::SIGNATURE_TYPE,
            },
        ),
        (
            Bytes::from_static(&[6, 2, 7, 1]),
            DecodeError::LengthExceedsBuffer {
                typ: 7,
                len: 1,
                available: 0,
            },
        ),
    ];
    for (i, (wire, err)) in cases.into_iter().enumerate() {
        assert_eq!(Data::decode(wire).unwrap_err(), err, "case {i}");
    }
}

#[test]
fn unknown_non_critical_elements_are_skipped() {
    let d = Data::decode(data(&[&name_a(), &tlv(100, b"x"), &sig(), &tlv(102, b"")])).unwrap();
    assert_eq!(d.name.to_uri(), "/a");
}

#[test]
fn header_name_and_the_octets_after_the_name_are_the_whole_data() {
    let mut d = Data::new("/a/b/c".parse().unwrap(), vec![0x5A; 3000]);
    d.meta.freshness_period = Some(0);
    d.sig_info = SignatureInfo::new(SignatureType::DIGEST_SHA256);
    d.sig_value = Bytes::from(vec![7u8; 32]);
    let tail = d.encode_after_name();
    let mut whole = Vec::new();
    put_header(
        &mut whole,
        tlv_type::DATA,
        d.name.encoded_len() + tail.len(),
    );
    d.name.encode(&mut whole);
    whole.extend_from_slice(&tail);
    assert_eq!(whole, d.encode());
    let root = Data {
        name: Name::root(),
        ..d
    };
    assert_eq!(root.encode_after_name(), tail, "the same for any name");
}
