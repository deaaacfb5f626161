//! RibEntry (`rib/list` items): a prefix and its routes.

use bytes::Bytes;
use kite_packet::tlv::Element;
use kite_packet::{tlv_type, Name, Result};

use crate::nfd::{self as t, RouteOrigin};
use crate::wire::{put_name, put_nonneg, put_opt_nonneg, required, walk_strict, Tlv};

/// Field order of Route.
const ROUTE_ORDER: [u64; 5] = [
    t::FACE_ID,
    t::ORIGIN,
    t::COST,
    t::FLAGS,
    t::EXPIRATION_PERIOD,
];

/// One route of a RIB entry.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Route {
    /// FaceId.
    pub face_id: u64,
    /// Origin.
    pub origin: RouteOrigin,
    /// Cost.
    pub cost: u64,
    /// Flags (route flags).
    pub flags: u64,
    /// Milliseconds until the route expires; absent when it never does.
    pub expiration_period: Option<u64>,
}

impl Tlv for Route {
    const TYPE: u64 = t::ROUTE;

    fn encode_value(&self, out: &mut Vec<u8>) {
        put_nonneg(out, t::FACE_ID, self.face_id);
        put_nonneg(out, t::ORIGIN, self.origin.0);
        put_nonneg(out, t::COST, self.cost);
        put_nonneg(out, t::FLAGS, self.flags);
        put_opt_nonneg(out, t::EXPIRATION_PERIOD, self.expiration_period);
    }

    fn decode_value(_buf: &Bytes, el: &Element<'_>) -> Result<Self> {
        let mut n: [Option<u64>; 5] = [None; 5];
        walk_strict(el.children(), &ROUTE_ORDER, None, |f| {
            let i = ROUTE_ORDER
                .iter()
                .position(|&x| x == f.typ)
                .expect("walked");
            n[i] = Some(f.nonneg()?);
            Ok(())
        })?;
        Ok(Route {
            face_id: required(n[0], t::FACE_ID)?,
            origin: RouteOrigin(required(n[1], t::ORIGIN)?),
            cost: required(n[2], t::COST)?,
            flags: required(n[3], t::FLAGS)?,
            expiration_period: n[4],
        })
    }
}

/// A RIB entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RibEntry {
    /// The prefix.
    pub name: Name,
    /// Its routes.
    pub routes: Vec<Route>,
}

impl Tlv for RibEntry {
    const TYPE: u64 = t::RIB_ENTRY;

    fn encode_value(&self, out: &mut Vec<u8>) {
        put_name(out, &self.name);
        for r in &self.routes {
            r.write(out);
        }
    }

    fn decode_value(buf: &Bytes, el: &Element<'_>) -> Result<Self> {
        let mut name = None;
        let mut routes = Vec::new();
        walk_strict(
            el.children(),
            &[tlv_type::NAME, t::ROUTE],
            Some(t::ROUTE),
            |f| {
                match f.typ {
                    tlv_type::NAME => name = Some(Name::from_element(buf, f)?),
                    _ => routes.push(Route::decode_value(buf, f)?),
                }
                Ok(())
            },
        )?;
        Ok(RibEntry {
            name: required(name, tlv_type::NAME)?,
            routes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{decode_items, encode_items};
    use kite_packet::DecodeError;

    #[test]
    fn round_trips_with_and_without_expiration() {
        let e = RibEntry {
            name: "/demo".parse().unwrap(),
            routes: vec![
                Route {
                    face_id: 271,
                    origin: RouteOrigin::STATIC,
                    cost: 10,
                    flags: 1,
                    expiration_period: None,
                },
                Route {
                    face_id: 300,
                    origin: RouteOrigin::NLSR,
                    cost: 25,
                    flags: 3,
                    expiration_period: Some(3_599_000),
                },
            ],
        };
        let content = Bytes::from(encode_items(std::slice::from_ref(&e)));
        assert_eq!(decode_items::<RibEntry>(&content).unwrap(), vec![e]);
    }

    #[test]
    fn exact_route_bytes() {
        let r = Route {
            face_id: 1,
            origin: RouteOrigin::APP,
            cost: 0,
            flags: 1,
            expiration_period: None,
        };
        assert_eq!(
            r.encode(),
            [129, 12, 105, 1, 1, 111, 1, 0, 106, 1, 0, 108, 1, 1]
        );
    }

    #[test]
    fn route_missing_flags_is_an_error() {
        let bad = Bytes::from_static(&[129, 9, 105, 1, 1, 111, 1, 0, 106, 1, 0]);
        assert_eq!(
            Route::decode(&bad),
            Err(DecodeError::Missing { typ: t::FLAGS })
        );
    }
}
