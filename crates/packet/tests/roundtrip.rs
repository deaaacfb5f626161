//! Property tests: everything Kite encodes decodes to the same thing, and no byte string makes
//! a decoder panic.

mod common;

use bytes::Bytes;
use kite_packet::{
    tlv_type, Data, DataView, Interest, InterestView, LpPacket, Name, NetPacket, NetPacketView,
};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn names_round_trip_through_wire_and_uri(name in common::name(0..20, true)) {
        prop_assert_eq!(Name::decode(name.to_wire()).unwrap(), name.clone());
        prop_assert_eq!(Name::from_uri(&name.to_uri()).unwrap(), name.clone());
        for n in 0..=name.len() {
            let p = name.prefix(n);
            prop_assert!(p.is_prefix_of(&name));
            prop_assert_eq!(p.len(), n);
            prop_assert!(p <= name);
        }
    }

    #[test]
    fn name_order_is_componentwise(a in common::name(0..5, true), b in common::name(0..5, true)) {
        let ca: Vec<_> = a.iter().collect();
        let cb: Vec<_> = b.iter().collect();
        prop_assert_eq!(a.cmp(&b), ca.cmp(&cb));
        prop_assert_eq!(a == b, a.value() == b.value());
    }

    #[test]
    fn interests_round_trip((i, signed) in common::interest()) {
        let wire = common::encode_interest(&i, signed);
        let back = Interest::decode(wire.clone()).unwrap();
        let has_params = i.app_params.is_some() || signed;
        let expected_len = i.name.len() + usize::from(has_params);
        prop_assert_eq!(back.name.len(), expected_len);
        prop_assert!(i.name.is_prefix_of(&back.name));
        if has_params {
            prop_assert_eq!(back.name.last().unwrap().typ(), tlv_type::PARAMETERS_SHA256_DIGEST_COMPONENT);
        }
        prop_assert_eq!(back.can_be_prefix, i.can_be_prefix);
        prop_assert_eq!(back.must_be_fresh, i.must_be_fresh);
        prop_assert_eq!(&back.forwarding_hint, &i.forwarding_hint);
        prop_assert_eq!(back.nonce, i.nonce);
        prop_assert_eq!(back.lifetime, i.lifetime);
        prop_assert_eq!(back.hop_limit, i.hop_limit);
        let params = i.app_params.clone().or(if signed { Some(Bytes::new()) } else { None });
        prop_assert_eq!(&back.app_params, &params);
        prop_assert_eq!(back.sig_info.is_some(), signed);
        // the decoded Interest re-encodes to the same octets
        prop_assert_eq!(back.encode(), wire.clone());
        // the view agrees with the full decode
        let v = InterestView::decode(wire).unwrap();
        prop_assert_eq!(v.has_params(), has_params);
        prop_assert_eq!(v.name, back.name);
    }

    #[test]
    fn data_round_trip(d in common::data()) {
        let wire = d.encode();
        let back = Data::decode(wire.clone()).unwrap();
        prop_assert_eq!(&back, &d);
        prop_assert_eq!(back.encode(), wire.clone());
        let v = DataView::decode(wire).unwrap();
        prop_assert_eq!(&v.name, &d.name);
        prop_assert_eq!(&v.meta, &d.meta);
    }

    #[test]
    fn lp_packets_round_trip(p in common::lp_packet()) {
        let wire = p.encode();
        prop_assert_eq!(LpPacket::decode(wire.clone()).unwrap(), p.clone());
        let frag_len = p.fragment.as_ref().map(Bytes::len);
        let mut head = Vec::new();
        p.header.encode_header(frag_len, &mut head);
        prop_assert_eq!(head.len(), p.header.header_len(frag_len));
        prop_assert_eq!(&wire[..head.len()], &head[..]);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        exercise(Bytes::from(bytes));
    }

    #[test]
    fn corrupted_packets_never_panic(
        (i, signed) in common::interest(),
        d in common::data(),
        flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
        cut in any::<prop::sample::Index>(),
    ) {
        for wire in [common::encode_interest(&i, signed), d.encode()] {
            let mut v = wire.to_vec();
            for (at, x) in &flips {
                let k = at.index(v.len());
                v[k] ^= x;
            }
            exercise(Bytes::from(v.clone()));
            exercise(Bytes::from(v[..cut.index(v.len())].to_vec()));
        }
    }
}

/// Runs every decoder over `b`; only panics matter, errors are expected.
fn exercise(b: Bytes) {
    let _ = Name::decode(b.clone());
    let _ = InterestView::decode(b.clone()).map(Interest::from_view);
    let _ = DataView::decode(b.clone()).map(Data::from_view);
    let _ = NetPacketView::decode(b.clone());
    let _ = NetPacket::decode_frame(b.clone());
    if let Ok(lp) = LpPacket::decode(b.clone()) {
        let _ = lp.encode();
    }
    let _ = Interest::signed_parts(&b);
    if let Ok(s) = std::str::from_utf8(&b) {
        let _ = Name::from_uri(s);
    }
}
