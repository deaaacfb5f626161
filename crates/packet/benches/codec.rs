//! Codec benchmarks: forwarder-view vs full decode, Data encode with a digest signature, and
//! decode time as names grow. `cargo bench -p kite-packet`; results go to docs/performance.md.
//!
//! Decoders take the received buffer by value, as the forwarder hands it over; the clone that
//! makes each input and the drop of each result happen outside the timed section.

// criterion_group! generates a public function without a doc comment.
#![allow(missing_docs)]

use bytes::Bytes;
use criterion::{
    black_box, criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput,
};
use kite_packet::{
    Data, DataView, DigestSha256, Interest, InterestView, LpHeader, LpPacket, Name, Nonce, PitToken,
};

/// An Interest as a consumer sends it: name of `n` 3-octet generic components (5 octets each
/// encoded, so 4 components make a 20-octet name), CanBePrefix off, Nonce, lifetime.
fn interest_wire(n: usize) -> Bytes {
    let mut name = Name::root();
    for i in 0..n {
        name = name.append_generic(format!("c{:02}", i % 100).as_bytes());
    }
    let mut i = Interest::new(name);
    i.nonce = Some(Nonce::from(0x1234_5678));
    i.lifetime = Some(4000);
    shared(i.encode())
}

/// A Data as a producer sends it: 4-component name, FreshnessPeriod, `payload` octets of
/// Content, DigestSha256 signature.
fn data_wire(payload: usize) -> Bytes {
    let mut d = Data::new("/c00/c01/c02/c03".parse().unwrap(), vec![0xA5; payload]);
    d.meta.freshness_period = Some(10_000);
    shared(d.sign(&DigestSha256).unwrap())
}

/// A buffer already in the shared (refcounted) state a receive buffer is in, so cloning and
/// slicing it costs an atomic increment and no allocation, as in the forwarder.
fn shared(b: Bytes) -> Bytes {
    let _promote = b.clone();
    b
}

fn decode(c: &mut Criterion) {
    let mut g = c.benchmark_group("decode");
    let i = interest_wire(4);
    let d = data_wire(1000);
    g.bench_function("interest_view_4c", |b| {
        b.iter_batched(
            || i.clone(),
            |w| InterestView::decode(w).unwrap(),
            BatchSize::SmallInput,
        )
    });
    g.bench_function("interest_full_4c", |b| {
        b.iter_batched(
            || i.clone(),
            |w| Interest::decode(w).unwrap(),
            BatchSize::SmallInput,
        )
    });
    g.bench_function("data_view_1000B", |b| {
        b.iter_batched(
            || d.clone(),
            |w| DataView::decode(w).unwrap(),
            BatchSize::SmallInput,
        )
    });
    g.bench_function("data_full_1000B", |b| {
        b.iter_batched(
            || d.clone(),
            |w| Data::decode(w).unwrap(),
            BatchSize::SmallInput,
        )
    });
    let framed = shared(
        LpPacket {
            header: LpHeader {
                pit_token: Some(PitToken::from_u64(42)),
                ..LpHeader::default()
            },
            fragment: Some(d.clone()),
        }
        .encode(),
    );
    g.bench_function("lp_frame_then_data_view_1000B", |b| {
        b.iter_batched(
            || framed.clone(),
            |w| {
                let lp = LpPacket::decode(w).unwrap();
                DataView::decode(lp.fragment.unwrap()).unwrap()
            },
            BatchSize::SmallInput,
        )
    });
    g.finish();
}

fn name_length(c: &mut Criterion) {
    let mut g = c.benchmark_group("interest_view_by_name_length");
    for n in [4usize, 8, 16, 32] {
        let w = interest_wire(n);
        g.bench_with_input(BenchmarkId::from_parameter(n), &w, |b, w| {
            b.iter_batched(
                || w.clone(),
                |w| InterestView::decode(w).unwrap(),
                BatchSize::SmallInput,
            )
        });
    }
    g.finish();
}

fn encode(c: &mut Criterion) {
    let mut g = c.benchmark_group("encode");
    let mut d = Data::new("/c00/c01/c02/c03".parse().unwrap(), vec![0xA5; 1000]);
    d.meta.freshness_period = Some(10_000);
    let len = d.sign(&DigestSha256).unwrap().len();
    g.throughput(Throughput::Bytes(len as u64));
    g.bench_function("data_1000B_digest_sha256", |b| {
        b.iter(|| black_box(&d).sign(&DigestSha256).unwrap())
    });
    g.bench_function("data_1000B_presigned", |b| {
        b.iter(|| black_box(&d).encode())
    });
    let header = LpHeader {
        pit_token: Some(PitToken::from_u64(42)),
        congestion_mark: Some(1),
        ..LpHeader::default()
    };
    let mut out = Vec::with_capacity(64);
    g.throughput(Throughput::Elements(1));
    g.bench_function("lp_header_around_packet", |b| {
        b.iter(|| {
            out.clear();
            black_box(&header).encode_header(Some(black_box(len)), &mut out);
            out.len()
        })
    });
    g.finish();
}

criterion_group!(benches, decode, name_length, encode);

criterion_main!(benches);
