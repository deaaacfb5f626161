//! FaceStatus (`faces/list`, `faces/query` items) and FaceQueryFilter (the `faces/query`
//! argument).

use bytes::Bytes;
use kite_packet::tlv::Element;
use kite_packet::Result;

use crate::nfd::{self as t, FacePersistency, FaceScope, FaceState, LinkType};
use crate::wire::{put_nonneg, put_opt_nonneg, put_str, required, string, walk_strict, Tlv};
use kite_link::FaceCounters;

/// NFD's FaceStatus fields before its counters, in NFD's order.
const HEAD: [u64; 10] = [
    t::FACE_ID,
    t::URI,
    t::LOCAL_URI,
    t::EXPIRATION_PERIOD,
    t::FACE_SCOPE,
    t::FACE_PERSISTENCY,
    t::LINK_TYPE,
    t::BASE_CONGESTION_MARKING_INTERVAL,
    t::DEFAULT_CONGESTION_THRESHOLD,
    t::MTU,
];

/// The lowest of Kite's TLV-TYPEs: Kite's fields follow NFD's.
const KITE_FIRST: u64 = t::KITE_N_IN_MALFORMED;

/// Field order of FaceStatus: NFD's fields (its counters, then Flags), then Kite's extension
/// (the drop and LpReliability counters and the link state) in ascending TLV-TYPE.
const ORDER: [u64; HEAD.len() + FaceCounters::TYPES.len() + 2] = order();

const fn order() -> [u64; HEAD.len() + FaceCounters::TYPES.len() + 2] {
    let mut o = [0; HEAD.len() + FaceCounters::TYPES.len() + 2];
    let mut n = 0;
    while n < HEAD.len() {
        o[n] = HEAD[n];
        n += 1;
    }
    let c = FaceCounters::TYPES;
    let mut i = 0;
    while i < c.len() && c[i] < KITE_FIRST {
        o[n] = c[i];
        (n, i) = (n + 1, i + 1);
    }
    o[n] = t::FLAGS;
    n += 1;
    while i < c.len() && c[i] < t::KITE_FACE_STATE {
        o[n] = c[i];
        (n, i) = (n + 1, i + 1);
    }
    o[n] = t::KITE_FACE_STATE;
    n += 1;
    while i < c.len() {
        o[n] = c[i];
        (n, i) = (n + 1, i + 1);
    }
    o
}

/// One face's status.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FaceStatus {
    /// FaceId.
    pub face_id: u64,
    /// Uri (remote FaceUri).
    pub uri: String,
    /// LocalUri.
    pub local_uri: String,
    /// ExpirationPeriod in ms (on-demand faces that will time out).
    pub expiration_period: Option<u64>,
    /// FaceScope.
    pub face_scope: FaceScope,
    /// FacePersistency.
    pub face_persistency: FacePersistency,
    /// LinkType.
    pub link_type: LinkType,
    /// BaseCongestionMarkingInterval in ns.
    pub base_congestion_marking_interval: Option<u64>,
    /// DefaultCongestionThreshold in bytes.
    pub default_congestion_threshold: Option<u64>,
    /// Mtu.
    pub mtu: Option<u64>,
    /// NFD's counters and Kite's (drops, LpReliability).
    pub counters: FaceCounters,
    /// Flags (face flag bits).
    pub flags: u64,
    /// Link state (Kite's extension; `None` from NFD).
    pub state: Option<FaceState>,
}

impl Tlv for FaceStatus {
    const TYPE: u64 = t::FACE_STATUS;

    fn encode_value(&self, out: &mut Vec<u8>) {
        put_nonneg(out, t::FACE_ID, self.face_id);
        put_str(out, t::URI, &self.uri);
        put_str(out, t::LOCAL_URI, &self.local_uri);
        put_opt_nonneg(out, t::EXPIRATION_PERIOD, self.expiration_period);
        put_nonneg(out, t::FACE_SCOPE, self.face_scope.0);
        put_nonneg(out, t::FACE_PERSISTENCY, self.face_persistency.0);
        put_nonneg(out, t::LINK_TYPE, self.link_type.0);
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
        for &typ in &ORDER[HEAD.len()..] {
            match typ {
                t::FLAGS => put_nonneg(out, typ, self.flags),
                t::KITE_FACE_STATE => put_opt_nonneg(out, typ, self.state.map(|s| s.0)),
                _ => put_nonneg(out, typ, self.counters.get(typ).expect("a counter")),
            }
        }
    }

    fn decode_value(_buf: &Bytes, el: &Element<'_>) -> Result<Self> {
        let (mut uri, mut local_uri) = (None, None);
        let mut numbers = [None; ORDER.len()];
        walk_strict(el.children(), &ORDER, None, |f| {
            match f.typ {
                t::URI => uri = Some(string(f)?),
                t::LOCAL_URI => local_uri = Some(string(f)?),
                typ => {
                    let i = ORDER.iter().position(|&x| x == typ).expect("walked types");
                    numbers[i] = Some(f.nonneg()?);
                }
            }
            Ok(())
        })?;
        let need = |i: usize| required(numbers[i], ORDER[i]);
        // Required fields are checked in field order, so the first missing one is reported.
        let face_id = need(0)?;
        let uri = required(uri, t::URI)?;
        let local_uri = required(local_uri, t::LOCAL_URI)?;
        let (face_scope, face_persistency, link_type) = (need(4)?, need(5)?, need(6)?);
        let mut counters = FaceCounters::default();
        let mut flags = 0;
        for (i, &typ) in ORDER.iter().enumerate().skip(HEAD.len()) {
            // NFD's fields are required; Kite's are zero when absent, as from NFD.
            let n = if typ < KITE_FIRST {
                need(i)?
            } else {
                numbers[i].unwrap_or(0)
            };
            match counters.get_mut(typ) {
                Some(c) => *c = n,
                None if typ == t::FLAGS => flags = n,
                None => {}
            }
        }
        Ok(FaceStatus {
            face_id,
            uri,
            local_uri,
            expiration_period: numbers[3],
            face_scope: FaceScope(face_scope),
            face_persistency: FacePersistency(face_persistency),
            link_type: LinkType(link_type),
            base_congestion_marking_interval: numbers[7],
            default_congestion_threshold: numbers[8],
            mtu: numbers[9],
            counters,
            flags,
            state: ORDER
                .iter()
                .position(|&x| x == t::KITE_FACE_STATE)
                .and_then(|i| numbers[i])
                .map(FaceState),
        })
    }
}

/// Field order of FaceQueryFilter.
const FILTER_ORDER: [u64; 7] = [
    t::FACE_ID,
    t::URI_SCHEME,
    t::URI,
    t::LOCAL_URI,
    t::FACE_SCOPE,
    t::FACE_PERSISTENCY,
    t::LINK_TYPE,
];

/// Which faces a `faces/query` asks for: every present field must match.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FaceQueryFilter {
    /// FaceId.
    pub face_id: Option<u64>,
    /// UriScheme: matches the scheme of either the remote or the local URI.
    pub uri_scheme: Option<String>,
    /// Uri (remote).
    pub uri: Option<String>,
    /// LocalUri.
    pub local_uri: Option<String>,
    /// FaceScope.
    pub face_scope: Option<FaceScope>,
    /// FacePersistency.
    pub face_persistency: Option<FacePersistency>,
    /// LinkType.
    pub link_type: Option<LinkType>,
}

impl FaceQueryFilter {
    /// Whether `face` passes the filter (the rule of NFD's face manager).
    pub fn matches(&self, face: &FaceStatus) -> bool {
        fn scheme(uri: &str) -> &str {
            uri.split_once("://").map_or(uri, |(s, _)| s)
        }
        self.face_id.is_none_or(|id| id == face.face_id)
            && self
                .uri_scheme
                .as_deref()
                .is_none_or(|s| s == scheme(&face.uri) || s == scheme(&face.local_uri))
            && self.uri.as_deref().is_none_or(|u| u == face.uri)
            && self
                .local_uri
                .as_deref()
                .is_none_or(|u| u == face.local_uri)
            && self.face_scope.is_none_or(|s| s == face.face_scope)
            && self
                .face_persistency
                .is_none_or(|p| p == face.face_persistency)
            && self.link_type.is_none_or(|l| l == face.link_type)
    }
}

impl Tlv for FaceQueryFilter {
    const TYPE: u64 = t::FACE_QUERY_FILTER;

    fn encode_value(&self, out: &mut Vec<u8>) {
        put_opt_nonneg(out, t::FACE_ID, self.face_id);
        if let Some(s) = &self.uri_scheme {
            put_str(out, t::URI_SCHEME, s);
        }
        if let Some(s) = &self.uri {
            put_str(out, t::URI, s);
        }
        if let Some(s) = &self.local_uri {
            put_str(out, t::LOCAL_URI, s);
        }
        put_opt_nonneg(out, t::FACE_SCOPE, self.face_scope.map(|x| x.0));
        put_opt_nonneg(out, t::FACE_PERSISTENCY, self.face_persistency.map(|x| x.0));
        put_opt_nonneg(out, t::LINK_TYPE, self.link_type.map(|x| x.0));
    }

    fn decode_value(_buf: &Bytes, el: &Element<'_>) -> Result<Self> {
        let mut f = FaceQueryFilter::default();
        walk_strict(el.children(), &FILTER_ORDER, None, |e| {
            match e.typ {
                t::FACE_ID => f.face_id = Some(e.nonneg()?),
                t::URI_SCHEME => f.uri_scheme = Some(string(e)?),
                t::URI => f.uri = Some(string(e)?),
                t::LOCAL_URI => f.local_uri = Some(string(e)?),
                t::FACE_SCOPE => f.face_scope = Some(FaceScope(e.nonneg()?)),
                t::FACE_PERSISTENCY => f.face_persistency = Some(FacePersistency(e.nonneg()?)),
                _ => f.link_type = Some(LinkType(e.nonneg()?)),
            }
            Ok(())
        })?;
        Ok(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kite_packet::DecodeError;

    pub(crate) fn sample() -> FaceStatus {
        FaceStatus {
            face_id: 256,
            uri: "fd://19".into(),
            local_uri: "unix:///run/nfd/nfd.sock".into(),
            expiration_period: None,
            face_scope: FaceScope::LOCAL,
            face_persistency: FacePersistency::ON_DEMAND,
            link_type: LinkType::POINT_TO_POINT,
            base_congestion_marking_interval: Some(100_000_000),
            default_congestion_threshold: Some(65536),
            mtu: Some(8800),
            counters: FaceCounters {
                n_in_interests: 7,
                n_out_data: 6,
                n_in_bytes: 734,
                n_out_bytes: 1536,
                n_in_malformed: 3,
                n_out_queue_full: 1,
                n_out_link_down: 2,
                n_in_too_large: 4,
                n_lp_retransmitted: 9,
                n_lp_duplicates: 1,
                ..Default::default()
            },
            flags: 5,
            state: Some(FaceState::DOWN),
        }
    }

    #[test]
    fn round_trips_with_and_without_optional_fields() {
        let full = sample();
        let minimal = FaceStatus {
            base_congestion_marking_interval: None,
            default_congestion_threshold: None,
            mtu: None,
            expiration_period: Some(599_000),
            state: None,
            ..sample()
        };
        for s in [full, minimal] {
            let wire = Bytes::from(s.encode());
            assert_eq!(FaceStatus::decode(&wire).unwrap(), s);
        }
    }

    #[test]
    fn drop_counters_follow_flags_as_non_critical_elements() {
        let s = sample();
        let wire = Bytes::from(s.encode());
        let el = kite_packet::tlv::read_single_of(&wire, t::FACE_STATUS).unwrap();
        let mut children = el.children();
        let mut fields = Vec::new();
        while let Some(c) = children.next_element() {
            fields.push(c.unwrap());
        }
        let flags_at = fields.iter().position(|f| f.typ == t::FLAGS).unwrap();
        let after: Vec<u64> = fields[flags_at + 1..].iter().map(|f| f.typ).collect();
        let flags_in_order = ORDER.iter().position(|&x| x == t::FLAGS).unwrap();
        assert_eq!(
            after,
            ORDER[flags_in_order + 1..],
            "Kite's fields follow Flags"
        );
        // NDN's rule: a TLV-TYPE above 31 that is even may be skipped by who does not know it.
        assert!(after.iter().all(|&x| x > 31 && x % 2 == 0));

        // NFD's encoding ends at Flags: it decodes with zero drops.
        let mut nfd = Vec::new();
        crate::wire::put_nested(&mut nfd, t::FACE_STATUS, |v| {
            v.extend_from_slice(&wire[el.value_start..fields[flags_at].end()])
        });
        let decoded = FaceStatus::decode(&Bytes::from(nfd)).unwrap();
        assert_eq!(decoded.state, None);
        let nfd_counters = FaceCounters {
            n_in_interests: 7,
            n_out_data: 6,
            n_in_bytes: 734,
            n_out_bytes: 1536,
            ..Default::default()
        };
        assert_eq!(decoded.counters, nfd_counters, "Kite's counters zero");
    }

    #[test]
    fn field_order_is_nfds_then_kites_in_ascending_type() {
        let want = [
            105, 114, 129, 109, 132, 133, 134, 135, 136, 137, // FaceId .. Mtu
            144, 145, 151, 146, 147, 152, 148, 149, // NFD's counters
            108, // Flags
            0x4B00, 0x4B02, 0x4B04, 0x4B06, 0x4B08, 0x4B0A, 0x4B0C, 0x4B0E, // drops
            0x4B10, // link state
            0x4B20, 0x4B22, 0x4B24, 0x4B26, 0x4B28, 0x4B2A, // in-too-large, LpReliability
            0x4B2C, // send-failed
            0x4B2E, // Nacks limited
        ];
        assert_eq!(ORDER, want);
    }

    #[test]
    fn starts_with_face_id_uri_local_uri() {
        let wire = sample().encode();
        assert_eq!(&wire[2..10], &[105, 2, 1, 0, 114, 7, b'f', b'd']);
    }

    #[test]
    fn missing_required_field_is_an_error() {
        let s = sample();
        let mut v = Vec::new();
        put_nonneg(&mut v, t::FACE_ID, s.face_id);
        put_str(&mut v, t::URI, &s.uri);
        let mut wire = Vec::new();
        kite_packet::encode::put_tlv(&mut wire, t::FACE_STATUS, &v);
        assert_eq!(
            FaceStatus::decode(&Bytes::from(wire)),
            Err(DecodeError::Missing { typ: t::LOCAL_URI })
        );
    }

    #[test]
    fn filter_round_trips_and_matches() {
        let f = FaceQueryFilter {
            uri_scheme: Some("unix".into()),
            face_scope: Some(FaceScope::LOCAL),
            ..Default::default()
        };
        let wire = Bytes::from(f.encode());
        assert_eq!(FaceQueryFilter::decode(&wire).unwrap(), f);
        assert!(f.matches(&sample()));
        let other = FaceQueryFilter {
            uri_scheme: Some("udp4".into()),
            ..Default::default()
        };
        assert!(!other.matches(&sample()));
        assert!(FaceQueryFilter::default().matches(&sample()));
        let by_id = FaceQueryFilter {
            face_id: Some(257),
            ..Default::default()
        };
        assert!(!by_id.matches(&sample()));
    }
}
