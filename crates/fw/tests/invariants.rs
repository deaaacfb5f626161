//! Property test: random interleavings of Interests, Data, Nacks and time never break the
//! forwarding thread's table invariants, and once every lifetime has passed nothing is left
//! but cached Data.

use core::time::Duration;

use kite_fw::face::{FaceId, FaceScope, LinkType};
use kite_fw::fib::{FibConfig, FibWriter};
use kite_fw::forwarder::{Forwarder, ForwarderConfig, InData, InInterest, InNack};
use kite_fw::hash::NameHasher;
use kite_fw::out::Out;
use kite_fw::pcct::{PcctConfig, Selectors};
use kite_fw::strategy::{FaceInfo, StrategyTable};
use kite_fw::time::Time;
use kite_packet::{
    Data, DataView, DigestSha256, Interest, InterestView, NackReason, Name, Nonce, PitToken,
};
use proptest::prelude::*;

fn hasher() -> NameHasher {
    NameHasher::with_key(5, 6)
}
const CONSUMERS: [FaceId; 3] = [FaceId(300), FaceId(301), FaceId(302)];
const UPSTREAMS: [FaceId; 2] = [FaceId(400), FaceId(401)];
const NAMES: [&str; 6] = ["/a", "/a/b", "/a/b/c", "/m/x", "/m/x/y", "/z"];

#[derive(Debug, Clone)]
enum Op {
    Interest {
        face: usize,
        name: usize,
        nonce: u32,
        mbf: bool,
        cbp: bool,
        lifetime: u64,
    },
    /// Data for a name; `token`: 0 the last token sent upstream, 1 none, 2 a forged one.
    Data {
        face: usize,
        name: usize,
        token: u8,
        freshness: u64,
    },
    Nack {
        face: usize,
        name: usize,
        nonce: u32,
        reason: u64,
    },
    Advance {
        ms: u64,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..3usize, 0..6usize, 0..8u32, any::<bool>(), any::<bool>(), 10..3000u64).prop_map(
            |(face, name, nonce, mbf, cbp, lifetime)| Op::Interest { face, name, nonce, mbf, cbp, lifetime }
        ),
        3 => (0..2usize, 0..6usize, 0..3u8, 0..2000u64)
            .prop_map(|(face, name, token, freshness)| Op::Data { face, name, token, freshness }),
        1 => (0..2usize, 0..6usize, 0..8u32, prop::sample::select(vec![50u64, 100, 150]))
            .prop_map(|(face, name, nonce, reason)| Op::Nack { face, name, nonce, reason }),
        2 => (0..700u64).prop_map(|ms| Op::Advance { ms }),
    ]
}

struct World {
    fwd: Forwarder,
    _fib: FibWriter,
    now: Time,
    last_token: Option<PitToken>,
}

impl World {
    fn new() -> Self {
        let (mut fib, readers) =
            FibWriter::new(hasher(), FibConfig::default(), StrategyTable::DEFAULT);
        let strategies = StrategyTable::builtin();
        fib.add_nexthop(&name("/a"), UPSTREAMS[0], 10).unwrap();
        fib.add_nexthop(&name("/a"), UPSTREAMS[1], 20).unwrap();
        fib.add_nexthop(&name("/m"), UPSTREAMS[0], 10).unwrap();
        fib.add_nexthop(&name("/m"), UPSTREAMS[1], 10).unwrap();
        let mc = strategies
            .find(&name("/localhost/nfd/strategy/multicast"))
            .unwrap();
        fib.set_strategy(&name("/m"), mc).unwrap();
        fib.publish();
        let config = ForwarderConfig {
            pcct: PcctConfig {
                capacity: 16,
                pit_capacity: 8,
                cs_capacity: 4,
                ..PcctConfig::default()
            },
            ..ForwarderConfig::default()
        };
        let now = Time::from_millis(10);
        let mut fwd = Forwarder::new(2, config, readers.reader(), strategies, hasher(), now);
        for f in CONSUMERS {
            fwd.add_face(
                f,
                FaceInfo {
                    scope: FaceScope::Local,
                    link_type: LinkType::PointToPoint,
                },
            );
        }
        for f in UPSTREAMS {
            fwd.add_face(
                f,
                FaceInfo {
                    scope: FaceScope::NonLocal,
                    link_type: LinkType::PointToPoint,
                },
            );
        }
        World {
            fwd,
            _fib: fib,
            now,
            last_token: None,
        }
    }

    fn apply(&mut self, op: &Op) {
        let mut out = Vec::new();
        match *op {
            Op::Interest {
                face,
                name: n,
                nonce,
                mbf,
                cbp,
                lifetime,
            } => {
                let mut i = Interest::new(name(NAMES[n]));
                i.nonce = Some(Nonce::from(nonce));
                i.must_be_fresh = mbf;
                i.can_be_prefix = cbp;
                i.lifetime = Some(lifetime);
                let view = InterestView::decode(i.encode()).unwrap();
                let pkt = InInterest {
                    hashes: hasher().prefix_hashes(&view.name),
                    interest: view,
                    face: CONSUMERS[face],
                    token: Some(PitToken::from_u64(u64::from(nonce))),
                    next_hop: None,
                    congestion_mark: 0,
                    cs_probe: None,
                };
                self.fwd.on_interest(self.now, pkt, &mut out);
            }
            Op::Data {
                face,
                name: n,
                token,
                freshness,
            } => {
                let mut d = Data::new(name(NAMES[n]), &b"x"[..]);
                d.meta.freshness_period = Some(freshness);
                let token = match token {
                    0 => self.last_token,
                    1 => None,
                    _ => Some(PitToken::from_u64(0x0200_0000_0000_0003)),
                };
                let pkt = InData {
                    data: DataView::decode(d.sign(&DigestSha256).unwrap()).unwrap(),
                    hashes: None,
                    face: UPSTREAMS[face],
                    token,
                    congestion_mark: 0,
                    no_cache: false,
                    own_buffer: 0,
                    rehomed: false,
                };
                self.fwd.on_data(self.now, pkt, &mut out);
            }
            Op::Nack {
                face,
                name: n,
                nonce,
                reason,
            } => {
                let mut i = Interest::new(name(NAMES[n]));
                i.nonce = Some(Nonce::from(nonce));
                let view = InterestView::decode(i.encode()).unwrap();
                let pkt = InNack {
                    hashes: hasher().prefix_hashes(&view.name),
                    interest: view,
                    reason: NackReason(reason),
                    face: UPSTREAMS[face],
                    token: self.last_token,
                };
                self.fwd.on_nack(self.now, pkt, &mut out);
            }
            Op::Advance { ms } => {
                self.now = self.now + Duration::from_millis(ms);
                self.fwd.advance(self.now, &mut out);
            }
        }
        for o in &out {
            if let Out::Interest { token, .. } = o {
                self.last_token = Some(*token);
            }
        }
    }

    /// The invariants that must hold after every operation.
    fn check(&self) -> Result<(), TestCaseError> {
        let t = self.fwd.pcct();
        let pits: Vec<(u32, Selectors)> = t.pit_slots().collect();
        prop_assert_eq!(pits.len(), t.pit_len());
        prop_assert!(t.cs_len() <= t.cs_capacity());
        // every PIT entry has its expiry timer
        prop_assert!(self.fwd.timers_pending() >= t.pit_len());
        for &(slot, sel) in &pits {
            // token index and name index agree on the entry
            prop_assert_eq!(t.resolve(&t.token(slot, sel)), Some((slot, sel)));
            let e = t.entry(slot).unwrap();
            prop_assert_eq!(t.find(&e.name, e.name_hash(), e.hint.as_ref()), Some(slot));
            let pit = t.pit(slot, sel).unwrap();
            prop_assert!(!pit.downstreams.is_empty());
            prop_assert_eq!(Selectors::of(&pit.interest), sel);
        }
        // every entry holds something
        let cs_slots: Vec<u32> = t.cs_slots().collect();
        prop_assert_eq!(cs_slots.len(), t.cs_len());
        prop_assert!(t.len() <= t.cs_len() + t.pit_len());
        Ok(())
    }
}

fn name(uri: &str) -> Name {
    uri.parse().unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn random_traffic_keeps_the_tables_consistent_and_leaks_nothing(ops in proptest::collection::vec(op(), 1..80)) {
        let mut w = World::new();
        for op in &ops {
            w.apply(op);
            w.check()?;
        }
        w.apply(&Op::Advance { ms: 10_000 });
        w.check()?;
        let t = w.fwd.pcct();
        prop_assert_eq!(t.pit_len(), 0);
        prop_assert_eq!(w.fwd.timers_pending(), 0);
        prop_assert_eq!(t.len(), t.cs_len(), "only cached Data remains");
    }
}
