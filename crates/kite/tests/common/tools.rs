//! Helpers for the tests of `kite ping|get|put`: running the binary, a `kite put` and a
//! `kite ping --server` in the background, objects and their SHA-256.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use sha2::{Digest, Sha256};

use super::{reap, terminate};

/// Runs `kite args...` to the end.
pub fn kite(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kite"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run kite")
}

/// Runs `kite args...` to the end, with `input` (if any) on its standard input.
pub fn kite_with_input(args: &[&str], input: Option<&[u8]>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kite"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start kite");
    if let Some(input) = input {
        child.stdin.take().unwrap().write_all(input).unwrap();
    }
    drop(child.stdin.take());
    child.wait_with_output().unwrap()
}

/// Runs `kite run ARGS` (with `env`) that must stop by itself, within 20 s.
pub fn run_to_exit(args: &[&str], env: &[(&str, &str)]) -> Output {
    kite_testkit::process::run_to_exit(
        Command::new(env!("CARGO_BIN_EXE_kite"))
            .arg("run")
            .args(args)
            .envs(env.iter().copied()),
        std::time::Duration::from_secs(20),
    )
}

/// `kite get NAME -o OUT` against the forwarder at `socket` (on `node`); panics unless it
/// succeeds.
pub fn get_to_file(socket: &str, node: &str, name: &str, out: &Path) {
    let got = kite(&["get", "--socket", socket, name, "-o", out.to_str().unwrap()]);
    assert!(
        got.status.success(),
        "kite get {name} on {node}: {}",
        String::from_utf8_lossy(&got.stderr)
    );
}

/// Writes `len` pseudo-random octets (xorshift, seeded) to `path`; their SHA-256, hex.
pub fn random_file(path: &Path, len: usize, seed: u64) -> String {
    let mut x = seed | 1;
    let mut buf = Vec::with_capacity(len + 8);
    while buf.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        buf.extend_from_slice(&x.to_le_bytes());
    }
    buf.truncate(len);
    std::fs::File::create(path)
        .and_then(|mut f| f.write_all(&buf))
        .expect("write the object");
    sha256_hex(&buf)
}

/// The SHA-256 of `octets`, hex.
pub fn sha256_hex(octets: &[u8]) -> String {
    hex::encode(Sha256::digest(octets))
}

/// The SHA-256 of a file, hex.
pub fn sha256_of(path: &Path) -> String {
    sha256_hex(&std::fs::read(path).expect("read the fetched file"))
}

/// A `kite put` serving in the background; SIGTERM when dropped.
pub struct Put {
    child: Child,
    /// The versioned name it printed.
    pub versioned: String,
    stopped: bool,
}

impl Put {
    /// Starts `kite put --socket socket name file extra...` and waits for the versioned name
    /// (printed once the segments are signed and the prefix registered).
    pub fn start(socket: &str, name: &str, file: &Path, extra: &[&str]) -> Put {
        let mut child = Command::new(env!("CARGO_BIN_EXE_kite"))
            .args(["put", "--socket", socket, name])
            .arg(file)
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start kite put");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .expect("read kite put's output");
        assert!(line.starts_with(name), "kite put printed {line:?}");
        Put {
            child,
            versioned: line.trim().to_owned(),
            stopped: false,
        }
    }

    /// Stops it with SIGTERM; whether it exited successfully within the limit.
    pub fn stop(&mut self) -> bool {
        if self.stopped {
            return true;
        }
        self.stopped = true;
        terminate(self.child.id());
        reap(&mut self.child, Duration::from_secs(10))
            && self.child.wait().is_ok_and(|s| s.success())
    }
}

impl Drop for Put {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A `kite ping --server` answering under a prefix; SIGTERM when dropped.
pub struct PingServer(Child);

impl PingServer {
    /// Starts `kite ping --server prefix --socket socket` and waits for its banner (printed
    /// once its prefix is registered).
    pub fn start(socket: &str, prefix: &str) -> PingServer {
        let mut child = Command::new(env!("CARGO_BIN_EXE_kite"))
            .args(["ping", "--server", prefix, "--socket", socket])
            .env_remove("NDN_CLIENT_TRANSPORT")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start kite ping --server");
        let mut line = String::new();
        // Its stdout stays open (read through a borrow), so later lines do not break a pipe.
        BufReader::new(child.stdout.as_mut().unwrap())
            .read_line(&mut line)
            .expect("read kite ping --server's banner");
        assert!(
            line.starts_with("PING SERVER"),
            "kite ping --server printed {line:?}"
        );
        PingServer(child)
    }
}

impl Drop for PingServer {
    fn drop(&mut self) {
        terminate(self.0.id());
        reap(&mut self.0, Duration::from_secs(5));
    }
}

/// The value of `key: value` in `kite get`'s summary.
pub fn summary_value<'a>(stderr: &'a str, key: &str) -> &'a str {
    stderr
        .lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(": "))
        .unwrap_or_else(|| panic!("no {key:?} in {stderr}"))
}
