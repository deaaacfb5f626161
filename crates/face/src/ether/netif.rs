//! Interface notifications from the kernel: an rtnetlink socket subscribed to link changes
//! (RTM_NEWLINK, RTM_DELLINK) and address changes (RTM_NEWADDR, RTM_DELADDR), read when the
//! I/O thread's poll reports it readable. They only say which interfaces changed; each
//! Ethernet channel then asks the kernel for its interface's state and MTU
//! ([`EtherChannel::link_changed`](super::EtherChannel::link_changed)) and, on the AF_XDP
//! path, its addresses ([`interface_addresses`]), so a lost notification (the socket's buffer
//! overflowed) costs a re-read, never a wrong state. Nothing here runs per packet, and
//! nothing polls.
//!
//! Built on `netlink-sys` (a plain non-blocking socket, registered with mio by descriptor)
//! and `netlink-packet-route` (the message parser): `rtnetlink` itself needs an async
//! runtime, which the I/O thread does not have.

use std::io;
use std::net::IpAddr;
use std::os::fd::AsRawFd;

use mio::unix::SourceFd;
use mio::{Interest, Registry, Token};
use netlink_packet_core::{
    NetlinkHeader, NetlinkMessage, NetlinkPayload, NLM_F_DUMP, NLM_F_REQUEST,
};
use netlink_packet_route::address::{AddressAttribute, AddressMessage};
use netlink_packet_route::RouteNetlinkMessage;
use netlink_sys::{protocols::NETLINK_ROUTE, Socket, SocketAddr};

/// Octets of one read: a burst of link notifications (each well under 2 KiB).
const READ_LEN: usize = 64 * 1024;

/// Which interfaces a burst of notifications concerns.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct LinkEvents {
    indexes: Vec<u32>,
    overflowed: bool,
}

impl LinkEvents {
    /// Whether interface `index` may have changed (it was named, or notifications were lost).
    pub fn concerns(&self, index: u32) -> bool {
        self.overflowed || self.indexes.contains(&index)
    }

    /// Whether nothing may have changed.
    pub fn is_empty(&self) -> bool {
        !self.overflowed && self.indexes.is_empty()
    }

    /// Adds the interfaces the link messages in one read (`buf`) name; other messages and
    /// bytes that do not parse are skipped.
    fn add_messages(&mut self, mut buf: &[u8]) {
        while !buf.is_empty() {
            let Ok(msg) = NetlinkMessage::<RouteNetlinkMessage>::deserialize(buf) else {
                return;
            };
            let index = match &msg.payload {
                NetlinkPayload::InnerMessage(
                    RouteNetlinkMessage::NewLink(l) | RouteNetlinkMessage::DelLink(l),
                ) => Some(l.header.index),
                NetlinkPayload::InnerMessage(
                    RouteNetlinkMessage::NewAddress(a) | RouteNetlinkMessage::DelAddress(a),
                ) => Some(a.header.index),
                _ => None,
            };
            if let Some(index) = index.filter(|i| !self.indexes.contains(i)) {
                self.indexes.push(index);
            }
            // Messages are aligned to 4 octets.
            let len = (msg.header.length as usize + 3) & !3;
            if len == 0 || len >= buf.len() {
                return;
            }
            buf = &buf[len..];
        }
    }
}

/// An rtnetlink socket that hears of every interface change in this network namespace.
#[derive(Debug)]
pub struct LinkMonitor {
    socket: Socket,
    buf: Vec<u8>,
}

impl LinkMonitor {
    /// Opens a non-blocking socket subscribed to link and address notifications.
    pub fn open() -> io::Result<Self> {
        let mut socket = Socket::new(NETLINK_ROUTE)?;
        let groups = libc::RTMGRP_LINK | libc::RTMGRP_IPV4_IFADDR | libc::RTMGRP_IPV6_IFADDR;
        socket.bind(&SocketAddr::new(0, groups as u32))?;
        socket.set_non_blocking(true)?;
        Ok(LinkMonitor {
            socket,
            buf: Vec::with_capacity(READ_LEN),
        })
    }

    /// Registers the socket for edge-triggered readability.
    pub fn register(&self, registry: &Registry, token: Token) -> io::Result<()> {
        registry.register(
            &mut SourceFd(&self.socket.as_raw_fd()),
            token,
            Interest::READABLE,
        )
    }

    /// Reads every pending notification: the interfaces they concern.
    pub fn read(&mut self) -> io::Result<LinkEvents> {
        let mut events = LinkEvents::default();
        loop {
            self.buf.clear();
            match self.socket.recv(&mut self.buf, 0) {
                Ok(_) => events.add_messages(&self.buf),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(events),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // The kernel dropped notifications: every interface may have changed.
                Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) => events.overflowed = true,
                Err(e) => return Err(e),
            }
        }
    }
}

/// The addresses of interface `index` in the calling thread's network namespace (IPv4 and
/// IPv6, tentative ones included), from one RTM_GETADDR dump. Called when a channel opens
/// and when a notification names its interface, never per packet.
pub fn interface_addresses(index: u32) -> io::Result<Vec<IpAddr>> {
    let mut socket = Socket::new(NETLINK_ROUTE)?;
    socket.bind_auto()?;
    socket.connect(&SocketAddr::new(0, 0))?;
    let mut header = NetlinkHeader::default();
    header.flags = NLM_F_REQUEST | NLM_F_DUMP;
    let mut request = NetlinkMessage::new(
        header,
        NetlinkPayload::from(RouteNetlinkMessage::GetAddress(AddressMessage::default())),
    );
    request.finalize();
    let mut buf = vec![0; request.buffer_len()];
    request.serialize(&mut buf);
    socket.send(&buf, 0)?;

    let mut addrs = Vec::new();
    let mut reply = Vec::with_capacity(READ_LEN);
    loop {
        reply.clear();
        socket.recv(&mut reply, 0)?;
        let mut rest = &reply[..];
        while !rest.is_empty() {
            let msg = NetlinkMessage::<RouteNetlinkMessage>::deserialize(rest)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
            match &msg.payload {
                NetlinkPayload::Done(_) => return Ok(addrs),
                NetlinkPayload::Error(e) => return Err(e.to_io()),
                NetlinkPayload::InnerMessage(RouteNetlinkMessage::NewAddress(a))
                    if a.header.index == index =>
                {
                    // IFA_LOCAL is the interface's own address where it differs from
                    // IFA_ADDRESS (the peer's, on a point-to-point link); IPv6 sends only
                    // IFA_ADDRESS.
                    let local = a.attributes.iter().find_map(|a| match a {
                        AddressAttribute::Local(ip) => Some(*ip),
                        _ => None,
                    });
                    let address = a.attributes.iter().find_map(|a| match a {
                        AddressAttribute::Address(ip) => Some(*ip),
                        _ => None,
                    });
                    if let Some(ip) = local.or(address).filter(|ip| !addrs.contains(ip)) {
                        addrs.push(ip);
                    }
                }
                _ => {}
            }
            let len = (msg.header.length as usize + 3) & !3;
            if len == 0 || len >= rest.len() {
                break;
            }
            rest = &rest[len..];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use netlink_packet_route::link::LinkMessage;

    fn wire(msgs: Vec<RouteNetlinkMessage>) -> Vec<u8> {
        let mut out = Vec::new();
        for m in msgs {
            let mut msg = NetlinkMessage::new(NetlinkHeader::default(), NetlinkPayload::from(m));
            msg.finalize();
            let mut b = vec![0; msg.buffer_len()];
            msg.serialize(&mut b);
            b.resize((b.len() + 3) & !3, 0);
            out.extend_from_slice(&b);
        }
        out
    }

    fn link(index: u32) -> LinkMessage {
        let mut l = LinkMessage::default();
        l.header.index = index;
        l
    }

    #[test]
    fn new_and_deleted_links_name_their_interfaces_once() {
        let buf = wire(vec![
            RouteNetlinkMessage::NewLink(link(7)),
            RouteNetlinkMessage::GetLink(link(8)),
            RouteNetlinkMessage::DelLink(link(9)),
            RouteNetlinkMessage::NewLink(link(7)),
        ]);
        let mut e = LinkEvents::default();
        e.add_messages(&buf);
        assert_eq!(e.indexes, vec![7, 9]);
        assert!(e.concerns(7) && e.concerns(9) && !e.concerns(8));
    }

    #[test]
    fn address_changes_name_their_interfaces() {
        let mut a = AddressMessage::default();
        a.header.index = 4;
        let buf = wire(vec![
            RouteNetlinkMessage::NewAddress(a.clone()),
            RouteNetlinkMessage::DelAddress(a),
        ]);
        let mut e = LinkEvents::default();
        e.add_messages(&buf);
        assert_eq!(e.indexes, vec![4]);
    }

    #[test]
    fn loopback_has_its_addresses() {
        let lo = crate::sys::packet::interface_index("lo").unwrap().unwrap();
        let addrs = interface_addresses(lo).unwrap();
        assert!(addrs.contains(&IpAddr::from([127, 0, 0, 1])), "{addrs:?}");
        assert!(interface_addresses(0x7fff_0000).unwrap().is_empty());
    }

    #[test]
    fn garbage_is_skipped_and_an_overflow_concerns_everyone() {
        let mut e = LinkEvents::default();
        e.add_messages(&[0xff; 40]);
        e.add_messages(&[]);
        assert!(e.is_empty());
        e.overflowed = true;
        assert!(e.concerns(12345) && !e.is_empty());
    }

    #[test]
    fn the_monitor_opens_and_reads_nothing_when_nothing_changed() {
        let mut m = LinkMonitor::open().expect("rtnetlink socket");
        assert!(m.read().unwrap().is_empty());
    }
}
