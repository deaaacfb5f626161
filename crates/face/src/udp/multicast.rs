//! UDP multicast faces: one per interface, on its own socket joined to the group.

use std::io;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};

use mio::net::UdpSocket;
use socket2::{Domain, Protocol, Socket, Type};

use super::grow_buffers;
use super::peer::MulticastIo;
use crate::config::FaceConfig;
use crate::datagram::Arena;
use crate::face::{Face, FaceParts};
use crate::sys::RecvBatch;
use kite_link::framing::MAX_FRAME_LEN;
use kite_link::{FaceId, FaceScope, LinkType, Persistency};

/// Opens a permanent multi-access face on IPv4 multicast `group` (e.g.
/// 224.0.23.170:56363) through the interface whose address is `iface`; with `device` (its
/// name) the socket hears only that interface, so that one face per interface does not also
/// hear the others' traffic. `loopback` keeps this host's own sockets hearing what the face
/// sends (NFD turns it off; tests need it).
pub fn multicast(
    id: FaceId,
    group: SocketAddrV4,
    iface: Ipv4Addr,
    device: Option<&str>,
    loopback: bool,
    config: &FaceConfig,
) -> io::Result<Face> {
    let s = Socket::new(Domain::IPV4, Type::DGRAM, Some(Protocol::UDP))?;
    s.set_reuse_address(true)?;
    s.set_nonblocking(true)?;
    grow_buffers(&s);
    if let Some(dev) = device {
        s.bind_device(Some(dev.as_bytes()))?;
    }
    s.bind(&SocketAddr::V4(group).into())?;
    s.join_multicast_v4(group.ip(), &iface)?;
    s.set_multicast_if_v4(&iface)?;
    s.set_multicast_loop_v4(loopback)?;
    let socket = UdpSocket::from_std(s.into());
    let transport = MulticastIo {
        socket,
        group: SocketAddr::V4(group),
        local: SocketAddr::V4(SocketAddrV4::new(iface, group.port())),
        batch: RecvBatch::new(MAX_FRAME_LEN),
        arena: Arena::default(),
        mtu: config.udp_mtu,
    };
    let parts = FaceParts {
        scope: FaceScope::NonLocal,
        persistency: Persistency::Permanent,
        link_type: LinkType::MultiAccess,
        redial: None,
    };
    Ok(Face::new(id, parts, Box::new(transport), config))
}

/// Interface flags in `/sys/class/net/<name>/flags` (Linux's IFF_*).
const IFF_UP: u32 = 0x1;
const IFF_LOOPBACK: u32 = 0x8;
const IFF_MULTICAST: u32 = 0x1000;

/// The interfaces a UDP multicast face can open on, as NFD picks them: up, multicast-capable,
/// not loopback, with an IPv4 address; those `whitelist` names (all when empty) and not
/// `blacklist`'s. Each with its IPv4 address (the source the kernel picks on it toward
/// `group`), in name order.
pub fn multicast_interfaces(
    group: SocketAddrV4,
    whitelist: &[String],
    blacklist: &[String],
) -> Vec<(String, Ipv4Addr)> {
    let Ok(dir) = std::fs::read_dir("/sys/class/net") else {
        return Vec::new();
    };
    let mut names: Vec<String> = dir
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| whitelist.is_empty() || whitelist.contains(n))
        .filter(|n| !blacklist.contains(n))
        .collect();
    names.sort();
    names
        .into_iter()
        .filter(|n| {
            let flags = std::fs::read_to_string(format!("/sys/class/net/{n}/flags"))
                .ok()
                .and_then(|f| u32::from_str_radix(f.trim().trim_start_matches("0x"), 16).ok())
                .unwrap_or(0);
            flags & IFF_UP != 0 && flags & IFF_MULTICAST != 0 && flags & IFF_LOOPBACK == 0
        })
        .filter_map(|n| {
            let addr = interface_v4(&n, group)?;
            Some((n, addr))
        })
        .collect()
}

/// The IPv4 address `device` sends from toward `group`, if it has one.
fn interface_v4(device: &str, group: SocketAddrV4) -> Option<Ipv4Addr> {
    let s = Socket::new(Domain::IPV4, Type::DGRAM, Some(Protocol::UDP)).ok()?;
    s.bind_device(Some(device.as_bytes())).ok()?;
    s.connect(&SocketAddr::V4(group).into()).ok()?;
    let local = s.local_addr().ok()?.as_socket_ipv4()?;
    (!local.ip().is_unspecified()).then(|| *local.ip())
}
