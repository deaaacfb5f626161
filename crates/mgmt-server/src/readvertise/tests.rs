use super::*;
use kite_mgmt_proto::nfd::route_flags;

fn n(s: &str) -> Name {
    s.parse().unwrap()
}

fn route(face: u64, origin: RouteOrigin) -> RibRoute {
    RibRoute {
        face_id: face,
        origin,
        cost: 0,
        flags: route_flags::CHILD_INHERIT,
        expires_at: None,
    }
}

fn client(face: u64) -> RibRoute {
    route(face, RouteOrigin::CLIENT)
}

fn to_router() -> Readvertise {
    Readvertise::new(Policy::ClientToRouter, NLSR_REFRESH_MS)
}

fn one(cmds: Vec<Command>) -> Command {
    assert_eq!(cmds.len(), 1, "{cmds:?}");
    cmds.into_iter().next().unwrap()
}

#[test]
fn only_client_routes_go_to_the_router() {
    let mut r = to_router();
    r.set_available(true, 0);
    for origin in [
        RouteOrigin::APP,
        RouteOrigin::STATIC,
        RouteOrigin::NLSR,
        RouteOrigin::PREFIXANN,
        RouteOrigin::AUTOREG,
    ] {
        r.route_added(&n("/a"), &route(300, origin), 0);
    }
    assert!(r.due(0).is_empty());
    r.route_added(&n("/a"), &client(300), 0);
    let c = one(r.due(0));
    assert_eq!((c.verb, c.prefix), (Verb::Register, n("/a")));
}

#[test]
fn nothing_is_sent_until_the_router_is_reachable_then_everything_is() {
    let mut r = to_router();
    r.route_added(&n("/a"), &client(300), 0);
    r.route_added(&n("/b"), &client(301), 0);
    assert!(r.due(10).is_empty());
    assert_eq!(r.next_due(), None);
    r.set_available(true, 20);
    let cmds = r.due(20);
    let prefixes: Vec<Name> = cmds.iter().map(|c| c.prefix.clone()).collect();
    assert_eq!(prefixes, [n("/a"), n("/b")]);
    assert!(cmds.iter().all(|c| c.verb == Verb::Register));
}

#[test]
fn a_registered_prefix_is_refreshed_every_hour() {
    let mut r = to_router();
    r.set_available(true, 0);
    r.route_added(&n("/a"), &client(300), 0);
    let c = one(r.due(0));
    r.finished(c.id, &c.prefix, true, 5);
    assert_eq!(r.next_due(), Some(5 + NLSR_REFRESH_MS));
    assert!(r.due(5 + NLSR_REFRESH_MS - 1).is_empty());
    let c = one(r.due(5 + NLSR_REFRESH_MS));
    assert_eq!(c.verb, Verb::Register);
}

#[test]
fn a_failure_is_retried_after_a_delay_that_doubles_up_to_an_hour() {
    let mut r = to_router();
    r.set_available(true, 0);
    r.route_added(&n("/a"), &client(300), 0);
    let mut now = 0;
    let mut delays = Vec::new();
    for _ in 0..10 {
        let c = one(r.due(now));
        r.finished(c.id, &c.prefix, false, now);
        let next = r.next_due().unwrap();
        delays.push(next - now);
        now = next;
    }
    assert_eq!(
        delays,
        [
            100_000, 200_000, 400_000, 800_000, 1_600_000, 3_200_000, 3_600_000, 3_600_000,
            3_600_000, 3_600_000
        ]
    );
    // A success starts the delay over.
    let c = one(r.due(now));
    r.finished(c.id, &c.prefix, true, now);
    r.route_removed(&n("/a"), 300, RouteOrigin::CLIENT, now);
    let c = one(r.due(now));
    assert_eq!(c.verb, Verb::Unregister);
    r.finished(c.id, &c.prefix, false, now);
    assert_eq!(r.next_due(), Some(now + 2 * RETRY_DELAY_MIN_MS));
}

#[test]
fn one_prefix_serves_all_its_routes_and_is_withdrawn_with_the_last() {
    let mut r = to_router();
    r.set_available(true, 0);
    r.route_added(&n("/a"), &client(300), 0);
    r.route_added(&n("/a"), &client(301), 0);
    // The same route again (refreshed by its app) is not a new one.
    r.route_added(&n("/a"), &client(301), 0);
    let c = one(r.due(0));
    r.finished(c.id, &c.prefix, true, 1);
    r.route_removed(&n("/a"), 300, RouteOrigin::CLIENT, 2);
    assert_eq!(r.next_due(), Some(1 + NLSR_REFRESH_MS));
    r.route_removed(&n("/a"), 301, RouteOrigin::CLIENT, 3);
    let c = one(r.due(3));
    assert_eq!((c.verb, c.prefix.clone()), (Verb::Unregister, n("/a")));
    r.finished(c.id, &c.prefix, true, 4);
    assert_eq!(r.prefixes().count(), 0);
    assert_eq!(r.next_due(), None);
}

#[test]
fn a_route_that_goes_while_its_registration_is_out_is_then_withdrawn() {
    let mut r = to_router();
    r.set_available(true, 0);
    r.route_added(&n("/a"), &client(300), 0);
    let c = one(r.due(0));
    r.route_removed(&n("/a"), 300, RouteOrigin::CLIENT, 1);
    assert!(r.due(1).is_empty(), "one command per prefix at a time");
    r.finished(c.id, &c.prefix, true, 2);
    let c = one(r.due(2));
    assert_eq!(c.verb, Verb::Unregister);
    // And one that comes back during the withdrawal is registered again after it.
    r.route_added(&n("/a"), &client(300), 3);
    r.finished(c.id, &c.prefix, true, 4);
    let c = one(r.due(4));
    assert_eq!(c.verb, Verb::Register);
}

#[test]
fn while_unreachable_nothing_is_retried_and_withdrawals_are_forgotten() {
    let mut r = to_router();
    r.set_available(true, 0);
    r.route_added(&n("/a"), &client(300), 0);
    r.route_added(&n("/b"), &client(301), 0);
    for c in r.due(0) {
        r.finished(c.id, &c.prefix, true, 0);
    }
    r.set_available(false, 10);
    r.route_removed(&n("/b"), 301, RouteOrigin::CLIENT, 11);
    assert_eq!(r.next_due(), None);
    assert!(r.due(NLSR_REFRESH_MS * 2).is_empty());
    // The router comes back (restarted): what is still readvertised is registered again.
    r.set_available(true, 20);
    let c = one(r.due(20));
    assert_eq!((c.verb, c.prefix), (Verb::Register, n("/a")));
}

#[test]
fn a_stale_or_unknown_answer_changes_nothing() {
    let mut r = to_router();
    r.set_available(true, 0);
    r.route_added(&n("/a"), &client(300), 0);
    let c = one(r.due(0));
    r.finished(c.id + 7, &c.prefix, false, 1);
    r.finished(c.id, &n("/zzz"), false, 1);
    assert_eq!(r.next_due(), None, "still waiting for the real answer");
    r.finished(c.id, &c.prefix, true, 2);
    assert_eq!(r.next_due(), Some(2 + NLSR_REFRESH_MS));
}

#[test]
fn commands_in_flight_are_bounded() {
    let mut r = to_router();
    r.set_available(true, 0);
    for i in 0..(MAX_IN_FLIGHT + 10) {
        r.route_added(&n(&format!("/p{i}")), &client(300), 0);
    }
    let first = r.due(0);
    assert_eq!(first.len(), MAX_IN_FLIGHT);
    assert!(r.due(0).is_empty());
    assert_eq!(r.next_due(), None);
    let c = &first[0];
    r.finished(c.id, &c.prefix, true, 1);
    assert_eq!(r.due(1).len(), 1);
}

#[test]
fn the_gateway_gets_the_shortest_identity_covering_a_route() {
    let ids = vec![n("/home/laptop"), n("/home"), n("/work")];
    let mut r = Readvertise::new(Policy::HostToGateway(ids), GATEWAY_REFRESH_MS);
    r.set_available(true, 0);
    r.route_added(&n("/home/laptop/photos"), &route(300, RouteOrigin::APP), 0);
    r.route_added(&n("/home/laptop"), &route(301, RouteOrigin::STATIC), 0);
    r.route_added(&n("/elsewhere"), &route(302, RouteOrigin::APP), 0);
    r.route_added(&n("/localhost/nfd"), &route(1, RouteOrigin::APP), 0);
    r.route_added(&n("/localhop/nfd"), &route(260, RouteOrigin::STATIC), 0);
    let c = one(r.due(0));
    assert_eq!((c.verb, c.prefix.clone()), (Verb::Register, n("/home")));
    r.finished(c.id, &c.prefix, true, 0);
    assert_eq!(r.next_due(), Some(GATEWAY_REFRESH_MS));
    let p = Policy::HostToGateway(vec![n("/")]);
    assert_eq!(p.readvertised_as(&n("/localhop/nfd"), &client(1)), None);
    assert_eq!(p.readvertised_as(&n("/localhost/x"), &client(1)), None);
    assert_eq!(
        p.readvertised_as(&n("/localhop/x"), &client(1)),
        Some(n("/"))
    );
}

#[test]
fn a_destination_that_comes_back_gets_everything_again_at_once() {
    let mut r = to_router();
    r.set_available(true, 0);
    r.route_added(&n("/a"), &client(300), 0);
    let lost = one(r.due(0));
    // The daemon went before it answered, and came back.
    r.set_available(false, 1);
    r.set_available(true, 2);
    let again = one(r.due(2));
    assert_eq!(
        (again.verb, again.prefix.clone()),
        (Verb::Register, n("/a"))
    );
    // The lost command's late failure changes nothing; the new one's success counts.
    r.finished(lost.id, &lost.prefix, false, 3);
    assert_eq!(r.next_due(), None);
    r.finished(again.id, &again.prefix, true, 4);
    assert_eq!(r.next_due(), Some(4 + NLSR_REFRESH_MS));
}
