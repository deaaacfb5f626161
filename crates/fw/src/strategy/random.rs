//! random: one eligible nexthop chosen uniformly at random per Interest (a retransmission
//! past suppression gets a new draw).

use kite_packet::{NackReason, Name};
use smallvec::SmallVec;

use super::retx::{Decision, RetxSuppression};
use super::{Strategy, StrategyCtx};
use crate::face::FaceId;

/// The random strategy (NFD's `/localhost/nfd/strategy/random/v=1`).
#[derive(Debug)]
pub struct Random {
    name: Name,
    retx: RetxSuppression,
}

impl Random {
    /// The strategy with NFD's name.
    pub fn new() -> Self {
        Random {
            name: "/localhost/nfd/strategy/random/v=1"
                .parse()
                .expect("valid strategy name"),
            retx: RetxSuppression::default(),
        }
    }
}

impl Default for Random {
    fn default() -> Self {
        Self::new()
    }
}

impl Strategy for Random {
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
        let pick = hops[(ctx.random() % hops.len() as u64) as usize];
        ctx.forward(pick);
    }
}
