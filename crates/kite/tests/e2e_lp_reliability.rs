//! NDNLPv2 LpReliability between two `kite run` daemons joined by UDP faces through a lossy
//! relay on loopback (a thread of the test that drops a fixed share of the datagrams each
//! way, Acks included): with reliability on at both ends a `kite get` of 2 MB comes through
//! intact and the faces count retransmissions; off, nothing is retransmitted by the link. And
//! the management side: `faces/create` and `faces/update` set NFD's LpReliability flag, the
//! face dataset shows it, and a face that cannot have it is refused.

mod common;

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use common::ctl::{json, ok as ctl_ok};
use common::peer::{self, mgmt};
use common::tools::{kite, random_file, sha256_of, Put};
use common::{free_tcp_port, free_udp_port, Daemon};
use kite_mgmt_proto::nfd::{face_flag_bit, status};
use kite_mgmt_proto::ControlParameters;

/// Share of datagrams the relay drops each way, in percent.
const LOSS_PERCENT: u64 = 3;
/// Size of the object fetched across the relay.
const OBJECT: usize = 2_000_000;

/// Forwards datagrams between two daemons' UDP listeners, dropping `LOSS_PERCENT` of them
/// each way (a seeded xorshift decides, so a run is repeatable up to scheduling). A face
/// toward `a_side` reaches B; B's toward `b_side` reaches A.
struct Relay {
    a_side: u16,
    b_side: u16,
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

impl Relay {
    fn start(a_listener: u16, b_listener: u16) -> Relay {
        let a = UdpSocket::bind("127.0.0.1:0").unwrap();
        let b = UdpSocket::bind("127.0.0.1:0").unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let to = |port: u16| SocketAddr::from(([127, 0, 0, 1], port));
        let mut threads = Vec::new();
        for (from, via, dest, seed) in [
            (
                a.try_clone().unwrap(),
                b.try_clone().unwrap(),
                to(b_listener),
                0x9e37,
            ),
            (
                b.try_clone().unwrap(),
                a.try_clone().unwrap(),
                to(a_listener),
                0x7f4a,
            ),
        ] {
            let stop = stop.clone();
            from.set_read_timeout(Some(Duration::from_millis(50)))
                .unwrap();
            threads.push(std::thread::spawn(move || {
                let mut x: u64 = seed;
                let mut buf = vec![0u8; 65536];
                while !stop.load(Ordering::Relaxed) {
                    let Ok((n, _)) = from.recv_from(&mut buf) else {
                        continue;
                    };
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    if x % 100 >= LOSS_PERCENT {
                        let _ = via.send_to(&buf[..n], dest);
                    }
                }
            }));
        }
        Relay {
            a_side: a.local_addr().unwrap().port(),
            b_side: b.local_addr().unwrap().port(),
            stop,
            threads,
        }
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// A `kite face create` of a UDP face to `port` on loopback; its FaceId.
fn create_face(socket: &str, port: u16, reliability: bool) -> u64 {
    let uri = format!("udp4://127.0.0.1:{port}");
    let on = if reliability { "on" } else { "off" };
    let created = json(socket, &["face", "create", &uri, "--lp-reliability", on]);
    let flags = created["flags"].as_u64().expect("flags");
    assert_eq!(
        flags >> face_flag_bit::LP_RELIABILITY_ENABLED & 1 == 1,
        reliability
    );
    created["face_id"].as_u64().expect("face_id")
}

/// Two daemons joined through a lossy relay, a `kite put` of a random object on B and a route
/// on A; fetches it from A and returns A's and B's faces' counters.
fn fetch_through_loss(reliability: bool) -> [kite_link::FaceCounters; 2] {
    let (a_udp, b_udp) = (free_udp_port(), free_udp_port());
    let a = Daemon::loopback(a_udp, free_tcp_port());
    let b = Daemon::loopback(b_udp, free_tcp_port());
    let relay = Relay::start(a_udp, b_udp);
    let a_face = create_face(a.socket(), relay.a_side, reliability);
    let b_face = create_face(b.socket(), relay.b_side, reliability);
    ctl_ok(a.socket(), &["route", "add", "/lpr", &a_face.to_string()]);

    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    let want = random_file(&input, OBJECT, 0x6c7072);
    let _put = Put::start(b.socket(), "/lpr/object", &input, &[]);
    let output = dir.path().join("out");
    let out = kite(&[
        "get",
        "/lpr/object",
        "-o",
        output.to_str().unwrap(),
        "--socket",
        a.socket(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(sha256_of(&output), want, "the object arrived intact");
    let on_a = peer::face(a.socket(), a_face).expect("A's face");
    let on_b = peer::face(b.socket(), b_face).expect("B's face");
    eprintln!(
        "reliability {reliability}: A {:?}, B {:?}\n{stderr}",
        on_a.counters, on_b.counters
    );
    [on_a.counters, on_b.counters]
}

#[test]
fn a_lossy_link_is_repaired_by_lp_reliability() {
    let [a, b] = fetch_through_loss(true);
    // A's Interests and B's Data both cross the loss; each end resent what it lost.
    assert!(a.n_lp_retransmitted > 0, "A resent Interests: {a:?}");
    assert!(b.n_lp_retransmitted > 0, "B resent Data: {b:?}");
    assert!(a.n_lp_acks_sent > 0 && a.n_lp_acks_received > 0, "{a:?}");
    assert!(b.n_lp_acks_sent > 0 && b.n_lp_acks_received > 0, "{b:?}");
}

#[test]
fn without_lp_reliability_the_link_resends_nothing() {
    let [a, b] = fetch_through_loss(false);
    for c in [a, b] {
        let lp = [
            c.n_lp_retransmitted,
            c.n_lp_given_up,
            c.n_lp_acks_sent,
            c.n_lp_acks_received,
            c.n_lp_duplicates,
        ];
        assert_eq!(lp, [0; 5], "{c:?}");
    }
}

#[test]
fn faces_create_and_update_set_the_lp_reliability_flag() {
    let udp = free_udp_port();
    let d = Daemon::loopback(udp, free_tcp_port());
    let s = d.socket();
    let peer_port = free_udp_port();
    let id = create_face(s, peer_port, true);
    let shown = json(s, &["face", "show", &id.to_string()]);
    assert_eq!(shown["lp_reliability"], true, "{shown}");

    let update = |on: bool| {
        let mut p = ControlParameters {
            face_id: Some(id),
            ..Default::default()
        };
        p.set_flag_bit(face_flag_bit::LP_RELIABILITY_ENABLED, on);
        let body = peer::command_ok(s, "faces", "update", p);
        let flags = body.flags.expect("Flags in the answer");
        assert_eq!(flags >> face_flag_bit::LP_RELIABILITY_ENABLED & 1 == 1, on);
        let listed = peer::face(s, id).expect("the face");
        listed.flags >> face_flag_bit::LP_RELIABILITY_ENABLED & 1 == 1
    };
    assert!(!update(false), "faces/update turns it off");
    assert!(update(true), "and on again");

    // A unix face (the management client's own) cannot have it: 406, as for local fields.
    let mut client = mgmt(s);
    let mut p = ControlParameters::default();
    p.set_flag_bit(face_flag_bit::LP_RELIABILITY_ENABLED, true);
    let resp = client
        .command("faces", "update", &p, Duration::from_secs(10))
        .expect("an answer");
    assert_eq!(resp.status_code, status::NOT_ACCEPTABLE, "{resp:?}");
}

#[test]
fn a_configured_face_can_have_lp_reliability() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("kite.toml");
    let (udp, peer_port) = (free_udp_port(), free_udp_port());
    let uri = format!("udp4://127.0.0.1:{peer_port}");
    std::fs::write(
        &config,
        format!(
            "[face_system]\nlp_reliability_frames = 128\n\n[face_system.udp]\n\
             listen = [\"127.0.0.1:{udp}\"]\n\n[[face]]\nuri = \"{uri}\"\nlp_reliability = true\n"
        ),
    )
    .unwrap();
    let d = Daemon::start(
        &[],
        &[
            "--config".into(),
            config.to_str().unwrap().into(),
            "--tcp".into(),
            format!("127.0.0.1:{}", free_tcp_port()),
        ],
    );
    let shown = json(d.socket(), &["face", "show", &uri]);
    assert_eq!(shown["lp_reliability"], true, "{shown}");
}
