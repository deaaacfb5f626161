//! `kite cs`: the Content Store (`cs/info`, `cs/config`, `cs/erase`).

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use kite_mgmt_proto::datasets::CsInfo;
use kite_mgmt_proto::ControlParameters;
use kite_mgmt_proto::Tlv;
use kite_packet::Name;
use serde_json::json;

use super::format::{bit, cs_flag, on_off, opt, ENABLE_ADMIT, ENABLE_SERVE};
use super::table::key_values;
use super::{command_ok, fetch, Common, OnOff};

/// Most entries one `cs/erase` removes (NFD's `ERASE_LIMIT`): a reply erasing this many means
/// more may remain.
const ERASE_LIMIT: u64 = 256;

/// Arguments of `kite cs`.
#[derive(Args, Debug)]
pub struct CsArgs {
    #[command(flatten)]
    common: Common,
    #[command(subcommand)]
    command: Option<CsCommand>,
}

/// `kite cs` subcommands (`info` when none is given).
#[derive(Subcommand, Debug)]
enum CsCommand {
    /// Show capacity, admit/serve switches and counters.
    Info,
    /// Change capacity or the admit/serve switches.
    Config {
        /// Most packets the CS keeps.
        #[arg(long, value_name = "N")]
        capacity: Option<u64>,
        /// Whether Data are admitted into the CS.
        #[arg(long, value_enum, value_name = "on|off")]
        admit: Option<OnOff>,
        /// Whether the CS answers Interests.
        #[arg(long, value_enum, value_name = "on|off")]
        serve: Option<OnOff>,
    },
    /// Erase cached Data under a prefix.
    Erase {
        /// The name prefix.
        prefix: Name,
        /// Erase at most this many entries (default: all).
        #[arg(long, value_name = "N")]
        count: Option<u64>,
    },
}

/// Runs `kite cs …`.
pub fn run(args: CsArgs) -> Result<String> {
    let common = &args.common;
    let mut client = common.connect()?;
    match args.command.unwrap_or(CsCommand::Info) {
        CsCommand::Info => {
            let payload = fetch(&mut client, "cs", "info")?;
            let info = CsInfo::decode(&payload).context("decoding cs/info")?;
            let json = json!({
                "capacity": info.capacity,
                "admit": bit(info.flags, ENABLE_ADMIT),
                "serve": bit(info.flags, ENABLE_SERVE),
                "n_entries": info.n_cs_entries,
                "n_hits": info.n_hits,
                "n_misses": info.n_misses,
            });
            Ok(common.output(json, || {
                key_values(&[
                    ("capacity", info.capacity.to_string()),
                    ("admit", cs_flag(info.flags, ENABLE_ADMIT).into()),
                    ("serve", cs_flag(info.flags, ENABLE_SERVE).into()),
                    ("nEntries", info.n_cs_entries.to_string()),
                    ("nHits", info.n_hits.to_string()),
                    ("nMisses", info.n_misses.to_string()),
                ])
            }))
        }
        CsCommand::Config {
            capacity,
            admit,
            serve,
        } => {
            let mut params = ControlParameters {
                capacity,
                ..Default::default()
            };
            if let Some(a) = admit {
                params.set_flag_bit(ENABLE_ADMIT, a.enabled());
            }
            if let Some(s) = serve {
                params.set_flag_bit(ENABLE_SERVE, s.enabled());
            }
            let r = command_ok(&mut client, "cs", "config", &params)?;
            let flags = r.flags.unwrap_or(0);
            let json = json!({
                "capacity": r.capacity,
                "admit": bit(flags, ENABLE_ADMIT),
                "serve": bit(flags, ENABLE_SERVE),
            });
            Ok(common.output(json, || {
                format!(
                    "cs-config-updated capacity={} admit={} serve={}\n",
                    opt(r.capacity),
                    on_off(bit(flags, ENABLE_ADMIT)),
                    on_off(bit(flags, ENABLE_SERVE)),
                )
            }))
        }
        CsCommand::Erase { prefix, count } => {
            let mut erased = 0;
            loop {
                let want = count.map(|c| c - erased);
                let params = ControlParameters {
                    name: Some(prefix.clone()),
                    count: want,
                    ..Default::default()
                };
                let r = command_ok(&mut client, "cs", "erase", &params)?;
                let n = r.count.unwrap_or(0);
                erased += n;
                // A full batch (Capacity = the limit in the reply) means more may remain.
                let more = n > 0 && r.capacity == Some(ERASE_LIMIT);
                if !more || want.is_some_and(|w| n >= w) {
                    break;
                }
            }
            let json = json!({ "prefix": prefix.to_uri(), "count": erased });
            Ok(common.output(json, || {
                format!("cs-erased prefix={prefix} count={erased}\n")
            }))
        }
    }
}
