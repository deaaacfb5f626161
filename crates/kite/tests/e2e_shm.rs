//! Shared-memory faces through a real `kite run`: `kite perf`, `get`/`put` and `ping` switch
//! to shared memory and exchange correct packets over it; with the offer off (a forwarder
//! that does not know the request) or with `KITE_SHM=off` they keep the socket and work the
//! same; a shared-memory face ends when its application's socket closes; ten idle
//! shared-memory applications leave the daemon idle.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::tools::{random_file, sha256_of, Put};
use common::{eventually, Daemon};
use kite_testkit::process::cpu_ticks;

const SWITCHED: &str = "switched to shared memory";

/// `kite args...` with `env`, waited for.
fn kite_env(env: &[(&str, &str)], args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kite"))
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .expect("run kite")
}

fn switches(d: &Daemon) -> usize {
    d.log_text().matches(SWITCHED).count()
}

/// perf, put/get and ping against `d` with `env`; returns how many faces switched to shared
/// memory meanwhile.
fn tools_exchange(d: &Daemon, env: &[(&str, &str)]) -> usize {
    let before = switches(d);
    let sock = d.socket();
    // perf: a signing server and a windowed client checking every payload.
    let mut server = Command::new(env!("CARGO_BIN_EXE_kite"))
        .args(["perf", "server", "/shm/perf", "--threads", "0"])
        .args(["--payload", "8000", "--duration", "20s", "--socket", sock])
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start kite perf server");
    let mut lines = BufReader::new(server.stderr.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    assert!(first.starts_with("kite perf server"), "{first}");
    let out = kite_env(
        env,
        &[
            "perf",
            "client",
            "/shm/perf",
            "--duration",
            "2s",
            "--payload-check",
            "--json",
            "--socket",
            sock,
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value =
        serde_json::from_str(stdout.lines().last().expect("a JSON line")).expect("JSON");
    assert!(json["received"].as_u64().unwrap_or(0) > 100, "{json}");
    assert_eq!(json["payload_errors"].as_u64().unwrap_or(0), 0, "{json}");
    let _ = server.kill();
    let _ = server.wait();

    // put and get of a file spanning many segments.
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    let want = random_file(&input, 2_000_000, 7);
    let _put = Put::start(sock, "/shm/file", &input, &[]);
    let output = dir.path().join("out");
    let out = kite_env(
        env,
        &[
            "get",
            "/shm/file",
            "-o",
            output.to_str().unwrap(),
            "--socket",
            sock,
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(sha256_of(&output), want);

    // ping: a server and three probes.
    let mut pinger = Command::new(env!("CARGO_BIN_EXE_kite"))
        .args(["ping", "--server", "/shm/ping", "--socket", sock])
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the ping server");
    let mut lines = BufReader::new(pinger.stdout.take().unwrap()).lines();
    assert!(lines.next().unwrap().unwrap().starts_with("PING SERVER"));
    let out = kite_env(
        env,
        &["ping", "/shm/ping", "-c", "3", "-i", "50", "--socket", sock],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert_eq!(text.matches("content from /shm/ping").count(), 3, "{text}");
    let _ = pinger.kill();
    let _ = pinger.wait();
    switches(d) - before
}

#[test]
fn tools_exchange_over_shared_memory() {
    let d = Daemon::local(&[]);
    let switched = tools_exchange(&d, &[]);
    // perf server and client, put (and its registration), get, ping server and client.
    assert!(switched >= 6, "{switched} faces switched to shared memory");
}

#[test]
fn tools_keep_the_socket_when_the_forwarder_does_not_offer_shared_memory() {
    let d = Daemon::local(&["--shm", "false"]);
    assert_eq!(tools_exchange(&d, &[]), 0);
}

#[test]
fn tools_keep_the_socket_when_told_to() {
    let d = Daemon::local(&[]);
    // `Put` starts without the variable: only the other tools keep the socket.
    let switched = tools_exchange(&d, &[("KITE_SHM", "off")]);
    assert!(
        switched <= 1,
        "{switched} faces switched despite KITE_SHM=off"
    );
}

/// The face id of the last switch in the daemon's log.
fn last_switched_face(d: &Daemon) -> u64 {
    let log = d.log_text();
    let line = log
        .lines()
        .rev()
        .find(|l| l.contains(SWITCHED))
        .expect("a switch");
    let at = line.find("face=").expect("face field") + 5;
    line[at..]
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn a_shared_memory_face_ends_when_its_application_closes_the_socket() {
    let d = Daemon::local(&[]);
    let mut app = kite_app::Client::connect_unix(d.socket()).expect("connect");
    // Management works over the rings like over the socket.
    let faces = app
        .dataset(
            &"/localhost/nfd/faces/list".parse().unwrap(),
            Duration::from_secs(5),
        )
        .expect("faces/list over shared memory");
    assert!(!faces.is_empty());
    let id = last_switched_face(&d);
    let destroyed = format!("face closed face={id} ");
    assert!(!d.log_text().contains(&destroyed));
    drop(app);
    let gone = eventually(Duration::from_secs(5), || {
        d.log_text().contains(&destroyed).then_some(())
    });
    assert!(gone.is_some(), "face {id} still up:\n{}", d.log_text());
}

#[test]
fn ten_idle_shared_memory_applications_leave_the_daemon_idle() {
    let d = Daemon::local(&[]);
    let apps: Vec<_> = (0..10)
        .map(|_| kite_app::Client::connect_unix(d.socket()).expect("connect"))
        .collect();
    // The daemon logs each switch once it has sent the offer the client already took.
    let all = eventually(Duration::from_secs(5), || {
        (switches(&d) == 10).then_some(())
    });
    assert!(all.is_some(), "{} of 10 switched", switches(&d));
    std::thread::sleep(Duration::from_millis(500));
    let before = cpu_ticks(d.pid());
    let start = Instant::now();
    std::thread::sleep(Duration::from_secs(3));
    let used = cpu_ticks(d.pid()) - before;
    let share = used as f64 / 100.0 / start.elapsed().as_secs_f64();
    // A busy-polling forwarder would use a whole core; idle it sleeps in epoll_wait.
    assert!(
        share < 0.05,
        "idle daemon used {:.1}% of a core",
        share * 100.0
    );
    drop(apps);
}
