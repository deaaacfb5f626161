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
        if !pkt.rehomed {
            self.counters.in_data += 1;
        }
        self.data_out_start = out.len();
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
            let entry_len = self.pcct.entry(slot).map_or(0, |e| e.name.len());
            if self.satisfy(fib, slot, pkt, now, false, true, out) {
                // Nothing else to look for, nearly always: an exact entry, no CanBePrefix
                // entry pending here, one thread.
                let others = entry_len < pkt.data.name.len()
                    || self.pcct.has_cbp_pending()
                    || self.config.shards.is_some();
                if others {
                    self.satisfy_others(fib, slot, entry_len, pkt, now, out);
                }
                return;
            }
            return self.drop_packet(DropReason::TokenMismatch);
        }
        // No usable token (a local producer, a peer that does not echo tokens): every PCCT
        // entry whose name could match, in every hint partition, but only PIT entries that
        // forwarded to the face the Data came from. A copy from another thread was solicited
        // there, and satisfies whatever it matches here.
        let hashes = match &pkt.hashes {
            Some(h) => h.clone(),
            None => self.hasher.prefix_hashes(&pkt.data.name),
        };
        let require_upstream = !pkt.rehomed;
        let mut satisfied = false;
        let name = &pkt.data.name;
        for len in (0..=name.len()).rev() {
            let prefix = name.prefix(len);
            let slots: smallvec::SmallVec<[u32; 4]> =
                self.pcct.partitions(&prefix, hashes.prefix(len)).collect();
            for slot in slots {
                satisfied |= self.satisfy(fib, slot, pkt, now, require_upstream, true, out);
            }
        }
        satisfied |= self.satisfy_by_full_name(fib, pkt, now, out);
        if satisfied {
            return self.share_with_short_entries(pkt, Some(hashes), out);
        }
        if pkt.rehomed {
            // It was solicited, in the thread that sent it: cached here if this is its home.
            if !pkt.no_cache && self.config.cs_admit && self.is_home(&hashes) {
                self.cache_own(pkt, hashes.full(), None, now);
            }
            return;
        }
        self.unsolicited(pkt, face.scope, &hashes, now);
    }

    /// After the entry a Data's token named, the other pending entries it answers, since NFD
    /// satisfies every one a Data matches: in this thread, those of its own name (when the
    /// token's had a shorter one) and of its prefixes at the lengths where CanBePrefix
    /// entries are pending (nothing to look up when none are); in other threads, their
    /// CanBePrefix entries shorter than the dispatch prefix.
    #[cold]
    #[inline(never)]
    fn satisfy_others(
        &mut self,
        fib: &FibGuard<'_>,
        token_slot: u32,
        token_len: usize,
        pkt: &InData,
        now: Time,
        out: &mut Vec<Out>,
    ) {
        let name = &pkt.data.name;
        let own = token_len < name.len();
        let mut hashes = pkt.hashes.clone();
        if own || self.pcct.has_cbp_pending() {
            let h = hashes.get_or_insert_with(|| self.hasher.prefix_hashes(name));
            for len in (0..=name.len()).rev() {
                let wanted = if len == name.len() {
                    own
                } else {
                    self.pcct.cbp_pending_at(len)
                };
                if !wanted {
                    continue;
                }
                let prefix = name.prefix(len);
                let slots: smallvec::SmallVec<[u32; 4]> = self
                    .pcct
                    .partitions(&prefix, h.prefix(len))
                    .filter(|&s| s != token_slot)
                    .collect();
                for slot in slots {
                    self.satisfy(fib, slot, pkt, now, false, false, out);
                }
            }
        }
        self.share_with_short_entries(pkt, hashes, out);
    }

    /// Hands a copy of a Data that satisfied something here to each other thread with
    /// CanBePrefix entries shorter than the dispatch prefix pending under one of its short
    /// prefixes (their homes are those prefixes' threads). Copies are not passed on again.
    #[inline(never)]
    fn share_with_short_entries(
        &mut self,
        pkt: &InData,
        hashes: Option<NameHashes>,
        out: &mut Vec<Out>,
    ) {
        let Some(shards) = &self.config.shards else {
            return;
        };
        if pkt.rehomed || !shards.others_have_short(self.thread) {
            return;
        }
        let hashes = hashes.unwrap_or_else(|| self.hasher.prefix_hashes(&pkt.data.name));
        let k = shards.ndt().prefix_len();
        let mut given = 1u64 << self.thread;
        for len in 0..k.min(pkt.data.name.len()) {
            let t = shards.ndt().thread_of(hashes.prefix(len));
            if given & 1 << t != 0 || !shards.has_short(t) {
                continue;
            }
            given |= 1 << t;
            rehome(pkt, hashes.clone(), t, out);
        }
    }

    /// Whether this thread is the home of a name with these hashes (always, with one thread).
    fn is_home(&self, hashes: &NameHashes) -> bool {
        self.config
            .shards
            .as_ref()
            .is_none_or(|s| s.ndt().thread_for(hashes) == self.thread)
    }

    /// Satisfies the PIT entries of `slot` that `pkt` answers; true if any was. `cache`: the
    /// Data is cached (or sent to its home) first; false when a satisfy before this one did.
    #[allow(clippy::too_many_arguments)]
    fn satisfy(
        &mut self,
        fib: &FibGuard<'_>,
        slot: u32,
        pkt: &InData,
        now: Time,
        require_upstream: bool,
        cache: bool,
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
        if cache {
            self.cache(slot, how, pkt, now, out);
        }
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
            satisfied |= self.satisfy(fib, slot, pkt, now, true, true, out);
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
            // Once per downstream: a face waiting in two of the entries this Data satisfies
            // with the same token gets it once (with different tokens, once for each).
            let sent = out[self.data_out_start..].iter().any(|o| {
                matches!(o, Out::Data { face, token, .. } if *face == d.face && *token == d.token)
            });
            if sent {
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
    /// the names are equal), in this thread or, when its name belongs to another, there.
    fn cache(&mut self, slot: u32, how: NameMatch, pkt: &InData, now: Time, out: &mut Vec<Out>) {
        if pkt.no_cache || !self.config.cs_admit {
            return;
        }
        if how == NameMatch::Exact {
            let fresh_until = now + core::time::Duration::from_millis(pkt.data.freshness_ms());
            let wire = pkt.data.wire();
            return self
                .pcct
                .cs_insert_direct(slot, wire, pkt.own_buffer, fresh_until);
        }
        let Some(entry) = self.pcct.entry(slot) else {
            return;
        };
        let (entry_len, hint) = (entry.name.len(), entry.hint.clone());
        // Only a name shorter than the dispatch prefix can be answered by a Data of another
        // thread's: names of k components or more share their home with their Data.
        if let Some(shards) = self
            .config
            .shards
            .as_ref()
            .filter(|s| entry_len < s.ndt().prefix_len())
        {
            let hashes = match &pkt.hashes {
                Some(h) => h.clone(),
                None => self.hasher.prefix_hashes(&pkt.data.name),
            };
            let home = shards.ndt().thread_for(&hashes);
            if home != self.thread {
                // A copy from another thread is not passed on again.
                if !pkt.rehomed {
                    rehome(pkt, hashes, home, out);
                }
                return;
            }
        }
        let hash = match &pkt.hashes {
            Some(h) => h.full(),
            None => self.hasher.hash_name(&pkt.data.name),
        };
        self.cache_own(pkt, hash, hint.as_ref(), now);
    }

    /// Caches `pkt` under its own name (which hashes to `hash`) in the partition of `hint`.
    fn cache_own(&mut self, pkt: &InData, hash: u64, hint: Option<&Name>, now: Time) {
        let Ok(own) = self.pcct.find_or_insert(&pkt.data.name, hash, hint) else {
            return;
        };
        let fresh_until = now + core::time::Duration::from_millis(pkt.data.freshness_ms());
        self.pcct
            .cs_insert_direct(own, pkt.data.wire(), pkt.own_buffer, fresh_until);
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
        // A token-less Data reaches several threads: only its home caches it.
        if !admit || !self.is_home(hashes) || pkt.no_cache || !self.config.cs_admit {
            return;
        }
        self.cache_own(pkt, hashes.full(), None, now);
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

/// Hands a copy of `pkt` to thread `shard` with its name's hashes, without its PIT token (the
/// other thread matches by name), marked so that it is not passed on again.
#[inline]
fn rehome(pkt: &InData, hashes: NameHashes, shard: u8, out: &mut Vec<Out>) {
    let copy = InData {
        hashes: Some(hashes),
        token: None,
        rehomed: true,
        ..pkt.clone()
    };
    out.push(Out::Shard {
        shard,
        packet: Box::new(crate::out::ToShard::Data(copy)),
    });
}
