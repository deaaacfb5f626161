//! `kite route`: the RIB (`rib/list`, `rib/register`, `rib/unregister`).

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use kite_app::Client;
use kite_mgmt_proto::datasets::RibEntry;
use kite_mgmt_proto::nfd::{route_flags, RouteOrigin};
use kite_mgmt_proto::ControlParameters;
use kite_packet::Name;
use serde_json::{json, Value};

use super::format::{self, expires, opt, parse_origin};
use super::table::Table;
use super::{command_ok, fetch_items, Common};

/// Arguments of `kite route`.
#[derive(Args, Debug)]
pub struct RouteArgs {
    #[command(flatten)]
    common: Common,
    #[command(subcommand)]
    command: Option<RouteCommand>,
}

/// `kite route` subcommands (`list` when none is given).
#[derive(Subcommand, Debug)]
enum RouteCommand {
    /// List every route of the RIB, with its origin and where it comes from (SOURCE:
    /// static, app, or learned from a routing daemon or the network).
    List,
    /// Add a route (rib/register).
    Add(AddArgs),
    /// Remove a route (rib/unregister).
    Remove {
        /// The name prefix.
        prefix: Name,
        /// The nexthop: a FaceId or a remote FaceUri.
        face: String,
        /// The route's origin: a number or app, autoreg, client, autoconf, nlsr, prefixann,
        /// static.
        #[arg(long, value_parser = parse_origin, default_value = "static")]
        origin: RouteOrigin,
    },
}

/// Arguments of `kite route add`.
#[derive(Args, Debug)]
struct AddArgs {
    /// The name prefix.
    prefix: Name,
    /// The nexthop: a FaceId or a remote FaceUri.
    face: String,
    /// The route's cost.
    #[arg(long, default_value_t = 0)]
    cost: u64,
    /// The route's origin: a number or app, autoreg, client, autoconf, nlsr, prefixann,
    /// static.
    #[arg(long, value_parser = parse_origin, default_value = "static")]
    origin: RouteOrigin,
    /// Do not let longer prefixes inherit this route (clears CHILD_INHERIT).
    #[arg(long)]
    no_inherit: bool,
    /// Stop longer prefixes from inheriting routes of shorter ones (sets CAPTURE).
    #[arg(long)]
    capture: bool,
    /// Remove the route after this many milliseconds (default: never).
    #[arg(long, value_name = "MS")]
    expires: Option<u64>,
}

/// Runs `kite route …`.
pub fn run(args: RouteArgs) -> Result<String> {
    let common = &args.common;
    let mut client = common.connect()?;
    match args.command.unwrap_or(RouteCommand::List) {
        RouteCommand::List => {
            let rib: Vec<RibEntry> = fetch_items(&mut client, "rib", "list")?;
            Ok(common.output(rib_json(&rib), || rib_table(&rib)))
        }
        RouteCommand::Add(a) => {
            let mut flags = 0;
            if !a.no_inherit {
                flags |= route_flags::CHILD_INHERIT;
            }
            if a.capture {
                flags |= route_flags::CAPTURE;
            }
            let params = ControlParameters {
                name: Some(a.prefix),
                face_id: Some(face_id(&mut client, &a.face)?),
                origin: Some(a.origin),
                cost: Some(a.cost),
                flags: Some(flags),
                expiration_period: a.expires,
                ..Default::default()
            };
            let r = command_ok(&mut client, "rib", "register", &params)?;
            Ok(common.output(route_json(&r), || {
                format!(
                    "route-add-accepted prefix={} nexthop={} origin={} cost={} flags={} expires={}\n",
                    name_text(r.name.as_ref()),
                    opt(r.face_id),
                    r.origin.map_or_else(|| "-".into(), format::origin),
                    opt(r.cost),
                    format::route_flags(r.flags.unwrap_or(0)),
                    expires(r.expiration_period),
                )
            }))
        }
        RouteCommand::Remove {
            prefix,
            face,
            origin,
        } => {
            let params = ControlParameters {
                name: Some(prefix),
                face_id: Some(face_id(&mut client, &face)?),
                origin: Some(origin),
                ..Default::default()
            };
            let r = command_ok(&mut client, "rib", "unregister", &params)
                .context("removing the route")?;
            Ok(common.output(route_json(&r), || {
                format!(
                    "route-removed prefix={} nexthop={} origin={}\n",
                    name_text(r.name.as_ref()),
                    opt(r.face_id),
                    r.origin.map_or_else(|| "-".into(), format::origin),
                )
            }))
        }
    }
}

/// A FaceId as given, or the id of the face whose remote FaceUri is given.
fn face_id(client: &mut Client, face: &str) -> Result<u64> {
    match face.parse() {
        Ok(id) => Ok(id),
        Err(_) => Ok(super::face::find(client, face)?.face_id),
    }
}

fn name_text(n: Option<&Name>) -> String {
    n.map_or_else(|| "-".into(), Name::to_uri)
}

/// A command response's route fields.
fn route_json(r: &ControlParameters) -> Value {
    json!({
        "prefix": r.name.as_ref().map(Name::to_uri),
        "face_id": r.face_id,
        "origin": r.origin.map(|o| o.0),
        "cost": r.cost,
        "flags": r.flags,
        "expiration_period_ms": r.expiration_period,
    })
}

fn rib_json(rib: &[RibEntry]) -> Value {
    Value::Array(
        rib.iter()
            .map(|e| {
                let routes: Vec<Value> = e
                    .routes
                    .iter()
                    .map(|r| {
                        json!({
                            "face_id": r.face_id,
                            "origin": r.origin.0,
                            "origin_name": format::origin(r.origin),
                            "source": format::route_source(r.origin),
                            "cost": r.cost,
                            "flags": r.flags,
                            "child_inherit": r.flags & route_flags::CHILD_INHERIT != 0,
                            "capture": r.flags & route_flags::CAPTURE != 0,
                            "expiration_period_ms": r.expiration_period,
                        })
                    })
                    .collect();
                json!({ "prefix": e.name.to_uri(), "routes": routes })
            })
            .collect(),
    )
}

fn rib_table(rib: &[RibEntry]) -> String {
    let mut t = Table::new(&[
        "PREFIX", "FACEID", "ORIGIN", "SOURCE", "COST", "FLAGS", "EXPIRES",
    ]);
    for e in rib {
        for r in &e.routes {
            t.row(vec![
                e.name.to_uri(),
                r.face_id.to_string(),
                format::origin(r.origin),
                format::route_source(r.origin).to_string(),
                r.cost.to_string(),
                format::route_flags(r.flags),
                expires(r.expiration_period),
            ]);
        }
    }
    t.render()
}
