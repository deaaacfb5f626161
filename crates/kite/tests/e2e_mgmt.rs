//! NFD management of a real `kite run`, read and driven by python-ndn's
//! `ndn.app_support.nfd_mgmt` (an independent NFD management client): status datasets decode,
//! a producer's registration shows in rib/list and fib/list under its own FaceId and goes away
//! with its face, and strategy choices are set, listed, refused and unset. Datasets carry
//! FreshnessPeriod 1 s (as NFD's do), so a listing repeated within a second may come from the
//! Content Store: the tests wait that long before looking for a change. Ignored by a plain
//! `cargo test`; `scripts/test.sh` runs them.

mod common;

use std::time::Duration;

use common::{command, dataset, eventually, ok, Daemon, Producer};
use serde_json::Value;

/// Longer than a dataset's FreshnessPeriod.
const DATASET_FRESHNESS: Duration = Duration::from_millis(1100);

fn entry<'a>(list: &'a Value, name: &str) -> Option<&'a Value> {
    list.as_array()?.iter().find(|e| e["name"] == name)
}

#[test]
#[ignore = "needs python-ndn: scripts/test.sh runs it"]
fn status_datasets_decode_in_python_ndn() {
    let kite = Daemon::local(&[]);
    let general = dataset(kite.socket(), "status/general");
    let version = general["nfd_version"].as_str().unwrap();
    assert!(version.starts_with("kite-"), "{general}");
    let start = general["start_timestamp"].as_u64().unwrap();
    let now = general["current_timestamp"].as_u64().unwrap();
    assert!(start > 1_600_000_000_000 && start <= now, "{general}");
    assert!(general["n_fib_entries"].as_u64().unwrap() >= 1);

    // The client's own unix face is listed, local.
    let faces = dataset(kite.socket(), "faces/list");
    let faces = faces.as_array().unwrap();
    assert!(!faces.is_empty());
    assert!(
        faces
            .iter()
            .any(|f| f["uri"].as_str().unwrap().starts_with("fd://") && f["face_scope"] == 1),
        "{faces:?}"
    );

    let fib = dataset(kite.socket(), "fib/list");
    let mgmt = entry(&fib, "/localhost/nfd").expect("the management route");
    assert_eq!(mgmt["next_hop_records"][0]["face_id"], 1, "{fib}");

    assert_eq!(dataset(kite.socket(), "rib/list"), Value::Array(vec![]));

    let choices = dataset(kite.socket(), "strategy-choice/list");
    let root = entry(&choices, "/").expect("a strategy for /");
    let strategy = root["strategy"]["name"].as_str().unwrap();
    assert!(
        strategy.starts_with("/localhost/nfd/strategy/best-route/"),
        "{choices}"
    );

    let cs = dataset(kite.socket(), "cs/info");
    assert_eq!(cs["capacity"], 65536, "{cs}");
}

#[test]
#[ignore = "needs python-ndn: scripts/test.sh runs it"]
fn registration_is_listed_under_the_producers_face_until_it_leaves() {
    let kite = Daemon::local(&[]);
    let mut producer = Producer::start(kite.socket(), "/test", &[]);
    let face = producer.face_id();

    let faces = dataset(kite.socket(), "faces/list");
    let mine = faces
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["face_id"] == face)
        .unwrap_or_else(|| panic!("face {face} in {faces}"));
    assert_eq!(mine["face_scope"], 1, "local");
    assert!(mine["uri"].as_str().unwrap().starts_with("fd://"), "{mine}");
    assert!(
        mine["n_in_interests"].as_u64().unwrap() >= 1,
        "the register command"
    );

    let rib = dataset(kite.socket(), "rib/list");
    let test = entry(&rib, "/test").unwrap_or_else(|| panic!("/test in {rib}"));
    let routes = test["routes"].as_array().unwrap();
    assert_eq!(routes.len(), 1, "{rib}");
    assert_eq!(routes[0]["face_id"], face);
    assert_eq!(routes[0]["origin"], 0, "app origin");

    let fib = dataset(kite.socket(), "fib/list");
    let test = entry(&fib, "/test").unwrap_or_else(|| panic!("/test in {fib}"));
    assert_eq!(
        test["next_hop_records"],
        serde_json::json!([{"face_id": face, "cost": 0}])
    );

    // The producer's face closes: its route goes from the RIB and the FIB.
    producer.kill();
    let gone = eventually(Duration::from_secs(5), || {
        std::thread::sleep(DATASET_FRESHNESS);
        let rib = dataset(kite.socket(), "rib/list");
        let fib = dataset(kite.socket(), "fib/list");
        (entry(&rib, "/test").is_none() && entry(&fib, "/test").is_none()).then_some(())
    });
    assert!(gone.is_some(), "/test stayed after its face closed");
}

#[test]
#[ignore = "needs python-ndn: scripts/test.sh runs it"]
fn strategy_choice_set_list_refuse_unset() {
    let kite = Daemon::local(&[]);
    let multicast = "/localhost/nfd/strategy/multicast";
    assert!(entry(&dataset(kite.socket(), "strategy-choice/list"), "/m").is_none());

    let set = command(
        kite.socket(),
        "strategy-choice",
        "set",
        &["name=/m", &format!("strategy={multicast}")],
    );
    let body = ok(&set);
    assert_eq!(body["name"], "/m");
    let chosen = body["strategy"]["name"].as_str().unwrap();
    assert!(chosen.starts_with(multicast), "versioned name: {set}");

    std::thread::sleep(DATASET_FRESHNESS);
    let choices = dataset(kite.socket(), "strategy-choice/list");
    let m = entry(&choices, "/m").unwrap_or_else(|| panic!("/m in {choices}"));
    assert_eq!(m["strategy"]["name"], chosen);

    let unknown = command(
        kite.socket(),
        "strategy-choice",
        "set",
        &[
            "name=/u",
            "strategy=/localhost/nfd/strategy/no-such-strategy",
        ],
    );
    assert_eq!(unknown["status_code"], 404, "{unknown}");

    ok(&command(
        kite.socket(),
        "strategy-choice",
        "unset",
        &["name=/m"],
    ));
    std::thread::sleep(DATASET_FRESHNESS);
    let choices = dataset(kite.socket(), "strategy-choice/list");
    assert!(entry(&choices, "/m").is_none(), "{choices}");
    assert!(entry(&choices, "/u").is_none(), "{choices}");
}

#[test]
#[ignore = "needs python-ndn: scripts/test.sh runs it"]
fn fib_add_nexthop_is_listed_and_an_unknown_face_is_gone() {
    let kite = Daemon::local(&[]);
    let producer = Producer::start(kite.socket(), "/p", &[]);
    let face = producer.face_id().to_string();
    let add = command(
        kite.socket(),
        "fib",
        "add-nexthop",
        &["name=/p/routed", &format!("face_id={face}"), "cost=7"],
    );
    assert_eq!(ok(&add)["cost"], 7, "{add}");
    let fib = dataset(kite.socket(), "fib/list");
    let routed = entry(&fib, "/p/routed").unwrap_or_else(|| panic!("{fib}"));
    assert_eq!(routed["next_hop_records"][0]["cost"], 7);

    let gone = command(
        kite.socket(),
        "fib",
        "add-nexthop",
        &["name=/p/nowhere", "face_id=999999"],
    );
    assert_eq!(gone["status_code"], 410, "unknown face: {gone}");
}
