//! Interface notifications from the kernel: an rtnetlink socket subscribed to link changes
//! (RTM_NEWLINK, RTM_DELLINK), read when the I/O thread's poll reports it readable. They only
//! say which interfaces changed; each Ethernet channel then asks the kernel for its
//! interface's state and MTU ([`EtherChannel::link_changed`](super::EtherChannel::link_changed)),
//! so a lost notification (the socket's buffer overflowed) costs a re-read, never a wrong
//! state. Nothing here runs per packet, and nothing polls.
//!
//! Built on `netlink-sys` (a plain non-blocking socket, registered with mio by descriptor)
//! and `netlink-packet-route` (the message parser): `rtnetlink` itself needs an async
//! runtime, which the I/O thread does not have.

use std::io;
use std::os::fd::AsRawFd;

use mio::unix::SourceFd;
use mio::{Interest, Registry, Token};
use netlink_packet_core::{NetlinkMessage, NetlinkPayload};
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
            if let NetlinkPayload::InnerMessage(
                RouteNetlinkMessage::NewLink(l) | RouteNetlinkMessage::DelLink(l),
            ) = &msg.payload
            {
                if !self.indexes.contains(&l.header.index) {
                    self.indexes.push(l.header.index);
                }
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
    /// Opens a non-blocking socket subscribed to link notifications.
    pub fn open() -> io::Result<Self> {
        let mut socket = Socket::new(NETLINK_ROUTE)?;
        socket.bind(&SocketAddr::new(0, libc::RTMGRP_LINK as u32))?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use netlink_packet_core::NetlinkHeader;
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
