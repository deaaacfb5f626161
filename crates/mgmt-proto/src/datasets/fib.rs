//! FibEntry (`fib/list` items): a prefix and its nexthops.

use bytes::Bytes;
use kite_packet::tlv::Element;
use kite_packet::{tlv_type, Name, Result};

use crate::nfd;
use crate::wire::{put_name, put_nonneg, required, walk_strict, Tlv};

/// One nexthop of a FIB entry.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NextHopRecord {
    /// FaceId.
    pub face_id: u64,
    /// Cost.
    pub cost: u64,
}

impl Tlv for NextHopRecord {
    const TYPE: u64 = nfd::NEXT_HOP_RECORD;

    fn encode_value(&self, out: &mut Vec<u8>) {
        put_nonneg(out, nfd::FACE_ID, self.face_id);
        put_nonneg(out, nfd::COST, self.cost);
    }

    fn decode_value(_buf: &Bytes, el: &Element<'_>) -> Result<Self> {
        let (mut face_id, mut cost) = (None, None);
        walk_strict(el.children(), &[nfd::FACE_ID, nfd::COST], None, |f| {
            match f.typ {
                nfd::FACE_ID => face_id = Some(f.nonneg()?),
                _ => cost = Some(f.nonneg()?),
            }
            Ok(())
        })?;
        Ok(NextHopRecord {
            face_id: required(face_id, nfd::FACE_ID)?,
            cost: required(cost, nfd::COST)?,
        })
    }
}

/// A FIB entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FibEntry {
    /// The prefix.
    pub name: Name,
    /// Its nexthops.
    pub next_hops: Vec<NextHopRecord>,
}

impl Tlv for FibEntry {
    const TYPE: u64 = nfd::FIB_ENTRY;

    fn encode_value(&self, out: &mut Vec<u8>) {
        put_name(out, &self.name);
        for nh in &self.next_hops {
            nh.write(out);
        }
    }

    fn decode_value(buf: &Bytes, el: &Element<'_>) -> Result<Self> {
        let mut name = None;
        let mut next_hops = Vec::new();
        walk_strict(
            el.children(),
            &[tlv_type::NAME, nfd::NEXT_HOP_RECORD],
            Some(nfd::NEXT_HOP_RECORD),
            |f| {
                match f.typ {
                    tlv_type::NAME => name = Some(Name::from_element(buf, f)?),
                    _ => next_hops.push(NextHopRecord::decode_value(buf, f)?),
                }
                Ok(())
            },
        )?;
        Ok(FibEntry {
            name: required(name, tlv_type::NAME)?,
            next_hops,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{decode_items, encode_items};
    use kite_packet::DecodeError;

    #[test]
    fn exact_bytes_and_round_trip() {
        let e = FibEntry {
            name: "/demo".parse().unwrap(),
            next_hops: vec![NextHopRecord {
                face_id: 271,
                cost: 10,
            }],
        };
        let want = [
            128, 17, 7, 6, 8, 4, b'd', b'e', b'm', b'o', 129, 7, 105, 2, 1, 15, 106, 1, 10,
        ];
        assert_eq!(e.encode(), want);
        let list = vec![
            e,
            FibEntry {
                name: Name::root(),
                next_hops: vec![],
            },
        ];
        let content = Bytes::from(encode_items(&list));
        assert_eq!(decode_items::<FibEntry>(&content).unwrap(), list);
    }

    #[test]
    fn malformed_entries_are_typed_errors() {
        // NextHopRecord before Name.
        let bad = Bytes::from_static(&[128, 10, 129, 6, 105, 1, 1, 106, 1, 0, 7, 0]);
        assert_eq!(
            FibEntry::decode(&bad),
            Err(DecodeError::OutOfOrder {
                typ: tlv_type::NAME
            })
        );
        // NextHopRecord without Cost.
        let no_cost = Bytes::from_static(&[128, 7, 7, 0, 129, 3, 105, 1, 1]);
        assert_eq!(
            FibEntry::decode(&no_cost),
            Err(DecodeError::Missing { typ: nfd::COST })
        );
        // A dataset item of the wrong type.
        assert!(decode_items::<FibEntry>(&Bytes::from_static(&[129, 0])).is_err());
    }
}
