use super::*;

fn n(s: &str) -> Name {
    s.parse().unwrap()
}

fn route(face_id: u64, origin: u64, cost: u64, flags: u64) -> RibRoute {
    RibRoute {
        face_id,
        origin: RouteOrigin(origin),
        cost,
        flags,
        expires_at: None,
    }
}

const CI: u64 = route_flags::CHILD_INHERIT;
const CAP: u64 = route_flags::CAPTURE;

fn hops(list: &[(u64, u64)]) -> Vec<NextHop> {
    list.iter()
        .map(|&(face_id, cost)| NextHop { face_id, cost })
        .collect()
}

/// Inheritance scenarios: routes registered, then the expected FIB (prefix → nexthops).
#[test]
fn inheritance_and_capture_table() {
    type Scenario = (
        &'static str,
        Vec<(&'static str, RibRoute)>,
        Vec<(&'static str, Vec<(u64, u64)>)>,
    );
    let scenarios: Vec<Scenario> = vec![
        (
            "a child inherits a CHILD_INHERIT route",
            vec![("/", route(1, 0, 10, CI)), ("/a", route(2, 0, 5, CI))],
            vec![("/", vec![(1, 10)]), ("/a", vec![(2, 5), (1, 10)])],
        ),
        (
            "no inheritance without CHILD_INHERIT",
            vec![("/", route(1, 0, 10, 0)), ("/a", route(2, 0, 5, CI))],
            vec![("/", vec![(1, 10)]), ("/a", vec![(2, 5)])],
        ),
        (
            "CAPTURE on the child blocks every ancestor",
            vec![
                ("/", route(1, 0, 10, CI)),
                ("/a", route(3, 0, 1, CI)),
                ("/a/b", route(2, 0, 5, CAP)),
            ],
            vec![
                ("/", vec![(1, 10)]),
                ("/a", vec![(3, 1), (1, 10)]),
                ("/a/b", vec![(2, 5)]),
            ],
        ),
        (
            "CAPTURE on an ancestor stops the walk above it",
            vec![
                ("/", route(1, 0, 10, CI)),
                ("/a", route(3, 0, 1, CI | CAP)),
                ("/a/b", route(2, 0, 5, CI)),
            ],
            vec![
                ("/", vec![(1, 10)]),
                ("/a", vec![(3, 1)]),
                ("/a/b", vec![(2, 5), (3, 1)]),
            ],
        ),
        (
            "a CAPTURE ancestor without CHILD_INHERIT gives nothing and still blocks",
            vec![
                ("/", route(1, 0, 10, CI)),
                ("/a", route(3, 0, 1, CAP)),
                ("/a/b", route(2, 0, 5, CI)),
            ],
            vec![
                ("/", vec![(1, 10)]),
                ("/a", vec![(3, 1)]),
                ("/a/b", vec![(2, 5)]),
            ],
        ),
        (
            "own route of a face beats an inherited one, even a cheaper one",
            vec![("/", route(1, 0, 1, CI)), ("/a", route(1, 0, 50, CI))],
            vec![("/", vec![(1, 1)]), ("/a", vec![(1, 50)])],
        ),
        (
            "the nearest ancestor's route of a face wins over farther ones",
            vec![
                ("/", route(1, 0, 1, CI)),
                ("/a", route(1, 0, 50, CI)),
                ("/a/b", route(2, 0, 5, CI)),
            ],
            vec![
                ("/", vec![(1, 1)]),
                ("/a", vec![(1, 50)]),
                ("/a/b", vec![(2, 5), (1, 50)]),
            ],
        ),
        (
            "two origins on one face: the lowest cost wins",
            vec![("/a", route(1, 0, 30, CI)), ("/a", route(1, 255, 20, CI))],
            vec![("/a", vec![(1, 20)])],
        ),
        (
            "inheritance skips levels without an entry",
            vec![("/", route(1, 0, 7, CI)), ("/a/b/c", route(2, 0, 5, 0))],
            vec![("/", vec![(1, 7)]), ("/a/b/c", vec![(2, 5), (1, 7)])],
        ),
    ];
    for (what, routes, want) in scenarios {
        let mut rib = Rib::new();
        for (p, r) in routes {
            rib.register(&n(p), r, 0).unwrap();
        }
        let want: BTreeMap<Name, Vec<NextHop>> =
            want.into_iter().map(|(p, h)| (n(p), hops(&h))).collect();
        assert_eq!(rib.fib(), &want, "{what}");
        assert_eq!(rib.compute_fib(), want, "{what} (full recomputation)");
    }
}

/// An application registered `/p` (face 259, child-inherit, as `kite put --expose` and
/// readvertisement leave it), then a producer `/p/x` (face 261): `/p/x` lists its own producer
/// first at equal cost, so a new Interest for `/p/x/...` goes there and not to the
/// application of `/p`, which has nothing under `/p/x`. Sorted by face, 259 came first and
/// every Interest sent after the last one's PIT entry was gone went to it.
#[test]
fn a_prefix_lists_its_own_route_before_the_one_it_inherits() {
    let mut rib = Rib::new();
    rib.register(&n("/p"), route(259, 65, 0, CI), 0).unwrap();
    let changes = rib.register(&n("/p/x"), route(261, 0, 0, CI), 0).unwrap();
    assert_eq!(
        changes,
        vec![FibChange::Update {
            prefix: n("/p/x"),
            next_hops: hops(&[(261, 0), (259, 0)])
        }]
    );
    // Whichever registered first.
    let mut rib = Rib::new();
    rib.register(&n("/p/x"), route(259, 0, 0, CI), 0).unwrap();
    rib.register(&n("/p"), route(261, 65, 0, CI), 0).unwrap();
    assert_eq!(rib.fib()[&n("/p/x")], hops(&[(259, 0), (261, 0)]));
}

#[test]
fn register_reports_the_changed_subtree_only() {
    let mut rib = Rib::new();
    rib.register(&n("/x"), route(9, 0, 1, CI), 0).unwrap();
    rib.register(&n("/a/b"), route(2, 0, 5, CI), 0).unwrap();
    let changes = rib.register(&n("/a"), route(1, 0, 3, CI), 0).unwrap();
    assert_eq!(
        changes,
        vec![
            FibChange::Update {
                prefix: n("/a"),
                next_hops: hops(&[(1, 3)])
            },
            FibChange::Update {
                prefix: n("/a/b"),
                next_hops: hops(&[(2, 5), (1, 3)])
            },
        ]
    );
    // Same route again: nothing changes.
    assert!(rib
        .register(&n("/a"), route(1, 0, 3, CI), 0)
        .unwrap()
        .is_empty());
}

#[test]
fn unregister_and_remove_face() {
    let mut rib = Rib::new();
    rib.register(&n("/"), route(1, 0, 10, CI), 0).unwrap();
    rib.register(&n("/a"), route(2, 0, 5, CI), 0).unwrap();
    rib.register(&n("/b"), route(2, 128, 5, CI), 0).unwrap();
    assert!(rib.unregister(&n("/a"), 2, RouteOrigin(128)).is_empty());
    assert_eq!(
        rib.unregister(&n("/a"), 2, RouteOrigin::APP),
        vec![FibChange::Remove { prefix: n("/a") }]
    );
    assert_eq!(
        rib.remove_face(1),
        vec![
            FibChange::Remove { prefix: n("/") },
            FibChange::Update {
                prefix: n("/b"),
                next_hops: hops(&[(2, 5)])
            },
        ]
    );
    assert_eq!(rib.len(), 1);
}

#[test]
fn same_face_and_origin_replaces_the_route() {
    let mut rib = Rib::new();
    rib.register(&n("/a"), route(1, 0, 10, CI), 0).unwrap();
    rib.register(&n("/a"), route(1, 0, 20, 0), 0).unwrap();
    assert_eq!(rib.routes_of(&n("/a")), &[route(1, 0, 20, 0)]);
}

#[test]
fn expiry_removes_routes_and_reports_them() {
    let mut rib = Rib::new();
    let mut r = route(1, 0, 10, CI);
    r.expires_at = Some(1000);
    rib.register(&n("/a"), r, 0).unwrap();
    rib.register(&n("/a"), route(2, 0, 10, CI), 0).unwrap();
    assert_eq!(rib.next_expiry(), Some(1000));
    assert_eq!(rib.list(400)[0].routes[0].expiration_period, Some(600));
    assert_eq!(rib.expire(999), Expired::default());
    let e = rib.expire(1000);
    assert_eq!(e.routes, vec![(n("/a"), r)]);
    assert_eq!(
        e.changes,
        vec![FibChange::Update {
            prefix: n("/a"),
            next_hops: hops(&[(2, 10)])
        }]
    );
    assert_eq!(rib.next_expiry(), None);
}

#[test]
fn an_already_expired_registration_removes_the_route() {
    let mut rib = Rib::new();
    rib.register(&n("/a"), route(1, 0, 10, CI), 0).unwrap();
    let mut r = route(1, 0, 10, CI);
    r.expires_at = Some(50);
    assert_eq!(
        rib.register(&n("/a"), r, 50).unwrap(),
        vec![FibChange::Remove { prefix: n("/a") }]
    );
}

#[test]
fn prefix_deeper_than_32_is_refused_with_414() {
    let mut rib = Rib::new();
    let deep: Name = (0..33).fold(Name::root(), |acc, _| acc.append_generic(b"x"));
    let err = rib.register(&deep, route(1, 0, 0, CI), 0).unwrap_err();
    assert_eq!(err.status_code(), 414);
    assert_eq!(err.to_string(), "Route prefix cannot exceed 32 components");
    assert!(rib
        .register(&deep.prefix(32), route(1, 0, 0, CI), 0)
        .is_ok());
}

#[test]
fn route_from_register_parameters() {
    let p = ControlParameters {
        face_id: Some(300),
        origin: Some(RouteOrigin::NLSR),
        cost: Some(9),
        flags: Some(CAP),
        expiration_period: Some(1500),
        ..Default::default()
    };
    assert_eq!(
        RibRoute::from_parameters(&p, 100),
        RibRoute {
            face_id: 300,
            origin: RouteOrigin::NLSR,
            cost: 9,
            flags: CAP,
            expires_at: Some(1600)
        }
    );
    let never = ControlParameters {
        expiration_period: Some(i64::MAX as u64),
        ..p
    };
    assert_eq!(RibRoute::from_parameters(&never, 100).expires_at, None);
}

mod prop {
    use super::*;
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Op {
        Register(usize, RibRoute),
        Unregister(usize, u64, u64),
        RemoveFace(u64),
        Expire(u64),
    }

    const NAMES: [&str; 7] = ["/", "/a", "/a/b", "/a/b/c", "/a/c", "/b", "/b/a"];

    fn op() -> impl Strategy<Value = Op> {
        let route = (
            1u64..5,
            0u64..3,
            0u64..20,
            0u64..4,
            proptest::option::of(1u64..50),
        )
            .prop_map(|(face_id, origin, cost, flags, exp)| RibRoute {
                face_id,
                origin: RouteOrigin(origin),
                cost,
                flags,
                expires_at: exp,
            });
        prop_oneof![
            4 => (0..NAMES.len(), route).prop_map(|(i, r)| Op::Register(i, r)),
            2 => (0..NAMES.len(), 1u64..5, 0u64..3).prop_map(|(i, f, o)| Op::Unregister(i, f, o)),
            1 => (1u64..5).prop_map(Op::RemoveFace),
            1 => (0u64..50).prop_map(Op::Expire),
        ]
    }

    /// An independent statement of NFD's rule: walk the ancestors from the nearest up; own
    /// nexthops first, then each ancestor's, each group by face.
    fn reference(rib: &Rib) -> BTreeMap<Name, Vec<NextHop>> {
        let mut out = BTreeMap::new();
        for (name, own) in rib.routes() {
            let mut best: BTreeMap<u64, u64> = BTreeMap::new();
            for r in own {
                let c = best.entry(r.face_id).or_insert(u64::MAX);
                *c = (*c).min(r.cost);
            }
            let mut ordered: Vec<(u64, u64)> = best.into_iter().collect();
            let mut blocked = own.iter().any(|r| r.flags & CAP != 0);
            let mut depth = name.len();
            while !blocked && depth > 0 {
                depth -= 1;
                let anc = rib.routes_of(&name.prefix(depth));
                let mut level: BTreeMap<u64, u64> = BTreeMap::new();
                for r in anc.iter().filter(|r| r.flags & CI != 0) {
                    let c = level.entry(r.face_id).or_insert(u64::MAX);
                    *c = (*c).min(r.cost);
                }
                for (f, c) in level {
                    if !ordered.iter().any(|&(g, _)| g == f) {
                        ordered.push((f, c));
                    }
                }
                blocked = anc.iter().any(|r| r.flags & CAP != 0);
            }
            out.insert(name.clone(), hops(&ordered));
        }
        out
    }

    proptest! {
        #[test]
        fn incremental_diffs_equal_full_recomputation(ops in proptest::collection::vec(op(), 1..60)) {
            let mut rib = Rib::new();
            let mut fib: BTreeMap<Name, Vec<NextHop>> = BTreeMap::new();
            let mut now = 0;
            for op in ops {
                let changes = match op {
                    Op::Register(i, r) => rib.register(&n(NAMES[i]), r, now).unwrap(),
                    Op::Unregister(i, f, o) => rib.unregister(&n(NAMES[i]), f, RouteOrigin(o)),
                    Op::RemoveFace(f) => rib.remove_face(f),
                    Op::Expire(t) => {
                        now = now.max(t);
                        rib.expire(now).changes
                    }
                };
                for c in changes {
                    match c {
                        FibChange::Update { prefix, next_hops } => {
                            prop_assert!(fib.get(&prefix) != Some(&next_hops), "no-op change");
                            fib.insert(prefix, next_hops);
                        }
                        FibChange::Remove { prefix } => {
                            prop_assert!(fib.remove(&prefix).is_some(), "removal of nothing");
                        }
                    }
                }
                prop_assert_eq!(&fib, &rib.compute_fib());
                prop_assert_eq!(&fib, &reference(&rib));
            }
        }
    }
}

#[test]
fn an_announcement_installs_a_prefixann_route_that_ends_with_its_validity() {
    let validity =
        kite_packet::signature::ValidityPeriod::new("20240101T000000", "20240101T000010");
    let a = PrefixAnnouncement {
        announced_name: n("/app/x"),
        expiration_period: 3_600_000,
        validity,
        data: kite_packet::Data::new(n("/app/x/32=PA/v=1/seg=0"), Vec::new()),
    };
    let start = 1_704_067_200_000; // 2024-01-01T00:00:00Z
    let r = RibRoute::from_announcement(&a, 300, 50, start);
    assert_eq!(
        (r.face_id, r.origin, r.cost, r.flags, r.expires_at),
        (300, RouteOrigin::PREFIXANN, 2048, CI, Some(10_050))
    );
}
