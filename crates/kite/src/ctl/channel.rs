//! `kite channel`: the listening channels (`faces/channels`), with Kite's counters of what a
//! datagram channel read but handed to no face, and of the frames that waited in its socket;
//! for an Ethernet channel, its I/O path (AF_PACKET, or AF_XDP and how) and what Kite's XDP
//! program did with the interface's frames.

use anyhow::Result;
use clap::{Args, Subcommand};
use kite_mgmt_proto::datasets::ChannelStatus;
use serde_json::{json, Value};

use super::table::Table;
use super::{fetch_items, Common};

/// Arguments of `kite channel`.
#[derive(Args, Debug)]
pub struct ChannelArgs {
    #[command(flatten)]
    common: Common,
    #[command(subcommand)]
    command: Option<ChannelCommand>,
}

/// `kite channel` subcommands (`list` when none is given).
#[derive(Subcommand, Debug)]
enum ChannelCommand {
    /// List every channel with its drop counters, its delayed frames and, for an Ethernet
    /// channel, its I/O path (IO: af_packet, or af_xdp with its mode) and XDP verdicts.
    List,
}

/// Runs `kite channel …`.
pub fn run(args: ChannelArgs) -> Result<String> {
    let common = &args.common;
    let mut client = common.connect()?;
    match args.command.unwrap_or(ChannelCommand::List) {
        ChannelCommand::List => {
            let channels: Vec<ChannelStatus> = fetch_items(&mut client, "faces", "channels")?;
            let json = Value::Array(channels.iter().map(channel_json).collect());
            Ok(common.output(json, || channel_table(&channels)))
        }
    }
}

fn channel_json(c: &ChannelStatus) -> Value {
    let d = &c.counters;
    json!({
        "local_uri": c.local_uri,
        "drops": {
            "truncated": d.n_truncated,
            "malformed": d.n_malformed,
            "foreign": d.n_foreign,
            "no_face": d.n_no_face,
            "socket": d.n_socket_drops,
        },
        "delayed": d.n_delayed,
        "io_path": c.io_path,
        "cert_sha256": c.cert_sha256,
        "xdp": c.xdp.map(|x| json!({"ndn": x.ndn, "udp": x.udp, "passed": x.passed, "runt": x.runt})),
    })
}

fn channel_table(channels: &[ChannelStatus]) -> String {
    let mut t = Table::new(&[
        "LOCAL",
        "TRUNCATED",
        "MALFORMED",
        "FOREIGN",
        "NO-FACE",
        "SOCKET",
        "DELAYED",
        "XDP-NDN/UDP/PASSED/RUNT",
        "IO",
    ]);
    for c in channels {
        let d = &c.counters;
        t.row(vec![
            c.local_uri.clone(),
            d.n_truncated.to_string(),
            d.n_malformed.to_string(),
            d.n_foreign.to_string(),
            d.n_no_face.to_string(),
            d.n_socket_drops.to_string(),
            d.n_delayed.to_string(),
            c.xdp.map_or_else(
                || "-".into(),
                |x| format!("{}/{}/{}/{}", x.ndn, x.udp, x.passed, x.runt),
            ),
            // Last: a fallback's reason is long.
            c.detail().unwrap_or_else(|| "-".into()),
        ]);
    }
    t.render()
}
