//! A web page fetching NDN content through a forwarder: NDNts in headless Chromium
//! (`tests/interop/ndnts/browser/fetch.mjs`) over WebTransport (HTTP/3 datagrams,
//! @ndn/quic-transport) and over WebSocket (@ndn/ws-transport), the bytes checked by their
//! SHA-256 against the file served.
//!
//! Over WebTransport the server is NDNd v1.5.3's HTTP/3 face, in a private network namespace
//! with the page and Chromium (NDNd binds UDP 6363 on every address): this proves the page,
//! @ndn/quic-transport and Chromium's acceptance of a self-signed certificate by its hash on
//! this machine. Over WebSocket the server is Kite's face (`kite run --ws`), with `kite poke`
//! and `kite put` producing on Kite's unix socket.
//!
//! Skipped, saying why, without Chromium, Node.js, the npm packages or (for NDNd) KITE_NDND;
//! `scripts/test.sh` installs and sets them all.

mod common;

use std::process::Stdio;
use std::time::{Duration, Instant};

use common::browser::{available, expect_fetch, webtransport_cert, Fetch, Mode, Transport};
use common::ndnd::{Ndnd, Netns};
use common::tools::{kite, random_file, Put};
use common::{eventually, free_tcp_port, Daemon};

/// The segmented object's size: large enough that a window of Interests, fragmentation and
/// reassembly (over WebTransport) and the transport's flow control are all exercised.
const OBJECT: usize = 10_000_000;

/// The UDP port of NDNd's HTTP/3 listener, inside the namespace (nothing else binds there).
const NDND_HTTP3_PORT: u16 = 4433;

#[test]
fn chromium_fetches_an_object_from_ndnd_over_webtransport() {
    let Some(bin) = common::ndnd() else { return };
    let Some(browser) = available() else { return };
    let dir = tempfile::tempdir().unwrap();
    let Some(cert) = webtransport_cert(dir.path()) else {
        return;
    };
    let ns = Netns::new();
    let ndnd = Ndnd::start_http3(&bin, &ns, NDND_HTTP3_PORT, &cert.cert, &cert.key);
    let input = dir.path().join("object");
    let want = random_file(&input, OBJECT, 23);
    let prefix = "/e2e/browser/wt";
    let mut put = common::ndnd::tool(&bin, ndnd.socket(), &["put", prefix])
        .stdin(std::fs::File::open(&input).unwrap())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("ndnd put starts");
    // NDNd's put registers its prefix after it has read and signed the object: wait until its
    // RDR metadata answers.
    let metadata = format!("{prefix}/32=metadata");
    let answered = eventually(Duration::from_secs(30), || {
        let out = kite(&[
            "peek",
            &metadata,
            "--prefix",
            "--fresh",
            "--lifetime",
            "500",
            "--socket",
            ndnd.socket(),
        ]);
        out.status.success().then_some(())
    });
    assert!(answered.is_some(), "ndnd put never answered {metadata}");

    let fetch = Fetch::new(
        Transport::WebTransport {
            url: format!("https://127.0.0.1:{NDND_HTTP3_PORT}/ndn"),
            cert_sha256: cert.sha256.clone(),
        },
        prefix,
        Mode::Object,
    )
    .inside(ns.launcher());
    let got = expect_fetch(browser, &fetch);
    common::terminate(put.id());
    common::reap(&mut put, Duration::from_secs(5));
    assert_eq!(got.bytes, OBJECT as u64, "{got:?}");
    assert_eq!(got.sha256, want, "{got:?}");
    let mtu = got.mtu.expect("a datagram transport has an MTU");
    assert!(
        (1000..1500).contains(&mtu),
        "the session's largest datagram: {mtu}"
    );
    eprintln!(
        "NDNd WebTransport: {} octets in {} segments ({} Interests), {:.0} ms (connect {:.0} \
         ms), MTU {mtu}",
        got.bytes, got.segments, got.interests, got.fetch_ms, got.connect_ms
    );
}

#[test]
fn chromium_fetches_data_and_an_object_from_kite_over_websocket() {
    let Some(browser) = available() else { return };
    let ws = free_tcp_port();
    let d = Daemon::local(&["--ws", &format!("127.0.0.1:{ws}")]);
    browser_fetches_from_kite(
        browser,
        &d,
        &Transport::WebSocket {
            url: format!("ws://127.0.0.1:{ws}/"),
        },
    );
}

#[test]
fn chromium_fetches_data_and_an_object_from_kite_over_webtransport() {
    let Some(browser) = available() else { return };
    let port = common::free_udp_port();
    let d = Daemon::local(&["--http3", &format!("127.0.0.1:{port}")]);
    let log = d.log_text();
    let cert_sha256 = log
        .split("sha256_hex=\"")
        .nth(1)
        .and_then(|r| r.get(..64))
        .unwrap_or_else(|| panic!("no certificate hash logged: {log}"))
        .to_string();
    browser_fetches_from_kite(
        browser,
        &d,
        &Transport::WebTransport {
            url: format!("https://127.0.0.1:{port}/ndn"),
            cert_sha256,
        },
    );
}

/// What a web page relies on from a Kite face toward a browser: one Data, larger than a
/// WebTransport datagram, published by `kite poke` on the unix socket, and a 10 MB object
/// published by `kite put`, found by RDR metadata and fetched segment by segment, both byte
/// for byte. Over WebTransport, call it with [`Transport::WebTransport`] and the certificate
/// hash the daemon prints.
fn browser_fetches_from_kite(browser: &str, d: &Daemon, transport: &Transport) {
    let dir = tempfile::tempdir().unwrap();
    let one = dir.path().join("one");
    let want = random_file(&one, 4000, 5);
    let name = "/e2e/browser/one";
    let poke = std::process::Command::new(env!("CARGO_BIN_EXE_kite"))
        .args(["poke", name])
        .arg(&one)
        .args(["--timeout", "60000", "--socket", d.socket()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kite poke starts");
    let mut poke = PokeGuard(poke);
    let mut banner = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(poke.0.stderr.as_mut().unwrap()),
        &mut banner,
    )
    .unwrap();
    assert!(banner.starts_with("kite poke: serving"), "{banner:?}");
    let got = expect_fetch(browser, &Fetch::new(transport.clone(), name, Mode::Data));
    assert_eq!((got.bytes, got.sha256.as_str()), (4000, want.as_str()));
    let status = poke.0.wait().unwrap();
    assert!(
        status.success(),
        "kite poke answered one Interest: {status}"
    );

    let input = dir.path().join("object");
    let want = random_file(&input, OBJECT, 29);
    let prefix = "/e2e/browser/object";
    let _put = Put::start(d.socket(), prefix, &input, &[]);
    let started = Instant::now();
    let got = expect_fetch(
        browser,
        &Fetch::new(transport.clone(), prefix, Mode::Object),
    );
    assert_eq!(got.bytes, OBJECT as u64, "{got:?}");
    assert_eq!(got.sha256, want, "{got:?}");
    eprintln!(
        "Kite {transport:?}: {} octets in {} segments ({} Interests), {:.0} ms (connect {:.0} \
         ms; {:?} with Chromium's start)",
        got.bytes,
        got.segments,
        got.interests,
        got.fetch_ms,
        got.connect_ms,
        started.elapsed()
    );
}

/// `kite poke`, killed if the test fails before it has answered.
struct PokeGuard(std::process::Child);

impl Drop for PokeGuard {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}
