//! The configuration's strategy choices, faces and routes, created at start (and changed by a
//! reload, `super::reload`) through management's own command handlers
//! (`strategy-choice/set`, `faces/create`, `rib/register`), so they behave exactly as the same
//! commands sent by `kite` would. A TCP face is made at once and connects in the background:
//! a peer that is down delays nothing.

use std::collections::HashMap;

use anyhow::{bail, Result};
use kite_mgmt_proto::nfd::{face_flag_bit, route_flags, status};
use kite_mgmt_proto::{ControlParameters, ControlResponse, Verb};
use kite_mgmt_server::server::Manager;

use crate::config::{Config, FaceEntry, FaceRef, Prefix, RouteEntry, Strategy};

/// The FaceIds of the configuration's `[[face]]`s, by URI.
pub(super) type FaceIds = HashMap<String, u64>;

/// Applies `config` in order: strategies, faces, routes. The first that fails stops the start.
/// `existing`: the FaceIds that exist before (routes may name them).
pub(super) fn apply(manager: &mut Manager, existing: &[u64], config: &Config) -> Result<FaceIds> {
    for (prefix, strategy) in &config.tables.strategy_choice {
        set_strategy(manager, prefix, strategy)?;
    }
    let mut face_ids = HashMap::new();
    for face in &config.faces {
        let id = create_face(manager, face)?;
        face_ids.insert(face.uri.get_ref().to_string(), id);
    }
    for route in &config.routes {
        let id = route_face(route, existing, &face_ids)?;
        add_route(manager, route, id)?;
    }
    Ok(face_ids)
}

/// `strategy-choice/set`.
pub(super) fn set_strategy(manager: &mut Manager, prefix: &Prefix, s: &Strategy) -> Result<()> {
    let params = ControlParameters {
        name: Some(prefix.0.clone()),
        strategy: Some(s.0.clone()),
        ..Default::default()
    };
    let what = format!("strategy {} for {}", s.0, prefix.0);
    check(
        Verb::StrategyChoiceSet,
        &what,
        manager.execute_trusted(Verb::StrategyChoiceSet, params),
    )?;
    Ok(())
}

/// Creates a `[[face]]` without waiting on its peer; its FaceId.
pub(super) fn create_face(manager: &mut Manager, face: &FaceEntry) -> Result<u64> {
    let uri = face.uri.get_ref();
    let mut params = ControlParameters {
        uri: Some(uri.to_string()),
        local_uri: face.local_uri.as_ref().map(ToString::to_string),
        face_persistency: Some(face.persistency.into()),
        mtu: face.mtu.map(|m| m as u64),
        ..Default::default()
    };
    if face.lp_reliability {
        params.set_flag_bit(face_flag_bit::LP_RELIABILITY_ENABLED, true);
    }
    let resp = manager.create_configured_face(params);
    let created = check(Verb::FacesCreate, &format!("face {uri}"), resp)?;
    let Some(id) = created.face_id else {
        bail!("face {uri}: faces/create answered without a FaceId");
    };
    tracing::info!(face = id, uri = %uri, "configured face created");
    Ok(id)
}

/// The FaceId a route names: one that exists, or a `[[face]]`'s (which `Config::check`
/// made sure is declared).
pub(super) fn route_face(route: &RouteEntry, existing: &[u64], faces: &FaceIds) -> Result<u64> {
    match route.face.get_ref() {
        FaceRef::Id(id) if existing.contains(id) => Ok(*id),
        FaceRef::Id(_) => bail!(
            "route {} via {}: no such face",
            route.prefix.0,
            route.face.get_ref()
        ),
        FaceRef::Uri(u) => match faces.get(&u.to_string()) {
            Some(id) => Ok(*id),
            None => bail!(
                "route {} via face {u}: the face was not created",
                route.prefix.0
            ),
        },
    }
}

/// `rib/register` of a `[[route]]` through face `id`.
pub(super) fn add_route(manager: &mut Manager, route: &RouteEntry, id: u64) -> Result<()> {
    let mut flags = 0;
    if route.child_inherit {
        flags |= route_flags::CHILD_INHERIT;
    }
    if route.capture {
        flags |= route_flags::CAPTURE;
    }
    let params = ControlParameters {
        name: Some(route.prefix.0.clone()),
        face_id: Some(id),
        origin: Some(route.origin.0),
        cost: Some(route.cost),
        flags: Some(flags),
        ..Default::default()
    };
    let what = format!("route {} via {}", route.prefix.0, route.face.get_ref());
    let resp = manager.execute_trusted(Verb::RibRegister, params);
    if resp.status_code == status::GONE {
        // The face existed a moment ago: a configured persistent face whose peer refused its
        // first dial is destroyed at once. That must not stop the start; a reload makes the
        // face and its routes again.
        tracing::warn!(prefix = %route.prefix.0, face = id, "configured route not added: its face is gone (its peer did not answer); a reload tries again");
        return Ok(());
    }
    check(Verb::RibRegister, &what, resp)?;
    tracing::info!(prefix = %route.prefix.0, face = id, cost = route.cost, "configured route added");
    Ok(())
}

/// Anything but success is an error naming `what` and NFD's answer; success gives the
/// answer's parameters.
pub(super) fn check(verb: Verb, what: &str, resp: ControlResponse) -> Result<ControlParameters> {
    if resp.status_code != status::OK {
        bail!(
            "{what}: {}/{} answered {} \"{}\"",
            verb.module(),
            verb.verb(),
            resp.status_code,
            resp.status_text
        );
    }
    Ok(resp.parameters().and_then(Result::ok).unwrap_or_default())
}
