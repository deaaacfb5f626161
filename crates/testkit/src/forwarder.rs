//! A forwarding thread with virtual faces and a virtual clock, driven through kite-fw's public
//! API (the harness kite-fw's own pipeline tests use, see [`crate::forwarder_harness`]), and
//! what the strategy tests add to it: a third upstream, packets by URI, and eBPF strategies
//! loaded from `strategies/*.o`.

use std::path::PathBuf;
use std::sync::Arc;

use kite_fw::fib::StrategyId;
use kite_fw::strategy::Strategy;

crate::forwarder_harness!(kite_fw);

/// A third non-local upstream, for the strategy tests.
pub const UP3: FaceId = FaceId(402);

impl Harness {
    /// The default configuration with the faces the strategy tests route over: `APP`, `APP2`
    /// (local) and `UP1`, `UP2`, `UP3`.
    pub fn with_three_upstreams() -> Self {
        let mut h = Self::without_faces(ForwarderConfig::default());
        for f in [APP, APP2] {
            h.add_face(f, FaceScope::Local, LinkType::PointToPoint);
        }
        for f in [UP1, UP2, UP3] {
            h.add_face(f, FaceScope::NonLocal, LinkType::PointToPoint);
        }
        h
    }

    /// Chooses strategy `id` for `prefix`, published at once.
    pub fn set_strategy(&mut self, prefix: &str, id: StrategyId) {
        self.fib.set_strategy(&name(prefix), id).unwrap();
        self.fib.publish();
    }

    /// The Data [`in_data`] builds arriving on `face` with `token`; what the forwarder sends.
    pub fn uncached_data(&mut self, face: FaceId, uri: &str, token: Option<PitToken>) -> Vec<Out> {
        let mut pkt = in_data(face, uri);
        pkt.token = token;
        let mut out = Vec::new();
        self.fwd.on_data(self.now, pkt, &mut out);
        out
    }
}

/// An Interest for `uri` with `nonce` and an InterestLifetime of `lifetime_ms`.
pub fn interest_lifetime(uri: &str, nonce: u32, lifetime_ms: u64) -> Interest {
    let mut i = interest(uri, nonce);
    i.lifetime = Some(lifetime_ms);
    i
}

/// A decoded Interest for `uri` with `nonce` arriving on `face`, without token.
pub fn in_interest(face: FaceId, uri: &str, nonce: u32) -> InInterest {
    arriving_interest(face, interest(uri, nonce), None)
}

/// A decoded Data (without FreshnessPeriod, not to be cached) arriving on `face`, without
/// token.
pub fn in_data(face: FaceId, uri: &str) -> InData {
    InData {
        no_cache: true,
        ..arriving_data(face, Data::new(name(uri), &b"payload"[..]), None)
    }
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

/// The token of the Interest sent to `to`.
pub fn token_to(out: &[Out], to: FaceId) -> Option<PitToken> {
    out.iter().find_map(|o| match o {
        Out::Interest { face, token, .. } if *face == to => Some(*token),
        _ => None,
    })
}

/// The (face, reason) of every Nack sent.
pub fn nacks(out: &[Out]) -> Vec<(FaceId, kite_packet::NackReason)> {
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

/// The repository's `strategies/` directory.
pub fn strategies_dir() -> PathBuf {
    crate::pyndn::workspace().join("strategies")
}

/// Loads `strategies/FILE.o` as strategy `name`, JIT-compiled.
///
/// # Panics
///
/// When the object does not exist or does not load.
pub fn load_object(file: &str, name: &str) -> Arc<dyn Strategy> {
    let elf = std::fs::read(strategies_dir().join(format!("{file}.o"))).unwrap();
    kite_bpf::load(name, &elf, kite_bpf::Engine::Jit).unwrap()
}
