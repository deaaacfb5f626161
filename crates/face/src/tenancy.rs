//! The bound on the connections a TCP or WebSocket listener keeps. Any host that reaches the
//! port can open connections and leave them idle, each holding a file descriptor and a face,
//! so a listener keeps at most its configured number of on-demand faces
//! ([`crate::FaceConfig::tcp_on_demand_limit`], [`crate::FaceConfig::ws_on_demand_limit`]),
//! and all of them together at most a quarter of the process's file descriptor limit (UDP
//! faces' own sockets may take half; the rest stays for local applications, management and
//! the faces the operator made). Beyond either bound a new connection takes the place of the
//! listener's idlest face: the one that received from its peer longest ago.
//!
//! Accepted faces move to other I/O threads, so the listener cannot look at them. Each holds
//! a tenant record, whose shared half the listener keeps: the face stamps it when it receives,
//! and the listener marks the face it gives up; the thread that owns the face closes it.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use crate::sys::{FdShare, FdSlot};
use kite_link::FaceId;

/// The accepted stream faces of this process's listeners: at most a quarter of its file
/// descriptor limit.
static ACCEPTED: FdShare = FdShare::new(4);

/// Nanoseconds since the first call, the clock of [`Tenancy::last_rx`].
fn stamp(now: Instant) -> u64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    let epoch = *EPOCH.get_or_init(Instant::now);
    now.saturating_duration_since(epoch).as_nanos() as u64
}

/// What a listener knows of one face it accepted.
#[derive(Debug)]
struct Tenancy {
    id: FaceId,
    /// When the face last received ([`stamp`]), or was accepted.
    last_rx: AtomicU64,
    /// Given up by its listener: the owning thread closes it.
    evicted: AtomicBool,
}

/// An accepted face's place in its listener and in the process's budget; dropping it (with
/// the face, or when the face stops being on-demand) frees both.
#[derive(Debug)]
pub(crate) struct Tenant {
    shared: Arc<Tenancy>,
    _slot: FdSlot,
}

impl Tenant {
    /// Notes that the face received at `now`.
    pub fn received(&self, now: Instant) {
        self.shared.last_rx.store(stamp(now), Ordering::Relaxed);
    }

    /// Whether the listener gave the face up.
    pub fn evicted(&self) -> bool {
        self.shared.evicted.load(Ordering::Relaxed)
    }
}

/// The faces one listener accepted that are still open and on-demand.
#[derive(Debug)]
pub(crate) struct Tenants {
    limit: usize,
    faces: Vec<Arc<Tenancy>>,
}

/// What a listener does with a connection it accepted.
#[derive(Debug)]
pub(crate) enum Admission {
    /// Make its face, holding this tenant; the face named, if any, must close for it.
    Admit(Tenant, Option<FaceId>),
    /// Close it: the process has no descriptor to spare and this listener no face to give up.
    Refuse,
}

impl Tenants {
    /// A listener's tenants, at most `limit` of them.
    pub fn new(limit: usize) -> Self {
        Tenants {
            limit,
            faces: Vec::new(),
        }
    }

    /// Makes room for face `id`, accepted at `now`.
    pub fn admit(&mut self, id: FaceId, now: Instant) -> Admission {
        self.admit_within(id, now, &ACCEPTED)
    }

    /// [`Tenants::admit`] with the process's accepted faces counted in `share`.
    fn admit_within(&mut self, id: FaceId, now: Instant, share: &'static FdShare) -> Admission {
        self.faces.retain(|t| Arc::strong_count(t) > 1);
        let live = (self.faces.iter()).filter(|t| !t.evicted.load(Ordering::Relaxed));
        let full = live.count() >= self.limit;
        let (slot, evict) = match share.take() {
            Some(slot) => (slot, if full { self.idlest() } else { None }),
            // A face given up still holds its descriptor until its thread closes it, so the
            // count may pass the share by the evictions in flight.
            None => match self.idlest() {
                Some(evict) => (share.take_anyway(), Some(evict)),
                None => return Admission::Refuse,
            },
        };
        let t = Arc::new(Tenancy {
            id,
            last_rx: AtomicU64::new(stamp(now)),
            evicted: AtomicBool::new(false),
        });
        self.faces.push(t.clone());
        Admission::Admit(
            Tenant {
                shared: t,
                _slot: slot,
            },
            evict,
        )
    }

    /// Marks the face that received longest ago as given up, and names it.
    fn idlest(&self) -> Option<FaceId> {
        let t = (self.faces.iter())
            .filter(|t| !t.evicted.load(Ordering::Relaxed))
            .min_by_key(|t| t.last_rx.load(Ordering::Relaxed))?;
        t.evicted.store(true, Ordering::Relaxed);
        Some(t.id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn admitted(a: Admission) -> (Tenant, Option<FaceId>) {
        match a {
            Admission::Admit(t, e) => (t, e),
            Admission::Refuse => panic!("refused"),
        }
    }

    #[test]
    fn beyond_the_limit_the_face_that_received_longest_ago_gives_way() {
        let t0 = Instant::now();
        let mut l = Tenants::new(3);
        let (a, none) = admitted(l.admit(FaceId(1), t0));
        assert_eq!(none, None);
        let (b, _) = admitted(l.admit(FaceId(2), t0 + Duration::from_millis(10)));
        let (c, _) = admitted(l.admit(FaceId(3), t0 + Duration::from_millis(20)));
        // The oldest receives now: the second is the idlest.
        a.received(t0 + Duration::from_millis(30));
        let (d, evict) = admitted(l.admit(FaceId(4), t0 + Duration::from_millis(40)));
        assert_eq!(evict, Some(FaceId(2)));
        assert!(b.evicted() && !a.evicted() && !c.evicted());
        // Until its thread closes it, the face given up is not counted: the next one to go
        // is the third.
        let (_e, evict) = admitted(l.admit(FaceId(5), t0 + Duration::from_millis(50)));
        assert_eq!(evict, Some(FaceId(3)));
        // Faces that closed free their places.
        drop((b, c, d));
        let (_f, evict) = admitted(l.admit(FaceId(6), t0 + Duration::from_millis(60)));
        assert_eq!(evict, None);
        drop(a);
    }

    #[test]
    fn with_the_process_budget_spent_a_listener_gives_up_its_own_idlest_or_refuses() {
        // A share of no descriptor at all: every place is taken.
        static SPENT: FdShare = FdShare::new(usize::MAX);
        let t0 = Instant::now();
        let mut l = Tenants::new(8);
        let refused = l.admit_within(FaceId(1), t0, &SPENT);
        assert!(matches!(refused, Admission::Refuse));
        let (a, _) = admitted(l.admit(FaceId(2), t0));
        let (_b, evict) = admitted(l.admit_within(FaceId(3), t0, &SPENT));
        assert_eq!(evict, Some(FaceId(2)));
        assert!(a.evicted());
    }
}
