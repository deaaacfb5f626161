//! `kite`'s control commands against a real `kite run`: every verb changes what the next
//! listing shows, and errors come back as NFD's status with a non-zero exit.

mod common;

use common::ctl::{err, json, ok};
use common::{ctl, free_tcp_port, free_udp_port, Daemon};

fn face_ids(socket: &str) -> Vec<u64> {
    json(socket, &["face", "list"])
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["face_id"].as_u64().unwrap())
        .collect()
}

#[test]
fn every_verb_against_a_running_forwarder() {
    let daemon = Daemon::loopback(free_udp_port(), free_tcp_port());
    let s = daemon.socket();

    let status = json(s, &["status"]);
    assert!(status.to_string().contains("kite-"), "version in {status}");
    assert!(face_ids(s).starts_with(&[1, 254, 255]));

    // faces: create, a second create names the existing face, destroy
    let peer = format!("udp4://127.0.0.1:{}", free_udp_port());
    let created = ok(s, &["face", "create", &peer]);
    let id = ctl::created_face_id(&created);
    assert!(ok(s, &["face", "create", &peer]).contains(&format!("face-exists id={id}")));
    assert!(face_ids(s).contains(&id));
    let shown = json(s, &["face", "show", &id.to_string()]);
    assert!(shown.to_string().contains(&peer), "{shown}");
    assert!(err(s, &["face", "show", "9999"]).contains("not found"));
    let shown = shown.to_string();
    assert!(
        shown.contains("\"congestion_marking\":true"),
        "NFD's default: {shown}"
    );
    assert!(
        shown.contains("\"base_congestion_marking_interval_ns\":100000000"),
        "{shown}"
    );

    // congestion marking chosen at creation
    let quiet = format!("udp4://127.0.0.1:{}", free_udp_port());
    let created = ok(
        s,
        &[
            "face",
            "create",
            &quiet,
            "--congestion-marking",
            "off",
            "--congestion-marking-interval",
            "50",
            "--default-congestion-threshold",
            "10000",
        ],
    );
    let qid = ctl::created_face_id(&created).to_string();
    let shown = json(s, &["face", "show", &qid]).to_string();
    assert!(shown.contains("\"congestion_marking\":false"), "{shown}");
    assert!(
        shown.contains("\"base_congestion_marking_interval_ns\":50000000"),
        "{shown}"
    );
    assert!(
        shown.contains("\"default_congestion_threshold_bytes\":10000"),
        "{shown}"
    );

    // routes feed the FIB; removing them empties it
    let sid = id.to_string();
    ok(s, &["route", "add", "/ctl", &sid, "--cost", "7"]);
    let routes = json(s, &["route", "list"]).to_string();
    assert!(
        routes.contains("\"/ctl\"") && routes.contains("\"cost\":7"),
        "{routes}"
    );
    let fib = json(s, &["fib", "list"]).to_string();
    assert!(fib.contains("/ctl"), "{fib}");
    ok(s, &["route", "remove", "/ctl", &sid]);
    assert!(!json(s, &["fib", "list"]).to_string().contains("/ctl"));

    // strategies: set, listed, unknown refused with 404, unset
    ok(s, &["strategy", "set", "/ctl", "multicast"]);
    assert!(json(s, &["strategy", "list"])
        .to_string()
        .contains("multicast"));
    assert!(err(s, &["strategy", "set", "/ctl", "no-such-strategy"]).contains("404"));
    ok(s, &["strategy", "unset", "/ctl"]);
    assert!(!json(s, &["strategy", "list"]).to_string().contains("/ctl"));

    // content store: capacity and flags, erase
    let cs = json(s, &["cs", "config", "--capacity", "100", "--admit", "off"]);
    assert_eq!(
        (cs["capacity"].as_u64(), cs["admit"].as_bool()),
        (Some(100), Some(false))
    );
    ok(s, &["cs", "erase", "/ctl"]);
    let info = json(s, &["cs", "info"]).to_string();
    assert!(info.contains("100"), "{info}");

    ok(s, &["face", "destroy", &sid]);
    assert!(!face_ids(s).contains(&id));
}

#[test]
fn a_missing_forwarder_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nothing.sock");
    let e = err(path.to_str().unwrap(), &["status"]);
    assert!(e.contains("may not be running"), "{e}");
}

#[test]
fn face_events_reach_a_subscriber() {
    use kite_mgmt_proto::nfd::FaceEventKind;
    use kite_mgmt_proto::{FaceEventNotification, Tlv};
    use kite_packet::{Interest, Name};
    use std::time::Duration;

    let daemon = Daemon::local(&[]);
    let socket = daemon.socket().to_string();
    let mut subscriber = kite_app::Client::connect_unix(&socket).unwrap();
    // The daemon's readiness probe closes its own connection at a moment of its choosing: its
    // DESTROYED event may be the first one the subscription sees. Each round subscribes, then
    // makes a new face appear, until a CREATED event arrives (two rounds at most in practice).
    let mut newcomers = Vec::new();
    for round in 0..4 {
        let (tx, rx) = std::sync::mpsc::channel();
        let waiter = std::thread::spawn(move || {
            let mut i = Interest::new("/localhost/nfd/faces/events".parse::<Name>().unwrap());
            i.can_be_prefix = true;
            i.must_be_fresh = true;
            i.lifetime = Some(5000);
            let got = subscriber.express(&i, Duration::from_secs(6));
            tx.send(()).unwrap();
            (subscriber, got)
        });
        // Give the subscription time to reach the PIT, then make a face appear.
        let _ = rx.recv_timeout(Duration::from_millis(500));
        newcomers.push(std::os::unix::net::UnixStream::connect(&socket).unwrap());
        let (back, got) = waiter.join().unwrap();
        subscriber = back;
        let data = got.expect("a face event arrives");
        assert!(data
            .name
            .to_string()
            .starts_with("/localhost/nfd/faces/events/seq="));
        let event = FaceEventNotification::decode(data.content.as_ref().unwrap()).unwrap();
        if event.kind == FaceEventKind::DESTROYED {
            assert!(round < 3, "only DESTROYED events: {event:?}");
            continue;
        }
        assert_eq!(event.kind, FaceEventKind::CREATED);
        assert!(event.uri.starts_with("fd://"), "{event:?}");
        assert!(event.face_id >= 256);
        return;
    }
}
