//! `kite-face`: NDN faces for Kite's input and output threads.
//!
//! A [`Face`] is one peer: a transport (Unix or TCP stream, UDP unicast or multicast,
//! WebSocket, Ethernet unicast or multicast), the NDNLPv2 [link service](link_service) (reassembly,
//! fragmentation, PIT token, congestion mark, local fields), a bounded output queue and NFD's
//! counters (what a face is apart from its socket — ids, properties, counters, framing,
//! reassembly — is `kite-link`'s). Channels create on-demand faces as peers arrive: a
//! [`Listener`] accepts connections (each transport that accepts implements it in its own
//! module and opens it through an [`OpenListener`]: [`unix::Listen`], [`tcp::Listen`],
//! [`ws::Listen`]), and a datagram channel ([`UdpChannel`] for UDP, [`EtherChannel`] for an
//! Ethernet interface) reads one socket for many faces; a datagram channel makes one
//! only for a well-formed NDN packet and keeps at most its configured number of them
//! ([`FaceConfig::udp_on_demand_limit`], [`FaceConfig::ether_on_demand_limit`]), giving up
//! the idlest for a new sender; a TCP or WebSocket listener likewise keeps at most its
//! configured number of connections ([`tenancy`]).
//!
//! How a daemon thread uses it: it owns a `mio::Poll`, some channels and faces, each
//! registered under its own token (edge-triggered). On a readable event it calls
//! [`Face::recv_burst`] (or a datagram channel's `recv_burst`, then [`Face::receive_frame`] per
//! [`Datagram`]) and hands the [`Received`] packets to the forwarder; [`Progress::More`] means
//! "call again, the event will not repeat". Output goes through [`Face::send_parts`] /
//! [`Face::send`] (enqueue, never block) and [`Face::flush`] once per burst; on
//! [`Flushed::Blocked`] the thread waits for the writable event. Face ids come from the
//! caller ([`kite_link::FaceIds`]) and are never reused.
//!
//! Invariants: no call blocks (an outgoing TCP connection is a [`tcp::Connecting`]); receive and send are one system call
//! per burst (large `read`, `recvmmsg`, `writev`, `sendmmsg`), never per packet; stream
//! packets are zero-copy slices of the read buffer; every bad input is dropped and counted
//! in [`kite_link::FaceCounters`], and a stream that loses framing closes its face.

pub mod burst;
pub mod capture;
mod config;
pub mod congestion;
mod datagram;
pub mod ether;
mod face;
pub mod h3;
pub mod lanes;
pub mod link_service;
mod listener;
mod on_demand;
pub mod police;
pub mod queue;
pub mod reliability;
#[cfg(test)]
mod reliable_link_tests;
mod shm;
mod stream;
mod sys;
pub mod tcp;
pub mod tenancy;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
mod transport;
pub mod udp;
pub mod unix;
pub mod uri;
pub mod ws;
pub mod xdp;

pub use config::{
    check_mtu, FaceConfig, DEFAULT_ETHER_SOCKET_BUFFER, DEFAULT_IDLE_TIMEOUT,
    DEFAULT_ON_DEMAND_LIMIT, DEFAULT_UDP_FACE_SOCKET_BUFFER, DEFAULT_UDP_MTU, DEFAULT_XDP_UMEM,
    MTU_RANGE, ON_DEMAND_LIMIT_RANGE,
};
pub use congestion::MarkingConfig;
pub use datagram::Datagram;
pub use ether::netif::{LinkEvents, LinkMonitor};
pub use ether::{EtherChannel, EtherError, IoPath, LinkState, UdpChannels};
pub use face::Face;
pub use h3::{Certificate, H3Config, H3Listener};
pub use link_service::{Received, RxPacket, RxSink};
pub use listener::{Accepted, ChannelStatus, ListenError, Listener, OpenListener};
pub use sys::raise_fd_limit;
pub use transport::{FaceError, Flushed, Progress};
pub use udp::UdpChannel;
pub use uri::{FaceUri, UriError};
