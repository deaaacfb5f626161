//! `kite-manager`: the management side of `kite run`. It serves NFD's management protocol
//! (whose wire format is `kite-mgmt`) on the forwarder's internal face and owns the state
//! behind it.
//!
//! - **Server** ([`server`]): the management thread, wiring commands and datasets to the
//!   forwarder's internal face, FIB writer and face threads.
//! - **RIB** ([`rib`]): routes keyed by (prefix, face, origin), flattened into FIB nexthops by
//!   NFD's inheritance rules, with a FIB diff after every change.
//! - **Replay protection** ([`ReplayGuard`]): the command-Interest timestamp check.
//! - **Storage** ([`storage`]): the in-memory storage that answers later segment Interests of
//!   a dataset version and the face-event notification stream.
//!
//! Time is always passed in (milliseconds) so every behaviour is reproducible in tests.

pub mod readvertise;
pub mod replay;
pub mod rib;
pub mod server;
pub mod storage;

pub use replay::{ReplayError, ReplayGuard};
pub use rib::{FibChange, NextHop, Rib, RibError, RibRoute};
