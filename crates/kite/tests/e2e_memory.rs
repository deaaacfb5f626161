//! What a real `kite run` keeps stays within its configured budgets, whatever the packets it
//! keeps arrived with.
//!
//! A received packet is a slice of the buffer its burst was read into (64 KiB per stream read;
//! a 256 KiB arena shared by the datagrams of a UDP channel). An attacker interleaves a packet
//! the forwarder keeps (a long-lived Interest, an unsolicited Data it caches, a fragment it
//! holds for reassembly) with junk that is dropped at once, so each kept packet would be
//! alone in its buffer. Each test runs one such attack and measures the daemon's resident
//! memory (VmRSS in /proc/PID/status) before and after: the growth must stay within what the
//! configuration bounds (the kept packets at their own size, or the table's octet budget)
//! plus 20 %, plus [`ALLOWANCE`]. Kept as slices, the same attacks held 64 KiB or 256 KiB per
//! kept packet (60-150 MB here).

mod common;

use std::io::Write;
use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use bytes::Bytes;
use common::peer::{self, data, interest, register_command, registered_face, Conn, Producer};
use common::{eventually, free_tcp_port, free_udp_port, Daemon};
use kite_fw::pcct::{Pcct, KEPT_OVERHEAD};
use kite_packet::pool::footprint;
use kite_packet::{LpHeader, LpPacket, Name, NetPacket};

const WAIT: Duration = Duration::from_secs(20);

/// Growth allowed beyond the budget, whatever the attack: what the daemon touches for the
/// first time while it runs (allocator arenas and caches of its threads, the 32 UDP receive
/// slots of 64 KiB a GRO read may fill, hash maps and slabs growing to their working size,
/// on-demand faces and their counters) and the page granularity of VmRSS. A kept slice cost
/// at least 64 KiB per kept packet, so 8 MiB is passed by the first 128 of them.
const ALLOWANCE: u64 = 8 << 20;

/// Octets of one junk element: a TLV-TYPE nobody knows, whole and well framed, so a stream
/// face drops it (counted as malformed) and keeps reading.
const JUNK_LEN: usize = 8000;

fn junk() -> Vec<u8> {
    let mut v = vec![0xC8, 0xFD, (JUNK_LEN >> 8) as u8, JUNK_LEN as u8];
    v.resize(4 + JUNK_LEN, 0x5A);
    v
}

/// The daemon's resident set in octets.
fn rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("proc status");
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS in kB");
    kib * 1024
}

/// The resident set once the daemon has worked through what was sent (it stops changing).
fn settled_rss(pid: u32) -> u64 {
    let mut last = rss(pid);
    for _ in 0..20 {
        std::thread::sleep(Duration::from_millis(100));
        let now = rss(pid);
        if now == last {
            break;
        }
        last = now;
    }
    last
}

/// Asserts the growth from `before` to `after` is within `budget` + 20 % + [`ALLOWANCE`].
fn assert_within(what: &str, before: u64, after: u64, budget: u64) {
    let growth = after.saturating_sub(before);
    let limit = budget + budget / 5 + ALLOWANCE;
    eprintln!("{what}: RSS {before} -> {after} (+{growth}), budget {budget}, limit {limit}");
    assert!(
        growth <= limit,
        "{what}: RSS grew by {growth} octets, over {limit} (budget {budget} + 20 % + {ALLOWANCE})"
    );
}

/// What one pending Interest may hold: its copy, the allocation overhead, a PCCT entry and a
/// PIT entry.
fn per_pending(interest_len: usize) -> u64 {
    (footprint(interest_len) + KEPT_OVERHEAD + Pcct::ENTRY_BYTES + Pcct::PIT_ENTRY_BYTES) as u64
}

fn at(port: u16) -> SocketAddr {
    format!("127.0.0.1:{port}").parse().unwrap()
}

#[test]
fn pending_interests_from_a_stream_do_not_keep_its_read_buffers() {
    let kite = Daemon::local(&[]);
    let producer = Producer::start(kite.socket(), "/pin", Box::new(|_| None));
    let mut attacker = Conn::unix(kite.socket());
    let junk = junk();
    // One long-lived Interest, then 62 KB of junk: about one Interest per 64 KiB read.
    let mut send = |i: usize| {
        let mut w = interest(&format!("/pin/{i}"), 60_000).to_vec();
        for _ in 0..7 {
            w.extend_from_slice(&junk);
        }
        attacker.send(&w);
    };
    for i in 0..64 {
        send(i);
    }
    producer.interests(64, WAIT);
    let before = settled_rss(kite.pid());
    const N: usize = 1000;
    for i in 64..64 + N {
        send(i);
    }
    producer.interests(N, WAIT);
    let len = interest("/pin/1000", 60_000).len();
    let after = settled_rss(kite.pid());
    assert_within("unix PIT", before, after, N as u64 * per_pending(len));
}

#[test]
fn pending_interests_from_udp_do_not_keep_the_channels_arena() {
    let port = free_udp_port();
    let kite = Daemon::start(
        &[],
        &[
            "--udp".into(),
            at(port).to_string(),
            "--tcp".into(),
            at(free_tcp_port()).to_string(),
        ],
    );
    let producer = Producer::start(kite.socket(), "/pin", Box::new(|_| None));
    let attacker = UdpSocket::bind("127.0.0.1:0").unwrap();
    let junk = junk();
    // One long-lived Interest, then 248 KB of junk datagrams: about one per 256 KiB arena.
    let send = |i: usize| {
        attacker
            .send_to(&interest(&format!("/pin/{i}"), 60_000), at(port))
            .unwrap();
        producer.interests(1, WAIT);
        for _ in 0..31 {
            attacker.send_to(&junk, at(port)).unwrap();
        }
    };
    for i in 0..16 {
        send(i);
    }
    let before = settled_rss(kite.pid());
    const N: usize = 300;
    for i in 16..16 + N {
        send(i);
    }
    let len = interest("/pin/1000", 60_000).len();
    let after = settled_rss(kite.pid());
    assert_within("UDP PIT", before, after, N as u64 * per_pending(len));
}

#[test]
fn the_cs_stays_within_its_octet_capacity_whatever_shared_its_datagrams() {
    let port = free_udp_port();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("kite.toml");
    std::fs::write(
        &config,
        "[tables.cs]\nunsolicited_policy = \"admit-all\"\ncapacity = 10000\n",
    )
    .unwrap();
    const CS_BYTES: u64 = 256 << 10;
    let kite = Daemon::start(
        &[],
        &[
            "--udp".into(),
            at(port).to_string(),
            "--tcp".into(),
            at(free_tcp_port()).to_string(),
            "--config".into(),
            config.display().to_string(),
            "--cs-capacity-bytes".into(),
            CS_BYTES.to_string(),
        ],
    );
    let attacker = UdpSocket::bind("127.0.0.1:0").unwrap();
    let junk = junk();
    // A 100-octet unsolicited Data, then 248 KB of junk datagrams, paced so the socket
    // buffer does not overflow.
    let send = |i: usize| {
        let name: Name = format!("/cs/{i}").parse().unwrap();
        attacker
            .send_to(&data(&name, vec![7u8; 100]), at(port))
            .unwrap();
        for _ in 0..31 {
            attacker.send_to(&junk, at(port)).unwrap();
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    for i in 0..16 {
        send(i);
    }
    eventually(WAIT, || {
        (peer::cs_info(kite.socket()).n_cs_entries >= 16).then_some(())
    })
    .expect("unsolicited Data is cached");
    let before = settled_rss(kite.pid());
    for i in 16..2016 {
        send(i);
    }
    let after = settled_rss(kite.pid());
    assert_within("CS", before, after, CS_BYTES);
    // The entries are bounded by the octet capacity, not the count (10000).
    let name: Name = "/cs/1000".parse().unwrap();
    let charge = footprint(data(&name, vec![7u8; 100]).len())
        + footprint(name.value().len())
        + 2 * KEPT_OVERHEAD;
    let cached = peer::cs_info(kite.socket()).n_cs_entries;
    assert!(
        cached > 16 && cached <= CS_BYTES / charge as u64,
        "{cached} entries of {charge} octets in {CS_BYTES}"
    );
}

#[test]
fn partial_packets_from_many_ports_stay_within_the_channels_reassembly_budget() {
    let port = free_udp_port();
    const BUDGET: u64 = 256 << 10;
    let kite = Daemon::start(
        &[],
        &[
            "--udp".into(),
            at(port).to_string(),
            "--tcp".into(),
            at(free_tcp_port()).to_string(),
            "--reassembly-bytes".into(),
            BUDGET.to_string(),
        ],
    );
    let junk = junk();
    // 20 source ports (20 on-demand faces), 5 partial packets each, each kept alive by one
    // more small fragment every 300 ms, each fragment followed by junk that fills its arena.
    let senders: Vec<UdpSocket> = (0..20)
        .map(|_| UdpSocket::bind("127.0.0.1:0").unwrap())
        .collect();
    let fragment = |seq: u64, index: u64| {
        LpPacket {
            header: LpHeader {
                sequence: Some(seq + index),
                frag_index: Some(index),
                frag_count: Some(400),
                ..LpHeader::default()
            },
            fragment: Some(Bytes::from_static(&[0x11; 20])),
        }
        .encode()
    };
    let round = |index: u64| {
        let start = Instant::now();
        for s in &senders {
            for p in 0..5u64 {
                s.send_to(&fragment(p * 1000, index), at(port)).unwrap();
                for _ in 0..31 {
                    s.send_to(&junk, at(port)).unwrap();
                }
                std::thread::sleep(Duration::from_micros(500));
            }
        }
        std::thread::sleep(Duration::from_millis(300).saturating_sub(start.elapsed()));
    };
    round(0);
    let before = settled_rss(kite.pid());
    for index in 1..4 {
        round(index);
    }
    // Measured at once: the partials live only while fragments keep coming.
    std::thread::sleep(Duration::from_millis(100));
    assert_within("reassembly", before, rss(kite.pid()), BUDGET);
}

#[test]
fn routes_registered_by_commands_do_not_keep_the_commands_read_buffers() {
    let kite = Daemon::local(&[]);
    let mut app = Conn::unix(kite.socket());
    let junk = junk();
    // Each rib/register command followed by 62 KB of junk in the same write.
    let mut register = |i: usize| {
        let mut w = register_command(&format!("/route/{i}")).to_vec();
        for _ in 0..7 {
            w.extend_from_slice(&junk);
        }
        app.send(&w);
        loop {
            if let (_, NetPacket::Data(d)) = app.recv_packet(WAIT) {
                if registered_face(&d).is_some() {
                    return;
                }
            }
        }
    };
    for i in 0..32 {
        register(i);
    }
    let before = settled_rss(kite.pid());
    const N: usize = 500;
    for i in 32..32 + N {
        register(i);
    }
    // A RIB route and a FIB entry take under 2 KiB together (`kite bench fwd` measures a FIB
    // entry at about 750 octets), plus the command they were decoded from.
    let per_route = register_command("/route/1000").len() as u64 + 2048;
    let after = settled_rss(kite.pid());
    assert_within("routes", before, after, N as u64 * per_route);
}

#[test]
fn connections_that_stop_reading_hold_no_more_than_the_output_queue_budget() {
    const BUDGET: u64 = 4 << 20;
    let kite = Daemon::local(&["--output-queue-bytes", &BUDGET.to_string()]);
    let _producer = Producer::start(
        kite.socket(),
        "/big",
        Box::new(|_| Some(Bytes::from(vec![0x42; 8000]))),
    );
    // Every Data is cached once, through a connection that reads.
    const NAMES: usize = 1100;
    let mut reader = Conn::unix(kite.socket());
    for i in 0..NAMES {
        reader.fetch(&format!("/big/{i}"), WAIT);
    }
    let before = settled_rss(kite.pid());
    // Connections that ask for all of it and never read: each face's queue alone could hold
    // 1,024 frames of 8 KB (32 faces: 260 MB).
    let mut burst = Vec::new();
    for i in 0..NAMES {
        burst.extend_from_slice(&interest(&format!("/big/{i}"), 60_000));
    }
    let stalled: Vec<Conn> = (0..32)
        .map(|_| {
            let mut c = Conn::unix(kite.socket());
            c.send(&burst);
            c
        })
        .collect();
    // Each of them ends up dropping: past the budget (or, without it, past 1,024 frames).
    let dropping = || {
        (peer::faces(kite.socket()).iter())
            .filter(|f| f.counters.n_out_queue_full > 0)
            .count()
    };
    eventually(WAIT, || (dropping() == stalled.len()).then_some(()))
        .unwrap_or_else(|| panic!("{} of 32 faces dropped frames", dropping()));
    let after = settled_rss(kite.pid());
    assert_within("output queues", before, after, BUDGET);
    drop(stalled);
}

#[test]
fn idle_websocket_connections_hold_little_each() {
    let ws = free_tcp_port();
    let kite = Daemon::local(&["--ws", &format!("127.0.0.1:{ws}")]);
    let connect = || {
        let stream = std::net::TcpStream::connect(at(ws)).unwrap();
        let (mut conn, _) = tungstenite::client(format!("ws://{}/", at(ws)), stream).unwrap();
        // The first octet of a binary message, never finished: the face reads and waits.
        conn.get_mut().write_all(&[0x82]).unwrap();
        conn
    };
    let warm: Vec<_> = (0..16).map(|_| connect()).collect();
    let before = settled_rss(kite.pid());
    const N: u64 = 500;
    let idle: Vec<_> = (0..N).map(|_| connect()).collect();
    let after = settled_rss(kite.pid());
    // A face, its queue and the WebSocket reader's 16 KiB buffer: under 32 KiB. With
    // tungstenite's default reader (128 KiB, filled before each read) it was 132 KiB.
    assert_within("idle WebSocket connections", before, after, N * (32 << 10));
    drop((warm, idle));
}
