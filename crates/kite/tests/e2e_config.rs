//! `kite run --config FILE`: the file's face, route and strategy exist once the daemon is up
//! and carry traffic; flags override the file; a bad file or a face that cannot be created
//! stops the start with a message naming the problem.

mod common;

use std::net::UdpSocket;
use std::path::{Path, PathBuf};
use std::time::Duration;

use common::ctl::{json, kite};
use common::tools::run_to_exit;
use common::{free_udp_port, Daemon};
use kite_app::Client;
use kite_packet::signature::DigestSha256;
use kite_packet::{Data, Interest, LpHeader, LpPacket, Name};

fn write_config(dir: &Path, text: &str) -> PathBuf {
    let path = dir.join("kite.toml");
    std::fs::write(&path, text).expect("write the configuration");
    path
}

/// Answers one Interest arriving at `peer` with a Data of the same name, echoing the PIT token.
fn answer_one(peer: &UdpSocket) -> Name {
    let mut buf = [0u8; 9000];
    let (n, from) = peer
        .recv_from(&mut buf)
        .expect("an Interest reaches the peer");
    let lp = LpPacket::decode(bytes::Bytes::copy_from_slice(&buf[..n])).expect("an NDN frame");
    let interest = Interest::decode(lp.fragment.expect("a packet")).expect("an Interest");
    let data = Data::new(interest.name.clone(), &b"from the peer"[..])
        .sign(&DigestSha256)
        .expect("signed");
    let reply = LpPacket {
        header: LpHeader {
            pit_token: lp.header.pit_token,
            ..LpHeader::default()
        },
        fragment: Some(data),
    };
    peer.send_to(&reply.encode(), from).expect("reply");
    interest.name
}

#[test]
fn the_files_face_route_and_strategy_exist_and_carry_traffic() {
    let dir = tempfile::tempdir().unwrap();
    let peer = UdpSocket::bind("127.0.0.1:0").unwrap();
    peer.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let peer_uri = format!("udp4://{}", peer.local_addr().unwrap());
    let udp = free_udp_port();
    let config = write_config(
        dir.path(),
        &format!(
            r#"
[forwarder]
threads = 1

[face_system.unix]
path = "/nonexistent/kite/nfd.sock"   # --socket overrides it

[face_system.udp]
listen = ["127.0.0.1:{udp}"]

[face_system.tcp]
listen = []

[tables.strategy_choice]
"/config" = "multicast"

[[face]]
uri = "{peer_uri}"
persistency = "permanent"
mtu = 1400

[[route]]
prefix = "/config/test"
face = "{peer_uri}"
cost = 7
origin = "nlsr"
"#
        ),
    );
    let daemon = Daemon::start(&[], &["--config".into(), config.display().to_string()]);
    let s = daemon.socket();

    let faces = json(s, &["face", "list"]);
    let face = faces
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["uri"] == peer_uri.as_str())
        .unwrap_or_else(|| panic!("the configured face in {faces}"));
    assert_eq!(face["persistency"], "permanent", "{face}");
    assert_eq!(face["mtu"], 1400, "{face}");
    assert_eq!(
        face["local_uri"],
        format!("udp4://127.0.0.1:{udp}"),
        "{face}"
    );
    let face_id = face["face_id"].as_u64().unwrap();

    let rib = json(s, &["route", "list"]);
    let entry = rib
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["prefix"] == "/config/test")
        .unwrap_or_else(|| panic!("the configured route in {rib}"));
    let route = &entry["routes"][0];
    assert_eq!(route["face_id"], face_id, "{entry}");
    assert_eq!(route["cost"], 7, "{entry}");
    assert_eq!(route["origin_name"], "nlsr", "{entry}");
    assert_eq!(route["child_inherit"], true, "{entry}");

    let fib = json(s, &["fib"]);
    assert!(
        fib.to_string().contains("/config/test"),
        "the route reached the FIB: {fib}"
    );
    let strategies = json(s, &["strategy", "list"]);
    let choice = strategies
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["prefix"] == "/config")
        .unwrap_or_else(|| panic!("the configured strategy in {strategies}"));
    assert!(
        choice["strategy"]
            .as_str()
            .unwrap()
            .starts_with("/localhost/nfd/strategy/multicast"),
        "{choice}"
    );

    // The route carries a local consumer's Interest to the peer and the Data back.
    let socket = s.to_owned();
    let consumer = std::thread::spawn(move || {
        let mut client = Client::connect_unix(&socket).expect("connect");
        let interest = Interest::new("/config/test/x".parse::<Name>().unwrap());
        client.express(&interest, Duration::from_secs(10))
    });
    let asked = answer_one(&peer);
    assert_eq!(asked, "/config/test/x".parse::<Name>().unwrap());
    let data = consumer.join().unwrap().expect("the Data comes back");
    assert_eq!(data.content.as_deref(), Some(&b"from the peer"[..]));
}

#[test]
fn a_bad_file_stops_the_start_naming_file_line_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(
        dir.path(),
        "[face_system]\nlocal_only = true\nlocal_onyl = true\n",
    );
    let socket = dir.path().join("nfd.sock");
    let out = run_to_exit(
        &[
            "--config",
            config.to_str().unwrap(),
            "--socket",
            socket.to_str().unwrap(),
        ],
        &[],
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "{}:3:1: unknown key `local_onyl`",
            config.display()
        )),
        "{err}"
    );
    assert!(!socket.exists(), "nothing was started");

    let missing = dir.path().join("missing.toml");
    let out = run_to_exit(&["--config", missing.to_str().unwrap()], &[]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cannot read") && err.contains("missing.toml"),
        "{err}"
    );
}

#[test]
fn a_face_that_cannot_be_created_stops_the_start() {
    let dir = tempfile::tempdir().unwrap();
    // Without UDP listeners (local_only) there is no channel a UDP face could use. (A TCP
    // peer that is down does not stop the start: e2e_service.)
    let port = free_udp_port();
    let config = write_config(
        dir.path(),
        &format!(
            "[face_system]\nlocal_only = true\n\n[[face]]\nuri = \"udp4://127.0.0.1:{port}\"\n"
        ),
    );
    let socket = dir.path().join("nfd.sock");
    let out = run_to_exit(
        &[
            "--config",
            config.to_str().unwrap(),
            "--socket",
            socket.to_str().unwrap(),
        ],
        &[],
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "face udp4://127.0.0.1:{port}: faces/create answered 406"
        )),
        "{err}"
    );
    assert!(err.contains(&config.display().to_string()), "{err}");
    assert!(!socket.exists(), "the socket is removed");
}

#[test]
fn print_config_merges_file_and_flags_and_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(
        dir.path(),
        "[forwarder]\nthreads = 2\n\n[tables.cs]\ncapacity = 100\n\n[[face]]\nuri = \"udp://127.0.0.1:7777\"\n",
    );
    let out = run_to_exit(
        &[
            "--config",
            config.to_str().unwrap(),
            "--print-config",
            "--threads",
            "3",
            "--socket",
            "/tmp/kite-print.sock",
        ],
        &[],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let printed: toml::Table = text.parse().expect("TOML");
    assert_eq!(
        printed["forwarder"]["threads"].as_integer(),
        Some(3),
        "{text}"
    );
    assert_eq!(printed["tables"]["cs"]["capacity"].as_integer(), Some(100));
    assert_eq!(
        printed["face_system"]["unix"]["path"].as_str(),
        Some("/tmp/kite-print.sock")
    );
    assert_eq!(
        printed["face"][0]["uri"].as_str(),
        Some("udp4://127.0.0.1:7777")
    );

    // What it printed is itself a configuration that checks.
    let again = write_config(dir.path(), &text);
    let out = run_to_exit(
        &["--config", again.to_str().unwrap(), "--print-config"],
        &[],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8(out.stdout).unwrap(), text);
}

#[test]
fn run_help_mentions_the_configuration_file() {
    let out = kite().args(["run", "--help"]).output().unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    assert!(help.contains("--config <FILE>"), "{help}");
    assert!(help.contains("--print-config"), "{help}");
}
