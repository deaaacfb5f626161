//! best-route: the lowest-cost eligible nexthop; a retransmission that gets past suppression
//! goes to the next nexthop not tried yet, else to the one tried longest ago; no eligible
//! nexthop means Nack~NoRoute.

use kite_packet::{NackReason, Name};

use super::retx::{Decision, RetxSuppression};
use super::{Strategy, StrategyCtx};
use crate::face::FaceId;

/// The best-route strategy (NFD's `/localhost/nfd/strategy/best-route/v=5`).
#[derive(Debug)]
pub struct BestRoute {
    name: Name,
    retx: RetxSuppression,
}

impl Default for BestRoute {
    fn default() -> Self {
        BestRoute {
            name: "/localhost/nfd/strategy/best-route/v=5"
                .parse()
                .expect("valid strategy name"),
            retx: RetxSuppression::default(),
        }
    }
}

impl Strategy for BestRoute {
    fn name(&self) -> &Name {
        &self.name
    }

    fn after_receive_interest(&self, ctx: &mut StrategyCtx<'_>) {
        match self.retx.decide(ctx) {
            Decision::Suppress => {}
            Decision::New => {
                // `forward` checks eligibility itself: the first nexthop it accepts is the
                // lowest-cost eligible one, with one check per nexthop instead of two.
                let hops = ctx.nexthops();
                if !hops.iter().any(|n| ctx.forward(n.face)) {
                    ctx.nack_downstreams(NackReason::NO_ROUTE);
                }
            }
            Decision::Forward => {
                let unused = eligible(ctx).find(|&f| ctx.pit().upstream(f).is_none());
                let target = unused.or_else(|| {
                    eligible(ctx).min_by_key(|&f| ctx.pit().upstream(f).map(|u| u.last_sent))
                });
                if let Some(face) = target {
                    ctx.forward(face);
                }
            }
        }
    }
}

/// Eligible nexthops, lowest cost first.
fn eligible<'c>(ctx: &'c StrategyCtx<'_>) -> impl Iterator<Item = FaceId> + 'c {
    ctx.nexthops()
        .iter()
        .map(|n| n.face)
        .filter(|&f| ctx.can_forward_to(f))
}
