//! What a strategy sees and may do while it handles one event.

use core::time::Duration;

use hashbrown::HashMap;
use kite_packet::{InterestView, NackReason, Nonce};
use smallvec::SmallVec;

use crate::face::{FaceId, FaceScope, LinkType};
use crate::fib::{FibEntry, NextHop};
use crate::out::Out;
use crate::pcct::{NameScope, Pcct, PitEntry, Selectors, PIT_SCRATCH_LEN};
use crate::time::Time;
use crate::timer::TimerWheel;

/// Size of a FIB entry's strategy scratch area (per forwarding thread).
pub const FIB_SCRATCH_LEN: usize = 96;

/// What forwarding rules need to know about a face.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FaceInfo {
    /// Local (applications) or non-local.
    pub scope: FaceScope,
    /// Point-to-point, multi-access or ad hoc.
    pub link_type: LinkType,
}

/// The faces a forwarding thread may send to.
pub type FaceTable = HashMap<FaceId, FaceInfo>;

/// How many nexthops of a FIB entry keep a smoothed RTT (per forwarding thread).
pub const RTT_SLOTS: usize = 8;

/// One FIB entry's per-thread strategy state: the scratch area and smoothed RTTs by face,
/// valid for one entry `seq`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FibArea {
    seq: u64,
    scratch: [u8; FIB_SCRATCH_LEN],
    /// (face, smoothed RTT in µs); face 0 marks a free slot.
    rtt: [(u64, u32); RTT_SLOTS],
}

impl FibArea {
    fn new(seq: u64) -> Self {
        FibArea {
            seq,
            scratch: [0; FIB_SCRATCH_LEN],
            rtt: [(0, 0); RTT_SLOTS],
        }
    }
}

/// Per-thread FIB scratch areas, keyed by FIB entry id.
pub(crate) type FibScratch = HashMap<u32, FibArea>;

/// A timer event a strategy set on a PIT entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StrategyTimer {
    pub slot: u32,
    pub sel: Selectors,
    pub pit_id: u64,
    pub data: u64,
}

/// Events the forwarding thread's timer wheel carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TimerEvent {
    /// A PIT entry's lifetime is over.
    PitExpiry {
        slot: u32,
        sel: Selectors,
        pit_id: u64,
    },
    /// A strategy timer.
    Strategy(StrategyTimer),
}

/// The state of one strategy invocation; built by the forwarder, consumed by the strategy.
pub struct StrategyCtx<'a> {
    pub(crate) now: Time,
    pub(crate) ingress: FaceId,
    /// Whether the ingress face is local (resolved once per invocation).
    pub(crate) from_local: bool,
    pub(crate) pit: &'a mut PitEntry,
    pub(crate) pit_id: u64,
    pub(crate) slot: u32,
    pub(crate) sel: Selectors,
    /// The PIT entry's token, made only when an Interest is sent ([`Pcct::token_value`]).
    pub(crate) token: u64,
    pub(crate) nonce: Nonce,
    pub(crate) hop_limit: Option<u8>,
    pub(crate) fib: &'a FibEntry,
    pub(crate) fib_scratch: &'a mut FibScratch,
    pub(crate) faces: &'a FaceTable,
    pub(crate) out: &'a mut Vec<Out>,
    pub(crate) timers: &'a mut TimerWheel<TimerEvent>,
    pub(crate) rng: &'a mut u64,
    pub(crate) rejected: &'a mut bool,
}

impl<'a> StrategyCtx<'a> {
    /// The current time.
    pub fn now(&self) -> Time {
        self.now
    }

    /// The face the triggering packet came from.
    pub fn ingress(&self) -> FaceId {
        self.ingress
    }

    /// The pending Interest.
    pub fn interest(&self) -> &InterestView {
        &self.pit.interest
    }

    /// The PIT entry's records.
    pub fn pit(&self) -> &PitEntry {
        self.pit
    }

    /// The FIB entry's nexthops, lowest cost first.
    pub fn nexthops(&self) -> &'a [NextHop] {
        &self.fib.nexthops
    }

    /// The PIT entry's scratch area.
    pub fn pit_scratch(&mut self) -> &mut [u8; PIT_SCRATCH_LEN] {
        &mut self.pit.scratch
    }

    /// The FIB entry's scratch area in this thread; zeroed whenever the FIB entry changes.
    pub fn fib_scratch(&mut self) -> &mut [u8; FIB_SCRATCH_LEN] {
        &mut self.fib_area().scratch
    }

    fn fib_area(&mut self) -> &mut FibArea {
        let seq = self.fib.seq;
        let area = self
            .fib_scratch
            .entry(self.fib.id)
            .or_insert_with(|| FibArea::new(seq));
        if area.seq != seq {
            *area = FibArea::new(seq);
        }
        area
    }

    /// The FIB scratch area with the smoothed RTTs of this entry's faces in this thread, as
    /// (face, µs) pairs (face 0: unused), in one lookup.
    pub fn fib_scratch_and_rtts(
        &mut self,
    ) -> (&mut [u8; FIB_SCRATCH_LEN], [(u64, u32); RTT_SLOTS]) {
        let area = self.fib_area();
        let rtt = area.rtt;
        (&mut area.scratch, rtt)
    }

    /// The smoothed RTT toward `face` under this FIB entry in this thread, in µs, if measured.
    pub fn srtt_us(&self, face: FaceId) -> Option<u32> {
        let area = self.fib_scratch.get(&self.fib.id)?;
        (area.seq == self.fib.seq)
            .then(|| area.rtt.iter().find(|r| r.0 == face.0).map(|r| r.1))
            .flatten()
    }

    /// On Data: folds the RTT of the upstream it came from (since the Interest was last sent
    /// there) into that face's smoothed RTT (gain 1/8, as TCP). False without such upstream.
    pub fn measure_rtt(&mut self) -> bool {
        let face = self.ingress;
        let Some(up) = self.pit.upstream(face) else {
            return false;
        };
        let sample = u32::try_from(self.now.since(up.last_sent).as_micros()).unwrap_or(u32::MAX);
        let area = self.fib_area();
        let slot = match area.rtt.iter().position(|r| r.0 == face.0) {
            Some(i) => i,
            None => match area.rtt.iter().position(|r| r.0 == 0) {
                Some(i) => {
                    area.rtt[i] = (face.0, sample);
                    return true;
                }
                None => return false,
            },
        };
        let old = area.rtt[slot].1;
        area.rtt[slot].1 = old - old / 8 + sample / 8;
        true
    }

    /// A pseudo-random number (xorshift, per thread).
    pub fn random(&mut self) -> u64 {
        let mut x = *self.rng;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *self.rng = x;
        x
    }

    /// Whether the Interest may be sent to `face`: the face exists; it is not where the
    /// Interest came from (unless ad hoc); `/localhost` stays on local faces; `/localhop` from
    /// the network goes only to local faces; an exhausted HopLimit reaches only local faces.
    pub fn can_forward_to(&self, face: FaceId) -> bool {
        let Some(out) = self.faces.get(&face) else {
            return false;
        };
        if face == self.ingress && out.link_type != LinkType::AdHoc {
            return false;
        }
        if out.scope == FaceScope::Local {
            return true;
        }
        let scope_ok = match self.pit.scope {
            NameScope::Global => true,
            NameScope::Localhost => false,
            NameScope::Localhop => self.from_local,
        };
        scope_ok && self.hop_limit != Some(0)
    }

    /// The nexthops the Interest may go to, lowest cost first. When there is none and nothing
    /// is pending upstream, the downstreams get Nack~NoRoute and the result is empty.
    pub fn eligible_or_nack(&mut self) -> SmallVec<[FaceId; 8]> {
        let hops: SmallVec<[FaceId; 8]> = self
            .nexthops()
            .iter()
            .map(|n| n.face)
            .filter(|&f| self.can_forward_to(f))
            .collect();
        if hops.is_empty() && self.pit.upstreams.is_empty() {
            self.nack_downstreams(NackReason::NO_ROUTE);
        }
        hops
    }

    /// Sends the Interest to `face` if it may go there; records the upstream.
    pub fn forward(&mut self, face: FaceId) -> bool {
        self.forward_with_nonce(face, self.nonce)
    }

    /// Like [`StrategyCtx::forward`] with a different Nonce (a retry after Nack~Duplicate).
    pub fn forward_with_nonce(&mut self, face: FaceId, nonce: Nonce) -> bool {
        if !self.can_forward_to(face) {
            return false;
        }
        let lifetime = Duration::from_millis(self.pit.interest.lifetime_ms());
        self.pit
            .add_upstream(face, nonce, self.now, self.now + lifetime);
        let ingress = self.ingress();
        self.out.push(Out::Interest {
            face,
            ingress,
            interest: self.pit.interest.outgoing(nonce, self.hop_limit),
            token: Pcct::token_of(self.token),
        });
        true
    }

    /// Answers every downstream with a Nack (none on multi-access faces) and drops the
    /// pending Interest.
    pub fn nack_downstreams(&mut self, reason: NackReason) {
        for d in &self.pit.downstreams {
            let multi_access = self
                .faces
                .get(&d.face)
                .is_some_and(|f| f.link_type == LinkType::MultiAccess);
            if !multi_access && self.faces.contains_key(&d.face) {
                self.out.push(Out::Nack {
                    face: d.face,
                    reason,
                    interest: self
                        .pit
                        .interest
                        .outgoing(d.nonce, self.pit.interest.hop_limit),
                    token: d.token,
                });
            }
        }
        *self.rejected = true;
    }

    /// Drops the pending Interest without answering.
    pub fn reject(&mut self) {
        *self.rejected = true;
    }

    /// Calls the strategy's `on_timer` with `data` after `delay`, while the PIT entry lives.
    /// False when the thread's timers are exhausted.
    pub fn set_timer(&mut self, delay: Duration, data: u64) -> bool {
        let event = TimerEvent::Strategy(StrategyTimer {
            slot: self.slot,
            sel: self.sel,
            pit_id: self.pit_id,
            data,
        });
        self.timers.schedule(self.now + delay, event).is_ok()
    }
}
