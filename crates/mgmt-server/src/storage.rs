//! The in-memory storage management answers later Interests from: each status dataset version
//! it publishes, whole, and the face-event notifications it posts (NFD's dispatcher keeps both
//! in an `InMemoryStorageFifo`, `ndn-cxx/mgmt/dispatcher.cpp`).
//!
//! A client fetches a dataset version segment after segment, so a version is kept and evicted
//! whole: a version of any size stays complete while it is being fetched. Versions are kept
//! while they are read, and dropped [`VERSION_IDLE_MS`] after their last segment was read.
//! Memory is bounded by [`VERSION_BUDGET`] octets of versions: storing a new one first evicts
//! the least recently read versions until it fits, but never the new one itself, so the storage
//! holds at most `max(VERSION_BUDGET, largest dataset)` octets of versions (the largest,
//! `faces/list`, grows with the faces, which the channels' on-demand limits bound). On top of
//! that come at most [`NOTIFICATIONS`] notifications, each kept [`NOTIFICATION_MS`].

use std::collections::{BTreeMap, HashMap, VecDeque};

use bytes::Bytes;
use kite_packet::Name;

/// Octets of dataset versions kept before the least recently read are evicted.
pub const VERSION_BUDGET: usize = 64 << 20;
/// How long a dataset version stays after its last segment was read (ms): a client that has
/// not asked for its next segment within an Interest lifetime (4 s) has given up.
pub const VERSION_IDLE_MS: u64 = 4000;
/// Notifications kept (NFD's storage capacity).
pub const NOTIFICATIONS: usize = 256;
/// How long a notification stays (ms), as in NFD.
pub const NOTIFICATION_MS: u64 = 1000;

/// What a stored packet belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Owner {
    /// A dataset version, by the number it was stored under.
    Version(u64),
    /// A notification, kept on its own.
    Notification,
}

/// A stored dataset version: its segments' names, their octets and when it was last read.
#[derive(Debug)]
struct Version {
    names: Vec<Name>,
    octets: usize,
    last_read_ms: u64,
}

/// Published management Data, by name.
#[derive(Debug, Default)]
pub struct Storage {
    by_name: BTreeMap<Name, (Bytes, Owner)>,
    versions: HashMap<u64, Version>,
    next_version: u64,
    version_octets: usize,
    /// Notifications in the order posted, with when each expires.
    notifications: VecDeque<(Name, u64)>,
}

impl Storage {
    /// An empty storage.
    pub fn new() -> Self {
        Self::default()
    }

    /// Keeps the segments of one dataset version (`(name, wire)` each) until it has not been
    /// read for [`VERSION_IDLE_MS`], evicting the least recently read versions first when
    /// the versions would exceed [`VERSION_BUDGET`] octets.
    pub fn insert_version(&mut self, segments: Vec<(Name, Bytes)>, now_ms: u64) {
        self.expire(now_ms);
        let octets: usize = segments.iter().map(|(_, w)| w.len()).sum();
        while self.version_octets + octets > VERSION_BUDGET {
            let Some(oldest) = self
                .versions
                .iter()
                .min_by_key(|(_, v)| v.last_read_ms)
                .map(|(&k, _)| k)
            else {
                break;
            };
            self.remove_version(oldest);
        }
        let key = self.next_version;
        self.next_version += 1;
        let mut names = Vec::with_capacity(segments.len());
        for (name, wire) in segments {
            let old = self
                .by_name
                .insert(name.clone(), (wire, Owner::Version(key)));
            // The same name published again (the same version number): the newer wins.
            if let Some((_, Owner::Version(k))) = old {
                self.forget_name(k, &name);
            }
            names.push(name);
        }
        self.version_octets += octets;
        self.versions.insert(
            key,
            Version {
                names,
                octets,
                last_read_ms: now_ms,
            },
        );
    }

    /// Keeps a notification `wire` (a Data named `name`) for [`NOTIFICATION_MS`], evicting
    /// the oldest when [`NOTIFICATIONS`] are held.
    pub fn insert_notification(&mut self, name: Name, wire: Bytes, now_ms: u64) {
        self.expire(now_ms);
        if self.notifications.len() == NOTIFICATIONS {
            if let Some((old, _)) = self.notifications.pop_front() {
                self.by_name.remove(&old);
            }
        }
        self.by_name
            .insert(name.clone(), (wire, Owner::Notification));
        self.notifications
            .push_back((name, now_ms + NOTIFICATION_MS));
    }

    /// The stored Data answering an Interest for `name`: the same name, or with
    /// `can_be_prefix` the first (in canonical order) named under it. Reading a version's
    /// segment keeps the version. Expired packets are dropped first.
    pub fn find(&mut self, name: &Name, can_be_prefix: bool, now_ms: u64) -> Option<Bytes> {
        self.expire(now_ms);
        let (wire, owner) = if can_be_prefix {
            self.by_name
                .range(name.clone()..)
                .next()
                .filter(|(n, _)| name.is_prefix_of(n))
                .map(|(_, v)| v.clone())?
        } else {
            self.by_name.get(name).cloned()?
        };
        if let Owner::Version(k) = owner {
            if let Some(v) = self.versions.get_mut(&k) {
                v.last_read_ms = now_ms;
            }
        }
        Some(wire)
    }

    /// Number of packets held.
    pub fn len(&self) -> usize {
        self.by_name.len()
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }

    /// Octets of dataset versions held.
    pub fn version_octets(&self) -> usize {
        self.version_octets
    }

    /// Drops the notifications past their time and the versions idle too long.
    fn expire(&mut self, now_ms: u64) {
        while let Some((name, until)) = self.notifications.front() {
            if *until > now_ms {
                break;
            }
            self.by_name.remove(name);
            self.notifications.pop_front();
        }
        let idle: Vec<u64> = self
            .versions
            .iter()
            .filter(|(_, v)| v.last_read_ms + VERSION_IDLE_MS <= now_ms)
            .map(|(&k, _)| k)
            .collect();
        for k in idle {
            self.remove_version(k);
        }
    }

    fn remove_version(&mut self, key: u64) {
        let Some(v) = self.versions.remove(&key) else {
            return;
        };
        self.version_octets -= v.octets;
        for name in v.names {
            if let Some((_, Owner::Version(k))) = self.by_name.get(&name) {
                if *k == key {
                    self.by_name.remove(&name);
                }
            }
        }
    }

    /// Takes `name` off version `key`'s list (a newer version took it over).
    fn forget_name(&mut self, key: u64, name: &Name) {
        if let Some(v) = self.versions.get_mut(&key) {
            v.names.retain(|n| n != name);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> Name {
        s.parse().unwrap()
    }

    /// A version of `count` segments of `size` octets each under `/d/v=<v>`.
    fn version(v: u64, count: usize, size: usize) -> Vec<(Name, Bytes)> {
        (0..count)
            .map(|i| {
                (
                    n(&format!("/d/v={v}/seg={i}")),
                    Bytes::from(vec![v as u8; size]),
                )
            })
            .collect()
    }

    #[test]
    fn notifications_expire_and_the_oldest_goes_first() {
        let mut s = Storage::new();
        let events = n("/localhost/nfd/faces/events");
        s.insert_notification(
            n("/localhost/nfd/faces/events/seq=1"),
            Bytes::from_static(b"1"),
            0,
        );
        s.insert_notification(
            n("/localhost/nfd/faces/events/seq=0"),
            Bytes::from_static(b"0"),
            10,
        );
        assert_eq!(s.find(&events, false, 0), None);
        assert_eq!(s.find(&events, true, 0).unwrap().as_ref(), b"0");
        // seq=1 expires at 1000, seq=0 at 1010.
        assert_eq!(
            s.find(&n("/localhost/nfd/faces/events/seq=1"), false, 1000),
            None
        );
        assert_eq!(s.find(&events, true, 1009).unwrap().as_ref(), b"0");
        assert_eq!(s.find(&events, true, 1010), None);
        assert!(s.is_empty());
        for i in 0..=NOTIFICATIONS {
            s.insert_notification(n(&format!("/e/seq={i}")), Bytes::new(), 2000);
        }
        assert_eq!(s.len(), NOTIFICATIONS);
        assert_eq!(s.find(&n("/e/seq=0"), false, 2000), None);
    }

    #[test]
    fn a_version_of_any_size_stays_whole_while_it_is_read() {
        let mut s = Storage::new();
        // Four times the old 256-packet storage, each segment read well within the idle time.
        s.insert_version(version(1, 1024, 100), 0);
        for i in 0..1024u64 {
            let at = i * 10;
            let got = s.find(&n(&format!("/d/v=1/seg={i}")), false, at);
            assert!(got.is_some(), "segment {i}");
            s.insert_notification(n(&format!("/e/seq={i}")), Bytes::new(), at);
        }
        // Then left alone, it goes.
        assert!(s
            .find(&n("/d/v=1/seg=0"), false, 10_230 + VERSION_IDLE_MS)
            .is_none());
        assert_eq!(s.version_octets(), 0);
    }

    #[test]
    fn versions_beyond_the_budget_evict_the_least_recently_read_whole() {
        let mut s = Storage::new();
        let seg = VERSION_BUDGET / 8;
        s.insert_version(version(1, 3, seg), 0);
        s.insert_version(version(2, 3, seg), 1);
        // Version 1 is being read: version 2 is the least recently read.
        assert!(s.find(&n("/d/v=1/seg=0"), false, 2).is_some());
        s.insert_version(version(3, 3, seg), 3);
        assert!(s.find(&n("/d/v=2/seg=2"), false, 3).is_none(), "v2 evicted");
        assert!(s.find(&n("/d/v=2/seg=0"), false, 3).is_none(), "whole");
        for i in 0..3 {
            assert!(s.find(&n(&format!("/d/v=1/seg={i}")), false, 4).is_some());
            assert!(s.find(&n(&format!("/d/v=3/seg={i}")), false, 4).is_some());
        }
        assert_eq!(s.version_octets(), 6 * seg);
        // A version larger than the budget on its own is still kept whole.
        s.insert_version(version(4, 9, seg), 5);
        assert_eq!(s.version_octets(), 9 * seg);
        assert!(s.find(&n("/d/v=4/seg=8"), false, 5).is_some());
        assert!(s.find(&n("/d/v=3/seg=0"), false, 5).is_none());
    }

    #[test]
    fn can_be_prefix_finds_a_versions_first_segment_and_keeps_it() {
        let mut s = Storage::new();
        s.insert_version(version(7, 2, 1), 0);
        let got = s.find(&n("/d"), true, VERSION_IDLE_MS - 1);
        assert_eq!(got.as_deref(), Some(&[7u8][..]));
        assert!(s
            .find(&n("/d/v=7/seg=1"), false, 2 * VERSION_IDLE_MS - 2)
            .is_some());
    }
}
