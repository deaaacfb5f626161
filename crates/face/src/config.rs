//! The settings channels give the faces they create, and their defaults and bounds.

use std::time::Duration;

use crate::congestion::MarkingConfig;
use crate::queue::{DEFAULT_QUEUE_CAPACITY, DEFAULT_WAITING_BYTES};
use crate::reliability::ReliabilityLimits;
use kite_link::framing::MAX_NDN_PACKET_SIZE;
use kite_link::reassembly::ReassemblyLimits;

/// NFD's default MTU of UDP unicast faces.
pub const DEFAULT_UDP_MTU: usize = 8800;

/// The MTUs a face may be given: from NFD's smallest (64 octets, room for an LpPacket header
/// and a fragment) to the largest UDP payload over IPv4.
pub const MTU_RANGE: (usize, usize) = (64, 65507);

/// The one rule for an MTU, wherever it is given (configuration file, `kite face create`,
/// faces/create and faces/update): within [`MTU_RANGE`].
pub fn check_mtu(mtu: u64) -> Result<usize, String> {
    let (lo, hi) = MTU_RANGE;
    match usize::try_from(mtu) {
        Ok(m) if (lo..=hi).contains(&m) => Ok(m),
        _ => Err(format!("mtu must be between {lo} and {hi}, not {mtu}")),
    }
}

/// The receive buffer asked for each Ethernet interface's socket by default, as for UDP
/// listeners: the kernel's default (about 208 KiB) holds some 130 full frames, which a burst
/// of fragmented Data overflowed whenever the I/O thread was busy elsewhere.
pub const DEFAULT_ETHER_SOCKET_BUFFER: usize = 4 << 20;

/// The UMEM of each AF_XDP socket by default: at a 1500-octet MTU, 2048 frames of 2048 octets
/// to receive into and 2048 to send from. With half as many, a chain of veths lost frames to
/// an empty fill ring under a fetch's bursts of fragmented Data (about 3 % of the Data of a
/// 30 MB fetch); with these, a handful.
pub const DEFAULT_XDP_UMEM: usize = 8 << 20;

/// The receive buffer asked for each on-demand UDP face's own socket by default (a face the
/// operator made gets the listener's 4 MiB). Each face
/// reads its own socket, so a burst toward one face no longer shares a listener's buffer
/// with every other face; 256 KiB holds some 110 full 1500-octet datagrams as the kernel
/// accounts them (it charges twice the payload, and caps the request at
/// `net.core.rmem_max`). The kernel's memory for UDP faces is at most
/// `udp_on_demand_limit` × this × 2 per listener, plus 8 MiB per face the operator made.
pub const DEFAULT_UDP_FACE_SOCKET_BUFFER: usize = 256 << 10;

/// NFD's default idle timeout of on-demand UDP faces.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(600);

/// On-demand faces a listener keeps by default: each costs a face's memory (output queue,
/// reassembly state) to whoever sends one well-formed packet from a new address, or opens a
/// connection.
pub const DEFAULT_ON_DEMAND_LIMIT: usize = 4096;

/// The range the on-demand face limits accept (`kite run` flags and configuration keys alike).
pub const ON_DEMAND_LIMIT_RANGE: (usize, usize) = (1, 1 << 20);

/// Default pause before a lost permanent TCP face dials its peer again (doubling after each
/// failure up to [`DEFAULT_REDIAL_MAX`]).
pub const DEFAULT_REDIAL_INITIAL: Duration = Duration::from_secs(1);

/// Default longest pause between two dials of a lost permanent TCP face.
pub const DEFAULT_REDIAL_MAX: Duration = Duration::from_secs(60);

/// Settings channels give the faces they create.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FaceConfig {
    /// Frames an output queue holds before it drops.
    pub queue_capacity: usize,
    /// Octets that frames waiting for blocked sockets, copied out of their bursts, may hold in
    /// the output queues of all faces together ([`crate::queue::WAITING`]); a frame beyond
    /// it is dropped and counted in [`FaceCounters::n_out_queue_full`](kite_link::FaceCounters::n_out_queue_full).
    pub output_queue_bytes: usize,
    /// MTU of datagram faces: a multicast face's, and the largest a unicast UDP face takes
    /// from its path.
    pub udp_mtu: usize,
    /// How long an on-demand datagram face lives without receiving.
    pub idle_timeout: Duration,
    /// On-demand faces a UDP channel keeps at most; a new sender beyond them takes the place
    /// of the idlest.
    pub udp_on_demand_limit: usize,
    /// On-demand faces an Ethernet channel keeps at most, likewise.
    pub ether_on_demand_limit: usize,
    /// Connections a TCP listener keeps at most as on-demand faces; a new one beyond them
    /// takes the place of the idlest (see [`crate::tenancy`] for the process-wide bound).
    pub tcp_on_demand_limit: usize,
    /// Connections a WebSocket listener keeps at most, likewise.
    pub ws_on_demand_limit: usize,
    /// Receive buffer asked for each on-demand UDP face's own socket, in octets: what the
    /// kernel holds for one peer while its face is not read (restrained, or the I/O thread
    /// busy); beyond it the kernel drops that peer's datagrams alone. Faces made by
    /// configuration or `faces/create` ask for the listener's 4 MiB.
    pub udp_socket_buffer: usize,
    /// Receive buffer asked for each Ethernet interface's socket, in octets (the kernel's
    /// memory per interface, bounded by this).
    pub ether_socket_buffer: usize,
    /// Octets of UMEM each AF_XDP socket holds (an Ethernet channel has one socket per
    /// receive queue of its interface), half for receiving and half for sending.
    pub xdp_umem: usize,
    /// Reassembly bounds of a datagram channel (all its faces together) or of a face that
    /// has no channel (multicast UDP).
    pub reassembly: ReassemblyLimits,
    /// Congestion marking of new faces (NFD's defaults: on, 100 ms, 65536 octets).
    pub marking: MarkingConfig,
    /// Largest network packet accepted, in one frame or reassembled from fragments (at most
    /// [`MAX_NDN_PACKET_SIZE`], which every transport's frame limit is built on); a larger
    /// one is dropped and counted in [`FaceCounters::n_in_too_large`](kite_link::FaceCounters::n_in_too_large).
    pub max_packet_size: usize,
    /// Pause before a permanent TCP face whose connection was lost dials again; it doubles
    /// after each failed dial, up to [`FaceConfig::redial_max`].
    pub redial_initial: Duration,
    /// The longest pause between two dials of a lost permanent TCP face.
    pub redial_max: Duration,
    /// Bounds of each face's store of frames waiting for their NDNLPv2 Ack, when
    /// LpReliability is on ([`Face::set_lp_reliability`](crate::Face::set_lp_reliability)).
    pub reliability: ReliabilityLimits,
    /// Octets of each ring of the shared-memory region offered to a local application that
    /// asks for one on the Unix socket ([`kite_shm`]); `None`: no offer. Each such face
    /// maps `4 KiB + 2 ×` this.
    pub shm_ring_size: Option<usize>,
}

impl FaceConfig {
    /// The bounds of a reassembler: [`FaceConfig::reassembly`], reassembling nothing larger
    /// than [`FaceConfig::max_packet_size`].
    pub fn reassembly_limits(&self) -> ReassemblyLimits {
        ReassemblyLimits {
            max_packet: self.max_packet_size,
            ..self.reassembly
        }
    }
}

impl Default for FaceConfig {
    fn default() -> Self {
        FaceConfig {
            queue_capacity: DEFAULT_QUEUE_CAPACITY,
            output_queue_bytes: DEFAULT_WAITING_BYTES,
            udp_mtu: DEFAULT_UDP_MTU,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            udp_on_demand_limit: DEFAULT_ON_DEMAND_LIMIT,
            ether_on_demand_limit: DEFAULT_ON_DEMAND_LIMIT,
            tcp_on_demand_limit: DEFAULT_ON_DEMAND_LIMIT,
            ws_on_demand_limit: DEFAULT_ON_DEMAND_LIMIT,
            udp_socket_buffer: DEFAULT_UDP_FACE_SOCKET_BUFFER,
            ether_socket_buffer: DEFAULT_ETHER_SOCKET_BUFFER,
            xdp_umem: DEFAULT_XDP_UMEM,
            reassembly: ReassemblyLimits::default(),
            marking: MarkingConfig::default(),
            max_packet_size: MAX_NDN_PACKET_SIZE,
            redial_initial: DEFAULT_REDIAL_INITIAL,
            redial_max: DEFAULT_REDIAL_MAX,
            reliability: ReliabilityLimits::default(),
            shm_ring_size: Some(kite_shm::DEFAULT_RING_SIZE),
        }
    }
}
