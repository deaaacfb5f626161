//! RIB → FIB flattening, NFD's rules (`daemon/rib/rib.cpp: getAncestorRoutes`,
//! `fib-updater.cpp`):
//! - a prefix's own routes give one nexthop per face, at the lowest cost among them;
//! - unless one of its own routes has CAPTURE, it inherits the CHILD_INHERIT routes of its
//!   ancestors, nearest ancestor first, for faces it has no nexthop for yet; the walk stops
//!   after an ancestor that has a CAPTURE route;
//! - its own nexthops come first, then the nearest ancestor's, and so on (each group by
//!   face), as NFD's FIB updater adds a new entry's own route before the inherited ones. The
//!   FIB keeps that order among equal costs, and a strategy sends a new Interest to the first
//!   eligible nexthop of the lowest cost: a producer registering `/p/x` under an application
//!   that registered `/p` gets `/p/x` Interests, not the application that cannot answer them.
//!
//! Where NFD keeps the first-inserted of several CHILD_INHERIT routes of one face in the same
//! ancestor, Kite keeps the cheapest, so the result does not depend on insertion order.

use std::collections::BTreeMap;

use kite_packet::Name;

use super::{NextHop, RibRoute};

/// The routes of every RIB prefix.
pub(crate) type Entries = BTreeMap<Name, Vec<RibRoute>>;

/// The FIB nexthops of `name`: its own, then each ancestor's, nearest first, each group
/// sorted by face; empty when `name` has no RIB entry.
pub(crate) fn flatten(entries: &Entries, name: &Name) -> Vec<NextHop> {
    let Some(own) = entries.get(name) else {
        return Vec::new();
    };
    let mut hops: Vec<NextHop> = Vec::new();
    add_cheapest(&mut hops, own.iter(), |_| true);
    hops.sort_unstable();
    if !own.iter().any(RibRoute::is_capture) {
        for depth in (0..name.len()).rev() {
            let Some(routes) = entries.get(&name.prefix(depth)) else {
                continue;
            };
            let inherited = routes.iter().filter(|r| r.is_child_inherit());
            let before = hops.len();
            let open = |face| !hops[..before].iter().any(|h: &NextHop| h.face_id == face);
            let mut level = Vec::new();
            add_cheapest(&mut level, inherited, open);
            level.sort_unstable();
            hops.extend(level);
            if routes.iter().any(RibRoute::is_capture) {
                break;
            }
        }
    }
    hops
}

/// Adds one nexthop per face of `routes` allowed by `open`, at the lowest cost.
fn add_cheapest<'a>(
    hops: &mut Vec<NextHop>,
    routes: impl Iterator<Item = &'a RibRoute>,
    open: impl Fn(u64) -> bool,
) {
    for r in routes {
        if !open(r.face_id) {
            continue;
        }
        match hops.iter_mut().find(|h| h.face_id == r.face_id) {
            Some(h) => h.cost = h.cost.min(r.cost),
            None => hops.push(NextHop {
                face_id: r.face_id,
                cost: r.cost,
            }),
        }
    }
}

/// The whole FIB the RIB implies.
pub(crate) fn compute_fib(entries: &Entries) -> BTreeMap<Name, Vec<NextHop>> {
    entries
        .keys()
        .map(|n| (n.clone(), flatten(entries, n)))
        .collect()
}
