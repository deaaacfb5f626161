//! asf: NFD's Adaptive SRTT-based Forwarding strategy (as the NFD developer guide and NFD's
//! documentation of `/localhost/nfd/strategy/asf` describe it).
//!
//! Per FIB entry (per forwarding thread) it measures each nexthop: a smoothed RTT and its
//! variation from the Data it brings back, and timeouts. Faces rank in three groups —
//! working (measured, ranked by SRTT), unmeasured (by cost), timed out (by cost) — and a new
//! Interest goes to the best one. Now and then (first within 5 s of the first Interest, then
//! every probing interval, 60 s as NFD) a new Interest is also sent, with a fresh Nonce, to a
//! probe face: an unmeasured one if any, else one drawn with a probability that falls with
//! its rank. A face becomes "timed out" after 3 consecutive timeouts (NFD's `max-timeouts`)
//! or at once on a Nack; Data from it makes it working again. A timeout is an Interest not
//! answered by that face within its RTO (SRTT + 4 × variation, 200 ms to 60 s, 1 s before any
//! measurement, as ndn-cxx's RTT estimator), or before the Interest's lifetime ends.
//!
//! Bound: the state lives in the FIB entry's 96-octet scratch area, which holds
//! [`TRACKED_FACES`] nexthops; further nexthops of one entry rank as unmeasured. A face whose
//! id does not fit 32 bits is not tracked either.

use core::time::Duration;

use kite_packet::{NackReason, Name, Nonce};

use super::retx::{Decision, RetxSuppression};
use super::{Strategy, StrategyCtx, FIB_SCRATCH_LEN};
use crate::face::FaceId;
use crate::time::Time;

/// How many nexthops of a FIB entry asf measures (per forwarding thread).
pub const TRACKED_FACES: usize = 6;

/// NFD's default probing interval.
const PROBING_INTERVAL: Duration = Duration::from_secs(60);
/// The first probe comes within this long of a FIB entry's first Interest (NFD: 0–5 s).
const FIRST_PROBE_WINDOW_MS: u64 = 5000;
/// Consecutive timeouts after which a face ranks as timed out (NFD's `max-timeouts`).
const MAX_TIMEOUTS: u8 = 3;
/// RTO before any measurement, and its bounds (ndn-cxx's RTT estimator).
const INITIAL_RTO: Duration = Duration::from_secs(1);
const MIN_RTO: Duration = Duration::from_millis(200);
const MAX_RTO: Duration = Duration::from_secs(60);

/// Octets of one tracked face in the scratch area: face id (u32), SRTT µs (u32), RTT
/// variation µs (u32), status, consecutive timeouts.
const SLOT: usize = 14;
/// Where the slots start: after the next probe time (u64 ns, 0: none scheduled yet).
const SLOTS_AT: usize = 8;
const _: () = assert!(SLOTS_AT + TRACKED_FACES * SLOT <= FIB_SCRATCH_LEN);

/// A face's standing (NFD's three groups).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Group {
    Working = 0,
    Unmeasured = 1,
    TimedOut = 2,
}

/// One tracked face, decoded from the scratch area. Its RTT estimate is RFC 6298's, as
/// `kite_link::rtt::RttEstimator` computes it, but packed: SRTT and RTTVAR in whole
/// microseconds (u32), the group standing for "a sample came", and the RTO computed when
/// read, so that a face fits its 14 octets of the strategy's 96-octet FIB scratch area; the
/// shared estimator (its parameters and three `Duration`s, 120 octets) exceeds the whole area.
#[derive(Debug, Clone, Copy, Default)]
struct FaceState {
    srtt_us: u32,
    rttvar_us: u32,
    /// 0: unmeasured, 1: working, 2: timed out.
    status: u8,
    timeouts: u8,
}

impl FaceState {
    fn group(&self) -> Group {
        match self.status {
            1 => Group::Working,
            2 => Group::TimedOut,
            _ => Group::Unmeasured,
        }
    }

    fn rto(&self) -> Duration {
        if self.status != 1 {
            return INITIAL_RTO;
        }
        let us = u64::from(self.srtt_us) + 4 * u64::from(self.rttvar_us);
        Duration::from_micros(us).clamp(MIN_RTO, MAX_RTO)
    }

    /// Folds an RTT sample in (RFC 6298: gains 1/8 and 1/4; the first sample sets both).
    fn sample(&mut self, rtt_us: u32) {
        if self.status != 1 || self.srtt_us == 0 {
            self.srtt_us = rtt_us.max(1);
            self.rttvar_us = rtt_us / 2;
        } else {
            let diff = self.srtt_us.abs_diff(rtt_us);
            self.rttvar_us = self.rttvar_us - self.rttvar_us / 4 + diff / 4;
            self.srtt_us = (self.srtt_us - self.srtt_us / 8 + rtt_us / 8).max(1);
        }
        self.status = 1;
        self.timeouts = 0;
    }
}

/// The scratch area, read and written slot by slot.
struct Table<'s>(&'s mut [u8; FIB_SCRATCH_LEN]);

impl Table<'_> {
    fn next_probe(&self) -> u64 {
        u64::from_le_bytes(self.0[..8].try_into().expect("8 octets"))
    }

    fn set_next_probe(&mut self, t: Time) {
        // 0 means "none scheduled": a probe due at time 0 is stored as 1 ns.
        self.0[..8].copy_from_slice(&t.0.max(1).to_le_bytes());
    }

    fn slot_face(&self, i: usize) -> u32 {
        let at = SLOTS_AT + i * SLOT;
        u32::from_le_bytes(self.0[at..at + 4].try_into().expect("4 octets"))
    }

    fn find(&self, face: FaceId) -> Option<usize> {
        let id = u32::try_from(face.0).ok().filter(|&id| id != 0)?;
        (0..TRACKED_FACES).find(|&i| self.slot_face(i) == id)
    }

    fn get(&self, face: FaceId) -> FaceState {
        self.find(face)
            .map_or_else(FaceState::default, |i| self.read(i))
    }

    fn read(&self, i: usize) -> FaceState {
        let at = SLOTS_AT + i * SLOT;
        let u = |o: usize| u32::from_le_bytes(self.0[at + o..at + o + 4].try_into().expect("4"));
        FaceState {
            srtt_us: u(4),
            rttvar_us: u(8),
            status: self.0[at + 12],
            timeouts: self.0[at + 13],
        }
    }

    /// Stores `state` for `face`, taking a free slot if needed; false when none is left.
    fn put(&mut self, face: FaceId, state: FaceState) -> bool {
        let Ok(id) = u32::try_from(face.0) else {
            return false;
        };
        let slot = self
            .find(face)
            .or_else(|| (0..TRACKED_FACES).find(|&i| self.slot_face(i) == 0));
        let Some(i) = slot else {
            return false;
        };
        let at = SLOTS_AT + i * SLOT;
        self.0[at..at + 4].copy_from_slice(&id.to_le_bytes());
        self.0[at + 4..at + 8].copy_from_slice(&state.srtt_us.to_le_bytes());
        self.0[at + 8..at + 12].copy_from_slice(&state.rttvar_us.to_le_bytes());
        self.0[at + 12] = state.status;
        self.0[at + 13] = state.timeouts;
        true
    }
}

/// The asf strategy (NFD's `/localhost/nfd/strategy/asf/v=5`).
#[derive(Debug)]
pub struct Asf {
    name: Name,
    retx: RetxSuppression,
    probing_interval: Duration,
}

impl Default for Asf {
    fn default() -> Self {
        Asf {
            name: "/localhost/nfd/strategy/asf/v=5"
                .parse()
                .expect("valid strategy name"),
            retx: RetxSuppression::default(),
            probing_interval: PROBING_INTERVAL,
        }
    }
}

/// Ranking key for forwarding: group, then SRTT (working faces only), then cost.
fn forwarding_rank(state: &FaceState, cost: u32, face: FaceId) -> (Group, u32, u32, u64) {
    let srtt = if state.group() == Group::Working {
        state.srtt_us
    } else {
        u32::MAX
    };
    (state.group(), srtt, cost, face.0)
}

impl Asf {
    /// Eligible nexthops with their state, best first.
    fn ranked(&self, ctx: &mut StrategyCtx<'_>) -> smallvec::SmallVec<[(FaceId, FaceState); 8]> {
        let hops = ctx.nexthops();
        let mut faces: smallvec::SmallVec<[(FaceId, FaceState, u32); 8]> =
            smallvec::SmallVec::new();
        for h in hops {
            if ctx.can_forward_to(h.face) {
                faces.push((h.face, FaceState::default(), h.cost));
            }
        }
        let table = Table(ctx.fib_scratch());
        for f in &mut faces {
            f.1 = table.get(f.0);
        }
        faces.sort_by_key(|(face, state, cost)| forwarding_rank(state, *cost, *face));
        faces.into_iter().map(|(f, s, _)| (f, s)).collect()
    }

    /// Sends to `face` and arms its timeout: the face's RTO, or just before the Interest's
    /// lifetime ends (an Interest that expires unanswered timed out too).
    fn send(&self, ctx: &mut StrategyCtx<'_>, face: FaceId, nonce: Option<Nonce>, rto: Duration) {
        let sent = match nonce {
            Some(n) => ctx.forward_with_nonce(face, n),
            None => ctx.forward(face),
        };
        if sent {
            let lifetime = Duration::from_millis(ctx.interest().lifetime_ms());
            let delay = rto.min(lifetime.saturating_sub(Duration::from_millis(1)));
            ctx.set_timer(delay.max(Duration::from_millis(1)), face.0);
        }
    }

    /// Whether a probe is due on this FIB entry; schedules the first one on first use.
    fn probe_due(&self, ctx: &mut StrategyCtx<'_>) -> bool {
        let now = ctx.now();
        let first = Duration::from_millis(ctx.random() % (FIRST_PROBE_WINDOW_MS + 1));
        let mut table = Table(ctx.fib_scratch());
        let next = table.next_probe();
        if next == 0 {
            table.set_next_probe(now + first);
            return first.is_zero();
        }
        now.0 >= next
    }

    /// The face to probe besides `used`: the best-ranked unmeasured one, else one drawn with
    /// probability (n + 1 − rank) / (n (n + 1) / 2) over the probing rank (working by SRTT,
    /// then timed out).
    fn probe_face(
        &self,
        ctx: &mut StrategyCtx<'_>,
        ranked: &[(FaceId, FaceState)],
        used: FaceId,
    ) -> Option<(FaceId, FaceState)> {
        let mut candidates: smallvec::SmallVec<[(FaceId, FaceState); 8]> =
            ranked.iter().copied().filter(|(f, _)| *f != used).collect();
        // Probing order: unmeasured first, then working, then timed out; `ranked` already
        // orders each group.
        candidates.sort_by_key(|(_, s)| match s.group() {
            Group::Unmeasured => 0,
            Group::Working => 1,
            Group::TimedOut => 2,
        });
        let first = *candidates.first()?;
        if first.1.group() == Group::Unmeasured {
            return Some(first);
        }
        let n = candidates.len() as u64;
        let sum = n * (n + 1) / 2;
        let mut draw = ctx.random() % sum;
        for (rank, c) in candidates.iter().enumerate() {
            let weight = n - rank as u64;
            if draw < weight {
                return Some(*c);
            }
            draw -= weight;
        }
        None
    }

    /// Records a timeout or Nack of `face`: a Nack, or the `MAX_TIMEOUTS`th timeout in a
    /// row, makes it timed out.
    fn failed(&self, ctx: &mut StrategyCtx<'_>, face: FaceId, nack: bool) {
        let mut table = Table(ctx.fib_scratch());
        let mut s = table.get(face);
        s.timeouts = s.timeouts.saturating_add(1);
        if nack || s.timeouts >= MAX_TIMEOUTS {
            s.status = 2;
            s.timeouts = 0;
        }
        table.put(face, s);
    }
}

impl Strategy for Asf {
    fn name(&self) -> &Name {
        &self.name
    }

    fn after_receive_interest(&self, ctx: &mut StrategyCtx<'_>) {
        let decision = self.retx.decide(ctx);
        if decision == Decision::Suppress {
            return;
        }
        let ranked = self.ranked(ctx);
        if decision == Decision::New {
            let Some(&(best, state)) = ranked.first() else {
                ctx.nack_downstreams(NackReason::NO_ROUTE);
                return;
            };
            self.send(ctx, best, None, state.rto());
            if self.probe_due(ctx) {
                if let Some((probe, state)) = self.probe_face(ctx, &ranked, best) {
                    let nonce = Nonce::from(ctx.random() as u32);
                    self.send(ctx, probe, Some(nonce), state.rto());
                    let next = ctx.now() + self.probing_interval;
                    Table(ctx.fib_scratch()).set_next_probe(next);
                }
            }
            return;
        }
        // A retransmission: the best face not tried yet, else the one tried longest ago.
        let unused = ranked
            .iter()
            .find(|(f, _)| ctx.pit().upstream(*f).is_none())
            .copied();
        let target = unused.or_else(|| {
            ranked
                .iter()
                .min_by_key(|(f, _)| ctx.pit().upstream(*f).map(|u| u.last_sent))
                .copied()
        });
        if let Some((face, state)) = target {
            self.send(ctx, face, None, state.rto());
        }
    }

    fn after_receive_data(&self, ctx: &mut StrategyCtx<'_>) {
        let face = ctx.ingress();
        let Some(up) = ctx.pit().upstream(face) else {
            return;
        };
        let rtt = ctx.now().since(up.last_sent);
        let rtt_us = u32::try_from(rtt.as_micros()).unwrap_or(u32::MAX);
        let mut table = Table(ctx.fib_scratch());
        let mut s = table.get(face);
        s.sample(rtt_us);
        table.put(face, s);
    }

    fn after_receive_nack(&self, ctx: &mut StrategyCtx<'_>, _reason: NackReason) {
        self.failed(ctx, ctx.ingress(), true);
        if let Some(least_severe) = ctx.pit().all_upstreams_nacked() {
            ctx.nack_downstreams(least_severe);
        }
    }

    fn on_timer(&self, ctx: &mut StrategyCtx<'_>, data: u64) {
        let face = FaceId(data);
        // A face that Nacked was counted then; the PIT entry still pending means no Data came.
        if ctx.pit().upstream(face).is_some_and(|u| u.nack.is_none()) {
            self.failed(ctx, face, false);
        }
    }
}
