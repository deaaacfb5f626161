//! The reserved faces of a real `kite run`, as NFD's face table has them: internal (1),
//! content store (254) and null (255) exist for every command that names a face, so a route
//! or nexthop toward them is accepted and listed (an unknown face is refused 410), faces/update
//! answers for them, faces/destroy leaves them, and forwarding toward the null face drops
//! the Interest as NFD's null face does (no Nack: it waits out its lifetime).

mod common;

use std::time::Duration;

use common::ctl::{err, json, ok};
use common::peer::{interest, mgmt, Conn, Got};
use common::Daemon;
use kite_mgmt_proto::nfd::status;
use kite_mgmt_proto::ControlParameters;
use kite_packet::NetPacket;
use serde_json::Value;

/// How long a management command may take.
const MGMT: Duration = Duration::from_secs(4);

fn nexthops(fib: &Value, prefix: &str) -> Vec<u64> {
    fib.as_array()
        .unwrap()
        .iter()
        .find(|e| e["prefix"] == prefix)
        .map(|e| {
            e["next_hops"]
                .as_array()
                .unwrap()
                .iter()
                .map(|h| h["face_id"].as_u64().unwrap())
                .collect()
        })
        .unwrap_or_default()
}

/// What the forwarder sends back for an Interest for `name` within `wait`: `None` for
/// nothing, else the NackReason (0 for Data).
fn outcome(conn: &mut Conn, name: &str, wait: Duration) -> Option<u64> {
    conn.send(&interest(name, 300));
    match conn.recv(wait) {
        Got::Frame(f) => match NetPacket::decode_frame(f).expect("a packet").1 {
            NetPacket::Nack(n) => Some(n.reason.0),
            _ => Some(0),
        },
        _ => None,
    }
}

#[test]
fn routes_to_the_internal_and_null_faces_are_accepted_listed_and_forwarded_as_nfd_does() {
    let kite = Daemon::local(&[]);
    let s = kite.socket();
    for (prefix, face) in [
        ("/to/internal", "1"),
        ("/to/null", "255"),
        ("/to/cs", "254"),
    ] {
        let added = ok(s, &["route", "add", prefix, face]);
        assert!(added.contains("route-add-accepted"), "{added}");
    }
    let e = err(s, &["route", "add", "/to/nowhere", "999"]);
    assert!(e.contains("410") && e.contains("Face not found"), "{e}");

    let mut client = mgmt(s);
    let hop = |name: &str, face| ControlParameters {
        name: Some(name.parse().unwrap()),
        face_id: Some(face),
        ..ControlParameters::default()
    };
    for face in [1, 255] {
        let r = client
            .command("fib", "add-nexthop", &hop("/fib/reserved", face), MGMT)
            .unwrap();
        assert_eq!(r.status_code, status::OK, "{r:?}");
    }
    let r = client
        .command("fib", "add-nexthop", &hop("/fib/reserved", 999), MGMT)
        .unwrap();
    assert_eq!(
        (r.status_code, r.status_text.as_str()),
        (status::GONE, "Face not found")
    );

    let rib = json(s, &["route", "list"]).to_string();
    for (prefix, face) in [("/to/internal", 1), ("/to/null", 255), ("/to/cs", 254)] {
        assert!(
            rib.contains(&format!("\"prefix\":\"{prefix}\"")),
            "{prefix} in {rib}"
        );
        let fib = json(s, &["fib", "list"]);
        assert_eq!(nexthops(&fib, prefix), [face], "{fib}");
    }
    assert!(!rib.contains("/to/nowhere"), "{rib}");
    let fib = json(s, &["fib", "list"]);
    let mut hops = nexthops(&fib, "/fib/reserved");
    hops.sort();
    assert_eq!(hops, [1, 255], "{fib}");

    // faces/update of a reserved face is answered as NFD answers it; destroy leaves it.
    let update = |face, mtu: Option<u64>| ControlParameters {
        face_id: Some(face),
        mtu,
        ..ControlParameters::default()
    };
    let r = client
        .command("faces", "update", &update(255, None), MGMT)
        .unwrap();
    assert_eq!(r.status_code, status::OK, "{r:?}");
    let r = client
        .command("faces", "update", &update(1, Some(1500)), MGMT)
        .unwrap();
    assert_eq!(r.status_code, status::CONFLICT, "{r:?}");
    let r = client
        .command("faces", "update", &update(999, None), MGMT)
        .unwrap();
    assert_eq!(r.status_code, status::NOT_FOUND, "{r:?}");
    for face in ["1", "255"] {
        ok(s, &["face", "destroy", face]);
    }
    let faces = json(s, &["face", "list"]).to_string();
    for uri in ["internal://", "null://"] {
        assert!(faces.contains(uri), "{uri} still listed: {faces}");
    }

    // Forwarding: the null face (and the content store's) drop what they are sent, and
    // the internal face drops what is not management's: no Data, no Nack. An unrouted
    // name is Nacked NoRoute at once.
    let mut conn = Conn::unix(s);
    let wait = Duration::from_millis(600);
    assert_eq!(outcome(&mut conn, "/nowhere/x", wait), Some(150));
    for name in ["/to/null/x", "/to/cs/x", "/to/internal/x"] {
        assert_eq!(outcome(&mut conn, name, wait), None, "{name}");
    }
    // Management still answers (nothing above broke the internal face).
    let r = client
        .command("faces", "update", &update(255, None), MGMT)
        .unwrap();
    assert_eq!(r.status_code, status::OK, "{r:?}");
    assert!(
        !kite.log_text().contains("not a valid command"),
        "an Interest routed to the internal face is not a malformed command: {}",
        kite.log_text()
    );
}
