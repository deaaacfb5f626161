//! `kite perf server` and `kite perf client` through a real `kite run`, for every signature
//! kind: the client receives Data, nearly nothing times out, and every signature verifies
//! with the server's public key file; with another key, verification fails. A server
//! started while a client already sends serves it.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use common::ctl::kite;
use common::Daemon;
use serde_json::Value;

const KINDS: [&str; 9] = [
    "digest-sha256",
    "hmac-sha256",
    "ecdsa-p256",
    "ecdsa-p384",
    "rsa-1024",
    "rsa-2048",
    "rsa-3072",
    "ed25519",
    "null",
];

/// A `kite perf server`, stopped with SIGTERM when dropped.
struct Server {
    child: Child,
    log: PathBuf,
    pub_file: PathBuf,
}

impl Server {
    fn start(d: &Daemon, kind: &str) -> Server {
        Server::start_with(d, kind, kind, &[])
    }

    /// A server for `/perf/<label>` signing with `kind`, with extra arguments.
    fn start_with(d: &Daemon, label: &str, kind: &str, extra: &[&str]) -> Server {
        let log = d.dir().join(format!("server-{label}.log"));
        let pub_file = d.dir().join(format!("{label}.pub"));
        let child = kite()
            .args(["perf", "server", &format!("/perf/{label}"), "--sign", kind])
            .args(["--payload", "4000", "--socket", d.socket()])
            .args(extra)
            .arg("--pub-out")
            .arg(&pub_file)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("start kite perf server");
        Server {
            child,
            log,
            pub_file,
        }
    }

    /// Waits until the server has registered its prefix (it says so on stderr).
    fn wait_ready(&mut self) {
        let until = Instant::now() + Duration::from_secs(30);
        while Instant::now() < until {
            let log = std::fs::read_to_string(&self.log).unwrap_or_default();
            if log.contains("kite perf server:") {
                return;
            }
            if let Ok(Some(s)) = self.child.try_wait() {
                panic!("kite perf server exited ({s}): {log}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("kite perf server did not register");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        common::terminate(self.child.id());
        common::reap(&mut self.child, Duration::from_secs(5));
    }
}

/// Runs a 2 s client against `/perf/<label>` verifying with `key_pub`; its JSON summary.
fn client(d: &Daemon, label: &str, key_pub: &Path) -> Value {
    client_with(d, label, key_pub, &[])
}

/// [`client`] with extra arguments.
fn client_with(d: &Daemon, label: &str, key_pub: &Path, extra: &[&str]) -> Value {
    let out = kite()
        .args(["perf", "client", &format!("/perf/{label}")])
        .args(extra)
        .args([
            "--window",
            "16",
            "--duration",
            "2s",
            "--json",
            "--payload-check",
        ])
        .args(["--socket", d.socket(), "--verify", "--key-pub"])
        .arg(key_pub)
        .output()
        .expect("run kite perf client");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{label}: client failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.lines().last().expect("a JSON line")).expect("JSON summary")
}

#[test]
fn every_signature_kind_serves_and_verifies_end_to_end() {
    let d = Daemon::local(&[]);
    // One at a time: the forwarder refuses a command whose SignatureTime does not exceed the
    // last one it accepted, and servers started together could sign in the same millisecond.
    let servers: Vec<Server> = KINDS
        .iter()
        .map(|k| {
            let mut s = Server::start(&d, k);
            s.wait_ready();
            s
        })
        .collect();
    for (kind, server) in KINDS.iter().zip(&servers) {
        let r = client(&d, kind, &server.pub_file);
        let received = r["received"].as_u64().unwrap();
        assert!(received > 0, "{kind}: {r}");
        assert!(
            r["timeouts"].as_u64().unwrap() <= received / 100,
            "{kind}: {r}"
        );
        assert_eq!(r["verify_failures"], 0, "{kind}: {r}");
        assert_eq!(r["verified"], received, "{kind}: {r}");
        assert_eq!(r["payload_errors"], 0, "{kind}: {r}");
        assert!(r["goodput_mbps"].as_f64().unwrap() > 0.0, "{kind}: {r}");
        assert!(r["rtt_p99_us"].as_u64().unwrap() >= r["rtt_p50_us"].as_u64().unwrap());
    }

    // Another ECDSA key than the server's: every Data fails verification.
    let other = d.dir().join("other.key");
    let other_pub = d.dir().join("other.pub");
    let gen = kite()
        .args([
            "key",
            "generate",
            "--type",
            "ecdsa-p256",
            "--name",
            "/other",
        ])
        .arg("--out")
        .arg(&other)
        .arg("--pub-out")
        .arg(&other_pub)
        .output()
        .unwrap();
    assert!(gen.status.success());
    let r = client(&d, "ecdsa-p256", &other_pub);
    assert!(r["received"].as_u64().unwrap() > 0, "{r}");
    assert_eq!(r["verified"], 0, "{r}");
    assert_eq!(r["verify_failures"], r["received"], "{r}");

    // `kite key show` names the type and the key.
    let show = kite().args(["key", "show"]).arg(&other).output().unwrap();
    let text = String::from_utf8_lossy(&show.stdout);
    assert!(
        text.contains("type: ecdsa-p256 (SignatureType 3)"),
        "{text}"
    );
    assert!(text.contains("key name: /other/KEY/"), "{text}");
    assert!(text.contains("-----BEGIN PUBLIC KEY-----"), "{text}");
}

/// Every Data a client got was signed by the server's key, carried the server's payload,
/// and nothing timed out.
fn assert_all_verified(label: &str, r: &Value) {
    let received = r["received"].as_u64().unwrap();
    assert!(received > 0, "{label}: {r}");
    assert_eq!(r["timeouts"], 0, "{label}: {r}");
    assert_eq!(r["verified"], received, "{label}: {r}");
    assert_eq!(r["verify_failures"], 0, "{label}: {r}");
    assert_eq!(r["payload_errors"], 0, "{label}: {r}");
}

#[test]
fn signing_in_the_reading_thread_serves_fresh_and_cached_data() {
    let d = Daemon::local(&[]);
    let mut fresh = Server::start_with(&d, "inline", "ecdsa-p256", &["--threads", "0"]);
    fresh.wait_ready();
    let r = client(&d, "inline", &fresh.pub_file);
    assert_all_verified("inline", &r);
    let log = std::fs::read_to_string(&fresh.log).unwrap();
    assert!(log.contains("signing in the reading thread"), "{log}");

    let mut cached = Server::start_with(
        &d,
        "inline-cached",
        "ecdsa-p256",
        &["--threads", "0", "--cached"],
    );
    cached.wait_ready();
    let r = client_with(&d, "inline-cached", &cached.pub_file, &["--names", "64"]);
    assert_all_verified("inline-cached", &r);
}

#[test]
fn a_server_with_a_key_file_signs_with_it_and_rejects_a_mismatched_kind() {
    let d = Daemon::local(&[]);
    let key = d.dir().join("ed.key");
    let key_pub = d.dir().join("ed.pub");
    assert!(kite()
        .args([
            "key",
            "generate",
            "--type",
            "ed25519",
            "--name",
            "/perf/file"
        ])
        .arg("--out")
        .arg(&key)
        .arg("--pub-out")
        .arg(&key_pub)
        .status()
        .unwrap()
        .success());
    let wrong = kite()
        .args([
            "perf",
            "server",
            "/perf/file",
            "--sign",
            "ecdsa-p256",
            "--key",
        ])
        .arg(&key)
        .args(["--socket", d.socket()])
        .output()
        .unwrap();
    assert!(!wrong.status.success());
    assert!(String::from_utf8_lossy(&wrong.stderr).contains("holds a ed25519 key"));
    let bad_kind = kite()
        .args(["perf", "server", "/x", "--sign", "ecdsa-p521"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&bad_kind.stderr);
    assert!(
        err.contains("valid kinds: digest-sha256, hmac-sha256"),
        "{err}"
    );

    let log = d.dir().join("server.log");
    let mut server = Server {
        child: kite()
            .args(["perf", "server", "/perf/file", "--sign", "ed25519", "--key"])
            .arg(&key)
            .args(["--payload", "100", "--socket", d.socket()])
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap(),
        log,
        pub_file: key_pub.clone(),
    };
    server.wait_ready();
    let r = client(&d, "file", &key_pub);
    assert!(r["received"].as_u64().unwrap() > 0, "{r}");
    assert_eq!(r["verify_failures"], 0, "{r}");
}

#[test]
fn a_server_started_while_a_client_already_sends_serves_it() {
    let d = Daemon::local(&[]);
    // The client's Interests are Nacked (no route) until the server's prefix is registered;
    // from then on they reach the server at once, and the first may overtake the answer to
    // its rib/register, before it turns the connection over to its reader.
    let client = kite()
        .args(["perf", "client", "/perf/early", "--window", "16"])
        .args(["--duration", "6s", "--json", "--payload-check"])
        .args(["--socket", d.socket()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start kite perf client");
    std::thread::sleep(Duration::from_millis(500));
    let mut server = Server::start_with(&d, "early", "digest-sha256", &[]);
    server.wait_ready();
    let out = client.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "client failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let r: Value = serde_json::from_str(stdout.lines().last().expect("a JSON line")).unwrap();
    assert!(r["nacks"].as_u64().unwrap() > 0, "before the server: {r}");
    assert!(r["received"].as_u64().unwrap() > 0, "{r}");
    assert_eq!(r["payload_errors"], 0, "{r}");
    assert!(
        server.child.try_wait().unwrap().is_none(),
        "the server stopped: {}",
        std::fs::read_to_string(&server.log).unwrap()
    );
}
