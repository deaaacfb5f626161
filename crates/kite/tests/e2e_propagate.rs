//! Prefix propagation from a host to its gateway (`rib.auto_prefix_propagate` on the host,
//! `rib.localhop_registration` on the gateway), two `kite run` in two network namespaces
//! joined by a veth pair, so the host's face is non-local to the gateway as a laptop's is.
//!
//! The host has a face to the gateway and a route for `/localhop/nfd` on it (what makes it the
//! gateway); an application on the host registers `/home/laptop/photos`; the gateway learns
//! `/home` (the propagated prefix covering it) toward the host's face, Origin client, cost 15,
//! and a consumer on the gateway reaches the application. When the application goes, the
//! route leaves the gateway. A neighbour may not register a route toward another face, nor
//! hold more than `MAX_LOCALHOP_ROUTES` through its own, nor lock the gateway's own tools out
//! with a timestamp from the future.
//!
//! Needs root (`ip netns add`); without it the test skips (it says why through
//! `kite_testkit::skip`, and `scripts/test.sh` counts it skipped, not passed).

mod common;

use std::time::{Duration, Instant};

use bytes::Bytes;
use common::netns::Lab;
use common::peer::{self, Conn, Producer};
use common::{ctl, Daemon};
use kite_mgmt_proto::nfd::{status, RouteOrigin};
use kite_mgmt_proto::{ControlParameters, ControlResponse, Tlv};
use kite_mgmt_server::server::MAX_LOCALHOP_ROUTES;
use kite_packet::NetPacket;

const WAIT: Duration = Duration::from_secs(10);

fn await_routes(socket: &str, prefix: &str, ok: impl Fn(&[(u64, u64, u64)]) -> bool) {
    let until = Instant::now() + WAIT;
    loop {
        let rs = ctl::routes(socket, prefix);
        if ok(&rs) {
            return;
        }
        assert!(
            Instant::now() < until,
            "routes of {prefix}: {rs:?}\n{}",
            ctl::ok(socket, &["route", "list"])
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_host_propagates_its_prefixes_to_its_gateway() {
    let Some(mut lab) = Lab::new("p", &["h", "g"]) else {
        return;
    };
    lab.link(0, 1); // host 10.201.1.1, gateway 10.201.1.2
    let udp = |a: &str| vec!["--udp".to_string(), format!("{a}:6363")];
    let mut host_args = udp("10.201.1.1");
    host_args.extend(["--auto-prefix-propagate", "--propagate-prefix", "/home"].map(String::from));
    let host = Daemon::start(&lab.launcher(0), &host_args);
    let mut gw_args = udp("10.201.1.2");
    gw_args.push("--localhop-registration".into());
    let gateway = Daemon::start(&lab.launcher(1), &gw_args);

    let out = ctl::json(host.socket(), &["face", "create", "udp4://10.201.1.2:6363"]);
    let up = out["face_id"]
        .as_u64()
        .expect("the host's face to the gateway");
    ctl::ok(
        host.socket(),
        &["route", "add", "/localhop/nfd", &up.to_string()],
    );

    let app = Producer::start(
        host.socket(),
        "/home/laptop/photos",
        Box::new(|_| Some(Bytes::from_static(b"photo"))),
    );
    let _elsewhere = Producer::start(host.socket(), "/elsewhere", Box::new(|_| None));

    // The gateway's face toward the host is the one the commands came on.
    await_routes(gateway.socket(), "/home", |rs| {
        rs.iter()
            .any(|&(_, origin, cost)| origin == RouteOrigin::CLIENT.0 && cost == 15)
    });
    let down = ctl::face_id(gateway.socket(), "udp4://10.201.1.1:6363");
    assert_eq!(ctl::routes(gateway.socket(), "/home")[0].0, down);
    assert!(ctl::routes(gateway.socket(), "/elsewhere").is_empty());
    assert!(ctl::routes(gateway.socket(), "/home/laptop/photos").is_empty());

    let mut consumer = Conn::unix(gateway.socket());
    let d = consumer.fetch("/home/laptop/photos/1", Duration::from_secs(4));
    assert_eq!(d.content.as_deref(), Some(&b"photo"[..]));

    // A neighbour may register toward itself only: a command naming another face is
    // refused. It goes out of the host by its /localhop/nfd route, as the host's own do.
    let params = ControlParameters {
        name: Some("/stolen".parse().unwrap()),
        face_id: Some(1),
        origin: Some(RouteOrigin::CLIENT),
        ..ControlParameters::default()
    };
    let mut rogue = Conn::unix(host.socket());
    rogue.send(&peer::command_under(
        "/localhop/nfd",
        "rib",
        "register",
        &params,
    ));
    let (_, packet) = rogue.recv_packet(Duration::from_secs(4));
    let NetPacket::Data(d) = packet else {
        panic!("Data expected: {packet:?}");
    };
    let resp = ControlResponse::decode(&d.content.unwrap()).unwrap();
    assert_eq!(resp.status_code, status::FORBIDDEN, "{resp:?}");
    assert!(ctl::routes(gateway.socket(), "/stolen").is_empty());

    // A neighbour holds at most MAX_LOCALHOP_ROUTES routes through its face (/home is one):
    // beyond them a new prefix is refused, a route it has may still be refreshed.
    let mut answer = |prefix: &str| {
        let params = ControlParameters {
            name: Some(prefix.parse().unwrap()),
            ..ControlParameters::default()
        };
        rogue.send(&peer::command_under(
            "/localhop/nfd",
            "rib",
            "register",
            &params,
        ));
        match rogue.recv_packet(Duration::from_secs(4)) {
            (_, NetPacket::Data(d)) => {
                ControlResponse::decode(&d.content.unwrap())
                    .unwrap()
                    .status_code
            }
            (_, other) => panic!("Data expected: {other:?}"),
        }
    };
    for i in 1..MAX_LOCALHOP_ROUTES {
        assert_eq!(answer(&format!("/flood/{i}")), status::OK, "route {i}");
    }
    assert_eq!(answer("/flood/one-more"), status::FORBIDDEN);
    assert_eq!(answer("/flood/1"), status::OK, "a refresh");
    assert!(ctl::routes(gateway.socket(), "/flood/one-more").is_empty());

    // The application goes: its route on the host goes, and /home leaves the gateway. This
    // test's commands and the host's readvertising reach the gateway as one keyless signer
    // (DigestSha256) on one face: wait until the clock has passed the SignatureTime this
    // test used last (back-to-back commands are stamped ahead of it), or the host's withdrawal
    // would carry an older one and be refused as a replay.
    let last = kite_app::mgmt::next_signature_time();
    while std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
        <= last
    {
        std::thread::sleep(Duration::from_millis(1));
    }
    drop(app);
    await_routes(gateway.socket(), "/home", |rs| rs.is_empty());

    // A neighbour's timestamp 100 s ahead (within the 120 s grace period) does not lock out,
    // for those 100 s, the gateway's own tools, whose commands are signed the same way
    // (DigestSha256, no key name). (It does lock out that neighbour's later commands: last.)
    let ahead = kite_app::mgmt::next_signature_time() + 100_000;
    let params = ControlParameters {
        name: Some("/flood/1".parse().unwrap()),
        ..ControlParameters::default()
    };
    rogue.send(&peer::command_signed_at(
        "/localhop/nfd",
        "rib",
        "unregister",
        &params,
        ahead,
    ));
    rogue.recv_packet(Duration::from_secs(4));
    ctl::ok(
        gateway.socket(),
        &["strategy", "set", "/local", "multicast"],
    );
}
