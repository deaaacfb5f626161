//! Forwarding strategies (NDN-DPDK paper, section 6; NFD's strategy API).
//!
//! A strategy decides where an Interest goes and reacts to Data, Nacks and its own timers. It
//! keeps no state of its own (`&self`): what it must remember lives in the two scratch areas
//! the forwarder hands it — 96 octets per FIB entry (per forwarding thread) and 64 per PIT
//! entry — so a built-in written in Rust and a program loaded at run time (eBPF) see the same
//! world. Everything it may do goes through [`StrategyCtx`], which enforces the forwarding
//! rules (scope, HopLimit, not back where it came from) so no strategy can break them.
//!
//! Built-ins: [`best_route`] (lowest-cost eligible nexthop, exponential retransmission
//! suppression, next nexthop on retransmission), [`multicast`] (every eligible nexthop),
//! [`random`], [`round_robin`] (one eligible nexthop per Interest) and [`asf`] (the nexthop with the lowest measured SRTT, probing
//! the others now and then).

pub mod asf;
pub mod best_route;
mod ctx;
pub mod multicast;
pub mod random;
mod retx;
pub mod round_robin;
mod table;

use kite_packet::{NackReason, Name};

pub use crate::fib::StrategyId;
pub use ctx::{FaceInfo, FaceTable, StrategyCtx, FIB_SCRATCH_LEN, RTT_SLOTS};
pub(crate) use ctx::{FibScratch, StrategyTimer, TimerEvent};
pub use retx::RetxSuppression;
pub use table::{StrategyTable, UnknownStrategy};

/// A forwarding strategy.
pub trait Strategy: Send + Sync {
    /// Its name as NFD management spells it, with version
    /// (e.g. `/localhost/nfd/strategy/best-route/v=5`).
    fn name(&self) -> &Name;

    /// An Interest that the Content Store could not satisfy needs forwarding. Forward it
    /// (`ctx.forward`), Nack it (`ctx.nack_downstreams`), or leave it pending.
    fn after_receive_interest(&self, ctx: &mut StrategyCtx<'_>);

    /// A Data satisfied the pending Interest (the forwarder sends it downstream); a chance to
    /// take measurements. `ctx.ingress()` is the upstream it came from.
    fn after_receive_data(&self, ctx: &mut StrategyCtx<'_>) {
        let _ = ctx;
    }

    /// An upstream Nacked the Interest (Duplicate Nacks were already retried by the
    /// forwarder). By default, once every upstream has Nacked, the least severe reason goes
    /// back to the downstreams.
    fn after_receive_nack(&self, ctx: &mut StrategyCtx<'_>, reason: NackReason) {
        let _ = reason;
        if let Some(least_severe) = ctx.pit().all_upstreams_nacked() {
            ctx.nack_downstreams(least_severe);
        }
    }

    /// A timer the strategy set has fired; `data` is what it passed to `set_timer`.
    fn on_timer(&self, ctx: &mut StrategyCtx<'_>, data: u64) {
        let _ = (ctx, data);
    }

    /// Whether a looping Interest (duplicate Nonce) is answered with Nack~Duplicate on a
    /// point-to-point face. Multicast says no: in multicast, duplicates are normal.
    fn nack_loops(&self) -> bool {
        true
    }
}
