//! What a face is, apart from its socket: id, scope, persistency, link type, and the kinds of
//! packet it counts.

use core::fmt;

/// A face's identifier. The caller assigns ids and never reuses one, so a route naming a
/// destroyed face can never reach a newer face.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct FaceId(pub u64);

impl FaceId {
    /// No face (NFD's INVALID_FACEID).
    pub const INVALID: FaceId = FaceId(0);
    /// The forwarder's own internal face, where management is served.
    pub const INTERNAL: FaceId = FaceId(1);
    /// The face NFD reports for Data answered from the Content Store.
    pub const CONTENT_STORE: FaceId = FaceId(254);
    /// The null face (drops everything).
    pub const NULL: FaceId = FaceId(255);
    /// The first id for faces created at run time (1..=255 are NFD's reserved internal faces).
    pub const FIRST_DYNAMIC: FaceId = FaceId(256);
    /// The reserved faces that exist in every forwarder, as in NFD's face table: routes and
    /// nexthops may name them, and `faces/list` lists them.
    pub const RESERVED: [FaceId; 3] = [FaceId::INTERNAL, FaceId::CONTENT_STORE, FaceId::NULL];

    /// Whether this is one of the [`FaceId::RESERVED`] faces.
    pub fn is_reserved(self) -> bool {
        FaceId::RESERVED.contains(&self)
    }

    /// The URI a reserved face is listed with (its local and remote URI alike).
    pub fn reserved_uri(self) -> Option<&'static str> {
        match self {
            FaceId::INTERNAL => Some("internal://"),
            FaceId::CONTENT_STORE => Some("contentstore://"),
            FaceId::NULL => Some("null://"),
            _ => None,
        }
    }
}

impl fmt::Debug for FaceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "face{}", self.0)
    }
}

impl fmt::Display for FaceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Hands out increasing face ids starting at [`FaceId::FIRST_DYNAMIC`]; channels take ids
/// from it when they create faces. Clones share one counter (an atomic, taken once per face
/// made, never per packet), so the daemon's I/O threads never hand out the same id twice.
#[derive(Debug, Clone)]
pub struct FaceIds {
    next: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl Default for FaceIds {
    fn default() -> Self {
        FaceIds {
            next: std::sync::Arc::new(FaceId::FIRST_DYNAMIC.0.into()),
        }
    }
}

impl FaceIds {
    /// An allocator whose first id is 256.
    pub fn new() -> Self {
        Self::default()
    }

    /// The next unused id (of this allocator and every clone of it).
    pub fn next_id(&mut self) -> FaceId {
        FaceId(self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
    }
}

/// Whether a face reaches applications on this host (NFD FaceScope).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum FaceScope {
    /// Reaches other nodes (0).
    #[default]
    NonLocal = 0,
    /// Reaches local applications (1): `/localhost` may cross it, local fields may be enabled.
    Local = 1,
}

/// How long a face lives (NFD FacePersistency).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Persistency {
    /// Created by configuration or `faces/create`; closed on the first error (0).
    Persistent = 0,
    /// Created by a listener when a peer arrived; closed on error or (datagram) when idle (1).
    OnDemand = 1,
    /// Survives errors: the socket is kept and reopened where possible (2).
    Permanent = 2,
}

/// How many peers a face reaches (NFD LinkType).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum LinkType {
    /// One peer (0).
    #[default]
    PointToPoint = 0,
    /// Many peers that all hear each other: multicast (1).
    MultiAccess = 1,
    /// Many peers that do not all hear each other (2): a strategy may send back out the
    /// face an Interest came in on.
    AdHoc = 2,
}

// NFD's wire numbers for the properties above (nfd-constants.hpp): the discriminants, read
// back here and nowhere else.

impl FaceScope {
    /// NFD's number for this scope (FACE_SCOPE_*).
    pub const fn code(self) -> u64 {
        self as u64
    }
}

impl Persistency {
    /// NFD's number for this persistency (FACE_PERSISTENCY_*).
    pub const fn code(self) -> u64 {
        self as u64
    }

    /// The persistency NFD's number `code` stands for; a value NFD does not define is read as
    /// persistent, the default of `faces/create`.
    pub const fn from_code(code: u64) -> Self {
        match code {
            1 => Persistency::OnDemand,
            2 => Persistency::Permanent,
            _ => Persistency::Persistent,
        }
    }
}

impl LinkType {
    /// NFD's number for this link type (LINK_TYPE_*).
    pub const fn code(self) -> u64 {
        self as u64
    }
}

/// The kind of network packet a frame carries; counters are kept per kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PacketKind {
    /// An Interest.
    Interest,
    /// A Data.
    Data,
    /// A Nack (an Interest under an LP Nack header).
    Nack,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_start_after_the_reserved_range_and_never_repeat() {
        let mut ids = FaceIds::new();
        assert_eq!(ids.next_id(), FaceId(256));
        assert_eq!(ids.next_id(), FaceId(257));
        let mut other = ids.clone();
        assert_eq!(other.next_id(), FaceId(258), "clones share the counter");
        assert_eq!(ids.next_id(), FaceId(259));
    }
}

#[cfg(test)]
mod wire_tests {
    use super::*;

    #[test]
    fn properties_carry_nfds_wire_numbers() {
        for (p, code) in [
            (Persistency::Persistent, 0),
            (Persistency::OnDemand, 1),
            (Persistency::Permanent, 2),
        ] {
            assert_eq!(p.code(), code);
            assert_eq!(Persistency::from_code(code), p);
        }
        assert_eq!(Persistency::from_code(7), Persistency::Persistent);
        assert_eq!(FaceScope::NonLocal.code(), 0);
        assert_eq!(FaceScope::Local.code(), 1);
        assert_eq!(LinkType::PointToPoint.code(), 0);
        assert_eq!(LinkType::MultiAccess.code(), 1);
        assert_eq!(LinkType::AdHoc.code(), 2);
    }
}
