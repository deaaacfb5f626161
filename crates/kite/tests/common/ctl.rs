//! Running `kite` control subcommands against a daemon's socket, as an operator would.

use std::process::{Command, Output};

use serde_json::Value;

/// `kite ARGS --socket SOCKET`.
pub fn kite_at(socket: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kite"))
        .args(args)
        .args(["--socket", socket])
        .output()
        .expect("kite runs")
}

/// Its standard output; panics (with its standard error) unless it succeeds.
pub fn ok(socket: &str, args: &[&str]) -> String {
    let out = kite_at(socket, args);
    assert!(
        out.status.success(),
        "kite {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The face id `kite face create` printed (`id=N`).
pub fn created_face_id(created: &str) -> u64 {
    created
        .split_whitespace()
        .find_map(|w| w.strip_prefix("id="))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("face id in {created:?}"))
}

/// Its `--json` output.
pub fn json(socket: &str, args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.push("--json");
    serde_json::from_str(&ok(socket, &all)).expect("JSON output")
}

/// Its standard error; panics unless it fails.
pub fn err(socket: &str, args: &[&str]) -> String {
    let out = kite_at(socket, args);
    assert!(!out.status.success(), "kite {args:?} should fail");
    String::from_utf8(out.stderr).unwrap()
}
