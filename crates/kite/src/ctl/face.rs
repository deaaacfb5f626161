//! `kite face`: list, show, create and destroy faces (`faces/list`, `faces/query`,
//! `faces/create`, `faces/destroy`).

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use kite_app::{nfd_name, Client};
use kite_face::FaceUri;
use kite_mgmt_proto::datasets::{ChannelStatus, FaceQueryFilter, FaceStatus};
use kite_mgmt_proto::nfd::{face_flag_bit, status, FacePersistency};
use kite_mgmt_proto::{decode_items, ControlParameters, Tlv};
use serde_json::{json, Value};

use super::format::{self, bit, opt};
use super::table::{key_values, Table};
use super::{command, command_ok, fetch_items, Common, OnOff, TIMEOUT};
use crate::config::Persistency;

/// Arguments of `kite face`.
#[derive(Args, Debug)]
pub struct FaceArgs {
    #[command(flatten)]
    common: Common,
    #[command(subcommand)]
    command: Option<FaceCommand>,
}

/// `kite face` subcommands (`list` when none is given).
#[derive(Subcommand, Debug)]
enum FaceCommand {
    /// List every face with its counters (with --json, an Ethernet face's I/O path too).
    List,
    /// Show one face in detail, with an Ethernet face's I/O path (its channel's).
    Show {
        /// The FaceId or the remote FaceUri.
        face: String,
    },
    /// Create a face to a remote peer (udp4, udp6, tcp4, tcp6, ether); an existing face is
    /// upgraded to a higher persistency (on-demand < persistent < permanent), as nfdc does.
    Create(CreateArgs),
    /// Destroy a face.
    Destroy {
        /// The FaceId or the remote FaceUri.
        face: String,
    },
}

/// Arguments of `kite face create`.
#[derive(Args, Debug)]
struct CreateArgs {
    /// The remote FaceUri, e.g. udp4://192.0.2.1:6363 (udp://host and a missing port are
    /// canonized first, as nfdc does).
    uri: String,
    /// The local FaceUri (required for Ethernet faces: dev://IFNAME).
    #[arg(long, value_name = "URI")]
    local: Option<String>,
    /// Whether the face survives failures: persistent (closed on error) or permanent
    /// (reconnects).
    #[arg(long, value_enum, default_value_t = Persistency::Persistent)]
    persistency: Persistency,
    /// Exchange local fields (IncomingFaceId, NextHopFaceId); local-scope faces only.
    #[arg(long, value_enum, value_name = "on|off")]
    local_fields: Option<OnOff>,
    /// The MTU in octets (datagram faces), 64 to 65507 (the configuration's rule).
    #[arg(long, value_name = "N", value_parser = parse_mtu)]
    mtu: Option<u64>,
    /// NDNLPv2 link-layer reliability: frames are acknowledged and resent when lost (UDP
    /// and Ethernet unicast faces; off by default, as in NFD).
    #[arg(long, value_enum, value_name = "on|off")]
    lp_reliability: Option<OnOff>,
    /// Mark outgoing packets with NDNLPv2 CongestionMark when the face's output backs up
    /// (on by default on Kite, as in NFD).
    #[arg(long, value_enum, value_name = "on|off")]
    congestion_marking: Option<OnOff>,
    /// How long the backlog must last before the first mark, in milliseconds (NFD: 100).
    #[arg(long, value_name = "MS")]
    congestion_marking_interval: Option<u64>,
    /// Octets of backlog above which the face counts as congested (NFD: 65536).
    #[arg(long, value_name = "OCTETS")]
    default_congestion_threshold: Option<u64>,
}

/// Runs `kite face …`.
pub fn run(args: FaceArgs) -> Result<String> {
    let common = &args.common;
    let mut client = common.connect()?;
    match args.command.unwrap_or(FaceCommand::List) {
        FaceCommand::List => {
            let faces: Vec<FaceStatus> = fetch_items(&mut client, "faces", "list")?;
            let paths = io_paths(&mut client, &faces);
            let json = faces
                .iter()
                .map(|f| face_json(f, io_path(&paths, f)))
                .collect();
            Ok(common.output(Value::Array(json), || face_table(&faces)))
        }
        FaceCommand::Show { face } => {
            let face = find(&mut client, &face)?;
            let paths = io_paths(&mut client, std::slice::from_ref(&face));
            let io = io_path(&paths, &face);
            Ok(common.output(face_json(&face, io), || face_details(&face, io)))
        }
        FaceCommand::Create(c) => create(&mut client, common, c),
        FaceCommand::Destroy { face } => {
            let face = find(&mut client, &face)?;
            let id = face.face_id;
            let params = ControlParameters {
                face_id: Some(id),
                ..Default::default()
            };
            command_ok(&mut client, "faces", "destroy", &params)?;
            Ok(common.output(face_json(&face, None), || {
                format!(
                    "face-destroyed id={id} local={} remote={}\n",
                    face.local_uri, face.uri
                )
            }))
        }
    }
}

/// The Ethernet channels (`faces/channels`) with their I/O path, when any of `faces` is on
/// one (local URI `dev://…`); none otherwise, or when the forwarder does not tell (NFD).
fn io_paths(client: &mut Client, faces: &[FaceStatus]) -> Vec<ChannelStatus> {
    if !faces.iter().any(|f| f.local_uri.starts_with("dev://")) {
        return Vec::new();
    }
    let channels: Vec<ChannelStatus> = fetch_items(client, "faces", "channels").unwrap_or_default();
    channels
        .into_iter()
        .filter(|c| c.io_path.is_some())
        .collect()
}

/// The I/O path of face `f`: its channel's, the one with its local URI.
fn io_path<'a>(channels: &'a [ChannelStatus], f: &FaceStatus) -> Option<&'a str> {
    channels
        .iter()
        .find(|c| c.local_uri == f.local_uri)
        .and_then(|c| c.io_path.as_deref())
}

/// The face named by a FaceId or a remote FaceUri (canonized first), by `faces/query`; an
/// error unless exactly one face matches.
pub(super) fn find(client: &mut Client, face: &str) -> Result<FaceStatus> {
    let filter = match face.parse::<u64>() {
        Ok(id) => FaceQueryFilter {
            face_id: Some(id),
            ..Default::default()
        },
        Err(_) => FaceQueryFilter {
            uri: Some(canonical(face)?),
            ..Default::default()
        },
    };
    let name = nfd_name(&[b"faces", b"query", &filter.encode()]);
    let payload = client.dataset(&name, TIMEOUT).context("faces/query")?;
    let mut faces: Vec<FaceStatus> = decode_items(&payload).context("decoding faces/query")?;
    match faces.len() {
        0 => bail!("face {face} not found"),
        1 => Ok(faces.remove(0)),
        n => bail!("{face} is ambiguous: {n} faces match (give a FaceId)"),
    }
}

/// An MTU under the one rule every MTU follows ([`kite_face::check_mtu`]).
fn parse_mtu(s: &str) -> Result<u64, String> {
    let n: u64 = s.parse().map_err(|e| format!("{s:?}: {e}"))?;
    kite_face::check_mtu(n).map(|_| n)
}

/// How long a face of this persistency lasts: on-demand < persistent < permanent.
fn persistency_rank(p: FacePersistency) -> u8 {
    match p {
        FacePersistency::ON_DEMAND => 0,
        FacePersistency::PERSISTENT => 1,
        FacePersistency::PERMANENT => 2,
        FacePersistency(_) => 0,
    }
}

/// The canonical form of a FaceUri a user typed.
fn canonical(s: &str) -> Result<String> {
    Ok(FaceUri::canonize(s)
        .with_context(|| format!("{s:?} is not a usable face URI"))?
        .to_string())
}

fn create(client: &mut Client, common: &Common, c: CreateArgs) -> Result<String> {
    let mut params = ControlParameters {
        uri: Some(canonical(&c.uri)?),
        local_uri: c.local.as_deref().map(canonical).transpose()?,
        face_persistency: Some(c.persistency.into()),
        mtu: c.mtu,
        base_congestion_marking_interval: c.congestion_marking_interval.map(|ms| ms * 1_000_000),
        default_congestion_threshold: c.default_congestion_threshold,
        ..Default::default()
    };
    if let Some(lf) = c.local_fields {
        params.set_flag_bit(face_flag_bit::LOCAL_FIELDS_ENABLED, lf.enabled());
    }
    if let Some(cm) = c.congestion_marking {
        params.set_flag_bit(face_flag_bit::CONGESTION_MARKING_ENABLED, cm.enabled());
    }
    if let Some(r) = c.lp_reliability {
        params.set_flag_bit(face_flag_bit::LP_RELIABILITY_ENABLED, r.enabled());
    }
    let resp = command(client, "faces", "create", &params)?;
    let mut outcome = match resp.status_code {
        status::OK => "face-created",
        status::CONFLICT => "face-exists",
        code => bail!(
            "faces/create: the forwarder answered {code} \"{}\"",
            resp.status_text
        ),
    };
    let mut body = resp
        .parameters()
        .transpose()
        .context("decoding the faces/create response")?
        .unwrap_or_default();
    // As nfdc: an existing face whose persistency is lower than the one asked for is
    // upgraded with faces/update (on-demand < persistent < permanent), never downgraded.
    if let (status::CONFLICT, Some(id), Some(existing), Some(wanted)) = (
        resp.status_code,
        body.face_id,
        body.face_persistency,
        params.face_persistency,
    ) {
        if persistency_rank(wanted) > persistency_rank(existing) {
            let update = ControlParameters {
                face_id: Some(id),
                face_persistency: Some(wanted),
                ..Default::default()
            };
            body = command_ok(client, "faces", "update", &update)?;
            outcome = "face-updated";
        }
    }
    let json = json!({
        "result": outcome,
        "face_id": body.face_id,
        "uri": body.uri,
        "local_uri": body.local_uri,
        "persistency": body.face_persistency.map(format::persistency),
        "flags": body.flags,
        "mtu": body.mtu,
    });
    Ok(common.output(json, || {
        format!(
            "{outcome} id={} local={} remote={} persistency={}\n",
            opt(body.face_id),
            body.local_uri.as_deref().unwrap_or("-"),
            body.uri.as_deref().unwrap_or("-"),
            body.face_persistency
                .map_or_else(|| "-".into(), format::persistency),
        )
    }))
}

/// A face as `--json` prints it; `io`, an Ethernet face's I/O path.
fn face_json(f: &FaceStatus, io: Option<&str>) -> Value {
    let c = &f.counters;
    json!({
        "face_id": f.face_id,
        "uri": f.uri,
        "local_uri": f.local_uri,
        "io_path": io,
        "expiration_period_ms": f.expiration_period,
        "scope": format::scope(f.face_scope),
        "persistency": format::persistency(f.face_persistency),
        "link_type": format::link_type(f.link_type),
        "base_congestion_marking_interval_ns": f.base_congestion_marking_interval,
        "default_congestion_threshold_bytes": f.default_congestion_threshold,
        "mtu": f.mtu,
        "counters": {
            "in_interests": c.n_in_interests,
            "in_data": c.n_in_data,
            "in_nacks": c.n_in_nacks,
            "out_interests": c.n_out_interests,
            "out_data": c.n_out_data,
            "out_nacks": c.n_out_nacks,
            "in_bytes": c.n_in_bytes,
            "out_bytes": c.n_out_bytes,
        },
        "drops": c
            .drops_by_reason()
            .iter()
            .map(|(name, n)| (name.replace('-', "_"), json!(n)))
            .collect::<serde_json::Map<_, _>>(),
        "lp_reliability_counters": {
            "retransmitted": c.n_lp_retransmitted,
            "given_up": c.n_lp_given_up,
            "acks_sent": c.n_lp_acks_sent,
            "acks_received": c.n_lp_acks_received,
            "duplicates": c.n_lp_duplicates,
        },
        "state": f.state.map(format::face_state),
        "flags": f.flags,
        "local_fields": bit(f.flags, face_flag_bit::LOCAL_FIELDS_ENABLED),
        "lp_reliability": bit(f.flags, face_flag_bit::LP_RELIABILITY_ENABLED),
        "congestion_marking": bit(f.flags, face_flag_bit::CONGESTION_MARKING_ENABLED),
    })
}

/// In/out packet counts as `Ii/Dd/Nn`.
fn packets(interests: u64, data: u64, nacks: u64) -> String {
    format!("{interests}i/{data}d/{nacks}n")
}

fn face_table(faces: &[FaceStatus]) -> String {
    let mut t = Table::new(&[
        "FACEID",
        "REMOTE",
        "LOCAL",
        "SCOPE",
        "PERSISTENCY",
        "LINK",
        "STATE",
        "MTU",
        "IN",
        "OUT",
        "IN-BYTES",
        "OUT-BYTES",
        "FLAGS",
    ]);
    for f in faces {
        let c = &f.counters;
        t.row(vec![
            f.face_id.to_string(),
            f.uri.clone(),
            f.local_uri.clone(),
            format::scope(f.face_scope),
            format::persistency(f.face_persistency),
            format::link_type(f.link_type),
            f.state.map_or_else(|| "-".into(), format::face_state),
            opt(f.mtu),
            packets(c.n_in_interests, c.n_in_data, c.n_in_nacks),
            packets(c.n_out_interests, c.n_out_data, c.n_out_nacks),
            c.n_in_bytes.to_string(),
            c.n_out_bytes.to_string(),
            format::face_flags(f.flags),
        ]);
    }
    t.render()
}

/// A face as `kite face show` prints it; `io`, an Ethernet face's I/O path.
fn face_details(f: &FaceStatus, io: Option<&str>) -> String {
    let c = &f.counters;
    key_values(&[
        ("faceid", f.face_id.to_string()),
        ("remote", f.uri.clone()),
        ("local", f.local_uri.clone()),
        ("io", io.unwrap_or("-").to_string()),
        (
            "expires",
            f.expiration_period
                .map_or_else(|| "never".into(), |ms| format!("{ms}ms")),
        ),
        ("scope", format::scope(f.face_scope)),
        ("persistency", format::persistency(f.face_persistency)),
        ("link", format::link_type(f.link_type)),
        (
            "congestion",
            format!(
                "base-marking-interval={} default-threshold={}",
                f.base_congestion_marking_interval
                    .map_or_else(|| "-".into(), |ns| format!("{}ms", ns / 1_000_000)),
                f.default_congestion_threshold
                    .map_or_else(|| "-".into(), |b| format!("{b}B")),
            ),
        ),
        ("mtu", opt(f.mtu)),
        (
            "state",
            f.state.map_or_else(|| "-".into(), format::face_state),
        ),
        (
            "in",
            format!(
                "{} {}B",
                packets(c.n_in_interests, c.n_in_data, c.n_in_nacks),
                c.n_in_bytes
            ),
        ),
        (
            "out",
            format!(
                "{} {}B",
                packets(c.n_out_interests, c.n_out_data, c.n_out_nacks),
                c.n_out_bytes
            ),
        ),
        (
            "drops",
            c.drops_by_reason()
                .map(|(reason, n)| format!("{reason}={n}"))
                .join(" "),
        ),
        (
            "lp-reliability",
            format!(
                "retransmitted={} given-up={} acks-sent={} acks-received={} duplicates={}",
                c.n_lp_retransmitted,
                c.n_lp_given_up,
                c.n_lp_acks_sent,
                c.n_lp_acks_received,
                c.n_lp_duplicates,
            ),
        ),
        ("flags", format::face_flags(f.flags)),
    ])
}
