//! Unix and TCP faces over real sockets: accept, exchange both ways, framing errors,
//! back-pressure (EAGAIN) and the bounded output queue.

mod common;

use std::io::Write;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use common::{data, interest, name_of, Driver};
use kite_face::{
    tcp, unix, Accepted, FaceConfig, FaceError, FaceUri, Flushed, ListenError, Listener, RxPacket,
};
use kite_link::{FaceId, FaceIds, FaceScope, PacketKind, Persistency};
use kite_packet::{LpHeader, PitToken};

fn accept_one(ch: &mut dyn Listener, ids: &mut FaceIds) -> kite_face::Face {
    accept_evicting(ch, ids).0
}

/// The next connection's face, and the face its listener gave up for it.
fn accept_evicting(ch: &mut dyn Listener, ids: &mut FaceIds) -> (kite_face::Face, Option<FaceId>) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match ch.accept(ids, Instant::now()).unwrap() {
            Some(Accepted::Face(f, evict)) => return (*f, evict),
            Some(other @ (Accepted::Refused | Accepted::Broken(_))) => panic!("{other:?}"),
            None => {}
        }
        assert!(Instant::now() < deadline, "no connection accepted");
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[test]
fn unix_listener_accepts_and_packets_flow_both_ways() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run/nfd/nfd.sock");
    let mut ch = unix::listen(&path, &FaceConfig::default()).unwrap();
    assert_eq!(ch.local_uri(), &FaceUri::Unix(path.clone()));
    let mut ids = FaceIds::new();
    let client = unix::connect(FaceId(9), &path, &FaceConfig::default()).unwrap();
    let server = accept_one(&mut ch, &mut ids);
    assert_eq!(server.id(), FaceId(256));
    assert_eq!(server.scope(), FaceScope::Local);
    assert_eq!(server.persistency(), Persistency::OnDemand);
    assert!(matches!(server.remote_uri(), FaceUri::Fd(_)));
    assert_eq!(server.mtu(), None);

    let mut d = Driver::new();
    let c = d.add(client);
    let s = d.add(server);
    let token = LpHeader {
        pit_token: Some(PitToken::from_u64(42)),
        ..LpHeader::default()
    };
    for i in 0..3 {
        assert!(d.faces[c].send_packet(token.clone(), interest(&format!("/a/{i}"))));
    }
    d.flush(c);
    let got = d.receive(3);
    assert_eq!(got.len(), 3);
    assert!(got
        .iter()
        .all(|(i, r)| *i == s && r.pit_token == Some(PitToken::from_u64(42))));
    assert_eq!(name_of(&got[2].1), "/a/2");

    assert!(d.faces[s].send_parts(PacketKind::Data, &[], data("/a/0", 100)));
    d.flush(s);
    let got = d.receive(1);
    assert_eq!(got[0].0, c);
    assert!(matches!(got[0].1.packet, RxPacket::Data(_)));
    let sc = d.faces[s].counters();
    assert_eq!((sc.n_in_interests, sc.n_out_data), (3, 1));
    assert!(sc.n_in_bytes > 0 && sc.n_out_bytes > 0);
}

#[test]
fn unix_listener_replaces_stale_sockets_and_refuses_live_ones() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nfd.sock");
    drop(std::os::unix::net::UnixListener::bind(&path).unwrap());
    assert!(path.exists(), "stale socket file left behind");
    let live = unix::listen(&path, &FaceConfig::default()).unwrap();
    assert!(matches!(
        unix::listen(&path, &FaceConfig::default()),
        Err(ListenError::InUse(_))
    ));
    drop(live);
    let file = dir.path().join("plain");
    std::fs::write(&file, b"x").unwrap();
    assert!(matches!(
        unix::listen(&file, &FaceConfig::default()),
        Err(ListenError::NotASocket(_))
    ));
    let err = unix::listen(&file.join("sub/nfd.sock"), &FaceConfig::default()).unwrap_err();
    assert!(matches!(err, ListenError::CreateDir { .. }));
    assert!(err.to_string().contains("cannot create directory"), "{err}");
}

/// A server face for a raw client socket the test writes bytes into.
fn raw_unix_pair() -> (
    std::os::unix::net::UnixStream,
    kite_face::Face,
    unix::UnixChannel,
) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.sock");
    let mut ch = unix::listen(&path, &FaceConfig::default()).unwrap();
    let raw = std::os::unix::net::UnixStream::connect(&path).unwrap();
    let face = accept_one(&mut ch, &mut FaceIds::new());
    (raw, face, ch)
}

#[test]
fn oversize_or_malformed_elements_close_the_face() {
    for bad in [
        vec![6, 253, 0x23, 0x29], // TLV-LENGTH 9001
        vec![0, 0],               // TLV-TYPE 0
        vec![6, 253, 0, 1],       // non-minimal TLV-LENGTH
    ] {
        let (mut raw, mut face, _ch) = raw_unix_pair();
        let mut ok = interest("/ok").to_vec();
        ok.extend_from_slice(&bad);
        raw.write_all(&ok).unwrap();
        std::thread::sleep(Duration::from_millis(20));
        let mut out = Vec::new();
        let res = face.recv_burst(Instant::now(), false, usize::MAX, &mut out);
        assert!(
            matches!(res, Err(FaceError::Framing(_))),
            "{bad:?}: {res:?}"
        );
        assert_eq!(out.len(), 1, "packets before the bad element still arrive");
        assert_eq!(face.counters().n_framing_errors, 1);
    }
}

#[test]
fn peer_close_is_reported() {
    let (raw, mut face, _ch) = raw_unix_pair();
    drop(raw);
    std::thread::sleep(Duration::from_millis(10));
    let res = face.recv_burst(Instant::now(), false, usize::MAX, &mut Vec::new());
    assert!(matches!(res, Err(FaceError::Closed)), "{res:?}");
}

#[test]
fn a_close_right_after_data_is_seen_in_the_same_burst() {
    // Edge-triggered readiness reports data and the peer's close once: the burst that reads
    // the data must also find the end of stream, or the face would never close.
    let (mut raw, mut face, _ch) = raw_unix_pair();
    let mut poll = mio::Poll::new().unwrap();
    face.register(poll.registry(), mio::Token(1)).unwrap();
    raw.write_all(&interest("/last")).unwrap();
    drop(raw);
    let mut events = mio::Events::with_capacity(4);
    poll.poll(&mut events, Some(Duration::from_secs(5)))
        .unwrap();
    let ev = events.iter().next().expect("a readiness event");
    assert!(ev.is_read_closed(), "{ev:?}");
    let mut out = Vec::new();
    let res = face.recv_burst(Instant::now(), ev.is_read_closed(), usize::MAX, &mut out);
    assert_eq!(out.len(), 1, "the last packet is delivered");
    assert!(matches!(res, Err(FaceError::Closed)), "{res:?}");
}

#[test]
fn full_socket_blocks_the_flush_and_the_rest_goes_out_once_drained() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.sock");
    let mut ch = unix::listen(&path, &FaceConfig::default()).unwrap();
    let client = unix::connect(FaceId(9), &path, &FaceConfig::default()).unwrap();
    let mut server = accept_one(&mut ch, &mut FaceIds::new());
    let packet = data("/big", 8000);
    let mut sent = 0;
    let blocked = loop {
        for _ in 0..64 {
            assert!(server.send(PacketKind::Data, packet.clone()));
            sent += 1;
        }
        match server.flush().unwrap() {
            Flushed::Blocked => break true,
            Flushed::Done if sent > 20_000 => break false,
            Flushed::Done => {}
        }
    };
    assert!(blocked, "a unix socket without reader never filled");
    assert!(server.pending_output() > 0);
    let mut d = Driver::new();
    let c = d.add(client);
    let s = d.add(server);
    d.flush(s);
    let got = d.receive(sent);
    assert_eq!(got.len(), sent);
    assert!(got.iter().all(|(i, _)| *i == c));
    assert_eq!(d.faces[s].counters().n_out_data, sent as u64);
    assert_eq!(d.faces[c].counters().n_in_data, sent as u64);
}

#[test]
fn a_full_output_queue_drops_and_counts() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.sock");
    let config = FaceConfig {
        queue_capacity: 4,
        ..FaceConfig::default()
    };
    let _ch = unix::listen(&path, &config).unwrap();
    let mut face = unix::connect(FaceId(9), &path, &config).unwrap();
    for _ in 0..4 {
        assert!(face.send(PacketKind::Interest, interest("/q")));
    }
    assert!(!face.send(PacketKind::Interest, interest("/q")));
    assert_eq!(face.counters().n_out_queue_full, 1);
    assert_eq!(face.counters().n_out_interests, 4);
    assert_eq!(face.pending_output(), 4);
}

#[test]
fn tcp_listener_and_outgoing_face_exchange_packets() {
    let any: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let mut ch = tcp::listen(any, &FaceConfig::default()).unwrap();
    let FaceUri::Tcp(addr) = *ch.local_uri() else {
        panic!("not a TCP channel")
    };
    let client = connect(addr)
        .unwrap()
        .into_face(FaceId(300), Persistency::Persistent, &FaceConfig::default())
        .unwrap();
    assert_eq!(client.remote_uri(), &FaceUri::Tcp(addr));
    assert_eq!(client.persistency(), Persistency::Persistent);
    let server = accept_one(&mut ch, &mut FaceIds::new());
    assert_eq!(server.scope(), FaceScope::Local, "both ends loopback");
    assert_eq!(server.persistency(), Persistency::OnDemand);
    let mut d = Driver::new();
    let c = d.add(client);
    let s = d.add(server);
    assert!(d.faces[c].send(PacketKind::Interest, interest("/tcp")));
    d.flush(c);
    let got = d.receive(1);
    assert_eq!((got[0].0, name_of(&got[0].1)), (s, "/tcp".to_owned()));
    assert!(d.faces[s].send(PacketKind::Data, data("/tcp", 5000)));
    d.flush(s);
    let got = d.receive(1);
    assert_eq!(got[0].0, c);
    assert_eq!(d.faces[c].counters().n_in_data, 1);
}

#[test]
fn a_full_tcp_listener_gives_up_the_connection_that_received_longest_ago() {
    let config = FaceConfig {
        tcp_on_demand_limit: 2,
        ..FaceConfig::default()
    };
    let mut ch = tcp::listen("127.0.0.1:0".parse().unwrap(), &config).unwrap();
    let FaceUri::Tcp(addr) = *ch.local_uri() else {
        panic!("not a TCP channel")
    };
    let mut ids = FaceIds::new();
    let mut d = Driver::new();
    let mut peers = Vec::new();
    let mut accepted = Vec::new();
    for _ in 0..2 {
        peers.push(std::net::TcpStream::connect(addr).unwrap());
        let (face, evict) = accept_evicting(&mut ch, &mut ids);
        assert_eq!(evict, None, "room for two");
        accepted.push(face.id());
        d.add(face);
    }
    // The first connection sends a packet; the second, silent, is now the idlest.
    peers[0].write_all(&interest("/busy")).unwrap();
    assert_eq!(name_of(&d.receive(1)[0].1), "/busy");
    peers.push(std::net::TcpStream::connect(addr).unwrap());
    let (third, evict) = accept_evicting(&mut ch, &mut ids);
    assert_eq!(evict, Some(accepted[1]));
    let evicted: Vec<_> = d.faces.iter().map(|f| f.evicted()).collect();
    assert_eq!(evicted, [false, true]);
    assert!(!third.evicted());
    // Made persistent by the operator, a face no longer counts: room for one more.
    let mut third = third;
    third.set_persistency(Persistency::Persistent);
    peers.push(std::net::TcpStream::connect(addr).unwrap());
    let (_, evict) = accept_evicting(&mut ch, &mut ids);
    assert_eq!(evict, None, "one face given up, one persistent: room left");
}

/// Connects without blocking, waiting in a poll of its own; the connection or its error.
fn connect(addr: SocketAddr) -> std::io::Result<tcp::Connecting> {
    let mut poll = mio::Poll::new().unwrap();
    let mut events = mio::Events::with_capacity(4);
    let mut c = tcp::Connecting::start(addr)?;
    c.register(poll.registry(), mio::Token(1))?;
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        poll.poll(&mut events, Some(Duration::from_millis(100)))
            .unwrap();
        if c.progress()? {
            c.deregister(poll.registry())?;
            return Ok(c);
        }
        assert!(Instant::now() < deadline, "no answer to connect");
    }
}

#[test]
fn an_outgoing_connection_to_a_closed_port_fails_without_blocking() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = closed.local_addr().unwrap();
    drop(closed);
    let e = connect(addr).expect_err("nothing listens");
    assert_eq!(e.kind(), std::io::ErrorKind::ConnectionRefused);
}

#[test]
fn a_connection_reset_before_it_is_accepted_does_not_stop_the_listener() {
    let mut ch = tcp::listen("127.0.0.1:0".parse().unwrap(), &FaceConfig::default()).unwrap();
    let FaceUri::Tcp(addr) = *ch.local_uri() else {
        panic!("not a TCP channel")
    };
    // Reset (SO_LINGER 0) while it waits in the backlog.
    let s = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    s.connect(&addr.into()).unwrap();
    s.set_linger(Some(Duration::ZERO)).unwrap();
    drop(s);
    std::thread::sleep(Duration::from_millis(50));
    let next = std::net::TcpStream::connect(addr).unwrap();
    let mut ids = FaceIds::new();
    let mut got = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(5);
    while got.len() < 2 && Instant::now() < deadline {
        match ch.accept(&mut ids, Instant::now()).unwrap() {
            Some(a) => got.push(a),
            None => std::thread::sleep(Duration::from_millis(2)),
        }
    }
    assert!(matches!(got[0], Accepted::Broken(_)), "{got:?}");
    let Accepted::Face(face, None) = &got[1] else {
        panic!("the next connection's face: {got:?}")
    };
    assert_eq!(face.remote_uri(), &FaceUri::Tcp(next.local_addr().unwrap()));
}
