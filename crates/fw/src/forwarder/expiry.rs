//! Timers (PIT expiry, strategy timers), retiring PIT entries, and purging a removed face.

use kite_packet::Nonce;

use super::{Invocation, Pipelines};
use crate::face::FaceId;
use crate::fib::FibGuard;
use crate::out::Out;
use crate::pcct::Selectors;
use crate::strategy::TimerEvent;
use crate::time::Time;

impl Pipelines {
    /// Fires every timer due by `now`.
    pub(super) fn on_timers(&mut self, fib: &FibGuard<'_>, now: Time, out: &mut Vec<Out>) {
        let mut fired = core::mem::take(&mut self.fired);
        self.timers.advance(now, |_, event| fired.push(event));
        for event in fired.drain(..) {
            match event {
                TimerEvent::PitExpiry { slot, sel, pit_id } => {
                    if self.pcct.pit(slot, sel).is_some_and(|p| p.id == pit_id) {
                        if let Some(p) = self.pcct.pit_mut(slot, sel) {
                            p.timer = None;
                        }
                        self.finalize(slot, sel, false, None);
                    }
                }
                TimerEvent::Strategy(t) => self.strategy_timer(fib, now, t, out),
            }
        }
        self.fired = fired;
    }

    fn strategy_timer(
        &mut self,
        fib: &FibGuard<'_>,
        now: Time,
        t: crate::strategy::StrategyTimer,
        out: &mut Vec<Out>,
    ) {
        let Some(pit) = self.pcct.pit(t.slot, t.sel).filter(|p| p.id == t.pit_id) else {
            return;
        };
        let Some(entry) = Self::fib_entry_valid(fib, pit.fib) else {
            return;
        };
        let inv = Invocation {
            strategy: pit.strategy,
            fib: entry,
            slot: t.slot,
            sel: t.sel,
            ingress: FaceId::INVALID,
            nonce: pit.interest.nonce.unwrap_or(Nonce([0; 4])),
            hop_limit: pit.interest.hop_limit.map(|h| h.saturating_sub(1)),
        };
        if self.with_strategy(inv, now, out, |s, ctx| s.on_timer(ctx, t.data)) {
            self.finalize(t.slot, t.sel, false, None);
        }
    }

    /// Retires a PIT entry. Its nonces go to the Dead Nonce List as NFD does: all upstream
    /// nonces when unsatisfied; when satisfied by Data from `upstream`, that upstream's nonce,
    /// only if the Interest asked MustBeFresh and the Data is fresh for less than the list's
    /// lifetime (a later Interest could then loop back for the same Data).
    pub(super) fn finalize(
        &mut self,
        slot: u32,
        sel: Selectors,
        satisfied: bool,
        upstream: Option<(FaceId, u64)>,
    ) {
        let Some(hash) = self.pcct.entry(slot).map(|e| e.name_hash()) else {
            return;
        };
        let Some(pit) = self.pcct.pit(slot, sel) else {
            return;
        };
        if let Some(t) = pit.timer {
            self.timers.cancel(t);
        }
        let now = self.last_now;
        if satisfied {
            let lifetime_ms = self.dnl.lifetime().as_millis() as u64;
            if let Some((face, freshness_ms)) = upstream {
                if sel.must_be_fresh() && freshness_ms < lifetime_ms {
                    if let Some(u) = pit.upstream(face) {
                        self.dnl.add(hash, u.nonce, now);
                    }
                }
            }
        } else {
            self.counters.unsatisfied += 1;
            for u in &pit.upstreams {
                self.dnl.add(hash, u.nonce, now);
            }
        }
        for d in &pit.downstreams {
            if let Some(n) = self.pit_held.get_mut(&d.face) {
                *n -= 1;
                if *n == 0 {
                    self.pit_held.remove(&d.face);
                }
            }
        }
        self.count_short(slot, sel, false);
        self.pcct.pit_discard(slot, sel);
    }

    /// Tells the other threads of one more (`more`) or one fewer short CanBePrefix entry here:
    /// a CanBePrefix PIT entry of `slot` whose name is shorter than the dispatch prefix.
    pub(super) fn count_short(&self, slot: u32, sel: Selectors, more: bool) {
        let Some(shards) = &self.config.shards else {
            return;
        };
        let short = sel.can_be_prefix()
            && self
                .pcct
                .entry(slot)
                .is_some_and(|e| e.name.len() < shards.ndt().prefix_len());
        if short {
            shards.count_short(self.thread, more);
        }
    }

    /// Removes `face` from every PIT entry; entries left without downstreams are retired.
    pub(super) fn purge_face(&mut self, face: FaceId) {
        let slots: Vec<(u32, Selectors)> = self.pcct.pit_slots().collect();
        for (slot, sel) in slots {
            let Some(pit) = self.pcct.pit_mut(slot, sel) else {
                continue;
            };
            pit.downstreams.retain(|d| d.face != face);
            pit.upstreams.retain(|u| u.face != face);
            if pit.downstreams.is_empty() {
                self.finalize(slot, sel, false, None);
            }
        }
    }
}
