//! Counters of one forwarding thread: NFD's forwarder-status counters plus drops by reason.

/// Why a packet was dropped (each reason is a counter).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DropReason {
    /// From a face this thread does not know.
    UnknownFace,
    /// An Interest whose HopLimit was already 0.
    HopLimitZero,
    /// `/localhost` from a non-local face.
    ScopeViolation,
    /// An Interest looping back (Dead Nonce List or duplicate Nonce in the PIT).
    Loop,
    /// No PIT, CS or timer room: the Interest was Nacked with Congestion.
    TableFull,
    /// A Data with a token that names a PIT entry its name does not match (forged or stale).
    TokenMismatch,
    /// A Data nobody asked for, not admitted by the unsolicited-Data policy.
    Unsolicited,
    /// A Nack that matches no upstream record.
    NackUnmatched,
    /// NextHopFaceId naming no known face, or sent by a non-local face.
    BadNextHop,
    /// An Interest whose forwarding hints all lack a route (it was Nacked with NoRoute).
    NoHintRoute,
}

impl DropReason {
    /// Every reason, in counter order.
    pub const ALL: [DropReason; 10] = [
        DropReason::UnknownFace,
        DropReason::HopLimitZero,
        DropReason::ScopeViolation,
        DropReason::Loop,
        DropReason::TableFull,
        DropReason::TokenMismatch,
        DropReason::Unsolicited,
        DropReason::NackUnmatched,
        DropReason::BadNextHop,
        DropReason::NoHintRoute,
    ];

    /// A short stable name for logs and datasets.
    pub fn as_str(self) -> &'static str {
        match self {
            DropReason::UnknownFace => "unknown-face",
            DropReason::HopLimitZero => "hop-limit-zero",
            DropReason::ScopeViolation => "scope-violation",
            DropReason::Loop => "loop",
            DropReason::TableFull => "table-full",
            DropReason::TokenMismatch => "token-mismatch",
            DropReason::Unsolicited => "unsolicited",
            DropReason::NackUnmatched => "nack-unmatched",
            DropReason::BadNextHop => "bad-next-hop",
            DropReason::NoHintRoute => "no-hint-route",
        }
    }
}

/// NFD's forwarder counters for one thread.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counters {
    /// Interests received.
    pub in_interests: u64,
    /// Data received.
    pub in_data: u64,
    /// Nacks received.
    pub in_nacks: u64,
    /// Interests sent.
    pub out_interests: u64,
    /// Data sent.
    pub out_data: u64,
    /// Nacks sent.
    pub out_nacks: u64,
    /// PIT entries satisfied.
    pub satisfied: u64,
    /// PIT entries that expired or were rejected unsatisfied.
    pub unsatisfied: u64,
    /// Interests answered from the CS.
    pub cs_hits: u64,
    /// Interests the CS could not answer.
    pub cs_misses: u64,
    drops: [u64; DropReason::ALL.len()],
}

impl Counters {
    /// Packets dropped for `reason`.
    pub fn drops(&self, reason: DropReason) -> u64 {
        self.drops[reason as usize]
    }

    /// Every drop reason with its count.
    pub fn all_drops(&self) -> impl Iterator<Item = (DropReason, u64)> + '_ {
        DropReason::ALL.iter().map(|&r| (r, self.drops(r)))
    }

    pub(crate) fn drop(&mut self, reason: DropReason) {
        self.drops[reason as usize] += 1;
    }

    /// Counts what the pipelines appended to the output.
    pub(crate) fn count_out(&mut self, out: &[crate::out::Out]) {
        for o in out {
            match o {
                crate::out::Out::Interest { .. } => self.out_interests += 1,
                crate::out::Out::Data { .. } => self.out_data += 1,
                crate::out::Out::Nack { .. } => self.out_nacks += 1,
                crate::out::Out::Shard { .. } => {}
            }
        }
    }
}
