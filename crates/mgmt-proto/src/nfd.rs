//! Constants of the NFD management protocol, defined once and named as the NFD Management
//! Protocol names them: TLV-TYPE numbers (`ndn-cxx/encoding/tlv-nfd.hpp`), status codes, flag
//! bits and the enumerations of `nfd-constants.hpp`.
//!
//! Several TLV-TYPEs share a number: the numbers are scoped by the element that contains them
//! (128 is NfdVersion in ForwarderStatus and FaceStatus/FibEntry/RibEntry/… as a dataset item).

// ---- ControlParameters and ControlResponse ----

/// ControlParameters.
pub const CONTROL_PARAMETERS: u64 = 104;
/// FaceId.
pub const FACE_ID: u64 = 105;
/// Cost.
pub const COST: u64 = 106;
/// Strategy (holds a Name).
pub const STRATEGY: u64 = 107;
/// Flags.
pub const FLAGS: u64 = 108;
/// ExpirationPeriod (milliseconds).
pub const EXPIRATION_PERIOD: u64 = 109;
/// Origin.
pub const ORIGIN: u64 = 111;
/// Mask.
pub const MASK: u64 = 112;
/// Uri.
pub const URI: u64 = 114;
/// LocalUri.
pub const LOCAL_URI: u64 = 129;
/// Capacity.
pub const CAPACITY: u64 = 131;
/// Count.
pub const COUNT: u64 = 132;
/// FacePersistency.
pub const FACE_PERSISTENCY: u64 = 133;
/// BaseCongestionMarkingInterval (nanoseconds).
pub const BASE_CONGESTION_MARKING_INTERVAL: u64 = 135;
/// DefaultCongestionThreshold (bytes).
pub const DEFAULT_CONGESTION_THRESHOLD: u64 = 136;
/// Mtu.
pub const MTU: u64 = 137;

/// ControlResponse.
pub const CONTROL_RESPONSE: u64 = 101;
/// StatusCode.
pub const STATUS_CODE: u64 = 102;
/// StatusText.
pub const STATUS_TEXT: u64 = 103;

// ---- ForwarderStatus (status/general) ----

/// NfdVersion.
pub const NFD_VERSION: u64 = 128;
/// StartTimestamp (ms since the Unix epoch).
pub const START_TIMESTAMP: u64 = 129;
/// CurrentTimestamp (ms since the Unix epoch).
pub const CURRENT_TIMESTAMP: u64 = 130;
/// NNameTreeEntries.
pub const N_NAME_TREE_ENTRIES: u64 = 131;
/// NFibEntries.
pub const N_FIB_ENTRIES: u64 = 132;
/// NPitEntries.
pub const N_PIT_ENTRIES: u64 = 133;
/// NMeasurementsEntries.
pub const N_MEASUREMENTS_ENTRIES: u64 = 134;
/// NCsEntries.
pub const N_CS_ENTRIES: u64 = 135;
/// NSatisfiedInterests.
pub const N_SATISFIED_INTERESTS: u64 = 153;
/// NUnsatisfiedInterests.
pub const N_UNSATISFIED_INTERESTS: u64 = 154;

// ---- Face and channel counters ----
//
// NFD's traffic counters (ForwarderStatus, FaceStatus) and Kite's drop counters (FaceStatus,
// ChannelStatus): their TLV-TYPEs are defined with the counters, in kite-link.

pub use kite_link::tlv::*;

// ---- Face management ----

/// FaceStatus (a faces/list or faces/query item).
pub const FACE_STATUS: u64 = 128;
/// ChannelStatus (a faces/channels item).
pub const CHANNEL_STATUS: u64 = 130;
/// UriScheme (in FaceQueryFilter).
pub const URI_SCHEME: u64 = 131;
/// FaceScope.
pub const FACE_SCOPE: u64 = 132;
/// LinkType.
pub const LINK_TYPE: u64 = 134;
/// FaceQueryFilter.
pub const FACE_QUERY_FILTER: u64 = 150;
/// FaceEventNotification.
pub const FACE_EVENT_NOTIFICATION: u64 = 192;
/// FaceEventKind.
pub const FACE_EVENT_KIND: u64 = 193;

// ---- Kite's FaceStatus extension ----
//
// After Flags, at even (non-critical) TLV-TYPEs outside NFD's numbers, so NFD's clients skip
// it: ndn-cxx stops reading after Flags, python-ndn and NDNd ignore unknown non-critical
// elements. Its counters' TLV-TYPEs are kite-link's (re-exported above).

/// The face's link state, a [`FaceState`]. NFD keeps it internal and tells it only through
/// the UP and DOWN face events.
pub const KITE_FACE_STATE: u64 = 0x4B10;

// ---- FIB, RIB, strategy choice, CS ----

/// FibEntry (a fib/list item).
pub const FIB_ENTRY: u64 = 128;
/// NextHopRecord.
pub const NEXT_HOP_RECORD: u64 = 129;
/// RibEntry (a rib/list item).
pub const RIB_ENTRY: u64 = 128;
/// Route.
pub const ROUTE: u64 = 129;
/// StrategyChoice (a strategy-choice/list item).
pub const STRATEGY_CHOICE: u64 = 128;
/// CsInfo (the cs/info dataset).
pub const CS_INFO: u64 = 128;
/// NHits (in CsInfo).
pub const N_HITS: u64 = 129;
/// NMisses (in CsInfo).
pub const N_MISSES: u64 = 130;

// ---- PrefixAnnouncement ----

/// The KeywordNameComponent value `PA` that marks a PrefixAnnouncement name (`32=PA`).
pub const PREFIX_ANNOUNCEMENT_KEYWORD: &[u8] = b"PA";

/// `kite-strategy/load` Flags bits.
pub mod strategy_load_flag {
    /// Replace a loaded strategy of the same name (a reload): prefixes using it move to the
    /// new program, with fresh scratch areas.
    pub const REPLACE: u64 = 1;
}

/// Status codes of a ControlResponse, as NFD emits them.
pub mod status {
    /// Success.
    pub const OK: u64 = 200;
    /// Parameters failed validation, or the command is malformed.
    pub const BAD_REQUEST: u64 = 400;
    /// Authorization rejected.
    pub const FORBIDDEN: u64 = 403;
    /// No such face, or strategy not registered.
    pub const NOT_FOUND: u64 = 404;
    /// Unsupported protocol or invalid face options.
    pub const NOT_ACCEPTABLE: u64 = 406;
    /// Face already exists, or invalid update properties.
    pub const CONFLICT: u64 = 409;
    /// Face not found (fib/add-nexthop).
    pub const GONE: u64 = 410;
    /// Prefix longer than [`MAX_NAME_DEPTH`](super::MAX_NAME_DEPTH) components.
    pub const PREFIX_TOO_LONG: u64 = 414;
    /// Internal error.
    pub const INTERNAL_ERROR: u64 = 500;
    /// Face creation failed to connect or timed out.
    pub const TIMEOUT: u64 = 504;
}

/// Deepest prefix the FIB, RIB and strategy table accept (NFD's `NameTree::getMaxDepth()`).
pub const MAX_NAME_DEPTH: usize = 32;

/// Face flag bits (FaceStatus/ControlParameters Flags), as bit positions.
pub mod face_flag_bit {
    /// BIT_LOCAL_FIELDS_ENABLED.
    pub const LOCAL_FIELDS_ENABLED: u32 = 0;
    /// BIT_LP_RELIABILITY_ENABLED.
    pub const LP_RELIABILITY_ENABLED: u32 = 1;
    /// BIT_CONGESTION_MARKING_ENABLED.
    pub const CONGESTION_MARKING_ENABLED: u32 = 2;
}

/// Content Store flag bits (cs/config, CsInfo Flags), as bit positions.
pub mod cs_flag_bit {
    /// BIT_CS_ENABLE_ADMIT.
    pub const ENABLE_ADMIT: u32 = 0;
    /// BIT_CS_ENABLE_SERVE.
    pub const ENABLE_SERVE: u32 = 1;
}

/// Route flags (a bit set: Route and ControlParameters Flags).
pub mod route_flags {
    /// ROUTE_FLAG_CHILD_INHERIT: longer prefixes inherit this route.
    pub const CHILD_INHERIT: u64 = 1;
    /// ROUTE_FLAG_CAPTURE: longer prefixes inherit no route from above this one.
    pub const CAPTURE: u64 = 2;
}

macro_rules! open_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident = $value:expr),* $(,)? }) => {
        $(#[$doc])*
        ///
        /// A newtype over the wire number, so values a newer peer sends survive a round trip.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
        pub struct $name(pub u64);

        impl $name {
            $($(#[$vdoc])* pub const $variant: Self = $name($value);)*
        }
    };
}

open_enum!(
    /// Route origin: who announced the route.
    RouteOrigin {
        /// ROUTE_ORIGIN_APP.
        APP = 0,
        /// ROUTE_ORIGIN_AUTOREG.
        AUTOREG = 64,
        /// ROUTE_ORIGIN_CLIENT.
        CLIENT = 65,
        /// ROUTE_ORIGIN_AUTOCONF.
        AUTOCONF = 66,
        /// ROUTE_ORIGIN_NLSR.
        NLSR = 128,
        /// ROUTE_ORIGIN_PREFIXANN.
        PREFIXANN = 129,
        /// ROUTE_ORIGIN_STATIC.
        STATIC = 255,
    }
);

open_enum!(
    /// Face persistency.
    FacePersistency {
        /// FACE_PERSISTENCY_PERSISTENT.
        PERSISTENT = 0,
        /// FACE_PERSISTENCY_ON_DEMAND.
        ON_DEMAND = 1,
        /// FACE_PERSISTENCY_PERMANENT.
        PERMANENT = 2,
    }
);

open_enum!(
    /// Face scope.
    FaceScope {
        /// FACE_SCOPE_NON_LOCAL.
        NON_LOCAL = 0,
        /// FACE_SCOPE_LOCAL.
        LOCAL = 1,
    }
);

open_enum!(
    /// Link type.
    LinkType {
        /// LINK_TYPE_POINT_TO_POINT.
        POINT_TO_POINT = 0,
        /// LINK_TYPE_MULTI_ACCESS.
        MULTI_ACCESS = 1,
        /// LINK_TYPE_AD_HOC.
        AD_HOC = 2,
    }
);

open_enum!(
    /// A face's link state (Kite's FaceStatus extension, after NFD's transport states).
    FaceState {
        /// The link is up.
        UP = 0,
        /// The link is down (an Ethernet interface down or without carrier): the face drops
        /// what it would send.
        DOWN = 1,
        /// The face's connection is lost and it is dialing its peer again (a TCP face, Kite's
        /// own: NFD has no such state): it drops what it would send until connected.
        RECONNECTING = 2,
    }
);

open_enum!(
    /// Kind of a face event notification.
    FaceEventKind {
        /// FACE_EVENT_CREATED.
        CREATED = 1,
        /// FACE_EVENT_DESTROYED.
        DESTROYED = 2,
        /// FACE_EVENT_UP.
        UP = 3,
        /// FACE_EVENT_DOWN.
        DOWN = 4,
    }
);

// The face properties (kite-link's closed enums) as the open enums above, by their NFD numbers.

impl From<kite_link::FaceScope> for FaceScope {
    fn from(s: kite_link::FaceScope) -> Self {
        FaceScope(s.code())
    }
}

impl From<kite_link::Persistency> for FacePersistency {
    fn from(p: kite_link::Persistency) -> Self {
        FacePersistency(p.code())
    }
}

impl From<FacePersistency> for kite_link::Persistency {
    /// A value NFD does not define is read as persistent, the default of `faces/create`.
    fn from(p: FacePersistency) -> Self {
        kite_link::Persistency::from_code(p.0)
    }
}

impl From<kite_link::LinkType> for LinkType {
    fn from(l: kite_link::LinkType) -> Self {
        LinkType(l.code())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn face_properties_convert_by_their_nfd_numbers() {
        use kite_link::Persistency as Kp;
        for (p, w) in [
            (Kp::Persistent, FacePersistency::PERSISTENT),
            (Kp::OnDemand, FacePersistency::ON_DEMAND),
            (Kp::Permanent, FacePersistency::PERMANENT),
        ] {
            assert_eq!(FacePersistency::from(p), w);
            assert_eq!(Kp::from(w), p);
        }
        assert_eq!(Kp::from(FacePersistency(7)), Kp::Persistent);
        assert_eq!(
            FaceScope::from(kite_link::FaceScope::Local),
            FaceScope::LOCAL
        );
        assert_eq!(
            FaceScope::from(kite_link::FaceScope::NonLocal),
            FaceScope::NON_LOCAL
        );
        use kite_link::LinkType as Kl;
        assert_eq!(LinkType::from(Kl::PointToPoint), LinkType::POINT_TO_POINT);
        assert_eq!(LinkType::from(Kl::MultiAccess), LinkType::MULTI_ACCESS);
        assert_eq!(LinkType::from(Kl::AdHoc), LinkType::AD_HOC);
    }
}
