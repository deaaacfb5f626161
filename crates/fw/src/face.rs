//! What the forwarding plane knows of a face: its id and the properties forwarding rules read.
//! The types are `kite-face`'s (one definition from the socket layer up); here a face is a
//! number with a scope and a link type.

pub use kite_face::{FaceId, FaceScope, LinkType};
