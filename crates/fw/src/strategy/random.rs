//! random: one eligible nexthop chosen uniformly at random per Interest (a retransmission
//! past suppression gets a new draw).

use kite_packet::Name;

use super::retx::{Decision, RetxSuppression};
use super::{Strategy, StrategyCtx};

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
        let hops = ctx.eligible_or_nack();
        if !hops.is_empty() {
            let pick = hops[(ctx.random() % hops.len() as u64) as usize];
            ctx.forward(pick);
        }
    }
}
