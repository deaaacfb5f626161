//! What the forwarding plane knows of a face: its id and the properties forwarding rules read.
//! The faces themselves (sockets, link service) live in the daemon; here a face is a number.

use core::fmt;

/// A face's identifier. Ids are never reused while the forwarder runs, so a route or PIT
/// record naming a destroyed face can never reach a newer one.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct FaceId(pub u32);

impl FaceId {
    /// No face (an invalid id).
    pub const INVALID: FaceId = FaceId(0);
    /// The forwarder's internal face (management), as in NFD.
    pub const INTERNAL: FaceId = FaceId(1);
    /// The content store, as the "face" cached Data comes from (NFD's 254).
    pub const CONTENT_STORE: FaceId = FaceId(254);
    /// The null face (NFD's 255): packets sent there are dropped.
    pub const NULL: FaceId = FaceId(255);
    /// The first id handed to a dynamically created face.
    pub const FIRST_DYNAMIC: FaceId = FaceId(256);
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

/// Whether a face reaches local applications (`/localhost` may cross it) or the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum FaceScope {
    /// Reaches other nodes.
    #[default]
    NonLocal,
    /// Reaches applications on this host.
    Local,
}

/// How many peers a face reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum LinkType {
    /// One peer.
    #[default]
    PointToPoint,
    /// Many peers at once (multicast, Ethernet broadcast): Nacks are not sent on it.
    MultiAccess,
    /// Many peers, not all of which hear each other.
    AdHoc,
}
