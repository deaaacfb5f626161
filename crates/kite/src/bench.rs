//! `kite bench`: performance measurements.

use std::time::Duration;

use anyhow::{anyhow, Context, Result};
use clap::{Args, Subcommand};
use kite_fw::strategy::{Strategy, StrategyTable};
use kite_packet::Name;
use kite_workload::{self as workload, WorkloadConfig};
use serde_json::json;

/// Which benchmark.
#[derive(Subcommand)]
pub enum BenchCommand {
    /// One forwarding thread in-process: Interests in, Interests out to a virtual producer,
    /// Data back, Data out; every exchange decodes, hashes, dispatches, runs the pipelines and
    /// encodes the outgoing LP headers, with no sockets. Reports exchanges per second.
    Fwd(FwdArgs),
    /// The whole forwarder in-process (I/O and forwarding threads, rings, parking), loaded
    /// through unix sockets by a windowed consumer and a producer. Reports exchanges/s.
    Daemon(crate::bench_daemon::DaemonArgs),
    /// A hostile face: floods a running forwarder (its unix socket, or --udp) with Interests
    /// nobody answers, each for a new name with the longest lifetime, as fast as the socket
    /// takes them, under a prefix it registers to a producer that never answers. Run it
    /// beside `kite perf client` to measure what a flood costs an ordinary consumer
    /// (bench/flood.sh).
    Flood(crate::bench_daemon::flood::FloodArgs),
}

/// Parameters of `kite bench fwd`.
#[derive(Args)]
pub struct FwdArgs {
    /// Components per Interest name (at least 3).
    #[arg(long, default_value_t = 4)]
    name_len: usize,
    /// FIB entries (prefixes /f0 .. /fN-1, every Interest under a different one).
    #[arg(long = "fib", default_value_t = 10_000)]
    fib_entries: usize,
    /// Percentage of Interests answered by the Content Store (0-100).
    #[arg(long = "cs-hit", default_value_t = 0)]
    cs_hit_percent: u8,
    /// CanBePrefix Interests answered by Data with a longer name (prefix match), instead of
    /// exact names.
    #[arg(long)]
    prefix_match: bool,
    /// With exact names: about one Interest in N is a CanBePrefix one answered by a longer
    /// Data, so the Content Store keeps its ordered index of names while the rest are exact
    /// (a router that sees prefix lookups now and then). 0: none.
    #[arg(long, default_value_t = 0, conflicts_with = "prefix_match")]
    prefix_every: u8,
    /// Content octets per Data.
    #[arg(long, default_value_t = 1000)]
    payload: usize,
    /// Packets per burst (the forwarding thread's batch).
    #[arg(long, default_value_t = 32)]
    burst: usize,
    /// How long to measure, e.g. 10s, 500ms, 2m.
    #[arg(long, default_value = "5s", value_parser = crate::duration::parse_duration)]
    duration: Duration,
    /// Strategy: a full name (version optional) or a short built-in one (best-route,
    /// multicast, random, round-robin).
    #[arg(long, default_value = "/localhost/nfd/strategy/best-route")]
    strategy: String,
    /// Run this eBPF strategy program (clang -target bpf object) instead of --strategy.
    #[arg(long, conflicts_with = "strategy")]
    strategy_file: Option<std::path::PathBuf>,
    /// Content Store capacity of the thread, in entries.
    #[arg(long, default_value_t = 1 << 15)]
    cs_capacity: usize,
    /// Skip the forwarding tables and pipelines (no PCCT, FIB, strategy, CS or timers): each
    /// Interest goes straight to the producer and each Data straight back. Measures the floor
    /// an exchange costs outside the tables (decodes, hashes, dispatch, LP encoding, the
    /// virtual producer). Not with --cs-hit.
    #[arg(long)]
    passthrough: bool,
    /// Print one JSON object on standard output and nothing else (the human summary goes to
    /// standard error), for scripts.
    #[arg(long)]
    json: bool,
}

/// Runs a benchmark and returns its report.
pub fn run(cmd: BenchCommand) -> Result<String> {
    match cmd {
        BenchCommand::Fwd(a) => fwd(a),
        BenchCommand::Daemon(a) => crate::bench_daemon::run(a),
        BenchCommand::Flood(a) => crate::bench_daemon::flood::run(a),
    }
}

fn fwd(a: FwdArgs) -> Result<String> {
    if a.burst == 0 || a.burst > 1024 {
        return Err(anyhow!("--burst must be from 1 to 1024"));
    }
    let mut strategies = StrategyTable::builtin();
    let (strategy, strategy_label) = match &a.strategy_file {
        Some(file) => {
            let elf = std::fs::read(file).with_context(|| format!("{}", file.display()))?;
            let loaded = kite_bpf::load("bench", &elf, kite_bpf::Engine::Jit)
                .with_context(|| format!("{}", file.display()))?;
            let name = loaded.name().clone();
            strategies
                .add(loaded)
                .ok_or_else(|| anyhow!("strategy table full"))?;
            (name, file.display().to_string())
        }
        None => (builtin_name(&a.strategy)?, a.strategy.clone()),
    };
    let config = WorkloadConfig {
        name_len: a.name_len,
        fib_entries: a.fib_entries,
        cs_hit_percent: a.cs_hit_percent,
        prefix_match: a.prefix_match,
        prefix_every: a.prefix_every,
        payload: a.payload,
        burst: a.burst,
        duration: a.duration,
        strategy,
        strategies,
        cs_capacity: a.cs_capacity,
        passthrough: a.passthrough,
    };
    eprintln!(
        "kite bench fwd: building a FIB of {} entries, then measuring for {:?}",
        a.fib_entries, a.duration
    );
    let report = workload::run(&config, &mut |elapsed, rate| {
        eprintln!(
            "  {:>5.1}s  {:>10.0} exchanges/s",
            elapsed.as_secs_f64(),
            rate
        );
    })
    .map_err(|e| anyhow!(e))?;
    let summary = json!({
        "benchmark": "fwd",
        "exchanges_per_sec": report.exchanges_per_sec.round(),
        "p50_ns": report.p50_ns,
        "p99_ns": report.p99_ns,
        "exchanges": report.exchanges,
        "cs_hits": report.cs_hits,
        "nacks": report.nacks,
        "seconds": report.elapsed.as_secs_f64(),
        "bytes_out": report.bytes_out,
        "fib_bytes_per_entry": report.fib_bytes_per_entry.round(),
        "pit_bytes_per_entry": report.pit_bytes_per_entry,
        "cs_bytes_per_entry": report.cs_bytes_per_entry,
        "name_len": a.name_len,
        "fib_entries": a.fib_entries,
        "cs_hit_percent": a.cs_hit_percent,
        "prefix_match": a.prefix_match,
        "prefix_every": a.prefix_every,
        "payload": a.payload,
        "burst": a.burst,
        "strategy": strategy_label,
        "strategy_backend": if a.strategy_file.is_some() { "ebpf" } else { "native" },
        "cs_capacity": a.cs_capacity,
        "passthrough": a.passthrough,
    });
    let text = format!(
        "{:.0} exchanges/s per thread (p50 {} ns, p99 {} ns per exchange), {} exchanges in {:.1} s, \
         CS hits {}, Nacks {}; memory per entry: FIB {:.0} B, PIT {} B, CS {} B\n",
        report.exchanges_per_sec,
        report.p50_ns,
        report.p99_ns,
        report.exchanges,
        report.elapsed.as_secs_f64(),
        report.cs_hits,
        report.nacks,
        report.fib_bytes_per_entry,
        report.pit_bytes_per_entry,
        report.cs_bytes_per_entry
    );
    Ok(if a.json {
        // Standard output carries the JSON alone; the human line goes to standard error.
        eprint!("{text}");
        format!("{summary}\n")
    } else {
        text
    })
}

/// The full name of a built-in strategy given by full or short name.
fn builtin_name(s: &str) -> Result<Name> {
    let full = match s {
        "round-robin" => "/localhost/kite/strategy/round-robin".to_string(),
        short if !short.starts_with('/') => format!("/localhost/nfd/strategy/{short}"),
        full => full.to_string(),
    };
    full.parse().map_err(|e| anyhow!("--strategy {s:?}: {e}"))
}
