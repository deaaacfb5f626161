//! Exponential retransmission suppression (NFD's defaults: 10 ms initial, 250 ms maximum,
//! multiplier 2), with its state in the first 8 octets of the PIT scratch area.

use core::time::Duration;

use super::StrategyCtx;

/// Whether a retransmitted Interest goes out again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Not forwarded before: forward.
    New,
    /// Forwarded before, long enough ago: forward again.
    Forward,
    /// Forwarded too recently: hold it back.
    Suppress,
}

/// Exponential retransmission suppression parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetxSuppression {
    /// First suppression interval.
    pub initial: Duration,
    /// Longest suppression interval.
    pub max: Duration,
    /// Growth factor after each forwarded retransmission.
    pub multiplier: u32,
}

impl Default for RetxSuppression {
    fn default() -> Self {
        RetxSuppression {
            initial: Duration::from_millis(10),
            max: Duration::from_millis(250),
            multiplier: 2,
        }
    }
}

impl RetxSuppression {
    /// Decides for the whole PIT entry: new when no upstream may still answer (none sent to,
    /// or every one Nacked or expired); suppressed while the last transmission to a pending
    /// upstream is more recent than the current interval; each forwarded retransmission grows
    /// it.
    pub fn decide(&self, ctx: &mut StrategyCtx<'_>) -> Decision {
        let now = ctx.now();
        let Some(last) = ctx.pit().last_pending_sent(now) else {
            return Decision::New;
        };
        let interval = self.interval(ctx);
        if now < last + interval {
            return Decision::Suppress;
        }
        let next = (interval * self.multiplier).min(self.max);
        ctx.pit_scratch()[..8].copy_from_slice(&(next.as_nanos() as u64).to_le_bytes());
        Decision::Forward
    }

    /// Decides for one upstream face (multicast): suppressed while that face was sent to
    /// within the current interval.
    pub fn decide_for(&self, ctx: &mut StrategyCtx<'_>, face: crate::face::FaceId) -> Decision {
        let Some(last) = ctx.pit().upstream(face).map(|u| u.last_sent) else {
            return Decision::New;
        };
        if ctx.now() < last + self.interval(ctx) {
            Decision::Suppress
        } else {
            Decision::Forward
        }
    }

    /// Grows the interval after a forwarded retransmission (multicast calls it once per event).
    pub fn grow(&self, ctx: &mut StrategyCtx<'_>) {
        let next = (self.interval(ctx) * self.multiplier).min(self.max);
        ctx.pit_scratch()[..8].copy_from_slice(&(next.as_nanos() as u64).to_le_bytes());
    }

    fn interval(&self, ctx: &mut StrategyCtx<'_>) -> Duration {
        let stored = u64::from_le_bytes(ctx.pit_scratch()[..8].try_into().expect("8 octets"));
        if stored == 0 {
            self.initial
        } else {
            Duration::from_nanos(stored)
        }
    }
}
