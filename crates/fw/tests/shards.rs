//! Several forwarding threads behind a dispatcher that routes as the daemon's input stage does
//! (Interests by the NDT, Data and Nacks by token, token-less Data to the threads of its short
//! prefixes, packets one thread hands another), checked against a model of NFD's CS and PIT:
//! for random sequences of exact, CanBePrefix and MustBeFresh Interests for short and long
//! names, and the Data that answer them, every Interest is answered the way NFD answers it —
//! from the CS, forwarded, aggregated or Nacked — and each Data reaches the downstreams NFD
//! sends it to.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Arc;

use core::time::Duration;

use kite_fw::face::{FaceId, FaceScope, LinkType};
use kite_fw::fib::{FibConfig, FibWriter};
use kite_fw::forwarder::{CsProbe, Forwarder, ForwarderConfig, InData, InInterest};
use kite_fw::hash::NameHasher;
use kite_fw::ndt::{Ndt, ShardSet};
use kite_fw::out::{Out, ToShard};
use kite_fw::pcct::PcctConfig;
use kite_fw::strategy::{FaceInfo, StrategyTable};
use kite_fw::time::Time;
use kite_packet::{
    Data, DataView, DigestSha256, Interest, InterestView, NackReason, Name, Nonce, PitToken,
};
use proptest::prelude::*;

fn hasher() -> NameHasher {
    NameHasher::with_key(7, 9)
}

fn name(uri: &str) -> Name {
    uri.parse().unwrap()
}

const CONSUMERS: [FaceId; 3] = [FaceId(300), FaceId(301), FaceId(302)];
/// Where `/a` and `/s` are routed (a remote upstream that echoes tokens).
const UP: FaceId = FaceId(400);
/// Where `/b` is routed (a local producer that echoes no token).
const PRODUCER: FaceId = FaceId(401);

/// One packet waiting for a thread.
enum Queued {
    Interest(InInterest),
    Data(InData),
}

/// Forwarding threads sharing one FIB, and the dispatch between them.
struct Shards {
    threads: Vec<Forwarder>,
    ndt: Arc<Ndt>,
    _fib: FibWriter,
    now: Time,
}

impl Shards {
    fn new(n: u8) -> Self {
        let (mut fib, readers) =
            FibWriter::new(hasher(), FibConfig::default(), StrategyTable::DEFAULT);
        for (prefix, face) in [("/a", UP), ("/s", UP), ("/b", PRODUCER)] {
            fib.add_nexthop(&name(prefix), face, 10).unwrap();
        }
        fib.publish();
        let ndt = Arc::new(Ndt::new(16, n, 2));
        let config = ForwarderConfig {
            pcct: PcctConfig {
                capacity: 1 << 12,
                pit_capacity: 1 << 10,
                cs_capacity: 1 << 10,
                ..PcctConfig::default()
            },
            shards: (n > 1).then(|| Arc::new(ShardSet::new(ndt.clone()))),
            ..ForwarderConfig::default()
        };
        let now = Time::from_millis(10);
        let threads = (0..n)
            .map(|t| {
                let mut fwd = Forwarder::new(
                    t,
                    config.clone(),
                    readers.reader(),
                    StrategyTable::builtin(),
                    hasher(),
                    now,
                );
                let local = FaceInfo {
                    scope: FaceScope::Local,
                    link_type: LinkType::PointToPoint,
                };
                for f in CONSUMERS.into_iter().chain([PRODUCER]) {
                    fwd.add_face(f, local);
                }
                let remote = FaceInfo {
                    scope: FaceScope::NonLocal,
                    ..local
                };
                fwd.add_face(UP, remote);
                fwd
            })
            .collect();
        Shards {
            threads,
            ndt,
            _fib: fib,
            now,
        }
    }

    /// Runs `first` and everything the threads hand each other until nothing is left;
    /// returns what they send out.
    fn run(&mut self, first: Vec<(usize, Queued)>) -> Vec<Out> {
        let mut queue: VecDeque<(usize, Queued)> = first.into();
        let mut sent = Vec::new();
        while let Some((t, q)) = queue.pop_front() {
            let mut out = Vec::new();
            let fwd = &mut self.threads[t];
            match q {
                Queued::Interest(i) => fwd.on_interest(self.now, i, &mut out),
                Queued::Data(d) => fwd.on_data(self.now, d, &mut out),
            }
            for o in out {
                match o {
                    Out::Shard { shard, packet } => {
                        let q = match *packet {
                            ToShard::Interest(i) => Queued::Interest(i),
                            ToShard::Data(d) => Queued::Data(d),
                        };
                        queue.push_back((usize::from(shard), q));
                    }
                    o => sent.push(o),
                }
            }
        }
        sent
    }

    /// An Interest from `face`, dispatched as the input stage does.
    fn interest(&mut self, face: FaceId, i: &Interest) -> Vec<Out> {
        let view = InterestView::decode(i.encode()).unwrap();
        let hashes = hasher().prefix_hashes(&view.name);
        let home = self
            .ndt
            .interest_thread(&hashes, || view.name.ends_in_implicit_digest());
        let cs_probe =
            (view.can_be_prefix && self.ndt.is_short(&hashes)).then(|| CsProbe::new(home));
        let pkt = InInterest {
            interest: view,
            hashes,
            face,
            token: Some(PitToken::from_u64(i.nonce.map_or(0, |n| u64::from(n.0[0])))),
            next_hop: None,
            congestion_mark: 0,
            cs_probe,
        };
        self.run(vec![(usize::from(home), Queued::Interest(pkt))])
    }

    /// A Data from `face` with `token`, dispatched as the input stage does.
    fn data(&mut self, face: FaceId, d: &DataView, token: Option<PitToken>) -> Vec<Out> {
        let pkt = InData {
            data: d.clone(),
            hashes: None,
            face,
            token,
            congestion_mark: 0,
            no_cache: false,
            own_buffer: 0,
            rehomed: false,
        };
        let by_token = token
            .as_ref()
            .and_then(kite_fw::pcct::Pcct::token_thread)
            .map(usize::from)
            .filter(|&t| t < self.threads.len());
        if let Some(t) = by_token {
            return self.run(vec![(t, Queued::Data(pkt))]);
        }
        let hashes = hasher().prefix_hashes(&pkt.data.name);
        let threads = self.ndt.threads_for_data(&hashes);
        let pkt = InData {
            hashes: Some(hashes),
            ..pkt
        };
        let first = threads
            .iter()
            .map(|&t| (usize::from(t), Queued::Data(pkt.clone())))
            .collect();
        self.run(first)
    }

    fn advance(&mut self, ms: u64) {
        self.now = self.now + Duration::from_millis(ms);
        for fwd in &mut self.threads {
            let mut out = Vec::new();
            fwd.advance(self.now, &mut out);
        }
    }
}

fn data(uri: &str, fresh_ms: u64) -> DataView {
    let mut d = Data::new(name(uri), uri.as_bytes().to_vec());
    d.meta.freshness_period = Some(fresh_ms);
    DataView::decode(d.sign(&DigestSha256).unwrap()).unwrap()
}

/// What happened to one Interest.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Answer {
    /// Answered from the CS with this Data.
    Cs(Name),
    /// Sent on toward the producer.
    Forwarded,
    /// Joined a pending Interest.
    Aggregated,
    /// Nacked with this reason.
    Nacked(NackReason),
}

fn answer_of(out: &[Out]) -> Answer {
    match out {
        [] => Answer::Aggregated,
        [Out::Data {
            from_cs: true,
            wire,
            ..
        }] => Answer::Cs(DataView::decode(wire.clone()).unwrap().name),
        [Out::Interest { .. }] => Answer::Forwarded,
        [Out::Nack { reason, .. }] => Answer::Nacked(*reason),
        other => panic!("one Interest, several packets: {other:?}"),
    }
}

/// NFD's CS, PIT and best-route strategy, as simply as they can be written: the CS a sorted
/// map answering an exact Interest by its name and a CanBePrefix one by the first fresh-enough
/// Data under its name; the PIT one entry per (name, CanBePrefix, MustBeFresh), joined by an
/// Interest of the same three (which the strategy forwards again once the entry's
/// retransmission suppression interval, 10 ms doubling to 250 ms, has passed since it last
/// did), the CS consulted only for a new one; a Data satisfying every entry it matches.
#[derive(Default)]
struct Nfd {
    cs: BTreeMap<Name, Time>,
    pit: HashMap<(Name, bool, bool), Pending>,
}

/// One PIT entry of the model.
struct Pending {
    faces: Vec<FaceId>,
    last_sent: Time,
    suppression: Duration,
}

impl Nfd {
    fn cs_find(&self, n: &Name, cbp: bool, mbf: bool, now: Time) -> Option<Name> {
        let usable = |fresh_until: &Time| !mbf || *fresh_until > now;
        if !cbp {
            return self.cs.get(n).filter(|f| usable(f)).map(|_| n.clone());
        }
        self.cs
            .range(n.clone()..)
            .take_while(|(k, _)| n.is_prefix_of(k))
            .find(|(_, f)| usable(f))
            .map(|(k, _)| k.clone())
    }

    fn interest(&mut self, face: FaceId, n: &Name, cbp: bool, mbf: bool, now: Time) -> Answer {
        let key = (n.clone(), cbp, mbf);
        if let Some(p) = self.pit.get_mut(&key) {
            p.faces.push(face);
            if now < p.last_sent + p.suppression {
                return Answer::Aggregated;
            }
            p.last_sent = now;
            p.suppression = (p.suppression * 2).min(Duration::from_millis(250));
            return Answer::Forwarded;
        }
        if let Some(hit) = self.cs_find(n, cbp, mbf, now) {
            return Answer::Cs(hit);
        }
        if !name("/a").is_prefix_of(n) && !name("/s").is_prefix_of(n) && !name("/b").is_prefix_of(n)
        {
            return Answer::Nacked(NackReason::NO_ROUTE);
        }
        self.pit.insert(
            key,
            Pending {
                faces: vec![face],
                last_sent: now,
                suppression: Duration::from_millis(10),
            },
        );
        Answer::Forwarded
    }

    /// The downstreams the Data reaches (sorted), and it is cached if it satisfied any.
    fn data(&mut self, d: &Name, fresh_until: Time) -> Vec<FaceId> {
        let matched: Vec<_> = self
            .pit
            .keys()
            .filter(|(n, cbp, _)| n == d || (*cbp && n.is_prefix_of(d)))
            .cloned()
            .collect();
        let mut faces: Vec<FaceId> = matched
            .iter()
            .flat_map(|k| self.pit.remove(k).unwrap().faces)
            .collect();
        faces.sort();
        faces.dedup();
        if !faces.is_empty() {
            self.cs.insert(d.clone(), fresh_until);
        }
        faces
    }

    /// Whether `face` already waits in the entry of (`n`, `cbp`, `mbf`) (its Interest again
    /// would be a retransmission, which strategies may suppress or forward).
    fn waits(&self, face: FaceId, n: &Name, cbp: bool, mbf: bool) -> bool {
        self.pit
            .get(&(n.clone(), cbp, mbf))
            .is_some_and(|p| p.faces.contains(&face))
    }
}

/// Names: one component (shorter than the dispatch prefix of two) and longer, under three
/// prefixes (two routed upstream, one to a local producer) and one without a route.
const NAMES: [&str; 12] = [
    "/a", "/a/x", "/a/x/1", "/a/y/2", "/a/z", "/s", "/s/p/q/r", "/s/t", "/b", "/b/x/1", "/b/w",
    "/n/x",
];

#[derive(Debug, Clone)]
enum Op {
    Interest {
        face: usize,
        name: usize,
        cbp: bool,
        mbf: bool,
    },
    /// The producer answers, with a Data of this name, every pending Interest it matches.
    Data {
        name: usize,
        long_fresh: bool,
    },
    Advance,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        5 => (0..3usize, 0..NAMES.len(), any::<bool>(), any::<bool>())
            .prop_map(|(face, name, cbp, mbf)| Op::Interest { face, name, cbp, mbf }),
        3 => (0..NAMES.len() - 1, any::<bool>()).prop_map(|(name, long_fresh)| Op::Data { name, long_fresh }),
        1 => Just(Op::Advance),
    ]
}

/// Runs `ops` on `n` threads and on the model: the same answers, a CS answer with the same
/// Data (the first match in canonical order, whichever threads the matches are in).
fn agree(n: u8, ops: &[Op]) -> Result<(), TestCaseError> {
    let mut kite = Shards::new(n);
    let mut nfd = Nfd::default();
    // The upstream's view: the Interests it got and their tokens, by (name, cbp, mbf).
    let mut upstream: HashMap<(Name, bool, bool), PitToken> = HashMap::new();
    let mut nonce = 0u32;
    for op in ops {
        match *op {
            Op::Interest {
                face,
                name: i,
                cbp,
                mbf,
            } => {
                let (face, n) = (CONSUMERS[face], name(NAMES[i]));
                if nfd.waits(face, &n, cbp, mbf) {
                    continue;
                }
                nonce += 1;
                let mut interest = Interest::new(n.clone());
                interest.nonce = Some(Nonce::from(nonce));
                interest.can_be_prefix = cbp;
                interest.must_be_fresh = mbf;
                interest.lifetime = Some(100_000);
                let out = kite.interest(face, &interest);
                let got = answer_of(&out);
                let want = nfd.interest(face, &n, cbp, mbf, kite.now);
                prop_assert_eq!(&got, &want, "Interest {} cbp={} mbf={}", n, cbp, mbf);
                if let [Out::Interest { token, .. }] = &out[..] {
                    upstream.insert((n, cbp, mbf), *token);
                }
            }
            Op::Data {
                name: i,
                long_fresh,
            } => {
                let n = name(NAMES[i]);
                let fresh = if long_fresh { 100_000 } else { 50 };
                let d = data(NAMES[i], fresh);
                let answers: Vec<_> = upstream
                    .iter()
                    .filter(|((p, cbp, _), _)| *p == n || (*cbp && p.is_prefix_of(&n)))
                    .map(|(k, &t)| (k.clone(), t))
                    .collect();
                let mut reached = Vec::new();
                if name("/b").is_prefix_of(&n) {
                    // The local producer answers once, with no token.
                    if !answers.is_empty() {
                        reached.extend(kite.data(PRODUCER, &d, None));
                    }
                } else if let Some((_, token)) = answers.first() {
                    // The upstream answers one of them: NFD satisfies every entry it matches.
                    reached.extend(kite.data(UP, &d, Some(*token)));
                }
                for (k, _) in answers {
                    upstream.remove(&k);
                }
                let mut faces: Vec<FaceId> = reached
                    .iter()
                    .filter_map(|o| match o {
                        Out::Data { face, .. } => Some(*face),
                        _ => None,
                    })
                    .collect();
                // NFD sends a Data once to each face; Kite once per Interest that face has
                // waiting with its own token (a token-matching client needs each).
                faces.sort();
                faces.dedup();
                let fresh_until = kite.now + Duration::from_millis(fresh);
                prop_assert_eq!(faces, nfd.data(&n, fresh_until), "Data {}", n);
            }
            Op::Advance => kite.advance(60),
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn one_thread_answers_as_nfd(ops in proptest::collection::vec(op(), 1..60)) {
        agree(1, &ops)?;
    }

    #[test]
    fn four_threads_answer_as_nfd(ops in proptest::collection::vec(op(), 1..60)) {
        agree(4, &ops)?;
    }
}

/// A name under `/s` whose home is not the thread of `/s` itself.
fn elsewhere_than_s(kite: &Shards) -> String {
    let home = |uri: &str| kite.ndt.thread_for(&hasher().prefix_hashes(&name(uri)));
    (0..)
        .map(|i| format!("/s/p{i}/q/r"))
        .find(|n| home(n) != home("/s"))
        .unwrap()
}

#[test]
fn a_short_can_be_prefix_interest_finds_data_cached_in_another_thread() {
    // `/s` is one component, shorter than the dispatch prefix: Data under it lives in the
    // threads of its longer names, not in the thread of `/s`.
    let mut kite = Shards::new(4);
    let long = elsewhere_than_s(&kite);
    let mut exact = Interest::new(name(&long));
    exact.nonce = Some(Nonce::from(1));
    let out = kite.interest(CONSUMERS[0], &exact);
    let [Out::Interest { token, .. }] = &out[..] else {
        panic!("{out:?}")
    };
    kite.data(UP, &data(&long, 10_000), Some(*token));
    let mut prefix = Interest::new(name("/s"));
    prefix.nonce = Some(Nonce::from(2));
    prefix.can_be_prefix = true;
    assert_eq!(
        answer_of(&kite.interest(CONSUMERS[1], &prefix)),
        Answer::Cs(name(&long))
    );
}

#[test]
fn a_data_fetched_by_a_short_name_is_cached_where_its_own_name_finds_it() {
    // The Data comes back to the thread of `/s`; an exact Interest for it goes to the thread
    // of its own name, which must hold it.
    let mut kite = Shards::new(4);
    let long = elsewhere_than_s(&kite);
    let mut prefix = Interest::new(name("/s"));
    prefix.nonce = Some(Nonce::from(1));
    prefix.can_be_prefix = true;
    let out = kite.interest(CONSUMERS[0], &prefix);
    let [Out::Interest { token, .. }] = &out[..] else {
        panic!("{out:?}")
    };
    kite.data(UP, &data(&long, 10_000), Some(*token));
    for nonce in 2..12 {
        let mut exact = Interest::new(name(&long));
        exact.nonce = Some(Nonce::from(nonce));
        assert_eq!(
            answer_of(&kite.interest(CONSUMERS[1], &exact)),
            Answer::Cs(name(&long))
        );
    }
}

#[test]
fn a_short_can_be_prefix_entry_is_satisfied_by_a_data_another_thread_got() {
    // `/s` (CanBePrefix) waits in its thread; the exact Interest for a Data under it waits in
    // another; the upstream answers the exact one only. NFD satisfies both.
    let mut kite = Shards::new(4);
    let long = elsewhere_than_s(&kite);
    let mut prefix = Interest::new(name("/s"));
    prefix.nonce = Some(Nonce::from(1));
    prefix.can_be_prefix = true;
    assert_eq!(
        answer_of(&kite.interest(CONSUMERS[0], &prefix)),
        Answer::Forwarded
    );
    let mut exact = Interest::new(name(&long));
    exact.nonce = Some(Nonce::from(2));
    let out = kite.interest(CONSUMERS[1], &exact);
    let [Out::Interest { token, .. }] = &out[..] else {
        panic!("{out:?}")
    };
    let out = kite.data(UP, &data(&long, 10_000), Some(*token));
    let mut faces: Vec<FaceId> = out
        .iter()
        .filter_map(|o| match o {
            Out::Data { face, .. } => Some(*face),
            _ => None,
        })
        .collect();
    faces.sort();
    assert_eq!(faces, vec![CONSUMERS[0], CONSUMERS[1]]);
}

#[test]
fn a_short_can_be_prefix_interest_gets_the_first_data_of_all_the_shards() {
    // Data under `/s` cached in the shards of their own names: the answer is the first in
    // canonical order, as NFD's one CS gives, whichever shard holds it.
    let mut kite = Shards::new(4);
    let homes: std::collections::HashSet<u8> = ["f", "e", "d", "c", "b", "a", "0"]
        .iter()
        .map(|c| {
            kite.ndt
                .thread_for(&hasher().prefix_hashes(&name(&format!("/s/{c}/x"))))
        })
        .collect();
    assert!(homes.len() > 1, "the Data are spread over shards");
    let mut nonce = 0;
    for (c, first) in [
        ("f", "f"),
        ("e", "e"),
        ("d", "d"),
        ("c", "c"),
        ("b", "b"),
        ("a", "a"),
        ("0", "0"),
    ] {
        let long = format!("/s/{c}/x");
        nonce += 1;
        let mut exact = Interest::new(name(&long));
        exact.nonce = Some(Nonce::from(nonce));
        let out = kite.interest(CONSUMERS[0], &exact);
        let [Out::Interest { token, .. }] = &out[..] else {
            panic!("{out:?}")
        };
        kite.data(UP, &data(&long, 10_000), Some(*token));
        nonce += 1;
        let mut prefix = Interest::new(name("/s"));
        prefix.nonce = Some(Nonce::from(nonce));
        prefix.can_be_prefix = true;
        assert_eq!(
            answer_of(&kite.interest(CONSUMERS[1], &prefix)),
            Answer::Cs(name(&format!("/s/{first}/x")))
        );
    }
}
