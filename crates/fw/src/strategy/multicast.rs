//! multicast: every eligible nexthop, each subject to its own retransmission suppression;
//! loops are not Nacked (duplicates are normal when flooding).

use kite_packet::{NackReason, Name};

use super::retx::{Decision, RetxSuppression};
use super::{Strategy, StrategyCtx};

/// The multicast strategy (NFD's `/localhost/nfd/strategy/multicast/v=5`).
#[derive(Debug)]
pub struct Multicast {
    name: Name,
    retx: RetxSuppression,
}

impl Default for Multicast {
    fn default() -> Self {
        Multicast {
            name: "/localhost/nfd/strategy/multicast/v=5"
                .parse()
                .expect("valid strategy name"),
            retx: RetxSuppression::default(),
        }
    }
}

impl Strategy for Multicast {
    fn name(&self) -> &Name {
        &self.name
    }

    fn after_receive_interest(&self, ctx: &mut StrategyCtx<'_>) {
        let hops: smallvec::SmallVec<[_; 8]> = ctx.nexthops().iter().map(|n| n.face).collect();
        let mut sent = 0;
        let mut retransmitted = false;
        for face in hops {
            if !ctx.can_forward_to(face) {
                continue;
            }
            match self.retx.decide_for(ctx, face) {
                Decision::Suppress => continue,
                Decision::Forward => retransmitted = true,
                Decision::New => {}
            }
            if ctx.forward(face) {
                sent += 1;
            }
        }
        if retransmitted {
            self.retx.grow(ctx);
        }
        if sent == 0 && ctx.pit().upstreams.is_empty() {
            ctx.nack_downstreams(NackReason::NO_ROUTE);
        }
    }

    fn nack_loops(&self) -> bool {
        false
    }
}
