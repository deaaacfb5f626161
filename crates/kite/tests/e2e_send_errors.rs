//! A datagram face whose socket refuses frames for a reason that may pass stays up: each
//! refused frame is counted (`out-send-failed` in `kite face show`) and the next is sent. Here an
//! nftables rule in the daemon's network namespace drops what a persistent face sends (a UDP
//! face's datagrams at the output hook, so `sendmmsg` fails with EPERM; an Ethernet face's
//! frames at its interface's egress hook, so the AF_PACKET send fails too); Interests routed
//! to the face are refused, the face survives and counts them, and once the rule is gone the
//! face carries traffic again.
//!
//! Needs root (`ip netns add`) and `nft` (Debian's nftables); without either the tests skip (each
//! says why through `kite_testkit::skip`, and `scripts/test.sh` counts them skipped, not passed).

mod common;

use std::process::Command;
use std::time::Duration;

use common::netns::Lab;
use common::{ctl, eventually, Daemon};
use kite_testkit::netns::ip_ok;
use kite_testkit::skip;
use serde_json::Value;

/// Loads `rules` with `nft -f -` in namespace `ns`; false (after saying why) without nft.
fn nft(ns: &str, rules: &str) -> bool {
    use std::io::Write;
    let child = Command::new("ip")
        .args(["netns", "exec", ns, "nft", "-f", "-"])
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn();
    let Ok(mut child) = child else {
        skip("cannot run ip netns exec nft");
        return false;
    };
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(rules.as_bytes())
        .expect("write the rules");
    let out = child.wait_with_output().expect("nft exits");
    if !out.status.success() {
        skip(format_args!(
            "nft (Debian's nftables) failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    out.status.success()
}

/// Creates a persistent face to `uri` (with `local`, for Ethernet) routed for `/refused`,
/// expresses Interests through it while `nft` rules refuse what it sends, and checks that the
/// face stays up and counts every refusal; then lifts the rules (`flush ruleset`) and checks
/// that frames leave again.
fn face_outlives_refused_sends(ns: &str, d: &Daemon, uri: &str, local: Option<&str>) {
    let socket = d.socket();
    let mut create = vec!["face", "create", uri, "--persistency", "persistent"];
    if let Some(l) = local {
        create.extend(["--local", l]);
    }
    let made = ctl::json(socket, &create);
    let id = made["face_id"].as_u64().expect("face_id");
    ctl::json(socket, &["route", "add", "/refused", &id.to_string()]);
    let out_bytes = |f: &Value| f["counters"]["out_bytes"].as_u64().unwrap_or(0);
    let before = out_bytes(&ctl::face_by_id(socket, id).expect("the new face"));
    for i in 0..5 {
        let name = format!("/refused/{i}");
        // No Data comes back: the peek times out; what matters is what its Interest did.
        ctl::kite_at(socket, &["peek", &name, "--lifetime", "100"]);
    }
    let f = eventually(Duration::from_secs(5), || {
        let f = ctl::face_by_id(socket, id)?;
        (f["drops"]["out_send_failed"].as_u64() >= Some(5)).then_some(f)
    })
    .unwrap_or_else(|| {
        panic!(
            "face {id} closed or counted no refused send: {:?}\n{}",
            ctl::face_by_id(socket, id),
            d.log_text()
        )
    });
    assert_eq!(f["state"], "up", "{f}");
    assert_eq!(out_bytes(&f), before, "nothing left while refused: {f}");

    assert!(nft(ns, "flush ruleset\n"), "lifting the rules");
    ctl::kite_at(socket, &["peek", "/refused/after", "--lifetime", "100"]);
    let f = ctl::face_by_id(socket, id).expect("the face is still there");
    assert!(out_bytes(&f) > before, "the face sends again: {f}");
}

#[test]
fn udp_face_outlives_an_output_rule_that_drops_its_datagrams() {
    let Some(lab) = Lab::new("seu", &["a"]) else {
        return;
    };
    let rules = "table inet refuse {\n chain out {\n  type filter hook output priority 0;\n  \
                 udp dport 9 drop\n }\n}\n";
    if !nft(&lab.nodes[0], rules) {
        return;
    }
    let d = Daemon::start(
        &lab.launcher(0),
        &["--udp".to_string(), "127.0.0.1:6363".to_string()],
    );
    face_outlives_refused_sends(&lab.nodes[0], &d, "udp4://127.0.0.1:9", None);
}

#[test]
fn ethernet_face_outlives_an_egress_rule_that_drops_its_frames() {
    let Some(mut lab) = Lab::new("see", &["a", "b"]) else {
        return;
    };
    lab.link(0, 1);
    let peer = "02:00:00:00:5e:0b";
    ip_ok(&["-n", &lab.nodes[1], "link", "set", "l1b", "address", peer]);
    let rules = "table netdev refuse {\n chain out {\n  type filter hook egress device \"l1a\" \
                 priority 0;\n  drop\n }\n}\n";
    if !nft(&lab.nodes[0], rules) {
        return;
    }
    let d = Daemon::start(
        &lab.launcher(0),
        &["--local-only", "--ether", "l1a"].map(String::from),
    );
    face_outlives_refused_sends(
        &lab.nodes[0],
        &d,
        &format!("ether://[{peer}]"),
        Some("dev://l1a"),
    );
}
