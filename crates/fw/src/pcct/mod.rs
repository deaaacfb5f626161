//! The PIT-CS Composite Table (PCCT) of one forwarding thread (NDN-DPDK paper, section 5).
//!
//! An entry is keyed by (name, chosen forwarding hint) and holds up to four PIT entries, one
//! per combination of CanBePrefix and MustBeFresh ([`Selectors`]: NFD aggregates only Interests
//! that agree on both, so each downstream gets the Data it asked for), and one CS entry: a
//! Data, under its own name.
//!
//! CS lookups: an exact Interest finds its Data by the entry of its own name; a CanBePrefix
//! Interest takes, as NFD's CS does, the first cached Data under its name in canonical order
//! that it accepts (fresh, when it asks MustBeFresh), found through an ordered index of the
//! cached names (the `order` module) that exact lookups never touch.
//!
//! Structure: entries in a preallocated slab; a bucket index of slot numbers keyed by
//! the *name* hash only (its buckets prefetched a burst ahead), so the partitions of one name
//! for different hints can all be found (Data without a token needs that); PIT entries in their own
//! slab; CS entries on an intrusive least-recently-used list (O(1) touch and eviction; LRU as
//! NFD's default policy, with no allocation per access) and in the ordered index.
//!
//! Tokens: a PIT entry forwarded upstream is named by a 6-octet token
//! `thread (8 bits) | selectors (2) | generation (14) | slot (24)`, so an arriving Data or Nack
//! finds its entry by indexing the slab, the generation rejects tokens of entries that are gone,
//! and the caller then compares names so a forged token satisfies nothing. Six octets, not
//! eight: NDNd v1.5.3 echoes a downstream's token only when it is 6 octets long (it aborts on
//! any other length), and 2^24 slots per thread is more than a PCCT is configured for.
//!
//! Capacity is bounded four ways (entries, PIT entries, CS entries, CS octets); when entries run
//! out the least recently used CS entries are evicted to make room, and when that is not enough
//! the insertion fails and the caller Nacks the Interest.
//!
//! Memory: what the table keeps never keeps a receive buffer alive. A received packet is a
//! slice of a burst's buffer (64 KiB and more, shared with every packet of the burst), so a
//! kept slice would pin all of it: the PIT copies its Interest, the CS its Data, into
//! buffers of their own ([`kite_packet::pool`]; a Data whose frame was received alone into
//! such a buffer is kept as is), and an entry's name shares one of those
//! copies or holds its own ([`Entry::name`]). A CS entry is charged the size classes of its
//! packet and its name's buffer, and [`KEPT_OVERHEAD`] for each, against
//! [`PcctConfig::cs_bytes`].

mod order;
mod pit;

use bytes::Bytes;
use kite_packet::pool::{copy_reusable, footprint};
use kite_packet::{InterestView, Name, PitToken};

pub use pit::{DownRecord, NameScope, NonceSeen, PitEntry, Selectors, UpRecord, PIT_SCRATCH_LEN};

use crate::fib::StrategyId;
use crate::index::BucketIndex;
use crate::slab::Slab;
use crate::time::Time;

/// "No entry" in the LRU links.
const NIL: u32 = u32::MAX;

/// Bits of the slot generation carried in a token.
const GEN_BITS: u32 = 14;
const GEN_MASK: u32 = (1 << GEN_BITS) - 1;
/// Bits of the slot number carried in a token: a PCCT holds at most 2^24 entries.
const SLOT_BITS: u32 = 24;
/// Most entries a PCCT may be configured with (slots must fit in a token).
pub const MAX_CAPACITY: usize = 1 << SLOT_BITS;
/// Octets of Kite's PIT token.
const TOKEN_LEN: usize = 6;

/// Name lengths [`Pcct::cbp_pending_at`] tells apart; longer names count with this length.
const CBP_LENS: usize = 32;

/// PIT entries kept for `/localhost` Interests (management commands and datasets, which only
/// local faces may send) beyond [`PcctConfig::pit_capacity`]. (The entries they need come
/// from [`PcctConfig::capacity`], which by default exceeds PIT, reserve and CS together.)
pub const LOCALHOST_PIT_RESERVE: usize = 256;

/// Octets one kept copy costs beyond its size class ([`kite_packet::pool`]), charged to the
/// CS byte capacity: the header holding its reference count and the buffer's handle (a shared
/// copy's `Bytes` header, 48, or a reusable buffer's, 40), and the allocator's header of that
/// block (16).
pub const KEPT_OVERHEAD: usize = 64;

/// How big a PCCT may grow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PcctConfig {
    /// Entries (names × hints) held at once.
    pub capacity: usize,
    /// PIT entries held at once.
    pub pit_capacity: usize,
    /// CS entries (cached Data) held at once.
    pub cs_capacity: usize,
    /// Octets the CS entries may hold at once: their packets, names and [`KEPT_OVERHEAD`]
    /// each (the fixed-size entries themselves are [`Pcct::ENTRY_BYTES`] per slot, allocated
    /// up front).
    pub cs_bytes: usize,
}

impl Default for PcctConfig {
    fn default() -> Self {
        PcctConfig {
            capacity: 1 << 18,
            pit_capacity: 1 << 17,
            cs_capacity: 1 << 16,
            cs_bytes: 256 << 20,
        }
    }
}

/// A cached Data's octets, in a reusable buffer of its own ([`kite_packet::pool`]): the CS's
/// copy, or the buffer the Data's frame was received into alone, kept as is. Shared with the
/// packets that carry it out; its buffer goes back to this thread's free list when the entry
/// goes, unless a packet still holds it (then it is freed with the last one).
#[derive(Debug)]
pub struct CachedWire {
    wire: Bytes,
    /// Octets of the buffer it keeps alive (its size class).
    held: usize,
}

impl CachedWire {
    /// Octets of the Data.
    pub fn len(&self) -> usize {
        self.wire.len()
    }

    /// Whether the Data is empty (never, for a decoded Data).
    pub fn is_empty(&self) -> bool {
        self.wire.is_empty()
    }

    /// The Data as a `Bytes` to send.
    fn share(&self) -> Bytes {
        self.wire.clone()
    }
}

impl Drop for CachedWire {
    fn drop(&mut self) {
        kite_packet::pool::give_back_slice(core::mem::take(&mut self.wire));
    }
}

/// How many cached Data under its name a CanBePrefix Interest may be compared with before it
/// counts as a miss (NFD looks at all of them): stale Data or other partitions' under a short
/// name would otherwise let one Interest cost a walk of the whole CS.
pub const PREFIX_MATCH_SCAN: usize = 256;

/// A cached Data, under its own name.
#[derive(Debug)]
pub struct CsEntry {
    /// A copy of its encoding.
    wire: CachedWire,
    /// Until when it is fresh (for MustBeFresh Interests).
    fresh_until: Time,
}

impl CsEntry {
    /// Octets of the Data.
    pub fn len(&self) -> usize {
        self.wire.len()
    }

    /// Whether the Data is empty (never, for a decoded Data).
    pub fn is_empty(&self) -> bool {
        self.wire.is_empty()
    }

    /// Whether a MustBeFresh Interest may take it at `now`.
    fn fresh_at(&self, now: Time) -> bool {
        self.fresh_until > now
    }
}

/// One (name, chosen forwarding hint) entry.
#[derive(Debug)]
pub struct Entry {
    /// The name (an Interest's or a Data's). Once the entry holds a PIT or CS entry the name
    /// shares its PIT entry's copy of the Interest, or holds a copy of its own (never a
    /// receive buffer).
    pub name: Name,
    /// The forwarding hint the Interest was forwarded by, if any (a separate partition).
    pub hint: Option<Name>,
    name_hash: u64,
    /// The PIT entries, by [`Selectors::index`] ([`NIL`]: none).
    pit: [u32; 4],
    cs: Option<CsEntry>,
    lru_prev: u32,
    lru_next: u32,
    /// Whether `name` and `hint` no longer share a received packet's buffer.
    detached: bool,
    /// Whether `name` shares a reusable copy of an Interest ([`kite_packet::pool::copy_reusable`]),
    /// handed back when the entry goes (the name is the copy's last owner in the table: the
    /// PIT entry goes first).
    reusable: bool,
    /// Octets the CS entry is charged (0 without one).
    cs_charge: usize,
}

impl Entry {
    /// Takes the entry out of the LRU list's links, returning its neighbours (`NIL` at the
    /// head or the tail) for [`Pcct::lru_relink`] to join.
    fn take_lru_links(&mut self) -> (u32, u32) {
        (
            core::mem::replace(&mut self.lru_prev, NIL),
            core::mem::replace(&mut self.lru_next, NIL),
        )
    }

    /// The CS entry.
    pub fn cs(&self) -> Option<&CsEntry> {
        self.cs.as_ref()
    }

    /// The hash of the name (the input stage's full-name hash).
    pub fn name_hash(&self) -> u64 {
        self.name_hash
    }

    /// Whether a PIT entry exists for these selectors.
    pub fn has_pit(&self, sel: Selectors) -> bool {
        self.pit[sel.index()] != NIL
    }

    /// The PIT entry's index in the PIT slab for these selectors.
    #[inline]
    fn pit_index(&self, sel: Selectors) -> Option<u32> {
        Some(self.pit[sel.index()]).filter(|&i| i != NIL)
    }

    fn is_unused(&self) -> bool {
        self.pit == [NIL; 4] && self.cs.is_none()
    }

    /// Makes the name and hint hold their own copies, unless they do already.
    fn detach_names(&mut self) {
        if !self.detached {
            self.name.detach();
            if let Some(h) = &mut self.hint {
                h.detach();
            }
            self.detached = true;
        }
    }
}

impl order::Keys for Slab<Entry> {
    fn key(&self, slot: u32) -> order::Key<'_> {
        let e = self.get(slot).expect("the index holds live entries only");
        order::Key::new(e.name.value(), e.hint.as_ref().map(Name::value))
    }
}

impl Drop for Entry {
    fn drop(&mut self) {
        if self.reusable {
            core::mem::take(&mut self.name).give_back_backing();
        }
    }
}

/// A new PCCT entry found no room: every entry is in use and none could be evicted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Full;

/// The PIT-CS composite table of one forwarding thread.
#[derive(Debug)]
pub struct Pcct {
    thread: u8,
    entries: Slab<Entry>,
    index: BucketIndex,
    pits: Slab<PitEntry>,
    /// PIT entries for names outside `/localhost`; the slab holds [`LOCALHOST_PIT_RESERVE`]
    /// more, so management still answers when a flood has filled the PIT.
    pit_capacity: usize,
    lru_head: u32,
    lru_tail: u32,
    cs_len: usize,
    cs_capacity: usize,
    /// Octets charged to the CS entries held.
    cs_bytes: usize,
    cs_byte_capacity: usize,
    /// The slots holding CS entries, in canonical order of their names, while `order_on`:
    /// the index is kept only while CanBePrefix lookups use it ([`Pcct::drop_order`]), so
    /// that a thread serving exact Interests alone never pays for it.
    order: order::NameOrder,
    order_on: bool,
    /// PIT entries whose name ends in an implicit digest: only while there are some can a
    /// Data without a token need its digest computed to find them.
    digest_named_pits: usize,
    /// CanBePrefix PIT entries by name length (the last one: that length and longer), and in
    /// all: a Data that came back for one entry looks for others it answers only where
    /// there are some.
    cbp_by_len: [u32; CBP_LENS + 1],
    cbp_pending: u32,
}

impl Pcct {
    /// An empty table for forwarding thread `thread` (the thread id goes into tokens).
    pub fn new(thread: u8, config: PcctConfig) -> Self {
        Pcct {
            thread,
            entries: Slab::with_capacity(config.capacity.min(MAX_CAPACITY)),
            index: BucketIndex::with_capacity(config.capacity.min(MAX_CAPACITY)),
            pits: Slab::with_capacity(config.pit_capacity + LOCALHOST_PIT_RESERVE),
            pit_capacity: config.pit_capacity,
            lru_head: NIL,
            lru_tail: NIL,
            cs_len: 0,
            cs_capacity: config.cs_capacity.min(config.capacity),
            cs_bytes: 0,
            cs_byte_capacity: config.cs_bytes,
            order: order::NameOrder::new(),
            order_on: false,
            digest_named_pits: 0,
            cbp_by_len: [0; CBP_LENS + 1],
            cbp_pending: 0,
        }
    }

    /// Octets one PCCT entry takes: the entry in the slab plus its share of the index (at the
    /// index's maximum load).
    pub const ENTRY_BYTES: usize =
        core::mem::size_of::<Option<Entry>>() + 4 + 2 * 4 + BucketIndex::BYTES_PER_ID;
    /// Octets one PIT entry takes in its slab, beyond its PCCT entry.
    pub const PIT_ENTRY_BYTES: usize = core::mem::size_of::<Option<PitEntry>>() + 2 * 4;

    /// Entries in use.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// PIT entries in use.
    pub fn pit_len(&self) -> usize {
        self.pits.len()
    }

    /// PIT entries that may still be made for names outside `/localhost`.
    #[inline]
    pub fn pit_free(&self) -> usize {
        self.pit_capacity.saturating_sub(self.pits.len())
    }

    /// CS entries in use (cached Data).
    pub fn cs_len(&self) -> usize {
        self.cs_len
    }

    /// The most CS entries kept.
    pub fn cs_capacity(&self) -> usize {
        self.cs_capacity
    }

    /// Octets charged to the CS entries held (at most [`PcctConfig::cs_bytes`]).
    pub fn cs_bytes(&self) -> usize {
        self.cs_bytes
    }

    /// Changes how many octets the CS holds at most, evicting the least recently used beyond.
    pub fn set_cs_byte_capacity(&mut self, bytes: usize) {
        self.cs_byte_capacity = bytes;
        while self.cs_bytes > self.cs_byte_capacity {
            self.evict_lru();
        }
    }

    /// Changes how many CS entries are kept, evicting the excess.
    pub fn set_cs_capacity(&mut self, capacity: usize) {
        self.cs_capacity = capacity.min(self.entries.capacity());
        while self.cs_len > self.cs_capacity {
            self.evict_lru();
        }
    }

    /// The entry in `slot`.
    #[inline]
    pub fn entry(&self, slot: u32) -> Option<&Entry> {
        self.entries.get(slot)
    }

    /// The entry for (`name`, `hint`), whose name hashes to `name_hash`.
    #[inline]
    pub fn find(&self, name: &Name, name_hash: u64, hint: Option<&Name>) -> Option<u32> {
        let entries = &self.entries;
        self.index.find(name_hash, |s| {
            entries
                .get(s)
                .is_some_and(|e| e.name == *name && e.hint.as_ref() == hint)
        })
    }

    /// Starts loading the index bucket of `name_hash`, which [`Pcct::find`] and
    /// [`Pcct::find_or_insert`] read first.
    #[inline]
    pub fn prefetch(&self, name_hash: u64) {
        self.index.prefetch(name_hash);
    }

    /// The slots of every entry named `name`, whatever their hint.
    pub fn partitions<'a>(
        &'a self,
        name: &'a Name,
        name_hash: u64,
    ) -> impl Iterator<Item = u32> + 'a {
        self.index
            .candidates(name_hash)
            .filter(move |&s| self.entries.get(s).is_some_and(|e| e.name == *name))
    }

    /// The entry for (`name`, `hint`), created when absent. When the table is full, least
    /// recently used CS entries are evicted to make room.
    pub fn find_or_insert(
        &mut self,
        name: &Name,
        name_hash: u64,
        hint: Option<&Name>,
    ) -> Result<u32, Full> {
        if let Some(slot) = self.find(name, name_hash, hint) {
            return Ok(slot);
        }
        // A few evictions at most, so one insertion stays O(1).
        for _ in 0..4 {
            if !self.entries.is_full() || self.cs_len == 0 {
                break;
            }
            self.evict_lru();
        }
        let (slot, _) = self
            .entries
            .insert_with(|| Entry {
                name: name.clone(),
                hint: hint.cloned(),
                name_hash,
                pit: [NIL; 4],
                cs: None,
                lru_prev: NIL,
                lru_next: NIL,
                detached: false,
                reusable: false,
                cs_charge: 0,
            })
            .ok_or(Full)?;
        let entries = &self.entries;
        self.index.insert(name_hash, slot, |s| {
            entries.get(s).map_or(0, |e| e.name_hash)
        });
        Ok(slot)
    }

    /// Drops the entry in `slot` if it holds neither PIT nor CS entry.
    pub fn remove_if_unused(&mut self, slot: u32) {
        let Some(e) = self.entries.get(slot) else {
            return;
        };
        if !e.is_unused() {
            return;
        }
        self.remove_entry(slot, e.name_hash);
    }

    /// Drops the entry in `slot`, whose name hashes to `hash`, from the index and the slab.
    fn remove_entry(&mut self, slot: u32, hash: u64) {
        self.index.remove(hash, slot);
        self.entries.discard(slot);
    }

    // ---- PIT ----

    /// The PIT entry of `slot` for these selectors.
    #[inline]
    pub fn pit(&self, slot: u32, sel: Selectors) -> Option<&PitEntry> {
        let i = self.entries.get(slot)?.pit_index(sel)?;
        self.pits.get(i)
    }

    /// The PIT entry of `slot` for these selectors, mutably.
    #[inline]
    pub fn pit_mut(&mut self, slot: u32, sel: Selectors) -> Option<&mut PitEntry> {
        let i = self.entries.get(slot)?.pit_index(sel)?;
        self.pits.get_mut(i)
    }

    /// Stores a new PIT entry in `slot` for `interest` (number `id`, handled by `strategy`,
    /// [`PitEntry::new`]), built in its place in the PIT (an entry is large: building it first
    /// and moving it in costs copies); the entry must not have one for these selectors (the
    /// Interest's own).
    /// When every PIT entry is in use, the Interest comes back (it is still needed, to Nack
    /// it). The Interest is copied out of its receive buffer
    /// ([`kite_packet::InterestView::detach`]) and the entry's name shares the copy.
    #[allow(clippy::result_large_err)]
    #[inline]
    pub fn pit_insert(
        &mut self,
        slot: u32,
        id: u64,
        mut interest: InterestView,
        strategy: StrategyId,
    ) -> Result<(), InterestView> {
        let sel = Selectors::of(&interest);
        let scope = NameScope::of(&interest.name);
        if scope != NameScope::Localhost && self.pits.len() >= self.pit_capacity {
            return Err(interest);
        }
        if self.pits.is_full() {
            return Err(interest);
        }
        let e = self.entries.get_mut(slot).expect("slot of a live entry");
        if e.detached {
            interest.detach();
        } else {
            interest.detach_reusable();
            e.reusable = true;
            e.name = interest.name.clone();
            if let Some(h) = &mut e.hint {
                h.detach();
            }
            e.detached = true;
        }
        let (i, _) = self
            .pits
            .insert_with(|| PitEntry::new(id, interest, scope, strategy))
            .expect("checked not full above");
        debug_assert_eq!(e.pit[sel.index()], NIL);
        e.pit[sel.index()] = i;
        self.digest_named_pits += usize::from(e.name.ends_in_implicit_digest());
        if sel.can_be_prefix() {
            self.cbp_by_len[e.name.len().min(CBP_LENS)] += 1;
            self.cbp_pending += 1;
        }
        Ok(())
    }

    /// Whether any CanBePrefix PIT entry is pending.
    #[inline]
    pub fn has_cbp_pending(&self) -> bool {
        self.cbp_pending > 0
    }

    /// Whether CanBePrefix PIT entries of names of `len` components may be pending (for
    /// lengths from 32 on: of any such length).
    #[inline]
    pub fn cbp_pending_at(&self, len: usize) -> bool {
        self.cbp_by_len[len.min(CBP_LENS)] > 0
    }

    /// Whether some pending Interest names its Data by implicit digest.
    #[inline]
    pub fn has_digest_named_pits(&self) -> bool {
        self.digest_named_pits > 0
    }

    /// Every PIT entry, as (slot, selectors).
    pub fn pit_slots(&self) -> impl Iterator<Item = (u32, Selectors)> + '_ {
        self.entries.iter().flat_map(|(slot, e)| {
            Selectors::ALL
                .into_iter()
                .filter(move |&sel| e.has_pit(sel))
                .map(move |sel| (slot, sel))
        })
    }

    /// Removes the PIT entry (dropped where it lies, not moved out); the PCCT entry goes too
    /// if nothing else is in it. False when there was no such PIT entry.
    pub fn pit_discard(&mut self, slot: u32, sel: Selectors) -> bool {
        let Some(e) = self.entries.get_mut(slot) else {
            return false;
        };
        let Some(i) = e.pit_index(sel) else {
            return false;
        };
        e.pit[sel.index()] = NIL;
        self.digest_named_pits -= usize::from(e.name.ends_in_implicit_digest());
        if sel.can_be_prefix() {
            self.cbp_by_len[e.name.len().min(CBP_LENS)] -= 1;
            self.cbp_pending -= 1;
        }
        self.pits.discard(i);
        self.remove_if_unused(slot);
        true
    }

    /// The token naming the PIT entry of `slot` for these selectors.
    #[inline]
    pub fn token(&self, slot: u32, sel: Selectors) -> PitToken {
        Self::token_of(self.token_value(slot, sel))
    }

    /// The 48 bits of [`Pcct::token`], for a caller that may not need the token itself
    /// (a strategy that forwards nothing): [`Pcct::token_of`] makes it.
    #[inline]
    pub fn token_value(&self, slot: u32, sel: Selectors) -> u64 {
        let gen = u64::from(self.entries.gen(slot) & GEN_MASK);
        u64::from(self.thread) << 40
            | (sel.index() as u64) << 38
            | gen << SLOT_BITS
            | u64::from(slot)
    }

    /// The token whose bits are `value` ([`Pcct::token_value`]).
    #[inline]
    pub fn token_of(value: u64) -> PitToken {
        PitToken::new(&value.to_be_bytes()[8 - TOKEN_LEN..])
            .expect("6 octets is a valid token length")
    }

    /// A Kite token's 48 bits, if `token` has a Kite token's length.
    #[inline]
    fn token_bits(token: &PitToken) -> Option<u64> {
        let b: [u8; TOKEN_LEN] = token.as_slice().try_into().ok()?;
        Some(b.iter().fold(0, |acc, &x| acc << 8 | u64::from(x)))
    }

    /// The (slot, selectors) a token names, if it is this thread's and still current.
    #[inline]
    pub fn resolve(&self, token: &PitToken) -> Option<(u32, Selectors)> {
        let t = Self::token_bits(token)?;
        if (t >> 40) as u8 != self.thread {
            return None;
        }
        let slot = (t & ((1 << SLOT_BITS) - 1)) as u32;
        let gen = (t >> SLOT_BITS) as u32 & GEN_MASK;
        self.entries.get(slot)?;
        if self.entries.gen(slot) & GEN_MASK != gen {
            return None;
        }
        Some((slot, Selectors::from_index((t >> 38) as usize & 3)))
    }

    /// The forwarding thread a token names (what the input stage dispatches Data and Nacks by).
    #[inline]
    pub fn token_thread(token: &PitToken) -> Option<u8> {
        Self::token_bits(token).map(|t| (t >> 40) as u8)
    }

    // ---- CS ----

    /// The Data cached under the name of `slot`, if a MustBeFresh Interest (`must_be_fresh`)
    /// may take it at `now`, with the slot it is in.
    pub fn cs_match(&mut self, slot: u32, must_be_fresh: bool, now: Time) -> Option<(u32, Bytes)> {
        let cs = self.entries.get(slot)?.cs.as_ref()?;
        (!must_be_fresh || cs.fresh_at(now)).then(|| (slot, cs.wire.share()))
    }

    /// The Data a CanBePrefix Interest for `name` in the partition of `hint` takes: the first
    /// in canonical order under `name` (its own name first), fresh at `now` when
    /// `must_be_fresh`, among the first [`PREFIX_MATCH_SCAN`] cached under it.
    pub fn cs_match_prefix(
        &mut self,
        name: &Name,
        hint: Option<&Name>,
        must_be_fresh: bool,
        now: Time,
    ) -> Option<(u32, Bytes)> {
        self.build_order();
        let entries = &self.entries;
        let mut found = None;
        let mut scanned = 0;
        self.order.under(name.value(), entries, |slot| {
            scanned += 1;
            let Some(e) = entries.get(slot) else {
                return core::ops::ControlFlow::Continue(());
            };
            let usable = e.hint.as_ref() == hint
                && e.cs
                    .as_ref()
                    .is_some_and(|cs| !must_be_fresh || cs.fresh_at(now));
            if usable {
                found = Some(slot);
                return core::ops::ControlFlow::Break(());
            }
            if scanned == PREFIX_MATCH_SCAN {
                return core::ops::ControlFlow::Break(());
            }
            core::ops::ControlFlow::Continue(())
        });
        let slot = found?;
        let cs = self.entries.get(slot)?.cs.as_ref()?;
        Some((slot, cs.wire.share()))
    }

    /// The slots of the Data cached under `prefix` (any partition), in canonical order, at
    /// most `limit` of them.
    pub fn cs_under(&mut self, prefix: &Name, limit: usize) -> Vec<u32> {
        let mut slots = Vec::new();
        if limit == 0 {
            return slots;
        }
        self.build_order();
        self.order.under(prefix.value(), &self.entries, |slot| {
            slots.push(slot);
            if slots.len() == limit {
                core::ops::ControlFlow::Break(())
            } else {
                core::ops::ControlFlow::Continue(())
            }
        });
        slots
    }

    /// Builds the ordered index of the cached names, unless it is kept already: one
    /// insertion per CS entry.
    fn build_order(&mut self) {
        if self.order_on {
            return;
        }
        self.order_on = true;
        let mut at = self.lru_head;
        while let Some(e) = self.entries.get(at) {
            let next = e.lru_next;
            self.order.insert(at, &self.entries);
            at = next;
        }
    }

    /// Whether the ordered index of the cached names is kept.
    pub fn has_order(&self) -> bool {
        self.order_on
    }

    /// Stops keeping the ordered index (the next CanBePrefix lookup builds it again).
    pub fn drop_order(&mut self) {
        self.order.clear();
        self.order_on = false;
    }

    /// Marks the CS entry of `slot` as just used.
    pub fn cs_touch(&mut self, slot: u32) {
        if self.entries.get(slot).is_some_and(|e| e.cs.is_some()) {
            self.lru_unlink(slot);
            self.lru_push_front(slot);
        }
    }

    /// Caches `wire` as the direct entry of `slot`, evicting the least recently used entries
    /// beyond the entry or octet capacity: as is when its frame was received alone into a
    /// reusable buffer of `own_buffer` octets ([`kite_packet::pool::take_reusable`]), else a
    /// copy (a buffer of its own, not the receive buffer it is a slice of; `own_buffer` 0).
    /// A Data larger than the whole octet capacity, or any with the CS off, is neither copied
    /// nor cached.
    pub fn cs_insert_direct(
        &mut self,
        slot: u32,
        wire: &Bytes,
        own_buffer: usize,
        fresh_until: Time,
    ) {
        let held = match own_buffer {
            0 => footprint(wire.len()),
            own => own,
        };
        if self.cs_capacity == 0 || held + KEPT_OVERHEAD > self.cs_byte_capacity {
            return self.remove_if_unused(slot);
        }
        let wire = match own_buffer {
            0 => copy_reusable(wire),
            _ => wire.clone(),
        };
        let wire = CachedWire { wire, held };
        self.cs_set(slot, CsEntry { wire, fresh_until });
    }

    fn cs_set(&mut self, slot: u32, cs: CsEntry) {
        if self.cs_capacity == 0 {
            return self.remove_if_unused(slot);
        }
        let Some(e) = self.entries.get_mut(slot) else {
            return;
        };
        e.detach_names();
        let packet = cs.wire.held + KEPT_OVERHEAD;
        let held = |n: &Name| footprint(n.held_len()) + KEPT_OVERHEAD;
        let charge = packet + held(&e.name) + e.hint.as_ref().map_or(0, held);
        let old_charge = core::mem::replace(&mut e.cs_charge, charge);
        let was_cached = e.cs.replace(cs).is_some();
        self.cs_bytes = self.cs_bytes - old_charge + charge;
        if was_cached {
            self.lru_unlink(slot);
        } else {
            self.cs_len += 1;
            if self.order_on {
                self.order.insert(slot, &self.entries);
            }
        }
        self.lru_push_front(slot);
        debug_assert!(!self.order_on || self.order.len() == self.cs_len);
        while self.cs_len > self.cs_capacity || self.cs_bytes > self.cs_byte_capacity {
            self.evict_lru();
        }
    }

    /// Removes the CS entry of `slot` (and the entry itself if nothing else is in it). The
    /// entry is read once: an eviction per cached Data runs through here once the CS is full,
    /// and looking it up again to unlink and to drop it cost `kite bench fwd` ≈110
    /// instructions per exchange.
    pub fn cs_erase(&mut self, slot: u32) -> bool {
        if self.order_on {
            self.order.remove(slot);
        }
        let Some(e) = self.entries.get_mut(slot) else {
            return false;
        };
        let Some(cs) = e.cs.take() else {
            return false;
        };
        self.cs_bytes -= core::mem::take(&mut e.cs_charge);
        self.cs_len -= 1;
        let (prev, next) = e.take_lru_links();
        let (unused, hash) = (e.is_unused(), e.name_hash);
        self.lru_relink(prev, next);
        if unused {
            self.remove_entry(slot, hash);
        }
        drop(cs);
        true
    }

    /// Slots holding CS entries, most recently used first.
    pub fn cs_slots(&self) -> impl Iterator<Item = u32> + '_ {
        let mut at = self.lru_head;
        core::iter::from_fn(move || {
            if at == NIL {
                return None;
            }
            let slot = at;
            at = self.entries.get(slot).map_or(NIL, |e| e.lru_next);
            Some(slot)
        })
    }

    fn evict_lru(&mut self) {
        if self.lru_tail != NIL {
            debug_assert_eq!(
                self.entries.get(self.lru_tail).map(|e| e.lru_next),
                Some(NIL),
                "the tail has no successor"
            );
            let erased = self.cs_erase(self.lru_tail);
            debug_assert!(erased, "every listed entry holds a CS entry");
            self.prefetch_next_evictions();
        }
    }

    /// Starts loading what coming evictions touch, since the least recently used entries are
    /// long out of cache (`perf`: index removal and entry reads of evictions took ≈10 % of a
    /// forwarding thread's time): the index bucket of the entry after the new tail and the
    /// entry after that one. Both entries read here were prefetched by the two evictions
    /// before, so each bucket has two evictions' time to arrive.
    fn prefetch_next_evictions(&self) {
        let Some(tail) = self.entries.get(self.lru_tail) else {
            return;
        };
        let Some(next) = self.entries.get(tail.lru_prev) else {
            return;
        };
        self.index.prefetch(next.name_hash);
        self.entries.prefetch(next.lru_prev);
    }

    fn lru_unlink(&mut self, slot: u32) {
        let Some(e) = self.entries.get_mut(slot) else {
            return;
        };
        let (prev, next) = e.take_lru_links();
        self.lru_relink(prev, next);
    }

    /// Joins the neighbours `prev` and `next` of an entry taken out of the LRU list (`NIL`:
    /// it was the head or the tail).
    fn lru_relink(&mut self, prev: u32, next: u32) {
        match self.entries.get_mut(prev) {
            Some(p) => p.lru_next = next,
            None => self.lru_head = next,
        }
        match self.entries.get_mut(next) {
            Some(n) => n.lru_prev = prev,
            None => self.lru_tail = prev,
        }
    }

    fn lru_push_front(&mut self, slot: u32) {
        let old_head = self.lru_head;
        if let Some(e) = self.entries.get_mut(slot) {
            e.lru_prev = NIL;
            e.lru_next = old_head;
        }
        match self.entries.get_mut(old_head) {
            Some(h) => h.lru_prev = slot,
            None => self.lru_tail = slot,
        }
        self.lru_head = slot;
    }
}

#[cfg(test)]
mod tests;
