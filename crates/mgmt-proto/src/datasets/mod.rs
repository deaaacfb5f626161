//! Status dataset items, each encoded in exactly the field order ndn-cxx's order-strict
//! decoders demand, and decoded with the same strictness (fields in order, required fields
//! present, unknown non-critical fields skipped).
//!
//! A dataset's payload is the concatenation of its items ([`encode_items`](crate::encode_items)
//! / [`decode_items`](crate::decode_items)); ForwarderStatus alone has no outer element.

pub mod channel;
pub mod cs_info;
pub mod face_status;
pub mod fib;
pub mod forwarder_status;
pub mod rib;
pub mod strategy_choice;

pub use channel::{ChannelStatus, XdpVerdicts};
pub use cs_info::CsInfo;
pub use face_status::{FaceQueryFilter, FaceStatus};
pub use fib::{FibEntry, NextHopRecord};
pub use forwarder_status::ForwarderStatus;
pub use rib::{RibEntry, Route};
pub use strategy_choice::{AvailableStrategy, StrategyChoice};
