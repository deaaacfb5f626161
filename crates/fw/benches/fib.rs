//! FIB longest-prefix match: time per lookup of a 4-component name as the FIB grows from 10^4
//! to 10^6 entries (the NDN-DPDK paper, section 7.3, varies the FIB size the same way).
//! `cargo bench -p kite-fw --bench fib`.
//!
//! Entries are 2-component prefixes `/a<i mod 97>/b<i>`; a hit looks up
//! `/a<i mod 97>/b<i>/c/d` (probes depths 4, 3, 2), a miss `/z<i>/b<i>/c/d` (probes 4, 3, 2, 1
//! and returns the root). Lookup names are spread over the whole FIB in a fixed random order,
//! so large FIBs are measured out of cache, as a busy forwarder sees them. One guard serves
//! every lookup, as one burst would.

// criterion_group! generates a public function without a doc comment.
#![allow(missing_docs)]

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion};
use kite_fw::face::FaceId;
use kite_fw::fib::{FibConfig, FibWriter, StrategyId};
use kite_fw::hash::{NameHasher, NameHashes};
use kite_packet::Name;

fn hasher() -> NameHasher {
    NameHasher::with_key(0x6b69, 0x7465)
}
/// Distinct names looked up in turn.
const LOOKUPS: usize = 1 << 16;

fn entry(i: u64) -> Name {
    format!("/a{}/b{i}", i % 97).parse().expect("valid name")
}

/// `LOOKUPS` names with their hashes, for entries picked by a fixed pseudo-random sequence.
fn lookups(entries: u64, hit: bool) -> Vec<(Name, NameHashes)> {
    let mut x = 0x9e37_79b9_7f4a_7c15_u64;
    (0..LOOKUPS)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let i = x % entries;
            let uri = if hit {
                format!("/a{}/b{i}/c/d", i % 97)
            } else {
                format!("/z{i}/b{i}/c/d")
            };
            let name: Name = uri.parse().expect("valid name");
            let hashes = hasher().prefix_hashes(&name);
            (name, hashes)
        })
        .collect()
}

fn lpm(c: &mut Criterion) {
    let mut g = c.benchmark_group("fib_lpm_4c");
    for entries in [10_000u64, 100_000, 1_000_000] {
        let (mut w, factory) = FibWriter::new(hasher(), FibConfig::default(), StrategyId(0));
        for i in 0..entries {
            w.add_nexthop(&entry(i), FaceId(256 + (i % 64)), 1)
                .expect("short prefix");
        }
        w.publish();
        let reader = factory.reader();
        for hit in [true, false] {
            let names = lookups(entries, hit);
            let label = if hit { "hit" } else { "miss" };
            let guard = reader.enter().expect("writer alive");
            g.bench_with_input(BenchmarkId::new(label, entries), &names, |b, names| {
                let mut k = 0;
                b.iter(|| {
                    let (name, hashes) = &names[k];
                    k = (k + 1) % LOOKUPS;
                    black_box(guard.lpm(name, hashes).id)
                })
            });
        }
    }
    g.finish();
}

criterion_group!(benches, lpm);
criterion_main!(benches);
