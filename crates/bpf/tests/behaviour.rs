//! One behavioural suite, two backends: the native built-ins and the eBPF programs in
//! `strategies/` must forward, retry, rotate and Nack alike.

use kite_fw::fib::StrategyId;
use kite_packet::NackReason;
use kite_testkit::forwarder::*;

/// Native: the built-in with this short name.
fn native(h: &mut Harness, kind: &str) -> StrategyId {
    let full = match kind {
        "round-robin" => "/localhost/kite/strategy/round-robin".to_string(),
        k => format!("/localhost/nfd/strategy/{k}"),
    };
    h.strategies.find(&name(&full)).unwrap()
}

/// eBPF: `strategies/KIND.o`, loaded and added to the table.
fn ebpf(h: &mut Harness, kind: &str) -> StrategyId {
    let s = load_object(kind, &format!("bpf-{kind}"));
    h.strategies.add(s).unwrap()
}

macro_rules! suite {
    ($backend:ident) => {
        mod $backend {
            use super::*;

            fn setup(kind: &str) -> Harness {
                let mut h = Harness::with_three_upstreams();
                let id = super::$backend(&mut h, kind);
                h.set_strategy("/p", id);
                h
            }

            #[test]
            fn best_route_takes_the_cheapest_then_retries_another() {
                let mut h = setup("best-route");
                h.route("/p", UP2, 20);
                h.route("/p", UP1, 10);
                let out = h.interest(APP, interest("/p/x", 1), None);
                assert_eq!(interest_faces(&out), vec![UP1]);
                h.advance(5);
                assert!(
                    interest_faces(&h.interest(APP, interest("/p/x", 2), None)).is_empty(),
                    "suppressed"
                );
                h.advance(20);
                assert_eq!(
                    interest_faces(&h.interest(APP, interest("/p/x", 3), None)),
                    vec![UP2]
                );
                let token = token_to(&out, UP1);
                assert_eq!(data_faces(&h.uncached_data(UP1, "/p/x", token)), vec![APP]);
            }

            /// New nonces from the consumer: held back inside each suppression interval
            /// (10 ms, doubling, at most 250 ms), forwarded at its end.
            #[test]
            fn retransmissions_are_suppressed_only_inside_the_interval() {
                for kind in ["best-route", "multicast"] {
                    let mut h = setup(kind);
                    h.route("/p", UP1, 10);
                    assert_eq!(
                        interest_faces(&h.interest(APP, interest("/p/x", 1), None)),
                        vec![UP1]
                    );
                    let mut nonce = 1;
                    for interval in [10, 20, 40, 80, 160, 250, 250] {
                        h.advance(interval - 1);
                        nonce += 1;
                        assert!(
                            interest_faces(&h.interest(APP, interest("/p/x", nonce), None))
                                .is_empty(),
                            "{kind}: suppressed inside {interval} ms"
                        );
                        h.advance(1);
                        nonce += 1;
                        assert_eq!(
                            interest_faces(&h.interest(APP, interest("/p/x", nonce), None)),
                            vec![UP1],
                            "{kind}: forwarded after {interval} ms"
                        );
                    }
                }
            }

            /// Once the upstream record expired, nothing is pending upstream: a later
            /// Interest for the entry goes out at once.
            #[test]
            fn best_route_forwards_at_once_when_nothing_is_pending_upstream() {
                let mut h = setup("best-route");
                h.route("/p", UP1, 10);
                let out = h.interest(APP, interest_lifetime("/p/x", 1, 3), None);
                assert_eq!(interest_faces(&out), vec![UP1]);
                h.advance(1);
                assert!(interest_faces(&h.interest(
                    APP2,
                    interest_lifetime("/p/x", 2, 4000),
                    None
                ))
                .is_empty());
                h.advance(4);
                assert_eq!(
                    interest_faces(&h.interest(APP2, interest_lifetime("/p/x", 3, 4000), None)),
                    vec![UP1]
                );
            }

            #[test]
            fn best_route_nacks_without_a_route() {
                let mut h = setup("best-route");
                h.route("/p", APP, 10);
                let out = h.interest(APP, interest("/p/x", 1), None);
                assert_eq!(nacks(&out), vec![(APP, NackReason::NO_ROUTE)]);
            }

            #[test]
            fn best_route_returns_the_nack_once_every_upstream_nacked() {
                let mut h = setup("best-route");
                h.route("/p", UP1, 10);
                assert_eq!(
                    interest_faces(&h.interest(APP, interest("/p/x", 7), None)),
                    vec![UP1]
                );
                let out = h.nack(UP1, interest("/p/x", 7), NackReason::CONGESTION, None);
                assert_eq!(nacks(&out), vec![(APP, NackReason::CONGESTION)]);
            }

            #[test]
            fn multicast_sends_to_every_eligible_nexthop() {
                let mut h = setup("multicast");
                for (f, c) in [(UP1, 10), (UP2, 20), (UP3, 30), (APP, 5)] {
                    h.route("/p", f, c);
                }
                let mut faces = interest_faces(&h.interest(APP, interest("/p/x", 1), None));
                faces.sort();
                assert_eq!(faces, vec![UP1, UP2, UP3]);
                h.advance(5);
                assert!(
                    interest_faces(&h.interest(APP, interest("/p/x", 2), None)).is_empty(),
                    "suppressed"
                );
                h.advance(20);
                assert_eq!(
                    interest_faces(&h.interest(APP, interest("/p/x", 3), None)).len(),
                    3
                );
            }

            #[test]
            fn multicast_nacks_without_a_route() {
                let mut h = setup("multicast");
                h.route("/p", APP, 10);
                assert_eq!(
                    nacks(&h.interest(APP, interest("/p/x", 1), None)),
                    vec![(APP, NackReason::NO_ROUTE)]
                );
            }

            #[test]
            fn round_robin_rotates_over_eligible_nexthops() {
                let mut h = setup("round-robin");
                for (f, c) in [(UP1, 10), (UP2, 20), (APP, 5)] {
                    h.route("/p", f, c);
                }
                let mut faces = Vec::new();
                for n in 0..4 {
                    faces.extend(interest_faces(&h.interest(
                        APP,
                        interest(&format!("/p/{n}"), n),
                        None,
                    )));
                }
                let expected = if faces[0] == UP1 {
                    [UP1, UP2, UP1, UP2]
                } else {
                    [UP2, UP1, UP2, UP1]
                };
                assert_eq!(faces, expected);
            }
        }
    };
}

suite!(native);
suite!(ebpf);

#[test]
fn fastest_prefers_the_lowest_measured_rtt() {
    let mut h = Harness::with_three_upstreams();
    let s = load_object("fastest", "fastest");
    let id = h.strategies.add(s).unwrap();
    h.set_strategy("/p", id);
    h.route("/p", UP1, 10);
    h.route("/p", UP2, 20);
    // Unmeasured: cost order. Make UP1 slow (50 ms) and UP2 fast (2 ms).
    let mut n = 0;
    let mut exchange = |h: &mut Harness, to: kite_fw::face::FaceId, rtt: u64| {
        n += 1;
        let out = h.interest(APP, interest(&format!("/p/{n}"), n), None);
        let token = token_to(&out, to);
        h.advance(rtt);
        h.uncached_data(to, &format!("/p/{n}"), token);
        interest_faces(&out)
    };
    assert_eq!(exchange(&mut h, UP1, 50)[0], UP1);
    // UP1 measured at 50 ms; UP2 unmeasured ranks by position (1 µs): it is tried next.
    assert_eq!(exchange(&mut h, UP2, 2)[0], UP2);
    for _ in 0..20 {
        assert_eq!(
            exchange(&mut h, UP2, 2)[0],
            UP2,
            "the faster face is preferred"
        );
    }
}
