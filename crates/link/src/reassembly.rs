//! NDNLPv2 reassembly: fragments of one packet, keyed by face, sender and the Sequence of their
//! first fragment (Sequence − FragIndex), are collected until all FragCount pieces are there.
//!
//! One reassembler serves a whole datagram channel (every face of a UDP or Ethernet channel;
//! a multicast face has its own), so a budget holds however many on-demand faces a sender
//! opens from other ports. Bounded: at most [`ReassemblyLimits::max_partials`] packets in
//! progress and [`ReassemblyLimits::max_bytes`] octets charged (each partial packet's buffer,
//! into which its fragments are copied out of the receive buffers they arrived in, plus its
//! bookkeeping); a fragment that
//! does not fit makes room by dropping the oldest partial packets first, so a sender that keeps
//! partials alive with a new piece now and then cannot hold the budget against newer packets.
//! A partial packet is also dropped when no fragment of it arrived for
//! [`ReassemblyLimits::timeout`] (NFD: 500 ms), and as soon as its fragments add up to more
//! than [`ReassemblyLimits::max_packet`]: what it held is freed at once, and its later
//! fragments are refused until it times out. Every partial dropped for lack of room or time is
//! counted against the face it was for ([`Reassembler::take_drops`]); every refused fragment is
//! reported.
//!
//! A partial packet's fragments go into one buffer in the order they arrive, sized at its first
//! fragment for FragCount fragments of that length (at most the largest packet). When they
//! arrived in order, as over most links, that buffer is the packet: one allocation and one copy
//! per packet, none per fragment. Out of order, the pieces are put in order with one more copy.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bytes::{BufMut, Bytes, BytesMut};
use hashbrown::HashMap;
use kite_packet::{LpHeader, LpPacket};
use thiserror::Error;

use crate::face::FaceId;
use crate::mac::MacAddr;

/// Who sent a fragment: reassembly never mixes fragments of different senders.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Endpoint {
    /// The face's only peer (point-to-point faces).
    Peer,
    /// An IP sender on a multi-access face.
    Ip(SocketAddr),
    /// An Ethernet sender on a multi-access face.
    Mac(MacAddr),
}

/// Bounds on reassembly state (of one channel).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReassemblyLimits {
    /// Largest FragCount accepted (NFD: 400).
    pub max_fragments: u64,
    /// Packets in progress at once.
    pub max_partials: usize,
    /// Octets charged at once: for each packet in progress, its buffer's capacity,
    /// [`PARTIAL_OVERHEAD`] and a [`SLOT`] per FragCount.
    pub max_bytes: usize,
    /// How long a partial packet waits for its next fragment.
    pub timeout: Duration,
    /// Largest packet reassembled, in octets: set from the faces' largest packet size
    /// (`FaceConfig::max_packet_size`).
    pub max_packet: usize,
}

/// Default [`ReassemblyLimits::max_bytes`]: 4 MiB per channel.
pub const DEFAULT_REASSEMBLY_BYTES: usize = 4 << 20;

impl Default for ReassemblyLimits {
    fn default() -> Self {
        ReassemblyLimits {
            max_fragments: 400,
            max_partials: 256,
            max_bytes: DEFAULT_REASSEMBLY_BYTES,
            timeout: Duration::from_millis(500),
            max_packet: crate::framing::MAX_NDN_PACKET_SIZE,
        }
    }
}

/// Octets charged per partial packet beyond its fragments' slots: its map and age entries.
pub const PARTIAL_OVERHEAD: usize = 192;
/// Octets charged per FragCount of a partial packet: where each fragment sits in its buffer.
pub const SLOT: usize = size_of::<Piece>();

/// Where a fragment sits in its partial packet's buffer: offset and length.
type Piece = (u32, u32);

/// A fragment not yet received.
const MISSING: Piece = (u32::MAX, 0);

/// Slot vectors a reassembler keeps for its next partial packets.
const SPARE_SLOTS: usize = 8;

/// Why a fragment was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum ReassemblyError {
    /// A fragmented LpPacket without Sequence.
    #[error("fragment without Sequence")]
    NoSequence,
    /// FragCount above the limit.
    #[error("FragCount above the limit")]
    TooManyFragments,
    /// A fragment with no Fragment field.
    #[error("fragment without payload")]
    Empty,
    /// The FragCount differs from that of earlier fragments of the same packet.
    #[error("FragCount inconsistent with earlier fragments")]
    InconsistentCount,
    /// This fragment already arrived.
    #[error("duplicate fragment")]
    Duplicate,
    /// The packet cannot fit the budget even with every other partial packet dropped.
    #[error("reassembly buffers full")]
    Full,
    /// With this fragment the packet exceeds the largest packet size: it is dropped.
    #[error("packet larger than the largest packet size")]
    TooLarge,
    /// A fragment of a packet already dropped for its size.
    #[error("fragment of a packet dropped for its size")]
    OfTooLarge,
}

/// A packet being reassembled.
#[derive(Debug)]
struct Partial {
    /// The fragments' octets, in the order they arrived.
    buf: BytesMut,
    /// Where each fragment sits in `buf`, by FragIndex.
    pieces: Vec<Piece>,
    /// Every fragment so far arrived in FragIndex order: `buf` is the packet so far.
    in_order: bool,
    header: Option<LpHeader>,
    received: usize,
    /// Octets of its pieces.
    payload: usize,
    /// Octets charged against the budget.
    charged: usize,
    deadline: Instant,
    /// Its place in `Reassembler::age`.
    born: u64,
    /// Dropped for its size: holds no fragment, refuses the rest until its deadline.
    too_large: bool,
}

impl Partial {
    /// The capacity its buffer needs to take `len` more octets: as it is when they fit, else
    /// doubled, but no more than the largest packet needs.
    fn capacity_for(&self, len: usize, max_packet: usize) -> usize {
        let need = self.buf.len() + len;
        if need <= self.buf.capacity() {
            self.buf.capacity()
        } else {
            (self.buf.capacity() * 2).clamp(need, max_packet.max(need))
        }
    }
}

/// (face, sender, Sequence of the first fragment).
type Key = (FaceId, Endpoint, u64);

/// Reassembly state of one channel (or one face that has no channel).
#[derive(Debug)]
pub struct Reassembler {
    limits: ReassemblyLimits,
    partials: HashMap<Key, Partial>,
    /// Partial packets by age, oldest first.
    age: BTreeMap<u64, Key>,
    next_born: u64,
    bytes: usize,
    /// Partial packets dropped (timed out or made room) per face, not yet taken.
    drops: HashMap<FaceId, u64>,
    /// Slot vectors of finished partial packets, reused (at most [`SPARE_SLOTS`]).
    spare: Vec<Vec<Piece>>,
}

impl Reassembler {
    /// An empty reassembler with `limits`.
    pub fn new(limits: ReassemblyLimits) -> Self {
        Reassembler {
            limits,
            partials: HashMap::new(),
            age: BTreeMap::new(),
            next_born: 0,
            bytes: 0,
            drops: HashMap::new(),
            spare: Vec::new(),
        }
    }

    /// Packets in progress.
    pub fn partials(&self) -> usize {
        self.partials.len()
    }

    /// Octets charged against [`ReassemblyLimits::max_bytes`].
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Adds one fragment (`lp.is_fragmented()`) that `face` received from `from`; returns the
    /// header of the first fragment and the whole packet once every fragment arrived. The
    /// fragment is copied: the receive buffer it is a slice of is not kept.
    ///
    /// # Panics
    /// Never for any input; the `expect`s below hold by construction.
    pub fn add(
        &mut self,
        face: FaceId,
        from: Endpoint,
        lp: LpPacket,
        now: Instant,
    ) -> Result<Option<(LpHeader, Bytes)>, ReassemblyError> {
        let h = &lp.header;
        let seq = h.sequence.ok_or(ReassemblyError::NoSequence)?;
        let count = h.frag_count.unwrap_or(1);
        let index = h.frag_index.unwrap_or(0);
        if count > self.limits.max_fragments {
            return Err(ReassemblyError::TooManyFragments);
        }
        if index >= count {
            return Err(ReassemblyError::InconsistentCount);
        }
        let piece = lp.fragment.as_ref().ok_or(ReassemblyError::Empty)?;
        let key = (face, from, seq.wrapping_sub(index));
        let index = index as usize;
        match self.partials.get(&key) {
            Some(p) if p.pieces.len() as u64 != count => {
                return Err(ReassemblyError::InconsistentCount)
            }
            Some(p) if p.too_large => return Err(ReassemblyError::OfTooLarge),
            Some(p) if p.pieces[index] != MISSING => return Err(ReassemblyError::Duplicate),
            Some(p) => {
                let grow = p.capacity_for(piece.len(), self.limits.max_packet) - p.buf.capacity();
                self.make_room(grow, 0, Some(key))?;
            }
            None => {
                // A buffer for FragCount fragments of this one's length: the whole packet
                // when the sender cut it at one MTU, as senders do.
                let reserve = (count as usize)
                    .saturating_mul(piece.len())
                    .clamp(piece.len(), self.limits.max_packet.max(piece.len()));
                let new = PARTIAL_OVERHEAD + count as usize * SLOT + reserve;
                self.make_room(new, 1, None)?;
                let born = self.next_born;
                self.next_born += 1;
                self.age.insert(born, key);
                let mut pieces = self.spare.pop().unwrap_or_default();
                pieces.resize(count as usize, MISSING);
                let buf = BytesMut::with_capacity(reserve);
                let charged = PARTIAL_OVERHEAD + count as usize * SLOT + buf.capacity();
                self.bytes += charged;
                self.partials.insert(
                    key,
                    Partial {
                        buf,
                        pieces,
                        in_order: true,
                        header: None,
                        received: 0,
                        payload: 0,
                        charged,
                        deadline: now,
                        born,
                        too_large: false,
                    },
                );
            }
        }
        let p = self.partials.get_mut(&key).expect("present or just made");
        if p.payload + piece.len() > self.limits.max_packet {
            // Keep only the entry itself, so its later fragments are refused, not reassembled.
            let base = PARTIAL_OVERHEAD + p.pieces.len() * SLOT;
            self.bytes -= p.charged - base;
            p.charged = base;
            p.payload = 0;
            p.buf = BytesMut::new();
            p.too_large = true;
            p.deadline = now + self.limits.timeout;
            return Err(ReassemblyError::TooLarge);
        }
        let capacity = p.capacity_for(piece.len(), self.limits.max_packet);
        if capacity > p.buf.capacity() {
            // Exactly what was charged (`BytesMut::reserve` may take more).
            let mut buf = BytesMut::with_capacity(capacity);
            buf.put_slice(&p.buf);
            let grown = buf.capacity() - p.buf.capacity();
            p.buf = buf;
            p.charged += grown;
            self.bytes += grown;
        }
        p.pieces[index] = (p.buf.len() as u32, piece.len() as u32);
        p.buf.put_slice(piece);
        p.in_order &= index == p.received;
        p.payload += piece.len();
        p.received += 1;
        p.deadline = now + self.limits.timeout;
        if index == 0 {
            let mut header = lp.header;
            header.sequence = None;
            header.frag_index = None;
            header.frag_count = None;
            p.header = Some(header);
        }
        if p.received < p.pieces.len() {
            return Ok(None);
        }
        let mut p = self.remove(&key).expect("entry just completed");
        let whole = if p.in_order {
            p.buf.freeze()
        } else {
            let mut whole = BytesMut::with_capacity(p.payload);
            for &(at, len) in &p.pieces {
                whole.put_slice(&p.buf[at as usize..][..len as usize]);
            }
            whole.freeze()
        };
        if self.spare.len() < SPARE_SLOTS {
            p.pieces.clear();
            self.spare.push(p.pieces);
        }
        Ok(Some((p.header.unwrap_or_default(), whole)))
    }

    /// Drops the oldest partial packets (never `keep`) until `cost` more octets and `partials`
    /// more packets fit. When they cannot, `keep` is dropped too (its packet cannot complete
    /// within the budget) and the fragment refused.
    fn make_room(
        &mut self,
        cost: usize,
        partials: usize,
        keep: Option<Key>,
    ) -> Result<(), ReassemblyError> {
        let fits = |r: &Self| {
            r.bytes + cost <= r.limits.max_bytes
                && r.partials.len() + partials <= r.limits.max_partials
        };
        while !fits(self) {
            let oldest = self.age.values().copied().find(|k| Some(*k) != keep);
            match oldest {
                Some(k) => self.drop_partial(&k),
                None => {
                    if let Some(k) = keep {
                        self.drop_partial(&k);
                    }
                    return Err(ReassemblyError::Full);
                }
            }
        }
        Ok(())
    }

    fn remove(&mut self, key: &Key) -> Option<Partial> {
        let p = self.partials.remove(key)?;
        self.age.remove(&p.born);
        self.bytes -= p.charged;
        Some(p)
    }

    fn drop_partial(&mut self, key: &Key) {
        // One dropped for its size was reported when it was.
        if self.remove(key).is_some_and(|p| !p.too_large) {
            *self.drops.entry(key.0).or_default() += 1;
        }
    }

    /// Drops the partial packets whose deadline passed; returns how many.
    pub fn expire(&mut self, now: Instant) -> usize {
        if self.partials.is_empty() {
            return 0;
        }
        // In place, as `drop_partial` does for one: the link service calls this for every
        // frame it receives, so it must not allocate.
        let (age, drops, bytes) = (&mut self.age, &mut self.drops, &mut self.bytes);
        let mut expired = 0;
        self.partials.retain(|key, p| {
            if p.deadline > now {
                return true;
            }
            age.remove(&p.born);
            *bytes -= p.charged;
            // One dropped for its size was reported when it was.
            if !p.too_large {
                *drops.entry(key.0).or_default() += 1;
            }
            expired += 1;
            false
        });
        expired
    }

    /// The partial packets dropped (timed out, or dropped to make room) since the last call,
    /// per face they were for.
    pub fn take_drops(&mut self) -> impl Iterator<Item = (FaceId, u64)> + '_ {
        self.drops.drain()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const F: FaceId = FaceId(300);

    fn frag(seq: u64, index: u64, count: u64, payload: &'static [u8]) -> LpPacket {
        LpPacket {
            header: LpHeader {
                sequence: Some(seq),
                frag_index: Some(index),
                frag_count: Some(count),
                ..LpHeader::default()
            },
            fragment: Some(Bytes::from_static(payload)),
        }
    }

    #[test]
    fn out_of_order_fragments_reassemble_with_the_first_fragments_header() {
        let mut r = Reassembler::new(ReassemblyLimits::default());
        let now = Instant::now();
        let mut first = frag(10, 0, 3, b"ab");
        first.header.congestion_mark = Some(1);
        assert_eq!(
            r.add(F, Endpoint::Peer, frag(12, 2, 3, b"ef"), now),
            Ok(None)
        );
        assert_eq!(r.add(F, Endpoint::Peer, first, now), Ok(None));
        let (h, whole) = r
            .add(F, Endpoint::Peer, frag(11, 1, 3, b"cd"), now)
            .unwrap()
            .unwrap();
        assert_eq!(&whole[..], b"abcdef");
        assert_eq!(h.congestion_mark, Some(1));
        assert_eq!(h.sequence, None);
        assert_eq!(r.partials(), 0);
        assert_eq!(r.bytes, 0);
    }

    #[test]
    fn a_packet_over_the_largest_size_is_dropped_at_the_fragment_that_exceeds_it() {
        let limits = ReassemblyLimits {
            max_packet: 5,
            ..ReassemblyLimits::default()
        };
        let mut r = Reassembler::new(limits);
        let t0 = Instant::now();
        let p = Endpoint::Peer;
        assert_eq!(r.add(F, p, frag(0, 0, 4, b"aa"), t0), Ok(None));
        assert_eq!(r.add(F, p, frag(1, 1, 4, b"bb"), t0), Ok(None));
        assert_eq!(r.bytes(), charge(4, 5), "a buffer for the largest packet");
        assert_eq!(
            r.add(F, p, frag(2, 2, 4, b"cc"), t0),
            Err(ReassemblyError::TooLarge)
        );
        assert_eq!(r.bytes(), charge(4, 0), "its buffer is freed");
        assert_eq!(
            r.add(F, p, frag(3, 3, 4, b"d"), t0),
            Err(ReassemblyError::OfTooLarge)
        );
        assert_eq!(
            r.add(F, p, frag(0, 0, 4, b"aa"), t0),
            Err(ReassemblyError::OfTooLarge),
            "a repeated fragment does not start it again"
        );
        assert_eq!(r.expire(t0 + Duration::from_secs(1)), 1);
        assert_eq!(r.take_drops().count(), 0, "reported as too large already");
        assert_eq!((r.partials(), r.bytes()), (0, 0));
        // The largest size itself reassembles.
        assert_eq!(r.add(F, p, frag(10, 0, 2, b"abc"), t0), Ok(None));
        let (_, whole) = r.add(F, p, frag(11, 1, 2, b"de"), t0).unwrap().unwrap();
        assert_eq!(&whole[..], b"abcde");
    }

    #[test]
    fn senders_do_not_mix() {
        let mut r = Reassembler::new(ReassemblyLimits::default());
        let now = Instant::now();
        let a = Endpoint::Ip("192.0.2.1:6363".parse().unwrap());
        assert_eq!(r.add(F, a, frag(0, 0, 2, b"a"), now), Ok(None));
        assert_eq!(r.add(F, Endpoint::Peer, frag(1, 1, 2, b"b"), now), Ok(None));
        assert_eq!(r.partials(), 2);
    }

    #[test]
    fn misuse_is_refused() {
        let mut r = Reassembler::new(ReassemblyLimits::default());
        let now = Instant::now();
        let p = Endpoint::Peer;
        let mut no_seq = frag(0, 0, 2, b"a");
        no_seq.header.sequence = None;
        assert_eq!(r.add(F, p, no_seq, now), Err(ReassemblyError::NoSequence));
        assert_eq!(
            r.add(F, p, frag(0, 0, 401, b"a"), now),
            Err(ReassemblyError::TooManyFragments)
        );
        assert_eq!(r.add(F, p, frag(5, 0, 2, b"a"), now), Ok(None));
        assert_eq!(
            r.add(F, p, frag(5, 0, 2, b"a"), now),
            Err(ReassemblyError::Duplicate)
        );
        assert_eq!(
            r.add(F, p, frag(7, 2, 3, b"a"), now),
            Err(ReassemblyError::InconsistentCount),
            "same first Sequence (5), other FragCount"
        );
    }

    /// What a partial packet of `count` fragments is charged with a buffer of `capacity`.
    fn charge(count: usize, capacity: usize) -> usize {
        PARTIAL_OVERHEAD + count * SLOT + capacity
    }

    #[test]
    fn the_oldest_partials_make_room_and_their_drops_are_counted_per_face() {
        let limits = ReassemblyLimits {
            max_bytes: 2 * charge(2, 4),
            ..ReassemblyLimits::default()
        };
        let mut r = Reassembler::new(limits);
        let now = Instant::now();
        let (a, b) = (FaceId(300), FaceId(301));
        assert_eq!(
            r.add(a, Endpoint::Peer, frag(0, 0, 2, b"aa"), now),
            Ok(None)
        );
        assert_eq!(
            r.add(b, Endpoint::Peer, frag(10, 0, 2, b"bb"), now),
            Ok(None)
        );
        assert_eq!(r.bytes(), limits.max_bytes);
        // A later packet, even one a refreshed old partial would have kept out, drops the
        // oldest (face a's), not itself.
        assert_eq!(
            r.add(b, Endpoint::Peer, frag(20, 0, 2, b"cc"), now),
            Ok(None)
        );
        assert_eq!(r.partials(), 2);
        assert!(r.bytes() <= limits.max_bytes);
        assert_eq!(r.take_drops().collect::<Vec<_>>(), vec![(a, 1)]);
        // Completing a packet may also need room (its buffer held two fragments of two
        // octets): the other partial gives way, not this one.
        assert_eq!(
            r.add(b, Endpoint::Peer, frag(11, 1, 2, b"xyz"), now)
                .unwrap()
                .unwrap()
                .1,
            &b"bbxyz"[..]
        );
        assert_eq!(r.take_drops().collect::<Vec<_>>(), vec![(b, 1)]);
        assert_eq!((r.partials(), r.bytes()), (0, 0));
    }

    #[test]
    fn partial_count_is_bounded_too() {
        let limits = ReassemblyLimits {
            max_partials: 2,
            ..ReassemblyLimits::default()
        };
        let mut r = Reassembler::new(limits);
        let now = Instant::now();
        for seq in [0, 10, 20] {
            assert_eq!(
                r.add(F, Endpoint::Peer, frag(seq, 0, 2, b"a"), now),
                Ok(None)
            );
        }
        assert_eq!(r.partials(), 2);
        assert_eq!(r.take_drops().collect::<Vec<_>>(), vec![(F, 1)]);
        assert!(r.partials.contains_key(&(F, Endpoint::Peer, 20)));
    }

    #[test]
    fn a_packet_larger_than_the_budget_is_refused_and_forgotten() {
        let limits = ReassemblyLimits {
            max_bytes: charge(2, 4) + 1,
            ..ReassemblyLimits::default()
        };
        let mut r = Reassembler::new(limits);
        let now = Instant::now();
        assert_eq!(
            r.add(F, Endpoint::Peer, frag(0, 0, 2, b"aa"), now),
            Ok(None)
        );
        assert_eq!(
            r.add(F, Endpoint::Peer, frag(1, 1, 2, b"bbb"), now),
            Err(ReassemblyError::Full)
        );
        assert_eq!((r.partials(), r.bytes()), (0, 0));
        assert_eq!(r.take_drops().collect::<Vec<_>>(), vec![(F, 1)]);
    }

    #[test]
    fn fragments_are_copied_out_of_their_receive_buffer() {
        let burst = Bytes::from(vec![1u8; 64 * 1024]);
        let mut r = Reassembler::new(ReassemblyLimits::default());
        let lp = LpPacket {
            fragment: Some(burst.slice(10..20)),
            ..frag(0, 0, 2, b"")
        };
        r.add(F, Endpoint::Peer, lp, Instant::now()).unwrap();
        let p = &r.partials[&(F, Endpoint::Peer, 0)];
        assert_eq!(p.buf.len(), 10);
        assert_eq!(
            p.buf.capacity(),
            20,
            "room for two fragments of this length"
        );
        assert!(!burst.as_ptr_range().contains(&p.buf.as_ptr()));
    }

    #[test]
    fn in_order_fragments_become_the_packet_without_another_copy() {
        let mut r = Reassembler::new(ReassemblyLimits::default());
        let now = Instant::now();
        r.add(F, Endpoint::Peer, frag(0, 0, 3, b"abc"), now)
            .unwrap();
        let buf = r.partials[&(F, Endpoint::Peer, 0)].buf.as_ptr();
        r.add(F, Endpoint::Peer, frag(1, 1, 3, b"def"), now)
            .unwrap();
        let (_, whole) = r
            .add(F, Endpoint::Peer, frag(2, 2, 3, b"g"), now)
            .unwrap()
            .unwrap();
        assert_eq!(&whole[..], b"abcdefg");
        assert_eq!(whole.as_ptr(), buf, "the partial's own buffer");
        assert_eq!((r.partials(), r.bytes()), (0, 0));
    }

    #[test]
    fn a_buffer_too_small_for_a_longer_fragment_grows_within_the_largest_packet() {
        let limits = ReassemblyLimits {
            max_packet: 9,
            ..ReassemblyLimits::default()
        };
        let mut r = Reassembler::new(limits);
        let now = Instant::now();
        // The last fragment (one octet) first: a buffer for three such, 3 octets.
        r.add(F, Endpoint::Peer, frag(2, 2, 3, b"g"), now).unwrap();
        assert_eq!(r.bytes(), charge(3, 3));
        r.add(F, Endpoint::Peer, frag(0, 0, 3, b"abcd"), now)
            .unwrap();
        assert_eq!(r.bytes(), charge(3, 6), "doubled");
        r.add(F, Endpoint::Peer, frag(5, 0, 3, b"x"), now).unwrap();
        let (_, whole) = r
            .add(F, Endpoint::Peer, frag(1, 1, 3, b"ef"), now)
            .unwrap()
            .unwrap();
        assert_eq!(&whole[..], b"abcdefg", "put in order");
        assert_eq!(r.bytes(), charge(3, 3), "the other partial only");
    }

    #[test]
    fn partials_expire_after_the_timeout_since_their_last_fragment() {
        let mut r = Reassembler::new(ReassemblyLimits::default());
        let t0 = Instant::now();
        r.add(F, Endpoint::Peer, frag(0, 0, 3, b"a"), t0).unwrap();
        let t1 = t0 + Duration::from_millis(400);
        r.add(F, Endpoint::Peer, frag(1, 1, 3, b"b"), t1).unwrap();
        assert_eq!(r.expire(t0 + Duration::from_millis(600)), 0);
        assert_eq!(r.expire(t1 + Duration::from_millis(500)), 1);
        assert_eq!(r.bytes, 0);
    }
}
