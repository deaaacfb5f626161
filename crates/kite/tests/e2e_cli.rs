//! `kite`'s tools as scripts use them: errors reported with NFD's status and a non-zero
//! exit, exit codes that say whether the job was done, nothing but JSON under `--json`.

mod common;

use common::ctl::{err, json};
use common::Daemon;

#[test]
fn a_route_to_a_missing_face_is_refused_with_410() {
    let daemon = Daemon::local(&[]);
    let s = daemon.socket();
    let e = err(s, &["route", "add", "/missing-face", "9999"]);
    assert!(e.contains("410") && e.contains("Face not found"), "{e}");
    let rib = json(s, &["route", "list"]).to_string();
    assert!(!rib.contains("/missing-face"), "{rib}");
    let fib = json(s, &["fib", "list"]).to_string();
    assert!(!fib.contains("/missing-face"), "{fib}");
}

#[test]
fn ping_exits_1_when_a_probe_is_lost() {
    let d = Daemon::local(&[]);
    let out = common::tools::kite(&[
        "ping",
        "/nobody-answers",
        "-c",
        "2",
        "-i",
        "10",
        "--timeout",
        "200",
        "--socket",
        d.socket(),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("2 packets transmitted, 0 received"), "{text}");
    assert_eq!(out.status.code(), Some(1), "{text}");
}
