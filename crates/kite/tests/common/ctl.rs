//! Running `kite` control subcommands against a daemon's socket, as an operator would, and
//! reading the faces `kite face list --json` shows.

use std::process::{Command, Output};

use serde_json::Value;

/// The `kite` binary under test, to be given its arguments.
pub fn kite() -> Command {
    Command::new(env!("CARGO_BIN_EXE_kite"))
}

/// `kite ARGS --socket SOCKET` (whatever `NDN_CLIENT_TRANSPORT` the test runs with).
pub fn kite_at(socket: &str, args: &[&str]) -> Output {
    kite()
        .args(args)
        .args(["--socket", socket])
        .env_remove("NDN_CLIENT_TRANSPORT")
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

/// The faces `kite face list --json` shows.
pub fn faces(socket: &str) -> Vec<Value> {
    match json(socket, &["face", "list"]) {
        Value::Array(faces) => faces,
        other => panic!("a list of faces, not {other}"),
    }
}

/// The face whose remote URI is `uri`, if there is one.
pub fn find_face(socket: &str, uri: &str) -> Option<Value> {
    faces(socket).into_iter().find(|f| f["uri"] == uri)
}

/// The face whose remote URI is `uri`; panics (listing the faces) when there is none.
pub fn face(socket: &str, uri: &str) -> Value {
    let faces = faces(socket);
    let found = faces.iter().find(|f| f["uri"] == uri).cloned();
    found.unwrap_or_else(|| panic!("no face {uri} in {}", Value::Array(faces)))
}

/// The id of the face whose remote URI is `uri`; panics when there is none.
pub fn face_id(socket: &str, uri: &str) -> u64 {
    face(socket, uri)["face_id"].as_u64().expect("face_id")
}

/// The face with id `id`, if it is still there.
pub fn face_by_id(socket: &str, id: u64) -> Option<Value> {
    faces(socket).into_iter().find(|f| f["face_id"] == id)
}

/// The routes of `prefix` in `socket`'s RIB: (face, origin, cost).
pub fn routes(socket: &str, prefix: &str) -> Vec<(u64, u64, u64)> {
    let rib = json(socket, &["route", "list"]);
    rib.as_array()
        .unwrap()
        .iter()
        .filter(|e| e["prefix"] == prefix)
        .flat_map(|e| e["routes"].as_array().cloned().unwrap_or_default())
        .map(|r| {
            (
                r["face_id"].as_u64().unwrap(),
                r["origin"].as_u64().unwrap(),
                r["cost"].as_u64().unwrap(),
            )
        })
        .collect()
}
