//! random and round-robin: each Interest goes to one eligible nexthop, and the two differ only
//! in how it is chosen (a retransmission past suppression is chosen afresh).

use kite_packet::Name;

use super::retx::{Decision, RetxSuppression};
use super::{Strategy, StrategyCtx};

/// How [`OneNexthop`] chooses among the eligible nexthops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Choice {
    /// Uniformly at random per Interest.
    Random,
    /// Successive Interests of a namespace take successive nexthops; the rotation counter
    /// lives in the FIB entry's scratch area (per forwarding thread).
    RoundRobin,
}

/// A strategy that forwards each Interest to one eligible nexthop: NFD's random strategy
/// (`/localhost/nfd/strategy/random/v=1`) or Kite's round-robin
/// (`/localhost/kite/strategy/round-robin/v=1`; NFD has none).
#[derive(Debug)]
pub struct OneNexthop {
    name: Name,
    choice: Choice,
    retx: RetxSuppression,
}

impl OneNexthop {
    /// The random strategy, with NFD's name.
    pub fn random() -> Self {
        Self::new("/localhost/nfd/strategy/random/v=1", Choice::Random)
    }

    /// The round-robin strategy, with Kite's name for it.
    pub fn round_robin() -> Self {
        Self::new(
            "/localhost/kite/strategy/round-robin/v=1",
            Choice::RoundRobin,
        )
    }

    fn new(name: &str, choice: Choice) -> Self {
        OneNexthop {
            name: name.parse().expect("valid strategy name"),
            choice,
            retx: RetxSuppression::default(),
        }
    }
}

impl Strategy for OneNexthop {
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
        let n = match self.choice {
            Choice::Random => ctx.random(),
            Choice::RoundRobin => {
                let scratch = ctx.fib_scratch();
                let turn = u64::from_le_bytes(scratch[..8].try_into().expect("8 octets"));
                scratch[..8].copy_from_slice(&turn.wrapping_add(1).to_le_bytes());
                turn
            }
        };
        ctx.forward(hops[(n % hops.len() as u64) as usize]);
    }
}
