//! What Kite's fuzz targets run, as a library: each module's `run` takes the fuzz input and
//! panics only when an invariant breaks. The targets in `fuzz_targets/` call them, and the
//! `seeds` example writes the committed seed corpus with the same encoders.

pub mod config;
pub mod ether;
pub mod forwarder;
pub mod input;
pub mod link;
pub mod mgmt;
pub mod names;
pub mod trust;
pub mod xdp_udp;
