//! Readvertising to the routing daemon (`rib.readvertise_nlsr`, on by default), against a
//! fake daemon: an application that registers `/localhost/nlsr`, as NLSR and ndn-dv do, and
//! answers `/localhost/nlsr/rib/register|unregister` with a success code (200, as ndn-dv
//! does, or another code below 400).
//!
//! It checks what ndn-dv's handler parses: a six-component name `/localhost/nlsr/rib/<verb>/
//! <ControlParameters>/<params-sha256>` (a v0.3 signed command Interest) whose parameters
//! carry the prefix's Name and nothing else, as NFD's do; that a code below 400 counts as
//! success; that only routes of Origin client are readvertised; that the daemon is
//! told again when it comes back (its route for `/localhost/nlsr` reappears); and that the
//! prefix is withdrawn when its route goes.

mod common;

use std::time::{Duration, Instant};

use bytes::Bytes;
use common::peer::{Conn, Producer};
use common::{ctl, Daemon};
use kite_mgmt_proto::nfd::RouteOrigin;
use kite_mgmt_proto::{ControlParameters, ControlResponse, Tlv};
use kite_packet::{Interest, Name};

/// How long a readvertisement may take to arrive: at once, or after the client gives up on
/// an answer that never comes (4 s).
const SOON: Duration = Duration::from_secs(10);

/// A fake routing daemon on `socket`: answers every command with `code`.
fn fake_router(socket: &str, code: u64) -> Producer {
    Producer::start(
        socket,
        "/localhost/nlsr",
        Box::new(move |_| {
            let ok = ControlResponse::new(code, "Readvertise command successful");
            Some(Bytes::from(ok.encode()))
        }),
    )
}

/// The verb and ControlParameters of a readvertise command, checked as ndn-dv checks it.
fn parse(i: &Interest) -> (String, ControlParameters) {
    let n = &i.name;
    assert_eq!(n.len(), 6, "ndn-dv takes six components: {n}");
    assert_eq!(
        n.prefix(3),
        "/localhost/nlsr/rib".parse::<Name>().unwrap(),
        "{n}"
    );
    let verb = String::from_utf8(n.get(3).unwrap().value().to_vec()).unwrap();
    let params = ControlParameters::from_component_value(n.get(4).unwrap().value())
        .expect("ControlParameters in the fifth component");
    assert!(i.sig_info.is_some(), "a signed command Interest");
    (verb, params)
}

/// Registers `prefix` with `origin` toward `app`'s connection (which keeps the route alive).
fn register(app: &mut Conn, prefix: &str, origin: RouteOrigin) {
    let params = ControlParameters {
        name: Some(prefix.parse().unwrap()),
        origin: Some(origin),
        ..ControlParameters::default()
    };
    app.send(&common::peer::command("rib", "register", &params));
    app.recv_packet(SOON);
}

#[test]
fn client_routes_are_registered_with_the_routing_daemon_and_withdrawn_with_their_route() {
    let kite = Daemon::local(&[]);
    let socket = kite.socket();
    let router = fake_router(socket, 200);

    let mut app = Conn::unix(socket);
    register(&mut app, "/app/static", RouteOrigin::STATIC);
    register(&mut app, "/app/local", RouteOrigin::APP);
    register(&mut app, "/app/exposed", RouteOrigin::CLIENT);
    let (verb, p) = parse(&router.interests(1, SOON)[0]);
    assert_eq!(verb, "register");
    assert_eq!(
        p,
        name_only("/app/exposed"),
        "only the client route, by Name"
    );

    // The daemon restarts: once it has registered /localhost/nlsr again, it is told again.
    drop(router);
    let until = Instant::now() + SOON;
    while ctl::ok(socket, &["route", "list"]).contains("/localhost/nlsr") {
        assert!(
            Instant::now() < until,
            "the daemon's route outlived its face"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // This one answers 204: success too, as for ndn-cxx's controller. The acceptances are
    // counted before it starts, since the daemon may log this one's as soon as it answers.
    // The client sends one command at a time: the first router's has ended by now.
    let accepted = |kite: &Daemon| {
        kite.log_text()
            .matches("readvertise: register accepted")
            .count()
    };
    let before = accepted(&kite);
    let router = fake_router(socket, 204);
    let (verb, p) = parse(&router.interests(1, SOON)[0]);
    assert_eq!(verb, "register");
    assert_eq!(p, name_only("/app/exposed"));
    let accepted = common::eventually(SOON, || (accepted(&kite) > before).then_some(()));
    assert!(accepted.is_some(), "204 is success:\n{}", kite.log_text());

    // The app goes, its routes with it: the prefix is withdrawn.
    drop(app);
    let (verb, p) = parse(&router.interests(1, SOON)[0]);
    assert_eq!(verb, "unregister");
    assert_eq!(p, name_only("/app/exposed"));
}

/// ControlParameters with `prefix` as Name and no other field.
fn name_only(prefix: &str) -> ControlParameters {
    ControlParameters {
        name: Some(prefix.parse().unwrap()),
        ..ControlParameters::default()
    }
}

#[test]
fn readvertise_nlsr_false_tells_the_routing_daemon_nothing() {
    let kite = Daemon::local(&["--readvertise-nlsr", "false"]);
    let socket = kite.socket();
    let router = fake_router(socket, 200);
    let mut app = Conn::unix(socket);
    register(&mut app, "/app/exposed", RouteOrigin::CLIENT);
    // Something reaches the router only through its route: send one Interest to show the
    // path works, and that it is the first thing the router sees.
    let mut probe = Conn::unix(socket);
    probe.send(&common::peer::interest("/localhost/nlsr/probe", 1000));
    let first = &router.interests(1, SOON)[0];
    assert_eq!(first.name.to_string(), "/localhost/nlsr/probe");
}
