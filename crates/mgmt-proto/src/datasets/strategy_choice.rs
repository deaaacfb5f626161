//! StrategyChoice (`strategy-choice/list` items): a prefix and its strategy instance; and
//! Strategy (`kite-strategy/list` items, Kite's own dataset): a strategy the forwarder can
//! run, built in or loaded.

use bytes::Bytes;
use kite_packet::tlv::Element;
use kite_packet::{tlv_type, Name, Result};

use crate::nfd;
use crate::wire::{nested_name, put_name, put_nested, required, walk_strict, Tlv};

/// One strategy choice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StrategyChoice {
    /// The prefix.
    pub name: Name,
    /// The strategy instance name, e.g. `/localhost/nfd/strategy/best-route/v=5`.
    pub strategy: Name,
}

impl Tlv for StrategyChoice {
    const TYPE: u64 = nfd::STRATEGY_CHOICE;

    fn encode_value(&self, out: &mut Vec<u8>) {
        put_name(out, &self.name);
        put_nested(out, nfd::STRATEGY, |v| put_name(v, &self.strategy));
    }

    fn decode_value(buf: &Bytes, el: &Element<'_>) -> Result<Self> {
        let (mut name, mut strategy) = (None, None);
        walk_strict(el.children(), &[tlv_type::NAME, nfd::STRATEGY], None, |f| {
            match f.typ {
                tlv_type::NAME => name = Some(Name::from_element(buf, f)?),
                _ => strategy = Some(nested_name(buf, f)?),
            }
            Ok(())
        })?;
        Ok(StrategyChoice {
            name: required(name, tlv_type::NAME)?,
            strategy: required(strategy, nfd::STRATEGY)?,
        })
    }
}

/// One strategy the forwarder offers: its versioned name, in NFD's Strategy element.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AvailableStrategy {
    /// The strategy name, e.g. `/localhost/nfd/strategy/asf/v=5`.
    pub name: Name,
}

impl Tlv for AvailableStrategy {
    const TYPE: u64 = nfd::STRATEGY;

    fn encode_value(&self, out: &mut Vec<u8>) {
        put_name(out, &self.name);
    }

    fn decode_value(buf: &Bytes, el: &Element<'_>) -> Result<Self> {
        let mut name = None;
        walk_strict(el.children(), &[tlv_type::NAME], None, |f| {
            name = Some(Name::from_element(buf, f)?);
            Ok(())
        })?;
        Ok(AvailableStrategy {
            name: required(name, tlv_type::NAME)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kite_packet::DecodeError;

    #[test]
    fn exact_bytes_and_round_trip() {
        let s = StrategyChoice {
            name: Name::root(),
            strategy: "/s".parse().unwrap(),
        };
        let wire = s.encode();
        assert_eq!(wire, [128, 9, 7, 0, 107, 5, 7, 3, 8, 1, b's']);
        assert_eq!(StrategyChoice::decode(&Bytes::from(wire)).unwrap(), s);
    }

    #[test]
    fn available_strategy_round_trips() {
        let s = AvailableStrategy {
            name: "/s".parse().unwrap(),
        };
        let wire = s.encode();
        assert_eq!(wire, [107, 5, 7, 3, 8, 1, b's']);
        assert_eq!(AvailableStrategy::decode(&Bytes::from(wire)).unwrap(), s);
    }

    #[test]
    fn missing_strategy_is_an_error() {
        assert_eq!(
            StrategyChoice::decode(&Bytes::from_static(&[128, 2, 7, 0])),
            Err(DecodeError::Missing { typ: nfd::STRATEGY })
        );
    }
}
