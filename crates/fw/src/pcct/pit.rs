//! PIT entries: who asked (downstream records), where it was sent (upstream records), the
//! strategy's scratch area, and when it expires. Records sit inline for the common case of up
//! to two downstreams and two upstreams.

use kite_packet::{InterestView, NackReason, Nonce, PitToken};
use smallvec::SmallVec;

use crate::face::FaceId;
use crate::fib::StrategyId;
use crate::time::Time;
use crate::timer::TimerId;

/// Size of a PIT entry's strategy scratch area.
pub const PIT_SCRATCH_LEN: usize = 64;

/// One downstream: a face that sent the Interest and waits for Data.
#[derive(Debug, Clone)]
pub struct DownRecord {
    /// The face.
    pub face: FaceId,
    /// The Nonce it last sent.
    pub nonce: Nonce,
    /// When its Interest expires.
    pub expiry: Time,
    /// When its Interest last arrived.
    pub arrived: Time,
    /// The PIT token it attached, echoed on Data and Nacks sent back to it.
    pub token: Option<PitToken>,
    /// The NDNLPv2 CongestionMark its Interest carried (0: none): the Data sent back carries
    /// at least this mark, so the consumer learns of congestion on either path.
    pub congestion_mark: u64,
}

/// One upstream: a face the Interest was forwarded to.
#[derive(Debug, Clone, Copy)]
pub struct UpRecord {
    /// The face.
    pub face: FaceId,
    /// The Nonce last sent to it.
    pub nonce: Nonce,
    /// When it was last sent.
    pub last_sent: Time,
    /// When the Interest sent to it expires.
    pub expiry: Time,
    /// The Nack it answered with, if any.
    pub nack: Option<NackReason>,
    /// Retries after a Nack~Duplicate (bounded, so two nodes cannot ping-pong forever).
    pub duplicate_retries: u8,
}

/// The two Interest elements that split a name's PIT entries: NFD aggregates an Interest only
/// into an entry of the same name whose Interest agrees on CanBePrefix and MustBeFresh, so a
/// Data with a longer name reaches only the CanBePrefix entry's downstreams and a stale one
/// (from a cache upstream) only the others'.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Selectors(u8);

impl Selectors {
    const CAN_BE_PREFIX: u8 = 2;
    const MUST_BE_FRESH: u8 = 1;
    /// Every combination, in [`Selectors::index`] order.
    pub const ALL: [Selectors; 4] = [Selectors(0), Selectors(1), Selectors(2), Selectors(3)];

    /// The selectors with these elements.
    #[inline]
    pub const fn new(can_be_prefix: bool, must_be_fresh: bool) -> Self {
        Selectors((can_be_prefix as u8) << 1 | must_be_fresh as u8)
    }

    /// The selectors of `interest`.
    #[inline]
    pub fn of(interest: &InterestView) -> Self {
        Self::new(interest.can_be_prefix, interest.must_be_fresh)
    }

    /// Whether the Interest asked with CanBePrefix.
    #[inline]
    pub const fn can_be_prefix(self) -> bool {
        self.0 & Self::CAN_BE_PREFIX != 0
    }

    /// Whether the Interest asked with MustBeFresh.
    #[inline]
    pub const fn must_be_fresh(self) -> bool {
        self.0 & Self::MUST_BE_FRESH != 0
    }

    /// A number in 0..4, the same for equal selectors.
    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// The selectors whose [`Selectors::index`] is `i` (taken modulo 4).
    #[inline]
    pub const fn from_index(i: usize) -> Self {
        Selectors((i & 3) as u8)
    }
}

/// Which scope rule a name falls under, decided once per PIT entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NameScope {
    /// Any other name.
    #[default]
    Global,
    /// Under `/localhost`: never crosses a non-local face.
    Localhost,
    /// Under `/localhop`: from the network, only to local faces.
    Localhop,
}

impl NameScope {
    /// The rule for `name` (first component a GenericNameComponent `localhost`/`localhop`).
    pub fn of(name: &kite_packet::Name) -> Self {
        // The first component's whole TLV (type 8, length 9 or 8), so no component is parsed.
        let v = name.value();
        if v.starts_with(b"\x08\x09localhost") {
            NameScope::Localhost
        } else if v.starts_with(b"\x08\x08localhop") {
            NameScope::Localhop
        } else {
            NameScope::Global
        }
    }
}

/// A pending Interest.
#[derive(Debug)]
pub struct PitEntry {
    /// A number unique among this thread's PIT entries, so timers outliving the entry are
    /// recognised as stale.
    pub id: u64,
    /// The latest Interest received for this entry: what is forwarded upstream.
    pub interest: InterestView,
    /// Downstream records.
    pub downstreams: SmallVec<[DownRecord; 2]>,
    /// Upstream records.
    pub upstreams: SmallVec<[UpRecord; 2]>,
    /// When the entry expires (the latest downstream expiry).
    pub expiry: Time,
    /// The expiry timer.
    pub timer: Option<TimerId>,
    /// The FIB entry that chose the strategy (id, seq), revalidated before the strategy runs again.
    pub fib: Option<(u32, u64)>,
    /// The strategy that handles this entry.
    pub strategy: StrategyId,
    /// Scratch area owned by the strategy.
    pub scratch: [u8; PIT_SCRATCH_LEN],
    /// The scope rule of the name.
    pub scope: NameScope,
    /// The CanBePrefix and MustBeFresh every Interest of this entry has.
    pub selectors: Selectors,
}

impl PitEntry {
    /// A new entry for `interest`, whose name's scope rule is `scope`
    /// ([`NameScope::of`], which the caller has already needed), with no records yet.
    #[inline]
    pub fn new(id: u64, interest: InterestView, scope: NameScope, strategy: StrategyId) -> Self {
        PitEntry {
            scope,
            selectors: Selectors::of(&interest),
            id,
            interest,
            downstreams: SmallVec::new(),
            upstreams: SmallVec::new(),
            expiry: Time::ZERO,
            timer: None,
            fib: None,
            strategy,
            scratch: [0; PIT_SCRATCH_LEN],
        }
    }

    /// The downstream record of `face`.
    pub fn downstream(&self, face: FaceId) -> Option<&DownRecord> {
        self.downstreams.iter().find(|d| d.face == face)
    }

    /// The upstream record of `face`.
    pub fn upstream(&self, face: FaceId) -> Option<&UpRecord> {
        self.upstreams.iter().find(|u| u.face == face)
    }

    /// The upstream record of `face`, mutably.
    pub fn upstream_mut(&mut self, face: FaceId) -> Option<&mut UpRecord> {
        self.upstreams.iter_mut().find(|u| u.face == face)
    }

    /// Inserts or refreshes the downstream record of `rec.face`; the entry's expiry follows.
    pub fn add_downstream(&mut self, rec: DownRecord) {
        match self.downstreams.iter_mut().find(|d| d.face == rec.face) {
            Some(d) => *d = rec,
            None => self.downstreams.push(rec),
        }
        self.expiry = self
            .downstreams
            .iter()
            .map(|d| d.expiry)
            .max()
            .unwrap_or(Time::ZERO);
    }

    /// Inserts or refreshes the upstream record of `face` for an Interest sent now.
    pub fn add_upstream(&mut self, face: FaceId, nonce: Nonce, now: Time, expiry: Time) {
        match self.upstream_mut(face) {
            Some(u) => {
                u.nonce = nonce;
                u.last_sent = now;
                u.expiry = expiry;
                u.nack = None;
            }
            None => self.upstreams.push(UpRecord {
                face,
                nonce,
                last_sent: now,
                expiry,
                nack: None,
                duplicate_retries: 0,
            }),
        }
    }

    /// How a nonce arriving from `face` relates to the records (NFD's duplicate-nonce rule).
    pub fn nonce_seen(&self, nonce: Nonce, face: FaceId) -> NonceSeen {
        let mut seen = NonceSeen::default();
        for d in self.downstreams.iter().filter(|d| d.nonce == nonce) {
            if d.face == face {
                seen.in_same = true;
            } else {
                seen.in_other = true;
            }
        }
        seen.out_any = self.upstreams.iter().any(|u| u.nonce == nonce);
        seen
    }

    /// Whether the entry's Interests asked with CanBePrefix (a longer-named Data answers them).
    pub fn can_be_prefix(&self) -> bool {
        self.selectors.can_be_prefix()
    }

    /// When the Interest was last sent to an upstream that may still answer (not Nacked, not
    /// expired at `now`); `None` when none may (NFD's "no pending out-record": a
    /// retransmission is then treated as a new Interest, not suppressed).
    pub fn last_pending_sent(&self, now: Time) -> Option<Time> {
        self.upstreams
            .iter()
            .filter(|u| u.nack.is_none() && u.expiry > now)
            .map(|u| u.last_sent)
            .max()
    }

    /// The least severe Nack among upstreams when every upstream has Nacked; `None` while an
    /// upstream may still answer.
    pub fn all_upstreams_nacked(&self) -> Option<NackReason> {
        if self.upstreams.is_empty() {
            return None;
        }
        self.upstreams
            .iter()
            .map(|u| u.nack)
            .collect::<Option<SmallVec<[NackReason; 2]>>>()?
            .into_iter()
            .min_by_key(|r| r.0)
    }
}

/// Where a nonce was found in a PIT entry.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NonceSeen {
    /// In the downstream record of the same face (a retransmission).
    pub in_same: bool,
    /// In the downstream record of another face.
    pub in_other: bool,
    /// In an upstream record.
    pub out_any: bool,
}

impl NonceSeen {
    /// Whether the Interest is looping, given the link type of the face it came from: on a
    /// point-to-point face the same nonce from the same face is a retransmission, not a loop.
    pub fn is_loop(self, point_to_point: bool) -> bool {
        self.in_other || self.out_any || (!point_to_point && self.in_same)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kite_packet::Interest;

    fn entry() -> PitEntry {
        let wire = Interest::new("/a".parse().unwrap()).encode();
        let interest = InterestView::decode(wire).unwrap();
        let scope = NameScope::of(&interest.name);
        PitEntry::new(1, interest, scope, StrategyId(0))
    }

    fn down(face: u32, nonce: u32, expiry_ms: u64) -> DownRecord {
        DownRecord {
            face: FaceId(face.into()),
            nonce: Nonce::from(nonce),
            expiry: Time::from_millis(expiry_ms),
            arrived: Time::ZERO,
            token: None,
            congestion_mark: 0,
        }
    }

    #[test]
    fn downstreams_refresh_and_expiry_is_the_latest() {
        let mut e = entry();
        e.add_downstream(down(300, 1, 100));
        e.add_downstream(down(301, 2, 50));
        assert_eq!(e.expiry, Time::from_millis(100));
        e.add_downstream(down(300, 3, 20));
        assert_eq!(e.downstreams.len(), 2);
        assert_eq!(e.expiry, Time::from_millis(50));
        assert_eq!(e.downstream(FaceId(300)).unwrap().nonce, Nonce::from(3));
    }

    #[test]
    fn duplicate_nonce_rule() {
        let mut e = entry();
        e.add_downstream(down(300, 1, 100));
        e.add_upstream(
            FaceId(400),
            Nonce::from(1),
            Time::ZERO,
            Time::from_millis(100),
        );
        // same nonce back from the upstream: a loop
        assert!(e.nonce_seen(Nonce::from(1), FaceId(400)).is_loop(true));
        // same nonce from the same downstream on a p2p face: a retransmission... but it was
        // forwarded with that nonce, so it also appears upstream
        let seen = e.nonce_seen(Nonce::from(1), FaceId(300));
        assert!(seen.in_same && seen.out_any);
        let mut fresh = entry();
        fresh.add_downstream(down(300, 7, 100));
        assert!(!fresh.nonce_seen(Nonce::from(7), FaceId(300)).is_loop(true));
        assert!(fresh.nonce_seen(Nonce::from(7), FaceId(300)).is_loop(false));
        assert!(fresh.nonce_seen(Nonce::from(7), FaceId(301)).is_loop(true));
        assert!(!fresh.nonce_seen(Nonce::from(8), FaceId(301)).is_loop(true));
    }

    #[test]
    fn name_scope_is_read_from_the_first_component() {
        let n = |u: &str| u.parse::<kite_packet::Name>().unwrap();
        assert_eq!(NameScope::of(&n("/localhost/nfd")), NameScope::Localhost);
        assert_eq!(NameScope::of(&n("/localhop/nfd")), NameScope::Localhop);
        assert_eq!(NameScope::of(&n("/a/localhost")), NameScope::Global);
        assert_eq!(NameScope::of(&n("/localhostx/a")), NameScope::Global);
        assert_eq!(NameScope::of(&n("/localho")), NameScope::Global);
        assert_eq!(NameScope::of(&n("/9=localhost")), NameScope::Global);
        assert_eq!(NameScope::of(&n("/")), NameScope::Global);
    }

    #[test]
    fn least_severe_nack_once_all_upstreams_nacked() {
        let mut e = entry();
        assert_eq!(e.all_upstreams_nacked(), None);
        e.add_upstream(FaceId(400), Nonce::from(1), Time::ZERO, Time::ZERO);
        e.add_upstream(FaceId(401), Nonce::from(1), Time::ZERO, Time::ZERO);
        e.upstream_mut(FaceId(400)).unwrap().nack = Some(NackReason::NO_ROUTE);
        assert_eq!(e.all_upstreams_nacked(), None);
        e.upstream_mut(FaceId(401)).unwrap().nack = Some(NackReason::CONGESTION);
        assert_eq!(e.all_upstreams_nacked(), Some(NackReason::CONGESTION));
        // re-sending clears the Nack
        e.add_upstream(FaceId(401), Nonce::from(2), Time::ZERO, Time::ZERO);
        assert_eq!(e.all_upstreams_nacked(), None);
    }
}
