//! round-robin: successive Interests of a namespace take successive eligible nexthops; the
//! rotation counter lives in the FIB entry's scratch area (per forwarding thread).

use kite_packet::{NackReason, Name};
use smallvec::SmallVec;

use super::retx::{Decision, RetxSuppression};
use super::{Strategy, StrategyCtx};
use crate::face::FaceId;

/// The round-robin strategy (`/localhost/kite/strategy/round-robin/v=1`; NFD has none).
#[derive(Debug)]
pub struct RoundRobin {
    name: Name,
    retx: RetxSuppression,
}

impl RoundRobin {
    /// The strategy with Kite's name for it.
    pub fn new() -> Self {
        RoundRobin {
            name: "/localhost/kite/strategy/round-robin/v=1"
                .parse()
                .expect("valid strategy name"),
            retx: RetxSuppression::default(),
        }
    }
}

impl Default for RoundRobin {
    fn default() -> Self {
        Self::new()
    }
}

impl Strategy for RoundRobin {
    fn name(&self) -> &Name {
        &self.name
    }

    fn after_receive_interest(&self, ctx: &mut StrategyCtx<'_>) {
        if self.retx.decide(ctx) == Decision::Suppress {
            return;
        }
        let hops: SmallVec<[FaceId; 8]> = ctx
            .nexthops()
            .iter()
            .map(|n| n.face)
            .filter(|&f| ctx.can_forward_to(f))
            .collect();
        if hops.is_empty() {
            if ctx.pit().upstreams.is_empty() {
                ctx.nack_downstreams(NackReason::NO_ROUTE);
            }
            return;
        }
        let scratch = ctx.fib_scratch();
        let turn = u64::from_le_bytes(scratch[..8].try_into().expect("8 octets"));
        scratch[..8].copy_from_slice(&turn.wrapping_add(1).to_le_bytes());
        ctx.forward(hops[(turn % hops.len() as u64) as usize]);
    }
}
