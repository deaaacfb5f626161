//! `kite-mgmt`: the NFD management protocol and the RIB, as pure, socket-free, deterministic
//! code that the `kite run` daemon wires to its internal face.
//!
//! - **Wire types** ([`ControlParameters`], [`ControlResponse`], the [`datasets`],
//!   [`FaceEventNotification`]): encoders write exactly NFD's field order; decoders follow
//!   ndn-cxx (ControlParameters in any order, datasets order-strict), with typed errors.
//! - **Commands** ([`command`]): a command Interest under `/localhost/nfd` or `/localhop/nfd`
//!   becomes a [`Command`] (module, verb, parameters, v0.3 or v0.2 signature); per-verb
//!   validation and defaults follow ndn-cxx's `control-command.cpp`, and every rejection
//!   carries NFD's status code and text. [`ReplayGuard`] is the command-Interest timestamp
//!   check; [`PrefixAnnouncement`] parses `rib/announce`.
//! - **Publishing** ([`dataset`], [`storage`]): versioned, segmented, DigestSha256-signed
//!   dataset replies, control responses, and the face-event notification stream, named as NFD
//!   names them, and the 1-second in-memory storage that answers later segment Interests.
//! - **RIB** ([`rib`]): routes keyed by (prefix, face, origin), flattened into FIB nexthops by
//!   NFD's inheritance rules, with a FIB diff after every change.
//!
//! - **Server** ([`server`]): the management thread of `kite run`, wiring all of the above to
//!   the forwarder's internal face, FIB writer and face threads.
//!
//! Time is always passed in (milliseconds) so every behaviour is reproducible in tests.

pub mod announce;
pub mod command;
pub mod control_parameters;
pub mod control_response;
pub mod dataset;
pub mod datasets;
pub mod face_event;
pub mod readvertise;
pub mod replay;
pub mod rib;
pub mod server;
pub mod storage;
pub mod tlv_types;
mod wire;

pub use announce::PrefixAnnouncement;
pub use command::{parse_command, Command, CommandError, CommandSignature, Rejection, Verb};
pub use control_parameters::ControlParameters;
pub use control_response::ControlResponse;
pub use face_event::FaceEventNotification;
pub use replay::{ReplayError, ReplayGuard};
pub use rib::{FibChange, NextHop, Rib, RibError, RibRoute};
pub use wire::{decode_items, encode_items, Tlv};
