//! Kite's round-robin strategy (`/localhost/kite/strategy/round-robin/v=1`; NFD has none):
//! successive Interests of a namespace take successive eligible nexthops. The rotation counter
//! lives in the FIB entry's scratch area, so each forwarding thread rotates on its own.

use kite_packet::Name;

use super::random::forward_to_one;
use super::retx::RetxSuppression;
use super::{Strategy, StrategyCtx};

/// The round-robin strategy.
#[derive(Debug)]
pub struct RoundRobin {
    name: Name,
    retx: RetxSuppression,
}

impl Default for RoundRobin {
    fn default() -> Self {
        RoundRobin {
            name: "/localhost/kite/strategy/round-robin/v=1"
                .parse()
                .expect("valid strategy name"),
            retx: RetxSuppression::default(),
        }
    }
}

impl Strategy for RoundRobin {
    fn name(&self) -> &Name {
        &self.name
    }

    fn after_receive_interest(&self, ctx: &mut StrategyCtx<'_>) {
        forward_to_one(&self.retx, ctx, |ctx| {
            let scratch = ctx.fib_scratch();
            let turn = u64::from_le_bytes(scratch[..8].try_into().expect("8 octets"));
            scratch[..8].copy_from_slice(&turn.wrapping_add(1).to_le_bytes());
            turn
        });
    }
}
