//! The configuration file of `kite run` (`--config FILE.toml`), grouped as NFD's `nfd.conf`
//! is: `[log]`, `[forwarder]`, `[face_system]` with one table per transport, `[tables]`, and
//! the faces and routes to create at start (`[[face]]`, `[[route]]`). docs/config.md lists
//! every key. Unknown keys and bad values are errors naming the file, line and key;
//! command-line flags override the file (`crate::run`).

mod error;
mod value;

use std::collections::BTreeMap;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer, Serialize};
use toml::Spanned;

pub use error::ConfigError;
pub use value::{FaceRef, LogFilter, Origin, Persistency, Prefix, Strategy, Unsolicited, Uri};

/// The whole file; every section may be left out.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// `[log]`.
    pub log: Log,
    /// `[forwarder]`.
    pub forwarder: Forwarder,
    /// `[face_system]`.
    pub face_system: FaceSystem,
    /// `[tables]`.
    pub tables: Tables,
    /// `[metrics]`.
    pub metrics: Metrics,
    /// `[rib]`.
    pub rib: Rib,
    /// `[[face]]`: faces created at start.
    #[serde(rename = "face", skip_serializing_if = "Vec::is_empty")]
    pub faces: Vec<FaceEntry>,
    /// `[[route]]`: routes registered at start.
    #[serde(rename = "route", skip_serializing_if = "Vec::is_empty")]
    pub routes: Vec<RouteEntry>,
    /// `[[authorize]]`: who may command which module (NFD's `authorizations`); none: NFD's
    /// default, `certfile any` for every module but `rib`.
    #[serde(rename = "authorize", skip_serializing_if = "Vec::is_empty")]
    pub authorize: Vec<Authorize>,
}

/// `[[authorize]]`: a signer and the modules it may command (NFD's `authorize`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Authorize {
    /// `certfile`: `any` (every command, signed or not), or a certificate file (as
    /// `ndnsec cert-dump` writes it) whose key must sign the commands.
    pub certfile: String,
    /// `privileges`: modules: `faces`, `fib`, `cs`, `strategy-choice`, `kite-strategy`.
    pub privileges: Vec<String>,
}

/// `[log]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Log {
    /// `filter`: a level or per-module directives (default: $KITE_LOG, else `info`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filter: Option<LogFilter>,
}

/// `[metrics]`: the HTTP listener with Prometheus metrics and the status page.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Metrics {
    /// `listen`: address of the HTTP listener serving `/metrics` (Prometheus text or
    /// OpenMetrics), `/status.json` and the status page `/`; none (off) by default.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub listen: Option<SocketAddr>,
}

/// `[forwarder]`: the forwarding and I/O threads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Forwarder {
    /// `threads`: forwarding threads, 1 to 64 (default: one per core beyond the I/O thread's).
    #[serde(skip_serializing_if = "Option::is_none", deserialize_with = "threads")]
    pub threads: Option<u8>,
    /// `io_threads`: I/O threads, 1 to 64, each owning a disjoint set of faces (default: one
    /// per two cores, at least one; docs/architecture.md).
    #[serde(
        skip_serializing_if = "Option::is_none",
        deserialize_with = "io_threads"
    )]
    pub io_threads: Option<u8>,
    /// `inline`: the I/O threads run the forwarding shards themselves instead of handing
    /// packets to forwarding threads (default: on with two cores or fewer).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inline: Option<bool>,
    /// `dispatch_prefix`: name components hashed to pick an Interest's thread (0: whole name).
    pub dispatch_prefix: usize,
    /// `default_hop_limit`: HopLimit given to Interests arriving without one (0: none).
    pub default_hop_limit: u8,
    /// `max_interest_lifetime`: milliseconds an Interest stays pending at most, whatever
    /// InterestLifetime it asks for.
    #[serde(deserialize_with = "max_interest_lifetime")]
    pub max_interest_lifetime: u64,
}

impl Default for Forwarder {
    fn default() -> Self {
        Forwarder {
            threads: None,
            io_threads: None,
            inline: None,
            dispatch_prefix: 2,
            default_hop_limit: 0,
            max_interest_lifetime: kite_fw::forwarder::DEFAULT_MAX_INTEREST_LIFETIME.as_millis()
                as u64,
        }
    }
}

/// `[face_system]`: listeners, one table per transport.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FaceSystem {
    /// `local_only`: no UDP or TCP listeners (the unix socket, WebSocket and Ethernet stay).
    pub local_only: bool,
    /// `max_packet_size`: the largest network packet accepted on any face, in one frame or
    /// reassembled, in octets ([`MAX_PACKET_SIZE_RANGE`]; default NFD's 8800).
    #[serde(deserialize_with = "max_packet_size")]
    pub max_packet_size: usize,
    /// `reassembly_bytes`: octets of NDNLPv2 fragments (and their bookkeeping) held at once
    /// per datagram channel (all faces of a UDP listener or Ethernet interface together,
    /// each multicast face alone); the oldest partial packets are dropped beyond it.
    #[serde(deserialize_with = "budget_bytes")]
    pub reassembly_bytes: usize,
    /// `output_queue_bytes`: octets that frames waiting for blocked sockets (peers that do
    /// not read) may hold in the output queues of all faces together; a frame beyond it is
    /// dropped.
    #[serde(deserialize_with = "budget_bytes")]
    pub output_queue_bytes: usize,
    /// `lp_reliability_frames`: per face with NDNLPv2 LpReliability on, the TxSequence
    /// numbers in flight at most (frames waiting for their Ack, and those acknowledged
    /// behind an older one); the oldest packet is given up beyond it.
    #[serde(deserialize_with = "lp_reliability_frames")]
    pub lp_reliability_frames: usize,
    /// `lp_reliability_bytes`: per face with LpReliability on, octets of frames kept for
    /// retransmission at most; the oldest packet is given up beyond it.
    #[serde(deserialize_with = "budget_bytes")]
    pub lp_reliability_bytes: usize,
    /// `[face_system.unix]`.
    pub unix: Unix,
    /// `[face_system.udp]`.
    pub udp: Udp,
    /// `[face_system.tcp]`.
    pub tcp: Tcp,
    /// `[face_system.websocket]`.
    pub websocket: WebSocket,
    /// `[face_system.http3]`.
    pub http3: Http3,
    /// `[face_system.ether]`.
    pub ether: Ether,
}

impl Default for FaceSystem {
    fn default() -> Self {
        FaceSystem {
            local_only: false,
            max_packet_size: kite_link::framing::MAX_NDN_PACKET_SIZE,
            reassembly_bytes: kite_link::reassembly::DEFAULT_REASSEMBLY_BYTES,
            output_queue_bytes: kite_face::queue::DEFAULT_WAITING_BYTES,
            lp_reliability_frames: kite_face::reliability::DEFAULT_MAX_FRAMES,
            lp_reliability_bytes: kite_face::reliability::DEFAULT_MAX_BYTES,
            unix: Unix::default(),
            udp: Udp::default(),
            tcp: Tcp::default(),
            websocket: WebSocket::default(),
            http3: Http3::default(),
            ether: Ether::default(),
        }
    }
}

/// `[face_system.unix]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Unix {
    /// `path`: the socket local apps connect to (default: NFD's, or a per-user fallback).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<PathBuf>,
    /// `shm`: offer shared-memory rings to local applications that ask on the socket.
    pub shm: bool,
    /// `shm_ring_size`: octets of each of a shared-memory face's two rings (a power of two,
    /// [`kite_shm::RING_SIZE_RANGE`]); each such face maps 4 KiB plus twice this.
    #[serde(deserialize_with = "shm_ring_size")]
    pub shm_ring_size: usize,
}

impl Default for Unix {
    fn default() -> Self {
        Unix {
            path: None,
            shm: true,
            shm_ring_size: kite_shm::DEFAULT_RING_SIZE,
        }
    }
}

/// The one rule for `shm_ring_size` and `kite run --shm-ring-size`.
pub fn check_shm_ring_size(v: usize) -> Result<usize, String> {
    let (lo, hi) = kite_shm::RING_SIZE_RANGE;
    if !kite_shm::valid_ring_size(v) {
        return Err(format!(
            "shm_ring_size must be a power of two between {lo} and {hi}, not {v}"
        ));
    }
    Ok(v)
}

fn shm_ring_size<'de, D: Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
    check_shm_ring_size(usize::deserialize(d)?).map_err(serde::de::Error::custom)
}

/// NFD's port for UDP and TCP, on loopback: neighbours are reached only when asked for.
fn loopback_6363() -> Vec<SocketAddr> {
    vec![SocketAddr::from(([127, 0, 0, 1], 6363))]
}

/// `[face_system.udp]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Udp {
    /// `listen`: listener addresses (on-demand faces per remote endpoint).
    pub listen: Vec<SocketAddr>,
    /// `mtu`: largest MTU of UDP faces that do not set their own, in octets; a unicast face
    /// starts at its path's MTU when smaller.
    #[serde(deserialize_with = "mtu")]
    pub mtu: usize,
    /// `idle_timeout`: seconds an on-demand UDP face lives without receiving.
    #[serde(deserialize_with = "idle_timeout")]
    pub idle_timeout: u64,
    /// `on_demand_limit`: on-demand faces each listener keeps at most; a new sender beyond
    /// them takes the place of the idlest.
    #[serde(deserialize_with = "on_demand_limit")]
    pub on_demand_limit: usize,
    /// `socket_buffer`: receive buffer asked for each unicast face's own socket, in octets
    /// (at least [`MIN_BUDGET_BYTES`]): what the kernel holds for one peer while its face is
    /// not read, beyond which it drops that peer's datagrams.
    #[serde(deserialize_with = "budget_bytes")]
    pub socket_buffer: usize,
    /// `multicast`: a UDP multicast face on `multicast_group` on each multicast-capable
    /// interface with an IPv4 address (NFD's `mcast`), so neighbours on a LAN find each other.
    pub multicast: bool,
    /// `multicast_group`: the IPv4 group and port (NFD's 224.0.23.170:56363).
    pub multicast_group: SocketAddrV4,
    /// `multicast_whitelist`: only these interfaces (all when empty).
    pub multicast_whitelist: Vec<String>,
    /// `multicast_blacklist`: never these interfaces.
    pub multicast_blacklist: Vec<String>,
}

/// NFD's UDP multicast group and port.
pub const NDN_UDP_MULTICAST: SocketAddrV4 =
    SocketAddrV4::new(Ipv4Addr::new(224, 0, 23, 170), 56363);

impl Default for Udp {
    fn default() -> Self {
        Udp {
            listen: loopback_6363(),
            mtu: kite_face::DEFAULT_UDP_MTU,
            idle_timeout: kite_face::DEFAULT_IDLE_TIMEOUT.as_secs(),
            on_demand_limit: kite_face::DEFAULT_ON_DEMAND_LIMIT,
            socket_buffer: kite_face::DEFAULT_UDP_FACE_SOCKET_BUFFER,
            multicast: false,
            multicast_group: NDN_UDP_MULTICAST,
            multicast_whitelist: Vec::new(),
            multicast_blacklist: Vec::new(),
        }
    }
}

/// The one rule for `multicast_group` (file and flag): an IPv4 multicast address.
pub fn check_multicast_group(g: SocketAddrV4) -> Result<SocketAddrV4, String> {
    if !g.ip().is_multicast() {
        return Err(format!(
            "multicast_group {g} is not an IPv4 multicast address"
        ));
    }
    Ok(g)
}

/// Parses `--udp-multicast-group`.
pub fn parse_multicast_group(s: &str) -> Result<SocketAddrV4, String> {
    check_multicast_group(s.parse().map_err(|e| format!("{s:?}: {e}"))?)
}

/// `[face_system.tcp]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Tcp {
    /// `listen`: listener addresses.
    pub listen: Vec<SocketAddr>,
    /// `reconnect_initial`: seconds a permanent TCP face whose connection was lost waits
    /// before it dials again; doubled after each failed dial.
    #[serde(deserialize_with = "reconnect_seconds")]
    pub reconnect_initial: u64,
    /// `reconnect_max`: the longest wait, in seconds, between two dials.
    #[serde(deserialize_with = "reconnect_seconds")]
    pub reconnect_max: u64,
    /// `on_demand_limit`: connections each listener keeps at most; a new one beyond them
    /// takes the place of the idlest.
    #[serde(deserialize_with = "on_demand_limit")]
    pub on_demand_limit: usize,
}

impl Default for Tcp {
    fn default() -> Self {
        Tcp {
            listen: loopback_6363(),
            reconnect_initial: kite_face::tcp::DEFAULT_REDIAL_INITIAL.as_secs(),
            reconnect_max: kite_face::tcp::DEFAULT_REDIAL_MAX.as_secs(),
            on_demand_limit: kite_face::DEFAULT_ON_DEMAND_LIMIT,
        }
    }
}

/// The range of `face_system.tcp.reconnect_initial` and `reconnect_max` (and their flags),
/// in seconds: at least a second between dials, at most an hour.
pub const RECONNECT_RANGE: (u64, u64) = (1, 3600);

/// The one rule for a reconnect wait in seconds (file and flags).
pub fn check_reconnect_seconds(s: u64) -> Result<u64, String> {
    let (lo, hi) = RECONNECT_RANGE;
    if (lo..=hi).contains(&s) {
        Ok(s)
    } else {
        Err(format!("must be between {lo} and {hi} seconds, not {s}"))
    }
}

/// The one rule across the two reconnect waits: the first is not longer than the longest.
pub fn check_reconnect_order(initial: u64, max: u64) -> Result<(), String> {
    if initial > max {
        return Err(format!(
            "reconnect_initial ({initial} s) is longer than reconnect_max ({max} s)"
        ));
    }
    Ok(())
}

fn reconnect_seconds<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    check_reconnect_seconds(u64::deserialize(d)?).map_err(serde::de::Error::custom)
}

/// `[face_system.websocket]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WebSocket {
    /// `listen`: listener addresses (NFD uses port 9696); none by default.
    pub listen: Vec<SocketAddr>,
    /// `on_demand_limit`: connections each listener keeps at most, likewise.
    #[serde(deserialize_with = "on_demand_limit")]
    pub on_demand_limit: usize,
}

impl Default for WebSocket {
    fn default() -> Self {
        WebSocket {
            listen: Vec::new(),
            on_demand_limit: kite_face::DEFAULT_ON_DEMAND_LIMIT,
        }
    }
}

/// `[face_system.http3]`: WebTransport over HTTP/3, what browsers reach Kite with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Http3 {
    /// `listen`: UDP listener addresses; none by default.
    pub listen: Vec<SocketAddr>,
    /// `path`: the path of the CONNECT requests answered (others get 404).
    #[serde(deserialize_with = "http3_path")]
    pub path: String,
    /// `cert`: PEM file of the certificate chain; with `key`. Without them Kite makes a
    /// self-signed ECDSA P-256 certificate valid 13 days at each start, and logs its hash.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cert: Option<PathBuf>,
    /// `key`: PEM file of the certificate's private key (PKCS#8, SEC1 or PKCS#1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<PathBuf>,
    /// `max_sessions`: sessions each listener keeps at most; a new one beyond them takes
    /// the place of the idlest.
    #[serde(deserialize_with = "on_demand_limit")]
    pub max_sessions: usize,
    /// `max_handshakes`: QUIC handshakes each listener lets run at once; a new client beyond
    /// them is dropped (it tries again).
    #[serde(deserialize_with = "max_handshakes")]
    pub max_handshakes: usize,
    /// `idle_timeout`: seconds a session lives without hearing from its client.
    #[serde(deserialize_with = "http3_idle_timeout")]
    pub idle_timeout: u64,
    /// `datagram_queue`: octets of datagrams each session holds while QUIC's congestion
    /// control holds them back (the oldest are dropped beyond it), and of received ones
    /// not read yet.
    #[serde(deserialize_with = "datagram_queue")]
    pub datagram_queue: usize,
}

impl Default for Http3 {
    fn default() -> Self {
        Http3 {
            listen: Vec::new(),
            path: kite_face::h3::DEFAULT_PATH.into(),
            cert: None,
            key: None,
            max_sessions: kite_face::h3::DEFAULT_MAX_SESSIONS,
            max_handshakes: kite_face::h3::DEFAULT_MAX_HANDSHAKES,
            idle_timeout: kite_face::h3::DEFAULT_IDLE_TIMEOUT.as_secs(),
            datagram_queue: kite_face::h3::DEFAULT_DATAGRAM_QUEUE,
        }
    }
}

fn http3_path<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let p = String::deserialize(d)?;
    match p.starts_with('/') && !p.contains(char::is_whitespace) {
        true => Ok(p),
        false => Err(serde::de::Error::custom(format!(
            "path must start with / and hold no spaces, not {p:?}"
        ))),
    }
}

fn max_handshakes<'de, D: Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
    bounded(d, 1usize, 65536, "max_handshakes")
}

fn http3_idle_timeout<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    bounded(d, 1, 86400, "idle_timeout")
}

fn datagram_queue<'de, D: Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
    bounded(d, 4096usize, 64 << 20, "datagram_queue")
}

/// `[face_system.ether]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Ether {
    /// `interfaces`: Ethernet interfaces to forward on (a multicast face each, and on-demand
    /// unicast faces per sender); none by default. Needs CAP_NET_RAW.
    pub interfaces: Vec<String>,
    /// `on_demand_limit`: on-demand faces each interface keeps at most; a new sender beyond
    /// them takes the place of the idlest.
    #[serde(deserialize_with = "on_demand_limit")]
    pub on_demand_limit: usize,
    /// `socket_buffer`: receive buffer asked for each interface's socket, in octets (at
    /// least [`MIN_BUDGET_BYTES`]).
    #[serde(deserialize_with = "budget_bytes")]
    pub socket_buffer: usize,
    /// `xdp`: interfaces whose NDN frames, and UDP datagrams to the UDP listeners, go through
    /// Kite's XDP program and AF_XDP sockets (kernel bypass) instead of an AF_PACKET socket
    /// and the kernel's UDP sockets; each is forwarded on as if it were in
    /// `interfaces` too. Needs root (CAP_NET_ADMIN, CAP_BPF, CAP_NET_RAW); an interface where
    /// AF_XDP cannot be had keeps AF_PACKET and the log says why. None by default.
    pub xdp: Vec<String>,
    /// `xdp_umem`: octets of UMEM each AF_XDP socket (one per receive queue) holds, half for
    /// receiving and half for sending (at least [`MIN_BUDGET_BYTES`]).
    #[serde(deserialize_with = "budget_bytes")]
    pub xdp_umem: usize,
    /// `xdp_steering`: with inline forwarding over several I/O threads, the XDP program hands
    /// each NDN frame to the socket of the I/O thread that runs its forwarding shard, so no
    /// packet crosses threads on its way in. On by default.
    pub xdp_steering: bool,
}

impl Default for Ether {
    fn default() -> Self {
        Ether {
            interfaces: Vec::new(),
            on_demand_limit: kite_face::DEFAULT_ON_DEMAND_LIMIT,
            socket_buffer: kite_face::DEFAULT_ETHER_SOCKET_BUFFER,
            xdp: Vec::new(),
            xdp_umem: kite_face::DEFAULT_XDP_UMEM,
            xdp_steering: true,
        }
    }
}

/// `[rib]`: what the RIB tells others (NFD's `rib` section).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Rib {
    /// `readvertise_nlsr`: routes of origin `client` are registered with the routing daemon
    /// on this host (`/localhost/nlsr`: NLSR, NDNd's ndn-dv) while it runs.
    pub readvertise_nlsr: bool,
    /// `auto_prefix_propagate`: routes under `propagate_prefixes` are registered, as the
    /// shortest of those prefixes that covers them, with the gateway (the face with a route
    /// for `/localhop/nfd`), Origin client, cost 15, every 25 s (NFD's
    /// `auto_prefix_propagate`).
    pub auto_prefix_propagate: bool,
    /// `propagate_prefixes`: what `auto_prefix_propagate` propagates (NFD's are the host's
    /// identities); none: the identity of `propagate_key`'s certificate.
    pub propagate_prefixes: Vec<Prefix>,
    /// `propagate_key`: the key propagation commands are signed with (none: DigestSha256),
    /// whose certificate, and `propagate_chain`, the daemon serves: an `ndnsec export` safe
    /// bag, or the directory of python-ndn's file TPM holding `propagate_certificate`'s key.
    pub propagate_key: Option<PathBuf>,
    /// `propagate_key_password_file`: a file holding the safe bag's password.
    pub propagate_key_password_file: Option<PathBuf>,
    /// `propagate_certificate`: the certificate of a file-TPM key (`ndnsec cert-dump` form).
    pub propagate_certificate: Option<PathBuf>,
    /// `propagate_chain`: issuers' certificates, served with the key's own so that a gateway
    /// fetching the chain from this host's face finds them.
    pub propagate_chain: Vec<PathBuf>,
    /// `localhop_registration`: neighbours may register routes toward themselves under
    /// `/localhop/nfd` (a gateway for hosts that propagate their prefixes; NFD's
    /// `localhop_security`).
    pub localhop_registration: bool,
    /// `localhost_security`: a file in ndn-cxx's validator format that `rib` commands under
    /// `/localhost/nfd` must pass; none: any signer (NFD's default `trust-anchor any`).
    pub localhost_security: Option<PathBuf>,
    /// `localhop_security`: a file in ndn-cxx's validator format that neighbours'
    /// `/localhop/nfd` registrations must pass; none: any signer.
    pub localhop_security: Option<PathBuf>,
    /// `prefix_announcement_validation`: a file in ndn-cxx's validator format that the
    /// prefix announcement of a `rib/announce` must pass; none: any signer.
    pub prefix_announcement_validation: Option<PathBuf>,
}

impl Default for Rib {
    fn default() -> Self {
        Rib {
            readvertise_nlsr: true,
            auto_prefix_propagate: false,
            propagate_prefixes: Vec::new(),
            propagate_key: None,
            propagate_key_password_file: None,
            propagate_certificate: None,
            propagate_chain: Vec::new(),
            localhop_registration: false,
            localhost_security: None,
            localhop_security: None,
            prefix_announcement_validation: None,
        }
    }
}

/// The one rule for `[rib]`, file and flags merged: propagation needs prefixes to propagate
/// (given, or the identity of the key it signs with), and the key's companions need the key.
pub fn check_rib(rib: &Rib) -> Result<(), String> {
    if rib.auto_prefix_propagate && rib.propagate_prefixes.is_empty() && rib.propagate_key.is_none()
    {
        return Err(
            "auto_prefix_propagate needs propagate_prefixes (or --propagate-prefix): the \
             prefixes this host may announce to its gateway; or propagate_key, whose \
             certificate's identity is then the prefix"
                .into(),
        );
    }
    if rib.propagate_key.is_none() {
        let companions = [
            (
                "propagate_key_password_file",
                rib.propagate_key_password_file.is_some(),
            ),
            ("propagate_certificate", rib.propagate_certificate.is_some()),
            ("propagate_chain", !rib.propagate_chain.is_empty()),
        ];
        if let Some((key, _)) = companions.iter().find(|(_, set)| *set) {
            return Err(format!(
                "{key} belongs to propagate_key (or --propagate-key), which is not set"
            ));
        }
    }
    Ok(())
}

/// `[tables]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Tables {
    /// `network_region`: forwarding hints under these names are ignored (the Interest has
    /// reached the region its hint names).
    pub network_region: Vec<Prefix>,
    /// `[tables.cs]`.
    pub cs: Cs,
    /// `[tables.strategy_choice]`: prefix = strategy.
    pub strategy_choice: BTreeMap<Prefix, Strategy>,
}

/// `[tables.cs]`: the Content Store.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Cs {
    /// `capacity`: packets, split over the forwarding threads.
    pub capacity: usize,
    /// `capacity_bytes`: octets of cached packets (and their names and allocation overhead),
    /// split over the forwarding threads; the least recently used are evicted beyond it.
    #[serde(deserialize_with = "budget_bytes")]
    pub capacity_bytes: usize,
    /// `admit`: whether Data is stored.
    pub admit: bool,
    /// `serve`: whether Interests are answered from it.
    pub serve: bool,
    /// `unsolicited_policy`: which Data nobody asked for is cached.
    pub unsolicited_policy: Unsolicited,
}

impl Default for Cs {
    fn default() -> Self {
        Cs {
            capacity: 65536,
            capacity_bytes: DEFAULT_CS_BYTES,
            admit: true,
            serve: true,
            unsolicited_policy: Unsolicited::DropAll,
        }
    }
}

/// `[[face]]`: a face created at start, as `faces/create` takes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaceEntry {
    /// `uri`: the remote face URI (required).
    pub uri: Spanned<Uri>,
    /// `local_uri`: the local URI, for faces that need one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_uri: Option<Uri>,
    /// `persistency`: `persistent` or `permanent`.
    #[serde(default)]
    pub persistency: Persistency,
    /// `mtu`: this face's MTU in octets (datagram faces).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "face_mtu"
    )]
    pub mtu: Option<usize>,
    /// `lp_reliability`: NDNLPv2 link-layer reliability (UDP and Ethernet unicast faces):
    /// frames are acknowledged and resent when lost. Off by default.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub lp_reliability: bool,
}

/// `[[route]]`: a route registered at start, as `rib/register` takes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RouteEntry {
    /// `prefix` (required).
    pub prefix: Prefix,
    /// `face` (required): a FaceId, or the URI of a `[[face]]`.
    pub face: Spanned<FaceRef>,
    /// `cost`.
    #[serde(default)]
    pub cost: u64,
    /// `origin` (default `static`).
    #[serde(default)]
    pub origin: Origin,
    /// `child_inherit`: longer prefixes inherit the route (the CHILD_INHERIT flag).
    #[serde(default = "yes")]
    pub child_inherit: bool,
    /// `capture`: longer prefixes inherit no route from shorter ones (the CAPTURE flag).
    #[serde(default)]
    pub capture: bool,
}

fn yes() -> bool {
    true
}

/// Reads a number and checks it lies in `lo..=hi`.
fn bounded<'de, D, T>(d: D, lo: T, hi: T, what: &str) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + PartialOrd + std::fmt::Display,
{
    let v = T::deserialize(d)?;
    if v < lo || v > hi {
        return Err(serde::de::Error::custom(format!(
            "{what} must be between {lo} and {hi}, not {v}"
        )));
    }
    Ok(v)
}

/// Forwarding threads: the dispatcher tracks the threads to wake in one u64.
fn threads<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u8>, D::Error> {
    bounded(d, 1, 64, "threads").map(Some)
}

/// I/O threads: a forwarding thread tracks the I/O threads to wake in one u64.
fn io_threads<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u8>, D::Error> {
    bounded(d, 1, kite_runtime::MAX_IO_THREADS, "io_threads").map(Some)
}

/// Default `tables.cs.capacity_bytes`: 256 MiB (65536 packets of 4 KiB on average).
pub const DEFAULT_CS_BYTES: usize = 256 << 20;

/// The smallest octet budget a table may be given: room for a few largest packets (8800
/// octets), fragmented or cached, with their overheads.
pub const MIN_BUDGET_BYTES: usize = 64 << 10;

/// The rule for an octet budget (`tables.cs.capacity_bytes`, `face_system.reassembly_bytes`
/// and their flags).
pub fn check_budget(v: usize) -> Result<usize, String> {
    if v < MIN_BUDGET_BYTES {
        return Err(format!(
            "must be at least {MIN_BUDGET_BYTES} octets, not {v}"
        ));
    }
    Ok(v)
}

fn budget_bytes<'de, D: Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
    check_budget(usize::deserialize(d)?).map_err(serde::de::Error::custom)
}

/// The smallest MTU NFD accepts, and the largest UDP payload.
fn mtu<'de, D: Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
    kite_face::check_mtu(u64::deserialize(d)?).map_err(serde::de::Error::custom)
}

fn face_mtu<'de, D: Deserializer<'de>>(d: D) -> Result<Option<usize>, D::Error> {
    mtu(d).map(Some)
}

/// The largest packet sizes `max_packet_size` may name: from what still carries a signed
/// command Interest up to NFD's MAX_NDN_PACKET_SIZE, the packet every transport's frame
/// limit (8800 octets plus an LP header) is built for.
pub const MAX_PACKET_SIZE_RANGE: (usize, usize) = (1024, kite_link::framing::MAX_NDN_PACKET_SIZE);

/// The one rule for `max_packet_size` and `kite run --max-packet-size`.
pub fn check_max_packet_size(v: usize) -> Result<usize, String> {
    let (lo, hi) = MAX_PACKET_SIZE_RANGE;
    if v < lo || v > hi {
        return Err(format!(
            "max_packet_size must be between {lo} and {hi}, not {v}"
        ));
    }
    Ok(v)
}

fn max_packet_size<'de, D: Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
    check_max_packet_size(usize::deserialize(d)?).map_err(serde::de::Error::custom)
}

/// The one rule for an on-demand face limit, shared by the configuration file and the
/// `kite run` flags.
fn check_on_demand_limit(n: usize) -> Result<usize, String> {
    let (lo, hi) = kite_face::ON_DEMAND_LIMIT_RANGE;
    if n < lo || n > hi {
        return Err(format!(
            "on_demand_limit must be between {lo} and {hi}, not {n}"
        ));
    }
    Ok(n)
}

/// Parses a `--udp-on-demand-limit` or `--ether-on-demand-limit` value.
pub fn parse_on_demand_limit(s: &str) -> Result<usize, String> {
    check_on_demand_limit(s.parse().map_err(|e| format!("{e}"))?)
}

/// The range of `lp_reliability_frames` (and `kite run --lp-reliability-frames`): room for
/// the fragments of a largest packet at a small MTU, up to what keeps a face's bookkeeping
/// (about 120 octets per number) under 8 MiB.
pub const LP_RELIABILITY_FRAMES_RANGE: (usize, usize) = (64, 65536);

/// The one rule for `lp_reliability_frames` and `kite run --lp-reliability-frames`.
pub fn check_lp_reliability_frames(v: usize) -> Result<usize, String> {
    let (lo, hi) = LP_RELIABILITY_FRAMES_RANGE;
    if v < lo || v > hi {
        return Err(format!(
            "lp_reliability_frames must be between {lo} and {hi}, not {v}"
        ));
    }
    Ok(v)
}

/// Parses `--lp-reliability-frames`.
pub fn parse_lp_reliability_frames(s: &str) -> Result<usize, String> {
    check_lp_reliability_frames(s.parse().map_err(|e| format!("{s:?}: {e}"))?)
}

fn lp_reliability_frames<'de, D: Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
    check_lp_reliability_frames(usize::deserialize(d)?).map_err(serde::de::Error::custom)
}

fn on_demand_limit<'de, D: Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
    check_on_demand_limit(usize::deserialize(d)?).map_err(serde::de::Error::custom)
}

/// The range of `max_interest_lifetime` (and `kite run --max-interest-lifetime`), in ms: from
/// a tenth of a second (shorter would expire ordinary Interests before their Data could come
/// back) to an hour.
pub const MAX_INTEREST_LIFETIME_RANGE: (u64, u64) = (100, 3_600_000);

/// Checks a `max_interest_lifetime` in milliseconds: the one rule for the file and the flag.
pub fn check_max_interest_lifetime(ms: u64) -> Result<u64, String> {
    let (lo, hi) = MAX_INTEREST_LIFETIME_RANGE;
    if (lo..=hi).contains(&ms) {
        Ok(ms)
    } else {
        Err(format!(
            "max_interest_lifetime must be between {lo} and {hi} ms, not {ms}"
        ))
    }
}

fn max_interest_lifetime<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    check_max_interest_lifetime(u64::deserialize(d)?).map_err(serde::de::Error::custom)
}

fn idle_timeout<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    bounded(d, 1, u64::from(u32::MAX), "idle_timeout")
}

impl Config {
    /// Reads and checks `path`.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.display().to_string(),
            source,
        })?;
        Config::parse(&text, &path.display().to_string())
    }

    /// Parses and checks `text`; errors name `path`.
    pub fn parse(text: &str, path: &str) -> Result<Config, ConfigError> {
        let config: Config = toml::from_str(text).map_err(|e| {
            // TOML names them keys; serde says fields.
            let message = e.message().replace("unknown field", "unknown key");
            ConfigError::at(path, text, e.span(), message)
        })?;
        config.check(text, path)?;
        Ok(config)
    }

    /// Checks what spans several entries: face URIs are unique, and a route's face URI names
    /// a `[[face]]`.
    fn check(&self, text: &str, path: &str) -> Result<(), ConfigError> {
        let tcp = &self.face_system.tcp;
        if let Err(e) = check_reconnect_order(tcp.reconnect_initial, tcp.reconnect_max) {
            let at = text.find("reconnect_initial").map(|i| i..i);
            return Err(ConfigError::at(path, text, at, e));
        }
        for (i, f) in self.faces.iter().enumerate() {
            if self.faces[..i]
                .iter()
                .any(|g| g.uri.get_ref() == f.uri.get_ref())
            {
                return Err(ConfigError::at(
                    path,
                    text,
                    Some(f.uri.span()),
                    format!("face {} is declared twice", f.uri.get_ref()),
                ));
            }
        }
        check_rib(&self.rib).map_err(|m| ConfigError::at(path, text, None, m))?;
        check_multicast_group(self.face_system.udp.multicast_group)
            .map_err(|m| ConfigError::at(path, text, None, m))?;
        for r in &self.routes {
            if let FaceRef::Uri(u) = r.face.get_ref() {
                if !self.faces.iter().any(|f| f.uri.get_ref() == u) {
                    return Err(ConfigError::at(
                        path,
                        text,
                        Some(r.face.span()),
                        format!("route {}: no [[face]] has uri = \"{u}\"", r.prefix.0),
                    ));
                }
            }
        }
        Ok(())
    }

    /// The file that states this configuration.
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("every value has a TOML form")
    }
}

#[cfg(test)]
mod tests;
