//! Kite's tools against NDNd v1.5.3's own (`ndnd ping`, `pingserver`, `cat`, `put`), all through
//! one real `kite run`: kite ping probes an NDNd ping server and NDNd's ping probes `kite ping
//! --server`; `kite get` fetches what `ndnd put` publishes and `ndnd cat` fetches what `kite
//! put` publishes, byte for byte. NDNd's tools only connect to the forwarder's unix socket
//! (NDN_CLIENT_TRANSPORT), so no network namespace is needed.
//!
//! KITE_NDND names the NDNd binary (scripts/test.sh builds v1.5.3 with Go and sets it); without
//! it the test skips.

mod common;

use std::process::{Child, Output, Stdio};
use std::time::Duration;

use common::ndnd::tool as ndnd;
use common::tools::{kite, random_file, sha256_of, Put};
use common::{reap, terminate, Daemon};

/// Stops a long-running NDNd tool.
fn stop(mut child: Child) {
    terminate(child.id());
    if !reap(&mut child, Duration::from_secs(5)) {
        let _ = child.kill();
        let _ = child.wait();
    }
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Runs `f` until it returns true or `limit` passes (NDNd's tools register asynchronously).
fn retry(limit: Duration, mut f: impl FnMut() -> bool) -> bool {
    common::eventually(limit, || f().then_some(())).is_some()
}

#[test]
fn kite_ping_and_ndnd_ping_answer_each_other() {
    let Some(bin) = common::ndnd() else { return };
    let d = Daemon::local(&[]);
    let s = d.socket();

    let server = ndnd(&bin, s, &["pingserver", "/e2e/ndndping"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("ndnd pingserver starts");
    let answered = retry(Duration::from_secs(10), || {
        let out = kite(&[
            "ping",
            "/e2e/ndndping",
            "-c",
            "3",
            "-i",
            "100",
            "--socket",
            s,
        ]);
        out.status.success() && text(&out).contains("3 received")
    });
    stop(server);
    assert!(answered, "kite ping gets NDNd's pingserver's answers");

    let server = common::tools::PingServer::start(s, "/e2e/kiteping");
    let out = ndnd(&bin, s, &["ping", "/e2e/kiteping", "-c", "3", "-i", "100"])
        .output()
        .expect("ndnd ping runs");
    drop(server);
    assert!(
        text(&out).contains("3 received, 0% lost"),
        "ndnd ping: {}",
        text(&out)
    );
}

#[test]
fn kite_get_and_ndnd_cat_fetch_each_others_objects() {
    let Some(bin) = common::ndnd() else { return };
    let d = Daemon::local(&[]);
    let s = d.socket();
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    let want = random_file(&input, 2_000_000, 11);

    // ndnd put -> kite get
    let put = ndnd(&bin, s, &["put", "/e2e/ndndobj"])
        .stdin(std::fs::File::open(&input).unwrap())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("ndnd put starts");
    let output = dir.path().join("from-ndnd");
    let fetched = retry(Duration::from_secs(10), || {
        let out = kite(&[
            "get",
            "/e2e/ndndobj",
            // NDNd's put answers RDR metadata, as ndncatchunks asks for it.
            "--discover",
            "rdr",
            "--lifetime",
            "1000",
            "--max-retries",
            "2",
            "-o",
            output.to_str().unwrap(),
            "--socket",
            s,
        ]);
        out.status.success()
    });
    stop(put);
    assert!(fetched, "kite get fetches ndnd put's object");
    assert_eq!(sha256_of(&output), want);

    // kite put -> ndnd cat
    let _put = Put::start(s, "/e2e/kiteobj", &input, &[]);
    let out = ndnd(&bin, s, &["cat", "/e2e/kiteobj"])
        .output()
        .expect("ndnd cat runs");
    assert!(out.status.success(), "ndnd cat: {}", text(&out));
    let copy = dir.path().join("from-kite");
    std::fs::write(&copy, &out.stdout).unwrap();
    assert_eq!(
        sha256_of(&copy),
        want,
        "ndnd cat: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
