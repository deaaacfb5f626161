//! What `kite run` logs for an operator: a mistyped log filter stops the start; faces,
//! management commands (carried out, failed, refused) and datasets are logged with fields to
//! grep; drops are logged by reason with their count, a bounded number of lines however many
//! packets are dropped.

mod common;

use std::net::UdpSocket;
use std::time::Duration;

use common::ctl::ok;
use common::tools::run_to_exit;
use common::{ctl, eventually, free_tcp_port, free_udp_port, Daemon};
use kite_app::mgmt::nfd_name;
use kite_app::Client;
use kite_mgmt_proto::nfd::status;
use kite_mgmt_proto::{ControlParameters, ControlResponse, Tlv};
use kite_packet::{Interest, Nonce};

/// The log's lines that contain every one of `parts`.
fn lines_with(log: &str, parts: &[&str]) -> Vec<String> {
    log.lines()
        .filter(|l| parts.iter().all(|p| l.contains(p)))
        .map(str::to_owned)
        .collect()
}

/// Waits up to 15 s for a log line with every one of `parts`.
fn wait_for_line(d: &Daemon, parts: &[&str]) -> String {
    eventually(Duration::from_secs(15), || {
        lines_with(&d.log_text(), parts).into_iter().next()
    })
    .unwrap_or_else(|| panic!("no line with {parts:?} in:\n{}", d.log_text()))
}

#[test]
fn a_mistyped_log_filter_stops_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("nfd.sock");
    let socket = socket.to_str().unwrap();
    let base = ["--local-only", "--socket", socket];

    let out = run_to_exit(&[&base[..], &["--log", "inf"]].concat(), &[]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--log: \"inf\" is not a log filter: unknown level \"inf\""),
        "{err}"
    );
    assert!(
        err.contains("levels: off, error, warn, info, debug, trace"),
        "{err}"
    );

    let out = run_to_exit(&base, &[("KITE_LOG", "verbose")]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("$KITE_LOG: \"verbose\" is not a log filter"),
        "{err}"
    );

    let out = run_to_exit(&[&base[..], &["--log", "info,kit=debug"]].concat(), &[]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown target \"kit\""), "{err}");

    let config = dir.path().join("kite.toml");
    std::fs::write(&config, "[log]\nfilter = \"kite=debg\"\n").unwrap();
    let config = config.to_str().unwrap();
    let out = run_to_exit(&[&base[..], &["--config", config]].concat(), &[]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "{config}:2:10: \"kite=debg\" is not a log filter: unknown level \"debg\""
        )),
        "{err}"
    );
    assert!(
        !std::path::Path::new(socket).exists(),
        "nothing was started"
    );

    // a well-formed filter with targets passes the same check
    let out = run_to_exit(
        &[
            &base[..],
            &["--log", "warn,kite_runtime=debug", "--print-config"],
        ]
        .concat(),
        &[],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(
        printed.contains("filter = \"warn,kite_runtime=debug\""),
        "{printed}"
    );
}

/// Sends `module/verb` with `params` unsigned (NFD's RIB refuses that) and returns the answer.
fn unsigned_command(
    socket: &str,
    module: &str,
    verb: &str,
    params: &ControlParameters,
) -> ControlResponse {
    let mut client = Client::connect_unix(socket).expect("connect");
    let encoded = params.encode();
    let mut interest = Interest::new(nfd_name(&[module.as_bytes(), verb.as_bytes(), &encoded]));
    interest.must_be_fresh = true;
    interest.nonce = Some(Nonce([0, 0, 0, 7]));
    let data = client
        .express(&interest, Duration::from_secs(4))
        .expect("an answer");
    ControlResponse::decode(&data.content.unwrap_or_default()).expect("a ControlResponse")
}

#[test]
fn faces_commands_and_datasets_are_logged_with_fields() {
    let d = Daemon::start(
        &[],
        &[
            "--udp".into(),
            format!("127.0.0.1:{}", free_udp_port()),
            "--tcp".into(),
            format!("127.0.0.1:{}", free_tcp_port()),
            "--log".into(),
            "debug".into(),
        ],
    );
    let s = d.socket();
    let peer = format!("udp4://127.0.0.1:{}", free_udp_port());
    let created = ok(s, &["face", "create", &peer]);
    let id = ctl::created_face_id(&created);
    let face = format!("face={id}");
    let remote = format!("remote={peer}");
    let line = wait_for_line(&d, &["face created", &face, &remote]);
    assert!(line.contains("scope=non-local"), "{line}");
    assert!(line.contains("persistency=persistent"), "{line}");
    assert!(line.contains("local=udp4://127.0.0.1:"), "{line}");
    assert!(line.contains(" INFO "), "{line}");
    let line = wait_for_line(
        &d,
        &["command executed", "command=faces/create", "status=200"],
    );
    assert!(line.contains(&format!("params=\"uri={peer} ")), "{line}");

    ok(
        s,
        &["route", "add", "/logs/test", &id.to_string(), "--cost", "7"],
    );
    let line = wait_for_line(&d, &["command executed", "command=rib/register"]);
    assert!(line.contains("params=\"name=/logs/test "), "{line}");
    assert!(line.contains(&face) && line.contains("cost=7"), "{line}");
    ok(s, &["strategy", "set", "/logs/test", "multicast"]);
    let line = wait_for_line(&d, &["command executed", "command=strategy-choice/set"]);
    assert!(
        line.contains("strategy=/localhost/nfd/strategy/multicast"),
        "{line}"
    );

    // datasets at debug
    ok(s, &["face", "list"]);
    wait_for_line(
        &d,
        &["DEBUG", "dataset published", "/localhost/nfd/faces/list"],
    );

    // refused: unsigned rib command, invalid parameters
    let params = ControlParameters {
        name: Some("/logs/unsigned".parse().unwrap()),
        ..ControlParameters::default()
    };
    let resp = unsigned_command(s, "rib", "register", &params);
    assert_eq!(resp.status_code, status::FORBIDDEN);
    let line = wait_for_line(
        &d,
        &["command refused", "command=rib/register", "status=403"],
    );
    assert!(line.contains(" WARN "), "{line}");
    assert!(
        line.contains("why=\"unsigned") && line.contains("signer=unsigned"),
        "{line}"
    );
    let resp = unsigned_command(s, "faces", "destroy", &ControlParameters::default());
    assert_eq!(resp.status_code, status::BAD_REQUEST);
    let line = wait_for_line(
        &d,
        &["command refused", "command=faces/destroy", "status=400"],
    );
    assert!(line.contains("why=\"invalid"), "{line}");

    ok(s, &["face", "destroy", &id.to_string()]);
    let line = wait_for_line(&d, &["face closed", &face, "reason=destroyed"]);
    assert!(line.contains(&remote), "{line}");
    wait_for_line(&d, &["routes of a closed face removed", &face]);
}

#[test]
fn drops_are_logged_by_reason_with_their_count_in_few_lines() {
    let udp = free_udp_port();
    let d = Daemon::start(
        &[],
        &[
            "--udp".into(),
            format!("127.0.0.1:{udp}"),
            "--tcp".into(),
            format!("127.0.0.1:{}", free_tcp_port()),
        ],
    );
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    // Not an NDN frame, from a sender with no face: the channel drops each one.
    let sent = 200;
    for _ in 0..sent {
        sock.send_to(&[0xff, 0x01, 0x00], ("127.0.0.1", udp))
            .unwrap();
    }
    let total = format!("total={sent}");
    let line = wait_for_line(&d, &["reason=channel-malformed", &total]);
    assert!(
        line.contains(" INFO ") && line.contains("thread=io"),
        "{line}"
    );
    let lines = lines_with(&d.log_text(), &["reason=channel-malformed"]);
    assert!(
        lines.len() <= 2,
        "{sent} drops, at most two lines (one per 10 s): {lines:#?}"
    );
    let counted: u64 = lines
        .iter()
        .map(|l| {
            l.split_whitespace()
                .find_map(|w| w.strip_prefix("count="))
                .and_then(|v| v.parse::<u64>().ok())
                .expect("a count")
        })
        .sum();
    assert_eq!(counted, sent, "the counts add up to the drops: {lines:#?}");

    // More drops within the 10 s after that line wait for the next; a daemon that stops says
    // them at once.
    // A forwarding thread's drops likewise: /localhost from a non-local face.
    let mut localhost = Interest::new("/localhost/nfd/status/general".parse().unwrap());
    localhost.nonce = Some(Nonce([1, 2, 3, 4]));
    // (from another socket: this one's junk must stay a sender with no face)
    let other = UdpSocket::bind("127.0.0.1:0").unwrap();
    other
        .send_to(&localhost.encode(), ("127.0.0.1", udp))
        .unwrap();
    let line = wait_for_line(&d, &["reason=scope-violation", "thread=fwd0"]);
    assert!(
        line.contains(" INFO ") && line.contains("count=1"),
        "{line}"
    );

    let mut d = d;
    for _ in 0..50 {
        sock.send_to(&[0xff, 0x01, 0x00], ("127.0.0.1", udp))
            .unwrap();
    }
    std::thread::sleep(Duration::from_millis(1500));
    let total = format!("total={}", sent + 50);
    assert!(
        lines_with(&d.log_text(), &["reason=channel-malformed", &total]).is_empty(),
        "one line per reason per 10 s: {}",
        d.log_text()
    );
    assert!(d
        .stop("TERM", Duration::from_secs(10))
        .is_some_and(|s| s.success()));
    let line = lines_with(&d.log_text(), &["reason=channel-malformed", &total]);
    assert_eq!(line.len(), 1, "{}", d.log_text());
    assert!(line[0].contains("count=50"), "{}", line[0]);
}

#[test]
fn face_lines_from_a_crowd_of_senders_stay_within_their_budget() {
    let udp = free_udp_port();
    let d = Daemon::start(
        &[],
        &[
            "--udp".into(),
            format!("127.0.0.1:{udp}"),
            "--tcp".into(),
            format!("127.0.0.1:{}", free_tcp_port()),
            "--udp-on-demand-limit".into(),
            "2".into(),
        ],
    );
    // Each sender gets an on-demand face, and beyond two each new one evicts another: two
    // face lines per datagram wanted, far over the budget of 20 a second. Sent a few
    // milliseconds apart, so that each datagram is a receive burst of its own.
    let senders = 120;
    let sockets: Vec<UdpSocket> = (0..senders)
        .map(|_| UdpSocket::bind("127.0.0.1:0").unwrap())
        .collect();
    let started = std::time::Instant::now();
    for (i, s) in sockets.iter().enumerate() {
        let mut interest = Interest::new(format!("/crowd/{i}").parse().unwrap());
        interest.nonce = Some(Nonce((i as u32).to_be_bytes()));
        s.send_to(&interest.encode(), ("127.0.0.1", udp)).unwrap();
        std::thread::sleep(Duration::from_millis(3));
    }
    let evicted = wait_for_line(&d, &["face closed: evicted", "reason=evicted"]);
    assert!(evicted.contains(" WARN "), "{evicted}");
    wait_for_line(&d, &["face lines not written", "count="]);
    let seconds = started.elapsed().as_secs() + 2;
    let log = d.log_text();
    let written = lines_with(&log, &["kite_runtime::iolog: face "]).len() as u64;
    let suppressed: u64 = log
        .lines()
        .filter(|l| l.contains("kite_runtime::iolog"))
        .filter_map(|l| {
            l.split_whitespace()
                .find_map(|w| w.strip_prefix("suppressed=").or(w.strip_prefix("count=")))
                .and_then(|v| v.parse::<u64>().ok())
        })
        .sum();
    assert!(suppressed > 0, "{log}");
    assert!(
        written <= 20 * seconds,
        "at most 20 face lines a second: {written} in {seconds} s:\n{log}"
    );
    assert!(
        written + suppressed >= senders as u64,
        "every face created was written or counted: {written} + {suppressed}:\n{log}"
    );
}
