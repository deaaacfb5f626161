//! `kite ping`, `kite put` and `kite get` through a real `kite run`: probes answered by
//! `kite ping --server` with a parsed summary, a 100 MB object put and fetched back with the
//! same SHA-256, every congestion control completing a fetch, and clear errors.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::tools::{kite, random_file, sha256_of, summary_value, Put};
use common::{free_tcp_port, free_udp_port, reap, terminate, Daemon};

#[test]
fn ping_server_answers_every_probe_and_the_summary_counts_them() {
    let d = Daemon::local(&[]);
    let mut server = Command::new(env!("CARGO_BIN_EXE_kite"))
        .args([
            "ping",
            "--server",
            "/e2e/ping",
            "-c",
            "4",
            "--socket",
            d.socket(),
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the ping server");
    let mut lines = BufReader::new(server.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    assert_eq!(first, "PING SERVER /e2e/ping/ping", "registered");

    let out = kite(&[
        "ping",
        "/e2e/ping",
        "-c",
        "4",
        "-i",
        "50",
        "--start-seq",
        "100",
        "--socket",
        d.socket(),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    for seq in 100..104 {
        assert!(
            text.contains(&format!("content from /e2e/ping: seq={seq} time=")),
            "{text}"
        );
    }
    assert!(
        text.contains("4 packets transmitted, 4 received, 0.0% lost, 0 nacked"),
        "{text}"
    );
    let rtt = text
        .lines()
        .find_map(|l| l.strip_prefix("rtt min/avg/max/mdev = "))
        .expect("rtt line");
    let v: Vec<f64> = rtt
        .trim_end_matches(" ms")
        .split('/')
        .map(|x| x.parse().unwrap())
        .collect();
    assert!(v[0] > 0.0 && v[0] <= v[1] && v[1] <= v[2], "{rtt}");

    assert!(
        reap(&mut server, Duration::from_secs(10)),
        "the server stops after -c probes"
    );
    let served: Vec<String> = lines.map_while(Result::ok).collect();
    let asked: Vec<&String> = served
        .iter()
        .filter(|l| l.starts_with("interest "))
        .collect();
    assert_eq!(asked.len(), 4, "{served:?}");
    assert_eq!(asked[0], "interest /e2e/ping/ping/100");
    assert!(
        served.iter().any(|l| l.contains("4 probes answered")),
        "{served:?}"
    );
}

#[test]
fn ping_without_a_server_times_out_or_is_nacked() {
    let d = Daemon::local(&[]);
    let out = kite(&[
        "ping",
        "/nobody",
        "-c",
        "1",
        "--timeout",
        "300",
        "--socket",
        d.socket(),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("1 packets transmitted, 0 received, 100.0% lost"),
        "{text}"
    );
}

/// Size of the big object. 100 MB: in the debug build the put (signing every segment) takes
/// about 10 s and the get about 2 s on the development machine.
const BIG: usize = 100_000_000;

#[test]
fn hundred_megabytes_put_and_get_back_with_the_same_sha256() {
    let d = Daemon::local(&[]);
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    let want = random_file(&input, BIG, 0x6b697465);
    let started = Instant::now();
    let mut put = Put::start(d.socket(), "/e2e/big", &input, &[]);
    let published = started.elapsed();
    assert!(
        put.versioned.starts_with("/e2e/big/v="),
        "{}",
        put.versioned
    );
    let output = dir.path().join("out");
    let started = Instant::now();
    let out = kite(&[
        "get",
        "/e2e/big",
        "-o",
        output.to_str().unwrap(),
        "--socket",
        d.socket(),
    ]);
    let fetched = started.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(sha256_of(&output), want);
    assert_eq!(summary_value(&stderr, "Octets"), BIG.to_string());
    assert_eq!(summary_value(&stderr, "Segments"), "12500");
    assert_eq!(summary_value(&stderr, "Version"), put.versioned);
    eprintln!("100 MB: published in {published:?}, fetched in {fetched:?}\n{stderr}");
    assert!(put.stop(), "kite put stops on SIGTERM");
}

#[test]
fn every_congestion_control_completes_and_stdin_and_stdout_work() {
    let d = Daemon::local(&[]);
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    let want = random_file(&input, 3_000_000, 7);
    for cc in ["aimd", "cubic", "fixed"] {
        // A name per run, so no run is served from the Content Store by the one before.
        let name = format!("/e2e/cc/{cc}");
        let _put = Put::start(d.socket(), &name, &input, &["--chunk-size", "4000"]);
        let output = dir.path().join(cc);
        let out = kite(&[
            "get",
            &name,
            "--cc",
            cc,
            "--window",
            "8",
            "--max-window",
            "64",
            "-o",
            output.to_str().unwrap(),
            "--socket",
            d.socket(),
        ]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{cc}: {stderr}");
        assert_eq!(sha256_of(&output), want, "{cc}");
        assert_eq!(summary_value(&stderr, "Segments"), "750", "{cc}");
    }
    // Standard input to put, standard output from get.
    let mut put = Command::new(env!("CARGO_BIN_EXE_kite"))
        .args(["put", "/e2e/stdin", "-", "--once", "--socket", d.socket()])
        .stdin(std::fs::File::open(&input).unwrap())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(put.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let out = kite(&["get", line.trim(), "--socket", d.socket()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.len() == 3_000_000 && sha2_hex(&out.stdout) == want);
    assert!(
        reap(&mut put, Duration::from_secs(10)),
        "--once: put exits once all is served"
    );
}

fn sha2_hex(b: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(Sha256::digest(b))
}

#[test]
fn bad_input_gets_clear_errors() {
    let out = kite(&["get", "not-a-name"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("is not an NDN name"), "{err}");
    let out = kite(&["get", "/x", "--socket", "/nonexistent/kite.sock"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("/nonexistent/kite.sock"),
        "names the path tried: {err}"
    );
    let out = kite(&[
        "put",
        "/x",
        "/nonexistent/file",
        "--socket",
        "/nonexistent/kite.sock",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("reading /nonexistent/file"), "{err}");
    let d = Daemon::local(&[]);
    let out = kite(&[
        "get",
        "/unrouted",
        "--socket",
        d.socket(),
        "--max-retries",
        "0",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("/unrouted"), "{err}");
}

#[test]
fn put_signs_with_the_kind_and_key_asked_for() {
    let d = Daemon::local(&[]);
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    random_file(&input, 20_000, 3);
    let key = dir.path().join("key.pem");
    let public = dir.path().join("key.pub.pem");
    let gen = kite(&[
        "key",
        "generate",
        "--type",
        "ecdsa-p256",
        "--name",
        "/e2e/alice",
        "--out",
        key.to_str().unwrap(),
        "--pub-out",
        public.to_str().unwrap(),
    ]);
    assert!(
        gen.status.success(),
        "{}",
        String::from_utf8_lossy(&gen.stderr)
    );
    let put = Put::start(
        d.socket(),
        "/e2e/signed",
        &input,
        &["--sign", "ecdsa-p256", "--key", key.to_str().unwrap()],
    );
    let versioned: kite_packet::Name = put.versioned.parse().unwrap();
    let verifier = kite_security::KeyFile::read(&public)
        .unwrap()
        .verifier()
        .unwrap();
    let mut conn = common::peer::Conn::unix(d.socket());
    for seg in 0..3 {
        let name = versioned
            .clone()
            .append(kite_packet::OwnedComponent::segment(seg).as_ref());
        let data = conn.fetch(&name.to_string(), Duration::from_secs(4));
        let info = &data.sig_info;
        assert_eq!(info.sig_type, kite_packet::SignatureType::SHA256_WITH_ECDSA);
        let locator = format!("{:?}", info.key_locator);
        assert!(locator.contains("/e2e/alice/KEY/"), "{locator}");
        verifier.verify(&data).expect("the public key verifies it");
    }
    // a key of another kind is refused with a clear message
    let out = kite(&[
        "put",
        "/e2e/wrong",
        input.to_str().unwrap(),
        "--sign",
        "ed25519",
        "--key",
        key.to_str().unwrap(),
        "--socket",
        d.socket(),
    ]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not ed25519"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn ping_and_get_reach_the_forwarder_over_udp_and_websocket() {
    let (udp, ws) = (free_udp_port(), free_tcp_port());
    let d = Daemon::start(
        &[],
        &[
            "--udp".into(),
            format!("127.0.0.1:{udp}"),
            "--ws".into(),
            format!("127.0.0.1:{ws}"),
        ],
    );
    let mut server = Command::new(env!("CARGO_BIN_EXE_kite"))
        .args([
            "ping",
            "--server",
            "/e2e/transports",
            "--socket",
            d.socket(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut banner = String::new();
    BufReader::new(server.stdout.as_mut().unwrap())
        .read_line(&mut banner)
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    let want = random_file(&input, 300_000, 5);
    let _put = Put::start(d.socket(), "/e2e/over", &input, &[]);
    for transport in [
        format!("udp://127.0.0.1:{udp}"),
        format!("ws://127.0.0.1:{ws}"),
    ] {
        let out = kite(&[
            "ping",
            "/e2e/transports",
            "-c",
            "3",
            "-i",
            "50",
            "--socket",
            &transport,
        ]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && text.contains("3 received"),
            "{transport}: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let output = dir.path().join("out");
        let out = kite(&[
            "get",
            "/e2e/over",
            "-o",
            output.to_str().unwrap(),
            "--socket",
            &transport,
        ]);
        assert!(
            out.status.success(),
            "{transport}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(sha256_of(&output), want, "{transport}");
    }
    terminate(server.id());
    reap(&mut server, Duration::from_secs(5));
}
