//! The management thread's side of readvertising ([`crate::readvertise`]): it feeds every
//! RIB change to each destination's state and hands the commands due to a client that sends
//! them (the daemon's readvertise client, an application on the unix socket like any other),
//! over a bounded channel, so that management itself never waits on the network.

use crossbeam_channel::{Sender, TrySendError};
use kite_packet::Name;

use super::Manager;
use crate::readvertise::{Policy, Readvertise, Verb};
use crate::rib::RibRoute;
use kite_mgmt_proto::nfd::RouteOrigin;
use kite_mgmt_proto::ControlParameters;

/// A command for the readvertise client to send: `/<command_prefix>/rib/<verb>/<params>`,
/// signed; it reports back with a [`ReadvertiseResult`] carrying `destination` and `id`.
#[derive(Debug, Clone)]
pub struct ReadvertiseRequest {
    /// Which destination (the order they were enabled in).
    pub destination: usize,
    /// The command's id within its destination.
    pub id: u64,
    /// `/localhost/nlsr` or `/localhop/nfd`.
    pub command_prefix: Name,
    /// register or unregister.
    pub verb: Verb,
    /// The ControlParameters to send.
    pub params: ControlParameters,
}

/// How a [`ReadvertiseRequest`] ended.
#[derive(Debug, Clone)]
pub struct ReadvertiseResult {
    /// As in the request.
    pub destination: usize,
    /// As in the request.
    pub id: u64,
    /// The request's prefix.
    pub prefix: Name,
    /// Answered with a success code (below 400, as ndn-cxx's controller counts success).
    pub ok: bool,
}

/// Where routes are readvertised: the command prefix, what the commands carry, and the state.
pub struct ReadvertiseDestination {
    /// `/localhost/nlsr` (the routing daemon) or `/localhop/nfd` (the gateway).
    pub command_prefix: Name,
    /// Which routes, as what prefix.
    pub policy: Policy,
    /// How often a registered prefix is registered again, in ms.
    pub refresh_ms: u64,
    /// The Cost (and Origin client) the commands carry; none: the ControlParameters carry
    /// the Name only, as NFD's commands to the routing daemon do (NLSR and ndn-dv read the
    /// name alone and apply their own cost).
    pub cost: Option<u64>,
}

pub(super) struct Destination {
    command_prefix: Name,
    cost: Option<u64>,
    state: Readvertise,
    /// The faces with a route for a prefix of the command prefix, at the last look.
    faces: Vec<u64>,
}

/// Requests waiting for the client at most; a command that finds the channel full fails
/// and is retried later, as any failure.
pub const REQUEST_QUEUE: usize = 256;

impl Manager {
    /// Readvertises to `destination`; the commands go to `requests`, whose results come back
    /// through [`Manager::readvertise_results`].
    pub fn enable_readvertise(
        &mut self,
        destination: ReadvertiseDestination,
        requests: Sender<ReadvertiseRequest>,
    ) {
        let mut state = Readvertise::new(destination.policy, destination.refresh_ms);
        let now = self.now_ms();
        for (prefix, routes) in self.rib.routes() {
            for r in routes {
                state.route_added(prefix, r, now);
            }
        }
        self.readvertise.push(Destination {
            command_prefix: destination.command_prefix,
            cost: destination.cost,
            state,
            faces: Vec::new(),
        });
        self.readvertise_requests = Some(requests);
        self.readvertise_sync(now);
    }

    /// Where the readvertise client reports how each command ended.
    pub fn readvertise_results(&self) -> Sender<ReadvertiseResult> {
        self.readvertise_results.0.clone()
    }

    pub(super) fn readvertise_added(&mut self, prefix: &Name, route: &RibRoute, now: u64) {
        for d in &mut self.readvertise {
            d.state.route_added(prefix, route, now);
        }
    }

    pub(super) fn readvertise_removed(
        &mut self,
        prefix: &Name,
        face: u64,
        origin: RouteOrigin,
        now: u64,
    ) {
        for d in &mut self.readvertise {
            d.state.route_removed(prefix, face, origin, now);
        }
    }

    pub(super) fn readvertise_finished(&mut self, r: ReadvertiseResult) {
        let now = self.now_ms();
        if let Some(d) = self.readvertise.get_mut(r.destination) {
            d.state.finished(r.id, &r.prefix, r.ok, now);
        }
        self.readvertise_sync(now);
    }

    /// After a RIB change or a result: updates each destination's reachability (a route for
    /// a prefix of its command prefix; a route through a new face counts as the destination
    /// coming back) and hands over the commands due.
    pub(super) fn readvertise_sync(&mut self, now: u64) {
        let Some(requests) = self.readvertise_requests.clone() else {
            return;
        };
        for (i, d) in self.readvertise.iter_mut().enumerate() {
            let mut faces: Vec<u64> = (0..=d.command_prefix.len())
                .flat_map(|k| self.rib.routes_of(&d.command_prefix.prefix(k)))
                .map(|r| r.face_id)
                .collect();
            faces.sort_unstable();
            faces.dedup();
            // A face that was not there is a new daemon (or gateway), which knows nothing
            // yet: tell it everything, as when the destination first became reachable.
            if faces.iter().any(|f| !d.faces.contains(f)) {
                d.state.set_available(false, now);
            }
            d.state.set_available(!faces.is_empty(), now);
            d.faces = faces;
            for c in d.state.due(now) {
                let mut params = ControlParameters {
                    name: Some(c.prefix.clone()),
                    ..ControlParameters::default()
                };
                // As NFD's: Name, Cost and Origin client to the gateway (the Cost is left
                // out of rib/unregister, whose format has none), the Name alone to the
                // routing daemon; no Flags (the receiver applies ChildInherit by default).
                if let Some(cost) = d.cost {
                    params.origin = Some(RouteOrigin::CLIENT);
                    if c.verb == Verb::Register {
                        params.cost = Some(cost);
                    }
                }
                let req = ReadvertiseRequest {
                    destination: i,
                    id: c.id,
                    command_prefix: d.command_prefix.clone(),
                    verb: c.verb,
                    params,
                };
                match requests.try_send(req) {
                    Ok(()) => {}
                    Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => {
                        d.state.finished(c.id, &c.prefix, false, now);
                    }
                }
            }
        }
    }

    /// The earliest time a readvertise command is due (for the management thread's timer).
    pub(super) fn readvertise_next_due(&self) -> Option<u64> {
        self.readvertise
            .iter()
            .filter_map(|d| d.state.next_due())
            .min()
    }
}
