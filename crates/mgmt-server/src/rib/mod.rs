//! The RIB: routes keyed by (prefix, face, origin), and the FIB they imply.
//!
//! Every change (register, unregister, face removal, expiry) recomputes the FIB entries of
//! the changed prefix and its descendants (the only ones inheritance can reach) and returns
//! the difference as [`FibChange`]s, sorted by prefix, for the daemon to apply to the
//! forwarding FIB. Invariant: applying every returned change to an empty FIB yields
//! [`Rib::fib`], which equals a full recomputation ([`Rib::compute_fib`]). A FIB entry exists
//! exactly for each prefix with at least one route.

mod flatten;

use std::collections::{BTreeMap, BTreeSet};

use kite_packet::Name;
use thiserror::Error;

use kite_mgmt_proto::announce::{PrefixAnnouncement, PREFIX_ANNOUNCEMENT_ROUTE_COST};
use kite_mgmt_proto::control_parameters::ControlParameters;
use kite_mgmt_proto::datasets::{RibEntry, Route};
use kite_mgmt_proto::nfd::{route_flags, status, RouteOrigin, MAX_NAME_DEPTH};

pub use kite_mgmt_proto::datasets::NextHopRecord as NextHop;

/// ExpirationPeriod values at or above this mean "never" (ndn-cxx's `milliseconds::max()`).
const NEVER_MS: u64 = i64::MAX as u64;

/// One route of a prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RibRoute {
    /// Nexthop face.
    pub face_id: u64,
    /// Who announced it; with the face, the route's identity within its prefix.
    pub origin: RouteOrigin,
    /// Cost.
    pub cost: u64,
    /// Route flags (CHILD_INHERIT, CAPTURE).
    pub flags: u64,
    /// When it expires (ms on the RIB's clock); `None` for never.
    pub expires_at: Option<u64>,
}

impl RibRoute {
    /// The route a prefix announcement installs for `face_id`, expiring
    /// `lifetime_ms(now_unix_ms)` after `now_ms` on the RIB's clock.
    pub fn from_announcement(
        a: &PrefixAnnouncement,
        face_id: u64,
        now_ms: u64,
        now_unix_ms: u64,
    ) -> Self {
        RibRoute {
            face_id,
            origin: RouteOrigin::PREFIXANN,
            cost: PREFIX_ANNOUNCEMENT_ROUTE_COST,
            flags: route_flags::CHILD_INHERIT,
            expires_at: Some(now_ms.saturating_add(a.lifetime_ms(now_unix_ms))),
        }
    }

    /// The route a validated `rib/register` asks for (defaults already filled, FaceId already
    /// resolved from IncomingFaceId), registered at `now_ms`.
    pub fn from_parameters(p: &ControlParameters, now_ms: u64) -> Self {
        RibRoute {
            face_id: p.face_id.unwrap_or(0),
            origin: p.origin.unwrap_or(RouteOrigin::APP),
            cost: p.cost.unwrap_or(0),
            flags: p.flags.unwrap_or(route_flags::CHILD_INHERIT),
            expires_at: p
                .expiration_period
                .filter(|&ms| ms < NEVER_MS)
                .map(|ms| now_ms.saturating_add(ms)),
        }
    }

    /// Whether longer prefixes inherit it.
    pub fn is_child_inherit(&self) -> bool {
        self.flags & route_flags::CHILD_INHERIT != 0
    }

    /// Whether it stops inheritance from shorter prefixes.
    pub fn is_capture(&self) -> bool {
        self.flags & route_flags::CAPTURE != 0
    }
}

/// A change the forwarding FIB must apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FibChange {
    /// The prefix's nexthops are now exactly these (the entry is created if absent).
    Update {
        /// The prefix.
        prefix: Name,
        /// Its complete nexthop set, sorted by face.
        next_hops: Vec<NextHop>,
    },
    /// The prefix has no FIB entry any more.
    Remove {
        /// The prefix.
        prefix: Name,
    },
}

/// Why a route is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum RibError {
    /// The prefix is deeper than [`MAX_NAME_DEPTH`] components (NFD answers 414).
    #[error("Route prefix cannot exceed {MAX_NAME_DEPTH} components")]
    PrefixTooLong,
}

impl RibError {
    /// The status code NFD answers with.
    pub fn status_code(self) -> u64 {
        match self {
            RibError::PrefixTooLong => status::PREFIX_TOO_LONG,
        }
    }
}

/// What [`Rib::expire`] removed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Expired {
    /// The expired routes with their prefixes.
    pub routes: Vec<(Name, RibRoute)>,
    /// The FIB changes they cause.
    pub changes: Vec<FibChange>,
}

/// The routing information base.
#[derive(Debug, Default)]
pub struct Rib {
    entries: flatten::Entries,
    fib: BTreeMap<Name, Vec<NextHop>>,
}

impl Rib {
    /// An empty RIB.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `route` to `prefix`, replacing the route of the same face and origin (cost, flags
    /// and expiry all replaced). A route already expired at `now_ms` removes that route
    /// instead, as NFD does.
    pub fn register(
        &mut self,
        prefix: &Name,
        route: RibRoute,
        now_ms: u64,
    ) -> Result<Vec<FibChange>, RibError> {
        if prefix.len() > MAX_NAME_DEPTH {
            return Err(RibError::PrefixTooLong);
        }
        if route.expires_at.is_some_and(|t| t <= now_ms) {
            return Ok(self.unregister(prefix, route.face_id, route.origin));
        }
        let routes = self.entries.entry(prefix.clone()).or_default();
        match routes
            .iter_mut()
            .find(|r| r.face_id == route.face_id && r.origin == route.origin)
        {
            Some(r) => *r = route,
            None => routes.push(route),
        }
        Ok(self.refresh([prefix.clone()]))
    }

    /// Removes the route of `face_id` and `origin` from `prefix` (nothing changes when absent).
    pub fn unregister(
        &mut self,
        prefix: &Name,
        face_id: u64,
        origin: RouteOrigin,
    ) -> Vec<FibChange> {
        let removed = self.remove_where(prefix, |r| r.face_id == face_id && r.origin == origin);
        if removed.is_empty() {
            return Vec::new();
        }
        self.refresh([prefix.clone()])
    }

    /// Removes every route through `face_id` (the face was destroyed).
    pub fn remove_face(&mut self, face_id: u64) -> Vec<FibChange> {
        let prefixes: Vec<Name> = self
            .entries
            .iter()
            .filter(|(_, rs)| rs.iter().any(|r| r.face_id == face_id))
            .map(|(n, _)| n.clone())
            .collect();
        for p in &prefixes {
            self.remove_where(p, |r| r.face_id == face_id);
        }
        self.refresh(prefixes)
    }

    /// Removes the routes whose expiry is at or before `now_ms`.
    pub fn expire(&mut self, now_ms: u64) -> Expired {
        let prefixes: Vec<Name> = self
            .entries
            .iter()
            .filter(|(_, rs)| rs.iter().any(|r| is_expired(r, now_ms)))
            .map(|(n, _)| n.clone())
            .collect();
        let mut routes = Vec::new();
        for p in &prefixes {
            for r in self.remove_where(p, |r| is_expired(r, now_ms)) {
                routes.push((p.clone(), r));
            }
        }
        Expired {
            routes,
            changes: self.refresh(prefixes),
        }
    }

    /// The earliest route expiry, for the daemon's timer.
    pub fn next_expiry(&self) -> Option<u64> {
        self.entries
            .values()
            .flatten()
            .filter_map(|r| r.expires_at)
            .min()
    }

    /// Every prefix with its routes, in name order.
    pub fn routes(&self) -> impl Iterator<Item = (&Name, &[RibRoute])> {
        self.entries.iter().map(|(n, rs)| (n, rs.as_slice()))
    }

    /// The routes of `prefix`.
    pub fn routes_of(&self, prefix: &Name) -> &[RibRoute] {
        self.entries.get(prefix).map_or(&[], Vec::as_slice)
    }

    /// Number of prefixes with routes.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the RIB has no route.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The FIB the RIB implies, as maintained incrementally.
    pub fn fib(&self) -> &BTreeMap<Name, Vec<NextHop>> {
        &self.fib
    }

    /// The FIB recomputed from scratch (for checks and for a full resynchronisation).
    pub fn compute_fib(&self) -> BTreeMap<Name, Vec<NextHop>> {
        flatten::compute_fib(&self.entries)
    }

    /// The `rib/list` dataset at `now_ms`: ExpirationPeriod is the time left.
    pub fn list(&self, now_ms: u64) -> Vec<RibEntry> {
        self.entries
            .iter()
            .map(|(name, rs)| RibEntry {
                name: name.clone(),
                routes: rs
                    .iter()
                    .map(|r| Route {
                        face_id: r.face_id,
                        origin: r.origin,
                        cost: r.cost,
                        flags: r.flags,
                        expiration_period: r.expires_at.map(|t| t.saturating_sub(now_ms)),
                    })
                    .collect(),
            })
            .collect()
    }

    /// Removes the routes of `prefix` that match, dropping the entry when it empties.
    fn remove_where(&mut self, prefix: &Name, pred: impl Fn(&RibRoute) -> bool) -> Vec<RibRoute> {
        let Some(routes) = self.entries.get_mut(prefix) else {
            return Vec::new();
        };
        let (gone, kept): (Vec<RibRoute>, Vec<RibRoute>) = routes.iter().partition(|r| pred(r));
        if kept.is_empty() {
            self.entries.remove(prefix);
        } else {
            *routes = kept;
        }
        gone
    }

    /// Recomputes the FIB entries of `roots` and their descendants; returns what changed.
    fn refresh(&mut self, roots: impl IntoIterator<Item = Name>) -> Vec<FibChange> {
        let mut names = BTreeSet::new();
        for root in roots {
            let under = |n: &&Name| root.is_prefix_of(n);
            names.extend(
                self.entries
                    .range(root.clone()..)
                    .map(|(n, _)| n)
                    .take_while(under)
                    .cloned(),
            );
            names.extend(
                self.fib
                    .range(root.clone()..)
                    .map(|(n, _)| n)
                    .take_while(under)
                    .cloned(),
            );
        }
        let mut changes = Vec::new();
        for name in names {
            let hops = flatten::flatten(&self.entries, &name);
            if hops.is_empty() {
                if self.fib.remove(&name).is_some() {
                    changes.push(FibChange::Remove { prefix: name });
                }
            } else if self.fib.get(&name) != Some(&hops) {
                self.fib.insert(name.clone(), hops.clone());
                changes.push(FibChange::Update {
                    prefix: name,
                    next_hops: hops,
                });
            }
        }
        changes
    }
}

fn is_expired(r: &RibRoute, now_ms: u64) -> bool {
    r.expires_at.is_some_and(|t| t <= now_ms)
}

#[cfg(test)]
mod tests;
