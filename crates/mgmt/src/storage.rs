//! The in-memory storage NFD's dispatcher keeps its published Data in (dataset segments,
//! notifications): capacity 256, each packet kept 1 s, oldest evicted first. Later segment
//! Interests and notification subscribers are answered from it (`ndn-cxx/mgmt/dispatcher.cpp`,
//! `InMemoryStorageFifo`).

use std::collections::{BTreeMap, VecDeque};

use bytes::Bytes;
use kite_packet::Name;

/// Packets the storage holds at most.
pub const CAPACITY: usize = 256;
/// How long a packet stays (ms).
pub const LIFETIME_MS: u64 = 1000;

/// Published management Data, by name.
#[derive(Debug, Default)]
pub struct Storage {
    by_name: BTreeMap<Name, (Bytes, u64)>,
    order: VecDeque<Name>,
}

impl Storage {
    /// An empty storage.
    pub fn new() -> Self {
        Self::default()
    }

    /// Keeps `wire` (a Data named `name`) until `now_ms` + [`LIFETIME_MS`], evicting the oldest
    /// packet when full.
    pub fn insert(&mut self, name: Name, wire: Bytes, now_ms: u64) {
        if self
            .by_name
            .insert(name.clone(), (wire, now_ms + LIFETIME_MS))
            .is_none()
        {
            self.order.push_back(name);
        }
        while self.by_name.len() > CAPACITY {
            if let Some(old) = self.order.pop_front() {
                self.by_name.remove(&old);
            }
        }
    }

    /// The stored Data answering an Interest for `name`: the same name, or with
    /// `can_be_prefix` the first (in canonical order) named under it. Expired packets are
    /// dropped first.
    pub fn find(&mut self, name: &Name, can_be_prefix: bool, now_ms: u64) -> Option<Bytes> {
        self.by_name.retain(|_, (_, until)| *until > now_ms);
        let live = &self.by_name;
        self.order.retain(|n| live.contains_key(n));
        if !can_be_prefix {
            return self.by_name.get(name).map(|(w, _)| w.clone());
        }
        self.by_name
            .range(name.clone()..)
            .next()
            .filter(|(n, _)| name.is_prefix_of(n))
            .map(|(_, (w, _))| w.clone())
    }

    /// Number of packets held.
    pub fn len(&self) -> usize {
        self.by_name.len()
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> Name {
        s.parse().unwrap()
    }

    #[test]
    fn exact_and_prefix_lookups_with_expiry() {
        let mut s = Storage::new();
        s.insert(
            n("/localhost/nfd/faces/events/seq=1"),
            Bytes::from_static(b"1"),
            0,
        );
        s.insert(
            n("/localhost/nfd/faces/events/seq=0"),
            Bytes::from_static(b"0"),
            10,
        );
        let events = n("/localhost/nfd/faces/events");
        assert_eq!(s.find(&events, false, 0), None);
        assert_eq!(s.find(&events, true, 0).unwrap().as_ref(), b"0");
        assert_eq!(
            s.find(&n("/localhost/nfd/faces/events/seq=1"), false, 5)
                .unwrap()
                .as_ref(),
            b"1"
        );
        // seq=1 expires at 1000, seq=0 at 1010.
        assert_eq!(
            s.find(&n("/localhost/nfd/faces/events/seq=1"), false, 1000),
            None
        );
        assert_eq!(s.find(&events, true, 1009).unwrap().as_ref(), b"0");
        assert_eq!(s.find(&events, true, 1010), None);
        assert!(s.is_empty());
        assert_eq!(s.find(&n("/localhost/nfd/fib"), true, 0), None);
    }

    #[test]
    fn oldest_is_evicted_beyond_capacity() {
        let mut s = Storage::new();
        for i in 0..=CAPACITY {
            s.insert(n(&format!("/d/seg={i}")), Bytes::new(), 0);
        }
        assert_eq!(s.len(), CAPACITY);
        assert_eq!(s.find(&n("/d/seg=0"), false, 0), None);
        assert!(s.find(&n("/d/seg=1"), false, 0).is_some());
    }
}
