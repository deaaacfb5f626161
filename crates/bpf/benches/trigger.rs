//! Per-trigger overhead of an eBPF strategy against the native one: one Interest/Data
//! exchange through a forwarding thread (two triggers: Interest and Data) with best-route
//! native, eBPF JIT and eBPF interpreted. The difference to native is the cost of building the
//! context, running the program and applying its actions. Also the load (verify + JIT) time.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, Criterion};
use kite_bpf::Engine;
use kite_fw::fib::StrategyId;
use kite_fw::forwarder::{InData, InInterest};
use kite_fw::out::Out;
use kite_testkit::forwarder::*;

/// One exchange from packets decoded beforehand (no encoding or signing in the loop).
struct Exchange {
    interest: InInterest,
    data: InData,
    out: Vec<Out>,
}

impl Exchange {
    fn new() -> Self {
        Exchange {
            interest: in_interest(APP, "/p/x", 7),
            data: in_data(UP1, "/p/x"),
            out: Vec::with_capacity(8),
        }
    }

    fn run(&mut self, h: &mut Harness) {
        self.out.clear();
        h.fwd
            .on_interest(h.now, self.interest.clone(), &mut self.out);
        let mut data = self.data.clone();
        data.token = token_to(&self.out, UP1);
        self.out.clear();
        h.fwd.on_data(h.now, data, &mut self.out);
        assert_eq!(self.out.len(), 1);
    }
}

fn setup(choose: impl FnOnce(&mut Harness) -> StrategyId) -> Harness {
    let mut h = Harness::with_three_upstreams();
    h.route("/p", UP1, 10);
    h.route("/p", UP2, 20);
    let id = choose(&mut h);
    h.set_strategy("/p", id);
    h
}

fn bench(c: &mut Criterion) {
    let elf = std::fs::read(strategies_dir().join("best-route.o")).unwrap();
    let mut g = c.benchmark_group("best-route exchange (2 triggers)");
    let mut x = Exchange::new();
    let mut native = setup(|h| {
        h.strategies
            .find(&name("/localhost/nfd/strategy/best-route"))
            .unwrap()
    });
    g.bench_function("native", |b| b.iter(|| x.run(&mut native)));
    for engine in [Engine::Jit, Engine::Interpreter] {
        let s = kite_bpf::load("br", &elf, engine).unwrap();
        let mut h = setup(|h| h.strategies.add(s).unwrap());
        g.bench_function(format!("ebpf {engine:?}"), |b| b.iter(|| x.run(&mut h)));
    }
    g.finish();
    c.bench_function("load best-route.o (verify + JIT)", |b| {
        b.iter(|| kite_bpf::load("br", &elf, Engine::Jit).unwrap())
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
