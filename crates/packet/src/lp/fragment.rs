//! Cutting a packet into NDNLPv2 fragments that fit a link's MTU: one plan for the
//! forwarder's datagram faces and for the client library's UDP transport.

use bytes::Bytes;

use super::{LpHeader, LpPacket};

/// Worst-case octets of the LpPacket, Sequence, FragIndex, FragCount and Fragment headers
/// around a fragment's payload (an MTU and a FragCount below 2^16).
pub const FRAG_OVERHEAD: usize = 4 + 10 + 4 + 4 + 4;

/// Why a packet cannot be fragmented.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum FragmentError {
    /// The frame is itself a fragment.
    #[error("cannot fragment a fragment")]
    AlreadyFragment,
    /// The MTU leaves no room for a fragment's payload after its headers.
    #[error("the MTU leaves no room for a fragment")]
    NoRoom,
    /// More than 2^16 - 1 fragments would be needed.
    #[error("packet too large to fragment")]
    TooMany,
}

/// The fragments of one packet, in order: LpPackets with Sequence, FragIndex and FragCount,
/// each at most the MTU when encoded; the first also carries the original header's fields.
/// Its `len()` before iterating is how many fragments the packet takes.
#[derive(Debug, Clone)]
pub struct Fragments {
    header: LpHeader,
    payload: Bytes,
    first_room: usize,
    room: usize,
    count: usize,
    index: usize,
    start: usize,
    seq: u64,
}

impl Fragments {
    /// Plans the cut of `payload` (a whole network-layer packet) sent with the fields of
    /// `header` into fragments of at most `mtu` octets, numbered from `first_seq` (wrapping).
    pub fn new(
        header: LpHeader,
        payload: Bytes,
        mtu: usize,
        first_seq: u64,
    ) -> Result<Self, FragmentError> {
        if header.frag_count.is_some() {
            return Err(FragmentError::AlreadyFragment);
        }
        let first_room = mtu.saturating_sub(FRAG_OVERHEAD + header.fields_len());
        let room = mtu.saturating_sub(FRAG_OVERHEAD);
        if first_room == 0 {
            return Err(FragmentError::NoRoom);
        }
        let count = 1 + payload.len().saturating_sub(first_room).div_ceil(room);
        if count > usize::from(u16::MAX) {
            return Err(FragmentError::TooMany);
        }
        Ok(Fragments {
            header,
            payload,
            first_room,
            room,
            count,
            index: 0,
            start: 0,
            seq: first_seq,
        })
    }
}

impl Iterator for Fragments {
    type Item = LpPacket;

    fn next(&mut self) -> Option<LpPacket> {
        if self.index == self.count {
            return None;
        }
        let room = if self.index == 0 {
            self.first_room
        } else {
            self.room
        };
        let end = self.payload.len().min(self.start + room);
        let header = LpHeader {
            sequence: Some(self.seq),
            frag_index: Some(self.index as u64),
            frag_count: Some(self.count as u64),
            ..if self.index == 0 {
                core::mem::take(&mut self.header)
            } else {
                LpHeader::default()
            }
        };
        let piece = self.payload.slice(self.start..end);
        self.seq = self.seq.wrapping_add(1);
        self.index += 1;
        self.start = end;
        Some(LpPacket {
            header,
            fragment: Some(piece),
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.count - self.index;
        (left, Some(left))
    }
}

impl ExactSizeIterator for Fragments {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PitToken;

    #[test]
    fn pieces_fit_the_mtu_cover_the_packet_and_only_the_first_keeps_the_header() {
        let payload = Bytes::from((0..10_000).map(|i| i as u8).collect::<Vec<_>>());
        let header = LpHeader {
            pit_token: PitToken::new(&[7; 32]),
            congestion_mark: Some(1),
            ..LpHeader::default()
        };
        for mtu in [300, 1400, 1500, 8800] {
            let f = Fragments::new(header.clone(), payload.clone(), mtu, u64::MAX - 1).unwrap();
            let count = f.len();
            let pieces: Vec<LpPacket> = f.collect();
            assert_eq!(pieces.len(), count);
            let mut joined = Vec::new();
            for (i, p) in pieces.iter().enumerate() {
                assert!(p.encode().len() <= mtu, "mtu {mtu} piece {i}");
                assert_eq!(p.header.frag_index, Some(i as u64));
                assert_eq!(p.header.frag_count, Some(count as u64));
                assert_eq!(
                    p.header.sequence,
                    Some((u64::MAX - 1).wrapping_add(i as u64))
                );
                assert_eq!(p.header.pit_token.is_some(), i == 0);
                joined.extend_from_slice(p.fragment.as_ref().unwrap());
            }
            assert_eq!(joined, payload);
            // As few pieces as the room allows: one fewer would not hold the packet.
            let room = mtu - FRAG_OVERHEAD;
            assert!((count - 1) * room < payload.len() + header.fields_len());
        }
    }

    #[test]
    fn what_cannot_be_cut_is_refused() {
        let payload = Bytes::from(vec![1u8; 1000]);
        let fragment = LpHeader {
            frag_count: Some(2),
            ..LpHeader::default()
        };
        let refused = |h: LpHeader, mtu| Fragments::new(h, payload.clone(), mtu, 0).err();
        assert_eq!(
            refused(fragment, 1400),
            Some(FragmentError::AlreadyFragment)
        );
        assert_eq!(
            refused(LpHeader::default(), FRAG_OVERHEAD),
            Some(FragmentError::NoRoom)
        );
        assert_eq!(refused(LpHeader::default(), FRAG_OVERHEAD + 1), None);
        let huge = Bytes::from(vec![0u8; 70_000]);
        assert_eq!(
            Fragments::new(LpHeader::default(), huge, FRAG_OVERHEAD + 1, 0).err(),
            Some(FragmentError::TooMany)
        );
    }
}
