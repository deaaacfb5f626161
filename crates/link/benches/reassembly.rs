//! NDNLPv2 reassembly: an 8000-octet packet from six fragments cut at a 1400-octet MTU, as
//! they arrive from one receive buffer, in order and in reverse. `cargo bench -p kite-link`.

// criterion_group! generates a public function without a doc comment.
#![allow(missing_docs)]

use std::time::Instant;

use bytes::Bytes;
use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use kite_link::reassembly::{Endpoint, Reassembler, ReassemblyLimits};
use kite_link::FaceId;
use kite_packet::{LpHeader, LpPacket};

/// The fragments of one 8000-octet packet, slices of one 64 KiB receive buffer.
fn fragments() -> Vec<LpPacket> {
    let rx = Bytes::from(vec![0xA5; 64 << 10]);
    let sizes = [1400, 1400, 1400, 1400, 1400, 1000];
    let mut at = 0;
    sizes
        .iter()
        .enumerate()
        .map(|(i, &len)| {
            let frag = LpPacket {
                header: LpHeader {
                    sequence: Some(1000 + i as u64),
                    frag_index: Some(i as u64),
                    frag_count: Some(sizes.len() as u64),
                    ..LpHeader::default()
                },
                fragment: Some(rx.slice(at..at + len)),
            };
            at += len;
            frag
        })
        .collect()
}

fn reassembly(c: &mut Criterion) {
    let mut g = c.benchmark_group("reassembly");
    g.throughput(Throughput::Elements(1));
    let now = Instant::now();
    for (label, reverse) in [("in_order", false), ("reverse", true)] {
        let mut frags = fragments();
        if reverse {
            frags.reverse();
        }
        let mut r = Reassembler::new(ReassemblyLimits::default());
        g.bench_function(label, |b| {
            b.iter(|| {
                let mut whole = None;
                for f in &frags {
                    whole = r.add(FaceId(300), Endpoint::Peer, f.clone(), now).unwrap();
                }
                black_box(whole.expect("the last fragment completes it"))
            })
        });
    }
    g.finish();
}

criterion_group!(benches, reassembly);
criterion_main!(benches);
