//! `kite run --http3`: WebTransport sessions as a browser opens them (a quinn-proto client
//! pinning the certificate hash the daemon logged, over a real UDP socket), each a face
//! whose datagrams carry NDN packets; what a hostile client sends harms no other session;
//! the listener's session limit gives up the idlest.

mod common;

use std::net::{SocketAddr, UdpSocket};
use std::process::{Command, Stdio};
use std::time::Duration;

use bytes::Bytes;
use common::ctl;
use common::tools::PingServer;
use common::webtransport::{logged_hash, WtClient};
use common::{free_udp_port, Daemon};
use serde_json::Value;

const LIMIT: Duration = Duration::from_secs(5);

/// A daemon with a WebTransport listener on 127.0.0.1 (and `args`), its address and the
/// certificate hash it logged.
fn daemon(args: &[&str]) -> (Daemon, SocketAddr, [u8; 32]) {
    let addr: SocketAddr = format!("127.0.0.1:{}", free_udp_port()).parse().unwrap();
    let a = addr.to_string();
    let mut all = vec!["--http3", a.as_str()];
    all.extend(args);
    let d = Daemon::local(&all);
    let hash = logged_hash(&d.log_text());
    (d, addr, hash)
}

fn interest(name: &str, nonce: u32) -> Bytes {
    kite_testkit::packet::interest(name, nonce, 4000)
}

/// Whether `d` is a Data (its name is not checked: the only Interest out was its own).
fn is_data(d: &[u8]) -> bool {
    d.first() == Some(&0x06)
}

/// The face whose remote is `c`, as `kite face list --json` shows it.
fn face_of(d: &Daemon, c: &WtClient) -> Option<Value> {
    ctl::find_face(d.socket(), &format!("quic://{}", c.addr()))
}

#[test]
fn an_interest_over_a_session_gets_its_data_and_the_face_is_listed() {
    let (d, addr, hash) = daemon(&[]);
    let _server = PingServer::start(d.socket(), "/wt");
    let mut c = WtClient::open(addr, "/ndn", hash);
    assert_eq!(c.status(), Some(200), "{}", d.log_text());
    let data = c.express(&interest("/wt/ping/1", 1), LIMIT).expect("Data");
    assert!(is_data(&data), "{data:?}");
    let face = face_of(&d, &c).expect("listed");
    assert_eq!(face["scope"], "non-local");
    assert_eq!(face["persistency"], "on-demand");
    assert_eq!(face["link_type"], "point-to-point");
    assert_eq!(face["local_uri"], format!("quic://{addr}"));
    assert!(face["mtu"].as_u64().unwrap() >= 1100, "{face}");
    assert_eq!(face["counters"]["in_interests"], 1);
    let channels = ctl::json(d.socket(), &["channel", "list"]);
    let ch = (channels.as_array().unwrap().iter())
        .find(|c| c["local_uri"] == format!("quic://{addr}"))
        .unwrap_or_else(|| panic!("{channels}"));
    let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(ch["cert_sha256"], hex.as_str(), "where operators look");
    let table = ctl::ok(d.socket(), &["channel", "list"]);
    assert!(table.contains(&format!("cert sha-256 {hex}")), "{table}");
}

#[test]
fn the_face_mtu_follows_path_mtu_discovery_and_a_large_data_arrives_in_fragments_of_it() {
    let (d, addr, hash) = daemon(&[]);
    let _ping = PingServer::start(d.socket(), "/wt");
    let put = d.dir().join("big");
    std::fs::write(&put, vec![7u8; 4000]).unwrap();
    let mut server = Command::new(env!("CARGO_BIN_EXE_kite"))
        .args(["poke", "/wt/big", put.to_str().unwrap()])
        .args(["--socket", d.socket()])
        .env_remove("NDN_CLIENT_TRANSPORT")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let mut c = WtClient::open(addr, "/ndn", hash);
    // QUIC's path MTU discovery probes past the 1200 octets it starts with (loopback takes
    // what quinn-proto probes at most, 1452) while the session carries traffic.
    let mut n = 100;
    let mtu = common::eventually(LIMIT, || {
        n += 1;
        let _ = c.express(
            &interest(&format!("/wt/ping/{n}"), n),
            Duration::from_millis(200),
        );
        let mtu = face_of(&d, &c)?["mtu"].as_u64()?;
        (mtu > 1300).then_some(mtu as usize)
    });
    let mtu = mtu.unwrap_or_else(|| panic!("the face's MTU stayed: {:?}", face_of(&d, &c)));
    c.client.send(&interest("/wt/big", 3)).unwrap();
    let mut frags = Vec::new();
    c.drive(LIMIT, |cl| {
        // NDNLPv2 LpPackets (type 0x64); a ping's late Data is not one.
        frags.extend(std::iter::from_fn(|| cl.recv()).filter(|f| f[0] == 0x64));
        frags.len() >= 3
    });
    // Each within the face's MTU (discovery may have raised it further meanwhile), the
    // first past what QUIC's smallest path carries.
    let mtu = face_of(&d, &c).unwrap()["mtu"]
        .as_u64()
        .unwrap()
        .max(mtu as u64) as usize;
    assert!(frags.len() >= 3, "{} fragments", frags.len());
    assert!(frags.iter().all(|f| f.len() <= mtu), "{mtu}");
    assert!(frags[0].len() > 1300, "{}", frags[0].len());
    let _ = server.kill();
    let _ = server.wait();
}

#[test]
fn another_path_is_answered_404_and_makes_no_listed_session_of_use() {
    let (d, addr, hash) = daemon(&[]);
    let mut c = WtClient::open(addr, "/nope", hash);
    assert_eq!(c.status(), Some(404));
    let ok = WtClient::open(addr, "/ndn", hash);
    assert_eq!(ok.status(), Some(200));
    let _ = c.express(&interest("/wt/ping/3", 3), Duration::from_millis(300));
    let face = face_of(&d, &c).expect("its QUIC connection is a face");
    assert_eq!(face["counters"]["in_interests"], 0, "{face}");
}

#[test]
fn hostile_datagrams_and_streams_do_not_hurt_another_session() {
    let (d, addr, hash) = daemon(&[]);
    let _server = PingServer::start(d.socket(), "/wt");
    let mut good = WtClient::open(addr, "/ndn", hash);
    let mut bad = WtClient::open(addr, "/ndn", hash);
    assert_eq!((good.status(), bad.status()), (Some(200), Some(200)));
    // Junk in the session: another session's id, no id, malformed packets, streams.
    for d in [
        &[0x05u8, 1, 2][..],
        &[],
        &[0x3f; 500],
        &[0x05, 0xff, 0xff, 0xff],
    ] {
        let _ = bad.client.send_raw(Bytes::copy_from_slice(d));
    }
    let _ = bad.client.send(&[0x05, 0x10, 0x07]);
    let _ = bad.client.send(&[0xff; 1000]);
    bad.client.open_stream(true, &[0x01, 0x10, 0xff, 0xff]);
    bad.client.open_stream(false, &[0x54; 2000]);
    bad.drive(Duration::from_millis(300), |_| false);
    // Junk at the listener: datagrams too short or too long to open a session, a fake
    // Initial, a flood of short headers.
    let raw = UdpSocket::bind("127.0.0.1:0").unwrap();
    let mut fake = vec![0xc0, 0, 0, 0, 1];
    fake.resize(1250, 0xaa);
    for d in [&[0x40u8; 30][..], &[0u8; 3000], &fake[..], &[0x41; 1200]] {
        raw.send_to(d, addr).unwrap();
    }
    for _ in 0..200 {
        raw.send_to(&[0x40; 60], addr).unwrap();
    }
    let data = good.express(&interest("/wt/ping/4", 4), LIMIT);
    assert!(data.is_some_and(|d| is_data(&d)));
    let data = bad.express(&interest("/wt/ping/5", 5), LIMIT);
    assert!(
        data.is_some_and(|d| is_data(&d)),
        "the hostile session still works too"
    );
    let face = face_of(&d, &bad).unwrap();
    assert!(
        face["drops"]["in_malformed"].as_u64().unwrap() >= 5,
        "{face}"
    );
    let channels = ctl::json(d.socket(), &["channel", "list"]);
    let ch = (channels.as_array().unwrap().iter())
        .find(|c| c["local_uri"] == format!("quic://{addr}"))
        .unwrap();
    assert!(ch["drops"]["malformed"].as_u64().unwrap() >= 200, "{ch}");
    assert!(ch["drops"]["truncated"].as_u64().unwrap() >= 1, "{ch}");
}

#[test]
fn a_full_listener_gives_up_its_idlest_session() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("kite.toml");
    std::fs::write(&config, "[face_system.http3]\nmax_sessions = 2\n").unwrap();
    let (d, addr, hash) = daemon(&["--config", config.to_str().unwrap()]);
    let _server = PingServer::start(d.socket(), "/wt");
    let mut a = WtClient::open(addr, "/ndn", hash);
    assert!(a.express(&interest("/wt/ping/6", 6), LIMIT).is_some());
    let mut b = WtClient::open(addr, "/ndn", hash);
    assert!(b.express(&interest("/wt/ping/7", 7), LIMIT).is_some());
    let mut c = WtClient::open(addr, "/ndn", hash);
    assert_eq!(c.status(), Some(200));
    // The session that received longest ago went, and its client was told.
    assert!(a.drive(LIMIT, |cl| cl.is_closed()), "a was not closed");
    assert!(face_of(&d, &a).is_none());
    assert!(face_of(&d, &b).is_some() && face_of(&d, &c).is_some());
    assert!(c.express(&interest("/wt/ping/8", 8), LIMIT).is_some());
}

#[test]
fn sighup_gives_new_sessions_a_new_certificate_and_open_ones_go_on() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("kite.toml");
    std::fs::write(&config, "[face_system.http3]\nidle_timeout = 60\n").unwrap();
    let (d, addr, old) = daemon(&["--config", config.to_str().unwrap()]);
    let _server = PingServer::start(d.socket(), "/wt");
    let mut open = WtClient::open(addr, "/ndn", old);
    assert_eq!(open.status(), Some(200));
    common::signal(d.pid(), "HUP");
    let replaced = common::eventually(LIMIT, || {
        d.log_text().contains("certificate replaced").then_some(())
    });
    assert!(replaced.is_some(), "{}", d.log_text());
    let new = logged_hash(&d.log_text());
    assert_ne!(new, old, "a self-signed certificate is made again");
    let mut refused = WtClient::open(addr, "/ndn", old);
    assert_eq!(
        refused.status(),
        None,
        "the old hash no longer opens a session"
    );
    refused.drive(LIMIT, |c| c.is_closed());
    let fresh = WtClient::open(addr, "/ndn", new);
    assert_eq!(fresh.status(), Some(200));
    let data = open.express(&interest("/wt/ping/9", 9), LIMIT);
    assert!(
        data.is_some_and(|d| is_data(&d)),
        "the open session goes on"
    );
}
