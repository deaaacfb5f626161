//! One forwarding thread: its tables, its timers, and NFD's forwarding pipelines adapted to
//! sharded tables (YaNFD paper, section 3.1; NDN-DPDK paper, sections 2.3–2.4 and 5).
//!
//! The input stage hands over decoded packets with the name hashes it computed; the forwarder
//! reads the FIB once per burst (the RCU quiescent state is between bursts), takes Data and
//! Nacks before Interests, and appends what must be sent to an output vector the caller drains.
//! Nothing here blocks, locks or allocates per packet in the steady state.
//!
//! Pipelines: `interest` (HopLimit, scope, Dead Nonce List, forwarding hint, PIT insert and
//! loop check, CS, NextHopFaceId, FIB, strategy), `data` (token lookup and name check,
//! fallback by name for Data without a usable token, satisfy every entry it matches, CS insert,
//! DNL), `nack` (upstream record by nonce, Duplicate retried with a new nonce, strategy), and
//! `expiry` (PIT expiry and strategy timers).

mod counters;
mod data;
mod expiry;
mod interest;
mod nack;

use core::time::Duration;

use hashbrown::HashMap;
use kite_packet::{DataView, InterestView, NackReason, Name, Nonce, PitToken};

pub use counters::{Counters, DropReason};

use crate::dnl::{DeadNonceList, DnlConfig};
use crate::face::FaceId;
use crate::fib::{FibGuard, FibReader};
use crate::hash::{NameHasher, NameHashes};
use crate::out::Out;
use crate::pcct::{Pcct, PcctConfig};
use crate::strategy::{FaceInfo, FaceTable, FibScratch, StrategyCtx, StrategyTable, TimerEvent};
use crate::time::Time;
use crate::timer::TimerWheel;

/// What to do with Data nobody asked for (NFD's `cs_unsolicited_policy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UnsolicitedPolicy {
    /// Drop it (the default).
    #[default]
    DropAll,
    /// Cache it when it comes from a local face.
    AdmitLocal,
    /// Cache it when it comes from a non-local face.
    AdmitNetwork,
    /// Cache it.
    AdmitAll,
}

/// Settings of one forwarding thread.
#[derive(Debug, Clone)]
pub struct ForwarderConfig {
    /// PIT-CS table sizes.
    pub pcct: PcctConfig,
    /// Dead Nonce List settings.
    pub dnl: DnlConfig,
    /// Timers pending at once (PIT expiries and strategy timers).
    pub timer_capacity: usize,
    /// Data nobody asked for.
    pub unsolicited: UnsolicitedPolicy,
    /// Names of this network region: a forwarding hint under one of them is ignored (the
    /// Interest has arrived where its hint points) and the name is used.
    pub network_region: Vec<Name>,
    /// HopLimit given to Interests that arrive without one (NFD's `default_hop_limit`; 0: none).
    pub default_hop_limit: u8,
    /// Whether Data is stored in the CS (NFD's CS "admit" flag).
    pub cs_admit: bool,
    /// Whether Interests are answered from the CS (NFD's CS "serve" flag).
    pub cs_serve: bool,
    /// The longest an Interest stays pending, whatever InterestLifetime it asks for: a flood
    /// of Interests asking for years would otherwise hold its PIT entries forever.
    pub max_interest_lifetime: Duration,
    /// The forwarding threads, when there are several: which is a name's home, and which
    /// have short CanBePrefix Interests pending. `None` with one thread.
    pub shards: Option<std::sync::Arc<crate::ndt::ShardSet>>,
}

/// How long the CS keeps its names' ordered index after the last CanBePrefix lookup that
/// used it: a thread serving exact Interests alone does not maintain it, and one that sees a
/// CanBePrefix Interest now and then keeps it rather than rebuilding it each time.
const ORDER_IDLE: Duration = Duration::from_secs(60);

/// Default of [`ForwarderConfig::max_interest_lifetime`]: two minutes, well above the
/// lifetimes consumers and sync protocols use (NDN's default is 4 s; sync Interests are
/// re-expressed every few seconds), and short enough that a flood's entries leave the PIT
/// soon after it stops (docs/forwarding.md).
pub const DEFAULT_MAX_INTEREST_LIFETIME: Duration = Duration::from_secs(120);

impl Default for ForwarderConfig {
    fn default() -> Self {
        ForwarderConfig {
            pcct: PcctConfig::default(),
            dnl: DnlConfig::default(),
            timer_capacity: 1 << 18,
            unsolicited: UnsolicitedPolicy::DropAll,
            network_region: Vec::new(),
            default_hop_limit: 0,
            cs_admit: true,
            cs_serve: true,
            max_interest_lifetime: DEFAULT_MAX_INTEREST_LIFETIME,
            shards: None,
        }
    }
}

/// An Interest from the input stage.
#[derive(Debug, Clone)]
pub struct InInterest {
    /// The Interest.
    pub interest: InterestView,
    /// Hashes of its name's prefixes (computed once, by the input stage).
    pub hashes: NameHashes,
    /// The face it came from.
    pub face: FaceId,
    /// The downstream's PIT token, echoed on the answer.
    pub token: Option<PitToken>,
    /// NextHopFaceId from a local application.
    pub next_hop: Option<FaceId>,
    /// Its NDNLPv2 CongestionMark (0: none).
    pub congestion_mark: u64,
    /// A CanBePrefix Interest shorter than the dispatch prefix, whose Data may be in any
    /// thread's CS ([`crate::ndt::Ndt::is_short`]), on its way through them. The input stage
    /// sets it; `None` otherwise (boxed: such Interests are rare, the others stay small).
    pub cs_probe: Option<Box<CsProbe>>,
}

/// Where a short CanBePrefix Interest is on its way through the threads' CS
/// (`docs/forwarding.md`, "Shards").
#[derive(Debug, Clone)]
pub struct CsProbe {
    /// The thread of its name: it starts there, and its pipeline runs there.
    pub home: u8,
    /// Whether it has left home.
    pub started: bool,
    /// The first Data under its name in canonical order in the threads visited, that it
    /// takes, with that Data's name.
    pub best: Option<(Name, bytes::Bytes)>,
}

impl CsProbe {
    /// A probe that starts at `home`.
    pub fn new(home: u8) -> Box<Self> {
        Box::new(CsProbe {
            home,
            started: false,
            best: None,
        })
    }
}

/// A Data from the input stage.
#[derive(Debug, Clone)]
pub struct InData {
    /// The Data.
    pub data: DataView,
    /// Hashes of its name's prefixes, if the input stage computed them (it does for Data it
    /// dispatched by name); computed here when needed otherwise.
    pub hashes: Option<NameHashes>,
    /// The face it came from.
    pub face: FaceId,
    /// The PIT token it carries (this thread's, when the upstream echoed it).
    pub token: Option<PitToken>,
    /// Its NDNLPv2 CongestionMark (0: none).
    pub congestion_mark: u64,
    /// NDNLPv2 CachePolicy NoCache.
    pub no_cache: bool,
    /// Octets of the buffer its frame was received into alone, a reusable buffer
    /// ([`kite_packet::pool::take_reusable`]) that the CS keeps as is instead of copying the
    /// Data; 0 when the frame shares its receive buffer with other packets.
    pub own_buffer: usize,
    /// A copy another thread sends because this one is its name's home: it satisfied a
    /// shorter name's Interest there, and is cached here (false from the input stage).
    pub rehomed: bool,
}

/// A Nack from the input stage.
#[derive(Debug, Clone)]
pub struct InNack {
    /// The Interest it refuses.
    pub interest: InterestView,
    /// Hashes of the Interest name's prefixes.
    pub hashes: NameHashes,
    /// Why.
    pub reason: NackReason,
    /// The face it came from.
    pub face: FaceId,
    /// The PIT token it carries.
    pub token: Option<PitToken>,
}

/// One forwarding thread.
pub struct Forwarder {
    fib: FibReader,
    pipelines: Pipelines,
}

/// NFD's forwarding pipelines (`on_interest`, `on_data`, `on_nack`, expiry) with the tables
/// and scratch they run on: everything of a forwarding thread but the FIB reader, kept apart
/// so a FIB read section and the pipelines can be borrowed at once.
struct Pipelines {
    config: ForwarderConfig,
    pcct: Pcct,
    dnl: DeadNonceList,
    timers: TimerWheel<TimerEvent>,
    fired: Vec<TimerEvent>,
    /// The FIB slots a burst's prefetch found, kept for its next prefetch pass (reused, so
    /// it allocates only when a burst is larger than any before).
    likely_slots: Vec<u32>,
    strategies: StrategyTable,
    fib_scratch: FibScratch,
    faces: FaceTable,
    hasher: NameHasher,
    counters: Counters,
    /// PIT entries of this thread that each face has a downstream record in (its share of the
    /// PIT, see [`Pipelines::admits`]). Only faces holding entries have a key.
    pit_held: HashMap<FaceId, u32>,
    next_pit_id: u64,
    rng: u64,
    last_now: Time,
    /// This thread's id (what the NDT names it by).
    thread: u8,
    /// When a CanBePrefix lookup last used the CS's ordered index.
    last_prefix_lookup: Time,
    /// Where the output of the Data being processed starts (its copies are sent once per
    /// downstream and token).
    data_out_start: usize,
}

impl Forwarder {
    /// Forwarding thread `thread` (its id goes into PIT tokens), reading the FIB through `fib`,
    /// hashing names with `hasher` (the input stage's key), starting at `now`.
    pub fn new(
        thread: u8,
        config: ForwarderConfig,
        fib: FibReader,
        strategies: StrategyTable,
        hasher: NameHasher,
        now: Time,
    ) -> Self {
        let timers = TimerWheel::new(now, Duration::from_millis(1), config.timer_capacity);
        Forwarder {
            fib,
            pipelines: Pipelines {
                pcct: Pcct::new(thread, config.pcct),
                dnl: DeadNonceList::new(config.dnl, now),
                timers,
                fired: Vec::with_capacity(256),
                likely_slots: Vec::with_capacity(256),
                strategies,
                fib_scratch: FibScratch::default(),
                faces: FaceTable::default(),
                hasher,
                counters: Counters::default(),
                pit_held: HashMap::new(),
                next_pit_id: 1,
                last_now: now,
                rng: 0x9E37_79B9_7F4A_7C15 ^ (u64::from(thread) << 32 | now.0),
                thread,
                last_prefix_lookup: now,
                data_out_start: 0,
                config,
            },
        }
    }

    /// Processes one burst: Data, then Nacks, then Interests (Data first: dropping a Data
    /// wastes the work already spent on its Interest), then due timers. Packets to send are
    /// appended to `out`. Data and Nacks are read in place (they are large; moving them costs
    /// more than reading them); `interests` is drained, each Interest moving into its PIT
    /// entry rather than being cloned there.
    pub fn process_burst(
        &mut self,
        now: Time,
        data: &[InData],
        nacks: &[InNack],
        interests: &mut Vec<InInterest>,
        out: &mut Vec<Out>,
    ) {
        // Strategies first: a FIB entry entered below never names a strategy newer than this.
        self.pipelines.strategies.refresh();
        let Some(fib) = self.fib.enter() else {
            // The FIB writer is gone (shutdown): nothing can be forwarded.
            interests.clear();
            return;
        };
        let s = &mut self.pipelines;
        s.last_now = now;
        let start = out.len();
        for d in data {
            s.on_data(&fib, now, d, out);
        }
        for n in nacks {
            s.on_nack(&fib, now, n, out);
        }
        // Three prefetch passes, then the lookups: the FIB, PCCT and Dead Nonce List buckets
        // of every Interest, the FIB slots they point at, the prefix octets in those slots,
        // so the burst's cache misses overlap (NDN-DPDK paper, section 4).
        for i in interests.iter() {
            fib.prefetch(&i.hashes);
            s.pcct.prefetch(i.hashes.full());
            if let Some(nonce) = i.interest.nonce {
                s.dnl.prefetch(i.hashes.full(), nonce);
            }
        }
        s.likely_slots.clear();
        s.likely_slots.extend(
            interests
                .iter()
                .filter_map(|i| fib.prefetch_slot(&i.hashes)),
        );
        for &id in &s.likely_slots {
            fib.prefetch_name(id);
        }
        for i in interests.drain(..) {
            s.on_interest(&fib, now, i, out);
        }
        s.on_timers(&fib, now, out);
        s.dnl.tick(now);
        if s.pcct.has_order() && now > s.last_prefix_lookup + ORDER_IDLE {
            s.pcct.drop_order();
        }
        s.counters.count_out(&out[start..]);
    }

    /// Processes one Interest (a burst of one).
    pub fn on_interest(&mut self, now: Time, pkt: InInterest, out: &mut Vec<Out>) {
        self.process_burst(now, &[], &[], &mut vec![pkt], out);
    }

    /// Processes one Data (a burst of one).
    pub fn on_data(&mut self, now: Time, pkt: InData, out: &mut Vec<Out>) {
        self.process_burst(now, &[pkt], &[], &mut Vec::new(), out);
    }

    /// Processes one Nack (a burst of one).
    pub fn on_nack(&mut self, now: Time, pkt: InNack, out: &mut Vec<Out>) {
        self.process_burst(now, &[], &[pkt], &mut Vec::new(), out);
    }

    /// Fires due timers (PIT expiry, strategy timers) without packets.
    pub fn advance(&mut self, now: Time, out: &mut Vec<Out>) {
        self.process_burst(now, &[], &[], &mut Vec::new(), out);
    }

    /// When the next timer is due: how long an idle thread may sleep.
    pub fn next_deadline(&self) -> Option<Time> {
        self.pipelines.timers.next_deadline()
    }

    /// Makes a face known to this thread.
    pub fn add_face(&mut self, face: FaceId, info: FaceInfo) {
        self.pipelines.faces.insert(face, info);
    }

    /// Forgets a face and purges it from every PIT entry; entries left with no downstream
    /// are finalized as unsatisfied.
    pub fn remove_face(&mut self, face: FaceId) {
        self.pipelines.faces.remove(&face);
        self.pipelines.purge_face(face);
        self.pipelines.pit_held.remove(&face);
    }

    /// PIT entries in which `face` has a downstream record (its share of this thread's PIT).
    pub fn pit_held(&self, face: FaceId) -> usize {
        self.pipelines
            .pit_held
            .get(&face)
            .map_or(0, |&n| n as usize)
    }

    /// This thread's counters.
    pub fn counters(&self) -> &Counters {
        &self.pipelines.counters
    }

    /// The PIT-CS table (read-only: for management datasets and tests).
    pub fn pcct(&self) -> &Pcct {
        &self.pipelines.pcct
    }

    /// The Dead Nonce List (read-only).
    pub fn dnl(&self) -> &DeadNonceList {
        &self.pipelines.dnl
    }

    /// Pending timers.
    pub fn timers_pending(&self) -> usize {
        self.pipelines.timers.len()
    }

    /// Changes the CS capacity of this thread (management's `cs/config`).
    pub fn set_cs_capacity(&mut self, capacity: usize) {
        self.pipelines.pcct.set_cs_capacity(capacity);
    }

    /// Changes the CS capacity in octets of this thread (a configuration reload).
    pub fn set_cs_bytes(&mut self, bytes: usize) {
        self.pipelines.pcct.set_cs_byte_capacity(bytes);
    }

    /// Changes which unsolicited Data is cached (a configuration reload).
    pub fn set_unsolicited(&mut self, policy: UnsolicitedPolicy) {
        self.pipelines.config.unsolicited = policy;
    }

    /// Sets NFD's CS admit and serve flags.
    pub fn set_cs_flags(&mut self, admit: bool, serve: bool) {
        self.pipelines.config.cs_admit = admit;
        self.pipelines.config.cs_serve = serve;
    }

    /// Erases up to `limit` cached Data under `prefix`, the first in canonical order, as NFD
    /// does; returns how many were erased (management's `cs/erase`).
    pub fn cs_erase(&mut self, prefix: &Name, limit: usize) -> usize {
        let pcct = &mut self.pipelines.pcct;
        let under = pcct.cs_under(prefix, limit);
        under
            .into_iter()
            .filter(|&slot| pcct.cs_erase(slot))
            .count()
    }

    /// The CS flags: (admit, serve).
    pub fn cs_flags(&self) -> (bool, bool) {
        (
            self.pipelines.config.cs_admit,
            self.pipelines.config.cs_serve,
        )
    }
}

impl Pipelines {
    /// A nonce for an Interest that arrived without one.
    fn random_nonce(&mut self) -> Nonce {
        let mut x = self.rng;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.rng = x;
        Nonce::from(x as u32)
    }

    /// Whether `face` may open one more PIT entry: it must hold fewer entries than the PIT
    /// has free (a dynamic threshold, as shared-buffer switches share their memory among
    /// ports). Alone, a face fills at most half the PIT; n faces flooding at once hold at
    /// most 1/(n+1) of it each, and the rest stays free, so a face holding fewer entries
    /// than that is never refused. As the PIT fills, the face holding the most entries meets
    /// the threshold first. O(1): one lookup of the face's count.
    fn admits(&self, face: FaceId) -> bool {
        let held = self.pit_held.get(&face).map_or(0, |&n| n as usize);
        held < self.pcct.pit_free()
    }

    /// Counts one more PIT entry in which `face` has a downstream record.
    fn hold(&mut self, face: FaceId) {
        *self.pit_held.entry(face).or_insert(0) += 1;
    }

    fn drop_packet(&mut self, reason: DropReason) {
        self.counters.drop(reason);
    }

    /// The face a packet came from, or `None` (counted as a drop) when this thread does not
    /// know it.
    fn known_face(&mut self, face: FaceId) -> Option<FaceInfo> {
        let info = self.faces.get(&face).copied();
        if info.is_none() {
            self.drop_packet(DropReason::UnknownFace);
        }
        info
    }

    /// Runs `f` with the strategy and a context over one PIT entry; returns whether the
    /// strategy rejected the pending Interest (false when the entry or strategy is gone).
    fn with_strategy(
        &mut self,
        inv: Invocation<'_>,
        now: Time,
        out: &mut Vec<Out>,
        f: impl FnOnce(&dyn crate::strategy::Strategy, &mut StrategyCtx<'_>),
    ) -> bool {
        // Borrowed, not cloned: the strategy table and the PCCT are disjoint fields, and an
        // Arc clone would cost two atomic operations per packet.
        let Some(strategy) = self.strategies.get_latest(inv.strategy) else {
            return false;
        };
        let token = self.pcct.token_value(inv.slot, inv.sel);
        let Some(pit) = self.pcct.pit_mut(inv.slot, inv.sel) else {
            return false;
        };
        let from_local = self
            .faces
            .get(&inv.ingress)
            .is_some_and(|f| f.scope == crate::face::FaceScope::Local);
        let mut rejected = false;
        let mut ctx = StrategyCtx {
            now,
            ingress: inv.ingress,
            from_local,
            pit_id: pit.id,
            pit,
            slot: inv.slot,
            sel: inv.sel,
            token,
            nonce: inv.nonce,
            hop_limit: inv.hop_limit,
            fib: inv.fib,
            fib_scratch: &mut self.fib_scratch,
            faces: &self.faces,
            out,
            timers: &mut self.timers,
            rng: &mut self.rng,
            rejected: &mut rejected,
        };
        f(&**strategy, &mut ctx);
        rejected
    }

    fn fib_entry_valid<'g>(
        fib: &'g FibGuard<'_>,
        reference: Option<(u32, u64)>,
    ) -> Option<&'g crate::fib::FibEntry> {
        let (id, seq) = reference?;
        fib.get(id).filter(|e| e.seq == seq)
    }
}

/// How long `interest` stays pending: its InterestLifetime, at most `max`
/// ([`ForwarderConfig::max_interest_lifetime`]).
fn lifetime(interest: &InterestView, max: Duration) -> Duration {
    Duration::from_millis(interest.lifetime_ms()).min(max)
}

/// One strategy invocation: which strategy, over which PIT entry, triggered by what.
struct Invocation<'e> {
    strategy: crate::fib::StrategyId,
    fib: &'e crate::fib::FibEntry,
    slot: u32,
    sel: crate::pcct::Selectors,
    ingress: FaceId,
    nonce: Nonce,
    hop_limit: Option<u8>,
}

#[cfg(test)]
mod tests;
