//! `kite-app`: Kite's client library, for applications and tools that talk to a local
//! forwarder (Kite or NFD) over its Unix or TCP socket.
//!
//! Today it is a small blocking client: [`Client`] connects ([`Client::connect_default`] looks
//! where NFD and Kite listen), frames the TLV stream, sends one Interest at a time and waits
//! for its Data or Nack ([`Client::express`]), and speaks the NFD management protocol from the
//! client side: signed control commands ([`Client::command`]) and segmented status datasets
//! ([`Client::dataset`]), decoded with `kite-mgmt`'s wire types.

pub mod client;
pub mod endpoint;
pub mod error;
#[cfg(any(test, feature = "fake-forwarder"))]
pub mod fake;
pub mod framing;
pub mod mgmt;
mod random;

pub use client::Client;
pub use endpoint::Endpoint;
pub use error::ClientError;
pub use mgmt::nfd_name;

#[cfg(test)]
mod tests;
