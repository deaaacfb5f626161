//! A forwarding thread with virtual faces and a virtual clock, driven through kite-fw's public
//! API, with strategies loadable from `strategies/*.o`.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::Arc;

use kite_fw::face::{FaceId, FaceScope, LinkType};
use kite_fw::fib::{FibConfig, FibWriter, StrategyId};
use kite_fw::forwarder::{Forwarder, ForwarderConfig, InData, InInterest, InNack};
use kite_fw::hash::NameHasher;
use kite_fw::out::Out;
use kite_fw::strategy::{FaceInfo, Strategy, StrategyTable};
use kite_fw::time::Time;
use kite_packet::{
    Data, DataView, DigestSha256, Interest, InterestView, NackReason, Name, Nonce, PitToken,
};

pub const APP: FaceId = FaceId(300);
pub const APP2: FaceId = FaceId(301);
pub const UP1: FaceId = FaceId(400);
pub const UP2: FaceId = FaceId(401);
pub const UP3: FaceId = FaceId(402);

fn hasher() -> NameHasher {
    NameHasher::with_key(11, 13)
}

/// The repository's `strategies/` directory.
pub fn strategies_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../strategies")
}

/// Loads `strategies/FILE.o` as strategy `name`.
pub fn load_object(file: &str, name: &str) -> Arc<dyn Strategy> {
    let elf = std::fs::read(strategies_dir().join(format!("{file}.o"))).unwrap();
    kite_bpf::load(name, &elf, kite_bpf::Engine::Jit).unwrap()
}

pub struct Harness {
    pub fwd: Forwarder,
    pub fib: FibWriter,
    pub strategies: StrategyTable,
    pub now: Time,
}

impl Harness {
    pub fn new() -> Self {
        let strategies = StrategyTable::builtin();
        let (fib, readers) = FibWriter::new(hasher(), FibConfig::default(), StrategyTable::DEFAULT);
        let now = Time::from_millis(1_000);
        let fwd = Forwarder::new(
            1,
            ForwarderConfig::default(),
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
        for f in [APP, APP2] {
            h.add_face(f, FaceScope::Local);
        }
        for f in [UP1, UP2, UP3] {
            h.add_face(f, FaceScope::NonLocal);
        }
        h
    }

    pub fn add_face(&mut self, face: FaceId, scope: FaceScope) {
        let info = FaceInfo {
            scope,
            link_type: LinkType::PointToPoint,
        };
        self.fwd.add_face(face, info);
    }

    pub fn route(&mut self, prefix: &str, face: FaceId, cost: u32) {
        self.fib.add_nexthop(&name(prefix), face, cost).unwrap();
        self.fib.publish();
    }

    pub fn set_strategy(&mut self, prefix: &str, id: StrategyId) {
        self.fib.set_strategy(&name(prefix), id).unwrap();
        self.fib.publish();
    }

    pub fn advance(&mut self, ms: u64) {
        self.now = self.now + core::time::Duration::from_millis(ms);
        let mut out = Vec::new();
        self.fwd.advance(self.now, &mut out);
    }

    pub fn interest(&mut self, face: FaceId, uri: &str, nonce: u32) -> Vec<Out> {
        let mut out = Vec::new();
        self.fwd
            .on_interest(self.now, in_interest(face, uri, nonce), &mut out);
        out
    }

    /// [`Harness::interest`] with an InterestLifetime of `lifetime_ms`.
    pub fn interest_lifetime(
        &mut self,
        face: FaceId,
        uri: &str,
        nonce: u32,
        lifetime_ms: u64,
    ) -> Vec<Out> {
        let mut i = Interest::new(name(uri));
        i.nonce = Some(Nonce::from(nonce));
        i.lifetime = Some(lifetime_ms);
        let view = InterestView::decode(i.encode()).unwrap();
        let pkt = InInterest {
            hashes: hasher().prefix_hashes(&view.name),
            interest: view,
            face,
            token: None,
            next_hop: None,
            congestion_mark: 0,
            cs_probe: None,
        };
        let mut out = Vec::new();
        self.fwd.on_interest(self.now, pkt, &mut out);
        out
    }

    pub fn data(&mut self, face: FaceId, uri: &str, token: Option<PitToken>) -> Vec<Out> {
        let mut pkt = in_data(face, uri);
        pkt.token = token;
        let mut out = Vec::new();
        self.fwd.on_data(self.now, pkt, &mut out);
        out
    }

    pub fn nack(&mut self, face: FaceId, uri: &str, nonce: u32, reason: NackReason) -> Vec<Out> {
        let mut i = Interest::new(name(uri));
        i.nonce = Some(Nonce::from(nonce));
        let view = InterestView::decode(i.encode()).unwrap();
        let pkt = InNack {
            hashes: hasher().prefix_hashes(&view.name),
            interest: view,
            reason,
            face,
            token: None,
        };
        let mut out = Vec::new();
        self.fwd.on_nack(self.now, pkt, &mut out);
        out
    }
}

/// A decoded Interest arriving on `face`.
pub fn in_interest(face: FaceId, uri: &str, nonce: u32) -> InInterest {
    let mut i = Interest::new(name(uri));
    i.nonce = Some(Nonce::from(nonce));
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
}

/// A decoded Data (not to be cached) arriving on `face`, without token.
pub fn in_data(face: FaceId, uri: &str) -> InData {
    let d = Data::new(name(uri), &b"payload"[..]);
    InData {
        data: DataView::decode(d.sign(&DigestSha256).unwrap()).unwrap(),
        hashes: None,
        face,
        token: None,
        congestion_mark: 0,
        no_cache: true,
        own_buffer: 0,
        rehomed: false,
    }
}

pub fn name(uri: &str) -> Name {
    uri.parse().unwrap()
}

/// The faces Interests went to.
pub fn interest_faces(out: &[Out]) -> Vec<FaceId> {
    out.iter()
        .filter_map(|o| match o {
            Out::Interest { face, .. } => Some(*face),
            _ => None,
        })
        .collect()
}

/// The token of the Interest sent to `face`.
pub fn token_to(out: &[Out], to: FaceId) -> Option<PitToken> {
    out.iter().find_map(|o| match o {
        Out::Interest { face, token, .. } if *face == to => Some(*token),
        _ => None,
    })
}

/// The (face, reason) of every Nack sent.
pub fn nacks(out: &[Out]) -> Vec<(FaceId, NackReason)> {
    out.iter()
        .filter_map(|o| match o {
            Out::Nack { face, reason, .. } => Some((*face, *reason)),
            _ => None,
        })
        .collect()
}

/// The faces Data went to.
pub fn data_faces(out: &[Out]) -> Vec<FaceId> {
    out.iter()
        .filter_map(|o| match o {
            Out::Data { face, .. } => Some(*face),
            _ => None,
        })
        .collect()
}
