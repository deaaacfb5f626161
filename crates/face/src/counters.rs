//! Per-face counters (NFD's FaceStatus counters, the link service's drop reasons,
//! LpReliability's) and per-channel drop counters.
//!
//! They are defined once, in `kite_mgmt_proto::datasets::counters`, beside the TLV-TYPEs FaceStatus
//! and ChannelStatus carry them under: a face updates the very struct management lists.

pub use kite_mgmt_proto::datasets::{ChannelCounters, FaceCounters, FaceDrop, FACE_DROPS};
