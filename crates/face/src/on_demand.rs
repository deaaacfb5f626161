//! The on-demand faces of a datagram channel (UDP, Ethernet): which sender gets one, and
//! which gives way when the channel holds its limit. Both channels admit new senders through
//! [`Peers::admit`]. (Stream listeners bound theirs in [`crate::tenancy`].)

use std::hash::Hash;
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use hashbrown::HashMap;

use crate::datagram::is_ndn_packet;
use crate::lanes::LaneStats;
use kite_link::{FaceId, FaceIds};

/// One peer of a datagram channel: its face, whether that face is on-demand, and when the
/// channel last read from it (or, when other I/O threads read for it, [`Peer::elsewhere`]).
#[derive(Debug, Clone)]
struct Peer {
    face: FaceId,
    on_demand: bool,
    last_rx: Instant,
    elsewhere: Option<Arc<LaneStats>>,
}

impl Peer {
    /// When the peer was last read from, by any thread.
    fn last_rx(&self) -> Instant {
        let lanes = self.elsewhere.as_ref().and_then(|l| l.last_rx());
        lanes.map_or(self.last_rx, |t| t.max(self.last_rx))
    }
}

/// A datagram channel's faces by remote address (UDP endpoint, Ethernet address), with a
/// bound on its on-demand faces: each costs a face (queues, reassembly, counters) that any
/// sender can call up with one packet, so a channel keeps at most `limit` of them and makes
/// room for a new one by giving up its idlest (the one it read from longest ago).
#[derive(Debug)]
pub(crate) struct Peers<K> {
    map: HashMap<K, Peer>,
    on_demand: usize,
    limit: usize,
}

impl<K: Copy + Eq + Hash> Peers<K> {
    /// No peers; at most `limit` on-demand faces.
    pub fn new(limit: usize) -> Self {
        Peers {
            map: HashMap::new(),
            on_demand: 0,
            limit,
        }
    }

    /// The face of `remote`.
    pub fn get(&self, remote: &K) -> Option<FaceId> {
        self.map.get(remote).map(|p| p.face)
    }

    /// The face of `remote`, noting that it was just read from.
    pub fn touch(&mut self, remote: &K, now: Instant) -> Option<FaceId> {
        let p = self.map.get_mut(remote)?;
        p.last_rx = now;
        Some(p.face)
    }

    /// Records `face` as `remote`'s (the caller checked it had none).
    pub fn insert(&mut self, remote: K, face: FaceId, on_demand: bool, now: Instant) {
        let peer = Peer {
            face,
            on_demand,
            last_rx: now,
            elsewhere: None,
        };
        if let Some(old) = self.map.insert(remote, peer) {
            self.on_demand -= usize::from(old.on_demand);
        }
        self.on_demand += usize::from(on_demand);
    }

    /// Notes that other I/O threads read for `remote`'s face and count it in `stats`.
    pub fn read_elsewhere(&mut self, remote: &K, stats: Arc<LaneStats>) {
        if let Some(p) = self.map.get_mut(remote) {
            p.elsewhere = Some(stats);
        }
    }

    /// Forgets `remote` if its face is `face` (a newer face of the same remote stays).
    pub fn remove(&mut self, remote: &K, face: FaceId) {
        if self.map.get(remote).is_some_and(|p| p.face == face) {
            let old = self.map.remove(remote).expect("just found");
            self.on_demand -= usize::from(old.on_demand);
        }
    }

    /// Notes that `remote`'s face `face` became (or stopped being) on-demand.
    pub fn set_on_demand(&mut self, remote: &K, face: FaceId, on_demand: bool) {
        if let Some(p) = self.map.get_mut(remote).filter(|p| p.face == face) {
            self.on_demand = self.on_demand + usize::from(on_demand) - usize::from(p.on_demand);
            p.on_demand = on_demand;
        }
    }

    /// The one admission of a new sender `remote` of a datagram channel (UDP, Ethernet),
    /// whose frame is `frame`: only a well-formed NDN packet gets it an on-demand face
    /// (`None` otherwise, for the channel to count), so junk from spoofed or scanning sources
    /// costs a counter, not a face. When the channel holds its limit of on-demand faces, the
    /// idlest is given up first and pushed to `evicted`, for the caller to close. The new
    /// face's id (from `ids`) is recorded as `remote`'s; the caller makes the face.
    pub fn admit(
        &mut self,
        remote: K,
        frame: &Bytes,
        ids: &mut FaceIds,
        now: Instant,
        evicted: &mut Vec<FaceId>,
    ) -> Option<FaceId> {
        if !is_ndn_packet(frame) {
            return None;
        }
        evicted.extend(self.make_room());
        let id = ids.next_id();
        self.insert(remote, id, true, now);
        Some(id)
    }

    /// Before a new on-demand face: when the channel holds its limit of them, forgets the
    /// idlest and returns its face for the caller to close. A linear scan, made only when a
    /// new sender arrives at a full channel; creating the face costs more.
    pub fn make_room(&mut self) -> Option<FaceId> {
        if self.on_demand < self.limit {
            return None;
        }
        let (&remote, _) = self
            .map
            .iter()
            .filter(|(_, p)| p.on_demand)
            .min_by_key(|(_, p)| p.last_rx())?;
        let old = self.map.remove(&remote)?;
        self.on_demand -= 1;
        Some(old.face)
    }

    /// Faces, on-demand or not.
    pub fn len(&self) -> usize {
        self.map.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_channel_gives_up_its_idlest_on_demand_face() {
        let t0 = Instant::now();
        let at = |ms| t0 + std::time::Duration::from_millis(ms);
        let mut p = Peers::new(2);
        p.insert(1, FaceId(301), false, at(0));
        p.insert(2, FaceId(302), true, at(1));
        assert_eq!(p.make_room(), None, "one on-demand face of two");
        p.insert(3, FaceId(303), true, at(2));
        p.touch(&2, at(3));
        assert_eq!(p.make_room(), Some(FaceId(303)), "idlest on-demand");
        assert_eq!(p.get(&3), None);
        p.insert(4, FaceId(304), true, at(4));
        p.set_on_demand(&2, FaceId(302), false);
        assert_eq!(p.make_room(), None, "a persistent face is not counted");
        p.remove(&4, FaceId(999));
        assert_eq!(p.get(&4), Some(FaceId(304)), "another face's removal");
        p.remove(&4, FaceId(304));
        assert_eq!(p.get(&4), None);
        assert_eq!(p.get(&1), Some(FaceId(301)));
    }

    #[test]
    fn only_a_well_formed_packet_admits_a_sender_and_a_full_channel_makes_room() {
        let t0 = Instant::now();
        let interest = Bytes::from_static(&[0x05, 0x05, 0x07, 0x03, 0x08, 0x01, b'a']);
        let (mut p, mut ids, mut evicted) = (Peers::new(1), FaceIds::new(), Vec::new());
        let junk = Bytes::from_static(b"x");
        assert_eq!(p.admit(1, &junk, &mut ids, t0, &mut evicted), None);
        assert_eq!(p.len(), 0, "junk makes no face");
        let a = p.admit(1, &interest, &mut ids, t0, &mut evicted).unwrap();
        assert_eq!((p.get(&1), evicted.len()), (Some(a), 0));
        let b = p.admit(2, &interest, &mut ids, t0, &mut evicted).unwrap();
        assert_eq!(evicted, [a], "the idlest gave way");
        assert_eq!((p.get(&1), p.get(&2)), (None, Some(b)));
    }
}
