//! The strategy ABI: the context block a program reads through `r1`, and the helper ids.
//! `strategies/include/kite_strategy.h` is the same contract in C; docs/strategy-abi.md
//! explains it.

/// The events that trigger a program (`kite_ctx.event`).
pub mod event {
    /// An Interest needs forwarding.
    pub const INTEREST: u32 = 1;
    /// Data satisfied the pending Interest.
    pub const DATA: u32 = 2;
    /// An upstream Nacked the Interest.
    pub const NACK: u32 = 3;
    /// A timer the program set has fired.
    pub const TIMER: u32 = 4;
}

/// `kite_ctx.flags` bits.
pub mod flag {
    /// The Interest has CanBePrefix.
    pub const CAN_BE_PREFIX: u32 = 1;
    /// The Interest has MustBeFresh.
    pub const MUST_BE_FRESH: u32 = 2;
    /// The Interest carries a HopLimit.
    pub const HAS_HOP_LIMIT: u32 = 4;
    /// Every upstream has Nacked; `all_nacked` holds the least severe reason.
    pub const ALL_NACKED: u32 = 8;
}

/// `kite_nexthop.flags` bits.
pub mod hop_flag {
    /// The Interest may be sent there (scope, HopLimit, not back to the ingress).
    pub const ELIGIBLE: u32 = 1;
    /// The PIT entry has an upstream record for this face (it was tried).
    pub const TRIED: u32 = 2;
    /// That upstream Nacked.
    pub const NACKED: u32 = 4;
}

/// Helper ids (`call IMM`).
pub mod helper {
    /// `forward_interest(face) -> 0 | -1`.
    pub const FORWARD_INTEREST: u32 = 1;
    /// `return_nacks(reason) -> 0`.
    pub const RETURN_NACKS: u32 = 2;
    /// `set_timer(ms, data) -> 0 | -1`.
    pub const SET_TIMER: u32 = 3;
    /// `random() -> u64`.
    pub const RANDOM: u32 = 4;
    /// `now() -> ns`.
    pub const NOW: u32 = 5;
    /// `name_component_len(i) -> len | -1`.
    pub const NAME_COMPONENT_LEN: u32 = 6;
    /// `name_component_byte(i, off) -> octet | -1`.
    pub const NAME_COMPONENT_BYTE: u32 = 7;
    /// `nexthop_srtt_us(face) -> µs | 0` (0: not measured).
    pub const NEXTHOP_SRTT_US: u32 = 8;
    /// Every helper with the name a C program's relocation may use.
    pub const ALL: [(u32, &str); 8] = [
        (FORWARD_INTEREST, "kite_forward_interest"),
        (RETURN_NACKS, "kite_return_nacks"),
        (SET_TIMER, "kite_set_timer"),
        (RANDOM, "kite_random"),
        (NOW, "kite_now"),
        (NAME_COMPONENT_LEN, "kite_name_component_len"),
        (NAME_COMPONENT_BYTE, "kite_name_component_byte"),
        (NEXTHOP_SRTT_US, "kite_nexthop_srtt_us"),
    ];
}

/// Nexthops the context lists (more are not shown to the program).
pub const MAX_NEXTHOPS: usize = 8;
/// Size of one `kite_nexthop`.
pub const NEXTHOP_LEN: usize = 32;

/// Offsets of `kite_ctx` fields.
pub mod off {
    /// u32 event.
    pub const EVENT: usize = 0;
    /// u32 nexthop count (at most `MAX_NEXTHOPS`).
    pub const NEXTHOP_COUNT: usize = 4;
    /// u64 now, ns.
    pub const NOW_NS: usize = 8;
    /// u64 ingress face.
    pub const INGRESS: usize = 16;
    /// u64 timer data (timer event).
    pub const TIMER_DATA: usize = 24;
    /// u32 Nack reason (Nack event).
    pub const NACK_REASON: usize = 32;
    /// u32 flags.
    pub const FLAGS: usize = 36;
    /// u32 Nonce.
    pub const NONCE: usize = 40;
    /// u32 HopLimit.
    pub const HOP_LIMIT: usize = 44;
    /// u32 name component count.
    pub const NAME_LEN: usize = 48;
    /// u32 downstream records.
    pub const DOWNSTREAMS: usize = 52;
    /// u32 upstream records.
    pub const UPSTREAMS: usize = 56;
    /// u32 congestion mark of the ingress downstream.
    pub const CONGESTION_MARK: usize = 60;
    /// u64 ns since the Interest last went to an upstream that may still answer (not Nacked,
    /// not expired); `u64::MAX` when none may (never sent, or all Nacked or expired).
    pub const LAST_SENT_AGO_NS: usize = 64;
    /// u32 InterestLifetime, ms.
    pub const LIFETIME_MS: usize = 72;
    /// u32 the least severe Nack reason once every upstream Nacked (flag `ALL_NACKED`).
    pub const ALL_NACKED: usize = 76;
    /// The nexthops, lowest cost first.
    pub const NEXTHOPS: usize = 80;
    /// The FIB entry's scratch area (96 octets, writable).
    pub const FIB_SCRATCH: usize = NEXTHOPS + super::MAX_NEXTHOPS * super::NEXTHOP_LEN;
    /// The PIT entry's scratch area (64 octets, writable).
    pub const PIT_SCRATCH: usize = FIB_SCRATCH + kite_fw::strategy::FIB_SCRATCH_LEN;
}

/// Offsets inside one `kite_nexthop`.
pub mod hop_off {
    /// u64 face.
    pub const FACE: usize = 0;
    /// u32 cost.
    pub const COST: usize = 8;
    /// u32 flags.
    pub const FLAGS: usize = 16;
    /// u64 ns since the Interest last went there (`u64::MAX`: never).
    pub const SENT_AGO_NS: usize = 24;
}

/// Size of the context block.
pub const CTX_LEN: usize = off::PIT_SCRATCH + kite_fw::pcct::PIT_SCRATCH_LEN;
/// The writable part of the context: the two scratch areas.
pub const WRITABLE: core::ops::Range<usize> = off::FIB_SCRATCH..CTX_LEN;
/// Stack the VM gives a program (below `r10`).
pub const STACK_LEN: usize = 512;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_matches_the_c_header() {
        assert_eq!(off::FIB_SCRATCH, 336);
        assert_eq!(off::PIT_SCRATCH, 432);
        assert_eq!(CTX_LEN, 496);
    }
}
