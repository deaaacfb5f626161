use bytes::Bytes;
use smallvec::smallvec;

use super::*;
use crate::interest::Interest;
use crate::nack::Nack;
use crate::packet::{NetPacket, NetPacketView};
use crate::testutil::{cat, tlv};

fn interest_wire() -> Bytes {
    Interest::new("/i".parse().unwrap()).encode()
}

fn lp(parts: &[&[u8]]) -> Bytes {
    Bytes::from(tlv(tlv_type::LP_PACKET, &cat(parts)))
}

fn full_header() -> LpHeader {
    LpHeader {
        sequence: Some(0x0102_0304_0506_0708),
        frag_index: Some(1),
        frag_count: Some(3),
        pit_token: PitToken::new(&[0xAB; 32]),
        nack: Some(NackReason::NO_ROUTE),
        incoming_face_id: Some(300),
        next_hop_face_id: Some(257),
        cache_policy: Some(CachePolicy::NO_CACHE),
        congestion_mark: Some(1),
        acks: smallvec![1, 2, 3, 4, 5],
        tx_sequence: Some(99),
        non_discovery: true,
        prefix_announcement: Some(Bytes::from(tlv(tlv_type::DATA, &tlv(tlv_type::NAME, b"")))),
    }
}

#[test]
fn every_field_round_trips() {
    let pkt = LpPacket {
        header: full_header(),
        fragment: Some(interest_wire()),
    };
    let wire = pkt.encode();
    assert_eq!(LpPacket::decode(wire.clone()).unwrap(), pkt);
    assert!(pkt.is_fragmented());
}

#[test]
fn header_written_apart_from_the_fragment_equals_the_whole() {
    let pkt = LpPacket {
        header: full_header(),
        fragment: Some(interest_wire()),
    };
    let frag = pkt.fragment.clone().unwrap();
    let mut head = Vec::new();
    pkt.header.encode_header(Some(frag.len()), &mut head);
    assert_eq!(head.len(), pkt.header.header_len(Some(frag.len())));
    assert_eq!(cat(&[&head, &frag]), pkt.encode().to_vec());
    // and for a header of only a PIT token, around a large fragment
    let h = LpHeader {
        pit_token: Some(PitToken::from_u64(7)),
        ..LpHeader::default()
    };
    let big = Bytes::from(vec![0u8; 9000]);
    let mut head = Vec::new();
    h.encode_header(Some(big.len()), &mut head);
    assert_eq!(head.len(), h.header_len(Some(big.len())));
    let whole = LpPacket {
        header: h,
        fragment: Some(big.clone()),
    }
    .encode();
    assert_eq!(&whole[..head.len()], &head[..]);
}

#[test]
fn idle_packet_without_fragment() {
    let pkt = LpPacket {
        header: LpHeader {
            acks: smallvec![5],
            ..LpHeader::default()
        },
        fragment: None,
    };
    assert_eq!(LpPacket::decode(pkt.encode()).unwrap(), pkt);
}

#[test]
fn bare_packets_are_valid_frames() {
    let i = interest_wire();
    let f = LpPacket::decode(i.clone()).unwrap();
    assert!(f.header.is_empty());
    assert_eq!(f.fragment, Some(i.clone()));
    let (h, p) = NetPacket::decode_frame(i).unwrap();
    assert!(h.is_empty());
    assert!(matches!(p, NetPacket::Interest(_)));
}

#[test]
fn pit_token_forms() {
    assert!(PitToken::new(&[]).is_none());
    assert!(PitToken::new(&[0; 33]).is_none());
    let t = PitToken::from_u64(0xDEAD);
    assert_eq!(t.as_u64(), Some(0xDEAD));
    assert_eq!(PitToken::new(&[1, 2]).unwrap().as_u64(), None);
    assert_eq!(
        format!("{:?}", PitToken::new(&[1, 0xab]).unwrap()),
        "PitToken(01ab)"
    );
}

#[test]
fn nack_round_trip_and_reasonless_nack() {
    let nack = Nack {
        reason: NackReason::DUPLICATE,
        interest: Interest::decode(interest_wire()).unwrap(),
    };
    let wire = nack.encode();
    assert_eq!(Nack::decode(wire.clone()).unwrap(), nack);
    let (_, p) = NetPacket::decode_frame(wire).unwrap();
    assert_eq!(p, NetPacket::Nack(nack));
    let bare = lp(&[
        &tlv(tlv_type::NACK, b""),
        &tlv(tlv_type::FRAGMENT, &interest_wire()),
    ]);
    assert_eq!(Nack::decode(bare).unwrap().reason, NackReason::NONE);
    let unknown = Nack::encode_for(NackReason(7), interest_wire());
    assert_eq!(Nack::decode(unknown).unwrap().reason, NackReason(7));
}

#[test]
fn nack_errors() {
    let data = Bytes::from(tlv(tlv_type::DATA, &tlv(tlv_type::NAME, b"")));
    let not_interest = lp(&[&tlv(tlv_type::NACK, b""), &tlv(tlv_type::FRAGMENT, &data)]);
    assert!(Nack::decode(not_interest).is_err());
    let no_fragment = lp(&[&tlv(tlv_type::NACK, b"")]);
    assert_eq!(
        Nack::decode(no_fragment).unwrap_err(),
        DecodeError::Missing {
            typ: tlv_type::FRAGMENT
        }
    );
    assert_eq!(
        Nack::decode(interest_wire()).unwrap_err(),
        DecodeError::Missing {
            typ: tlv_type::NACK
        }
    );
}

#[test]
fn unknown_fields_follow_the_ignore_rule() {
    let frag = tlv(tlv_type::FRAGMENT, &interest_wire());
    // 804: in the reserved range with low bits 00: ignored
    assert!(LpPacket::decode(lp(&[&tlv(804, b"x"), &frag])).is_ok());
    assert!(LpPacket::decode(lp(&[&tlv(956, b"x"), &frag])).is_ok());
    for typ in [805u64, 806, 960, 796, 120] {
        assert_eq!(
            LpPacket::decode(lp(&[&tlv(typ, b"x"), &frag])).unwrap_err(),
            DecodeError::UnknownCritical { typ },
            "type {typ}"
        );
    }
}

#[test]
fn malformed_frames_are_typed_errors() {
    let frag = tlv(tlv_type::FRAGMENT, &interest_wire());
    let seq = tlv(tlv_type::SEQUENCE, &[0; 8]);
    let tok = tlv(tlv_type::PIT_TOKEN, &[1; 4]);
    let cases: Vec<(Bytes, DecodeError)> = vec![
        (
            lp(&[&tok, &seq, &frag]),
            DecodeError::OutOfOrder {
                typ: tlv_type::SEQUENCE,
            },
        ),
        (
            lp(&[&seq, &seq, &frag]),
            DecodeError::Duplicate {
                typ: tlv_type::SEQUENCE,
            },
        ),
        (
            lp(&[&frag, &seq]),
            DecodeError::OutOfOrder {
                typ: tlv_type::SEQUENCE,
            },
        ),
        (
            lp(&[&frag, &frag]),
            DecodeError::OutOfOrder {
                typ: tlv_type::FRAGMENT,
            },
        ),
        (
            lp(&[
                &tlv(tlv_type::FRAG_INDEX, &[3]),
                &tlv(tlv_type::FRAG_COUNT, &[3]),
                &frag,
            ]),
            DecodeError::InvalidValue {
                typ: tlv_type::FRAG_INDEX,
                reason: "FragIndex must be below a non-zero FragCount",
            },
        ),
        (
            lp(&[&tlv(tlv_type::FRAG_COUNT, &[0]), &frag]),
            DecodeError::InvalidValue {
                typ: tlv_type::FRAG_INDEX,
                reason: "FragIndex must be below a non-zero FragCount",
            },
        ),
        (
            lp(&[&tlv(tlv_type::FRAG_INDEX, &[1]), &frag]),
            DecodeError::InvalidValue {
                typ: tlv_type::FRAG_INDEX,
                reason: "FragIndex must be below a non-zero FragCount",
            },
        ),
        (
            lp(&[&tlv(tlv_type::PIT_TOKEN, b""), &frag]),
            DecodeError::InvalidLength {
                typ: tlv_type::PIT_TOKEN,
                len: 0,
            },
        ),
        (
            lp(&[&tlv(tlv_type::PIT_TOKEN, &[0; 33]), &frag]),
            DecodeError::InvalidLength {
                typ: tlv_type::PIT_TOKEN,
                len: 33,
            },
        ),
        (
            lp(&[&tlv(tlv_type::SEQUENCE, &[0; 3]), &frag]),
            DecodeError::InvalidNonNegInt {
                typ: tlv_type::SEQUENCE,
                len: 3,
            },
        ),
        (
            lp(&[&tlv(tlv_type::NON_DISCOVERY, b"x"), &frag]),
            DecodeError::InvalidLength {
                typ: tlv_type::NON_DISCOVERY,
                len: 1,
            },
        ),
        (
            lp(&[&tlv(tlv_type::CACHE_POLICY, b""), &frag]),
            DecodeError::Missing {
                typ: tlv_type::CACHE_POLICY_TYPE,
            },
        ),
        (
            lp(&[
                &tlv(tlv_type::NACK, &tlv(tlv_type::NACK_REASON, &[0; 3])),
                &frag,
            ]),
            DecodeError::InvalidNonNegInt {
                typ: tlv_type::NACK_REASON,
                len: 3,
            },
        ),
        (
            lp(&[
                &tlv(tlv_type::PREFIX_ANNOUNCEMENT, &tlv(tlv_type::INTEREST, b"")),
                &frag,
            ]),
            DecodeError::UnexpectedType {
                expected: tlv_type::DATA,
                actual: tlv_type::INTEREST,
            },
        ),
        (
            lp(&[&tlv(tlv_type::FRAGMENT, b"")]),
            DecodeError::InvalidLength {
                typ: tlv_type::FRAGMENT,
                len: 0,
            },
        ),
        (
            Bytes::from(tlv(99, b"")),
            DecodeError::UnexpectedType {
                expected: tlv_type::LP_PACKET,
                actual: 99,
            },
        ),
        (Bytes::new(), DecodeError::Truncated),
    ];
    for (i, (wire, err)) in cases.into_iter().enumerate() {
        assert_eq!(LpPacket::decode(wire).unwrap_err(), err, "case {i}");
    }
}

#[test]
fn fragments_are_not_decoded_as_packets() {
    let pkt = LpPacket {
        header: LpHeader {
            frag_index: Some(0),
            frag_count: Some(2),
            sequence: Some(1),
            ..LpHeader::default()
        },
        fragment: Some(interest_wire().slice(..3)),
    };
    assert!(NetPacket::decode_frame(pkt.encode()).is_err());
}

#[test]
fn net_packet_view_dispatches_on_type() {
    assert!(matches!(
        NetPacketView::decode(interest_wire()).unwrap(),
        NetPacketView::Interest(_)
    ));
    let d = crate::Data::new("/d".parse().unwrap(), &b"x"[..])
        .sign(&crate::DigestSha256)
        .unwrap();
    assert!(matches!(
        NetPacketView::decode(d).unwrap(),
        NetPacketView::Data(_)
    ));
    assert!(NetPacketView::decode(Bytes::from(tlv(tlv_type::LP_PACKET, b""))).is_err());
}

/// The general decoder alone, for comparing with the token-only fast path.
fn decode_general(frame: &Bytes) -> Result<LpPacket> {
    let outer = read_single(frame)?;
    LpPacket::decode_fields(frame, outer.children())
}

#[test]
fn token_only_frames_decode_as_the_general_decoder_does() {
    for token_len in [1, 6, 8, 32] {
        for frag_len in [1, 100, 252, 253, 300, 65535] {
            let fragment = Bytes::from((0..frag_len).map(|i| i as u8).collect::<Vec<_>>());
            let frame = LpPacket {
                header: LpHeader {
                    pit_token: PitToken::new(&vec![0xC5; token_len]),
                    ..LpHeader::default()
                },
                fragment: Some(fragment.clone()),
            }
            .encode();
            let decoded = LpPacket::decode(frame.clone()).unwrap();
            assert_eq!(decoded.fragment.as_ref(), Some(&fragment));
            assert_eq!(decoded, decode_general(&frame).unwrap());
            // Every truncation and every one-octet change of the value decodes (or fails)
            // exactly as the general decoder says.
            if frag_len > 300 {
                continue;
            }
            let head = read_single(&frame).unwrap().value_start;
            let value = frame.slice(head..);
            for cut in 0..value.len() {
                let f = Bytes::from(tlv(tlv_type::LP_PACKET, &value[..cut]));
                assert_eq!(LpPacket::decode(f.clone()), decode_general(&f), "cut {cut}");
            }
            for at in 0..value.len().min(48) {
                for x in [0x00, 0x01, 0x21, 0x50, 0x62, 0xFD, 0xFF] {
                    let mut v = value.to_vec();
                    v[at] = x;
                    let f = Bytes::from(tlv(tlv_type::LP_PACKET, &v));
                    assert_eq!(LpPacket::decode(f.clone()), decode_general(&f), "{at}={x}");
                }
            }
        }
    }
    // A fragment length in three octets that fits in one is left to the general decoder.
    let f = lp(&[
        &tlv(tlv_type::PIT_TOKEN, &[1]),
        &[0x50, 0xFD, 0x00, 0x01, 0x07],
    ]);
    assert_eq!(LpPacket::decode(f.clone()), decode_general(&f));
}

#[test]
fn put_framed_wraps_only_when_a_field_is_set() {
    let packet = [0x05, 0x03, 0x07, 0x01, 0x08];
    let mut bare = Vec::new();
    LpHeader::default().put_framed(&packet, &mut bare);
    assert_eq!(bare, packet, "no field: the packet travels bare");

    let header = LpHeader {
        pit_token: Some(PitToken::from_u64(9)),
        ..LpHeader::default()
    };
    let mut framed = vec![0xAA];
    header.put_framed(&packet, &mut framed);
    assert_eq!(framed[0], 0xAA, "appended after what was there");
    let lp = LpPacket::decode(Bytes::copy_from_slice(&framed[1..])).unwrap();
    assert_eq!(lp.header, header);
    assert_eq!(lp.fragment.as_deref(), Some(&packet[..]));
}

#[test]
fn peel_hands_bare_and_token_only_frames_on_without_a_header() {
    let i = interest_wire();
    assert_eq!(
        LpPacket::peel(i.clone()).unwrap(),
        Peeled::Packet(None, i.clone())
    );
    let token = PitToken::from_u64(7);
    let framed = LpPacket {
        header: LpHeader {
            pit_token: Some(token),
            ..LpHeader::default()
        },
        fragment: Some(i.clone()),
    }
    .encode();
    assert_eq!(
        LpPacket::peel(framed).unwrap(),
        Peeled::Packet(Some(token), i.clone())
    );
    let marked = LpPacket {
        header: LpHeader {
            congestion_mark: Some(1),
            ..LpHeader::default()
        },
        fragment: Some(i),
    }
    .encode();
    assert_eq!(LpPacket::peel(marked.clone()).unwrap(), Peeled::Lp(marked));
    let name_alone = Bytes::from(tlv(tlv_type::NAME, b""));
    assert_eq!(
        LpPacket::peel(name_alone.clone()).unwrap_err(),
        LpPacket::decode(name_alone).unwrap_err()
    );
}
