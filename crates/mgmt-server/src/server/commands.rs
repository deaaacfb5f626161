//! Executing validated commands: faces, fib, rib, strategy-choice and cs, each answered with
//! NFD's status code, text and resulting ControlParameters.

use std::time::Duration;

use kite_face::FaceUri;
use kite_fw::face::FaceId;
use kite_link::Persistency;
use kite_runtime::{FaceCommandError, FaceOptions, FaceStatus};

use super::{log, status, unix_ms, Manager};
use crate::rib::{FibChange, RibRoute};
use kite_mgmt_proto::command::{CommandSignature, TopPrefix, Verb};
use kite_mgmt_proto::nfd::{cs_flag_bit, face_flag_bit, status as code};
use kite_mgmt_proto::{Command, ControlParameters, ControlResponse};

/// Most routes a neighbour may hold through its face by `/localhop/nfd/rib/register`: what
/// one hostile neighbour can add to the RIB (and FIB).
pub const MAX_LOCALHOP_ROUTES: usize = 256;

/// Most entries one `cs/erase` removes (NFD's ERASE_LIMIT).
const ERASE_LIMIT: usize = 256;

pub(super) fn response(c: u64, text: &str) -> ControlResponse {
    ControlResponse::new(c, text)
}

/// The ControlParameters NFD answers face commands with.
fn face_parameters(s: &FaceStatus) -> ControlParameters {
    let mut p = ControlParameters {
        face_id: Some(s.id.0),
        uri: Some(s.remote.to_string()),
        local_uri: Some(s.local.to_string()),
        face_persistency: Some(s.persistency.into()),
        mtu: s.mtu.map(|m| m as u64),
        base_congestion_marking_interval: Some(s.marking.base_interval.as_nanos() as u64),
        default_congestion_threshold: Some(s.marking.threshold as u64),
        ..ControlParameters::default()
    };
    p.set_flag_bit(face_flag_bit::LOCAL_FIELDS_ENABLED, s.local_fields);
    p.set_flag_bit(face_flag_bit::LP_RELIABILITY_ENABLED, s.lp_reliability);
    p.set_flag_bit(face_flag_bit::CONGESTION_MARKING_ENABLED, s.marking.enabled);
    p
}

/// The face properties a faces/create or faces/update command sets.
fn face_options(p: &ControlParameters) -> FaceOptions {
    FaceOptions {
        local_fields: p.flag_bit(face_flag_bit::LOCAL_FIELDS_ENABLED),
        mtu: p.mtu.map(|m| m as usize),
        congestion_marking: p.flag_bit(face_flag_bit::CONGESTION_MARKING_ENABLED),
        base_marking_interval: p.base_congestion_marking_interval.map(Duration::from_nanos),
        congestion_threshold: p.default_congestion_threshold.map(|b| b as usize),
        lp_reliability: p.flag_bit(face_flag_bit::LP_RELIABILITY_ENABLED),
    }
}

/// A face `faces/create` asks for, validated: the I/O thread makes it, at once or once its
/// connection completes.
pub(super) struct FaceRequest {
    pub remote: FaceUri,
    pub local: Option<FaceUri>,
    pub persistency: Persistency,
    pub options: FaceOptions,
}

/// What a command comes to: its answer, or a face to create first (answered when the I/O
/// thread reports back, so that management never waits on the network).
pub(super) enum Outcome {
    Done(ControlResponse),
    CreateFace(FaceRequest),
}

impl From<ControlResponse> for Outcome {
    fn from(r: ControlResponse) -> Self {
        Outcome::Done(r)
    }
}

impl Manager {
    /// Validates and executes `cmd`, authorized, which arrived on face `ingress`.
    pub(super) fn execute(&mut self, mut cmd: Command, ingress: FaceId, now: u64) -> Outcome {
        let face = ingress.0;
        if let Err(rejection) = cmd.validate() {
            let why = format!("invalid: {}", rejection.detail);
            log::refused(&mut self.log, &cmd, face, rejection.code, &why);
            return rejection.response().into();
        }
        cmd.resolve_self_face(ingress.0);
        if cmd.top == TopPrefix::Localhop {
            // A neighbour registers routes toward itself only, and a bounded number of them.
            if cmd.params.face_id != Some(ingress.0) {
                return response(code::FORBIDDEN, "authorization rejected").into();
            }
            if cmd.verb == Verb::RibRegister && self.localhop_routes_full(ingress.0, &cmd.params) {
                return response(code::FORBIDDEN, "too many routes from this face").into();
            }
        }
        self.perform(cmd, ingress, now)
    }

    /// Whether face `face` already has [`MAX_LOCALHOP_ROUTES`] routes and this registration
    /// would add one more (refreshing one it has is always allowed).
    fn localhop_routes_full(&self, face: u64, p: &ControlParameters) -> bool {
        let origin = p.origin.unwrap_or_default();
        let mut n = 0;
        for (prefix, routes) in self.rib.routes() {
            for r in routes.iter().filter(|r| r.face_id == face) {
                if Some(prefix) == p.name.as_ref() && r.origin == origin {
                    return false;
                }
                n += 1;
            }
        }
        n >= MAX_LOCALHOP_ROUTES
    }

    /// Executes a command the operator's configuration file asks for at start (faces, routes,
    /// strategy choices), validated and carried out exactly as the same command Interest
    /// would be. It skips signature and replay checks: whoever wrote the file runs the daemon.
    pub fn execute_trusted(&mut self, verb: Verb, params: ControlParameters) -> ControlResponse {
        let mut cmd = Command {
            top: TopPrefix::Localhost,
            verb,
            params,
            announcement: None,
            signature: CommandSignature::Unsigned,
        };
        if let Err(rejection) = cmd.validate() {
            return rejection.response();
        }
        self.take_face_events();
        let now = self.now_ms();
        let params = log::parameters(&cmd.params);
        match self.perform(cmd, FaceId::INTERNAL, now) {
            Outcome::Done(r) => r,
            Outcome::CreateFace(f) => {
                let r = self
                    .runtime
                    .create_face(f.remote, f.local, f.persistency, f.options);
                let r = self.face_created(r);
                log::executed(
                    &mut self.log,
                    "faces/create",
                    &params,
                    FaceId::INTERNAL.0,
                    &r,
                );
                r
            }
        }
    }

    /// Creates a face the operator's configuration file asks for, from `faces/create`'s
    /// parameters, validated as that command is, without waiting on the network: a TCP face
    /// answers at once and connects in the background
    /// ([`kite_runtime::RuntimeHandle::create_face_in_background`]).
    pub fn create_configured_face(&mut self, params: ControlParameters) -> ControlResponse {
        let mut cmd = Command {
            top: TopPrefix::Localhost,
            verb: Verb::FacesCreate,
            params,
            announcement: None,
            signature: CommandSignature::Unsigned,
        };
        if let Err(rejection) = cmd.validate() {
            return rejection.response();
        }
        match self.faces_create(cmd.params.clone()) {
            Outcome::Done(r) => r,
            Outcome::CreateFace(f) => {
                let r = self.runtime.create_face_in_background(
                    f.remote,
                    f.local,
                    f.persistency,
                    f.options,
                );
                self.face_created(r)
            }
        }
    }

    /// Carries out a validated command and logs what it came to (`faces/create` is logged
    /// once the I/O thread answers).
    fn perform(&mut self, cmd: Command, ingress: FaceId, now: u64) -> Outcome {
        let command = format!("{}/{}", cmd.verb.module(), cmd.verb.verb());
        let params = log::parameters(&cmd.params);
        let outcome = self.carry_out(cmd, ingress, now);
        if let Outcome::Done(resp) = &outcome {
            log::executed(&mut self.log, &command, &params, ingress.0, resp);
        }
        outcome
    }

    fn carry_out(&mut self, cmd: Command, ingress: FaceId, now: u64) -> Outcome {
        let p = cmd.params.clone();
        Outcome::Done(match cmd.verb {
            Verb::FacesCreate => return self.faces_create(p),
            Verb::FacesUpdate => self.faces_update(p),
            Verb::FacesDestroy => self.faces_destroy(p),
            Verb::FibAddNextHop => self.fib_add(p),
            Verb::FibRemoveNextHop => self.fib_remove(p),
            Verb::RibRegister => {
                let route = RibRoute::from_parameters(&p, now);
                self.rib_register(p, route, now)
            }
            Verb::RibUnregister => self.rib_unregister(p, now),
            Verb::RibAnnounce => match cmd.announcement {
                Some(a) => {
                    let route = RibRoute::from_announcement(&a, ingress.0, now, unix_ms());
                    let p = ControlParameters {
                        name: Some(a.announced_name.clone()),
                        face_id: Some(ingress.0),
                        origin: Some(route.origin),
                        cost: Some(route.cost),
                        flags: Some(route.flags),
                        expiration_period: route.expires_at.map(|t| t.saturating_sub(now)),
                        ..ControlParameters::default()
                    };
                    self.rib_register(p, route, now)
                }
                None => response(code::BAD_REQUEST, "failed in validating parameters"),
            },
            Verb::StrategyChoiceSet => self.strategy_set(p),
            Verb::StrategyChoiceUnset => self.strategy_unset(p),
            Verb::CsConfig => self.cs_config(p),
            Verb::CsErase => self.cs_erase(p),
            Verb::StrategyLoad => self.strategy_load(p),
            Verb::StrategyUnload => self.strategy_unload(p),
        })
    }

    fn faces_create(&mut self, p: ControlParameters) -> Outcome {
        if let Err(why) = p.mtu.map(kite_face::check_mtu).transpose() {
            return response(code::NOT_ACCEPTABLE, &why).into();
        }
        let uri = p.uri.as_deref().unwrap_or_default();
        let remote: FaceUri = match uri.parse() {
            Ok(u) => u,
            Err(_) => return response(code::BAD_REQUEST, "Non-canonical URI").into(),
        };
        let local: Option<FaceUri> = match p.local_uri.as_deref().map(str::parse).transpose() {
            Ok(u) => u,
            Err(_) => return response(code::BAD_REQUEST, "Non-canonical URI").into(),
        };
        let persistency = p.face_persistency.unwrap_or_default().into();
        if let Err(why) = create_policy(&remote, local.as_ref(), persistency) {
            return response(code::NOT_ACCEPTABLE, &why).into();
        }
        Outcome::CreateFace(FaceRequest {
            remote,
            local,
            persistency,
            options: face_options(&p),
        })
    }

    /// The answer to `faces/create` once the I/O thread made the face or gave up.
    pub(super) fn face_created(
        &mut self,
        r: Result<FaceStatus, FaceCommandError>,
    ) -> ControlResponse {
        match r {
            Ok(s) => {
                self.faces.insert(s.id, s.clone());
                ControlResponse::success(&face_parameters(&s))
            }
            Err(e) => self.face_error(e),
        }
    }

    fn face_error(&self, e: FaceCommandError) -> ControlResponse {
        match e {
            FaceCommandError::NotFound => {
                response(code::NOT_FOUND, "Specified face does not exist")
            }
            FaceCommandError::Exists(id) => {
                let resp = response(code::CONFLICT, "Face with remote URI already exists");
                match self.faces.get(&id) {
                    Some(s) => resp.with_parameters(&face_parameters(s)),
                    None => resp,
                }
            }
            FaceCommandError::Unsupported(why) => response(code::NOT_ACCEPTABLE, &why),
            FaceCommandError::ConnectFailed(why) => {
                response(code::TIMEOUT, &format!("Connect failed: {why}"))
            }
        }
    }

    fn faces_update(&mut self, p: ControlParameters) -> ControlResponse {
        let id = FaceId(p.face_id.unwrap_or(0));
        if id.is_reserved() {
            return reserved_face_update(id, &p);
        }
        if let Err(why) = p.mtu.map(kite_face::check_mtu).transpose() {
            return response(code::NOT_ACCEPTABLE, &why);
        }
        let persistency = p.face_persistency.map(Persistency::from);
        match self.runtime.update_face(id, persistency, face_options(&p)) {
            Ok(s) => {
                self.faces.insert(s.id, s.clone());
                ControlResponse::success(&face_parameters(&s))
            }
            Err(e) => self.face_error(e),
        }
    }

    fn faces_destroy(&mut self, p: ControlParameters) -> ControlResponse {
        let id = FaceId(p.face_id.unwrap_or(0));
        // NFD answers 200 whether or not the face existed. It would close a reserved face
        // (management's own, or the null face); Kite keeps them: nothing could make them again.
        if !id.is_reserved() {
            self.runtime.destroy_face(id);
        }
        ControlResponse::success(&ControlParameters {
            face_id: Some(id.0),
            ..ControlParameters::default()
        })
    }

    /// Whether face `id` exists, for every command that names one (NFD's face table
    /// lookup): the reserved faces (internal, content store, null) always do, other faces
    /// while the runtime has them.
    fn face_exists(&self, id: u64) -> bool {
        let id = FaceId(id);
        id.is_reserved() || self.faces.contains_key(&id)
    }

    fn fib_add(&mut self, p: ControlParameters) -> ControlResponse {
        let (Some(name), Some(face)) = (p.name.clone(), p.face_id) else {
            return response(code::BAD_REQUEST, "failed in validating parameters");
        };
        if !self.face_exists(face) {
            return response(code::GONE, "Face not found");
        }
        let cost = u32::try_from(p.cost.unwrap_or(0)).unwrap_or(u32::MAX);
        if self.fib.add_nexthop(&name, FaceId(face), cost).is_err() {
            return response(
                code::PREFIX_TOO_LONG,
                "Prefix has too many components (limit is 32)",
            );
        }
        self.fib.publish();
        ControlResponse::success(&p)
    }

    fn fib_remove(&mut self, p: ControlParameters) -> ControlResponse {
        if let (Some(name), Some(face)) = (&p.name, p.face_id) {
            if self.fib.remove_nexthop(name, FaceId(face)) {
                self.fib.publish();
            }
        }
        ControlResponse::success(&p)
    }

    fn rib_register(&mut self, p: ControlParameters, route: RibRoute, now: u64) -> ControlResponse {
        let Some(name) = p.name.clone() else {
            return response(code::BAD_REQUEST, "failed in validating parameters");
        };
        // Refused rather than held as a route nothing can use (NFD answers 200, then drops
        // the route once its FIB refuses the nexthop).
        if !self.face_exists(route.face_id) {
            return response(code::GONE, "Face not found");
        }
        match self.rib.register(&name, route, now) {
            Ok(changes) => {
                if self.rib.routes_of(&name).contains(&route) {
                    self.readvertise_added(&name, &route, now);
                } else {
                    // Registered already expired: NFD removes the route instead.
                    self.readvertise_removed(&name, route.face_id, route.origin, now);
                }
                self.apply(changes);
                self.readvertise_sync(now);
                ControlResponse::success(&p)
            }
            Err(e) => response(e.status_code(), &e.to_string()),
        }
    }

    fn rib_unregister(&mut self, p: ControlParameters, now: u64) -> ControlResponse {
        if let (Some(name), Some(face)) = (&p.name, p.face_id) {
            let origin = p.origin.unwrap_or_default();
            let changes = self.rib.unregister(name, face, origin);
            self.readvertise_removed(name, face, origin, now);
            self.apply(changes);
            self.readvertise_sync(now);
        }
        ControlResponse::success(&p)
    }

    /// Pushes RIB changes into the forwarding FIB and publishes them at once.
    pub(super) fn apply(&mut self, changes: Vec<FibChange>) {
        if changes.is_empty() {
            return;
        }
        for change in changes {
            let (prefix, wanted) = match change {
                FibChange::Update { prefix, next_hops } => (prefix, next_hops),
                FibChange::Remove { prefix } => (prefix, Vec::new()),
            };
            let current: Vec<FaceId> = self.fib.nexthops(&prefix).iter().map(|h| h.face).collect();
            for face in current {
                if !wanted.iter().any(|h| h.face_id == face.0) {
                    self.fib.remove_nexthop(&prefix, face);
                }
            }
            for h in &wanted {
                let cost = u32::try_from(h.cost).unwrap_or(u32::MAX);
                let _ = self.fib.add_nexthop(&prefix, FaceId(h.face_id), cost);
            }
        }
        self.fib.publish();
    }

    fn strategy_set(&mut self, mut p: ControlParameters) -> ControlResponse {
        let (Some(name), Some(strategy)) = (p.name.clone(), p.strategy.clone()) else {
            return response(code::BAD_REQUEST, "failed in validating parameters");
        };
        let Ok(id) = self.strategies.find(&strategy) else {
            return response(code::NOT_FOUND, "Strategy not registered");
        };
        if self.fib.set_strategy(&name, id).is_err() {
            return response(
                code::PREFIX_TOO_LONG,
                "Prefix has too many components (limit is 32)",
            );
        }
        self.fib.publish();
        p.strategy = self.strategies.get(id).map(|s| s.name().clone());
        ControlResponse::success(&p)
    }

    fn strategy_unset(&mut self, p: ControlParameters) -> ControlResponse {
        let Some(name) = &p.name else {
            return response(code::BAD_REQUEST, "failed in validating parameters");
        };
        if name.is_empty() {
            return response(code::BAD_REQUEST, "failed in validating parameters");
        }
        if self.fib.unset_strategy(name) {
            self.fib.publish();
        }
        ControlResponse::success(&p)
    }

    fn cs_erase(&mut self, p: ControlParameters) -> ControlResponse {
        let Some(name) = &p.name else {
            return response(code::BAD_REQUEST, "failed in validating parameters");
        };
        let limit = p
            .count
            .map_or(ERASE_LIMIT, |c| (c as usize).min(ERASE_LIMIT));
        let erased = self.runtime.cs_erase(name, limit);
        let mut out = ControlParameters {
            name: Some(name.clone()),
            count: Some(erased as u64),
            ..ControlParameters::default()
        };
        // NFD reports Capacity = the limit when it stopped there: more may remain.
        if erased == ERASE_LIMIT {
            out.capacity = Some(ERASE_LIMIT as u64);
        }
        ControlResponse::success(&out)
    }

    fn cs_config(&mut self, p: ControlParameters) -> ControlResponse {
        let capacity = p.capacity.map(|c| c as usize);
        let admit = p.flag_bit(cs_flag_bit::ENABLE_ADMIT);
        let serve = p.flag_bit(cs_flag_bit::ENABLE_SERVE);
        self.runtime.set_cs(capacity, admit, serve);
        let info = status::cs_totals(&self.runtime.thread_counters());
        let mut out = ControlParameters {
            capacity: Some(info.capacity),
            ..ControlParameters::default()
        };
        out.set_flag_bit(cs_flag_bit::ENABLE_ADMIT, info.flags & 1 != 0);
        out.set_flag_bit(cs_flag_bit::ENABLE_SERVE, info.flags & 2 != 0);
        out.mask = None;
        ControlResponse::success(&out)
    }
}

/// `faces/update` of a reserved face, answered as NFD answers it: these faces are local and
/// permanent with no MTU to override, so asking for another persistency or an MTU is refused
/// (409, naming the refused field); anything else is answered with the face as it is.
fn reserved_face_update(id: FaceId, p: &ControlParameters) -> ControlResponse {
    let permanent = Persistency::Permanent.into();
    let mut refused = ControlParameters {
        mtu: p.mtu,
        ..ControlParameters::default()
    };
    if p.face_persistency.is_some_and(|q| q != permanent) {
        refused.face_persistency = p.face_persistency;
    }
    if refused != ControlParameters::default() {
        return response(code::CONFLICT, "Invalid properties specified").with_parameters(&refused);
    }
    ControlResponse::success(&ControlParameters {
        face_id: Some(id.0),
        face_persistency: Some(permanent),
        ..ControlParameters::default()
    })
}

/// What NFD's `faces/create` refuses (406, with NFD's texts) before any face is made: a
/// LocalUri where the protocol takes none, an outgoing face that is on-demand, a multicast or
/// interface-less Ethernet face, a protocol that cannot be dialed.
fn create_policy(
    remote: &FaceUri,
    local: Option<&FaceUri>,
    persistency: Persistency,
) -> Result<(), String> {
    let on_demand = persistency == Persistency::OnDemand;
    let why = match (remote, local) {
        (FaceUri::Udp(_), Some(_)) => "Unicast UDP faces cannot be created with a LocalUri",
        (FaceUri::Udp(_), None) if on_demand => {
            "Outgoing UDP faces do not support on-demand persistency"
        }
        (FaceUri::Tcp(_), Some(_)) => "Unicast TCP faces cannot be created with a LocalUri",
        (FaceUri::Tcp(_), None) if on_demand => {
            "Outgoing TCP faces do not support on-demand persistency"
        }
        (FaceUri::Udp(_) | FaceUri::Tcp(_), None) => return Ok(()),
        (FaceUri::Ether(_), Some(FaceUri::Dev(_))) if on_demand => {
            "Outgoing Ethernet faces do not support on-demand persistency"
        }
        (FaceUri::Ether(mac), Some(FaceUri::Dev(_))) if mac.is_multicast() => {
            "Cannot create multicast Ethernet faces"
        }
        (FaceUri::Ether(_), Some(FaceUri::Dev(_))) => return Ok(()),
        (FaceUri::Ether(_), _) => {
            "Creation of unicast Ethernet faces requires a LocalUri with dev:// scheme"
        }
        (other, _) => return Err(format!("unsupported protocol {}", other.scheme())),
    };
    Err(why.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uri(s: &str) -> FaceUri {
        s.parse().unwrap()
    }

    #[test]
    fn faces_create_refuses_what_nfd_refuses_before_any_face_is_made() {
        let dev = uri("dev://eth0");
        let refused = |remote: &str, local: Option<&FaceUri>, p| {
            create_policy(&uri(remote), local, p).expect_err(remote)
        };
        let (udp, tcp) = ("udp4://192.0.2.1:6363", "tcp4://192.0.2.1:6363");
        assert!(refused(
            udp,
            Some(&uri("udp4://0.0.0.0:6363")),
            Persistency::Persistent
        )
        .contains("LocalUri"));
        assert!(refused(udp, None, Persistency::OnDemand).contains("on-demand"));
        assert!(refused(
            tcp,
            Some(&uri("tcp4://0.0.0.0:6363")),
            Persistency::Persistent
        )
        .contains("LocalUri"));
        assert!(refused(tcp, None, Persistency::OnDemand).contains("on-demand"));
        let unicast = "ether://[02:00:00:00:00:01]";
        assert!(refused(unicast, None, Persistency::Persistent).contains("dev://"));
        assert!(refused(unicast, Some(&dev), Persistency::OnDemand).contains("on-demand"));
        assert!(refused(
            "ether://[01:00:5e:00:17:aa]",
            Some(&dev),
            Persistency::Permanent
        )
        .contains("multicast"));
        assert!(
            refused("unix:///run/nfd/nfd.sock", None, Persistency::Persistent)
                .contains("unsupported protocol")
        );
        for (remote, local) in [(udp, None), (tcp, None), (unicast, Some(&dev))] {
            for p in [Persistency::Persistent, Persistency::Permanent] {
                assert_eq!(
                    create_policy(&uri(remote), local, p),
                    Ok(()),
                    "{remote} {p:?}"
                );
            }
        }
    }
}
