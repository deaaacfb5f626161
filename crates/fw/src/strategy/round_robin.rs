//! round-robin: successive Interests of a namespace take successive eligible nexthops; the
//! rotation counter lives in the FIB entry's scratch area (per forwarding thread).

use kite_packet::Name;

use super::retx::{Decision, RetxSuppression};
use super::{Strategy, StrategyCtx};

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
        let hops = ctx.eligible_or_nack();
        if hops.is_empty() {
            return;
        }
        let scratch = ctx.fib_scratch();
        let turn = u64::from_le_bytes(scratch[..8].try_into().expect("8 octets"));
        scratch[..8].copy_from_slice(&turn.wrapping_add(1).to_le_bytes());
        ctx.forward(hops[(turn % hops.len() as u64) as usize]);
    }
}
