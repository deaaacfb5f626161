//! What the forwarding plane knows of a face: its id and the properties forwarding rules read.
//! The types are `kite-link`'s (one definition for the forwarder, the faces and applications);
//! here a face is a number with a scope and a link type.

pub use kite_link::{FaceId, FaceScope, LinkType};
