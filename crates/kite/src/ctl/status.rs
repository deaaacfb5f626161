//! `kite status`: the forwarder's general status (`status/general`).

use anyhow::{Context, Result};
use clap::Args;
use kite_mgmt_proto::datasets::ForwarderStatus;
use serde_json::json;

use super::format::{timestamp, uptime};
use super::table::key_values;
use super::{fetch, Common};

/// Arguments of `kite status`.
#[derive(Args, Debug)]
pub struct StatusArgs {
    #[command(flatten)]
    common: Common,
}

/// Prints version, start time, uptime, table sizes and packet counters.
pub fn run(args: StatusArgs) -> Result<String> {
    let mut client = args.common.connect()?;
    let payload = fetch(&mut client, "status", "general")?;
    let s = ForwarderStatus::decode(&payload).context("decoding status/general")?;
    let up = s.current_timestamp.saturating_sub(s.start_timestamp);
    let counters = [
        ("nNameTreeEntries", s.n_name_tree_entries),
        ("nFibEntries", s.n_fib_entries),
        ("nPitEntries", s.n_pit_entries),
        ("nMeasurementsEntries", s.n_measurements_entries),
        ("nCsEntries", s.n_cs_entries),
        ("nInInterests", s.n_in_interests),
        ("nOutInterests", s.n_out_interests),
        ("nInData", s.n_in_data),
        ("nOutData", s.n_out_data),
        ("nInNacks", s.n_in_nacks),
        ("nOutNacks", s.n_out_nacks),
        ("nSatisfiedInterests", s.n_satisfied_interests),
        ("nUnsatisfiedInterests", s.n_unsatisfied_interests),
    ];
    let json = json!({
        "version": s.nfd_version,
        "start_timestamp_ms": s.start_timestamp,
        "current_timestamp_ms": s.current_timestamp,
        "uptime_ms": up,
        "n_name_tree_entries": s.n_name_tree_entries,
        "n_fib_entries": s.n_fib_entries,
        "n_pit_entries": s.n_pit_entries,
        "n_measurements_entries": s.n_measurements_entries,
        "n_cs_entries": s.n_cs_entries,
        "n_in_interests": s.n_in_interests,
        "n_out_interests": s.n_out_interests,
        "n_in_data": s.n_in_data,
        "n_out_data": s.n_out_data,
        "n_in_nacks": s.n_in_nacks,
        "n_out_nacks": s.n_out_nacks,
        "n_satisfied_interests": s.n_satisfied_interests,
        "n_unsatisfied_interests": s.n_unsatisfied_interests,
    });
    Ok(args.common.output(json, || {
        let mut pairs = vec![
            ("version", s.nfd_version.clone()),
            ("startTime", timestamp(s.start_timestamp)),
            ("currentTime", timestamp(s.current_timestamp)),
            ("uptime", uptime(up)),
        ];
        pairs.extend(counters.iter().map(|(k, v)| (*k, v.to_string())));
        key_values(&pairs)
    }))
}
