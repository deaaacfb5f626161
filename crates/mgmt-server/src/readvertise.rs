//! Readvertising RIB routes to another RIB, as NFD's `rib/readvertise` does: routes that a
//! policy selects are registered, as signed `rib/register` commands, with a routing daemon on
//! this host (`/localhost/nlsr`: NLSR or NDNd's ndn-dv) or with the gateway this host connects
//! to (`/localhop/nfd`, NFD's `auto_prefix_propagate`).
//!
//! [`Readvertise`] is the state only, with time passed in: the management thread tells it of
//! every route added or removed and of whether the destination is reachable, asks it for the
//! commands due ([`Readvertise::due`]) and tells it how each ended ([`Readvertise::finished`]);
//! something else (the daemon's readvertise client) sends them. As in NFD:
//! - one readvertised prefix serves every route that maps to it; it is registered when its
//!   first route comes and unregistered when its last goes;
//! - the destination is reachable while the RIB has a route for a prefix of its command
//!   prefix (the routing daemon registers `/localhost/nlsr`; a gateway's face has a route for
//!   `/localhop/nfd`); when it becomes reachable, every readvertised prefix is registered
//!   again; while it is not, nothing is sent and withdrawn prefixes are forgotten;
//! - a registered prefix is registered again every refresh interval (one hour for the routing
//!   daemon), a failed command is retried after a delay that starts at 50 s and doubles up
//!   to an hour.
//!
//! Bounds: one entry per readvertised prefix and one per route that maps to it (so no more
//! than the RIB's routes); at most [`MAX_IN_FLIGHT`] commands are out at once, the others
//! wait their turn.

use std::collections::{BTreeMap, HashMap};

use kite_packet::Name;

use crate::rib::RibRoute;
use kite_mgmt_proto::nfd::RouteOrigin;

/// The first retry delay after a failure (NFD's RETRY_DELAY_MIN); it doubles after each.
pub const RETRY_DELAY_MIN_MS: u64 = 50_000;
/// The longest retry delay (NFD's RETRY_DELAY_MAX).
pub const RETRY_DELAY_MAX_MS: u64 = 3_600_000;
/// How often a prefix readvertised to the routing daemon is registered again (NFD's
/// ClientToNlsrReadvertisePolicy).
pub const NLSR_REFRESH_MS: u64 = 3_600_000;
/// How often a prefix propagated to the gateway is registered again by default (NFD's
/// HostToGatewayReadvertisePolicy `refresh_interval`).
pub const GATEWAY_REFRESH_MS: u64 = 25_000;
/// Cost of a prefix propagated to the gateway by default (NFD's PROPAGATE_DEFAULT_COST).
pub const GATEWAY_COST: u64 = 15;
/// Commands out at once at most; more wait until one finishes.
pub const MAX_IN_FLIGHT: usize = 64;

/// Which routes are readvertised, and as what prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Policy {
    /// Routes of origin `client` (65), as they are (NFD's ClientToNlsrReadvertisePolicy).
    ClientToRouter,
    /// Routes under one of these prefixes, as the shortest of them that covers the route;
    /// never `/localhost/…` nor `/localhop/nfd` (NFD's HostToGatewayReadvertisePolicy, whose
    /// prefixes are the host's identities).
    HostToGateway(Vec<Name>),
}

impl Policy {
    /// The prefix `route` of `prefix` is readvertised as, if any.
    pub fn readvertised_as(&self, prefix: &Name, route: &RibRoute) -> Option<Name> {
        match self {
            Policy::ClientToRouter => (route.origin == RouteOrigin::CLIENT).then(|| prefix.clone()),
            Policy::HostToGateway(identities) => {
                let localhost: Name = "/localhost".parse().expect("valid name");
                let gateway: Name = "/localhop/nfd".parse().expect("valid name");
                if localhost.is_prefix_of(prefix) || *prefix == gateway {
                    return None;
                }
                identities
                    .iter()
                    .filter(|id| id.is_prefix_of(prefix))
                    .min_by_key(|id| id.len())
                    .cloned()
            }
        }
    }
}

/// Register or unregister.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    /// `rib/register`.
    Register,
    /// `rib/unregister`.
    Unregister,
}

impl Verb {
    /// The command's verb component.
    pub fn as_str(self) -> &'static str {
        match self {
            Verb::Register => "register",
            Verb::Unregister => "unregister",
        }
    }
}

/// A command to send: `verb` for `prefix`; its outcome is reported with `id`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    /// Reported back to [`Readvertise::finished`].
    pub id: u64,
    /// Register or unregister.
    pub verb: Verb,
    /// The readvertised prefix.
    pub prefix: Name,
}

/// What a readvertised prefix waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Next {
    /// A command at this time (ms).
    At(u64),
    /// The answer to the command with this id, which was this verb.
    InFlight(u64, Verb),
    /// Nothing (the destination is unreachable).
    Idle,
}

#[derive(Debug)]
struct Readvertised {
    /// Routes that map to it; unregistered when it falls to zero.
    routes: usize,
    next: Next,
    retry_delay_ms: u64,
}

/// The readvertised prefixes and the routes behind them (see the module documentation).
#[derive(Debug)]
pub struct Readvertise {
    policy: Policy,
    refresh_ms: u64,
    available: bool,
    prefixes: BTreeMap<Name, Readvertised>,
    /// (prefix, face, origin) of each route readvertised, and the prefix it maps to.
    routes: HashMap<(Name, u64, RouteOrigin), Name>,
    in_flight: usize,
    next_id: u64,
}

impl Readvertise {
    /// Readvertises what `policy` selects, refreshing every `refresh_ms`.
    pub fn new(policy: Policy, refresh_ms: u64) -> Self {
        Readvertise {
            policy,
            refresh_ms,
            available: false,
            prefixes: BTreeMap::new(),
            routes: HashMap::new(),
            in_flight: 0,
            next_id: 0,
        }
    }

    /// Whether the destination is reachable now.
    pub fn is_available(&self) -> bool {
        self.available
    }

    /// The prefixes readvertised (or being withdrawn), in name order.
    pub fn prefixes(&self) -> impl Iterator<Item = &Name> {
        self.prefixes.keys()
    }

    /// A route was added to `prefix` (a route replaced in place is added again: no effect).
    pub fn route_added(&mut self, prefix: &Name, route: &RibRoute, now_ms: u64) {
        let Some(as_prefix) = self.policy.readvertised_as(prefix, route) else {
            return;
        };
        let key = (prefix.clone(), route.face_id, route.origin);
        if self.routes.contains_key(&key) {
            return;
        }
        self.routes.insert(key, as_prefix.clone());
        let available = self.available;
        let rr = self.prefixes.entry(as_prefix).or_insert(Readvertised {
            routes: 0,
            next: Next::Idle,
            retry_delay_ms: RETRY_DELAY_MIN_MS,
        });
        rr.routes += 1;
        if rr.routes == 1 {
            rr.retry_delay_ms = RETRY_DELAY_MIN_MS;
            if available && !matches!(rr.next, Next::InFlight(..)) {
                rr.next = Next::At(now_ms);
            }
        }
    }

    /// A route of `prefix` through `face_id` with `origin` was removed.
    pub fn route_removed(&mut self, prefix: &Name, face_id: u64, origin: RouteOrigin, now_ms: u64) {
        let Some(as_prefix) = self.routes.remove(&(prefix.clone(), face_id, origin)) else {
            return;
        };
        let available = self.available;
        let Some(rr) = self.prefixes.get_mut(&as_prefix) else {
            return;
        };
        rr.routes -= 1;
        if rr.routes > 0 {
            return;
        }
        rr.retry_delay_ms = RETRY_DELAY_MIN_MS;
        match rr.next {
            // The answer decides: a register's success sends the unregister next.
            Next::InFlight(..) => {}
            _ if available => rr.next = Next::At(now_ms),
            _ => {
                self.prefixes.remove(&as_prefix);
            }
        }
    }

    /// Whether the destination is reachable (the RIB has a route for a prefix of its command
    /// prefix); call it after every RIB change, it acts only on a change.
    pub fn set_available(&mut self, available: bool, now_ms: u64) {
        if available == self.available {
            return;
        }
        self.available = available;
        if available {
            // Everything goes to the new destination, at once; a command still out went to
            // the one before, and its answer (if any comes) is ignored.
            for rr in self.prefixes.values_mut() {
                rr.retry_delay_ms = RETRY_DELAY_MIN_MS;
                rr.next = Next::At(now_ms);
            }
            self.in_flight = 0;
        } else {
            // Stop retrying and refreshing; a withdrawal is taken as done.
            self.prefixes.retain(|_, rr| {
                if !matches!(rr.next, Next::InFlight(..)) {
                    rr.next = Next::Idle;
                }
                rr.routes > 0 || matches!(rr.next, Next::InFlight(..))
            });
        }
    }

    /// The commands due at `now_ms`, at most [`MAX_IN_FLIGHT`] out at once; each is in flight
    /// until [`Readvertise::finished`] reports it.
    pub fn due(&mut self, now_ms: u64) -> Vec<Command> {
        let mut out = Vec::new();
        if !self.available {
            return out;
        }
        for (prefix, rr) in self.prefixes.iter_mut() {
            if self.in_flight >= MAX_IN_FLIGHT {
                break;
            }
            let Next::At(t) = rr.next else {
                continue;
            };
            if t > now_ms {
                continue;
            }
            let id = self.next_id;
            self.next_id += 1;
            self.in_flight += 1;
            let verb = if rr.routes > 0 {
                Verb::Register
            } else {
                Verb::Unregister
            };
            rr.next = Next::InFlight(id, verb);
            out.push(Command {
                id,
                verb,
                prefix: prefix.clone(),
            });
        }
        out
    }

    /// The command `id` for `prefix` succeeded (`ok`) or failed (an error status, a Nack, no
    /// answer in time, or it could not be sent).
    pub fn finished(&mut self, id: u64, prefix: &Name, ok: bool, now_ms: u64) {
        let available = self.available;
        let refresh_ms = self.refresh_ms;
        let Some(rr) = self.prefixes.get_mut(prefix) else {
            return;
        };
        let Next::InFlight(sent, verb) = rr.next else {
            return;
        };
        if sent != id {
            return;
        }
        self.in_flight -= 1;
        if !available {
            rr.next = Next::Idle;
            if rr.routes == 0 {
                self.prefixes.remove(prefix);
            }
            return;
        }
        // The prefix's routes may have come or gone while the command was out.
        let wanted = if rr.routes > 0 {
            Verb::Register
        } else {
            Verb::Unregister
        };
        if !ok {
            rr.retry_delay_ms = (rr.retry_delay_ms * 2).min(RETRY_DELAY_MAX_MS);
            rr.next = Next::At(now_ms.saturating_add(rr.retry_delay_ms));
            return;
        }
        rr.retry_delay_ms = RETRY_DELAY_MIN_MS;
        match (verb, wanted) {
            (Verb::Register, Verb::Register) => {
                rr.next = Next::At(now_ms.saturating_add(refresh_ms));
            }
            (Verb::Unregister, Verb::Unregister) => {
                self.prefixes.remove(prefix);
            }
            // Done, but no longer what is wanted: do the other at once.
            _ => rr.next = Next::At(now_ms),
        }
    }

    /// When the next command is due, if any is scheduled (for the management thread's timer).
    pub fn next_due(&self) -> Option<u64> {
        if !self.available || self.in_flight >= MAX_IN_FLIGHT {
            return None;
        }
        self.prefixes
            .values()
            .filter_map(|rr| match rr.next {
                Next::At(t) => Some(t),
                _ => None,
            })
            .min()
    }
}

#[cfg(test)]
mod tests;
