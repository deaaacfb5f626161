//! The Interest pipeline.

use bytes::Bytes;
use kite_packet::{tlv_type, InterestView, NackReason, Name, Nonce, PitToken};

use super::{Counters, DropReason, InInterest, Invocation, Pipelines};
use crate::face::{FaceId, FaceScope, LinkType};
use crate::fib::{FibEntry, FibGuard};
use crate::hash::NameHashes;
use crate::out::Out;
use crate::pcct::{DownRecord, NameScope, Selectors};
use crate::strategy::TimerEvent;
use crate::time::Time;

impl Pipelines {
    pub(super) fn on_interest(
        &mut self,
        fib: &FibGuard<'_>,
        now: Time,
        mut pkt: InInterest,
        out: &mut Vec<Out>,
    ) {
        crate::fault::panic_if_asked("fwd", &pkt.interest.name);
        if pkt.cs_probe.is_some() {
            match self.probe_cs(fib, now, pkt, out) {
                Some(here) => pkt = here,
                None => return,
            }
        }
        self.counters.in_interests += 1;
        let Some(face) = self.known_face(pkt.face) else {
            return;
        };
        // HopLimit: drop at 0, else decrement; NFD's default_hop_limit fills it in.
        let hop_limit = match pkt.interest.hop_limit {
            Some(0) => return self.drop_packet(DropReason::HopLimitZero),
            Some(h) => Some(h - 1),
            None if self.config.default_hop_limit > 0 => Some(self.config.default_hop_limit - 1),
            None => None,
        };
        let name = &pkt.interest.name;
        if face.scope == FaceScope::NonLocal && NameScope::of(name) == NameScope::Localhost {
            return self.drop_packet(DropReason::ScopeViolation);
        }
        let nonce = match pkt.interest.nonce {
            Some(n) => n,
            None => self.random_nonce(),
        };
        let full_hash = pkt.hashes.full();
        if self.dnl.has(full_hash, nonce) {
            let strategy = fib.lpm(name, &pkt.hashes).strategy;
            return self.interest_loop(&pkt, face.link_type, nonce, strategy, out);
        }

        // The forwarding hint picks the PIT-CS partition and the route.
        let hinted = match self.choose_hint(fib, &pkt) {
            Ok(h) => h,
            Err(()) => {
                nack_one(
                    (pkt.face, pkt.token),
                    &pkt.interest,
                    nonce,
                    NackReason::NO_ROUTE,
                    out,
                );
                return self.drop_packet(DropReason::NoHintRoute);
            }
        };
        let hint_name = hinted.as_ref().map(|(n, _)| n);
        let sel = Selectors::of(&pkt.interest);
        let slot = match self.pcct.find_or_insert(name, full_hash, hint_name) {
            Ok(s) => s,
            Err(_) => {
                let to = (pkt.face, pkt.token);
                return table_full(&mut self.counters, to, &pkt.interest, nonce, out);
            }
        };

        let existing = self.pcct.pit(slot, sel).is_some();
        if let Some(pit) = self.pcct.pit(slot, sel) {
            if pit
                .nonce_seen(nonce, pkt.face)
                .is_loop(face.link_type == LinkType::PointToPoint)
            {
                let strategy = pit.strategy;
                return self.interest_loop(&pkt, face.link_type, nonce, strategy, out);
            }
        } else if self.config.cs_serve && self.cs_lookup(slot, &pkt, hint_name, now, out) {
            self.pcct.remove_if_unused(slot);
            return;
        }

        // The PIT entry takes the Interest (the latest one received is what goes upstream).
        let lifetime = super::lifetime(&pkt.interest, self.config.max_interest_lifetime);
        let to = (pkt.face, pkt.token);
        let down = DownRecord {
            face: pkt.face,
            nonce,
            expiry: now + lifetime,
            arrived: now,
            token: pkt.token,
            congestion_mark: pkt.congestion_mark,
        };
        if existing {
            // Kept past this burst: copied out of its receive buffer, as `pit_insert` does.
            let mut interest = pkt.interest;
            interest.detach();
            let pit = self.pcct.pit_mut(slot, sel).expect("PIT entry exists");
            pit.interest = interest;
        } else {
            self.counters.cs_misses += 1;
            // A face past its share of the PIT is refused before it takes a new entry.
            if NameScope::of(name) != NameScope::Localhost && !self.admits(pkt.face) {
                self.pcct.remove_if_unused(slot);
                return table_full(&mut self.counters, to, &pkt.interest, nonce, out);
            }
            let id = self.next_pit_id;
            self.next_pit_id += 1;
            let strategy = crate::strategy::StrategyTable::DEFAULT;
            if let Err(interest) = self.pcct.pit_insert(slot, id, pkt.interest, strategy) {
                self.pcct.remove_if_unused(slot);
                return table_full(&mut self.counters, to, &interest, nonce, out);
            }
            self.count_short(slot, sel, true);
        }

        // Downstream record and expiry timer.
        let pit = self.pcct.pit_mut(slot, sel).expect("PIT entry exists");
        let new_downstream = pit.downstream(pkt.face).is_none();
        pit.add_downstream(down);
        let (pit_id, expiry) = (pit.id, pit.expiry);
        if new_downstream {
            self.hold(pkt.face);
        }
        let pit = self.pcct.pit_mut(slot, sel).expect("PIT entry exists");
        let scheduled = match pit.timer {
            Some(t) => self.timers.reschedule(t, expiry),
            None => match self
                .timers
                .schedule(expiry, TimerEvent::PitExpiry { slot, sel, pit_id })
            {
                Ok(t) => {
                    pit.timer = Some(t);
                    true
                }
                Err(_) => false,
            },
        };
        if !scheduled {
            let pit = self.pcct.pit(slot, sel).expect("PIT entry exists");
            table_full(&mut self.counters, to, &pit.interest, nonce, out);
            self.finalize(slot, sel, false, None);
            return;
        }

        // NextHopFaceId from a local application bypasses the strategy.
        if let Some(next_hop) = pkt.next_hop {
            if face.scope != FaceScope::Local || !self.faces.contains_key(&next_hop) {
                self.finalize(slot, sel, false, None);
                return self.drop_packet(DropReason::BadNextHop);
            }
            let admitted = Admitted {
                slot,
                sel,
                nonce,
                hop_limit,
            };
            return self.forward_to_next_hop(&admitted, pkt.face, next_hop, now, out);
        }

        let entry: &FibEntry = match hinted {
            Some((_, e)) => e,
            None => {
                let pit = self.pcct.pit(slot, sel).expect("PIT entry exists");
                fib.lpm(&pit.interest.name, &pkt.hashes)
            }
        };
        let pit = self.pcct.pit_mut(slot, sel).expect("PIT entry exists");
        pit.fib = Some((entry.id, entry.seq));
        pit.strategy = entry.strategy;
        let inv = Invocation {
            strategy: entry.strategy,
            fib: entry,
            slot,
            sel,
            ingress: pkt.face,
            nonce,
            hop_limit,
        };
        if self.with_strategy(inv, now, out, |s, ctx| s.after_receive_interest(ctx)) {
            self.finalize(slot, sel, false, None);
        }
    }

    /// The partition and FIB entry a forwarding hint selects: the first hint with a route.
    /// `Ok(None)` without a hint, or when a hint names this network region (the Interest is
    /// where its hint points, so its own name routes it). `Err` when no hint has a route.
    fn choose_hint<'g>(
        &self,
        fib: &'g FibGuard<'_>,
        pkt: &InInterest,
    ) -> Result<Option<(Name, &'g FibEntry)>, ()> {
        if !pkt.interest.has_forwarding_hint() {
            return Ok(None);
        }
        let in_region = pkt.interest.forwarding_hint().any(|h| {
            self.config
                .network_region
                .iter()
                .any(|r| r.is_prefix_of(&h))
        });
        if in_region {
            return Ok(None);
        }
        for hint in pkt.interest.forwarding_hint() {
            let hashes: NameHashes = self.hasher.prefix_hashes(&hint);
            let entry = fib.lpm(&hint, &hashes);
            if !entry.nexthops.is_empty() {
                return Ok(Some((hint, entry)));
            }
        }
        Err(())
    }

    /// A CanBePrefix Interest shorter than the dispatch prefix, whose Data may be in any
    /// thread's CS (`docs/forwarding.md`, "Shards"). The input stage hands it to its own
    /// thread first: there, what the pipeline decides before the CS (a loop, a pending entry
    /// it joins, a drop) is decided at once. Otherwise it visits every thread's CS in turn,
    /// carrying the first Data in canonical order it takes among those seen, and the last
    /// thread answers with it, as NFD's one CS would; when none has one, it goes back home
    /// for the whole pipeline. Returns the Interest when the pipeline runs here and now.
    #[cold]
    #[inline(never)]
    fn probe_cs(
        &mut self,
        fib: &FibGuard<'_>,
        now: Time,
        mut pkt: InInterest,
        out: &mut Vec<Out>,
    ) -> Option<InInterest> {
        let mut probe = pkt.cs_probe.take()?;
        let allowed = self.faces.get(&pkt.face).is_some_and(|f| {
            f.scope == FaceScope::Local || NameScope::of(&pkt.interest.name) != NameScope::Localhost
        }) && pkt.interest.hop_limit != Some(0);
        let hinted = self.choose_hint(fib, &pkt);
        let hint = hinted
            .as_ref()
            .ok()
            .and_then(|h| h.as_ref().map(|(n, _)| n));
        if !probe.started {
            let full = pkt.hashes.full();
            let pending = hinted.is_err()
                || self
                    .pcct
                    .find(&pkt.interest.name, full, hint)
                    .is_some_and(|slot| {
                        self.pcct.pit(slot, Selectors::of(&pkt.interest)).is_some()
                    });
            let looping = pkt.interest.nonce.is_some_and(|n| self.dnl.has(full, n));
            if !allowed || pending || looping || !self.config.cs_serve {
                return Some(pkt);
            }
            probe.started = true;
        }
        if allowed && self.config.cs_serve && hinted.is_ok() {
            self.last_prefix_lookup = now;
            let i = &pkt.interest;
            if let Some((slot, wire)) =
                self.pcct
                    .cs_match_prefix(&i.name, hint, i.must_be_fresh, now)
            {
                let name = self.pcct.entry(slot).map(|e| e.name.clone());
                if let Some(name) = name {
                    if probe.best.as_ref().is_none_or(|(b, _)| name < *b) {
                        self.pcct.cs_touch(slot);
                        probe.best = Some((name, wire));
                    }
                }
            }
        }
        let threads = self.config.shards.as_ref().map_or(1, |s| s.ndt().threads());
        let next = (self.thread + 1) % threads.max(1);
        if next != probe.home {
            pkt.cs_probe = Some(probe);
        } else if let Some((_, wire)) = probe.best.take() {
            // Every thread seen: the first match of them all answers it.
            self.counters.in_interests += 1;
            self.answer_from_cs(&pkt, wire, out);
            return None;
        }
        if next == self.thread {
            // One thread (no other to visit): its pipeline, here.
            return Some(pkt);
        }
        out.push(Out::Shard {
            shard: next,
            packet: Box::new(crate::out::ToShard::Interest(pkt)),
        });
        None
    }

    /// Answers from the CS if it can; true on a hit.
    fn cs_lookup(
        &mut self,
        slot: u32,
        pkt: &InInterest,
        hint: Option<&Name>,
        now: Time,
        out: &mut Vec<Out>,
    ) -> bool {
        // The Interest's own name first: for a CanBePrefix Interest it is also the first in
        // canonical order.
        let i = &pkt.interest;
        let hit = match self.pcct.cs_match(slot, i.must_be_fresh, now) {
            Some(hit) => Some(hit),
            None if i.can_be_prefix || i.name.ends_in_implicit_digest() => {
                self.cs_lookup_further(pkt, hint, now)
            }
            None => None,
        };
        let Some((target, wire)) = hit else {
            return false;
        };
        self.pcct.cs_touch(target);
        self.answer_from_cs(pkt, wire, out);
        true
    }

    /// Answers `pkt` with the CS's `wire`, counting the hit (a lookup on this thread, or the
    /// best of a probe through every thread).
    #[inline]
    fn answer_from_cs(&mut self, pkt: &InInterest, wire: Bytes, out: &mut Vec<Out>) {
        self.counters.cs_hits += 1;
        out.push(Out::Data {
            face: pkt.face,
            wire,
            token: pkt.token,
            ingress: FaceId::CONTENT_STORE,
            congestion_mark: pkt.congestion_mark,
            from_cs: true,
        });
    }

    /// A CS hit beyond the Interest's own name: the first Data under it for a CanBePrefix
    /// Interest, the Data it names by digest for one whose name ends in an implicit digest.
    #[cold]
    #[inline(never)]
    fn cs_lookup_further(
        &mut self,
        pkt: &InInterest,
        hint: Option<&Name>,
        now: Time,
    ) -> Option<(u32, bytes::Bytes)> {
        let i = &pkt.interest;
        if i.can_be_prefix {
            self.last_prefix_lookup = now;
            return self
                .pcct
                .cs_match_prefix(&i.name, hint, i.must_be_fresh, now);
        }
        self.cs_digest_match(pkt, hint, now)
    }

    /// A CS hit for an Interest whose name ends in an implicit digest: the Data cached under
    /// the name without it, if its digest matches.
    fn cs_digest_match(
        &mut self,
        pkt: &InInterest,
        hint: Option<&Name>,
        now: Time,
    ) -> Option<(u32, bytes::Bytes)> {
        let name = &pkt.interest.name;
        let last = name.last()?;
        if last.typ() != tlv_type::IMPLICIT_SHA256_DIGEST_COMPONENT {
            return None;
        }
        let prefix = name.prefix(name.len() - 1);
        let slot = self
            .pcct
            .find(&prefix, pkt.hashes.prefix(name.len() - 1), hint)?;
        let (target, wire) = self.pcct.cs_match(slot, pkt.interest.must_be_fresh, now)?;
        let digest = sha2_digest(&wire);
        (digest.as_slice() == last.value()).then_some((target, wire))
    }

    fn forward_to_next_hop(
        &mut self,
        a: &Admitted,
        ingress: FaceId,
        next_hop: FaceId,
        now: Time,
        out: &mut Vec<Out>,
    ) {
        let token = self.pcct.token(a.slot, a.sel);
        let pit = self.pcct.pit_mut(a.slot, a.sel).expect("PIT entry exists");
        let expiry = now + super::lifetime(&pit.interest, self.config.max_interest_lifetime);
        pit.add_upstream(next_hop, a.nonce, now, expiry);
        out.push(Out::Interest {
            face: next_hop,
            ingress,
            interest: pit.interest.outgoing(a.nonce, a.hop_limit),
            token,
        });
    }

    /// A looping Interest: Nack~Duplicate back on a point-to-point face unless the strategy
    /// tolerates duplicates.
    fn interest_loop(
        &mut self,
        pkt: &InInterest,
        link: LinkType,
        nonce: Nonce,
        strategy: crate::fib::StrategyId,
        out: &mut Vec<Out>,
    ) {
        self.drop_packet(DropReason::Loop);
        let nacks = self.strategies.get(strategy).is_none_or(|s| s.nack_loops());
        if nacks && link == LinkType::PointToPoint {
            nack_one(
                (pkt.face, pkt.token),
                &pkt.interest,
                nonce,
                NackReason::DUPLICATE,
                out,
            );
        }
    }
}

/// No room in a table: the drop is counted and `interest` from the downstream `to` (face,
/// token) is Nacked with Congestion. It takes the counters alone, so a caller may pass an
/// Interest that lives in the PCCT.
fn table_full(
    counters: &mut Counters,
    to: (FaceId, Option<PitToken>),
    interest: &InterestView,
    nonce: Nonce,
    out: &mut Vec<Out>,
) {
    counters.drop(DropReason::TableFull);
    nack_one(to, interest, nonce, NackReason::CONGESTION, out);
}

/// Nacks `interest`, as the downstream on `face` sent it with `nonce` and `token`, back to it.
fn nack_one(
    (face, token): (FaceId, Option<PitToken>),
    interest: &InterestView,
    nonce: Nonce,
    reason: NackReason,
    out: &mut Vec<Out>,
) {
    out.push(Out::Nack {
        face,
        reason,
        interest: interest.outgoing(nonce, interest.hop_limit),
        token,
    });
}

/// What the Interest pipeline has settled about an Interest it keeps pending.
struct Admitted {
    slot: u32,
    sel: Selectors,
    nonce: Nonce,
    hop_limit: Option<u8>,
}

/// SHA-256 of a Data's encoding (its implicit digest).
pub(super) fn sha2_digest(wire: &[u8]) -> [u8; 32] {
    use sha2::Digest;
    sha2::Sha256::digest(wire).into()
}
