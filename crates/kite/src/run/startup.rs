//! The configuration's strategy choices, faces and routes, created at start through
//! management's own command handlers (`strategy-choice/set`, `faces/create`,
//! `rib/register`), so they behave exactly as the same commands sent by `kite` would.

use std::collections::HashMap;

use anyhow::{bail, Result};
use kite_fw::runtime::RuntimeHandle;
use kite_mgmt::server::Manager;
use kite_mgmt::tlv_types::{face_flag_bit, route_flags, status};
use kite_mgmt::{ControlParameters, ControlResponse, Verb};

use crate::config::{Config, FaceRef};

/// Applies `config` in order: strategies, faces, routes. The first that fails stops the start.
pub(super) fn apply(manager: &mut Manager, runtime: &RuntimeHandle, config: &Config) -> Result<()> {
    for (prefix, strategy) in &config.tables.strategy_choice {
        let params = ControlParameters {
            name: Some(prefix.0.clone()),
            strategy: Some(strategy.0.clone()),
            ..Default::default()
        };
        let what = format!("strategy {} for {}", strategy.0, prefix.0);
        execute(manager, Verb::StrategyChoiceSet, params, &what)?;
    }
    let mut face_ids = HashMap::new();
    for face in &config.faces {
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
        let created = execute(manager, Verb::FacesCreate, params, &format!("face {uri}"))?;
        let Some(id) = created.face_id else {
            bail!("face {uri}: faces/create answered without a FaceId");
        };
        tracing::info!(face = id, uri = %uri, "configured face created");
        face_ids.insert(uri.to_string(), id);
    }
    let existing: Vec<u64> = runtime.faces().iter().map(|f| f.id.0).collect();
    for route in &config.routes {
        let face = route.face.get_ref();
        let what = format!("route {} via {face}", route.prefix.0);
        let id = match face {
            FaceRef::Id(id) if existing.contains(id) => *id,
            FaceRef::Id(_) => bail!("{what}: no such face"),
            // Config::check made sure a [[face]] has this URI, and all of them were created.
            FaceRef::Uri(u) => face_ids[&u.to_string()],
        };
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
        execute(manager, Verb::RibRegister, params, &what)?;
        tracing::info!(prefix = %route.prefix.0, face = id, cost = route.cost, "configured route added");
    }
    Ok(())
}

/// Runs one command; anything but success is an error naming `what` and NFD's answer.
fn execute(
    manager: &mut Manager,
    verb: Verb,
    params: ControlParameters,
    what: &str,
) -> Result<ControlParameters> {
    let resp: ControlResponse = manager.execute_trusted(verb, params);
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
