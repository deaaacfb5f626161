//! NDNLPv2 reassembly: fragments of one packet, keyed by sender and the Sequence of their
//! first fragment (Sequence − FragIndex), are collected until all FragCount pieces are there.
//!
//! Bounded: at most [`ReassemblyLimits::max_partials`] packets in progress and
//! [`ReassemblyLimits::max_bytes`] octets held; a partial packet is dropped when no fragment of
//! it arrived for [`ReassemblyLimits::timeout`] (NFD: 500 ms). Every refused fragment is
//! reported, never silently kept.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bytes::{BufMut, Bytes, BytesMut};
use hashbrown::HashMap;
use kite_packet::{LpHeader, LpPacket};
use thiserror::Error;

use crate::uri::MacAddr;

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

/// Bounds on reassembly state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReassemblyLimits {
    /// Largest FragCount accepted (NFD: 400).
    pub max_fragments: u64,
    /// Packets in progress at once.
    pub max_partials: usize,
    /// Octets of fragments held at once.
    pub max_bytes: usize,
    /// How long a partial packet waits for its next fragment.
    pub timeout: Duration,
}

impl Default for ReassemblyLimits {
    fn default() -> Self {
        ReassemblyLimits {
            max_fragments: 400,
            max_partials: 256,
            max_bytes: 4 << 20,
            timeout: Duration::from_millis(500),
        }
    }
}

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
    /// Too many packets in progress, or too many octets held.
    #[error("reassembly buffers full")]
    Full,
}

/// A packet being reassembled.
#[derive(Debug)]
struct Partial {
    pieces: Vec<Option<Bytes>>,
    header: Option<LpHeader>,
    received: usize,
    bytes: usize,
    deadline: Instant,
}

/// Reassembly state of one face.
#[derive(Debug)]
pub struct Reassembler {
    limits: ReassemblyLimits,
    partials: HashMap<(Endpoint, u64), Partial>,
    bytes: usize,
}

impl Reassembler {
    /// An empty reassembler with `limits`.
    pub fn new(limits: ReassemblyLimits) -> Self {
        Reassembler {
            limits,
            partials: HashMap::new(),
            bytes: 0,
        }
    }

    /// Packets in progress.
    pub fn partials(&self) -> usize {
        self.partials.len()
    }

    /// Octets of fragments held (at most [`ReassemblyLimits::max_bytes`]).
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Adds one fragment (`lp.is_fragmented()`); returns the header of the first fragment and
    /// the whole packet once every fragment arrived.
    pub fn add(
        &mut self,
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
        let piece = lp.fragment.ok_or(ReassemblyError::Empty)?;
        let key = (from, seq.wrapping_sub(index));
        if !self.partials.contains_key(&key) && self.partials.len() >= self.limits.max_partials
            || self.bytes + piece.len() > self.limits.max_bytes
        {
            return Err(ReassemblyError::Full);
        }
        let p = self.partials.entry(key).or_insert_with(|| Partial {
            pieces: vec![None; count as usize],
            header: None,
            received: 0,
            bytes: 0,
            deadline: now,
        });
        if p.pieces.len() as u64 != count {
            return Err(ReassemblyError::InconsistentCount);
        }
        let slot = &mut p.pieces[index as usize];
        if slot.is_some() {
            return Err(ReassemblyError::Duplicate);
        }
        p.bytes += piece.len();
        self.bytes += piece.len();
        *slot = Some(piece);
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
        let p = self.partials.remove(&key).expect("entry just completed");
        self.bytes -= p.bytes;
        let mut whole = BytesMut::with_capacity(p.bytes);
        for piece in p.pieces.iter().flatten() {
            whole.put_slice(piece);
        }
        Ok(Some((p.header.unwrap_or_default(), whole.freeze())))
    }

    /// Drops the partial packets whose deadline passed; returns how many.
    pub fn expire(&mut self, now: Instant) -> usize {
        if self.partials.is_empty() {
            return 0;
        }
        let before = self.partials.len();
        let bytes = &mut self.bytes;
        self.partials.retain(|_, p| {
            let keep = p.deadline > now;
            if !keep {
                *bytes -= p.bytes;
            }
            keep
        });
        before - self.partials.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(r.add(Endpoint::Peer, frag(12, 2, 3, b"ef"), now), Ok(None));
        assert_eq!(r.add(Endpoint::Peer, first, now), Ok(None));
        let (h, whole) = r
            .add(Endpoint::Peer, frag(11, 1, 3, b"cd"), now)
            .unwrap()
            .unwrap();
        assert_eq!(&whole[..], b"abcdef");
        assert_eq!(h.congestion_mark, Some(1));
        assert_eq!(h.sequence, None);
        assert_eq!(r.partials(), 0);
        assert_eq!(r.bytes, 0);
    }

    #[test]
    fn senders_do_not_mix() {
        let mut r = Reassembler::new(ReassemblyLimits::default());
        let now = Instant::now();
        let a = Endpoint::Ip("192.0.2.1:6363".parse().unwrap());
        assert_eq!(r.add(a, frag(0, 0, 2, b"a"), now), Ok(None));
        assert_eq!(r.add(Endpoint::Peer, frag(1, 1, 2, b"b"), now), Ok(None));
        assert_eq!(r.partials(), 2);
    }

    #[test]
    fn misuse_is_refused() {
        let mut r = Reassembler::new(ReassemblyLimits::default());
        let now = Instant::now();
        let p = Endpoint::Peer;
        let mut no_seq = frag(0, 0, 2, b"a");
        no_seq.header.sequence = None;
        assert_eq!(r.add(p, no_seq, now), Err(ReassemblyError::NoSequence));
        assert_eq!(
            r.add(p, frag(0, 0, 401, b"a"), now),
            Err(ReassemblyError::TooManyFragments)
        );
        assert_eq!(r.add(p, frag(5, 0, 2, b"a"), now), Ok(None));
        assert_eq!(
            r.add(p, frag(5, 0, 2, b"a"), now),
            Err(ReassemblyError::Duplicate)
        );
        assert_eq!(
            r.add(p, frag(7, 2, 3, b"a"), now),
            Err(ReassemblyError::InconsistentCount),
            "same first Sequence (5), other FragCount"
        );
    }

    #[test]
    fn bounds_on_partials_and_bytes_hold() {
        let limits = ReassemblyLimits {
            max_partials: 2,
            max_bytes: 5,
            ..ReassemblyLimits::default()
        };
        let mut r = Reassembler::new(limits);
        let now = Instant::now();
        let p = Endpoint::Peer;
        assert_eq!(r.add(p, frag(0, 0, 2, b"aa"), now), Ok(None));
        assert_eq!(r.add(p, frag(10, 0, 2, b"bb"), now), Ok(None));
        assert_eq!(
            r.add(p, frag(20, 0, 2, b"c"), now),
            Err(ReassemblyError::Full)
        );
        assert_eq!(
            r.add(p, frag(11, 1, 2, b"xx"), now),
            Err(ReassemblyError::Full)
        );
        assert_eq!(
            r.add(p, frag(11, 1, 2, b"x"), now).unwrap().unwrap().1,
            &b"bbx"[..]
        );
        assert_eq!(r.partials(), 1);
    }

    #[test]
    fn partials_expire_after_the_timeout_since_their_last_fragment() {
        let mut r = Reassembler::new(ReassemblyLimits::default());
        let t0 = Instant::now();
        r.add(Endpoint::Peer, frag(0, 0, 3, b"a"), t0).unwrap();
        let t1 = t0 + Duration::from_millis(400);
        r.add(Endpoint::Peer, frag(1, 1, 3, b"b"), t1).unwrap();
        assert_eq!(r.expire(t0 + Duration::from_millis(600)), 0);
        assert_eq!(r.expire(t1 + Duration::from_millis(500)), 1);
        assert_eq!(r.bytes, 0);
    }
}
