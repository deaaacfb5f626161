//! `kite strategy`: strategy choices (`strategy-choice/list`, `set`, `unset`).

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use kite_mgmt::datasets::StrategyChoice;
use kite_mgmt::ControlParameters;
use kite_packet::Name;
use serde_json::{json, Value};

use super::table::Table;
use super::{command_ok, fetch_items, Common};

/// Where strategy names live.
const STRATEGY_PREFIX: &str = "/localhost/nfd/strategy/";

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
    /// List the strategy chosen for each prefix.
    List,
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
        StrategyCommand::Set { prefix, strategy } => {
            let full = if strategy.starts_with('/') {
                strategy
            } else {
                format!("{STRATEGY_PREFIX}{strategy}")
            };
            let strategy: Name = full
                .parse()
                .with_context(|| format!("{full:?} is not a name"))?;
            let params = ControlParameters {
                name: Some(prefix.clone()),
                strategy: Some(strategy.clone()),
                ..Default::default()
            };
            let r = command_ok(&mut client, "strategy-choice", "set", &params)?;
            let chosen = r.strategy.unwrap_or(strategy).to_uri();
            let json = json!({ "prefix": prefix.to_uri(), "strategy": chosen });
            Ok(common.output(json, || {
                format!("strategy-set prefix={prefix} strategy={chosen}\n")
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
