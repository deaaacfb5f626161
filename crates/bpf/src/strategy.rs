//! [`BpfStrategy`]: a verified program behind the forwarder's `Strategy` trait.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use kite_fw::face::FaceId;
use kite_fw::strategy::best_route::BestRoute;
use kite_fw::strategy::{Strategy, StrategyCtx, FIB_SCRATCH_LEN, RTT_SLOTS};
use kite_packet::{NackReason, Name};

use crate::abi::{event, flag, hop_flag, hop_off, off, CTX_LEN, MAX_NEXTHOPS, NEXTHOP_LEN};
use crate::helpers::{Action, CALL};
use crate::verifier::Verified;
use crate::vm::Vm;

/// A strategy whose decisions a verified eBPF program makes. A program that faults at run
/// time is switched off for good: its namespaces fall back to native best-route, and an error
/// is logged once.
pub struct BpfStrategy {
    name: Name,
    vm: Vm,
    verified: Verified,
    faulted: AtomicBool,
    fallback: BestRoute,
}

impl BpfStrategy {
    pub(crate) fn new(name: Name, vm: Vm, verified: Verified) -> Self {
        BpfStrategy {
            name,
            vm,
            verified,
            faulted: AtomicBool::new(false),
            fallback: BestRoute::default(),
        }
    }

    /// Whether the program touches the FIB scratch area or reads RTTs; one that does neither
    /// costs no per-thread FIB-area lookup per trigger and no RTT measurement per Data.
    pub fn uses_fib_area(&self) -> bool {
        self.verified.uses_fib_scratch || self.verified.reads_rtt
    }

    /// Whether the program faulted and best-route now stands in for it.
    pub fn faulted(&self) -> bool {
        self.faulted.load(Ordering::Relaxed)
    }

    /// Runs the program for `ev`; false when it faulted (the caller then falls back).
    fn trigger(&self, ctx: &mut StrategyCtx<'_>, ev: u32, nack: u64, timer_data: u64) -> bool {
        let mut mem = [0u8; CTX_LEN];
        let now_ns = ctx.now().0;
        let v = self.verified;
        let (eligible, eligible_len, rtts) = fill(
            &mut mem,
            ctx,
            ev,
            nack,
            timer_data,
            v.uses_fib_scratch,
            v.reads_rtt,
        );
        // only a program that may touch the FIB scratch can have changed it
        let before: Option<[u8; FIB_SCRATCH_LEN]> = v.uses_fib_scratch.then(|| {
            mem[off::FIB_SCRATCH..off::FIB_SCRATCH + FIB_SCRATCH_LEN]
                .try_into()
                .expect("96 octets")
        });
        let rng = ctx.random();
        let name = self
            .verified
            .reads_name
            .then(|| ctx.interest().name.clone());
        CALL.with_borrow_mut(|c| {
            c.eligible = eligible;
            c.eligible_len = eligible_len;
            c.action_len = 0;
            c.fault = None;
            c.rng = rng;
            c.now_ns = now_ns;
            c.name = name;
            c.rtts = rtts;
        });
        let result = self.vm.run(&mut mem);
        let fault = CALL.with_borrow_mut(|c| {
            c.name = None;
            c.fault
        });
        if let Err(e) = result {
            return self.fault(&e);
        }
        if let Some(reason) = fault {
            return self.fault(reason);
        }
        let fib_scratch = &mem[off::FIB_SCRATCH..off::FIB_SCRATCH + FIB_SCRATCH_LEN];
        if before.is_some_and(|b| fib_scratch != b.as_slice()) {
            ctx.fib_scratch().copy_from_slice(fib_scratch);
        }
        ctx.pit_scratch()
            .copy_from_slice(&mem[off::PIT_SCRATCH..CTX_LEN]);
        let n = CALL.with_borrow(|c| c.action_len);
        for k in 0..n {
            // one at a time: copying the whole action array out would cost more than this
            let Some(action) = CALL.with_borrow(|c| c.actions[k]) else {
                continue;
            };
            match action {
                Action::Forward(face) => {
                    ctx.forward(FaceId(face));
                }
                Action::Nack(reason) => ctx.nack_downstreams(NackReason(reason)),
                Action::Timer { ms, data } => {
                    ctx.set_timer(Duration::from_millis(ms), data);
                }
            }
        }
        true
    }

    fn fault(&self, reason: &str) -> bool {
        if !self.faulted.swap(true, Ordering::Relaxed) {
            tracing::error!(
                strategy = %self.name,
                reason,
                "eBPF strategy faulted; its namespaces fall back to best-route"
            );
        }
        false
    }
}

/// The RTTs a trigger hands the `nexthop_srtt_us` helper.
type Rtts = [(u64, u32); RTT_SLOTS];

/// Writes the context block for one trigger; returns the eligible nexthops and, with
/// `rtts`, the nexthops' smoothed RTTs. The per-thread FIB area (a likely cache miss) is
/// looked up only for a program that touches the FIB scratch (else it stays zero) or reads
/// RTTs.
fn fill(
    mem: &mut [u8; CTX_LEN],
    ctx: &mut StrategyCtx<'_>,
    ev: u32,
    nack: u64,
    timer_data: u64,
    scratch: bool,
    rtts: bool,
) -> ([u64; MAX_NEXTHOPS], usize, Rtts) {
    let now = ctx.now();
    let put32 = |mem: &mut [u8; CTX_LEN], at: usize, v: u32| {
        mem[at..at + 4].copy_from_slice(&v.to_le_bytes());
    };
    let put64 = |mem: &mut [u8; CTX_LEN], at: usize, v: u64| {
        mem[at..at + 8].copy_from_slice(&v.to_le_bytes());
    };
    let ago = |t: kite_fw::time::Time| u64::try_from(now.since(t).as_nanos()).unwrap_or(u64::MAX);
    put32(mem, off::EVENT, ev);
    put64(mem, off::NOW_NS, now.0);
    put64(mem, off::INGRESS, ctx.ingress().0);
    put64(mem, off::TIMER_DATA, timer_data);
    put32(
        mem,
        off::NACK_REASON,
        u32::try_from(nack).unwrap_or(u32::MAX),
    );
    let mut flags;
    {
        let i = ctx.interest();
        let bit = |on: bool, f: u32| if on { f } else { 0 };
        flags = bit(i.can_be_prefix, flag::CAN_BE_PREFIX)
            | bit(i.must_be_fresh, flag::MUST_BE_FRESH)
            | bit(i.hop_limit.is_some(), flag::HAS_HOP_LIMIT);
        put32(mem, off::NONCE, i.nonce.map_or(0, |n| n.as_u32()));
        put32(mem, off::HOP_LIMIT, i.hop_limit.map_or(0, u32::from));
        put32(mem, off::NAME_LEN, i.name.len() as u32);
        put32(
            mem,
            off::LIFETIME_MS,
            u32::try_from(i.lifetime_ms()).unwrap_or(u32::MAX),
        );
    }
    let ingress = ctx.ingress();
    let pit = ctx.pit();
    put32(mem, off::DOWNSTREAMS, pit.downstreams.len() as u32);
    put32(mem, off::UPSTREAMS, pit.upstreams.len() as u32);
    let mark = pit.downstream(ingress).map_or(0, |d| d.congestion_mark);
    put32(
        mem,
        off::CONGESTION_MARK,
        u32::try_from(mark).unwrap_or(u32::MAX),
    );
    let last = pit.last_pending_sent(now);
    put64(mem, off::LAST_SENT_AGO_NS, last.map_or(u64::MAX, ago));
    if let Some(reason) = pit.all_upstreams_nacked() {
        flags |= flag::ALL_NACKED;
        put32(
            mem,
            off::ALL_NACKED,
            u32::try_from(reason.0).unwrap_or(u32::MAX),
        );
    }
    put32(mem, off::FLAGS, flags);
    let mut measured = [(0, 0); RTT_SLOTS];
    if scratch || rtts {
        let (fib_scratch, r) = ctx.fib_scratch_and_rtts();
        if scratch {
            mem[off::FIB_SCRATCH..off::FIB_SCRATCH + FIB_SCRATCH_LEN].copy_from_slice(fib_scratch);
        }
        measured = r;
    }
    let pit = ctx.pit();
    let hops = ctx.nexthops();
    let count = hops.len().min(MAX_NEXTHOPS);
    put32(mem, off::NEXTHOP_COUNT, count as u32);
    let mut eligible = ([0u64; MAX_NEXTHOPS], 0);
    for (k, h) in hops.iter().take(count).enumerate() {
        let at = off::NEXTHOPS + k * NEXTHOP_LEN;
        let up = pit.upstream(h.face);
        let mut flags = 0;
        if ctx.can_forward_to(h.face) {
            flags = hop_flag::ELIGIBLE;
            eligible.0[eligible.1] = h.face.0;
            eligible.1 += 1;
        }
        if let Some(u) = up {
            flags |= hop_flag::TRIED;
            if u.nack.is_some() {
                flags |= hop_flag::NACKED;
            }
        }
        put64(mem, at + hop_off::FACE, h.face.0);
        put32(mem, at + hop_off::COST, h.cost);
        put32(mem, at + hop_off::FLAGS, flags);
        put64(
            mem,
            at + hop_off::SENT_AGO_NS,
            up.map_or(u64::MAX, |u| ago(u.last_sent)),
        );
    }
    mem[off::PIT_SCRATCH..CTX_LEN].copy_from_slice(ctx.pit_scratch());
    (eligible.0, eligible.1, measured)
}

impl Strategy for BpfStrategy {
    fn name(&self) -> &Name {
        &self.name
    }

    fn after_receive_interest(&self, ctx: &mut StrategyCtx<'_>) {
        if self.faulted() || !self.trigger(ctx, event::INTEREST, 0, 0) {
            self.fallback.after_receive_interest(ctx);
        }
    }

    fn after_receive_data(&self, ctx: &mut StrategyCtx<'_>) {
        if self.verified.reads_rtt {
            ctx.measure_rtt();
        }
        if !self.faulted() {
            self.trigger(ctx, event::DATA, 0, 0);
        }
    }

    fn after_receive_nack(&self, ctx: &mut StrategyCtx<'_>, reason: NackReason) {
        if self.faulted() || !self.trigger(ctx, event::NACK, reason.0, 0) {
            self.fallback.after_receive_nack(ctx, reason);
        }
    }

    fn on_timer(&self, ctx: &mut StrategyCtx<'_>, data: u64) {
        if !self.faulted() {
            self.trigger(ctx, event::TIMER, 0, data);
        }
    }
}
