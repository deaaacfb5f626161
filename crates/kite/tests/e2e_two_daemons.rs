//! Two `kite run` daemons on loopback, joined by a face that python-ndn's management client
//! creates on A (`faces/create`), with a route on A toward it: a consumer on A fetches from a
//! producer on B, over UDP and over TCP. Ignored by a plain `cargo test`; `scripts/test.sh`
//! runs them.

mod common;

use common::{command, dataset, free_tcp_port, free_udp_port, ok, py, Daemon, Producer};

fn ports() -> (u16, u16) {
    (free_udp_port(), free_tcp_port())
}

#[test]
#[ignore = "needs python-ndn: scripts/test.sh runs it"]
fn consumer_on_a_fetches_from_producer_on_b_over_udp() {
    let (a_udp, a_tcp) = ports();
    let (b_udp, b_tcp) = ports();
    let a = Daemon::loopback(a_udp, a_tcp);
    let b = Daemon::loopback(b_udp, b_tcp);
    let mut producer = Producer::start(b.socket(), "/remote", &[]);

    let uri = format!("udp4://127.0.0.1:{b_udp}");
    let created = command(a.socket(), "faces", "create", &[&format!("uri={uri}")]);
    let face = ok(&created)["face_id"].as_u64().expect("face_id");
    assert_eq!(created["body"]["uri"], uri.as_str());
    // NFD's unicast UDP faces share their channel's socket: B sees A's listener address.
    assert_eq!(
        created["body"]["local_uri"],
        format!("udp4://127.0.0.1:{a_udp}")
    );
    ok(&command(
        a.socket(),
        "rib",
        "register",
        &["name=/remote", &format!("face_id={face}")],
    ));

    let got = py(&["get", a.socket(), "plain:/remote/x", "fresh:/remote/y"]);
    assert_eq!(got[0]["content"], "1 /remote/x", "{got:?}");
    assert_eq!(got[1]["content"], "2 /remote/y", "{got:?}");
    assert_eq!(producer.interests().len(), 2);

    // B made an on-demand face for A's address when the first Interest came.
    let faces = dataset(b.socket(), "faces/list");
    let back = faces
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["uri"] == format!("udp4://127.0.0.1:{a_udp}"))
        .unwrap_or_else(|| panic!("B's face toward A in {faces}"));
    assert_eq!(back["face_persistency"], 1, "on-demand: {back}");
    assert_eq!(back["face_scope"], 0, "non-local: {back}");
    assert!(back["n_in_interests"].as_u64().unwrap() >= 2, "{back}");
}

#[test]
#[ignore = "needs python-ndn: scripts/test.sh runs it"]
fn consumer_on_a_fetches_from_producer_on_b_over_tcp() {
    let (a_udp, a_tcp) = ports();
    let (b_udp, b_tcp) = ports();
    let a = Daemon::loopback(a_udp, a_tcp);
    let b = Daemon::loopback(b_udp, b_tcp);
    let mut producer = Producer::start(b.socket(), "/remote", &[]);

    let uri = format!("tcp4://127.0.0.1:{b_tcp}");
    let created = command(a.socket(), "faces", "create", &[&format!("uri={uri}")]);
    let face = ok(&created)["face_id"].as_u64().expect("face_id");
    assert_eq!(created["body"]["uri"], uri.as_str());
    ok(&command(
        a.socket(),
        "fib",
        "add-nexthop",
        &["name=/remote", &format!("face_id={face}")],
    ));

    let got = py(&["get", a.socket(), "plain:/remote/x", "fresh:/remote/y"]);
    assert_eq!(got[0]["content"], "1 /remote/x", "{got:?}");
    assert_eq!(got[1]["content"], "2 /remote/y", "{got:?}");
    assert_eq!(producer.interests().len(), 2);

    // Creating the same face again is a conflict that names the existing face.
    let again = command(a.socket(), "faces", "create", &[&format!("uri={uri}")]);
    assert_eq!(again["status_code"], 409, "{again}");
    assert_eq!(again["body"]["face_id"], face);
}
