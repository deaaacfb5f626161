//! Signs per second for each kind at 1 KiB and 8 KiB of content: a whole `Data::sign`
//! (encode + sign), as `kite perf server` does it per packet.

// criterion_group! generates a public function without a doc comment.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use kite_packet::{Data, Name};
use kite_security::{key_name, KeySigner, PrivateKey, SignatureKind};

fn sign(c: &mut Criterion) {
    let mut group = c.benchmark_group("sign");
    let name: Name = "/bench/sign/data/1".parse().unwrap();
    for kind in SignatureKind::ALL {
        let key = PrivateKey::generate(kind).expect("generate a key");
        let key_name = key_name(&name.prefix(2), &key.public_der().unwrap());
        let signer = KeySigner::new(key, Some(key_name));
        for size in [1024usize, 8192] {
            let data = Data::new(name.clone(), vec![0x5Au8; size]);
            group.throughput(Throughput::Elements(1));
            group.bench_with_input(BenchmarkId::new(kind.as_str(), size), &data, |b, d| {
                b.iter(|| d.sign(&signer).expect("sign"))
            });
        }
    }
    group.finish();
}

criterion_group!(benches, sign);
criterion_main!(benches);
