//! Helpers for the end-to-end tests: a `kite run` daemon in a temp dir, killed on drop, the
//! python-ndn applications of `tests/interop/pyndn_daemon.py` (its docstring has the JSON each
//! subcommand prints), their NDNts twins in `tests/interop/ndnts/ndnts_daemon.mjs` (`serve`
//! and `get`, same arguments, same JSON), small Rust peers ([`peer`]), NDNd in a private
//! network namespace ([`ndnd`]) and headless Chromium, with NDNts in a page fetching through a
//! forwarder's WebTransport or WebSocket face ([`browser`]).
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read};
use std::net::{TcpListener, UdpSocket};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use serde_json::Value;
use tempfile::TempDir;

/// How long a daemon may take to open its socket, and a producer to register.
const STARTUP: Duration = Duration::from_secs(15);
/// The longest a consumer or management call (python-ndn or NDNts) may run.
const PY_DEADLINE: Duration = Duration::from_secs(60);

pub mod browser;
pub mod certs;
pub mod chain;
pub mod ctl;
pub mod ndncxx;
pub mod ndnd;
pub mod ndnts;
pub mod netns;
pub mod nlsr_startup;
pub mod peer;
pub mod procnet;
pub mod recorder;
pub mod tools;
pub mod webtransport;

pub use kite_testkit::process::reap;
pub use kite_testkit::pyndn::python;

/// Held by each flooding test: the floods of one test binary run one at a time, since two on
/// two cores would overload each other's forwarder and change what is measured (whether CoDel
/// marks before the PIT fills, whether management answers in time).
static ONE_FLOOD: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Waits for the floods of this test binary that run to end; the next starts when the guard
/// is dropped.
pub fn one_flood_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_FLOOD
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn script() -> PathBuf {
    kite_testkit::pyndn::interop_script("pyndn_daemon.py")
}

/// The NDN library a test application is written with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lib {
    /// python-ndn (PyPI): `tests/interop/pyndn_daemon.py`.
    PythonNdn,
    /// NDNts (npm): `tests/interop/ndnts/ndnts_daemon.mjs`.
    Ndnts,
}

impl Lib {
    /// The interpreter and script, ready for a subcommand.
    fn command(self) -> Command {
        let (program, script) = match self {
            Lib::PythonNdn => (python(), script()),
            Lib::Ndnts => (ndnts::node(), ndnts::script()),
        };
        let mut cmd = Command::new(program);
        cmd.arg(script);
        cmd
    }

    /// Whether its applications can run here (NDNts says SKIPPED when not installed).
    pub fn available(self) -> bool {
        match self {
            Lib::PythonNdn => true,
            Lib::Ndnts => ndnts::available(),
        }
    }
}

/// NDNd's binary, which KITE_NDND names (scripts/test.sh builds NDNd v1.5.3 with Go and sets
/// it), or `None`: the running test skips.
pub fn ndnd() -> Option<PathBuf> {
    let bin = std::env::var_os("KITE_NDND").map(PathBuf::from);
    if bin.is_none() {
        kite_testkit::skip("KITE_NDND is not set (scripts/test.sh builds NDNd v1.5.3 and sets it)");
    }
    bin
}

/// A port on 127.0.0.1 that was free a moment ago (`kite run` takes no port 0).
pub fn free_udp_port() -> u16 {
    let s = UdpSocket::bind("127.0.0.1:0").expect("bind a UDP port");
    s.local_addr().unwrap().port()
}

/// A TCP port on 127.0.0.1 that was free a moment ago.
pub fn free_tcp_port() -> u16 {
    let s = TcpListener::bind("127.0.0.1:0").expect("bind a TCP port");
    s.local_addr().unwrap().port()
}

/// Sends `signal` (e.g. "TERM") to `pid` through kill(1): the tests hold no unsafe code.
pub fn signal(pid: u32, signal: &str) {
    let _ = Command::new("kill")
        .args([&format!("-{signal}"), &pid.to_string()])
        .status();
}

/// Sends SIGTERM to `pid`.
pub fn terminate(pid: u32) {
    signal(pid, "TERM");
}

/// A running `kite run`, stopped (SIGTERM, then SIGKILL) when dropped.
pub struct Daemon {
    child: Child,
    dir: TempDir,
    socket: PathBuf,
    log: PathBuf,
    /// How it was started: launcher, environment and `kite run` arguments, for a restart.
    launcher: Vec<String>,
    env: Vec<(String, String)>,
    args: Vec<String>,
}

impl Daemon {
    /// Unix socket only (`--local-only`), plus `args`.
    pub fn local(args: &[&str]) -> Daemon {
        let mut all = vec!["--local-only".to_string()];
        all.extend(args.iter().map(|a| a.to_string()));
        Daemon::start(&[], &all)
    }

    /// Unix socket plus UDP and TCP listeners on 127.0.0.1 at the given ports.
    pub fn loopback(udp: u16, tcp: u16) -> Daemon {
        Daemon::start(
            &[],
            &[
                "--udp".into(),
                format!("127.0.0.1:{udp}"),
                "--tcp".into(),
                format!("127.0.0.1:{tcp}"),
            ],
        )
    }

    /// Starts `launcher... kite run --socket <tmp>/nfd.sock args...` (the launcher, e.g.
    /// nsenter, must exec kite so the child's pid is the daemon's) and waits until the socket
    /// accepts connections.
    pub fn start(launcher: &[String], args: &[String]) -> Daemon {
        Daemon::start_with_env(launcher, &[], args)
    }

    /// [`Daemon::start`] with extra environment variables for `kite run`.
    pub fn start_with_env(launcher: &[String], env: &[(&str, &str)], args: &[String]) -> Daemon {
        let dir = tempfile::tempdir().expect("temp dir");
        let socket = dir.path().join("nfd.sock");
        let log = dir.path().join("kite.log");
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let child = spawn(launcher, &env, &socket, &log, args);
        let mut d = Daemon {
            child,
            dir,
            socket,
            log,
            launcher: launcher.to_vec(),
            env,
            args: args.to_vec(),
        };
        d.wait_ready();
        d
    }

    /// Starts the same `kite run` again, in the same directory and on the same socket path,
    /// once this one has exited (its log is appended to); waits until the socket accepts
    /// connections.
    pub fn restart(&mut self) {
        assert!(
            matches!(self.child.try_wait(), Ok(Some(_))),
            "restart only a daemon that has exited"
        );
        self.child = spawn(
            &self.launcher,
            &self.env,
            &self.socket,
            &self.log,
            &self.args,
        );
        self.wait_ready();
    }

    /// Waits up to `limit` for the daemon to exit on its own; its exit status.
    pub fn exited(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        let until = Instant::now() + limit;
        while Instant::now() < until {
            if let Ok(Some(s)) = self.child.try_wait() {
                return Some(s);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }

    fn wait_ready(&mut self) {
        let until = Instant::now() + STARTUP;
        while Instant::now() < until {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("kite run exited ({status}): {}", self.log_text());
            }
            if UnixStream::connect(&self.socket).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("kite run did not open {}", self.socket.display());
    }

    /// The unix socket apps connect to.
    pub fn socket(&self) -> &str {
        self.socket.to_str().expect("temp paths are UTF-8")
    }

    /// The daemon's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// What the daemon wrote to stderr so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Sends `sig` (e.g. "TERM", "INT") and waits up to `limit` for the exit status.
    pub fn stop(&mut self, sig: &str, limit: Duration) -> Option<std::process::ExitStatus> {
        signal(self.child.id(), sig);
        self.exited(limit)
    }

    /// The daemon's temp dir (for files a test puts beside it).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        // A failing test shows what the daemon said, and whether it was still running.
        if std::thread::panicking() {
            let state = match self.child.try_wait() {
                Ok(Some(status)) => format!("had exited ({status})"),
                _ => "was running".to_string(),
            };
            let log = self.log_text();
            let lines: Vec<&str> = log.lines().collect();
            let tail = lines[lines.len().saturating_sub(80)..].join("\n");
            eprintln!("kite run {state}; the end of its log:\n{tail}");
        }
        if let Ok(None) = self.child.try_wait() {
            terminate(self.child.id());
            reap(&mut self.child, Duration::from_secs(5));
        }
    }
}

/// Spawns `launcher... kite run --socket SOCKET args...` with `env`, its stderr appended to
/// `log`.
fn spawn(
    launcher: &[String],
    env: &[(String, String)],
    socket: &Path,
    log: &Path,
    args: &[String],
) -> Child {
    let kite = env!("CARGO_BIN_EXE_kite");
    let (program, pre) = match launcher.split_first() {
        Some((p, rest)) => (p.as_str(), rest.iter().map(String::as_str).collect()),
        None => (kite, Vec::new()),
    };
    let mut cmd = Command::new(program);
    cmd.args(pre);
    if !launcher.is_empty() {
        cmd.arg(kite);
    }
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .expect("log file");
    cmd.arg("run").arg("--socket").arg(socket);
    // $KITE_TEST_IO_THREADS runs every daemon with that many I/O threads (scripts/test.sh
    // runs the end-to-end tests again with 2), unless the test chose its own.
    if let Ok(n) = std::env::var("KITE_TEST_IO_THREADS") {
        if !args.iter().any(|a| a == "--io-threads") {
            cmd.arg("--io-threads").arg(n);
        }
    }
    cmd.args(args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("start kite run")
}

/// Reads a child's stdout lines as JSON into a channel, from a thread.
fn json_lines(out: impl Read + Send + 'static) -> Receiver<Value> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines() {
            let Ok(line) = line else { break };
            let v = serde_json::from_str(&line)
                .unwrap_or_else(|_| Value::String(format!("non-JSON line: {line}")));
            if tx.send(v).is_err() {
                break;
            }
        }
    });
    rx
}

/// Runs `pyndn_daemon.py args...` to the end; its JSON lines. Panics with its stderr on a
/// non-zero exit or after a minute.
pub fn py(args: &[&str]) -> Vec<Value> {
    app(Lib::PythonNdn, args)
}

/// Runs a `lib` application (`args` as `pyndn_daemon.py` takes them) to the end; its JSON
/// lines. Panics with its stderr on a non-zero exit or after a minute.
pub fn app(lib: Lib, args: &[&str]) -> Vec<Value> {
    App::spawn(lib, args).finish()
}

/// A `lib` application running in the background, e.g. a consumer whose Interest must be
/// pending while the test does something else.
pub struct App {
    child: Child,
    lines: Receiver<Value>,
    stderr: Option<std::thread::JoinHandle<String>>,
    what: String,
}

impl App {
    /// Starts `lib`'s script with `args`.
    pub fn spawn(lib: Lib, args: &[&str]) -> App {
        let mut child = lib
            .command()
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("start {lib:?}: {e}"));
        let lines = json_lines(child.stdout.take().unwrap());
        let mut stderr = child.stderr.take().unwrap();
        let stderr = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = stderr.read_to_string(&mut s);
            s
        });
        App {
            child,
            lines,
            stderr: Some(stderr),
            what: format!("{lib:?} {args:?}"),
        }
    }

    /// Waits for it to end (a minute at most); its JSON lines. Panics with its stderr on a
    /// non-zero exit or after the minute.
    pub fn finish(mut self) -> Vec<Value> {
        let finished = reap(&mut self.child, PY_DEADLINE);
        let status = self.child.wait().expect("application status");
        let err = self
            .stderr
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or_default();
        // The reader thread may still be passing on the last lines: read until it ends (at
        // the pipe's end of file), not only what it has passed on so far.
        let until = Instant::now() + Duration::from_secs(5);
        let mut out = Vec::new();
        while let Ok(v) = self
            .lines
            .recv_timeout(until.saturating_duration_since(Instant::now()))
        {
            out.push(v);
        }
        let what = &self.what;
        assert!(
            finished,
            "{what} ran over {PY_DEADLINE:?}, having printed {out:?}: {err}"
        );
        assert!(status.success(), "{what} failed ({status}): {err}");
        out
    }
}

impl Drop for App {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The one JSON line of a single-answer subcommand.
pub fn py_one(args: &[&str]) -> Value {
    let mut out = py(args);
    assert_eq!(out.len(), 1, "one line from {args:?}, got {out:?}");
    out.remove(0)
}

/// A management dataset, decoded by python-ndn.
pub fn dataset(socket: &str, name: &str) -> Value {
    py_one(&["dataset", socket, name])
}

/// A control command made by python-ndn; its ControlResponse.
pub fn command(socket: &str, module: &str, verb: &str, params: &[&str]) -> Value {
    let mut args = vec!["command", socket, module, verb];
    args.extend_from_slice(params);
    py_one(&args)
}

/// The body of a ControlResponse, asserting its status code is 200.
pub fn ok(resp: &Value) -> &Value {
    assert_eq!(resp["status_code"], 200, "command failed: {resp}");
    &resp["body"]
}

/// A python-ndn producer (`serve`), killed when dropped.
pub struct Producer {
    child: Child,
    lines: Receiver<Value>,
    seen: Vec<Value>,
    /// Its ready line: `face_id` (and `sha256`, `segments` for an object).
    pub ready: Value,
}

impl Producer {
    /// Starts python-ndn's `serve socket prefix extra...` and waits until its prefix is
    /// registered.
    pub fn start(socket: &str, prefix: &str, extra: &[&str]) -> Producer {
        Producer::start_with(Lib::PythonNdn, socket, &[prefix], extra)
    }

    /// Starts `lib`'s `serve socket prefixes... extra...` and waits until every prefix is
    /// registered.
    pub fn start_with(lib: Lib, socket: &str, prefixes: &[&str], extra: &[&str]) -> Producer {
        let mut child = lib
            .command()
            .args(["serve", socket])
            .args(prefixes)
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("start {lib:?} producer: {e}"));
        let lines = json_lines(child.stdout.take().unwrap());
        let ready = match lines.recv_timeout(STARTUP) {
            Ok(v) => v,
            Err(e) => {
                let _ = child.kill();
                panic!("{lib:?} producer for {prefixes:?} never became ready: {e}");
            }
        };
        assert_eq!(ready["ready"], true, "producer for {prefixes:?}: {ready}");
        Producer {
            child,
            lines,
            seen: Vec::new(),
            ready,
        }
    }

    /// The FaceId the forwarder gave the producer's connection.
    pub fn face_id(&self) -> u64 {
        self.ready["face_id"]
            .as_u64()
            .expect("face_id in the ready line")
    }

    /// Every Interest the producer answered so far (waits briefly for lines in flight).
    pub fn interests(&mut self) -> &[Value] {
        while let Ok(v) = self.lines.recv_timeout(Duration::from_millis(100)) {
            self.seen.push(v);
        }
        &self.seen
    }

    /// Waits up to `limit` until the producer has received `n` Interests in all; false if it
    /// has not by then.
    pub fn wait_interests(&mut self, n: usize, limit: Duration) -> bool {
        let until = Instant::now() + limit;
        while self.seen.len() < n {
            match self
                .lines
                .recv_timeout(until.saturating_duration_since(Instant::now()))
            {
                Ok(v) => self.seen.push(v),
                Err(_) => return false,
            }
        }
        true
    }

    /// The producer's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Kills the producer and waits for it.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Kills the producer, waits until `kite`'s face for it is gone (so its routes are too:
    /// from now on only the Content Store can answer for its prefixes), and returns every
    /// Interest it received: all its output, read to the end.
    pub fn stop(&mut self, kite: &Daemon) -> Vec<Value> {
        self.kill();
        // The reader thread ends at the pipe's end of file, closing the channel.
        while let Ok(v) = self.lines.recv_timeout(STARTUP) {
            self.seen.push(v);
        }
        let face = self.face_id();
        let gone = eventually(STARTUP, || {
            let faces = ctl::json(kite.socket(), &["face", "list"]);
            let listed = faces
                .as_array()
                .expect("face list is an array")
                .iter()
                .any(|f| f["face_id"] == face);
            (!listed).then_some(())
        });
        assert!(gone.is_some(), "face {face} outlived its producer");
        self.seen.clone()
    }
}

impl Drop for Producer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Polls `f` every 100 ms for up to `limit` until it returns Some.
pub fn eventually<T>(limit: Duration, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let until = Instant::now() + limit;
    loop {
        if let Some(v) = f() {
            return Some(v);
        }
        if Instant::now() >= until {
            return None;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}
