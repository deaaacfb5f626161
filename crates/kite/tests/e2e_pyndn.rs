//! python-ndn producers and consumers through a real `kite run`: exact names, CanBePrefix,
//! MustBeFresh against the Content Store, a 1 MB segmented object fetched with a window, a Nack
//! for an unrouted name, and a clean stop on SIGTERM and SIGINT. Ignored by a plain `cargo test`;
//! `scripts/test.sh` runs them (KITE_PYTHON names the interpreter with python-ndn).

mod common;

use std::time::Duration;

use common::{py, py_one, Daemon, Producer};

#[test]
#[ignore = "needs python-ndn: scripts/test.sh runs it"]
fn exact_name_reaches_the_producer_and_comes_back() {
    let kite = Daemon::local(&[]);
    let mut producer = Producer::start(kite.socket(), "/e2e/exact", &[]);
    let got = py(&[
        "get",
        kite.socket(),
        "plain:/e2e/exact/one",
        "plain:/e2e/exact/two",
    ]);
    assert_eq!(got[0]["name"], "/e2e/exact/one", "{got:?}");
    assert_eq!(got[0]["content"], "1 /e2e/exact/one");
    assert_eq!(got[1]["name"], "/e2e/exact/two");
    assert_eq!(got[1]["content"], "2 /e2e/exact/two");
    let asked: Vec<&str> = producer
        .interests()
        .iter()
        .map(|i| i["interest"].as_str().unwrap())
        .collect();
    assert_eq!(asked, ["/e2e/exact/one", "/e2e/exact/two"]);
}

#[test]
#[ignore = "needs python-ndn: scripts/test.sh runs it"]
fn can_be_prefix_lets_a_longer_name_answer() {
    let kite = Daemon::local(&[]);
    let mut producer = Producer::start(kite.socket(), "/e2e/cbp", &["--append", "c"]);
    let got = py(&[
        "get",
        kite.socket(),
        "prefix:/e2e/cbp/b",
        // Without CanBePrefix neither the cached /e2e/cbp/b/c nor the producer's fresh answer
        // (named /e2e/cbp/b/c again) may satisfy /e2e/cbp/b.
        "plain,lifetime=600:/e2e/cbp/b",
    ]);
    assert_eq!(got[0]["name"], "/e2e/cbp/b/c", "{got:?}");
    assert_eq!(got[0]["content"], "1 /e2e/cbp/b");
    assert_eq!(got[1]["timeout"], true, "{got:?}");
    assert_eq!(
        producer.interests().len(),
        2,
        "the exact Interest still reached the producer"
    );
}

#[test]
#[ignore = "needs python-ndn: scripts/test.sh runs it"]
fn must_be_fresh_skips_a_stale_cached_copy() {
    let kite = Daemon::local(&[]);
    let mut producer = Producer::start(kite.socket(), "/e2e/fresh", &["--freshness", "1000"]);
    let got = py(&[
        "get",
        kite.socket(),
        "fresh:/e2e/fresh/x", // producer, K=1
        "fresh:/e2e/fresh/x", // CS, fresh
        "plain:/e2e/fresh/x", // CS
        "sleep:1400",
        "plain:/e2e/fresh/x", // CS: stale is fine without MustBeFresh
        "fresh:/e2e/fresh/x", // stale: the producer is asked again, K=2
        "plain:/e2e/fresh/x", // CS holds the newer copy
    ]);
    let contents: Vec<&str> = got.iter().map(|g| g["content"].as_str().unwrap()).collect();
    let one = "1 /e2e/fresh/x";
    let two = "2 /e2e/fresh/x";
    assert_eq!(contents, [one, one, one, one, two, two], "{got:?}");
    assert_eq!(got[0]["freshness_period"], 1000);
    assert_eq!(producer.interests().len(), 2);
}

#[test]
#[ignore = "needs python-ndn: scripts/test.sh runs it"]
fn one_megabyte_in_segments_fetched_with_a_window() {
    // Two forwarding threads: the first Interest (/e2e/obj) and the segments
    // (/e2e/obj/v=1/seg=N) may be dispatched to different threads.
    let kite = Daemon::local(&["--threads", "2"]);
    let mut producer = Producer::start(
        kite.socket(),
        "/e2e/obj",
        &["--object-size", "1048576", "--segment-size", "8000"],
    );
    assert_eq!(producer.ready["segments"], 132);
    let want = producer.ready["sha256"].clone();

    let windowed = py_one(&["fetch", kite.socket(), "/e2e/obj", "--window", "16"]);
    assert_eq!(windowed["size"], 1_048_576, "{windowed}");
    assert_eq!(windowed["segments"], 132);
    assert_eq!(windowed["sha256"], want);
    assert_eq!(windowed["max_outstanding"], 16);
    assert_eq!(producer.interests().len(), 132, "each segment asked once");

    // python-ndn's own segment_fetcher, one Interest at a time: all from the Content Store.
    let again = py_one(&["fetch", kite.socket(), "/e2e/obj", "--window", "1"]);
    assert_eq!(again["sha256"], want, "{again}");
    assert_eq!(producer.interests().len(), 132, "served from the CS");
}

#[test]
#[ignore = "needs python-ndn: scripts/test.sh runs it"]
fn unrouted_name_gets_nack_no_route() {
    let kite = Daemon::local(&[]);
    let got = py_one(&["get", kite.socket(), "fresh:/e2e/nowhere/x"]);
    assert_eq!(got["nack"], 150, "{got}");
}

fn stops_cleanly_on(sig: &str) {
    let mut kite = Daemon::local(&[]);
    let _producer = Producer::start(kite.socket(), "/e2e/stop", &[]);
    let socket = std::path::PathBuf::from(kite.socket());
    let status = kite
        .stop(sig, Duration::from_secs(5))
        .unwrap_or_else(|| panic!("kite run exits within 5 s of SIG{sig}"));
    assert!(status.success(), "{status}: {}", kite.log_text());
    assert!(!socket.exists(), "the unix socket is removed");
    assert!(kite.log_text().contains("stopping"), "{}", kite.log_text());
}

#[test]
#[ignore = "needs python-ndn: scripts/test.sh runs it"]
fn sigterm_and_sigint_stop_the_daemon_and_remove_its_socket() {
    stops_cleanly_on("TERM");
    stops_cleanly_on("INT");
}

#[test]
#[ignore = "needs python-ndn: scripts/test.sh runs it"]
fn back_to_back_registrations_are_all_accepted_and_routed() {
    // NDNApp.register signs v0.2 commands with millisecond timestamps and sends the next as
    // soon as the answer comes: two of an application's commands, or the last of one
    // connection and the first of the next, often carry the same millisecond.
    let kite = Daemon::local(&[]);
    let rounds = py(&["register-many", kite.socket(), "/e2e/reg", "--rounds", "50"]);
    assert_eq!(rounds.len(), 50, "{rounds:?}");
    for r in &rounds {
        let registered = r["registered"].as_array().unwrap();
        assert!(
            registered.len() == 4 && registered.iter().all(|ok| ok == true),
            "every registration answered 200: {r}\n{}",
            kite.log_text()
        );
        for a in r["answers"].as_array().unwrap() {
            assert!(a["content"].is_string(), "the producer answered: {r}");
        }
    }
}
