//! A forwarding thread with virtual faces and a virtual clock.

use kite_packet::{Data, DataView, DigestSha256, Interest, InterestView, Name, Nonce, PitToken};

use crate::face::{FaceId, FaceScope, LinkType};
use crate::fib::{FibConfig, FibWriter};
use crate::forwarder::{Forwarder, ForwarderConfig, InData, InInterest, InNack};
use crate::hash::NameHasher;
use crate::out::Out;
use crate::strategy::{FaceInfo, StrategyTable};
use crate::time::Time;

pub const APP: FaceId = FaceId(300);
pub const APP2: FaceId = FaceId(301);
pub const PRODUCER: FaceId = FaceId(302);
pub const UP1: FaceId = FaceId(400);
pub const UP2: FaceId = FaceId(401);
pub const MCAST: FaceId = FaceId(500);

fn hasher() -> NameHasher {
    NameHasher::with_key(11, 13)
}

pub struct Harness {
    pub fwd: Forwarder,
    pub fib: FibWriter,
    pub strategies: StrategyTable,
    pub now: Time,
}

impl Harness {
    pub fn new() -> Self {
        Self::with_config(ForwarderConfig::default())
    }

    pub fn with_config(config: ForwarderConfig) -> Self {
        let strategies = StrategyTable::builtin();
        let (fib, readers) = FibWriter::new(hasher(), FibConfig::default(), StrategyTable::DEFAULT);
        let now = Time::from_millis(1_000);
        let fwd = Forwarder::new(
            1,
            config,
            readers.reader(),
            strategies.clone(),
            hasher(),
            now,
        );
        let mut h = Harness {
            fwd,
            fib,
            strategies,
            now,
        };
        for f in [APP, APP2, PRODUCER] {
            h.add_face(f, FaceScope::Local, LinkType::PointToPoint);
        }
        for f in [UP1, UP2] {
            h.add_face(f, FaceScope::NonLocal, LinkType::PointToPoint);
        }
        h
    }

    pub fn add_face(&mut self, face: FaceId, scope: FaceScope, link_type: LinkType) {
        self.fwd.add_face(face, FaceInfo { scope, link_type });
    }

    pub fn route(&mut self, prefix: &str, face: FaceId, cost: u32) {
        self.fib.add_nexthop(&name(prefix), face, cost).unwrap();
        self.fib.publish();
    }

    pub fn strategy(&mut self, prefix: &str, strategy: &str) {
        let id = self.strategies.find(&name(strategy)).unwrap();
        self.fib.set_strategy(&name(prefix), id).unwrap();
        self.fib.publish();
    }

    pub fn advance(&mut self, ms: u64) {
        self.now = self.now + core::time::Duration::from_millis(ms);
        let mut out = Vec::new();
        self.fwd.advance(self.now, &mut out);
    }

    pub fn interest(&mut self, face: FaceId, i: Interest, token: Option<PitToken>) -> Vec<Out> {
        self.interest_with(face, i, token, |_| {})
    }

    pub fn interest_with(
        &mut self,
        face: FaceId,
        i: Interest,
        token: Option<PitToken>,
        edit: impl FnOnce(&mut InInterest),
    ) -> Vec<Out> {
        let view = InterestView::decode(i.encode()).unwrap();
        let mut pkt = InInterest {
            hashes: hasher().prefix_hashes(&view.name),
            interest: view,
            face,
            token,
            next_hop: None,
            congestion_mark: 0,
            cs_probe: None,
        };
        edit(&mut pkt);
        let mut out = Vec::new();
        self.fwd.on_interest(self.now, pkt, &mut out);
        out
    }

    /// All these Interests in one burst (so the burst's prefetch passes run over them all).
    pub fn interest_burst(&mut self, face: FaceId, interests: Vec<Interest>) -> Vec<Out> {
        let mut pkts: Vec<InInterest> = interests
            .into_iter()
            .map(|i| {
                let view = InterestView::decode(i.encode()).unwrap();
                InInterest {
                    hashes: hasher().prefix_hashes(&view.name),
                    interest: view,
                    face,
                    token: None,
                    next_hop: None,
                    congestion_mark: 0,
                    cs_probe: None,
                }
            })
            .collect();
        let mut out = Vec::new();
        self.fwd
            .process_burst(self.now, &[], &[], &mut pkts, &mut out);
        out
    }

    pub fn data(&mut self, face: FaceId, d: Data, token: Option<PitToken>) -> Vec<Out> {
        self.data_with(face, d, token, |_| {})
    }

    pub fn data_with(
        &mut self,
        face: FaceId,
        d: Data,
        token: Option<PitToken>,
        edit: impl FnOnce(&mut InData),
    ) -> Vec<Out> {
        let mut pkt = InData {
            data: DataView::decode(d.sign(&DigestSha256).unwrap()).unwrap(),
            hashes: None,
            face,
            token,
            congestion_mark: 0,
            no_cache: false,
            own_buffer: 0,
            rehomed: false,
        };
        edit(&mut pkt);
        let mut out = Vec::new();
        self.fwd.on_data(self.now, pkt, &mut out);
        out
    }

    pub fn nack(
        &mut self,
        face: FaceId,
        i: Interest,
        reason: kite_packet::NackReason,
        token: Option<PitToken>,
    ) -> Vec<Out> {
        let view = InterestView::decode(i.encode()).unwrap();
        let pkt = InNack {
            hashes: hasher().prefix_hashes(&view.name),
            interest: view,
            reason,
            face,
            token,
        };
        let mut out = Vec::new();
        self.fwd.on_nack(self.now, pkt, &mut out);
        out
    }
}

pub fn name(uri: &str) -> Name {
    uri.parse().unwrap()
}

pub fn interest(uri: &str, nonce: u32) -> Interest {
    let mut i = Interest::new(name(uri));
    i.nonce = Some(Nonce::from(nonce));
    i
}

pub fn data(uri: &str, freshness_ms: u64) -> Data {
    let mut d = Data::new(name(uri), &b"payload"[..]);
    d.meta.freshness_period = Some(freshness_ms);
    d
}

pub fn tok(n: u64) -> PitToken {
    PitToken::new(&n.to_be_bytes()[4..]).unwrap()
}

/// The Interest `out` sends (its face, and the packet as encoded for the wire), if it is one.
pub fn interest_sent(out: &Out) -> Option<(FaceId, InterestView)> {
    match out {
        Out::Interest { face, interest, .. } => {
            Some((*face, InterestView::decode(interest.encode()).unwrap()))
        }
        _ => None,
    }
}

/// The face and token of the only Interest sent.
pub fn sent_interest(out: &[Out]) -> (FaceId, PitToken) {
    match out.first() {
        Some(Out::Interest { face, token, .. }) => (*face, *token),
        other => panic!("expected an Interest, got {other:?}"),
    }
}

/// The face and token of a Data sent.
pub fn sent_data(out: &Out) -> (FaceId, Option<PitToken>) {
    match out {
        Out::Data { face, token, .. } => (*face, *token),
        other => panic!("expected a Data, got {other:?}"),
    }
}

/// The face and reason of the only packet sent, when it is a Nack.
pub fn only_nack(out: &[Out]) -> Option<(FaceId, kite_packet::NackReason)> {
    match out {
        [Out::Nack { face, reason, .. }] => Some((*face, *reason)),
        _ => None,
    }
}

/// The reason of the only packet sent, when it is a Nack.
pub fn nack_reason(out: &[Out]) -> Option<kite_packet::NackReason> {
    only_nack(out).map(|(_, r)| r)
}
