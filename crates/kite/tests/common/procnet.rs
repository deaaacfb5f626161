//! The kernel's table of this network namespace's IPv4 UDP sockets (`/proc/net/udp`): which
//! sockets are bound to a port, which peer each is connected to, and how many datagrams the
//! kernel dropped for each (a full receive buffer).

use std::net::{Ipv4Addr, SocketAddrV4};

/// One IPv4 UDP socket as the kernel lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UdpSock {
    pub local: SocketAddrV4,
    /// The peer it is connected to; `None` for an unconnected socket (a listener).
    pub remote: Option<SocketAddrV4>,
    /// Datagrams the kernel dropped for this socket.
    pub drops: u64,
}

/// An address as `/proc/net/udp` writes it: the IPv4 address as a native-endian hex word,
/// then the port in hex.
fn address(field: &str) -> SocketAddrV4 {
    let (ip, port) = field.split_once(':').expect("ADDR:PORT");
    let ip = u32::from_str_radix(ip, 16).expect("hex address");
    let port = u16::from_str_radix(port, 16).expect("hex port");
    SocketAddrV4::new(Ipv4Addr::from(ip.to_ne_bytes()), port)
}

/// The IPv4 UDP sockets bound to local `port`.
pub fn udp4_sockets(port: u16) -> Vec<UdpSock> {
    let table = std::fs::read_to_string("/proc/net/udp").expect("read /proc/net/udp");
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let local = address(fields[1]);
            let remote = address(fields[2]);
            let drops = fields.last()?.parse().ok()?;
            (local.port() == port).then_some(UdpSock {
                local,
                remote: (remote.port() != 0).then_some(remote),
                drops,
            })
        })
        .collect()
}

/// The peers the sockets bound to local `port` are connected to, sorted.
pub fn connected_peers(port: u16) -> Vec<SocketAddrV4> {
    let mut peers: Vec<SocketAddrV4> = udp4_sockets(port)
        .into_iter()
        .filter_map(|s| s.remote)
        .collect();
    peers.sort();
    peers
}
