//! `kite strategy`: strategy choices (`strategy-choice/list`, `set`, `unset`), the strategies
//! available (`kite-strategy/list`) and eBPF strategies loaded at run time
//! (`kite-strategy/load`, `unload`).

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use kite_app::ClientError;
use kite_mgmt_proto::datasets::{AvailableStrategy, StrategyChoice};
use kite_mgmt_proto::ControlParameters;
use kite_packet::Name;
use serde_json::{json, Value};

use super::table::Table;
use super::{command_ok, fetch_items, Common};

/// Where NFD's strategy names live.
const STRATEGY_PREFIX: &str = "/localhost/nfd/strategy/";
/// Where Kite's own and loaded strategies live (tried when a short name is not NFD's).
const KITE_STRATEGY_PREFIX: &str = "/localhost/kite/strategy/";

/// Arguments of `kite strategy`.
#[derive(Args, Debug)]
pub struct StrategyArgs {
    #[command(flatten)]
    common: Common,
    #[command(subcommand)]
    command: Option<StrategyCommand>,
}

/// `kite strategy` subcommands (`list` when none is given).
#[derive(Subcommand, Debug)]
enum StrategyCommand {
    /// List the strategy chosen for each prefix (nfdc strategy list).
    List,
    /// List the strategies that can be chosen: built in (best-route, multicast, random,
    /// round-robin, asf) and loaded eBPF programs (Kite's kite-strategy/list dataset).
    Available,
    /// Choose the strategy for a prefix.
    Set {
        /// The name prefix.
        prefix: Name,
        /// The strategy: a full name (/localhost/nfd/strategy/best-route[/v=5]) or a short one
        /// (best-route, multicast, asf, …).
        strategy: String,
    },
    /// Remove the strategy choice of a prefix (it then inherits its parent's).
    Unset {
        /// The name prefix (not /).
        prefix: Name,
    },
    /// Load an eBPF strategy program (clang -target bpf object) as
    /// /localhost/kite/strategy/NAME/v=1.
    Load {
        /// The short name.
        name: String,
        /// The ELF object file.
        file: std::path::PathBuf,
        /// Reload: replace a loaded strategy of that name (its prefixes move to the new one).
        #[arg(long)]
        replace: bool,
    },
    /// Unload a loaded strategy (refused while a prefix uses it).
    Unload {
        /// The short name.
        name: String,
    },
}

/// Runs `kite strategy …`.
pub fn run(args: StrategyArgs) -> Result<String> {
    let common = &args.common;
    let mut client = common.connect()?;
    match args.command.unwrap_or(StrategyCommand::List) {
        StrategyCommand::List => {
            let list: Vec<StrategyChoice> = fetch_items(&mut client, "strategy-choice", "list")?;
            let json = Value::Array(
                list.iter()
                    .map(|c| json!({ "prefix": c.name.to_uri(), "strategy": c.strategy.to_uri() }))
                    .collect(),
            );
            Ok(common.output(json, || {
                let mut t = Table::new(&["PREFIX", "STRATEGY"]);
                for c in &list {
                    t.row(vec![c.name.to_uri(), c.strategy.to_uri()]);
                }
                t.render()
            }))
        }
        StrategyCommand::Available => {
            let list: Vec<AvailableStrategy> = fetch_items(&mut client, "kite-strategy", "list")?;
            let json = Value::Array(
                list.iter()
                    .map(|s| json!({ "strategy": s.name.to_uri() }))
                    .collect(),
            );
            Ok(common.output(json, || {
                let mut t = Table::new(&["STRATEGY"]);
                for s in &list {
                    t.row(vec![s.name.to_uri()]);
                }
                t.render()
            }))
        }
        StrategyCommand::Set { prefix, strategy } => {
            let candidates = if strategy.starts_with('/') {
                vec![strategy]
            } else {
                vec![
                    format!("{STRATEGY_PREFIX}{strategy}"),
                    format!("{KITE_STRATEGY_PREFIX}{strategy}"),
                ]
            };
            let mut last = None;
            for full in candidates {
                let strategy: Name = full
                    .parse()
                    .with_context(|| format!("{full:?} is not a name"))?;
                let params = ControlParameters {
                    name: Some(prefix.clone()),
                    strategy: Some(strategy.clone()),
                    ..Default::default()
                };
                let r = match client.command_ok("strategy-choice", "set", &params, super::TIMEOUT) {
                    Err(e @ ClientError::Status { code: 404, .. }) => {
                        last = Some(e);
                        continue;
                    }
                    r => r.context("strategy-choice/set")?,
                };
                let chosen = r.strategy.unwrap_or(strategy).to_uri();
                let json = json!({ "prefix": prefix.to_uri(), "strategy": chosen });
                return Ok(common.output(json, || {
                    format!("strategy-set prefix={prefix} strategy={chosen}\n")
                }));
            }
            let e = last.expect("at least one candidate was tried");
            Err(anyhow::Error::new(e).context("strategy-choice/set"))
        }
        StrategyCommand::Load {
            name,
            file,
            replace,
        } => {
            let path = std::fs::canonicalize(&file)
                .with_context(|| format!("cannot read {}", file.display()))?;
            let params = ControlParameters {
                strategy: Some(kite_name(&name)?),
                uri: Some(path.display().to_string()),
                flags: replace.then_some(kite_mgmt_proto::nfd::strategy_load_flag::REPLACE),
                ..Default::default()
            };
            let r = command_ok(&mut client, "kite-strategy", "load", &params)?;
            let loaded = r.strategy.map(|s| s.to_uri()).unwrap_or_default();
            let json = json!({ "strategy": loaded, "file": path.display().to_string() });
            Ok(common.output(json, || format!("strategy-loaded strategy={loaded}\n")))
        }
        StrategyCommand::Unload { name } => {
            let params = ControlParameters {
                strategy: Some(kite_name(&name)?),
                ..Default::default()
            };
            command_ok(&mut client, "kite-strategy", "unload", &params)?;
            let full = kite_name(&name)?.to_uri();
            Ok(common.output(json!({ "strategy": full }), || {
                format!("strategy-unloaded strategy={full}\n")
            }))
        }
        StrategyCommand::Unset { prefix } => {
            let params = ControlParameters {
                name: Some(prefix.clone()),
                ..Default::default()
            };
            command_ok(&mut client, "strategy-choice", "unset", &params)?;
            Ok(common.output(json!({ "prefix": prefix.to_uri() }), || {
                format!("strategy-unset prefix={prefix}\n")
            }))
        }
    }
}

/// `/localhost/kite/strategy/NAME` for a short name.
fn kite_name(short: &str) -> Result<Name> {
    format!("{KITE_STRATEGY_PREFIX}{short}")
        .parse()
        .with_context(|| format!("{short:?} is not a strategy name"))
}
