//! The `kite` control commands, run as the real binary against an in-process fake forwarder.

mod common;

use std::process::{Command, Output};
use std::sync::atomic::{AtomicU64, Ordering};

use common::ctl;
use kite_app::fake::FakeForwarder;
use kite_link::{ChannelCounters, FaceCounters};
use kite_mgmt_proto::command::parse_command;
use kite_mgmt_proto::datasets::{
    ChannelStatus, FaceQueryFilter, FaceStatus, FibEntry, ForwarderStatus, NextHopRecord, RibEntry,
    Route, XdpVerdicts,
};
use kite_mgmt_proto::nfd::{FacePersistency, FaceScope, LinkType, RouteOrigin};
use kite_mgmt_proto::{encode_items, ControlParameters, ControlResponse, Tlv};
use kite_testkit::process::stdout;
use serde_json::Value;

/// Runs `kite <args> --socket <fake>`.
fn kite(fake: &FakeForwarder, args: &[&str]) -> Output {
    ctl::kite_at(fake.socket_path().to_str().unwrap(), args)
}

/// The JSON `kite <args> --json --socket <fake>` prints; it must succeed.
fn json(fake: &FakeForwarder, args: &[&str]) -> Value {
    ctl::json(fake.socket_path().to_str().unwrap(), args)
}

fn status() -> ForwarderStatus {
    ForwarderStatus {
        nfd_version: "kite-test 1.2.3".into(),
        start_timestamp: 1_795_345_271_538,
        current_timestamp: 1_795_345_271_538 + 93_784_000,
        n_fib_entries: 3,
        n_pit_entries: 4,
        n_cs_entries: 42,
        n_in_interests: 1000,
        n_out_data: 990,
        n_unsatisfied_interests: 10,
        ..Default::default()
    }
}

fn faces() -> Vec<FaceStatus> {
    vec![
        FaceStatus {
            face_id: 1,
            uri: "internal://".into(),
            local_uri: "internal://".into(),
            face_scope: FaceScope::LOCAL,
            face_persistency: FacePersistency::PERMANENT,
            ..Default::default()
        },
        FaceStatus {
            face_id: 271,
            uri: "udp4://192.0.2.1:6363".into(),
            local_uri: "udp4://192.0.2.2:6363".into(),
            face_scope: FaceScope::NON_LOCAL,
            face_persistency: FacePersistency::PERSISTENT,
            link_type: LinkType::POINT_TO_POINT,
            mtu: Some(8800),
            counters: FaceCounters {
                n_in_interests: 7,
                n_out_data: 6,
                n_in_bytes: 734,
                n_in_malformed: 3,
                ..Default::default()
            },
            flags: 4,
            ..Default::default()
        },
    ]
}

/// Answers `faces/query/<filter>` over [`faces`], as NFD's face manager does.
fn faces_query(i: &kite_packet::Interest) -> Vec<bytes::Bytes> {
    let prefix: kite_packet::Name = "/localhost/nfd/faces/query".parse().unwrap();
    if !(prefix.is_prefix_of(&i.name) && i.name.len() == 5) {
        return vec![];
    }
    let filter = FaceQueryFilter::decode(&bytes::Bytes::copy_from_slice(
        i.name.get(4).unwrap().value(),
    ))
    .unwrap();
    let matching: Vec<FaceStatus> = faces().into_iter().filter(|f| filter.matches(f)).collect();
    kite_mgmt_proto::dataset::segments(&i.name, 1, &encode_items(&matching))
}

#[test]
fn status_prints_a_table_and_json() {
    let fake = FakeForwarder::builder()
        .dataset("/localhost/nfd/status/general", status().encode())
        .start();
    let text = stdout(&kite(&fake, &["status"]));
    assert!(
        text.contains("version  ") && text.contains("kite-test 1.2.3"),
        "{text}"
    );
    assert!(text.contains("2026-11-22T11:01:11.538Z"), "{text}");
    assert!(text.contains("1d 2h 3m 4s"), "{text}");
    let line = text.lines().find(|l| l.starts_with("nCsEntries")).unwrap();
    assert!(line.ends_with(" 42"), "{line}");

    let j = json(&fake, &["status"]);
    assert_eq!(j["version"], "kite-test 1.2.3");
    assert_eq!(j["uptime_ms"], 93_784_000);
    assert_eq!(j["n_pit_entries"], 4);
    assert_eq!(j["n_in_interests"], 1000);
    assert_eq!(j["n_unsatisfied_interests"], 10);
}

#[test]
fn face_list_shows_every_face() {
    let fake = FakeForwarder::builder()
        .dataset("/localhost/nfd/faces/list", encode_items(&faces()))
        .start();
    let text = stdout(&kite(&fake, &["face", "list"]));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(lines[0].starts_with("FACEID  REMOTE"), "{text}");
    assert!(lines[1].contains("internal://") && lines[1].contains("permanent"));
    for want in [
        "udp4://192.0.2.1:6363",
        "non-local",
        "8800",
        "7i/0d/0n",
        "congestion-marking",
    ] {
        assert!(
            lines[2].contains(want),
            "{want} missing from {:?}",
            lines[2]
        );
    }

    let j = json(&fake, &["face"]);
    assert_eq!(j.as_array().unwrap().len(), 2);
    assert_eq!(j[1]["face_id"], 271);
    assert_eq!(j[1]["counters"]["in_bytes"], 734);
    assert_eq!(j[1]["drops"]["in_malformed"], 3);
    assert_eq!(j[1]["drops"]["framing_errors"], 0);
    assert_eq!(j[1]["congestion_marking"], true);
    assert_eq!(j[0]["mtu"], Value::Null);
}

#[test]
fn channel_list_shows_kites_drop_counters_and_nfds_bare_channels() {
    let channels = vec![
        ChannelStatus {
            local_uri: "udp4://0.0.0.0:6363".into(),
            counters: ChannelCounters {
                n_truncated: 4,
                n_no_face: 2,
                n_socket_drops: 9,
                n_delayed: 5,
                ..Default::default()
            },
            ..Default::default()
        },
        ChannelStatus {
            local_uri: "dev://eth0".into(),
            ..Default::default()
        },
        ChannelStatus {
            local_uri: "dev://eth1".into(),
            io_path: Some("af_xdp (driver mode, copy, 2 queues)".into()),
            xdp: Some(XdpVerdicts {
                ndn: 40,
                passed: 3,
                runt: 1,
                udp: 6,
            }),
            ..Default::default()
        },
    ];
    let fake = FakeForwarder::builder()
        .dataset("/localhost/nfd/faces/channels", encode_items(&channels))
        .start();
    let text = stdout(&kite(&fake, &["channel", "list"]));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert!(lines[0].starts_with("LOCAL") && lines[0].contains("TRUNCATED"));
    assert!(lines[0].trim_end().ends_with("IO"), "{text}");
    let cells: Vec<&str> = lines[1].split_whitespace().collect();
    assert_eq!(
        cells,
        [
            "udp4://0.0.0.0:6363",
            "4",
            "0",
            "0",
            "2",
            "9",
            "5",
            "-",
            "-"
        ],
        "{text}"
    );
    assert!(
        lines[3].contains(" 40/6/3/1 ")
            && lines[3]
                .trim_end()
                .ends_with("af_xdp (driver mode, copy, 2 queues)"),
        "{text}"
    );

    let j = json(&fake, &["channel"]);
    assert_eq!(j[0]["local_uri"], "udp4://0.0.0.0:6363");
    assert_eq!(j[0]["drops"]["truncated"], 4);
    assert_eq!(j[0]["drops"]["no_face"], 2);
    assert_eq!(j[0]["drops"]["socket"], 9);
    assert_eq!(j[0]["delayed"], 5);
    assert_eq!(j[1]["drops"]["foreign"], 0);
    assert_eq!(j[1]["delayed"], 0);
    assert_eq!(j[0]["io_path"], Value::Null);
    assert_eq!(j[0]["xdp"], Value::Null);
    assert_eq!(j[2]["io_path"], "af_xdp (driver mode, copy, 2 queues)");
    assert_eq!(j[2]["xdp"]["ndn"], 40);
    assert_eq!(j[2]["xdp"]["passed"], 3);
    assert_eq!(j[2]["xdp"]["runt"], 1);
    assert_eq!(j[2]["xdp"]["udp"], 6);
}

#[test]
fn route_add_sends_the_parameters_nfdc_would() {
    let fake = FakeForwarder::builder()
        .command("rib", "register", ControlResponse::success)
        .start();
    let args = [
        "route",
        "add",
        "/demo",
        "271",
        "--cost",
        "10",
        "--no-inherit",
        "--capture",
        "--expires",
        "60000",
    ];
    let text = stdout(&kite(&fake, &args));
    assert_eq!(
        text,
        "route-add-accepted prefix=/demo nexthop=271 origin=static cost=10 flags=capture expires=60s\n"
    );
    let sent = fake.received();
    assert_eq!(sent.len(), 1);
    let cmd = parse_command(&sent[0]).unwrap();
    assert_eq!(
        cmd.params,
        ControlParameters {
            name: Some("/demo".parse().unwrap()),
            face_id: Some(271),
            origin: Some(RouteOrigin::STATIC),
            cost: Some(10),
            flags: Some(2),
            expiration_period: Some(60_000),
            ..Default::default()
        }
    );

    stdout(&kite(
        &fake,
        &["route", "add", "/a", "300", "--origin", "nlsr"],
    ));
    let cmd = parse_command(&fake.received()[1]).unwrap();
    assert_eq!(cmd.params.origin, Some(RouteOrigin::NLSR));
    assert_eq!((cmd.params.cost, cmd.params.flags), (Some(0), Some(1)));
    assert_eq!(cmd.params.expiration_period, None);
}

#[test]
fn route_list_tells_static_routes_from_learned_ones() {
    let route = |face_id, origin| Route {
        face_id,
        origin,
        cost: 1,
        flags: 1,
        expiration_period: None,
    };
    let rib = vec![
        RibEntry {
            name: "/app".parse().unwrap(),
            routes: vec![
                route(300, RouteOrigin::CLIENT),
                route(301, RouteOrigin::NLSR),
            ],
        },
        RibEntry {
            name: "/op".parse().unwrap(),
            routes: vec![
                route(302, RouteOrigin::STATIC),
                route(303, RouteOrigin(200)),
            ],
        },
    ];
    let fake = FakeForwarder::builder()
        .dataset("/localhost/nfd/rib/list", encode_items(&rib))
        .start();
    let text = stdout(&kite(&fake, &["route", "list"]));
    let rows: Vec<Vec<&str>> = text
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows[0][1..4], ["FACEID", "ORIGIN", "SOURCE"]);
    let sources: Vec<[&str; 3]> = rows[1..].iter().map(|r| [r[1], r[2], r[3]]).collect();
    assert_eq!(
        sources,
        [
            ["300", "client", "app"],
            ["301", "nlsr", "learned"],
            ["302", "static", "static"],
            ["303", "200", "other"],
        ]
    );
    let j = json(&fake, &["route", "list"]);
    assert_eq!(j[0]["routes"][1]["origin_name"], "nlsr");
    assert_eq!(j[0]["routes"][1]["source"], "learned");
    assert_eq!(j[1]["routes"][0]["source"], "static");
}

#[test]
fn an_error_status_is_printed_with_a_failing_exit() {
    let fake = FakeForwarder::builder()
        .command("strategy-choice", "set", |_| {
            ControlResponse::new(404, "Strategy not registered")
        })
        .start();
    let out = kite(&fake, &["strategy", "set", "/a", "no-such-strategy"]);
    assert!(!out.status.success());
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("404") && err.contains("Strategy not registered"),
        "{err}"
    );
    let cmd = parse_command(&fake.received()[0]).unwrap();
    assert_eq!(
        cmd.params.strategy.unwrap().to_uri(),
        "/localhost/nfd/strategy/no-such-strategy"
    );
}

#[test]
fn a_missing_socket_says_the_forwarder_may_not_be_running() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nfd.sock");
    let out = Command::new(env!("CARGO_BIN_EXE_kite"))
        .args(["fib", "list", "--socket"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&path.display().to_string()), "{err}");
    assert!(err.contains("may not be running"), "{err}");
}

#[test]
fn fib_list_and_face_show_of_an_unknown_face() {
    let fib = vec![FibEntry {
        name: "/demo".parse().unwrap(),
        next_hops: vec![
            NextHopRecord {
                face_id: 271,
                cost: 10,
            },
            NextHopRecord {
                face_id: 272,
                cost: 20,
            },
        ],
    }];
    let fake = FakeForwarder::builder()
        .dataset("/localhost/nfd/fib/list", encode_items(&fib))
        .raw(faces_query)
        .start();
    let text = stdout(&kite(&fake, &["fib"]));
    assert_eq!(
        text,
        "PREFIX  NEXTHOPS\n/demo   271 (cost=10), 272 (cost=20)\n"
    );
    let out = kite(&fake, &["face", "show", "7"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("face 7 not found"));
}

#[test]
fn cs_erase_repeats_while_batches_are_full() {
    let calls = AtomicU64::new(0);
    let fake = FakeForwarder::builder()
        .command("cs", "erase", move |p| {
            let first = calls.fetch_add(1, Ordering::SeqCst) == 0;
            let mut r = p.clone();
            r.count = Some(if first { 256 } else { 3 });
            r.capacity = first.then_some(256);
            ControlResponse::success(&r)
        })
        .start();
    let j = json(&fake, &["cs", "erase", "/bench"]);
    assert_eq!(j["count"], 259);
    assert_eq!(fake.received().len(), 2);
}

#[test]
fn a_face_uri_names_its_face_for_routes_and_destroy() {
    let fake = FakeForwarder::builder()
        .command("rib", "unregister", ControlResponse::success)
        .command("faces", "destroy", ControlResponse::success)
        .raw(faces_query)
        .start();
    let text = stdout(&kite(
        &fake,
        &["route", "remove", "/demo", "udp://192.0.2.1"],
    ));
    assert_eq!(
        text,
        "route-removed prefix=/demo nexthop=271 origin=static\n"
    );
    let text = stdout(&kite(&fake, &["face", "destroy", "271"]));
    assert_eq!(
        text,
        "face-destroyed id=271 local=udp4://192.0.2.2:6363 remote=udp4://192.0.2.1:6363\n"
    );
    let destroy = fake
        .received()
        .iter()
        .filter_map(|i| parse_command(i).ok())
        .last()
        .unwrap();
    assert_eq!(destroy.params.face_id, Some(271));
    let out = kite(
        &fake,
        &["route", "remove", "/demo", "udp4://192.0.2.9:6363"],
    );
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not found"));
}
