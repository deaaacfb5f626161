//! `kite-mgmt-server`: the management side of `kite run`. It serves NFD's management protocol
//! (whose wire format is `kite-mgmt-proto`) on the forwarder's internal face and owns the state
//! behind it.
//!
//! - **Server** ([`server`]): the management thread, wiring commands and datasets to the
//!   forwarder's internal face, FIB writer and face threads.
//! - **RIB** ([`rib`]): routes keyed by (prefix, face, origin), flattened into FIB nexthops by
//!   NFD's inheritance rules, with a FIB diff after every change.
//! - **Authorization** ([`Authorizer`]): which module's validator checks a command, each
//!   with its own replay protection ([`ReplayGuard`]).
//! - **Storage** ([`storage`]): the in-memory storage that answers later segment Interests of
//!   a dataset version and the face-event notification stream.
//!
//! Time is always passed in (milliseconds) so every behaviour is reproducible in tests.

pub mod authorize;
pub mod readvertise;
pub mod replay;
pub mod rib;
pub mod server;
pub mod storage;

pub use authorize::{Authorizer, Grant, RibSecurity};
pub use replay::{ReplayError, ReplayGuard, Stamp};
pub use rib::{FibChange, NextHop, Rib, RibError, RibRoute};
