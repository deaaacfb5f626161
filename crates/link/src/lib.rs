//! `kite-link`: what a face is apart from its socket, shared by the forwarding plane
//! (`kite-fw`), the faces (`kite-face`) and applications (`kite-app`).
//!
//! - [Face properties](face): [`FaceId`] and the [`FaceIds`] allocator, [`FaceScope`],
//!   [`Persistency`], [`LinkType`] (with NFD's numbers for them) and [`PacketKind`].
//! - [Counters](counters): [`FaceCounters`] and [`ChannelCounters`], which a face or channel
//!   updates and management lists as they are, with their TLV-TYPEs ([`tlv`]).
//! - [Stream framing](framing): TLV element boundaries in a byte stream, the packets handed on
//!   as slices of the buffer read into.
//! - [NDNLPv2 reassembly](reassembly), bounded in packets, octets and time.
//! - An [RFC 6298 RTT estimator](rtt).
//!
//! No socket is opened or configured here: the one system call is the `read` a [`framing::Framer`]
//! makes on a descriptor its caller owns.

pub mod counters;
pub mod face;
pub mod framing;
mod mac;
pub mod reassembly;
pub mod rtt;
pub mod tlv;

pub use counters::{ChannelCounters, FaceCounters, FaceDrop, FACE_DROPS};
pub use face::{FaceId, FaceIds, FaceScope, LinkType, PacketKind, Persistency};
pub use mac::{InvalidMac, MacAddr, ETHERTYPE_NDN, ETHER_HEADER_LEN};
