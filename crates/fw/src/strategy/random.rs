//! NFD's random strategy (`/localhost/nfd/strategy/random/v=1`): each Interest goes to one
//! eligible nexthop chosen uniformly at random (a retransmission past suppression is chosen
//! afresh).

use kite_packet::Name;

use super::retx::{Decision, RetxSuppression};
use super::{Strategy, StrategyCtx};

/// The random strategy.
#[derive(Debug)]
pub struct Random {
    name: Name,
    retx: RetxSuppression,
}

impl Default for Random {
    fn default() -> Self {
        Random {
            name: "/localhost/nfd/strategy/random/v=1"
                .parse()
                .expect("valid strategy name"),
            retx: RetxSuppression::default(),
        }
    }
}

impl Strategy for Random {
    fn name(&self) -> &Name {
        &self.name
    }

    fn after_receive_interest(&self, ctx: &mut StrategyCtx<'_>) {
        forward_to_one(&self.retx, ctx, |ctx| ctx.random());
    }
}

/// Forwards the Interest to the eligible nexthop `pick` numbers (modulo their count), unless
/// retransmission suppression holds it back; Nacks NoRoute when none is eligible. Shared with
/// round-robin, which differs only in how it picks.
pub(super) fn forward_to_one(
    retx: &RetxSuppression,
    ctx: &mut StrategyCtx<'_>,
    pick: impl FnOnce(&mut StrategyCtx<'_>) -> u64,
) {
    if retx.decide(ctx) == Decision::Suppress {
        return;
    }
    let hops = ctx.eligible_or_nack();
    if hops.is_empty() {
        return;
    }
    let n = pick(ctx);
    ctx.forward(hops[(n % hops.len() as u64) as usize]);
}
