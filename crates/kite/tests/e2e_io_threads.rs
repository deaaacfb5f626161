//! `kite run --io-threads 2`: stream connections are spread over both I/O threads (each owns
//! the faces it was given), and packets cross between faces owned by different I/O threads
//! both ways, with Data that carries Kite's PIT token (dispatched to the shard the token
//! names) and Data without one (dispatched by the Name Dispatch Table), over two forwarding
//! shards. UDP remotes are spread over both threads' listeners by `SO_REUSEPORT`, and their
//! faces exchange across them the same way. An application's connections move to the I/O
//! thread that runs the shard its packets go to, and exchanges outstanding across the move
//! complete.

mod common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::time::{Duration, Instant};

use bytes::Bytes;
use common::peer::{self, data, interest, with_token, Conn};
use common::{eventually, free_tcp_port, free_udp_port, Daemon};
use kite_mgmt_proto::ControlParameters;
use kite_packet::{Interest, NetPacket, PitToken};
use serde_json::Value;

const WAIT: Duration = Duration::from_secs(10);

/// The status page's poll document (`/status.json`).
fn status(addr: &str) -> Option<Value> {
    let mut s = TcpStream::connect(addr).ok()?;
    s.set_read_timeout(Some(WAIT)).ok()?;
    s.write_all(b"GET /status.json HTTP/1.0\r\n\r\n").ok()?;
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    let body = out.split_once("\r\n\r\n")?.1;
    serde_json::from_str(body).ok()
}

/// Each I/O thread's (busy seconds, faces) from the status document.
fn io_threads(v: &Value) -> Vec<(f64, u64)> {
    v["io_threads"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|t| {
                    (
                        t["busy"].as_f64().unwrap_or(0.0),
                        t["faces"].as_u64().unwrap_or(0),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Consumer `c` asks for `name`; the producer answers, echoing Kite's PIT token or not; `c`
/// must get the Data.
fn exchange(c: &mut Conn, producer: &mut Conn, name: &str, echo_token: bool) {
    c.send(&interest(name, 4000));
    let (token, i) = producer.recv_interest(WAIT);
    assert_eq!(i.name.to_string(), name);
    assert!(token.is_some(), "Kite sends its PIT token with {name}");
    let d = data(&i.name, name.as_bytes().to_vec());
    let d = match echo_token {
        true => with_token(token, d),
        false => d,
    };
    producer.send(&d);
    match c.recv_packet(WAIT) {
        (_, NetPacket::Data(got)) => assert_eq!(got.name.to_string(), name),
        (_, other) => panic!("{name}: expected the Data, got {other:?}"),
    }
}

#[test]
fn faces_on_two_io_threads_exchange_token_and_tokenless_data_with_inline_shards() {
    two_io_threads("true");
}

#[test]
fn faces_on_two_io_threads_exchange_through_forwarding_threads() {
    two_io_threads("false");
}

/// A daemon with two I/O threads and two forwarding shards, run inline by the I/O threads
/// (shard i on I/O thread i) or by forwarding threads of their own, and the address of its
/// metrics (where the I/O threads' faces are counted).
fn two_io_threads_daemon(inline: &str) -> (Daemon, String) {
    let addr = format!("127.0.0.1:{}", free_tcp_port());
    let kite = Daemon::local(&[
        "--io-threads",
        "2",
        "--threads",
        "2",
        "--inline",
        inline,
        "--metrics",
        &addr,
    ]);
    (kite, addr)
}

/// Two I/O threads and two forwarding shards, run inline by the I/O threads (shard i on
/// I/O thread i) or by forwarding threads of their own.
fn two_io_threads(inline: &str) {
    let (kite, addr) = two_io_threads_daemon(inline);
    let s = kite.socket();
    let mut producer = Conn::unix(s);
    producer.register("/io");
    let mut consumer = Conn::unix(s);
    consumer.register("/consumer");
    // The registrations went over the peers' own faces (a local command each), answered by
    // management from the shard the NDT gives `/localhost/nfd`.

    // Each thread owns one of the two connections: the second went to the thread with
    // fewer faces.
    let spread = eventually(WAIT, || {
        let t = io_threads(&status(&addr)?);
        (t.len() == 2 && t.iter().all(|&(_, faces)| faces == 1)).then_some(t)
    });
    assert!(
        spread.is_some(),
        "one face per I/O thread, got {:?}",
        status(&addr).map(|v| io_threads(&v))
    );

    // Names spread over both shards by the NDT; Data with and without the PIT token, both
    // ways between the two threads' faces.
    for n in 0..16 {
        exchange(&mut consumer, &mut producer, &format!("/io/t{n}/x"), true);
        exchange(&mut consumer, &mut producer, &format!("/io/n{n}/x"), false);
    }
    consumer.register("/io-back");
    for n in 0..8 {
        exchange(
            &mut producer,
            &mut consumer,
            &format!("/io-back/t{n}/x"),
            true,
        );
        exchange(
            &mut producer,
            &mut consumer,
            &format!("/io-back/n{n}/x"),
            false,
        );
    }
    let busy = eventually(WAIT, || {
        let t = io_threads(&status(&addr)?);
        (t.len() == 2 && t.iter().all(|&(b, _)| b > 0.0)).then_some(t)
    });
    assert!(busy.is_some(), "both I/O threads worked");
    let mut m = TcpStream::connect(&addr).unwrap();
    m.write_all(b"GET /metrics HTTP/1.0\r\n\r\n").unwrap();
    let mut metrics = String::new();
    let _ = m.read_to_string(&mut metrics);
    for t in ["kite-io0", "kite-io1"] {
        let sample = format!("kite_thread_busy_seconds_total{{thread=\"{t}\"}}");
        assert!(metrics.contains(&sample), "{sample} in {metrics}");
    }
    // With inline shards each I/O thread counts the packets it queued for the other's shard
    // (how many depends on when the faces moved to their shards' thread).
    let crossed: Vec<f64> = (metrics.lines())
        .filter_map(|l| l.strip_prefix("kite_io_crossed_total{thread=\"kite-io"))
        .filter_map(|l| l.split_once(' ')?.1.parse().ok())
        .collect();
    if inline == "true" {
        assert_eq!(
            crossed.len(),
            2,
            "kite_io_crossed_total per thread in {metrics}"
        );
    } else {
        assert!(crossed.is_empty(), "{crossed:?}");
    }
}

/// The next packet `s` receives within [`WAIT`] (panics without one).
fn recv_udp(s: &UdpSocket) -> (Option<PitToken>, NetPacket) {
    let until = Instant::now() + WAIT;
    let mut buf = vec![0u8; 9000];
    s.set_read_timeout(Some(WAIT)).unwrap();
    loop {
        assert!(Instant::now() < until, "nothing received in {WAIT:?}");
        let Ok(n) = s.recv(&mut buf) else { continue };
        let (header, packet) =
            NetPacket::decode_frame(Bytes::copy_from_slice(&buf[..n])).expect("a packet");
        return (header.pit_token, packet);
    }
}

/// The next Interest `s` receives, skipping anything else.
fn recv_udp_interest(s: &UdpSocket) -> (Option<PitToken>, Interest) {
    loop {
        if let (token, NetPacket::Interest(i)) = recv_udp(s) {
            return (token, i);
        }
    }
}

#[test]
fn udp_remotes_spread_over_two_io_threads_and_exchange_across_them() {
    let udp = free_udp_port();
    let addr = format!("127.0.0.1:{}", free_tcp_port());
    let kite = Daemon::start(
        &[],
        &[
            "--udp".into(),
            format!("127.0.0.1:{udp}"),
            "--tcp".into(),
            format!("127.0.0.1:{}", free_tcp_port()),
            "--io-threads".into(),
            "2".into(),
            "--threads".into(),
            "2".into(),
            "--metrics".into(),
            addr.clone(),
        ],
    );
    let s = kite.socket();
    let to: SocketAddr = format!("127.0.0.1:{udp}").parse().unwrap();
    // Sixteen remotes, each with an on-demand face: the kernel's hash puts all of them on one
    // listener with odds of 2 in 65,536.
    let peers: Vec<UdpSocket> = (0..16)
        .map(|_| {
            let p = UdpSocket::bind("127.0.0.1:0").unwrap();
            p.connect(to).unwrap();
            p
        })
        .collect();
    for (n, p) in peers.iter().enumerate() {
        p.send(&interest(&format!("/probe/{n}"), 100)).unwrap();
    }
    let spread = eventually(WAIT, || {
        let t = io_threads(&status(&addr)?);
        let faces: u64 = t.iter().map(|&(_, f)| f).sum();
        (faces == 16 && t.iter().all(|&(_, f)| f > 0)).then_some(t)
    });
    assert!(
        spread.is_some(),
        "16 UDP faces on both I/O threads, got {:?}",
        status(&addr).map(|v| io_threads(&v))
    );

    // Peer 0 fetches from each other peer: some of them live in the other I/O thread.
    let faces = peer::faces(s);
    let id_of = |p: &UdpSocket| {
        let uri = format!("udp4://{}", p.local_addr().unwrap());
        faces.iter().find(|f| f.uri == uri).expect("a face").face_id
    };
    let consumer = &peers[0];
    for (n, producer) in peers.iter().enumerate().skip(1) {
        let params = ControlParameters {
            name: Some(format!("/u/{n}").parse().unwrap()),
            face_id: Some(id_of(producer)),
            ..ControlParameters::default()
        };
        peer::command_ok(s, "rib", "register", params);
        for echo_token in [true, false] {
            let name = format!("/u/{n}/{echo_token}");
            consumer.send(&interest(&name, 4000)).unwrap();
            let (token, i) = recv_udp_interest(producer);
            assert!(token.is_some(), "Kite sends its PIT token with {name}");
            let d = data(&i.name, name.clone().into_bytes());
            let d = match echo_token {
                true => with_token(token, d),
                false => d,
            };
            producer.send(&d).unwrap();
            loop {
                match recv_udp(consumer) {
                    (_, NetPacket::Data(got)) => {
                        assert_eq!(got.name.to_string(), name);
                        break;
                    }
                    // The probe's Nack (no route), sent before any route existed.
                    (_, NetPacket::Nack(_)) => continue,
                    (_, other) => panic!("{name}: expected the Data, got {other:?}"),
                }
            }
        }
    }
}

/// An application's names under one prefix go to one shard (the NDT hashes the first two
/// components), so its two connections, first spread over the two I/O threads, end on the
/// thread that runs that shard, and the exchanges outstanding while one moves all complete
/// (the consumer would move at its 32nd Interest of a window of 64, before any Data came
/// back; the producer at its 31st Data, with the rest of the window to answer).
#[test]
fn faces_whose_packets_go_to_one_shard_move_to_its_io_thread_without_a_loss() {
    let (kite, addr) = two_io_threads_daemon("true");
    let s = kite.socket();
    let mut producer = Conn::unix(s);
    producer.register("/one");
    let mut consumer = Conn::unix(s);
    let spread = eventually(WAIT, || {
        let t = io_threads(&status(&addr)?);
        (t.len() == 2 && t.iter().all(|&(_, faces)| faces == 1)).then_some(t)
    });
    assert!(spread.is_some(), "one face per I/O thread at first");
    for round in 0..3 {
        let names: Vec<String> = (0..64).map(|n| format!("/one/p/{round}/{n}")).collect();
        for name in &names {
            consumer.send(&interest(name, 4000));
        }
        for _ in &names {
            let (token, i) = producer.recv_interest(WAIT);
            producer.send(&with_token(token, data(&i.name, b"x".to_vec())));
        }
        let mut got: Vec<String> = (0..names.len())
            .map(|_| match consumer.recv_packet(WAIT) {
                (_, NetPacket::Data(d)) => d.name.to_string(),
                (_, other) => panic!("expected a Data, got {other:?}"),
            })
            .collect();
        got.sort();
        let mut want = names.clone();
        want.sort();
        assert_eq!(got, want, "round {round}: every Data arrived");
    }
    let together = eventually(WAIT, || {
        let t = io_threads(&status(&addr)?);
        let mut faces: Vec<u64> = t.iter().map(|&(_, f)| f).collect();
        faces.sort();
        (faces == [0, 2]).then_some(faces)
    });
    assert!(
        together.is_some(),
        "both faces on one I/O thread, got {:?}",
        status(&addr).map(|v| io_threads(&v))
    );
}
