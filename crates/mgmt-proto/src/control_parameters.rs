//! ControlParameters (TLV-TYPE 104): the arguments of a control command and the body of its
//! response.
//!
//! Encoding writes the fields in NFD's order (`tlv-nfd.hpp` numbering order as ndn-cxx writes
//! it). Decoding follows ndn-cxx: fields in any order, the first of a repeated type wins,
//! unrecognized types are ignored; a recognized field with a malformed value is an error.

use bytes::Bytes;
use kite_packet::tlv::Element;
use kite_packet::{Name, Result};

use crate::nfd::{self as t, FacePersistency, RouteOrigin};
use crate::wire::{
    nested_name, put_name, put_nested, put_nonneg, put_opt_nonneg, put_str, string, walk_lenient,
    Tlv,
};

/// ControlParameters; every field is optional on the wire.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ControlParameters {
    /// Name (a prefix).
    pub name: Option<Name>,
    /// FaceId.
    pub face_id: Option<u64>,
    /// Uri (remote FaceUri).
    pub uri: Option<String>,
    /// LocalUri.
    pub local_uri: Option<String>,
    /// Origin.
    pub origin: Option<RouteOrigin>,
    /// Cost.
    pub cost: Option<u64>,
    /// Capacity (CS).
    pub capacity: Option<u64>,
    /// Count (cs/erase).
    pub count: Option<u64>,
    /// Flags (face, CS or route flags depending on the command).
    pub flags: Option<u64>,
    /// Mask: which bits of Flags the command sets.
    pub mask: Option<u64>,
    /// Strategy instance name.
    pub strategy: Option<Name>,
    /// ExpirationPeriod in milliseconds.
    pub expiration_period: Option<u64>,
    /// FacePersistency.
    pub face_persistency: Option<FacePersistency>,
    /// BaseCongestionMarkingInterval in nanoseconds.
    pub base_congestion_marking_interval: Option<u64>,
    /// DefaultCongestionThreshold in bytes.
    pub default_congestion_threshold: Option<u64>,
    /// Mtu.
    pub mtu: Option<u64>,
}

impl ControlParameters {
    /// Decodes the ControlParameters element held in a name component's value (a copy is made,
    /// so the decoded names do not borrow the Interest).
    pub fn from_component_value(value: &[u8]) -> Result<Self> {
        Self::decode(&Bytes::copy_from_slice(value))
    }

    /// What the command says about flag bit `bit`: `Some(value)` when Mask selects it.
    pub fn flag_bit(&self, bit: u32) -> Option<bool> {
        let m = 1u64.checked_shl(bit)?;
        (self.mask? & m != 0).then(|| self.flags.unwrap_or(0) & m != 0)
    }

    /// Sets flag bit `bit` to `value` and selects it in Mask, as a client does.
    pub fn set_flag_bit(&mut self, bit: u32, value: bool) {
        let m = 1u64 << bit;
        let flags = self.flags.unwrap_or(0);
        self.flags = Some(if value { flags | m } else { flags & !m });
        self.mask = Some(self.mask.unwrap_or(0) | m);
    }

    /// The TLV-TYPEs of the fields present, in encoding order (what per-command validation
    /// checks against the allowed set).
    pub fn present_fields(&self) -> Vec<u64> {
        let present = [
            (self.name.is_some(), kite_packet::tlv_type::NAME),
            (self.face_id.is_some(), t::FACE_ID),
            (self.uri.is_some(), t::URI),
            (self.local_uri.is_some(), t::LOCAL_URI),
            (self.origin.is_some(), t::ORIGIN),
            (self.cost.is_some(), t::COST),
            (self.capacity.is_some(), t::CAPACITY),
            (self.count.is_some(), t::COUNT),
            (self.flags.is_some(), t::FLAGS),
            (self.mask.is_some(), t::MASK),
            (self.strategy.is_some(), t::STRATEGY),
            (self.expiration_period.is_some(), t::EXPIRATION_PERIOD),
            (self.face_persistency.is_some(), t::FACE_PERSISTENCY),
            (
                self.base_congestion_marking_interval.is_some(),
                t::BASE_CONGESTION_MARKING_INTERVAL,
            ),
            (
                self.default_congestion_threshold.is_some(),
                t::DEFAULT_CONGESTION_THRESHOLD,
            ),
            (self.mtu.is_some(), t::MTU),
        ];
        present
            .into_iter()
            .filter_map(|(p, typ)| p.then_some(typ))
            .collect()
    }
}

impl Tlv for ControlParameters {
    const TYPE: u64 = t::CONTROL_PARAMETERS;

    fn encode_value(&self, out: &mut Vec<u8>) {
        if let Some(n) = &self.name {
            put_name(out, n);
        }
        put_opt_nonneg(out, t::FACE_ID, self.face_id);
        if let Some(u) = &self.uri {
            put_str(out, t::URI, u);
        }
        if let Some(u) = &self.local_uri {
            put_str(out, t::LOCAL_URI, u);
        }
        put_opt_nonneg(out, t::ORIGIN, self.origin.map(|o| o.0));
        put_opt_nonneg(out, t::COST, self.cost);
        put_opt_nonneg(out, t::CAPACITY, self.capacity);
        put_opt_nonneg(out, t::COUNT, self.count);
        put_opt_nonneg(out, t::FLAGS, self.flags);
        put_opt_nonneg(out, t::MASK, self.mask);
        if let Some(s) = &self.strategy {
            put_nested(out, t::STRATEGY, |v| put_name(v, s));
        }
        put_opt_nonneg(out, t::EXPIRATION_PERIOD, self.expiration_period);
        if let Some(p) = self.face_persistency {
            put_nonneg(out, t::FACE_PERSISTENCY, p.0);
        }
        put_opt_nonneg(
            out,
            t::BASE_CONGESTION_MARKING_INTERVAL,
            self.base_congestion_marking_interval,
        );
        put_opt_nonneg(
            out,
            t::DEFAULT_CONGESTION_THRESHOLD,
            self.default_congestion_threshold,
        );
        put_opt_nonneg(out, t::MTU, self.mtu);
    }

    fn decode_value(buf: &Bytes, el: &Element<'_>) -> Result<Self> {
        let mut p = ControlParameters::default();
        walk_lenient(el, |f| {
            match f.typ {
                kite_packet::tlv_type::NAME => p.name = Some(Name::from_element(buf, f)?),
                t::FACE_ID => p.face_id = Some(f.nonneg()?),
                t::URI => p.uri = Some(string(f)?),
                t::LOCAL_URI => p.local_uri = Some(string(f)?),
                t::ORIGIN => p.origin = Some(RouteOrigin(f.nonneg()?)),
                t::COST => p.cost = Some(f.nonneg()?),
                t::CAPACITY => p.capacity = Some(f.nonneg()?),
                t::COUNT => p.count = Some(f.nonneg()?),
                t::FLAGS => p.flags = Some(f.nonneg()?),
                t::MASK => p.mask = Some(f.nonneg()?),
                t::STRATEGY => p.strategy = Some(nested_name(buf, f)?),
                t::EXPIRATION_PERIOD => p.expiration_period = Some(f.nonneg()?),
                t::FACE_PERSISTENCY => p.face_persistency = Some(FacePersistency(f.nonneg()?)),
                t::BASE_CONGESTION_MARKING_INTERVAL => {
                    p.base_congestion_marking_interval = Some(f.nonneg()?)
                }
                t::DEFAULT_CONGESTION_THRESHOLD => {
                    p.default_congestion_threshold = Some(f.nonneg()?)
                }
                t::MTU => p.mtu = Some(f.nonneg()?),
                _ => {}
            }
            Ok(())
        })?;
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kite_packet::DecodeError;

    fn full() -> ControlParameters {
        ControlParameters {
            name: Some("/a/b".parse().unwrap()),
            face_id: Some(300),
            uri: Some("udp4://192.0.2.1:6363".into()),
            local_uri: Some("udp4://192.0.2.2:6363".into()),
            origin: Some(RouteOrigin::NLSR),
            cost: Some(10),
            capacity: Some(65536),
            count: Some(3),
            flags: Some(1),
            mask: Some(1),
            strategy: Some("/localhost/nfd/strategy/best-route/v=5".parse().unwrap()),
            expiration_period: Some(3_600_000),
            face_persistency: Some(FacePersistency::PERMANENT),
            base_congestion_marking_interval: Some(100_000_000),
            default_congestion_threshold: Some(65536),
            mtu: Some(8800),
        }
    }

    #[test]
    fn every_field_round_trips_in_nfd_order() {
        let p = full();
        let wire = Bytes::from(p.encode());
        assert_eq!(ControlParameters::decode(&wire).unwrap(), p);
        let el = kite_packet::tlv::read_single(&wire).unwrap();
        let mut types = Vec::new();
        let mut r = el.children();
        while let Some(c) = r.next_element() {
            types.push(c.unwrap().typ);
        }
        assert_eq!(types, p.present_fields());
        assert_eq!(
            types,
            [7, 105, 114, 129, 111, 106, 131, 132, 108, 112, 107, 109, 133, 135, 136, 137]
        );
    }

    #[test]
    fn exact_bytes_of_a_register_request() {
        // rib/register Name=/a FaceId=300 Origin=255 Cost=0 Flags=1, hand-assembled.
        let p = ControlParameters {
            name: Some("/a".parse().unwrap()),
            face_id: Some(300),
            origin: Some(RouteOrigin::STATIC),
            cost: Some(0),
            flags: Some(1),
            ..Default::default()
        };
        assert_eq!(
            p.encode(),
            vec![104, 18, 7, 3, 8, 1, b'a', 105, 2, 0x01, 0x2C, 111, 1, 255, 106, 1, 0, 108, 1, 1]
        );
    }

    #[test]
    fn decoding_accepts_any_order_ignores_unknown_and_keeps_the_first() {
        // Cost, then an unknown critical type 201, then Name, then a second Cost.
        let wire =
            Bytes::from_static(&[104, 14, 106, 1, 5, 201, 1, 0, 7, 3, 8, 1, b'x', 106, 1, 9]);
        let p = ControlParameters::decode(&wire).unwrap();
        assert_eq!(p.cost, Some(5));
        assert_eq!(p.name, Some("/x".parse().unwrap()));
    }

    #[test]
    fn malformed_inputs_are_typed_errors() {
        // FaceId of 3 octets.
        let bad_int = Bytes::from_static(&[104, 5, 105, 3, 0, 0, 1]);
        assert_eq!(
            ControlParameters::decode(&bad_int),
            Err(DecodeError::InvalidNonNegInt { typ: 105, len: 3 })
        );
        let bad_utf8 = Bytes::from_static(&[104, 3, 114, 1, 0xFF]);
        assert!(matches!(
            ControlParameters::decode(&bad_utf8),
            Err(DecodeError::InvalidValue { typ: 114, .. })
        ));
        let wrong_outer = Bytes::from_static(&[105, 0]);
        assert!(matches!(
            ControlParameters::decode(&wrong_outer),
            Err(DecodeError::UnexpectedType { .. })
        ));
        let truncated = Bytes::from_static(&[104, 4, 105, 2, 1]);
        assert!(ControlParameters::decode(&truncated).is_err());
        let strategy_without_name = Bytes::from_static(&[104, 2, 107, 0]);
        assert_eq!(
            ControlParameters::decode(&strategy_without_name),
            Err(DecodeError::Missing { typ: 7 })
        );
    }

    #[test]
    fn flag_bits_follow_the_mask() {
        let mut p = ControlParameters::default();
        assert_eq!(p.flag_bit(0), None);
        p.set_flag_bit(0, true);
        p.set_flag_bit(2, false);
        assert_eq!((p.flags, p.mask), (Some(1), Some(5)));
        assert_eq!(p.flag_bit(0), Some(true));
        assert_eq!(p.flag_bit(2), Some(false));
        assert_eq!(p.flag_bit(1), None);
        assert_eq!(p.flag_bit(64), None);
    }
}
