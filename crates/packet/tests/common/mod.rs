//! proptest strategies for names and packets, shared by the round-trip properties and the
//! python-ndn interop test (which uses them to generate Kite-encoded vectors).
#![allow(dead_code)]

use bytes::Bytes;
use kite_packet::signature::ValidityPeriod;
use kite_packet::{
    tlv_type, CachePolicy, Component, ContentType, Data, DigestSha256, Interest, KeyLocator,
    LpHeader, LpPacket, NackReason, Name, Nonce, OwnedComponent, PitToken, SignatureInfo,
    SignatureType,
};
use proptest::collection::vec;
use proptest::prelude::*;

/// Number-valued components of the naming conventions.
pub const NUMBER_TYPES: [u64; 5] = [
    tlv_type::SEGMENT_NAME_COMPONENT,
    tlv_type::BYTE_OFFSET_NAME_COMPONENT,
    tlv_type::VERSION_NAME_COMPONENT,
    tlv_type::TIMESTAMP_NAME_COMPONENT,
    tlv_type::SEQUENCE_NUM_NAME_COMPONENT,
];

/// Shortest NonNegativeInteger octets of `n`.
pub fn nonneg(n: u64) -> Vec<u8> {
    let b = n.to_be_bytes();
    let keep = match n {
        0..=0xFF => 1,
        0x100..=0xFFFF => 2,
        0x1_0000..=0xFFFF_FFFF => 4,
        _ => 8,
    };
    b[8 - keep..].to_vec()
}

/// Values that exercise URI escaping: empty, periods only, printable, arbitrary octets.
fn generic_value() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        Just(Vec::new()),
        (1usize..5).prop_map(|n| vec![b'.'; n]),
        "[a-zA-Z0-9._~-]{1,12}".prop_map(String::into_bytes),
        vec(any::<u8>(), 1..16),
    ]
}

/// (type, value) of one component; `with_params_digest` admits ParametersSha256Digest.
pub fn component(with_params_digest: bool) -> impl Strategy<Value = (u64, Vec<u8>)> {
    let digest_types = if with_params_digest {
        vec![
            tlv_type::IMPLICIT_SHA256_DIGEST_COMPONENT,
            tlv_type::PARAMETERS_SHA256_DIGEST_COMPONENT,
        ]
    } else {
        vec![tlv_type::IMPLICIT_SHA256_DIGEST_COMPONENT]
    };
    prop_oneof![
        6 => generic_value().prop_map(|v| (tlv_type::GENERIC_NAME_COMPONENT, v)),
        1 => (prop::sample::select(digest_types), vec(any::<u8>(), 32..=32)),
        1 => "[a-z]{1,8}".prop_map(|s| (tlv_type::KEYWORD_NAME_COMPONENT, s.into_bytes())),
        3 => (prop::sample::select(NUMBER_TYPES.to_vec()), number())
            .prop_map(|(t, n)| (t, nonneg(n))),
        1 => (prop::sample::select(vec![9u64, 100, 252, 253, 1000, 65535]), generic_value()),
    ]
}

/// Numbers spread over every NonNegativeInteger width.
pub fn number() -> impl Strategy<Value = u64> {
    prop_oneof![
        0u64..=0xFF,
        0x100u64..=0xFFFF,
        0x1_0000u64..=0xFFFF_FFFF,
        any::<u64>()
    ]
}

/// A name of `len` components.
pub fn name(len: std::ops::Range<usize>, with_params_digest: bool) -> impl Strategy<Value = Name> {
    vec(component(with_params_digest), len).prop_map(|comps| {
        Name::from_components(comps.iter().map(|(t, v)| Component::new(*t, v).unwrap()))
    })
}

fn key_locator() -> impl Strategy<Value = Option<KeyLocator>> {
    prop_oneof![
        Just(None),
        name(1..4, false).prop_map(|n| Some(KeyLocator::Name(n))),
        vec(any::<u8>(), 32..=32).prop_map(|d| Some(KeyLocator::KeyDigest(Bytes::from(d)))),
    ]
}

fn timestamp() -> impl Strategy<Value = String> {
    (
        1970u32..2100,
        1u32..13,
        1u32..29,
        0u32..24,
        0u32..60,
        0u32..60,
    )
        .prop_map(|(y, mo, d, h, mi, s)| format!("{y:04}{mo:02}{d:02}T{h:02}{mi:02}{s:02}"))
}

/// SignatureInfo of a signed Interest (type is set by the signer).
pub fn interest_sig_info() -> impl Strategy<Value = SignatureInfo> {
    (
        proptest::option::of(vec(any::<u8>(), 1..16)),
        proptest::option::of(number()),
        proptest::option::of(number()),
    )
        .prop_map(|(nonce, time, seq)| {
            let mut s = SignatureInfo::new(SignatureType::DIGEST_SHA256);
            s.nonce = nonce.map(Bytes::from);
            s.time = time;
            s.seq_num = seq;
            s
        })
}

/// An Interest with any combination of fields, possibly signed (DigestSha256).
pub fn interest() -> impl Strategy<Value = (Interest, bool)> {
    (
        name(1..8, false),
        any::<(bool, bool)>(),
        vec(name(1..4, false), 0..3),
        proptest::option::of(any::<u32>()),
        proptest::option::of(number()),
        proptest::option::of(any::<u8>()),
        proptest::option::of(vec(any::<u8>(), 0..64)),
        proptest::option::of(interest_sig_info()),
    )
        .prop_map(|(name, (cbp, mbf), hint, nonce, life, hop, params, sig)| {
            let mut i = Interest::new(name);
            i.can_be_prefix = cbp;
            i.must_be_fresh = mbf;
            i.forwarding_hint = hint;
            i.nonce = nonce.map(Nonce::from);
            i.lifetime = life;
            i.hop_limit = hop;
            i.app_params = params.map(Bytes::from);
            let signed = sig.is_some();
            i.sig_info = sig;
            (i, signed)
        })
}

/// Encodes an Interest produced by [`interest`].
pub fn encode_interest(i: &Interest, signed: bool) -> Bytes {
    if signed {
        i.encode_signed(&DigestSha256).unwrap()
    } else {
        i.encode()
    }
}

/// A Data with any combination of fields and a random SignatureValue.
pub fn data() -> impl Strategy<Value = Data> {
    (
        name(0..8, true),
        proptest::option::of(prop::sample::select(vec![0u64, 1, 2, 3, 5, 1000])),
        proptest::option::of(number()),
        proptest::option::of(component(true)),
        proptest::option::of(vec(any::<u8>(), 0..2000)),
        (
            prop::sample::select(vec![0u64, 1, 3, 4, 5, 200]),
            key_locator(),
            proptest::option::of((timestamp(), timestamp())),
            vec(any::<u8>(), 0..80),
        ),
    )
        .prop_map(|(name, ct, fresh, fbi, content, (st, kl, validity, sig))| {
            let mut d = Data::new(name, Bytes::new());
            d.meta.content_type = ct.map(ContentType);
            d.meta.freshness_period = fresh;
            d.meta.final_block_id = fbi.map(|(t, v)| OwnedComponent::new(t, v).unwrap());
            d.content = content.map(Bytes::from);
            d.sig_info = SignatureInfo::new(SignatureType(st));
            d.sig_info.key_locator = kl;
            d.sig_info.validity = validity.and_then(|(a, b)| ValidityPeriod::new(&a, &b));
            d.sig_value = Bytes::from(sig);
            d
        })
}

/// An LpPacket with any combination of header fields around an Interest (or no fragment).
pub fn lp_packet() -> impl Strategy<Value = LpPacket> {
    (
        (
            proptest::option::of(any::<u64>()),
            proptest::option::of((0u64..10, 1u64..10)),
            proptest::option::of(vec(any::<u8>(), 1..=32)),
            proptest::option::of(prop::sample::select(vec![0u64, 50, 100, 150, 7])),
            proptest::option::of(number()),
            proptest::option::of(number()),
        ),
        (
            proptest::option::of(number()),
            proptest::option::of(number()),
            vec(any::<u64>(), 0..6),
            proptest::option::of(any::<u64>()),
            any::<bool>(),
            proptest::option::of(name(1..4, false)),
        ),
        proptest::option::of(interest()),
    )
        .prop_map(
            |((seq, frag, tok, nack, inface, nexthop), (cp, cm, acks, txseq, nd, pa), frag_pkt)| {
                let (frag_index, frag_count) = match frag {
                    Some((i, c)) => (Some(i % c), Some(c)),
                    None => (None, None),
                };
                let header = LpHeader {
                    sequence: seq,
                    frag_index,
                    frag_count,
                    pit_token: tok.map(|t| PitToken::new(&t).unwrap()),
                    nack: nack.map(NackReason),
                    incoming_face_id: inface,
                    next_hop_face_id: nexthop,
                    cache_policy: cp.map(CachePolicy),
                    congestion_mark: cm,
                    acks: acks.into_iter().collect(),
                    tx_sequence: txseq,
                    non_discovery: nd,
                    prefix_announcement: pa
                        .map(|n| Data::new(n, Bytes::new()).sign(&DigestSha256).unwrap()),
                };
                LpPacket {
                    header,
                    fragment: frag_pkt.map(|(i, s)| encode_interest(&i, s)),
                }
            },
        )
}
