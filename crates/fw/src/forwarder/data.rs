//! The Data pipeline.

use kite_packet::{tlv_type, Name, Nonce};

use super::interest::sha2_digest;
use super::{DropReason, InData, Invocation, Pipelines, UnsolicitedPolicy};
use crate::face::{FaceScope, LinkType};
use crate::fib::FibGuard;
use crate::hash::NameHashes;
use crate::out::Out;
use crate::pcct::{NameScope, Selectors};
use crate::time::Time;

/// How a Data's name relates to a PCCT entry's (Interest) name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NameMatch {
    /// Equal names.
    Exact,
    /// The entry's name is a proper prefix of the Data's (needs CanBePrefix).
    Prefix,
    /// The entry's name is the Data's full name (with its implicit digest).
    Digest,
}

impl Pipelines {
    pub(super) fn on_data(
        &mut self,
        fib: &FibGuard<'_>,
        now: Time,
        pkt: &InData,
        out: &mut Vec<Out>,
    ) {
        self.counters.in_data += 1;
        let Some(face) = self.known_face(pkt.face) else {
            return;
        };
        if face.scope == FaceScope::NonLocal
            && NameScope::of(&pkt.data.name) == NameScope::Localhost
        {
            return self.drop_packet(DropReason::ScopeViolation);
        }
        // The token names the PIT entry directly; a token of ours that does not match the
        // name is forged or stale and satisfies nothing.
        if let Some((slot, _)) = pkt.token.as_ref().and_then(|t| self.pcct.resolve(t)) {
            if self.satisfy(fib, slot, pkt, now, false, out) {
                return;
            }
            return self.drop_packet(DropReason::TokenMismatch);
        }
        // No usable token (a local producer, a peer that does not echo tokens): every PCCT
        // entry whose name could match, in every hint partition, but only PIT entries that
        // forwarded to the face the Data came from.
        let hashes = match &pkt.hashes {
            Some(h) => h.clone(),
            None => self.hasher.prefix_hashes(&pkt.data.name),
        };
        let mut satisfied = false;
        let name = &pkt.data.name;
        for len in (0..=name.len()).rev() {
            let prefix = name.prefix(len);
            let slots: smallvec::SmallVec<[u32; 4]> =
                self.pcct.partitions(&prefix, hashes.prefix(len)).collect();
            for slot in slots {
                satisfied |= self.satisfy(fib, slot, pkt, now, true, out);
            }
        }
        satisfied |= self.satisfy_by_full_name(fib, pkt, now, out);
        if !satisfied {
            self.unsolicited(pkt, face.scope, &hashes, now);
        }
    }

    /// Satisfies the PIT entries of `slot` that `pkt` answers; true if any was.
    fn satisfy(
        &mut self,
        fib: &FibGuard<'_>,
        slot: u32,
        pkt: &InData,
        now: Time,
        require_upstream: bool,
        out: &mut Vec<Out>,
    ) -> bool {
        let Some(entry) = self.pcct.entry(slot) else {
            return false;
        };
        let Some(how) = name_match(&entry.name, &pkt.data.name, pkt.data.wire()) else {
            return false;
        };
        // A longer name answers only the CanBePrefix entries.
        let matches = Selectors::ALL.map(|sel| {
            (how != NameMatch::Prefix || sel.can_be_prefix())
                && self
                    .pcct
                    .pit(slot, sel)
                    .is_some_and(|pit| !require_upstream || pit.upstream(pkt.face).is_some())
        });
        if matches == [false; 4] {
            return false;
        }
        // Cache first: retiring the PIT entries may otherwise free the PCCT entry.
        self.cache(slot, how, pkt, now);
        for (sel, matched) in Selectors::ALL.into_iter().zip(matches) {
            if matched {
                self.satisfy_pit(fib, slot, sel, pkt, now, out);
            }
        }
        self.pcct.remove_if_unused(slot);
        true
    }

    /// Token-less Data for Interests that named it with its implicit digest.
    fn satisfy_by_full_name(
        &mut self,
        fib: &FibGuard<'_>,
        pkt: &InData,
        now: Time,
        out: &mut Vec<Out>,
    ) -> bool {
        // Hashing the whole Data costs about a microsecond: only when it could match.
        if !self.pcct.has_digest_named_pits() {
            return false;
        }
        let digest = sha2_digest(pkt.data.wire());
        let Some(c) =
            kite_packet::Component::new(tlv_type::IMPLICIT_SHA256_DIGEST_COMPONENT, &digest)
        else {
            return false;
        };
        // A Data whose name leaves no room for the digest has a full name longer than any
        // name, so no PIT entry can be named by it.
        let Some(full) = pkt.data.name.clone().checked_append(c) else {
            return false;
        };
        let hash = self.hasher.hash_name(&full);
        let slots: smallvec::SmallVec<[u32; 4]> = self.pcct.partitions(&full, hash).collect();
        let mut satisfied = false;
        for slot in slots {
            satisfied |= self.satisfy(fib, slot, pkt, now, true, out);
        }
        satisfied
    }

    /// Sends the Data to every downstream of one PIT entry it answers, and retires the entry.
    fn satisfy_pit(
        &mut self,
        fib: &FibGuard<'_>,
        slot: u32,
        sel: Selectors,
        pkt: &InData,
        now: Time,
        out: &mut Vec<Out>,
    ) {
        let ingress_ad_hoc = self
            .faces
            .get(&pkt.face)
            .is_some_and(|f| f.link_type == LinkType::AdHoc);
        let pit = self.pcct.pit(slot, sel).expect("checked by the caller");
        for d in &pit.downstreams {
            // Not back where it came from (unless ad hoc), not to a face that is gone, not to
            // a downstream whose own Interest has expired (it has given up waiting).
            let same_face = d.face == pkt.face && !ingress_ad_hoc;
            if same_face || d.expiry < now || !self.faces.contains_key(&d.face) {
                continue;
            }
            out.push(Out::Data {
                face: d.face,
                wire: pkt.data.wire().clone(),
                token: d.token,
                ingress: pkt.face,
                congestion_mark: pkt.congestion_mark.max(d.congestion_mark),
                from_cs: false,
            });
        }
        let (fib_ref, strategy, nonce, hop_limit) = (
            pit.fib,
            pit.strategy,
            pit.interest.nonce,
            pit.interest.hop_limit,
        );
        if let Some(entry) = Self::fib_entry_valid(fib, fib_ref) {
            let inv = Invocation {
                strategy,
                fib: entry,
                slot,
                sel,
                ingress: pkt.face,
                nonce: nonce.unwrap_or(Nonce([0; 4])),
                hop_limit,
            };
            self.with_strategy(inv, now, out, |s, ctx| s.after_receive_data(ctx));
        }
        self.counters.satisfied += 1;
        let freshness = pkt.data.freshness_ms();
        self.finalize(slot, sel, true, Some((pkt.face, freshness)));
    }

    /// Caches a Data that satisfied the entry in `slot`, under its own name (the entry's, when
    /// the names are equal).
    fn cache(&mut self, slot: u32, how: NameMatch, pkt: &InData, now: Time) {
        if pkt.no_cache || !self.config.cs_admit {
            return;
        }
        let fresh_until = now + core::time::Duration::from_millis(pkt.data.freshness_ms());
        let wire = pkt.data.wire();
        if how == NameMatch::Exact {
            return self
                .pcct
                .cs_insert_direct(slot, wire, pkt.own_buffer, fresh_until);
        }
        let hint = self.pcct.entry(slot).and_then(|e| e.hint.clone());
        let name = &pkt.data.name;
        let hash = match &pkt.hashes {
            Some(h) => h.full(),
            None => self.hasher.hash_name(name),
        };
        let Ok(own) = self.pcct.find_or_insert(name, hash, hint.as_ref()) else {
            return;
        };
        self.pcct
            .cs_insert_direct(own, wire, pkt.own_buffer, fresh_until);
    }

    /// Data nobody asked for: cached if the policy admits it, else dropped.
    fn unsolicited(&mut self, pkt: &InData, scope: FaceScope, hashes: &NameHashes, now: Time) {
        let admit = match self.config.unsolicited {
            UnsolicitedPolicy::DropAll => false,
            UnsolicitedPolicy::AdmitLocal => scope == FaceScope::Local,
            UnsolicitedPolicy::AdmitNetwork => scope == FaceScope::NonLocal,
            UnsolicitedPolicy::AdmitAll => true,
        };
        self.drop_packet(DropReason::Unsolicited);
        if !admit || pkt.no_cache || !self.config.cs_admit {
            return;
        }
        let Ok(slot) = self
            .pcct
            .find_or_insert(&pkt.data.name, hashes.full(), None)
        else {
            return;
        };
        let fresh_until = now + core::time::Duration::from_millis(pkt.data.freshness_ms());
        self.pcct
            .cs_insert_direct(slot, pkt.data.wire(), pkt.own_buffer, fresh_until);
    }
}

/// How `data_name` answers an Interest named `interest_name`, if it can.
fn name_match(interest_name: &Name, data_name: &Name, data_wire: &[u8]) -> Option<NameMatch> {
    if interest_name == data_name {
        return Some(NameMatch::Exact);
    }
    if interest_name.is_prefix_of(data_name) {
        return Some(NameMatch::Prefix);
    }
    let last = interest_name.last()?;
    let digest_named = last.typ() == tlv_type::IMPLICIT_SHA256_DIGEST_COMPONENT
        && interest_name.len() == data_name.len() + 1
        && data_name.is_prefix_of(interest_name);
    (digest_named && last.value() == sha2_digest(data_wire)).then_some(NameMatch::Digest)
}
