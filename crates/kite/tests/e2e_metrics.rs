//! `kite run --metrics`: the counters served over HTTP parse with the Prometheus Python
//! client's parsers (text format and OpenMetrics) and move with the traffic forwarded; a
//! client cannot hold more than the listener's bounds; the status page renders in headless
//! Chromium and plots live rates (skipped with a message when Chromium is not installed).

mod common;

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::browser::{chromium, headless};
use common::peer::{Conn, Producer};
use common::{free_tcp_port, python, Daemon};
use serde_json::Value;

/// The listener reuses a snapshot for a second: wait longer than that between scrapes.
const SNAPSHOT_AGE: Duration = Duration::from_millis(1100);

fn metrics_daemon() -> (Daemon, String) {
    let addr = format!("127.0.0.1:{}", free_tcp_port());
    let d = Daemon::local(&["--metrics", &addr]);
    (d, addr)
}

/// Scrapes `http://addr/metrics` with prometheus_client (both formats).
fn scrape(addr: &str) -> Value {
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/interop/metrics_scrape.py");
    let out = Command::new(python())
        .arg(&script)
        .arg(format!("http://{addr}/metrics"))
        .output()
        .expect("run the scraper");
    assert!(
        out.status.success(),
        "the Prometheus client could not scrape or parse (is prometheus-client installed in \
         the venv? scripts/test.sh installs it): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("the scraper's JSON")
}

fn value(samples: &Value, key: &str) -> f64 {
    samples[key]
        .as_f64()
        .unwrap_or_else(|| panic!("no sample {key}"))
}

/// The per-face samples of `name` as (face id, labels-and-value) pairs.
fn by_face(samples: &Value, name: &str) -> HashMap<u64, (String, f64)> {
    let mut out = HashMap::new();
    for (k, v) in samples.as_object().expect("samples") {
        let Some(labels) = k.strip_prefix(name).and_then(|l| l.strip_prefix('{')) else {
            continue;
        };
        let face = labels
            .split(',')
            .find_map(|l| l.strip_prefix("face=\""))
            .and_then(|l| l.trim_end_matches(['"', '}']).parse().ok())
            .expect("a face label");
        out.insert(face, (labels.to_string(), v.as_f64().unwrap()));
    }
    out
}

#[test]
fn prometheus_client_parses_the_counters_and_they_follow_the_traffic() {
    let (d, addr) = metrics_daemon();
    let producer = Producer::start(d.socket(), "/metrics-test", Box::new(|_| Some("x".into())));
    let before = scrape(&addr);
    for format in ["text", "openmetrics"] {
        let s = before[format].as_object().unwrap();
        assert!(
            !s.keys().any(|k| k.contains("face=\"1\"")),
            "the internal face's counters are always zero: it gets no series"
        );
    }

    let mut consumer = Conn::unix(d.socket());
    const N: u64 = 25;
    for i in 0..N {
        consumer.fetch(&format!("/metrics-test/{i}"), Duration::from_secs(4));
    }
    std::thread::sleep(SNAPSHOT_AGE);
    let after = scrape(&addr);

    let ct = &after["content_types"];
    assert!(ct["text"]
        .as_str()
        .unwrap()
        .starts_with("text/plain; version=0.0.4"));
    assert!(ct["openmetrics"]
        .as_str()
        .unwrap()
        .starts_with("application/openmetrics-text; version=1.0.0"));
    let types = &after["types"];
    assert_eq!(types["kite_in_interests"], "counter");
    assert_eq!(types["kite_pit_entries"], "gauge");
    assert_eq!(types["kite_face_drops"], "counter");

    for format in ["text", "openmetrics"] {
        let (b, a) = (&before[format], &after[format]);
        let moved = |k: &str| value(a, k) - value(b, k);
        assert!(moved("kite_in_interests_total") >= N as f64, "{format}");
        assert!(moved("kite_out_interests_total") >= N as f64, "{format}");
        assert!(moved("kite_in_data_total") >= N as f64, "{format}");
        assert!(moved("kite_out_data_total") >= N as f64, "{format}");
        assert!(
            moved("kite_satisfied_interests_total") >= N as f64,
            "{format}"
        );
        assert!(moved("kite_cs_misses_total") >= N as f64, "{format}");
        assert!(
            value(a, "kite_fib_entries") >= 2.0,
            "/localhost/nfd and the producer's"
        );
        assert!(moved("kite_thread_busy_seconds_total{thread=\"kite-io\"}") > 0.0);
        assert!(moved("kite_shard_busy_seconds_total{shard=\"0\"}") > 0.0);

        // The producer's face took the Interests out and brought the Data in; the
        // consumer's face the other way round.
        let out_i = by_face(a, "kite_face_out_interests_total");
        let in_d = by_face(a, "kite_face_in_data_total");
        let p = producer.face_id();
        assert!(out_i[&p].1 >= N as f64, "{format}: {:?}", out_i.get(&p));
        assert!(in_d[&p].1 >= N as f64);
        assert!(out_i[&p].0.contains("remote=\"fd://"), "{}", out_i[&p].0);
        assert!(out_i[&p].0.contains("local=\"unix://"), "{}", out_i[&p].0);
        let in_i = by_face(a, "kite_face_in_interests_total");
        let consumer_face = in_i
            .iter()
            .find(|(id, (_, v))| **id != p && *v >= N as f64)
            .map(|(id, _)| *id)
            .expect("the consumer's face counted its Interests");
        assert!(by_face(a, "kite_face_out_data_total")[&consumer_face].1 >= N as f64);
        assert_eq!(by_face(a, "kite_face_up")[&consumer_face].1, 1.0);
        let malformed = format!("kite_face_drops_total{{face=\"{consumer_face}\",");
        assert!(
            a.as_object()
                .unwrap()
                .keys()
                .any(|k| k.starts_with(&malformed) && k.contains("reason=\"in-malformed\"")),
            "drops by reason per face"
        );
        assert!(
            value(
                a,
                "kite_queue_capacity_packets{queue=\"interest\",shard=\"0\"}"
            ) > 0.0
        );
        assert!(value(a, "kite_codel_marks_total{shard=\"0\"}") >= 0.0);
    }
    // The two formats carry the same snapshot.
    assert_eq!(
        value(&after["text"], "kite_in_interests_total"),
        value(&after["openmetrics"], "kite_in_interests_total")
    );
}

/// Sends `request` on a new connection and returns the whole response.
fn http(addr: &str, request: &[u8]) -> String {
    let mut s = TcpStream::connect(addr).expect("connect to the metrics listener");
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.write_all(request).unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// Whether the listener closes `s` (EOF or reset, with nothing sent) within `limit`.
fn closed_within(s: &mut TcpStream, limit: Duration) -> bool {
    s.set_read_timeout(Some(limit)).unwrap();
    let mut b = [0u8; 64];
    match s.read(&mut b) {
        Ok(n) => n == 0,
        Err(e) => !matches!(
            e.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        ),
    }
}

#[test]
fn hostile_http_clients_hold_bounded_connections_and_requests() {
    let (d, addr) = metrics_daemon();
    // More idle connections than the listener keeps: the oldest make room for new ones.
    let mut idle: Vec<TcpStream> = (0..40)
        .map(|_| {
            let s = TcpStream::connect(&addr).unwrap();
            std::thread::sleep(Duration::from_millis(5));
            s
        })
        .collect();
    let started = Instant::now();
    let ok = http(&addr, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
    assert!(ok.starts_with("HTTP/1.1 200 OK"), "{ok}");
    assert!(started.elapsed() < Duration::from_secs(5));
    let mut evicted = 0;
    for s in idle.iter_mut().take(10) {
        evicted += usize::from(closed_within(s, Duration::from_millis(500)));
    }
    assert!(
        evicted >= 9,
        "only {evicted} of the oldest idle connections were closed"
    );

    // Headers without end: answered 431 once they pass the bound, then closed.
    let mut long = b"GET / HTTP/1.1\r\nX: ".to_vec();
    long.extend(std::iter::repeat_n(b'a', 64 << 10));
    let mut s = TcpStream::connect(&addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let _ = s.write_all(&long);
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let out = String::from_utf8_lossy(&out);
    assert!(out.starts_with("HTTP/1.1 431"), "{out}");

    // Other methods, paths and junk.
    assert!(http(&addr, b"POST /metrics HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 405"));
    assert!(http(&addr, b"GET /nope HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 404"));
    assert!(http(&addr, b"\x16\x03\x01\x02\x00\r\n\r\n").starts_with("HTTP/1.1 400"));
    let head = http(&addr, b"HEAD /metrics HTTP/1.0\r\n\r\n");
    assert!(
        head.starts_with("HTTP/1.1 200 OK") && head.ends_with("\r\n\r\n"),
        "{head}"
    );

    // A connection that never completes its request is closed at the deadline (10 s).
    let mut slow = TcpStream::connect(&addr).unwrap();
    slow.write_all(b"GET /metrics HTTP/1.1\r\n").unwrap();
    assert!(closed_within(&mut slow, Duration::from_secs(15)));
    // The forwarder kept answering management throughout.
    assert!(common::peer::general(d.socket()).n_in_interests > 0);
}

#[test]
fn a_metrics_address_that_cannot_be_bound_stops_the_start() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("nfd.sock");
    let out = common::tools::kite(&[
        "run",
        "--local-only",
        "--socket",
        socket.to_str().unwrap(),
        "--metrics",
        &addr,
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("cannot listen for metrics on {addr}")),
        "{stderr}"
    );
    assert!(!socket.exists(), "the unix socket is removed");
}

#[test]
fn status_page_renders_in_chromium_and_plots_live_rates() {
    let Some(browser) = chromium() else { return };
    let (d, addr) = metrics_daemon();
    let _producer = Producer::start(d.socket(), "/page", Box::new(|_| Some("x".into())));
    let stop = Arc::new(AtomicBool::new(false));
    let traffic = {
        let stop = stop.clone();
        let socket = d.socket().to_string();
        std::thread::spawn(move || {
            let mut c = Conn::unix(&socket);
            let mut i = 0u64;
            while !stop.load(Ordering::Relaxed) {
                c.fetch(&format!("/page/{i}"), Duration::from_secs(4));
                i += 1;
                std::thread::sleep(Duration::from_millis(5));
            }
        })
    };
    let profile = tempfile::tempdir().unwrap();
    let url = format!("http://{addr}/");

    // The page polls /status.json (each answer waits for a newer snapshot) and writes the
    // latest rates into the DOM.
    let dom = headless(
        browser,
        profile.path(),
        &["--dump-dom", "--virtual-time-budget=8000"],
        &url,
    );
    let dom = String::from_utf8_lossy(&dom.stdout).into_owned();
    assert!(dom.contains("<h1>Kite status</h1>"), "{dom}");
    for section in [
        "General",
        "Faces",
        "FIB",
        "RIB",
        "Strategy choices",
        "Content Store",
    ] {
        assert!(dom.contains(&format!("<h2>{section}</h2>")), "no {section}");
    }
    assert!(
        dom.contains("/localhost/nfd"),
        "the FIB lists management's route"
    );
    let samples: u32 = dom
        .split("data-samples=\"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .and_then(|n| n.parse().ok())
        .expect("the plot's sample count");
    assert!(samples >= 2, "{samples} samples plotted");
    let rate_in: f64 = dom
        .split("id=\"rate-in\">")
        .nth(1)
        .and_then(|r| r.split('<').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no rate written: {dom}"));
    assert!(
        rate_in > 0.0,
        "traffic flows, yet the plot shows {rate_in}/s in"
    );

    let png = profile.path().join("status.png");
    let shot = headless(
        browser,
        profile.path(),
        &[
            &format!("--screenshot={}", png.display()),
            "--window-size=1280,1400",
            "--virtual-time-budget=5000",
        ],
        &url,
    );
    stop.store(true, Ordering::Relaxed);
    let _ = traffic.join();
    assert!(
        png.exists(),
        "no screenshot: {}",
        String::from_utf8_lossy(&shot.stderr)
    );
    // Decoded with python's zlib: the picture is 1280 wide and not one colour.
    let check = Command::new(python())
        .args(["-c", PNG_CHECK])
        .arg(&png)
        .output()
        .unwrap();
    assert!(
        check.status.success(),
        "{}{}",
        String::from_utf8_lossy(&check.stdout),
        String::from_utf8_lossy(&check.stderr)
    );
}

/// Checks a PNG: 1280 pixels wide, and its decoded rows hold many distinct octets (a blank
/// page has one colour).
const PNG_CHECK: &str = r#"
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat, width = 8, b"", None
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        width = struct.unpack(">I", body[:4])[0]
    if kind == b"IDAT":
        idat += body
    pos += 12 + n
assert width == 1280, width
pixels = zlib.decompress(idat)
distinct = len(set(pixels))
assert distinct > 32, f"blank: {distinct} distinct octets"
print("ok", width, distinct)
"#;
