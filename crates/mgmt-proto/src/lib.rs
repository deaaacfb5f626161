//! `kite-mgmt-proto`: the wire format of NFD's management protocol, shared by the clients (kite-app,
//! the CLI) and the server (`kite-mgmt-server`). Pure, socket-free, deterministic code that depends
//! on nothing but the codec.
//!
//! - **Wire types** ([`ControlParameters`], [`ControlResponse`], the [`datasets`],
//!   [`FaceEventNotification`]): encoders write exactly NFD's field order; decoders follow
//!   ndn-cxx (ControlParameters in any order, datasets order-strict), with typed errors.
//! - **Commands** ([`command`]): a command Interest under `/localhost/nfd` or `/localhop/nfd`
//!   becomes a [`Command`] (module, verb, parameters, v0.3 or v0.2 signature); per-verb
//!   validation and defaults follow ndn-cxx's `control-command.cpp`, and every rejection
//!   carries NFD's status code and text. [`PrefixAnnouncement`] parses `rib/announce`.
//! - **Publishing** ([`dataset`]): versioned, segmented, DigestSha256-signed dataset replies,
//!   control responses, and the face-event notification stream, named as NFD names them.
//!
//! Time is always passed in (milliseconds) so every behaviour is reproducible in tests.

pub mod announce;
pub mod command;
pub mod control_parameters;
pub mod control_response;
pub mod dataset;
pub mod datasets;
pub mod face_event;
pub mod nfd;
mod wire;

pub use announce::PrefixAnnouncement;
pub use command::{parse_command, Command, CommandError, CommandSignature, Rejection, Verb};
pub use control_parameters::ControlParameters;
pub use control_response::ControlResponse;
pub use face_event::FaceEventNotification;
pub use wire::{decode_items, encode_items, Tlv};
