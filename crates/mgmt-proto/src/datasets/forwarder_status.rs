//! ForwarderStatus (`status/general`): the Content holds the fields themselves, with no outer
//! element.

use bytes::Bytes;
use kite_packet::tlv::Reader;
use kite_packet::Result;

use crate::nfd;
use crate::wire::{put_nonneg, put_str, required, string, walk_strict};

/// Field order of ForwarderStatus.
const ORDER: [u64; 16] = [
    nfd::NFD_VERSION,
    nfd::START_TIMESTAMP,
    nfd::CURRENT_TIMESTAMP,
    nfd::N_NAME_TREE_ENTRIES,
    nfd::N_FIB_ENTRIES,
    nfd::N_PIT_ENTRIES,
    nfd::N_MEASUREMENTS_ENTRIES,
    nfd::N_CS_ENTRIES,
    nfd::N_IN_INTERESTS,
    nfd::N_IN_DATA,
    nfd::N_IN_NACKS,
    nfd::N_OUT_INTERESTS,
    nfd::N_OUT_DATA,
    nfd::N_OUT_NACKS,
    nfd::N_SATISFIED_INTERESTS,
    nfd::N_UNSATISFIED_INTERESTS,
];

/// General status of the forwarder.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ForwarderStatus {
    /// NfdVersion (free text).
    pub nfd_version: String,
    /// StartTimestamp, ms since the Unix epoch.
    pub start_timestamp: u64,
    /// CurrentTimestamp, ms since the Unix epoch.
    pub current_timestamp: u64,
    /// NNameTreeEntries.
    pub n_name_tree_entries: u64,
    /// NFibEntries.
    pub n_fib_entries: u64,
    /// NPitEntries.
    pub n_pit_entries: u64,
    /// NMeasurementsEntries.
    pub n_measurements_entries: u64,
    /// NCsEntries.
    pub n_cs_entries: u64,
    /// NInInterests.
    pub n_in_interests: u64,
    /// NInData.
    pub n_in_data: u64,
    /// NInNacks.
    pub n_in_nacks: u64,
    /// NOutInterests.
    pub n_out_interests: u64,
    /// NOutData.
    pub n_out_data: u64,
    /// NOutNacks.
    pub n_out_nacks: u64,
    /// NSatisfiedInterests.
    pub n_satisfied_interests: u64,
    /// NUnsatisfiedInterests.
    pub n_unsatisfied_interests: u64,
}

impl ForwarderStatus {
    /// The dataset payload.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        put_str(&mut out, nfd::NFD_VERSION, &self.nfd_version);
        for (typ, n) in ORDER[1..].iter().zip(self.counters()) {
            put_nonneg(&mut out, *typ, n);
        }
        out
    }

    /// Decodes a dataset payload.
    pub fn decode(content: &Bytes) -> Result<Self> {
        let mut version = None;
        let mut numbers: [Option<u64>; 15] = [None; 15];
        walk_strict(Reader::new(content), &ORDER, None, |f| {
            if f.typ == nfd::NFD_VERSION {
                version = Some(string(f)?);
            } else if let Some(i) = ORDER[1..].iter().position(|&x| x == f.typ) {
                numbers[i] = Some(f.nonneg()?);
            }
            Ok(())
        })?;
        let mut n = [0u64; 15];
        for (i, slot) in n.iter_mut().enumerate() {
            *slot = required(numbers[i], ORDER[i + 1])?;
        }
        Ok(ForwarderStatus {
            nfd_version: required(version, nfd::NFD_VERSION)?,
            start_timestamp: n[0],
            current_timestamp: n[1],
            n_name_tree_entries: n[2],
            n_fib_entries: n[3],
            n_pit_entries: n[4],
            n_measurements_entries: n[5],
            n_cs_entries: n[6],
            n_in_interests: n[7],
            n_in_data: n[8],
            n_in_nacks: n[9],
            n_out_interests: n[10],
            n_out_data: n[11],
            n_out_nacks: n[12],
            n_satisfied_interests: n[13],
            n_unsatisfied_interests: n[14],
        })
    }

    /// The numeric fields in encoding order.
    fn counters(&self) -> [u64; 15] {
        [
            self.start_timestamp,
            self.current_timestamp,
            self.n_name_tree_entries,
            self.n_fib_entries,
            self.n_pit_entries,
            self.n_measurements_entries,
            self.n_cs_entries,
            self.n_in_interests,
            self.n_in_data,
            self.n_in_nacks,
            self.n_out_interests,
            self.n_out_data,
            self.n_out_nacks,
            self.n_satisfied_interests,
            self.n_unsatisfied_interests,
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kite_packet::DecodeError;

    fn sample() -> ForwarderStatus {
        ForwarderStatus {
            nfd_version: "kite 0.1.0".into(),
            start_timestamp: 1_795_345_271_538,
            current_timestamp: 1_795_345_281_538,
            n_name_tree_entries: 9,
            n_fib_entries: 3,
            n_pit_entries: 1,
            n_measurements_entries: 0,
            n_cs_entries: 42,
            n_in_interests: 100,
            n_in_data: 90,
            n_in_nacks: 2,
            n_out_interests: 95,
            n_out_data: 88,
            n_out_nacks: 1,
            n_satisfied_interests: 80,
            n_unsatisfied_interests: 5,
        }
    }

    #[test]
    fn round_trips_with_fields_in_nfd_order() {
        let s = sample();
        let wire = Bytes::from(s.encode());
        assert_eq!(ForwarderStatus::decode(&wire).unwrap(), s);
        let mut r = Reader::new(&wire);
        let mut types = Vec::new();
        while let Some(el) = r.next_element() {
            types.push(el.unwrap().typ);
        }
        assert_eq!(types, ORDER);
        assert_eq!(&wire[..12], b"\x80\x0akite 0.1.0");
    }

    #[test]
    fn missing_or_misordered_fields_are_errors() {
        let wire = Bytes::from(sample().encode());
        // Drop NfdVersion.
        let without_version = wire.slice(12..);
        assert_eq!(
            ForwarderStatus::decode(&without_version),
            Err(DecodeError::Missing {
                typ: nfd::NFD_VERSION
            })
        );
        // StartTimestamp after CurrentTimestamp.
        let mut swapped = Vec::new();
        put_str(&mut swapped, nfd::NFD_VERSION, "x");
        put_nonneg(&mut swapped, nfd::CURRENT_TIMESTAMP, 2);
        put_nonneg(&mut swapped, nfd::START_TIMESTAMP, 1);
        assert_eq!(
            ForwarderStatus::decode(&Bytes::from(swapped)),
            Err(DecodeError::OutOfOrder {
                typ: nfd::START_TIMESTAMP
            })
        );
    }
}
