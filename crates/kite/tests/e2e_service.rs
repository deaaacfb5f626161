//! `kite run` as a service: systemd's readiness protocol on a socket the test holds, clean
//! stops on SIGTERM and SIGINT (socket removed, exit 0), a second signal forcing the exit,
//! SIGHUP applying the configuration file's changes (and refusing a broken file), a start
//! that does not wait on a configured peer, and a permanent TCP face that reconnects.

mod common;

use std::os::unix::net::UnixDatagram;
use std::path::Path;
use std::time::{Duration, Instant};

use common::ctl::{self, json, kite_at, ok};
use common::peer::{Conn, Producer};
use common::{eventually, free_tcp_port, signal, Daemon};

/// Waits up to `limit` for the next datagram on `socket`.
fn next_notification(socket: &UnixDatagram, limit: Duration) -> String {
    socket.set_read_timeout(Some(limit)).unwrap();
    let mut buf = [0u8; 512];
    let n = socket
        .recv(&mut buf)
        .expect("a notification within the limit");
    String::from_utf8(buf[..n].to_vec()).unwrap()
}

/// `kite run --config FILE ARGS...` on its unix socket only, with `env`.
fn daemon_with_config(file: &Path, env: &[(&str, &str)], args: &[&str]) -> Daemon {
    let mut all = vec![
        "--local-only".to_string(),
        "--config".into(),
        file.display().to_string(),
    ];
    all.extend(args.iter().map(ToString::to_string));
    Daemon::start_with_env(&[], env, &all)
}

#[test]
fn systemd_hears_ready_reloading_and_stopping() {
    let dir = tempfile::tempdir().unwrap();
    let notify_path = dir.path().join("notify");
    let notify = UnixDatagram::bind(&notify_path).unwrap();
    let config = dir.path().join("kite.toml");
    std::fs::write(&config, "").unwrap();
    let mut d = daemon_with_config(
        &config,
        &[("NOTIFY_SOCKET", notify_path.to_str().unwrap())],
        &[],
    );

    let ready = next_notification(&notify, Duration::from_secs(10));
    assert!(ready.starts_with("READY=1\n"), "{ready}");
    // Ready means management answers: `kite status` succeeds at once.
    let out = kite_at(d.socket(), &["status"]);
    assert!(out.status.success(), "{out:?}");

    signal(d.pid(), "HUP");
    let reloading = next_notification(&notify, Duration::from_secs(10));
    assert!(reloading.starts_with("RELOADING=1\n"), "{reloading}");
    assert!(reloading.contains("\nMONOTONIC_USEC="), "{reloading}");
    let again = next_notification(&notify, Duration::from_secs(10));
    assert!(again.starts_with("READY=1\n"), "{again}");

    signal(d.pid(), "TERM");
    let stopping = next_notification(&notify, Duration::from_secs(10));
    assert!(stopping.starts_with("STOPPING=1\n"), "{stopping}");
    let status = d.exited(Duration::from_secs(10)).expect("kite run exits");
    assert_eq!(status.code(), Some(0), "{}", d.log_text());
}

#[test]
fn sigterm_and_sigint_each_stop_cleanly_and_remove_the_socket() {
    for sig in ["TERM", "INT"] {
        let mut d = Daemon::local(&[]);
        let status = d
            .stop(sig, Duration::from_secs(10))
            .expect("kite run exits");
        assert_eq!(status.code(), Some(0), "SIG{sig}: {}", d.log_text());
        assert!(
            !Path::new(d.socket()).exists(),
            "SIG{sig} left {}",
            d.socket()
        );
    }
}

#[test]
fn a_second_signal_during_a_slow_shutdown_forces_the_exit() {
    let mut d = Daemon::start_with_env(
        &[],
        &[("KITE_FAULT_SLOW_SHUTDOWN", "20000")],
        &["--local-only".into()],
    );
    signal(d.pid(), "TERM");
    // The first signal starts a shutdown that takes 20 s; the second ends it now.
    assert!(
        d.exited(Duration::from_millis(500)).is_none(),
        "still stopping"
    );
    let started = Instant::now();
    let status = d.stop("INT", Duration::from_secs(5)).expect("forced exit");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(status.code(), Some(130), "{}", d.log_text());
    assert!(!Path::new(d.socket()).exists());
}

#[test]
fn a_sighup_without_a_configuration_file_keeps_the_daemon() {
    let mut d = Daemon::local(&[]);
    signal(d.pid(), "HUP");
    assert!(
        d.exited(Duration::from_millis(500)).is_none(),
        "SIGHUP killed kite run"
    );
    ok(d.socket(), &["status"]);
    assert!(
        d.log_text().contains("no --config file"),
        "{}",
        d.log_text()
    );
}

/// The routes `kite route list --json` shows, as (prefix, face, cost).
fn routes(socket: &str) -> Vec<(String, u64, u64)> {
    let mut all = Vec::new();
    for e in json(socket, &["route", "list"]).as_array().unwrap() {
        for r in e["routes"].as_array().unwrap() {
            all.push((
                e["prefix"].as_str().unwrap().to_string(),
                r["face_id"].as_u64().unwrap(),
                r["cost"].as_u64().unwrap(),
            ));
        }
    }
    all
}

/// The id of the face whose remote URI is `uri`.
fn face_id(socket: &str, uri: &str) -> Option<u64> {
    ctl::find_face(socket, uri).map(|f| f["face_id"].as_u64().unwrap())
}

/// The state `kite face list --json` shows for face `id`.
fn face_state(socket: &str, id: u64) -> String {
    let f = ctl::face_by_id(socket, id).unwrap_or_else(|| panic!("face {id} is gone"));
    f["state"].as_str().unwrap_or("-").to_string()
}

#[test]
fn sighup_applies_the_configuration_file_as_a_diff() {
    // Two peers that accept connections (the kernel completes them from the backlog).
    let peer_a = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let peer_b = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let uri_a = format!("tcp4://{}", peer_a.local_addr().unwrap());
    let uri_b = format!("tcp4://{}", peer_b.local_addr().unwrap());
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("kite.toml");
    let first = format!(
        r#"
[tables.cs]
capacity = 100

[tables.strategy_choice]
"/a" = "multicast"

[[face]]
uri = "{uri_a}"
persistency = "permanent"

[[face]]
uri = "{uri_b}"
persistency = "permanent"

[[route]]
prefix = "/a"
face = "{uri_a}"
cost = 1

[[route]]
prefix = "/kept"
face = "{uri_b}"
cost = 5
"#
    );
    std::fs::write(&file, &first).unwrap();
    let mut d = daemon_with_config(&file, &[], &[]);
    let s = d.socket().to_string();
    let a = eventually(Duration::from_secs(5), || face_id(&s, &uri_a)).expect("face A");
    let b = face_id(&s, &uri_b).expect("face B");
    assert!(
        routes(&s).contains(&("/a".into(), a, 1)),
        "{:?}",
        routes(&s)
    );

    // B: face A gone, route /a with it, /kept unchanged, /b added; strategies and CS
    // changed; a listener change that needs a restart; the faces' info logs off.
    let second = format!(
        r#"
[log]
filter = "warn,kite::run=info"

[face_system.tcp]
listen = ["127.0.0.1:1"]

[tables.cs]
capacity = 200
admit = false

[tables.strategy_choice]
"/b" = "random"

[[face]]
uri = "{uri_b}"
persistency = "permanent"

[[route]]
prefix = "/kept"
face = "{uri_b}"
cost = 5

[[route]]
prefix = "/b"
face = "{uri_b}"
cost = 2
"#
    );
    std::fs::write(&file, &second).unwrap();
    signal(d.pid(), "HUP");
    let reloaded = eventually(Duration::from_secs(10), || {
        d.log_text()
            .contains("configuration reloaded")
            .then_some(())
    });
    assert!(reloaded.is_some(), "{}", d.log_text());

    let now = routes(&s);
    assert!(now.contains(&("/b".into(), b, 2)), "{now:?}");
    assert!(now.contains(&("/kept".into(), b, 5)), "{now:?}");
    assert!(!now.iter().any(|r| r.0 == "/a"), "{now:?}");
    assert_eq!(face_id(&s, &uri_a), None, "face A destroyed");
    assert_eq!(face_id(&s, &uri_b), Some(b), "face B kept, same id");
    let strategies = json(&s, &["strategy", "list"]).to_string();
    assert!(
        strategies.contains("\"/b\"") && strategies.contains("random"),
        "{strategies}"
    );
    assert!(!strategies.contains("\"/a\""), "{strategies}");
    let cs = json(&s, &["cs", "info"]);
    assert_eq!(cs["capacity"], 200, "{cs}");
    assert_eq!(cs["admit"], false, "{cs}");
    let log = d.log_text();
    assert!(
        log.contains("face_system.tcp") && log.contains("restart"),
        "{log}"
    );
    let after = &log[log.find("log filter changed").expect("filter changed")..];
    assert!(
        log.contains("kite_runtime::iolog: face created") && !after.contains("kite_runtime::"),
        "the new log filter applies: {log}"
    );

    // A file that does not parse is refused with its position; nothing changes.
    std::fs::write(&file, "[tables.cs]\ncapacity = \"many\"\n").unwrap();
    signal(d.pid(), "HUP");
    let at = format!("{}:2:", file.display());
    let refused = eventually(Duration::from_secs(10), || {
        d.log_text().contains(&at).then_some(())
    });
    assert!(refused.is_some(), "{}", d.log_text());
    assert!(d.log_text().contains("the running one stays"));
    assert!(
        d.exited(Duration::from_millis(200)).is_none(),
        "still running"
    );
    assert_eq!(routes(&s), now);
    assert_eq!(json(&s, &["cs", "info"])["capacity"], 200);
}

#[test]
fn a_configured_peer_that_is_down_does_not_delay_the_start() {
    // A loopback port nobody listens on: each dial is refused.
    let port = free_tcp_port();
    let uri = format!("tcp4://127.0.0.1:{port}");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("kite.toml");
    std::fs::write(
        &file,
        format!(
            "[face_system.tcp]\nreconnect_initial = 1\nreconnect_max = 2\n\n\
             [[face]]\nuri = \"{uri}\"\npersistency = \"permanent\"\n\n\
             [[route]]\nprefix = \"/far\"\nface = \"{uri}\"\n"
        ),
    )
    .unwrap();
    let started = Instant::now();
    let d = daemon_with_config(&file, &[], &[]);
    ok(d.socket(), &["status"]);
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    let id = face_id(d.socket(), &uri).expect("the face exists");
    let state = face_state(d.socket(), id);
    assert!(state == "down" || state == "reconnecting", "{state}");
    let text = ok(d.socket(), &["face", "list"]);
    let line = text.lines().find(|l| l.contains(&uri)).unwrap();
    assert!(
        line.contains("down") || line.contains("reconnecting"),
        "{text}"
    );
    assert!(routes(d.socket()).contains(&("/far".into(), id, 0)));

    // Each refused dial doubles the wait, up to reconnect_max: 1 s, 2 s, 2 s.
    let waits = |log: &str| -> Vec<String> {
        log.lines()
            .filter(|l| l.contains("connect failed; dialing again in"))
            .map(|l| {
                l.split("dialing again in ")
                    .nth(1)
                    .unwrap()
                    .split(' ')
                    .next()
                    .unwrap()
                    .to_string()
            })
            .collect()
    };
    let three = eventually(Duration::from_secs(10), || {
        let w = waits(&d.log_text());
        (w.len() >= 3).then_some(w)
    });
    assert_eq!(
        three.as_deref().map(|w| &w[..3]),
        Some(&["1s".to_string(), "2s".into(), "2s".into()][..]),
        "{}",
        d.log_text()
    );
}

/// A loopback listener whose accept queue is full, so the kernel drops new SYNs: a dial to
/// it gets no answer. Returns it with the connections that fill it.
fn silent_listener() -> (socket2::Socket, Vec<std::net::TcpStream>) {
    use socket2::{Domain, Socket, Type};
    let l = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
    l.bind(&std::net::SocketAddr::from(([127, 0, 0, 1], 0)).into())
        .unwrap();
    l.listen(0).unwrap();
    let addr = l.local_addr().unwrap().as_socket().unwrap();
    let fill = (0..4)
        .filter_map(|_| {
            std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(200)).ok()
        })
        .collect();
    (l, fill)
}

#[test]
fn a_dial_without_answer_shows_reconnecting_and_is_given_up_after_3_s() {
    let (listener, _fill) = silent_listener();
    let addr = listener.local_addr().unwrap().as_socket().unwrap();
    let uri = format!("tcp4://{addr}");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("kite.toml");
    std::fs::write(
        &file,
        format!("[[face]]\nuri = \"{uri}\"\npersistency = \"permanent\"\n"),
    )
    .unwrap();
    let d = daemon_with_config(&file, &[], &[]);
    let s = d.socket().to_string();
    let id = face_id(&s, &uri).expect("the face");
    assert_eq!(face_state(&s, id), "reconnecting");
    let text = ok(&s, &["face", "list"]);
    assert!(
        text.lines()
            .any(|l| l.contains(&uri) && l.contains("reconnecting")),
        "{text}"
    );
    let given_up = eventually(Duration::from_secs(10), || {
        d.log_text().contains("no answer within 3s").then_some(())
    });
    assert!(given_up.is_some(), "{}", d.log_text());
    ok(&s, &["status"]);
}

#[test]
fn a_reload_makes_again_a_persistent_face_whose_peer_was_down() {
    let port = free_tcp_port();
    let uri = format!("tcp4://127.0.0.1:{port}");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("kite.toml");
    std::fs::write(
        &file,
        format!("[[face]]\nuri = \"{uri}\"\n\n[[route]]\nprefix = \"/p\"\nface = \"{uri}\"\n"),
    )
    .unwrap();
    let d = daemon_with_config(&file, &[], &[]);
    let s = d.socket().to_string();
    // Its first dial is refused: a persistent face is destroyed, with its route.
    let gone = eventually(Duration::from_secs(10), || {
        face_id(&s, &uri).is_none().then_some(())
    });
    assert!(gone.is_some(), "{}", d.log_text());
    assert!(routes(&s).iter().all(|r| r.0 != "/p"));

    let _peer = std::net::TcpListener::bind(("127.0.0.1", port)).unwrap();
    signal(d.pid(), "HUP");
    let id = eventually(Duration::from_secs(10), || face_id(&s, &uri)).expect("made again");
    let up = eventually(Duration::from_secs(10), || {
        (face_state(&s, id) == "up").then_some(())
    });
    assert!(up.is_some(), "{}", d.log_text());
    assert!(
        routes(&s).contains(&("/p".into(), id, 0)),
        "{:?}",
        routes(&s)
    );
}

/// Fetches `name` through `socket`, retrying for up to `limit` (a route may still point at a
/// face that is reconnecting).
fn fetch_eventually(socket: &str, name: &str, limit: Duration) -> bool {
    eventually(limit, || {
        let mut c = Conn::unix(socket);
        c.send(&common::peer::interest(name, 1000));
        match c.recv(Duration::from_millis(1500)) {
            common::peer::Got::Frame(f) => {
                let decoded = kite_packet::NetPacket::decode_frame(f).ok()?;
                matches!(decoded.1, kite_packet::NetPacket::Data(_)).then_some(())
            }
            _ => None,
        }
    })
    .is_some()
}

#[test]
fn a_permanent_tcp_face_reconnects_when_its_peer_comes_back() {
    let b_tcp = free_tcp_port();
    let mut b = Daemon::start(
        &[],
        &[
            "--udp".into(),
            format!("127.0.0.1:{}", common::free_udp_port()),
            "--tcp".into(),
            format!("127.0.0.1:{b_tcp}"),
        ],
    );
    let answer = || -> common::peer::Answer { Box::new(|_| Some(bytes::Bytes::from_static(b"x"))) };
    let producer = Producer::start(b.socket(), "/remote", answer());

    let uri = format!("tcp4://127.0.0.1:{b_tcp}");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("kite.toml");
    std::fs::write(
        &file,
        format!(
            "[face_system.tcp]\nreconnect_initial = 1\nreconnect_max = 2\n\n\
             [[face]]\nuri = \"{uri}\"\npersistency = \"permanent\"\n\n\
             [[route]]\nprefix = \"/remote\"\nface = \"{uri}\"\n"
        ),
    )
    .unwrap();
    let a = daemon_with_config(&file, &[], &[]);
    let s = a.socket().to_string();
    let id = face_id(&s, &uri).expect("the configured face");
    assert!(
        fetch_eventually(&s, "/remote/1", Duration::from_secs(10)),
        "{}",
        a.log_text()
    );

    // The peer dies: the face goes down, keeps its id and route, and dials again.
    drop(producer);
    b.stop("KILL", Duration::from_secs(5)).expect("B killed");
    let down = eventually(Duration::from_secs(10), || {
        let st = face_state(&s, id);
        (st == "down" || st == "reconnecting").then_some(st)
    });
    assert!(
        down.is_some(),
        "face {id} still {}: {}",
        face_state(&s, id),
        a.log_text()
    );
    assert!(routes(&s).iter().any(|r| r.0 == "/remote" && r.1 == id));

    // The peer is back: the face comes up again and traffic over its route flows.
    b.restart();
    let _producer = Producer::start(b.socket(), "/remote", answer());
    let up = eventually(Duration::from_secs(10), || {
        (face_state(&s, id) == "up").then_some(())
    });
    assert!(up.is_some(), "face {id}: {}", a.log_text());
    assert!(
        fetch_eventually(&s, "/remote/2", Duration::from_secs(10)),
        "{}",
        a.log_text()
    );
}
