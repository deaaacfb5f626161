//! UDP multicast faces in `kite run` (`--udp-multicast`, NFD's `face_system.udp` mcast): two
//! daemons in two network namespaces on one veth link, with no face configured, each open a
//! multicast face on NDN's group (224.0.23.170:56363) on the link; an Interest routed to that
//! face on one reaches a producer on the other, and its Data comes back the same way. The
//! blacklist keeps an interface without one.
//!
//! Needs root (`ip netns add`); without it the test skips (it says why through
//! `kite_testkit::skip`, and `scripts/test.sh` counts it skipped, not passed).

mod common;

use std::time::Duration;

use bytes::Bytes;
use common::netns::Lab;
use common::peer::{Conn, Producer};
use common::{ctl, Daemon};

const GROUP: &str = "udp4://224.0.23.170:56363";

/// The multicast face's FaceId, if the daemon has one.
fn multicast_face(socket: &str) -> Option<u64> {
    let faces = ctl::json(socket, &["face", "list"]);
    faces
        .as_array()?
        .iter()
        .find(|f| f["uri"] == GROUP)
        .and_then(|f| f["face_id"].as_u64())
}

#[test]
fn neighbours_on_a_link_reach_each_other_over_the_multicast_face() {
    let Some(mut lab) = Lab::new("m", &["a", "b"]) else {
        return;
    };
    lab.link(0, 1);
    let args = ["--local-only", "--udp-multicast"].map(String::from);
    let a = Daemon::start(&lab.launcher(0), &args);
    let b = Daemon::start(&lab.launcher(1), &args);
    let _producer = Producer::start(
        b.socket(),
        "/mc",
        Box::new(|_| Some(Bytes::from_static(b"over multicast"))),
    );
    let face = multicast_face(a.socket()).expect("a multicast face on a's link");
    let faces = ctl::json(a.socket(), &["face", "list"]);
    let f = faces
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["face_id"] == face)
        .unwrap();
    assert_eq!(f["local_uri"], "udp4://10.201.1.1:56363", "{f}");
    assert_eq!(f["link_type"], "multi-access", "{f}");
    ctl::ok(a.socket(), &["route", "add", "/mc", &face.to_string()]);
    let mut consumer = Conn::unix(a.socket());
    let d = consumer.fetch("/mc/1", Duration::from_secs(4));
    assert_eq!(d.content.as_deref(), Some(&b"over multicast"[..]));

    // Blacklisted, the link's interface gets no multicast face.
    let mut quiet = args.to_vec();
    quiet.extend(["--udp-multicast-blacklist".into(), "l1a".into()]);
    let c = Daemon::start(&lab.launcher(0), &quiet);
    assert_eq!(multicast_face(c.socket()), None);
}
