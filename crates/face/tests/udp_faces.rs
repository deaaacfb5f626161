//! UDP faces over loopback: demultiplexing per remote, on-demand idle close, fragmentation
//! and reassembly with fragments out of order, reassembly bounds.

mod common;

use std::net::UdpSocket;
use std::time::{Duration, Instant};

use bytes::Bytes;
use common::{data, interest, name_of};
use kite_face::{Datagram, Face, FaceConfig, FaceUri, Flushed, Received, RxPacket, UdpChannel};
use kite_link::reassembly::ReassemblyLimits;
use kite_link::{FaceId, FaceIds, FaceScope, PacketKind, Persistency};
use kite_packet::{LpHeader, LpPacket};

fn channel(config: FaceConfig) -> UdpChannel {
    UdpChannel::bind("127.0.0.1:0".parse().unwrap(), config).unwrap()
}

fn peer() -> UdpSocket {
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s
}

/// Reads until `n` datagrams arrived on `ch` (or 5 s pass).
fn recv(ch: &mut UdpChannel, ids: &mut FaceIds, n: usize) -> (Vec<Datagram>, Vec<Face>) {
    let (mut dgrams, mut created) = (Vec::new(), Vec::new());
    let deadline = Instant::now() + Duration::from_secs(5);
    while dgrams.len() < n && Instant::now() < deadline {
        ch.recv_burst(
            Instant::now(),
            ids,
            &mut dgrams,
            &mut created,
            &mut Vec::new(),
        )
        .unwrap();
        std::thread::sleep(Duration::from_millis(1));
    }
    (dgrams, created)
}

/// Reads until `n` datagrams arrived on `face`'s own socket (or 5 s pass): once a face exists,
/// its peer's datagrams reach that socket rather than the listener.
fn recv_own(ch: &mut UdpChannel, face: &Face, n: usize) -> Vec<Datagram> {
    let remote = face.udp_remote().expect("a UDP unicast face");
    let fd = face.raw_fd().expect("a socket of its own");
    let mut dgrams = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(5);
    while dgrams.len() < n && Instant::now() < deadline {
        ch.recv_face(face.id(), remote, fd, 32, Instant::now(), &mut dgrams)
            .unwrap();
        std::thread::sleep(Duration::from_millis(1));
    }
    dgrams
}

/// Hands every datagram to its face; returns the packets completed.
fn deliver(ch: &mut UdpChannel, faces: &mut [Face], dgrams: Vec<Datagram>) -> Vec<Received> {
    let mut out = Vec::new();
    for d in dgrams {
        let f = faces
            .iter_mut()
            .find(|f| f.id() == d.face)
            .expect("face exists");
        f.receive_frame(
            d.from,
            d.frame,
            d.own_buffer,
            Instant::now(),
            ch.reassembler(),
            &mut out,
        );
    }
    for (id, n) in ch.reassembler().take_drops() {
        if let Some(f) = faces.iter_mut().find(|f| f.id() == id) {
            f.count_reassembly_drops(n);
        }
    }
    out
}

#[test]
fn one_on_demand_face_per_remote_and_replies_reach_it() {
    let mut ch = channel(FaceConfig::default());
    let mut ids = FaceIds::new();
    let (a, b) = (peer(), peer());
    let to = ch.local_addr();
    a.send_to(&interest("/a/1"), to).unwrap();
    b.send_to(&interest("/b/1"), to).unwrap();
    a.send_to(&interest("/a/2"), to).unwrap();
    let (dgrams, mut faces) = recv(&mut ch, &mut ids, 3);
    assert_eq!(faces.len(), 2);
    let fa = ch.face_of(a.local_addr().unwrap()).unwrap();
    let fb = ch.face_of(b.local_addr().unwrap()).unwrap();
    assert_ne!(fa, fb);
    let face_a = faces.iter().find(|f| f.id() == fa).unwrap();
    assert_eq!(face_a.remote_uri(), &FaceUri::Udp(a.local_addr().unwrap()));
    assert_eq!(face_a.local_uri(), &ch.local_uri());
    assert_eq!(
        face_a.scope(),
        FaceScope::NonLocal,
        "UDP is non-local even on loopback"
    );
    assert_eq!(face_a.persistency(), Persistency::OnDemand);
    assert_eq!(face_a.mtu(), Some(8800));
    let got = deliver(&mut ch, &mut faces, dgrams);
    let names: Vec<(FaceId, String)> = got.iter().map(|r| (r.face, name_of(r))).collect();
    assert_eq!(
        names,
        [
            (fa, "/a/1".to_owned()),
            (fb, "/b/1".to_owned()),
            (fa, "/a/2".to_owned())
        ]
    );
    let face_a = faces.iter_mut().find(|f| f.id() == fa).unwrap();
    assert_eq!(face_a.counters().n_in_interests, 2);
    let reply = data("/a/1", 50);
    assert!(face_a.send(PacketKind::Data, reply.clone()));
    assert!(face_a.send(PacketKind::Data, reply.clone()));
    assert_eq!(face_a.flush().unwrap(), Flushed::Done);
    assert_eq!(face_a.counters().n_out_bytes, 2 * reply.len() as u64);
    let mut buf = [0u8; 9000];
    for _ in 0..2 {
        let (n, from) = a.recv_from(&mut buf).unwrap();
        assert_eq!((&buf[..n], from), (&reply[..], to));
    }
}

#[test]
fn a_burst_of_equal_and_mixed_lengths_arrives_as_the_datagrams_queued() {
    // One flush sends runs of equal-length frames as segmented messages: the peer must still
    // get every packet as its own datagram, whole and in order.
    let mut ch = channel(FaceConfig::default());
    let a = peer();
    let mut face = ch
        .connect(
            FaceId(900),
            a.local_addr().unwrap(),
            Persistency::Persistent,
        )
        .unwrap();
    let mut sent = Vec::new();
    sent.extend((0..40).map(|i| data(&format!("/run/{:02}", i), 1000)));
    sent.extend((0..8).map(|i| data(&format!("/big/{i}"), 3000)));
    sent.push(data("/short", 10));
    sent.extend((0..6).map(|i| data(&format!("/mixed/{i}"), 100 + 7 * i)));
    for p in &sent {
        assert!(face.send(PacketKind::Data, p.clone()));
    }
    assert_eq!(face.flush().unwrap(), Flushed::Done);
    let total: usize = sent.iter().map(|p| p.len()).sum();
    assert_eq!(face.counters().n_out_bytes, total as u64);
    let mut buf = [0u8; 9000];
    for (i, p) in sent.iter().enumerate() {
        let (n, from) = a.recv_from(&mut buf).unwrap();
        assert_eq!(from, ch.local_addr());
        assert_eq!(&buf[..n], &p[..], "datagram {i}");
    }
}

#[test]
fn a_segmented_run_from_another_channel_arrives_as_separate_packets() {
    // Channel to channel, as two Kites over UDP: the sender's run of equal-length frames is
    // one segmented message, which the receiving channel reads coalesced and cuts back up.
    let (mut a, mut b) = (
        channel(FaceConfig::default()),
        channel(FaceConfig::default()),
    );
    let mut ids = FaceIds::new();
    let mut to_a = b
        .connect(FaceId(900), a.local_addr(), Persistency::Persistent)
        .unwrap();
    let sent: Vec<Bytes> = (0..30)
        .map(|i| interest(&format!("/run/{i:02}")))
        .chain([interest("/tail")])
        .collect();
    for p in &sent {
        assert!(to_a.send(PacketKind::Interest, p.clone()));
    }
    assert_eq!(to_a.flush().unwrap(), Flushed::Done);
    let (dgrams, faces) = recv(&mut a, &mut ids, sent.len());
    assert_eq!(faces.len(), 1, "one sender, one face");
    let frames: Vec<Bytes> = dgrams.iter().map(|d| d.frame.clone()).collect();
    assert_eq!(frames, sent);
    assert_eq!(a.counters().n_truncated, 0);
}

#[test]
fn idle_on_demand_faces_expire_and_a_returning_peer_gets_a_new_face() {
    let config = FaceConfig {
        idle_timeout: Duration::from_millis(50),
        ..FaceConfig::default()
    };
    let mut ch = channel(config);
    let mut ids = FaceIds::new();
    let a = peer();
    a.send_to(&interest("/x"), ch.local_addr()).unwrap();
    let (dgrams, mut faces) = recv(&mut ch, &mut ids, 1);
    deliver(&mut ch, &mut faces, dgrams);
    let now = Instant::now();
    assert!(!faces[0].idle_expired(now));
    assert!(faces[0].idle_expired(now + Duration::from_millis(60)));
    let old = faces[0].id();
    ch.forget(a.local_addr().unwrap(), old);
    // Closing the face closes its socket: the peer's next datagram reaches the listener.
    drop(faces);
    a.send_to(&interest("/x"), ch.local_addr()).unwrap();
    let (_, again) = recv(&mut ch, &mut ids, 1);
    assert_eq!(again.len(), 1);
    assert!(again[0].id() > old, "ids are never reused");

    let b = peer();
    let b_addr = b.local_addr().unwrap();
    let created = ch
        .connect(FaceId(900), b_addr, Persistency::Persistent)
        .unwrap();
    assert!(!created.idle_expired(Instant::now() + Duration::from_secs(3600)));
    assert!(matches!(
        ch.connect(FaceId(901), b_addr, Persistency::Persistent),
        Err(kite_face::FaceError::Exists(FaceId(900)))
    ));
}

#[test]
fn fragments_at_mtu_1500_reassemble_when_they_arrive_out_of_order() {
    let mut sender_ch = channel(FaceConfig::default());
    let capture = peer();
    let mut tx = sender_ch
        .connect(
            FaceId(500),
            capture.local_addr().unwrap(),
            Persistency::Persistent,
        )
        .unwrap();
    tx.set_mtu(1500);
    let packet = data("/big", 8000);
    let header = LpHeader {
        congestion_mark: Some(1),
        ..LpHeader::default()
    };
    assert!(tx.send_packet(header, packet.clone()));
    assert_eq!(tx.flush().unwrap(), Flushed::Done);
    let mut frags = Vec::new();
    let mut buf = [0u8; 9000];
    while frags.len() < 6 {
        let n = capture.recv(&mut buf).unwrap();
        assert!(n <= 1500, "fragment of {n} octets exceeds the MTU");
        frags.push(Bytes::copy_from_slice(&buf[..n]));
    }
    let lp = LpPacket::decode(frags[0].clone()).unwrap();
    assert_eq!(lp.header.frag_count, Some(6));

    let mut rx_ch = channel(FaceConfig::default());
    for i in [4, 1, 5, 0, 3, 2] {
        capture.send_to(&frags[i], rx_ch.local_addr()).unwrap();
    }
    let (dgrams, mut faces) = recv(&mut rx_ch, &mut FaceIds::new(), 6);
    let got = deliver(&mut rx_ch, &mut faces, dgrams);
    assert_eq!(got.len(), 1);
    let RxPacket::Data(d) = &got[0].packet else {
        panic!("not a Data")
    };
    assert_eq!(d.wire(), &packet);
    assert_eq!(got[0].congestion_mark, 1);
}

#[test]
fn partial_packets_of_all_faces_share_the_channels_bounds_oldest_dropped_first() {
    let config = FaceConfig {
        reassembly: ReassemblyLimits {
            max_partials: 2,
            ..ReassemblyLimits::default()
        },
        ..FaceConfig::default()
    };
    let mut ch = channel(config);
    // Two senders (two on-demand faces), five partial packets: three make room.
    let (a, b) = (peer(), peer());
    for seq in 0..5u64 {
        let first = LpPacket {
            header: LpHeader {
                sequence: Some(seq * 10),
                frag_index: Some(0),
                frag_count: Some(2),
                ..LpHeader::default()
            },
            fragment: Some(Bytes::from_static(b"half")),
        };
        let from = if seq < 3 { &a } else { &b };
        from.send_to(&first.encode(), ch.local_addr()).unwrap();
        std::thread::sleep(Duration::from_millis(5)); // arrive in order
    }
    let (dgrams, mut faces) = recv(&mut ch, &mut FaceIds::new(), 5);
    assert!(deliver(&mut ch, &mut faces, dgrams).is_empty());
    let dropped = |faces: &[Face], i: usize| faces[i].counters().n_reassembly_dropped;
    assert_eq!(ch.reassembler().partials(), 2);
    assert_eq!(
        (dropped(&faces, 0), dropped(&faces, 1)),
        (3, 0),
        "oldest first"
    );
    ch.reassembler()
        .expire(Instant::now() + Duration::from_secs(1));
    deliver(&mut ch, &mut faces, Vec::new());
    assert_eq!(
        (dropped(&faces, 0), dropped(&faces, 1)),
        (3, 2),
        "timed-out partials count"
    );
}

#[test]
fn oversized_datagrams_count_on_the_channel_and_on_a_known_face() {
    let mut ch = channel(FaceConfig::default());
    let mut ids = FaceIds::new();
    let to = ch.local_addr();
    let too_long = vec![0x06; kite_link::framing::MAX_FRAME_LEN + 100];

    let stranger = peer();
    stranger.send_to(&too_long, to).unwrap();
    stranger.send_to(&interest("/s"), to).unwrap();
    let (dgrams, faces) = recv(&mut ch, &mut ids, 1);
    assert_eq!(dgrams.len(), 1, "only the Interest reaches a face");
    assert_eq!(faces.len(), 1);
    assert_eq!(ch.counters().n_truncated, 1);
    assert_eq!(ch.status().counters, *ch.counters());
    assert_eq!(ch.status().local, ch.local_uri());

    let mut faces = faces;
    stranger.send_to(&too_long, to).unwrap();
    let dgrams = recv_own(&mut ch, &faces[0], 1);
    assert!(deliver(&mut ch, &mut faces, dgrams).is_empty());
    assert_eq!(ch.counters().n_truncated, 2);
    assert_eq!(
        faces[0].counters().n_in_malformed,
        1,
        "the known sender's face counts it too"
    );
}
