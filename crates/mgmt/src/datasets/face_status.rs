//! FaceStatus (`faces/list`, `faces/query` items) and FaceQueryFilter (the `faces/query`
//! argument).

use bytes::Bytes;
use kite_packet::tlv::Element;
use kite_packet::Result;

use crate::tlv_types::{self as t, FacePersistency, FaceScope, FaceState, LinkType};
use crate::wire::{put_nonneg, put_opt_nonneg, put_str, required, string, walk_strict, Tlv};

/// Field order of FaceStatus: NFD's, then Kite's drop counters, link state and LpReliability
/// counters.
const ORDER: [u64; 35] = [
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
    t::N_IN_INTERESTS,
    t::N_IN_DATA,
    t::N_IN_NACKS,
    t::N_OUT_INTERESTS,
    t::N_OUT_DATA,
    t::N_OUT_NACKS,
    t::N_IN_BYTES,
    t::N_OUT_BYTES,
    t::FLAGS,
    t::KITE_N_IN_MALFORMED,
    t::KITE_N_IN_LP_DROPPED,
    t::KITE_N_REASSEMBLY_DROPPED,
    t::KITE_N_FRAMING_ERRORS,
    t::KITE_N_OUT_QUEUE_FULL,
    t::KITE_N_OUT_TOO_LARGE,
    t::KITE_N_IN_QUEUE_FULL,
    t::KITE_N_OUT_LINK_DOWN,
    t::KITE_FACE_STATE,
    t::KITE_N_IN_TOO_LARGE,
    t::KITE_N_LP_RETRANSMITTED,
    t::KITE_N_LP_GIVEN_UP,
    t::KITE_N_LP_ACKS_SENT,
    t::KITE_N_LP_ACKS_RECEIVED,
    t::KITE_N_LP_DUPLICATES,
    t::KITE_N_OUT_SEND_FAILED,
];

/// Index in [`ORDER`] of the first counter.
const COUNTERS_AT: usize = 10;
/// Index in [`ORDER`] of the first drop counter.
const DROPS_AT: usize = 19;
/// Index in [`ORDER`] of the link state.
const STATE_AT: usize = 27;
/// Index in [`ORDER`] of the drop counter that follows the link state.
const TOO_LARGE_AT: usize = 28;
/// Index in [`ORDER`] of the first LpReliability counter.
const LP_AT: usize = 29;
/// Index in [`ORDER`] of the drop counter that follows the LpReliability counters.
const SEND_FAILED_AT: usize = 34;

/// A face's NDNLPv2 LpReliability counters (Kite's extension; zero when absent, as from NFD).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LpCounters {
    /// Frames sent again for want of an Ack.
    pub n_retransmitted: u64,
    /// Network packets given up.
    pub n_given_up: u64,
    /// Ack fields sent.
    pub n_acks_sent: u64,
    /// Ack fields received.
    pub n_acks_received: u64,
    /// Frames dropped as duplicates.
    pub n_duplicates: u64,
}

impl LpCounters {
    fn to_array(self) -> [u64; 5] {
        [
            self.n_retransmitted,
            self.n_given_up,
            self.n_acks_sent,
            self.n_acks_received,
            self.n_duplicates,
        ]
    }

    fn from_array(a: [u64; 5]) -> Self {
        LpCounters {
            n_retransmitted: a[0],
            n_given_up: a[1],
            n_acks_sent: a[2],
            n_acks_received: a[3],
            n_duplicates: a[4],
        }
    }
}

/// A face's traffic counters, in FaceStatus order.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FaceCounters {
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
    /// NInBytes.
    pub n_in_bytes: u64,
    /// NOutBytes.
    pub n_out_bytes: u64,
}

impl FaceCounters {
    fn to_array(self) -> [u64; 8] {
        [
            self.n_in_interests,
            self.n_in_data,
            self.n_in_nacks,
            self.n_out_interests,
            self.n_out_data,
            self.n_out_nacks,
            self.n_in_bytes,
            self.n_out_bytes,
        ]
    }

    fn from_array(a: [u64; 8]) -> Self {
        FaceCounters {
            n_in_interests: a[0],
            n_in_data: a[1],
            n_in_nacks: a[2],
            n_out_interests: a[3],
            n_out_data: a[4],
            n_out_nacks: a[5],
            n_in_bytes: a[6],
            n_out_bytes: a[7],
        }
    }
}

/// Why a face dropped frames (Kite's extension of FaceStatus; zero when absent, as from NFD).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FaceDrops {
    /// Frames whose LpPacket or network packet did not decode.
    pub n_in_malformed: u64,
    /// Packets carrying an LP field they may not.
    pub n_in_lp_dropped: u64,
    /// Fragments dropped by reassembly.
    pub n_reassembly_dropped: u64,
    /// Stream framing errors (each closed the face).
    pub n_framing_errors: u64,
    /// Frames dropped because the output queue was full.
    pub n_out_queue_full: u64,
    /// Frames too large to fragment to the MTU.
    pub n_out_too_large: u64,
    /// Packets the forwarder had no room for (its input ring was full).
    pub n_in_queue_full: u64,
    /// Frames dropped unsent because the link was down.
    pub n_out_link_down: u64,
    /// Packets over the largest packet size accepted (whole or reassembled).
    pub n_in_too_large: u64,
    /// Frames the socket refused for a reason that may pass (a firewall rule, no buffer
    /// space, an unreachable destination).
    pub n_out_send_failed: u64,
}

impl FaceDrops {
    /// Each counter with the short name `kite face show` prints it under.
    pub fn by_reason(&self) -> [(&'static str, u64); 10] {
        [
            ("malformed", self.n_in_malformed),
            ("lp", self.n_in_lp_dropped),
            ("reassembly", self.n_reassembly_dropped),
            ("framing", self.n_framing_errors),
            ("queue-full", self.n_out_queue_full),
            ("too-large", self.n_out_too_large),
            ("fwd-queue-full", self.n_in_queue_full),
            ("link-down", self.n_out_link_down),
            ("in-too-large", self.n_in_too_large),
            ("send-failed", self.n_out_send_failed),
        ]
    }

    fn to_array(self) -> [u64; 8] {
        [
            self.n_in_malformed,
            self.n_in_lp_dropped,
            self.n_reassembly_dropped,
            self.n_framing_errors,
            self.n_out_queue_full,
            self.n_out_too_large,
            self.n_in_queue_full,
            self.n_out_link_down,
        ]
    }

    /// The counters carried before the link state; [`FaceDrops::n_in_too_large`] follows it,
    /// [`FaceDrops::n_out_send_failed`] the LpReliability counters.
    fn from_array(a: [u64; 8], n_in_too_large: u64, n_out_send_failed: u64) -> Self {
        FaceDrops {
            n_in_too_large,
            n_out_send_failed,
            n_in_malformed: a[0],
            n_in_lp_dropped: a[1],
            n_reassembly_dropped: a[2],
            n_framing_errors: a[3],
            n_out_queue_full: a[4],
            n_out_too_large: a[5],
            n_in_queue_full: a[6],
            n_out_link_down: a[7],
        }
    }
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
    /// Counters.
    pub counters: FaceCounters,
    /// Flags (face flag bits).
    pub flags: u64,
    /// Drop counters (Kite's extension).
    pub drops: FaceDrops,
    /// Link state (Kite's extension; `None` from NFD).
    pub state: Option<FaceState>,
    /// LpReliability counters (Kite's extension).
    pub lp: LpCounters,
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
        for (typ, n) in ORDER[COUNTERS_AT..].iter().zip(self.counters.to_array()) {
            put_nonneg(out, *typ, n);
        }
        put_nonneg(out, t::FLAGS, self.flags);
        for (typ, n) in ORDER[DROPS_AT..STATE_AT].iter().zip(self.drops.to_array()) {
            put_nonneg(out, *typ, n);
        }
        put_opt_nonneg(out, t::KITE_FACE_STATE, self.state.map(|s| s.0));
        put_nonneg(out, t::KITE_N_IN_TOO_LARGE, self.drops.n_in_too_large);
        for (typ, n) in ORDER[LP_AT..SEND_FAILED_AT].iter().zip(self.lp.to_array()) {
            put_nonneg(out, *typ, n);
        }
        put_nonneg(out, t::KITE_N_OUT_SEND_FAILED, self.drops.n_out_send_failed);
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
        let mut counters = [0u64; 8];
        for (k, c) in counters.iter_mut().enumerate() {
            *c = need(COUNTERS_AT + k)?;
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
            counters: FaceCounters::from_array(counters),
            flags: need(18)?,
            drops: FaceDrops::from_array(
                core::array::from_fn(|k| numbers[DROPS_AT + k].unwrap_or(0)),
                numbers[TOO_LARGE_AT].unwrap_or(0),
                numbers[SEND_FAILED_AT].unwrap_or(0),
            ),
            state: numbers[STATE_AT].map(FaceState),
            lp: LpCounters::from_array(core::array::from_fn(|k| numbers[LP_AT + k].unwrap_or(0))),
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
                ..Default::default()
            },
            flags: 5,
            drops: FaceDrops {
                n_in_malformed: 3,
                n_out_queue_full: 1,
                n_out_link_down: 2,
                n_in_too_large: 4,
                n_out_send_failed: 5,
                ..Default::default()
            },
            state: Some(FaceState::DOWN),
            lp: LpCounters {
                n_retransmitted: 9,
                n_duplicates: 1,
                ..Default::default()
            },
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
        assert_eq!(after, ORDER[DROPS_AT..], "drops, then the link state");
        // NDN's rule: a TLV-TYPE above 31 that is even may be skipped by who does not know it.
        assert!(after.iter().all(|&x| x > 31 && x % 2 == 0));

        // NFD's encoding ends at Flags: it decodes with zero drops.
        let mut nfd = Vec::new();
        crate::wire::put_nested(&mut nfd, t::FACE_STATUS, |v| {
            v.extend_from_slice(&wire[el.value_start..fields[flags_at].end()])
        });
        let decoded = FaceStatus::decode(&Bytes::from(nfd)).unwrap();
        assert_eq!(decoded.drops, FaceDrops::default());
        assert_eq!(decoded.state, None);
        assert_eq!(decoded.counters, s.counters);
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
