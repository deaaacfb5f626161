//! What the threads are started with, and why a start fails.

use std::sync::Arc;

use kite_face::{FaceConfig, OpenListener};
use kite_fw::forwarder::ForwarderConfig;

use crate::codel::CoDelConfig;

/// Everything the threads are started with.
#[derive(Debug, Clone)]
pub struct RuntimeConfig {
    /// Forwarding threads (each owns a PCCT, DNL and timers).
    pub forwarding_threads: u8,
    /// I/O threads (each owns a disjoint set of faces and their sockets), 1 to
    /// [`MAX_IO_THREADS`].
    pub io_threads: u8,
    /// Components of the name prefix the NDT hashes (`usize::MAX`: the whole name).
    pub dispatch_prefix_len: usize,
    /// Slots of each input ring of a forwarding thread (Interest, Data, Nack).
    pub queue_capacity: usize,
    /// CoDel on each input ring.
    pub codel: CoDelConfig,
    /// Packets a forwarding thread takes from its rings per burst.
    pub burst: usize,
    /// Each forwarding thread's tables.
    pub forwarder: ForwarderConfig,
    /// Face settings (queue sizes, UDP MTU, idle timeout).
    pub face: FaceConfig,
    /// The listeners that accept peers (unix, TCP, WebSocket, …), opened in this order, all
    /// on I/O thread 0, which hands each accepted face to the thread with the fewest.
    pub listeners: Vec<Arc<dyn OpenListener>>,
    /// UDP listeners (on-demand faces per remote endpoint).
    pub udp: Vec<std::net::SocketAddr>,
    /// Network interfaces with an Ethernet channel (on-demand unicast faces per sender) and a
    /// multicast face on NDN's group.
    pub ether: Vec<String>,
    /// Those of [`RuntimeConfig::ether`] whose NDN frames go through AF_XDP.
    pub xdp: Vec<String>,
    /// Whether AF_XDP interfaces steer each NDN frame to the I/O thread of its shard, with
    /// inline forwarding over several I/O threads (see `kite_face::xdp::steer`).
    pub xdp_steering: bool,
    /// UDP multicast faces: the group, and each interface's name and IPv4 address (a
    /// permanent multi-access face each, as NFD's `face_system.udp.mcast`).
    pub udp_multicast: Vec<(std::net::SocketAddrV4, String, std::net::Ipv4Addr)>,
    /// Never park: threads poll without sleeping (for measuring what parking costs).
    pub spin_when_idle: bool,
    /// The I/O thread runs the forwarding shards itself (run to completion) instead of
    /// handing packets to forwarding threads: no thread hand-off, no wake-up between the
    /// stages. Pays off where cores are fewer than the threads that would be busy (the
    /// forwarder's and its applications'); see docs/architecture.md.
    pub inline_forwarding: bool,
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        RuntimeConfig {
            forwarding_threads: 1,
            io_threads: 1,
            dispatch_prefix_len: 2,
            queue_capacity: 4096,
            codel: CoDelConfig::default(),
            burst: 64,
            forwarder: ForwarderConfig::default(),
            face: FaceConfig::default(),
            listeners: Vec::new(),
            udp: Vec::new(),
            ether: Vec::new(),
            xdp: Vec::new(),
            xdp_steering: true,
            udp_multicast: Vec::new(),
            spin_when_idle: false,
            inline_forwarding: false,
        }
    }
}

/// The most I/O threads: a forwarding thread marks the I/O threads to wake in one u64.
pub const MAX_IO_THREADS: u8 = 64;

/// Why the forwarder could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// A listener could not be opened.
    #[error(transparent)]
    Listen(#[from] kite_face::ListenError),
    /// An Ethernet interface could not be opened.
    #[error(transparent)]
    Ether(#[from] kite_face::EtherError),
    /// A socket or thread could not be created.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The configuration is inconsistent.
    #[error("{0}")]
    Config(String),
}
