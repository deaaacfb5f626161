//! `kite-app`: Kite's client library, for applications and tools that talk to a forwarder
//! (Kite or NFD) over its Unix socket, TCP, UDP (with NDNLPv2 fragmentation) or, with the
//! `websocket` feature, WebSocket.
//!
//! [`Client`] connects ([`Client::connect_default`] looks where NFD and Kite listen), frames
//! the TLV stream, sends one Interest and waits for its Data or Nack ([`Client::express`]), and
//! speaks the NFD management protocol from the client side: signed control commands
//! ([`Client::command`]) and segmented status datasets ([`Client::dataset`]).
//!
//! On top of it: [`Pipeline`] keeps many Interests outstanding and matches each Data or Nack
//! to them; [`Producer`] registers prefixes and answers Interests; [`segmented`] fetches
//! objects with a congestion window (AIMD or CUBIC, RTO per RFC 6298) and publishes them as
//! signed, versioned segments.

pub mod client;
pub mod consumer;
pub mod endpoint;
pub mod error;
#[cfg(any(test, feature = "fake-forwarder"))]
pub mod fake;
pub mod framing;
pub mod mgmt;
pub mod producer;
pub mod random;
pub mod segmented;
pub mod shm;
mod transport;
mod udp;
pub mod write_queue;
#[cfg(feature = "websocket")]
mod ws;

pub use client::Client;
pub use consumer::{Event, InterestId, Pipeline};
pub use endpoint::Endpoint;
pub use error::ClientError;
pub use mgmt::nfd_name;
pub use producer::Producer;
pub use write_queue::WriteQueue;

#[cfg(test)]
mod tests;
