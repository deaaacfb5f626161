//! NDNLPv2 LpReliability between two link services over a simulated link that loses,
//! duplicates and reorders frames. A module of its own, beside `reliability`: the link
//! service uses the reliability module, so the reliability module's tests may not use the
//! link service.

use std::time::{Duration, Instant};

use bytes::Bytes;

use crate::link_service::{LinkService, Received, RxPacket};
use crate::queue::{OutFrame, OutQueue};
use crate::reliability::*;
use kite_link::framing::MAX_NDN_PACKET_SIZE;
use kite_link::reassembly::{Endpoint, ReassemblyLimits};
use kite_link::FaceCounters;
use kite_link::{FaceId, PacketKind};
use kite_packet::{Data, LpHeader, LpPacket, Name, PitToken};

fn data(name: &str, size: usize) -> Bytes {
    Data::new(name.parse::<Name>().unwrap(), vec![7u8; size]).encode()
}

/// One end of a simulated link: a link service with reliability on, its output queue and
/// counters, and the packets it delivered.
struct End {
    link: LinkService,
    q: OutQueue,
    c: FaceCounters,
    got: Vec<Received>,
}

impl End {
    fn new(mtu: usize, limits: ReliabilityLimits) -> Self {
        let mut link = LinkService::new(
            Some(mtu),
            Some(ReassemblyLimits::default()),
            MAX_NDN_PACKET_SIZE,
        );
        link.set_reliability(Some(limits));
        End {
            link,
            q: OutQueue::new(4096),
            c: FaceCounters::default(),
            got: Vec::new(),
        }
    }

    fn send(&mut self, packet: Bytes, now: Instant) -> bool {
        let h = LpHeader {
            pit_token: Some(PitToken::from_u64(1)),
            ..LpHeader::default()
        };
        let mut head = Vec::new();
        h.encode_header(Some(packet.len()), &mut head);
        let (link, c, q) = (&mut self.link, &mut self.c, &mut self.q);
        link.send_at(PacketKind::Data, &head, packet, now, c, q)
    }

    /// Takes the frames queued for the wire.
    fn wire(&mut self) -> Vec<Bytes> {
        let (a, b) = self.q.frames();
        let frames = a.iter().chain(b).map(OutFrame::to_bytes).collect();
        self.q.clear();
        frames
    }

    fn receive(&mut self, frame: Bytes, now: Instant) {
        let (link, c, got) = (&mut self.link, &mut self.c, &mut self.got);
        link.receive(FaceId(300), Endpoint::Peer, frame, 0, now, c, got);
    }

    fn step(&mut self, now: Instant) {
        self.link.step_reliability(now, &mut self.c, &mut self.q);
    }

    fn rel(&self) -> &Reliability {
        self.link.reliability().unwrap()
    }

    fn names(&self) -> Vec<String> {
        self.got
            .iter()
            .map(|r| match &r.packet {
                RxPacket::Data(d) => d.name.to_string(),
                other => panic!("{other:?}"),
            })
            .collect()
    }
}

#[test]
fn frames_carry_tx_sequence_and_acks_come_back_alone_after_the_delay() {
    let t = Instant::now();
    let mut a = End::new(1500, ReliabilityLimits::default());
    let mut b = End::new(1500, ReliabilityLimits::default());
    assert!(a.send(data("/a", 4000), t));
    let frames = a.wire();
    assert_eq!(frames.len(), 3, "fragmented to the MTU");
    for (i, f) in frames.iter().enumerate() {
        assert!(f.len() <= 1500);
        let lp = LpPacket::decode(f.clone()).unwrap();
        assert_eq!(lp.header.tx_sequence, Some(i as u64));
        assert_eq!(lp.header.frag_index, Some(i as u64));
        assert_eq!(lp.header.pit_token.is_some(), i == 0);
        b.receive(f.clone(), t);
    }
    assert_eq!(b.names(), ["/a"]);
    assert_eq!(a.rel().unacked_frames(), 3);
    b.step(t);
    assert!(b.wire().is_empty(), "Acks wait for a frame to ride on");
    b.step(t + ACK_DELAY);
    let acks = b.wire();
    assert_eq!(acks.len(), 1);
    let lp = LpPacket::decode(acks[0].clone()).unwrap();
    assert_eq!((lp.fragment, &lp.header.acks[..]), (None, &[0, 1, 2][..]));
    a.receive(acks[0].clone(), t + ACK_DELAY);
    assert_eq!((a.rel().unacked_frames(), a.rel().in_flight()), (0, 0));
    assert_eq!((a.c.n_lp_acks_received, b.c.n_lp_acks_sent), (3, 3));
    assert!(
        a.got.is_empty(),
        "an LpPacket of Acks alone delivers nothing"
    );
    assert_eq!(a.rel().due(), None);
}

#[test]
fn acks_ride_on_outgoing_frames() {
    let t = Instant::now();
    let mut a = End::new(8800, ReliabilityLimits::default());
    let mut b = End::new(8800, ReliabilityLimits::default());
    a.send(data("/a", 100), t);
    b.receive(a.wire().remove(0), t);
    b.send(data("/b", 100), t);
    let f = b.wire().remove(0);
    assert_eq!(LpPacket::decode(f.clone()).unwrap().header.acks[..], [0]);
    a.receive(f, t);
    assert_eq!(a.rel().unacked_frames(), 0);
    assert_eq!(a.names(), ["/b"]);
}

#[test]
fn a_lost_frame_is_resent_after_the_timeout_and_its_duplicate_dropped() {
    let t = Instant::now();
    let mut a = End::new(8800, ReliabilityLimits::default());
    let mut b = End::new(8800, ReliabilityLimits::default());
    a.send(data("/a", 100), t);
    let first = a.wire().remove(0);
    let rto = a.rel().rto();
    a.step(t + rto - Duration::from_millis(1));
    assert!(a.wire().is_empty());
    a.step(t + rto);
    let again = a.wire().remove(0);
    assert_eq!(a.c.n_lp_retransmitted, 1);
    let lp = LpPacket::decode(again.clone()).unwrap();
    assert_eq!(lp.header.tx_sequence, Some(1), "a new TxSequence");
    assert_eq!(lp.header.sequence, Some(0), "the same Sequence");
    // Both copies arrive: one packet goes up, both are acknowledged.
    b.receive(first, t + rto);
    b.receive(again, t + rto);
    assert_eq!(b.names(), ["/a"]);
    assert_eq!(b.c.n_lp_duplicates, 1);
    b.step(t + rto + ACK_DELAY);
    a.receive(b.wire().remove(0), t + rto + ACK_DELAY);
    assert_eq!(a.rel().unacked_frames(), 0);
}

#[test]
fn a_packet_is_given_up_after_the_retransmission_limit() {
    let t = Instant::now();
    let mut a = End::new(1500, ReliabilityLimits::default());
    a.send(data("/a", 4000), t);
    let mut now = t;
    for _ in 0..10 {
        now += Duration::from_secs(2);
        a.step(now);
        a.wire();
    }
    assert_eq!(a.c.n_lp_retransmitted, 3 * u64::from(MAX_RETX));
    assert_eq!(a.c.n_lp_given_up, 1);
    assert_eq!((a.rel().in_flight(), a.rel().unacked_octets()), (0, 0));
}

#[test]
fn three_later_acks_resend_a_frame_before_its_timeout() {
    let t = Instant::now();
    let mut a = End::new(8800, ReliabilityLimits::default());
    let mut b = End::new(8800, ReliabilityLimits::default());
    for i in 0..5 {
        a.send(data(&format!("/p/{i}"), 100), t);
    }
    let frames = a.wire();
    for f in &frames[1..] {
        b.receive(f.clone(), t);
    }
    b.step(t + ACK_DELAY);
    a.receive(b.wire().remove(0), t + ACK_DELAY);
    a.step(t + ACK_DELAY);
    let resent = a.wire();
    assert_eq!(resent.len(), 1);
    assert_eq!(a.c.n_lp_retransmitted, 1);
    b.receive(resent[0].clone(), t + ACK_DELAY);
    assert_eq!(b.got.len(), 5);
}

#[test]
fn the_store_is_bounded_in_frames_and_octets() {
    let t = Instant::now();
    let limits = ReliabilityLimits {
        max_frames: 8,
        max_bytes: 64 << 10,
    };
    let mut a = End::new(1500, limits);
    for i in 0..40 {
        assert!(a.send(data(&format!("/p/{i}"), 3000), t));
        a.wire();
        assert!(a.rel().in_flight() <= 8);
        assert!(a.rel().unacked_octets() <= 64 << 10);
    }
    // Each packet takes 3 frames: at most two fit, the rest were given up oldest first.
    assert_eq!(a.rel().unacked_frames(), 6);
    assert_eq!(a.c.n_lp_given_up, 38);
    let limits = ReliabilityLimits {
        max_frames: 4096,
        max_bytes: 64 << 10,
    };
    let mut a = End::new(8800, limits);
    for i in 0..100 {
        a.send(data(&format!("/p/{i}"), 8000), t);
        a.wire();
        assert!(a.rel().unacked_octets() <= 64 << 10);
    }
}

#[test]
fn junk_acks_cost_nothing_and_resend_nothing() {
    let t = Instant::now();
    let mut a = End::new(8800, ReliabilityLimits::default());
    for i in 0..10 {
        a.send(data(&format!("/p/{i}"), 100), t);
    }
    a.wire();
    let junk = LpPacket {
        header: LpHeader {
            acks: [u64::MAX, 1 << 40, 10, 11, 12, 1000].into_iter().collect(),
            tx_sequence: Some(u64::MAX),
            ..LpHeader::default()
        },
        fragment: None,
    };
    for _ in 0..100 {
        a.receive(junk.encode(), t);
        a.step(t);
    }
    assert!(a.wire().is_empty());
    assert_eq!(a.c.n_lp_retransmitted, 0);
    assert_eq!(a.rel().unacked_frames(), 10);
    assert_eq!(
        a.rel().queued_acks(),
        0,
        "no Ack owed for a frame without Fragment"
    );
    // Acks of real frames, repeated: counted once, and no frame is resent more than the
    // limit whatever arrives.
    let acks = LpPacket {
        header: LpHeader {
            acks: [9, 9, 9, 8].into_iter().collect(),
            ..LpHeader::default()
        },
        fragment: None,
    };
    a.receive(acks.encode(), t);
    a.step(t);
    assert_eq!(a.c.n_lp_retransmitted, 7, "0..=6 are three behind 9");
    for k in 0..50 {
        a.receive(junk.encode(), t);
        a.receive(acks.encode(), t);
        a.step(t + Duration::from_secs(k));
        a.wire();
    }
    assert!(a.c.n_lp_retransmitted <= 10 * u64::from(MAX_RETX));
    assert_eq!(a.rel().in_flight(), 0);
}

#[test]
fn acks_owed_are_bounded() {
    let t = Instant::now();
    let mut a = End::new(8800, ReliabilityLimits::default());
    let mut b = End::new(8800, ReliabilityLimits::default());
    for i in 0..3000 {
        a.send(data(&format!("/p/{i}"), 10), t);
    }
    for f in a.wire() {
        b.receive(f, t);
        assert!(b.rel().queued_acks() <= MAX_QUEUED_ACKS);
    }
    b.step(t);
    let frames = b.wire();
    assert!(frames.iter().all(|f| f.len() <= 8800));
    assert!(b.rel().queued_acks() == 0);
}

#[test]
fn split_frame_takes_the_fields_that_go_before_ack() {
    let d = data("/a", 10);
    assert_eq!(split_frame(&[], &d), Some((&[][..], &d[..])));
    let h = LpHeader {
        pit_token: Some(PitToken::from_u64(7)),
        congestion_mark: Some(1),
        ..LpHeader::default()
    };
    let mut head = Vec::new();
    h.encode_header(Some(d.len()), &mut head);
    let (fields, packet) = split_frame(&head, &d).unwrap();
    assert_eq!(packet, &d[..]);
    assert_eq!(fields.len(), h.fields_len());
    let whole = LpPacket {
        header: h.clone(),
        fragment: Some(d.clone()),
    }
    .encode();
    assert_eq!(split_frame(&[], &whole), Some((fields, &d[..])));
    for refused in [
        LpHeader {
            non_discovery: true,
            ..h.clone()
        },
        LpHeader {
            sequence: Some(1),
            ..h.clone()
        },
    ] {
        let mut head = Vec::new();
        refused.encode_header(Some(d.len()), &mut head);
        assert_eq!(split_frame(&head, &d), None);
    }
    assert_eq!(split_frame(&head[..head.len() - 1], &d), None);
    assert_eq!(split_frame(&[], &[0x64, 0]), None);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
    /// Over a link that drops, duplicates and reorders frames (Acks included) by a drawn
    /// pattern, every packet goes up at most once, and one that does not is counted (given
    /// up, or its fragments timed out in reassembly); the sender's store stays within its
    /// bounds and ends empty.
    #[test]
    fn every_packet_arrives_once_or_is_given_up(
        sizes in proptest::collection::vec(50usize..8000, 1..40),
        mtu in 1200usize..9000,
        fate in proptest::collection::vec(0u8..10, 1..64),
        max_frames in 8usize..256,
    ) {
        let limits = ReliabilityLimits { max_frames, max_bytes: 256 << 10 };
        let t = Instant::now();
        let mut a = End::new(mtu, limits);
        let mut b = End::new(mtu, limits);
        let mut sent = 0;
        // (arrival tick, to b?, frame)
        let mut flight: Vec<(u64, bool, Bytes)> = Vec::new();
        let mut k = 0usize;
        for tick in 0..20_000u64 {
            let now = t + Duration::from_millis(tick);
            if tick % 2 == 0 && sent < sizes.len() {
                a.send(data(&format!("/p/{sent}"), sizes[sent]), now);
                sent += 1;
            }
            a.step(now);
            b.step(now);
            for (to_b, frames) in [(true, a.wire()), (false, b.wire())] {
                for f in frames {
                    let fate = fate[k % fate.len()];
                    k += 1;
                    match fate {
                        0 | 1 => {}
                        2 => {
                            flight.push((tick + 1, to_b, f.clone()));
                            flight.push((tick + 2, to_b, f));
                        }
                        3 => flight.push((tick + 4, to_b, f)),
                        _ => flight.push((tick + 1, to_b, f)),
                    }
                }
            }
            let (due, later): (Vec<_>, Vec<_>) = flight.drain(..).partition(|x| x.0 <= tick);
            flight = later;
            for (_, to_b, f) in due {
                if to_b { b.receive(f, now) } else { a.receive(f, now) }
            }
            let r = a.rel();
            proptest::prop_assert!(r.in_flight() <= max_frames);
            proptest::prop_assert!(r.unacked_octets() <= 256 << 10);
            if sent == sizes.len() && flight.is_empty() && r.in_flight() == 0 && tick > 100 {
                break;
            }
        }
        let mut names = b.names();
        let delivered = names.len();
        names.sort();
        names.dedup();
        proptest::prop_assert_eq!(names.len(), delivered, "a packet went up twice");
        // A packet is lost only when given up by the sender, or when the receiver's
        // reassembly timed out waiting for a fragment still being resent (counted too).
        let lost = a.c.n_lp_given_up + b.c.n_reassembly_dropped;
        proptest::prop_assert!(sizes.len() - delivered <= lost as usize);
        proptest::prop_assert_eq!(a.rel().in_flight(), 0);
        proptest::prop_assert!(a.c.n_lp_retransmitted <= a.c.n_out_data * 8 * u64::from(MAX_RETX));
        if fate.iter().all(|&f| f >= 2) {
            proptest::prop_assert_eq!(delivered, sizes.len(), "nothing dropped, nothing lost");
        }
    }
}
