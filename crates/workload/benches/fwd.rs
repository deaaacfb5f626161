//! One forwarding thread's exchange rate, in-process (the criterion counterpart of
//! `kite bench fwd`): bursts of 32 Interest/Data exchanges, each doing the decode, dispatch,
//! pipelines and LP encoding the daemon's thread does. `cargo bench -p kite-workload --bench fwd`.

// criterion_group! generates a public function without a doc comment.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use kite_workload::{Workload, WorkloadConfig};

fn scenario(c: &mut Criterion, group: &str, configs: Vec<(String, WorkloadConfig)>) {
    let mut g = c.benchmark_group(group);
    for (label, config) in &configs {
        let mut w = Workload::new(config).expect("valid scenario");
        g.throughput(Throughput::Elements(config.burst as u64));
        g.bench_function(BenchmarkId::from_parameter(label), |b| {
            b.iter(|| w.burst().expect("exchange"))
        });
        assert_eq!(
            w.report().nacks,
            0,
            "{label}: the scenario must not be Nacked"
        );
    }
    g.finish();
}

fn name_length(c: &mut Criterion) {
    let configs = [4, 8, 16]
        .into_iter()
        .map(|n| {
            let config = WorkloadConfig {
                name_len: n,
                ..WorkloadConfig::default()
            };
            (format!("{n}_components"), config)
        })
        .collect();
    scenario(c, "fwd_name_length", configs);
}

fn fib_size(c: &mut Criterion) {
    let configs = [10_000usize, 100_000, 1_000_000]
        .into_iter()
        .map(|n| {
            let config = WorkloadConfig {
                fib_entries: n,
                ..WorkloadConfig::default()
            };
            (format!("fib_{n}"), config)
        })
        .collect();
    scenario(c, "fwd_fib_size", configs);
}

fn cs_hits(c: &mut Criterion) {
    let mut configs = Vec::new();
    for prefix_match in [false, true] {
        for hit in [0u8, 50, 90] {
            let config = WorkloadConfig {
                cs_hit_percent: hit,
                prefix_match,
                ..WorkloadConfig::default()
            };
            let kind = if prefix_match { "prefix" } else { "exact" };
            configs.push((format!("{kind}_hit{hit}"), config));
        }
    }
    scenario(c, "fwd_cs", configs);
}

fn payload(c: &mut Criterion) {
    let configs = [100usize, 1000, 8000]
        .into_iter()
        .map(|p| {
            let config = WorkloadConfig {
                payload: p,
                ..WorkloadConfig::default()
            };
            (format!("payload_{p}"), config)
        })
        .collect();
    scenario(c, "fwd_payload", configs);
}

criterion_group!(benches, name_length, fib_size, cs_hits, payload);
criterion_main!(benches);
