//! CsInfo (`cs/info`): Content Store capacity, flags and counters.

use bytes::Bytes;
use kite_packet::tlv::Element;
use kite_packet::Result;

use crate::nfd;
use crate::wire::{put_nonneg, required, walk_strict, Tlv};

/// Field order of CsInfo.
const ORDER: [u64; 5] = [
    nfd::CAPACITY,
    nfd::FLAGS,
    nfd::N_CS_ENTRIES,
    nfd::N_HITS,
    nfd::N_MISSES,
];

/// Content Store information.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CsInfo {
    /// Capacity (packets).
    pub capacity: u64,
    /// Flags (CS flag bits: admit, serve).
    pub flags: u64,
    /// NCsEntries.
    pub n_cs_entries: u64,
    /// NHits.
    pub n_hits: u64,
    /// NMisses.
    pub n_misses: u64,
}

impl Tlv for CsInfo {
    const TYPE: u64 = nfd::CS_INFO;

    fn encode_value(&self, out: &mut Vec<u8>) {
        let values = [
            self.capacity,
            self.flags,
            self.n_cs_entries,
            self.n_hits,
            self.n_misses,
        ];
        for (typ, n) in ORDER.iter().zip(values) {
            put_nonneg(out, *typ, n);
        }
    }

    fn decode_value(_buf: &Bytes, el: &Element<'_>) -> Result<Self> {
        let mut n: [Option<u64>; 5] = [None; 5];
        walk_strict(el.children(), &ORDER, None, |f| {
            let i = ORDER.iter().position(|&x| x == f.typ).expect("walked");
            n[i] = Some(f.nonneg()?);
            Ok(())
        })?;
        Ok(CsInfo {
            capacity: required(n[0], ORDER[0])?,
            flags: required(n[1], ORDER[1])?,
            n_cs_entries: required(n[2], ORDER[2])?,
            n_hits: required(n[3], ORDER[3])?,
            n_misses: required(n[4], ORDER[4])?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kite_packet::DecodeError;

    #[test]
    fn exact_bytes_and_round_trip() {
        let c = CsInfo {
            capacity: 65536,
            flags: 3,
            n_cs_entries: 2,
            n_hits: 1,
            n_misses: 0,
        };
        let wire = c.encode();
        assert_eq!(
            wire,
            [128, 18, 131, 4, 0, 1, 0, 0, 108, 1, 3, 135, 1, 2, 129, 1, 1, 130, 1, 0]
        );
        assert_eq!(CsInfo::decode(&Bytes::from(wire)).unwrap(), c);
    }

    #[test]
    fn unknown_noncritical_is_skipped_and_critical_rejected() {
        let ok = Bytes::from_static(&[
            128, 17, 131, 1, 9, 108, 1, 0, 200, 0, 135, 1, 0, 129, 1, 0, 130, 1, 0,
        ]);
        assert_eq!(CsInfo::decode(&ok).unwrap().capacity, 9);
        let bad = Bytes::from_static(&[
            128, 17, 131, 1, 9, 108, 1, 0, 201, 0, 135, 1, 0, 129, 1, 0, 130, 1, 0,
        ]);
        assert_eq!(
            CsInfo::decode(&bad),
            Err(DecodeError::UnknownCritical { typ: 201 })
        );
    }
}
