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

#[test]
fn strategy_available_lists_asf_and_set_accepts_it() {
    let d = Daemon::local(&[]);
    let s = d.socket();
    let all = json(s, &["strategy", "available"]).to_string();
    for name in [
        "/localhost/nfd/strategy/best-route/v=5",
        "/localhost/nfd/strategy/multicast/v=5",
        "/localhost/nfd/strategy/asf/v=5",
    ] {
        assert!(all.contains(name), "{name} in {all}");
    }
    let set = json(s, &["strategy", "set", "/asf", "asf"]);
    assert_eq!(set["strategy"], "/localhost/nfd/strategy/asf/v=5", "{set}");
    let choices = json(s, &["strategy", "list"]).to_string();
    assert!(
        choices.contains("/localhost/nfd/strategy/asf/v=5"),
        "{choices}"
    );
}

/// A producer on its own connection answering every Interest under its prefix after
/// `delay`, counting them, until `stop`.
fn producer(
    socket: &str,
    prefix: &str,
    delay: std::time::Duration,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> (
    std::sync::Arc<std::sync::atomic::AtomicU64>,
    std::thread::JoinHandle<()>,
) {
    use common::peer::{data, with_token, Conn};
    use std::sync::atomic::Ordering;
    let mut conn = Conn::unix(socket);
    conn.register(prefix);
    let count = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let seen = count.clone();
    let thread = std::thread::spawn(move || {
        while !stop.load(Ordering::Relaxed) {
            if let common::peer::Got::Frame(f) = conn.recv(std::time::Duration::from_millis(50)) {
                let Ok((h, kite_packet::NetPacket::Interest(i))) =
                    kite_packet::NetPacket::decode_frame(f)
                else {
                    continue;
                };
                seen.fetch_add(1, Ordering::Relaxed);
                std::thread::sleep(delay);
                let _ = conn.try_send(&with_token(h.pit_token, data(&i.name, &b"x"[..])));
            }
        }
    });
    (count, thread)
}

#[test]
fn asf_moves_to_the_faster_producer_after_probing_it() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    let d = Daemon::local(&[]);
    let s = d.socket();
    json(s, &["strategy", "set", "/asf", "asf"]);
    let stop = Arc::new(AtomicBool::new(false));
    // Registered first: the lower FaceId, chosen while neither is measured.
    let (slow, slow_thread) = producer(s, "/asf", Duration::from_millis(40), stop.clone());
    let (fast, fast_thread) = producer(s, "/asf", Duration::ZERO, stop.clone());
    let mut consumer = common::peer::Conn::unix(s);
    // Every name shares its first two components, so one forwarding thread (one set of
    // measurements) sees them all.
    let mut n = 0;
    let mut fetch = |consumer: &mut common::peer::Conn| {
        n += 1;
        consumer.fetch(&format!("/asf/x/{n}"), Duration::from_secs(2));
    };
    fetch(&mut consumer);
    assert_eq!(
        slow.load(Ordering::Relaxed),
        1,
        "unmeasured: the first face"
    );
    // The first probe comes within 5 s and goes to the unmeasured fast producer.
    let until = Instant::now() + Duration::from_secs(8);
    while fast.load(Ordering::Relaxed) == 0 && Instant::now() < until {
        fetch(&mut consumer);
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(fast.load(Ordering::Relaxed) > 0, "probed within 5 s");
    std::thread::sleep(Duration::from_millis(100));
    let (slow_before, fast_before) = (slow.load(Ordering::Relaxed), fast.load(Ordering::Relaxed));
    for _ in 0..10 {
        fetch(&mut consumer);
    }
    stop.store(true, Ordering::Relaxed);
    let _ = (slow_thread.join(), fast_thread.join());
    assert_eq!(
        (
            slow.load(Ordering::Relaxed) - slow_before,
            fast.load(Ordering::Relaxed) - fast_before
        ),
        (0, 10),
        "the measured faster producer takes every Interest"
    );
}

#[test]
fn face_create_with_a_higher_persistency_upgrades_the_existing_face() {
    use common::ctl::ok;
    let d = Daemon::loopback(common::free_udp_port(), common::free_tcp_port());
    let s = d.socket();
    let peer = format!("udp4://127.0.0.1:{}", common::free_udp_port());
    let created = json(s, &["face", "create", &peer]);
    assert_eq!(created["result"], "face-created", "{created}");
    let id = created["face_id"].as_u64().unwrap().to_string();
    // Lower or equal: nothing to change.
    let again = ok(s, &["face", "create", &peer]);
    assert!(
        again.starts_with(&format!("face-exists id={id} ")),
        "{again}"
    );
    // Higher: faces/update, as nfdc does.
    let up = ok(s, &["face", "create", &peer, "--persistency", "permanent"]);
    assert!(
        up.starts_with(&format!("face-updated id={id} ")) && up.contains("persistency=permanent"),
        "{up}"
    );
    let shown = json(s, &["face", "show", &id]);
    assert_eq!(shown["persistency"], "permanent", "{shown}");
    // Back down is not an upgrade: the face stays permanent.
    let down = ok(s, &["face", "create", &peer, "--persistency", "persistent"]);
    assert!(down.starts_with("face-exists"), "{down}");
    assert_eq!(json(s, &["face", "show", &id])["persistency"], "permanent");
}

#[test]
fn an_mtu_the_config_refuses_is_refused_by_face_create_with_the_same_rule() {
    let d = Daemon::local(&[]);
    let peer = format!("udp4://127.0.0.1:{}", common::free_udp_port());
    let e = err(d.socket(), &["face", "create", &peer, "--mtu", "10"]);
    assert!(
        e.contains("mtu must be between 64 and 65507, not 10"),
        "{e}"
    );
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("kite.toml");
    std::fs::write(&config, "[face_system.udp]\nmtu = 10\n").unwrap();
    let out = common::tools::kite(&[
        "run",
        "--config",
        config.to_str().unwrap(),
        "--print-config",
    ]);
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(
        text.contains("mtu must be between 64 and 65507, not 10"),
        "{text}"
    );
}

/// `kite args...`: its standard output parsed whole as one JSON value (panics, with both
/// streams, when it is anything else or the command fails).
fn only_json(args: &[&str]) -> serde_json::Value {
    let out = common::tools::kite(args);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "kite {args:?}: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("kite {args:?}: stdout is not only JSON ({e}): {stdout:?}"))
}

#[test]
fn every_json_output_is_only_json() {
    let d = Daemon::local(&[]);
    let s = d.socket();
    for args in [
        &["status"][..],
        &["face", "list"],
        &["face", "show", "1"],
        &["channel"],
        &["route", "list"],
        &["fib"],
        &["strategy", "list"],
        &["strategy", "available"],
        &["cs", "info"],
    ] {
        let mut all = args.to_vec();
        all.extend(["--socket", s, "--json"]);
        only_json(&all);
    }
    let fwd = only_json(&[
        "bench",
        "fwd",
        "--fib",
        "100",
        "--duration",
        "200ms",
        "--json",
    ]);
    assert_eq!(fwd["benchmark"], "fwd");
    let daemon = only_json(&["bench", "daemon", "--duration", "300ms", "--json"]);
    assert_eq!(daemon["benchmark"], "daemon");
    let flood = only_json(&[
        "bench",
        "flood",
        "--socket",
        s,
        "--duration",
        "200ms",
        "--json",
    ]);
    assert!(flood["interests"].as_u64().is_some(), "{flood}");
    let mut server = std::process::Command::new(env!("CARGO_BIN_EXE_kite"))
        .args(["perf", "server", "/perf-json", "--socket", s])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The server says on standard error once its prefix is registered.
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(server.stderr.as_mut().unwrap()),
        &mut line,
    )
    .unwrap();
    let perf = only_json(&[
        "perf",
        "client",
        "/perf-json",
        "--duration",
        "300ms",
        "--socket",
        s,
        "--json",
    ]);
    assert!(perf["received"].as_u64().unwrap() > 0, "{perf}");
    common::terminate(server.id());
    common::reap(&mut server, std::time::Duration::from_secs(5));
}

/// How many times `needle` occurs in `hay`.
fn occurrences(hay: &str, needle: &str) -> usize {
    hay.matches(needle).count()
}

#[test]
fn error_texts_say_each_cause_once() {
    // A UDP port already taken: kite run cannot listen.
    let taken = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("nfd.sock");
    let out = common::tools::kite(&[
        "run",
        "--socket",
        socket.to_str().unwrap(),
        "--udp",
        &format!("127.0.0.1:{port}"),
        "--tcp",
        &format!("127.0.0.1:{}", common::free_tcp_port()),
    ]);
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{e}");
    assert_eq!(occurrences(&e, "Address already in use"), 1, "{e}");

    // A "forwarder" that reads the first Interest and hangs up.
    let path = dir.path().join("hangs-up.sock");
    let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
    let acceptor = std::thread::spawn(move || {
        if let Ok((mut conn, _)) = listener.accept() {
            let _ = std::io::Read::read(&mut conn, &mut [0u8; 1024]);
        }
    });
    let e = err(path.to_str().unwrap(), &["status"]);
    acceptor.join().unwrap();
    assert_eq!(
        occurrences(&e, "the forwarder closed the connection"),
        1,
        "{e}"
    );
}

#[test]
fn key_generate_refuses_to_overwrite_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("k.pem");
    let key_s = key.to_str().unwrap();
    let generate = |extra: &[&str]| {
        let mut args = vec![
            "key", "generate", "--type", "ed25519", "--name", "/k", "--out", key_s,
        ];
        args.extend(extra);
        common::tools::kite(&args)
    };
    assert!(generate(&[]).status.success());
    let first = std::fs::read(&key).unwrap();
    let again = generate(&[]);
    let e = String::from_utf8_lossy(&again.stderr);
    assert!(!again.status.success(), "overwrote without --force: {e}");
    assert!(e.contains("already exists") && e.contains("--force"), "{e}");
    assert_eq!(std::fs::read(&key).unwrap(), first, "the key is untouched");
    assert!(generate(&["--force"]).status.success());
    assert_ne!(std::fs::read(&key).unwrap(), first, "--force replaced it");
}

/// `setpriv` running `kite args...` as nobody (uid 65534), with only PATH and TMPDIR set.
fn as_nobody(tmp: &std::path::Path, args: &[&str]) -> std::process::Command {
    let mut c = std::process::Command::new("setpriv");
    c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(env!("CARGO_BIN_EXE_kite"))
        .args(args)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("TMPDIR", tmp);
    c
}

#[test]
fn a_user_without_xdg_runtime_dir_finds_the_socket_kite_run_fell_back_to() {
    use std::os::unix::fs::PermissionsExt;
    let root = std::process::Command::new("id").arg("-u").output();
    let can_switch = root.is_ok_and(|o| o.stdout == b"0\n")
        && std::process::Command::new("setpriv")
            .arg("--version")
            .output()
            .is_ok();
    if !can_switch {
        kite_testkit::skip("needs root and setpriv to run kite as another user");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    // Not permitted to create /run/nfd: kite run falls back to a per-user socket.
    let mut daemon = as_nobody(dir.path(), &["run", "--local-only"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let status = common::eventually(std::time::Duration::from_secs(15), || {
        let out = as_nobody(dir.path(), &["status", "--json"])
            .output()
            .unwrap();
        out.status.success().then_some(out)
    });
    common::terminate(daemon.id());
    let mut stderr = String::new();
    if common::reap(&mut daemon, std::time::Duration::from_secs(5)) {
        let _ = std::io::Read::read_to_string(daemon.stderr.as_mut().unwrap(), &mut stderr);
    }
    let out =
        status.unwrap_or_else(|| panic!("kite status found no forwarder; kite run said: {stderr}"));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v.to_string().contains("kite-"), "{v}");
}

#[test]
fn peek_fetches_what_poke_serves_and_exits_by_ndnpeeks_codes() {
    use std::io::{BufRead, Write};
    let d = Daemon::local(&[]);
    let s = d.socket();
    let mut poke = std::process::Command::new(env!("CARGO_BIN_EXE_kite"))
        .args([
            "poke",
            "/e2e/poke/item",
            "--freshness",
            "5000",
            "--socket",
            s,
        ])
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    poke.stdin
        .take()
        .unwrap()
        .write_all(b"hello, peek")
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(poke.stderr.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.contains("serving /e2e/poke/item"), "{line}");
    // The content alone on standard output.
    let out = common::tools::kite(&["peek", "/e2e/poke/item", "--socket", s]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.stdout, b"hello, peek");
    assert!(common::reap(&mut poke, std::time::Duration::from_secs(5)));
    assert!(poke.wait().unwrap().success(), "poke exits 0 once fetched");
    // The whole packet, from the Content Store now that poke is gone (CanBePrefix, so a Data
    // cached under the name answers too).
    let out = common::tools::kite(&["peek", "/e2e/poke/item", "--prefix", "--hex", "--socket", s]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let wire = hex::decode(String::from_utf8_lossy(&out.stdout).trim()).unwrap();
    let data = kite_packet::Data::decode(wire.into()).unwrap();
    assert_eq!(data.name.to_uri(), "/e2e/poke/item");
    assert_eq!(data.content.as_deref(), Some(&b"hello, peek"[..]));
    // No route: Nack, status 4.
    let out = common::tools::kite(&["peek", "/e2e/nobody", "--socket", s]);
    assert_eq!(
        out.status.code(),
        Some(4),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A route that never answers: timeout, status 3.
    let mut silent = common::peer::Conn::unix(s);
    silent.register("/e2e/silent");
    let out = common::tools::kite(&["peek", "/e2e/silent/x", "--lifetime", "300", "--socket", s]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // poke with nobody asking: status 3 after its timeout.
    let out = common::tools::kite(&["poke", "/e2e/unasked", "--timeout", "300", "--socket", s]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A network namespace with its loopback up, deleted when dropped.
struct Netns(String);

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = kite_testkit::netns::ip(&["netns", "del", &self.0]);
    }
}

#[test]
fn dump_in_a_network_namespace_sees_a_pings_interest_and_data() {
    use std::io::{BufRead, Read};
    use std::process::{Command, Stdio};
    let name = format!("kite-dump-{}", std::process::id());
    if !kite_testkit::netns::add_or_skip(&name) {
        return;
    }
    let ns = Netns(name);
    kite_testkit::netns::ip_ok(&["-n", &ns.0, "link", "set", "lo", "up"]);
    let launcher = ["ip", "netns", "exec", &ns.0].map(String::from);
    let d = Daemon::start(
        &launcher,
        &["--udp", "127.0.0.1:6363", "--tcp", "127.0.0.1:6363"].map(String::from),
    );
    let kite = env!("CARGO_BIN_EXE_kite");
    let mut dump = Command::new("ip")
        .args(["netns", "exec", &ns.0, kite, "dump", "-i", "lo", "-c", "4"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(dump.stderr.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.contains("listening on lo"), "{line}");
    let server = common::tools::PingServer::start(d.socket(), "/dump");
    let ping = Command::new("ip")
        .args(["netns", "exec", &ns.0, kite, "ping", "/dump", "-c", "1"])
        .args(["--start-seq", "7", "--socket", "udp://127.0.0.1:6363"])
        .output()
        .unwrap();
    drop(server);
    assert!(
        ping.status.success(),
        "{}",
        String::from_utf8_lossy(&ping.stdout)
    );
    // Each packet on loopback is seen going out and coming in: four lines.
    let done = common::reap(&mut dump, std::time::Duration::from_secs(10));
    let mut out = String::new();
    dump.stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    assert!(done, "dump did not see four packets: {out}");
    assert!(
        out.contains("udp Interest /dump/ping/7 MustBeFresh"),
        "the ping's Interest: {out}"
    );
    assert!(
        out.contains("udp Data /dump/ping/7 content=0B"),
        "the ping's Data: {out}"
    );
    assert!(out.contains(":6363"), "{out}");
}

#[test]
fn dump_without_capture_permission_says_what_it_needs() {
    use std::os::unix::fs::PermissionsExt;
    let root = std::process::Command::new("id").arg("-u").output();
    if !root.is_ok_and(|o| o.stdout == b"0\n") {
        let out = common::tools::kite(&["dump", "-i", "lo", "-c", "1"]);
        let e = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && e.contains("CAP_NET_RAW"), "{e}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let out = as_nobody(dir.path(), &["dump", "-i", "lo", "-c", "1"])
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && e.contains("CAP_NET_RAW"), "{e}");
}
