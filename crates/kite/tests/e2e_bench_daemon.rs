//! `kite bench daemon --forwarder` against a real `kite run`: over its unix socket, and over
//! its UDP listener, where the consumer and the producer get on-demand faces and the prefix is
//! registered for the producer's face through the unix socket. Data must flow both ways; with
//! a UDP MTU below the Data size the load generator reassembles the forwarder's fragments.

mod common;

use std::process::{Command, Output};

use common::Daemon;
use serde_json::Value;

fn bench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kite"))
        .args(["bench", "daemon", "--duration", "1s", "--json"])
        .args(args)
        .output()
        .expect("run kite bench daemon")
}

/// The JSON summary of a run that must have succeeded.
fn summary(args: &[&str]) -> Value {
    let o = bench(args);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "kite bench daemon {args:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_str(out.lines().last().expect("output")).expect("the last line is JSON")
}

fn udp_daemon(udp: u16, extra: &[String]) -> Daemon {
    let mut args = vec![
        "--udp".to_string(),
        format!("127.0.0.1:{udp}"),
        "--tcp".to_string(),
        format!("127.0.0.1:{}", common::free_tcp_port()),
    ];
    args.extend_from_slice(extra);
    Daemon::start(&[], &args)
}

#[test]
fn data_flows_over_unix_and_over_udp_faces() {
    let udp = common::free_udp_port();
    let d = udp_daemon(udp, &[]);
    let v = summary(&["--forwarder", d.socket()]);
    assert_eq!(v["transport"], "unix");
    assert!(v["received"].as_u64().unwrap() > 0, "{v}");
    assert_eq!(v["nacks"], 0, "{v}");

    let uri = format!("udp://127.0.0.1:{udp}");
    for payload in ["1000", "8000"] {
        let v = summary(&[
            "--forwarder",
            &uri,
            "--control",
            d.socket(),
            "--payload",
            payload,
        ]);
        assert_eq!(v["transport"], "udp");
        assert_eq!(v["forwarder"], format!("udp4://127.0.0.1:{udp}"));
        assert!(v["received"].as_u64().unwrap() > 0, "{v}");
        assert_eq!(v["nacks"], 0, "{v}");
        // Kite's UDP MTU (8800) carries 8000-octet Data in one datagram.
        assert_eq!(v["fragments"], 0, "{v}");
        assert!(v["goodput_mbit_per_sec"].as_f64().unwrap() > 0.0, "{v}");
    }
    let log = d.log_text();
    assert!(
        log.matches("remote=udp4://127.0.0.1:").count() >= 4,
        "each UDP run made two on-demand faces: {log}"
    );
}

#[test]
fn fragmented_data_is_reassembled() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("kite.toml");
    std::fs::write(&config, "[face_system.udp]\nmtu = 1400\n").unwrap();
    let udp = common::free_udp_port();
    let d = udp_daemon(udp, &["--config".into(), config.display().to_string()]);
    let v = summary(&[
        "--forwarder",
        &format!("udp://127.0.0.1:{udp}"),
        "--control",
        d.socket(),
        "--payload",
        "8000",
    ]);
    let received = v["received"].as_u64().unwrap();
    assert!(received > 0, "{v}");
    assert!(
        v["fragments"].as_u64().unwrap() >= 6 * received,
        "8000-octet Data cut to 1400 octets is at least 6 fragments: {v}"
    );
}

#[test]
fn no_udp_listener_is_an_error() {
    let d = Daemon::local(&[]);
    let port = common::free_udp_port();
    let o = bench(&[
        "--forwarder",
        &format!("udp://127.0.0.1:{port}"),
        "--control",
        d.socket(),
    ]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("is a forwarder listening there?"), "{err}");
    let o = bench(&["--forwarder", "tcp://127.0.0.1:6363"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("give a unix socket or udp://"));
}
