//! What the I/O thread logs: faces created and closed (with why), and its drops by reason.
//!
//! Face lines go through a [`LineBudget`] ([`FACE_LINES`] a second): one UDP sender per
//! spoofed source address makes a face per datagram, and its log must not grow with it.
//! Drops are summed from the faces' and channels' counters once a second ([`DropReport`]),
//! never logged where they happen.

use std::time::{Duration, Instant};

use hashbrown::HashMap;
use kite_face::{EtherChannel, Face, UdpChannel};
use kite_link::{FaceCounters, Persistency, FACE_DROPS};
use tracing::Level;

use super::FaceStatus;
use crate::lograte::{DropKind, DropReport, LineBudget};
use kite_fw::face::{FaceId, FaceScope};

/// Face lines written per second at most; the rest are counted and the count said.
pub(super) const FACE_LINES: u32 = 20;

/// Why a face was closed.
pub(super) enum CloseReason {
    /// The peer closed its end (a stream's EOF or hang-up).
    PeerClosed,
    /// Reading or writing failed (the error), or the stream broke its framing.
    Error(String),
    /// A datagram face that received nothing for the idle timeout.
    Idle,
    /// Given up to make room for a new sender: its channel had its on-demand limit.
    Evicted,
    /// `faces/destroy`.
    Command,
}

impl CloseReason {
    /// The `reason` field: one word to grep.
    fn token(&self) -> &'static str {
        match self {
            CloseReason::PeerClosed => "peer-closed",
            CloseReason::Error(_) => "error",
            CloseReason::Idle => "idle",
            CloseReason::Evicted => "evicted",
            CloseReason::Command => "destroyed",
        }
    }

    /// The `error` field: the error's text, empty for the other reasons.
    fn error(&self) -> &str {
        match self {
            CloseReason::Error(e) => e,
            _ => "",
        }
    }
}

fn scope(s: FaceScope) -> &'static str {
    match s {
        FaceScope::Local => "local",
        FaceScope::NonLocal => "non-local",
    }
}

fn persistency(p: Persistency) -> &'static str {
    match p {
        Persistency::Persistent => "persistent",
        Persistency::OnDemand => "on-demand",
        Persistency::Permanent => "permanent",
    }
}

/// The I/O thread's drops, in the order of [`IO_DROPS`]: faces' counters, then channels'.
const IO_DROP_KINDS: usize = FACE_DROPS.len() + CHANNEL_DROPS.len();

/// The channels' drops the I/O thread logs.
const CHANNEL_DROPS: [DropKind; 4] = [
    DropKind {
        reason: "channel-truncated",
        level: Level::INFO,
        what: "datagrams dropped by a channel: longer than a receive slot",
    },
    DropKind {
        reason: "channel-malformed",
        level: Level::INFO,
        what: "datagrams dropped by a channel: not an NDN frame, from a sender with no face",
    },
    DropKind {
        reason: "channel-no-face",
        level: Level::DEBUG,
        what: "datagrams dropped by a channel: no face for them",
    },
    DropKind {
        reason: "channel-foreign",
        level: Level::TRACE,
        what: "datagrams ignored by a channel: for another host or group",
    },
];

/// The faces' drops ([`FACE_DROPS`], with their names and messages), then the channels'.
static IO_DROPS: [DropKind; IO_DROP_KINDS] = {
    let mut kinds = [CHANNEL_DROPS[0]; IO_DROP_KINDS];
    let mut i = 0;
    while i < FACE_DROPS.len() {
        let d = &FACE_DROPS[i];
        kinds[i] = DropKind {
            reason: d.name,
            level: if d.warns { Level::WARN } else { Level::INFO },
            what: d.what,
        };
        i += 1;
    }
    while i < IO_DROP_KINDS {
        kinds[i] = CHANNEL_DROPS[i - FACE_DROPS.len()];
        i += 1;
    }
    kinds
};

/// A face's drop counters, in [`FACE_DROPS`] order.
fn face_drops(c: &FaceCounters) -> [u64; FACE_DROPS.len()] {
    FACE_DROPS.map(|d| (d.count)(c))
}

/// The I/O thread's log state.
pub(super) struct IoLog {
    faces: LineBudget,
    drops: DropReport<IO_DROP_KINDS>,
    /// Drop counters of the faces already closed (theirs are gone with them), and of those
    /// handed to another I/O thread.
    closed: [u64; FACE_DROPS.len()],
    /// Drop counters faces moved here from another I/O thread had then (that thread counts
    /// those), so each thread's totals never decrease and no drop is said twice.
    adopted: [u64; FACE_DROPS.len()],
    restrained: LineBudget,
}

impl IoLog {
    pub fn new() -> Self {
        IoLog {
            faces: LineBudget::new(FACE_LINES, Duration::from_secs(1)),
            drops: DropReport::new("io", &IO_DROPS),
            closed: [0; FACE_DROPS.len()],
            adopted: [0; FACE_DROPS.len()],
            restrained: LineBudget::new(1, crate::lograte::DROP_LOG_INTERVAL),
        }
    }

    /// `face created` (info), within the face lines' budget.
    pub fn created(&mut self, s: &FaceStatus, now: Instant) {
        let Some(suppressed) = self.faces.allow(now) else {
            return;
        };
        tracing::info!(
            face = s.id.0,
            remote = %s.remote,
            local = %s.local,
            scope = %scope(s.scope),
            persistency = %persistency(s.persistency),
            suppressed,
            "face created"
        );
    }

    /// `connection refused` (warn), within the face lines' budget: a TCP or WebSocket
    /// listener closed a connection at once, with no file descriptor to spare for it.
    pub fn refused(&mut self, local: &kite_face::FaceUri, now: Instant) {
        let Some(suppressed) = self.faces.allow(now) else {
            return;
        };
        tracing::warn!(
            %local,
            suppressed,
            "connection refused: accepted connections hold a quarter of the open files limit \
             and this listener has none to give up (raise the limit, or lower on_demand_limit)"
        );
    }

    /// `accept failed` (warn), within the face lines' budget: the listener is tried again
    /// at each housekeeping.
    pub fn accept_failed(&mut self, local: &kite_face::FaceUri, e: &std::io::Error, now: Instant) {
        let Some(suppressed) = self.faces.allow(now) else {
            return;
        };
        tracing::warn!(
            %local,
            error = %e,
            suppressed,
            "accept failed (tried again every second; out of file descriptors: raise the \
             open files limit)"
        );
    }

    /// A face leaves for another I/O thread: its drops so far stay counted here.
    pub fn moved_out(&mut self, counters: &FaceCounters) {
        for (t, d) in self.closed.iter_mut().zip(face_drops(counters)) {
            *t += d;
        }
    }

    /// A face came from another I/O thread: only its drops from now on count here.
    pub fn moved_in(&mut self, counters: &FaceCounters) {
        for (t, d) in self.adopted.iter_mut().zip(face_drops(counters)) {
            *t += d;
        }
    }

    /// `face closed` with why (info; warn for an eviction, a sign of too many senders),
    /// within the face lines' budget; keeps the face's drop counters for the totals.
    pub fn closed(&mut self, s: &FaceStatus, why: &CloseReason, now: Instant) {
        for (t, d) in self.closed.iter_mut().zip(face_drops(&s.counters)) {
            *t += d;
        }
        let Some(suppressed) = self.faces.allow(now) else {
            return;
        };
        let (face, remote, local) = (s.id.0, &s.remote, &s.local);
        let p = persistency(s.persistency);
        let (reason, error) = (why.token(), why.error());
        if matches!(why, CloseReason::Evicted) {
            tracing::warn!(
                face, %remote, %local, persistency = %p, %reason, suppressed,
                "face closed: evicted for a new sender or connection, its channel has its \
                 on-demand limit"
            );
        } else {
            tracing::info!(
                face, %remote, %local, persistency = %p, %reason, %error, suppressed,
                "face closed"
            );
        }
    }

    /// Once a second or so: the drop lines due, the count of face lines not written, and a
    /// warning while faces are restrained (naming a few).
    pub fn housekeeping(
        &mut self,
        now: Instant,
        faces: &HashMap<FaceId, Face>,
        udp: &[UdpChannel],
        ether: &[EtherChannel],
        restrained: impl ExactSizeIterator<Item = FaceId>,
    ) {
        let suppressed = self.faces.take_suppressed(now);
        if suppressed > 0 {
            tracing::info!(
                count = suppressed,
                "face lines not written (more than {FACE_LINES} a second)"
            );
        }
        let n = restrained.len();
        if n > 0 && self.restrained.allow(now).is_some() {
            let some: Vec<String> = restrained.take(8).map(|id| id.0.to_string()).collect();
            let some = some.join(",");
            tracing::warn!(
                faces = n,
                %some,
                "faces restrained: the forwarding threads refused them room or their \
                 upstreams Nacked them with Congestion; their Interests are limited"
            );
        }
        if self.drops.due(now) {
            let totals = self.totals(faces, udp, ether);
            self.drops.report(&totals, now);
        }
    }

    /// Writes every drop not yet said (the thread is stopping).
    pub fn flush(
        &mut self,
        faces: &HashMap<FaceId, Face>,
        udp: &[UdpChannel],
        ether: &[EtherChannel],
    ) {
        let totals = self.totals(faces, udp, ether);
        self.drops.flush(&totals, Instant::now());
    }

    /// The drop totals: closed faces', live faces', then the channels'.
    fn totals(
        &self,
        faces: &HashMap<FaceId, Face>,
        udp: &[UdpChannel],
        ether: &[EtherChannel],
    ) -> [u64; IO_DROP_KINDS] {
        let mut totals = [0u64; IO_DROP_KINDS];
        let mut sum = self.closed;
        for f in faces.values() {
            for (t, d) in sum.iter_mut().zip(face_drops(f.counters())) {
                *t += d;
            }
        }
        for (t, a) in sum.iter_mut().zip(self.adopted) {
            *t = t.saturating_sub(a);
        }
        let (faces_part, channels_part) = totals.split_at_mut(FACE_DROPS.len());
        faces_part.copy_from_slice(&sum);
        let channels = udp
            .iter()
            .map(UdpChannel::counters)
            .chain(ether.iter().map(EtherChannel::counters));
        for c in channels {
            channels_part[0] += c.n_truncated;
            channels_part[1] += c.n_malformed;
            channels_part[2] += c.n_no_face;
            channels_part[3] += c.n_foreign;
        }
        totals
    }
}
