//! `kite fib`: the FIB (`fib/list`).

use anyhow::Result;
use clap::{Args, Subcommand};
use kite_mgmt_proto::datasets::FibEntry;
use serde_json::{json, Value};

use super::table::Table;
use super::{fetch_items, Common};

/// Arguments of `kite fib`.
#[derive(Args, Debug)]
pub struct FibArgs {
    #[command(flatten)]
    common: Common,
    #[command(subcommand)]
    command: Option<FibCommand>,
}

/// `kite fib` subcommands (`list` when none is given).
#[derive(Subcommand, Debug)]
enum FibCommand {
    /// List every FIB entry with its nexthops.
    List,
}

/// Runs `kite fib …`.
pub fn run(args: FibArgs) -> Result<String> {
    let FibCommand::List = args.command.unwrap_or(FibCommand::List);
    let mut client = args.common.connect()?;
    let fib: Vec<FibEntry> = fetch_items(&mut client, "fib", "list")?;
    let json = Value::Array(
        fib.iter()
            .map(|e| {
                let hops: Vec<Value> = e
                    .next_hops
                    .iter()
                    .map(|h| json!({ "face_id": h.face_id, "cost": h.cost }))
                    .collect();
                json!({ "prefix": e.name.to_uri(), "next_hops": hops })
            })
            .collect(),
    );
    Ok(args.common.output(json, || {
        let mut t = Table::new(&["PREFIX", "NEXTHOPS"]);
        for e in &fib {
            let hops: Vec<String> = e
                .next_hops
                .iter()
                .map(|h| format!("{} (cost={})", h.face_id, h.cost))
                .collect();
            t.row(vec![e.name.to_uri(), hops.join(", ")]);
        }
        t.render()
    }))
}
