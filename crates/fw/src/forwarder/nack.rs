//! The Nack pipeline.

use kite_packet::{NackReason, Nonce};

use super::{DropReason, InNack, Invocation, Pipelines};
use crate::fib::FibGuard;
use crate::out::Out;
use crate::strategy::StrategyTable;
use crate::time::Time;

/// Nack~Duplicate retries per upstream: one, so two forwarders cannot bounce an Interest
/// between them forever.
const DUPLICATE_RETRIES: u8 = 1;

impl Pipelines {
    pub(super) fn on_nack(
        &mut self,
        fib: &FibGuard<'_>,
        now: Time,
        pkt: &InNack,
        out: &mut Vec<Out>,
    ) {
        self.counters.in_nacks += 1;
        if self.known_face(pkt.face).is_none() {
            return;
        }
        let sel = crate::pcct::Selectors::of(&pkt.interest);
        let name = &pkt.interest.name;
        // By token when it is ours and current, else by name (any hint partition).
        let by_token = pkt
            .token
            .as_ref()
            .and_then(|t| self.pcct.resolve(t))
            .filter(|&(slot, s)| {
                s == sel
                    && self.pcct.pit(slot, sel).is_some()
                    && self.pcct.entry(slot).is_some_and(|e| e.name == *name)
            });
        let slot = by_token.map(|(s, _)| s).or_else(|| {
            self.pcct.partitions(name, pkt.hashes.full()).find(|&s| {
                self.pcct
                    .pit(s, sel)
                    .is_some_and(|p| p.upstream(pkt.face).is_some())
            })
        });
        let Some(slot) = slot else {
            return self.drop_packet(DropReason::NackUnmatched);
        };
        let Some(nonce) = pkt.interest.nonce else {
            return self.drop_packet(DropReason::NackUnmatched);
        };
        let Some(up) = self
            .pcct
            .pit_mut(slot, sel)
            .and_then(|pit| pit.upstream_mut(pkt.face))
            .filter(|u| u.nonce == nonce)
        else {
            return self.drop_packet(DropReason::NackUnmatched);
        };
        up.nack = Some(pkt.reason);

        // Nack~Duplicate: the nonce collided somewhere upstream; try once more with a new one.
        if pkt.reason == NackReason::DUPLICATE && up.duplicate_retries < DUPLICATE_RETRIES {
            up.duplicate_retries += 1;
            return self.retry_with_new_nonce(slot, sel, pkt, now, out);
        }
        self.run_nack_strategy(fib, slot, sel, pkt, now, out);
    }

    /// Sends the Interest again to the upstream that Nacked it, with a fresh Nonce.
    fn retry_with_new_nonce(
        &mut self,
        slot: u32,
        sel: crate::pcct::Selectors,
        pkt: &InNack,
        now: Time,
        out: &mut Vec<Out>,
    ) {
        let nonce = self.random_nonce();
        let token = self.pcct.token(slot, sel);
        let pit = self.pcct.pit_mut(slot, sel).expect("checked by the caller");
        let expiry = now + super::lifetime(&pit.interest, self.config.max_interest_lifetime);
        pit.add_upstream(pkt.face, nonce, now, expiry);
        let ingress = pit
            .downstreams
            .last()
            .map_or(crate::face::FaceId::INVALID, |d| d.face);
        out.push(Out::Interest {
            face: pkt.face,
            ingress,
            interest: pit
                .interest
                .outgoing(nonce, pit.interest.hop_limit.map(|h| h.saturating_sub(1))),
            token,
        });
    }

    /// Lets the strategy react to the Nack; if the FIB entry that chose it is gone, the
    /// default reaction runs (Nack downstream once every upstream has Nacked).
    fn run_nack_strategy(
        &mut self,
        fib: &FibGuard<'_>,
        slot: u32,
        sel: crate::pcct::Selectors,
        pkt: &InNack,
        now: Time,
        out: &mut Vec<Out>,
    ) {
        let pit = self.pcct.pit(slot, sel).expect("checked by the caller");
        let (entry, strategy) = match Self::fib_entry_valid(fib, pit.fib) {
            Some(e) => (e, pit.strategy),
            None => (
                fib.lpm(&pkt.interest.name, &pkt.hashes),
                StrategyTable::DEFAULT,
            ),
        };
        let inv = Invocation {
            strategy,
            fib: entry,
            slot,
            sel,
            ingress: pkt.face,
            nonce: pit.interest.nonce.unwrap_or(Nonce([0; 4])),
            hop_limit: pit.interest.hop_limit.map(|h| h.saturating_sub(1)),
        };
        if self.with_strategy(inv, now, out, |s, ctx| {
            s.after_receive_nack(ctx, pkt.reason)
        }) {
            self.finalize(slot, sel, false, None);
        }
    }
}
