//! The `kite` binary as a user runs it: encode a packet, pipe it to decode, read the fields;
//! bad input gives a clear message and a failing exit status.

mod common;

use common::tools::kite_with_input as kite;
use kite_testkit::process::stdout;

#[test]
fn encoded_interest_decodes_from_stdin() {
    let hex = stdout(&kite(
        &[
            "encode",
            "interest",
            "/example/seg=3",
            "--must-be-fresh",
            "--nonce",
            "7",
            "--params",
            "0102",
        ],
        None,
    ));
    let text = stdout(&kite(&["decode"], Some(hex.as_bytes())));
    assert!(
        text.starts_with("Interest /example/seg=3/params-sha256="),
        "{text}"
    );
    assert!(text.contains("  MustBeFresh\n"));
    assert!(text.contains("  Nonce: 00000007\n"));
    assert!(text.contains("  ApplicationParameters: 2 octets\n"));
}

#[test]
fn binary_data_decodes_from_a_file() {
    let hex = stdout(&kite(
        &[
            "encode",
            "data",
            "/d/v=1",
            "--content",
            "hello",
            "--freshness",
            "500",
        ],
        None,
    ));
    let path = std::env::temp_dir().join(format!("kite-cli-{}.bin", std::process::id()));
    std::fs::write(&path, hex::decode(hex.trim()).unwrap()).unwrap();
    let text = stdout(&kite(&["decode", "--file", path.to_str().unwrap()], None));
    std::fs::remove_file(&path).ok();
    assert!(text.starts_with("Data /d/v=1 ("), "{text}");
    assert!(text.contains("  FreshnessPeriod: 500 ms\n"));
    assert!(text.contains("  Content: 5 octets \"hello\"\n"));
}

#[test]
fn nack_decodes_with_its_reason() {
    let hex = stdout(&kite(
        &["encode", "nack", "/n", "--reason", "congestion"],
        None,
    ));
    let text = stdout(&kite(&["decode", hex.trim()], None));
    assert!(text.contains("Nack Congestion for:\nInterest /n"), "{text}");
}

#[test]
fn bad_input_fails_with_a_reason() {
    let o = kite(&["decode", "0505070308"], None);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("not a valid NDN packet") && err.contains("exceeds"),
        "{err}"
    );

    let o = kite(&["decode", "xyz"], None);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("must be hexadecimal"));

    let o = kite(&["encode", "interest", "/a//b"], None);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("invalid name"));

    let o = kite(&["decode"], Some(b""));
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("no packet given"));
}

#[test]
fn bench_fwd_reports_json_on_its_last_line() {
    let o = kite(
        &[
            "bench",
            "fwd",
            "--duration",
            "300ms",
            "--fib",
            "1000",
            "--cs-hit",
            "50",
            "--json",
        ],
        None,
    );
    let text = stdout(&o);
    let last = text.lines().last().expect("output");
    let v: serde_json::Value = serde_json::from_str(last).expect("the last line is JSON");
    for key in [
        "exchanges_per_sec",
        "p50_ns",
        "p99_ns",
        "name_len",
        "fib_entries",
        "payload",
    ] {
        assert!(v.get(key).is_some(), "missing {key}: {last}");
    }
    assert!(v["exchanges"].as_u64().unwrap() > 0);
    assert_eq!(v["nacks"].as_u64(), Some(0));
    assert_eq!(v["cs_hit_percent"].as_u64(), Some(50));
    // progress goes to stderr, not into the JSON stream
    assert!(String::from_utf8_lossy(&o.stderr).contains("building a FIB"));
}

#[test]
fn bench_fwd_rejects_bad_parameters() {
    let o = kite(
        &["bench", "fwd", "--name-len", "2", "--duration", "10ms"],
        None,
    );
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("--name-len must be at least 3"));
    let o = kite(&["bench", "fwd", "--duration", "soon"], None);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("not a duration"));
}
