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
