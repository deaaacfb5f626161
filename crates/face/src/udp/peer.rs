//! The UDP transports: a unicast face's end ([`UdpPeer`]: its own connected socket, or its
//! channel's) and a multicast group's own socket ([`MulticastIo`]). Both write with
//! `sendmmsg`; a unicast face's datagrams are read by its channel, a group's by its face.

use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::Arc;

use bytes::Bytes;
use mio::net::UdpSocket;
use mio::Interest;

use crate::datagram::{flush_queue, no_padding, Arena};
use crate::queue::OutQueue;
use crate::sys::segment::Segmenter;
use crate::sys::{FdSlot, RecvBatch, BATCH};
use crate::transport::{FaceError, Flushed, Progress, RxFrame, Source, Transport};
use crate::uri::FaceUri;
use kite_link::reassembly::Endpoint;
use kite_link::FaceCounters;
use kite_link::Persistency;

/// Socket buffer size asked for on UDP sockets (the kernel caps it at net.core.rmem_max /
/// wmem_max). One listener socket carries every unicast face of its channel: with the default
/// ~208 KiB, a burst of 8000-octet Data overflowed it (UdpRcvbufErrors) while the I/O thread
/// was busy elsewhere.
pub(crate) const SOCKET_BUFFER: usize = 4 << 20;

/// A unicast UDP face's end: its socket (its own, connected to the remote, or its channel's),
/// the remote address, and what the path to it takes segmented.
#[derive(Debug)]
pub(crate) struct UdpPeer {
    pub socket: Arc<UdpSocket>,
    /// Whether `socket` is the face's own (connected) socket rather than the listener's
    /// (its place in the budget of own sockets, given back when the face goes).
    pub own: Option<FdSlot>,
    pub remote: SocketAddr,
    /// The listener's address, which the face's own socket is bound to as well.
    pub local: SocketAddr,
    pub seg: Segmenter,
    /// The MTU the face starts with (its path's, within the configured largest).
    pub mtu: usize,
}

impl UdpPeer {
    /// A face made on demand and then confirmed by the operator (`faces/create` of its remote,
    /// or a persistency change) asks for the buffer of a face the operator made
    /// ([`face_rcvbuf`]); once per change, best effort (a smaller kernel limit is no error).
    pub fn persistency_changed(&self, p: Persistency) {
        if self.own.is_some() && p != Persistency::OnDemand {
            let _ = socket2::SockRef::from(&*self.socket).set_recv_buffer_size(SOCKET_BUFFER);
        }
    }

    /// The receive buffer of the face's own socket, as the kernel reports it.
    #[cfg(test)]
    pub fn recv_buffer(&self) -> Option<usize> {
        self.own.as_ref()?;
        socket2::SockRef::from(&*self.socket)
            .recv_buffer_size()
            .ok()
    }

    /// The face's own socket, which the caller watches and reads; `None` when it shares the
    /// listener's.
    pub fn raw_fd(&self) -> Option<RawFd> {
        self.own.as_ref().map(|_| self.socket.as_raw_fd())
    }

    /// Sends the queue. A connected socket reports an ICMP port unreachable from the peer
    /// once, as a refused send: that frame is lost, as a datagram may be, and the rest go
    /// on (the face is not failed for it, since anyone can forge such an ICMP message).
    pub fn flush(&mut self, q: &mut OutQueue, c: &mut FaceCounters) -> Result<Flushed, FaceError> {
        let dest = self.own.is_none().then_some(self.remote);
        loop {
            match flush_queue(
                self.socket.as_raw_fd(),
                dest,
                &[],
                no_padding,
                Some(&mut self.seg),
                q,
                c,
            ) {
                Err(FaceError::Io(e)) if e.kind() == io::ErrorKind::ConnectionRefused => {}
                r => return r,
            }
        }
    }
}

/// A multicast face's own socket, bound to the group and joined on one interface.
#[derive(Debug)]
pub(crate) struct MulticastIo {
    pub socket: UdpSocket,
    pub group: SocketAddr,
    /// The interface's address, with the group's port.
    pub local: SocketAddr,
    pub batch: RecvBatch,
    pub arena: Arena,
    /// The MTU of datagram faces ([`crate::FaceConfig::udp_mtu`]).
    pub mtu: usize,
}

impl MulticastIo {
    pub fn recv_burst(
        &mut self,
        mut deliver: impl FnMut(SocketAddr, Bytes),
    ) -> Result<Progress, FaceError> {
        let Some(n) = self.batch.recv_ready(self.socket.as_raw_fd())? else {
            return Ok(Progress::Drained);
        };
        for i in 0..n {
            // A truncated datagram arrives empty, so the face counts it as malformed.
            if let Some(from) = self.batch.source(i) {
                deliver(from, self.arena.copy(self.batch.datagram(i)));
            }
        }
        Ok(if n == BATCH {
            Progress::More
        } else {
            Progress::Drained
        })
    }

    pub fn flush(&mut self, q: &mut OutQueue, c: &mut FaceCounters) -> Result<Flushed, FaceError> {
        flush_queue(
            self.socket.as_raw_fd(),
            Some(self.group),
            &[],
            no_padding,
            None,
            q,
            c,
        )
    }
}

impl Transport for UdpPeer {
    fn remote_uri(&self) -> FaceUri {
        FaceUri::Udp(self.remote)
    }

    fn local_uri(&self) -> FaceUri {
        FaceUri::Udp(self.local)
    }

    fn mtu(&self) -> Option<usize> {
        Some(self.mtu)
    }

    fn sources(&self) -> [Option<Source>; 2] {
        let rw = Interest::READABLE | Interest::WRITABLE;
        [self.raw_fd().map(|fd| (fd, rw)), None]
    }

    /// Its channel reads for it ([`crate::UdpChannel::recv_face`]).
    fn recv_burst(
        &mut self,
        _hangup: bool,
        _budget: usize,
        _rx: &mut Vec<RxFrame>,
    ) -> Result<Progress, FaceError> {
        Ok(Progress::Drained)
    }

    fn flush(&mut self, q: &mut OutQueue, c: &mut FaceCounters) -> Result<Flushed, FaceError> {
        UdpPeer::flush(self, q, c)
    }

    fn via_channel(&self) -> bool {
        true
    }

    fn reliable_capable(&self) -> bool {
        true
    }

    fn persistency_changed(&self, p: Persistency) {
        UdpPeer::persistency_changed(self, p)
    }

    #[cfg(test)]
    fn recv_buffer(&self) -> Option<usize> {
        UdpPeer::recv_buffer(self)
    }
}

impl Transport for MulticastIo {
    fn remote_uri(&self) -> FaceUri {
        FaceUri::Udp(self.group)
    }

    fn local_uri(&self) -> FaceUri {
        FaceUri::Udp(self.local)
    }

    fn mtu(&self) -> Option<usize> {
        Some(self.mtu)
    }

    fn sources(&self) -> [Option<Source>; 2] {
        let rw = Interest::READABLE | Interest::WRITABLE;
        [Some((self.socket.as_raw_fd(), rw)), None]
    }

    fn recv_burst(
        &mut self,
        _hangup: bool,
        _budget: usize,
        rx: &mut Vec<RxFrame>,
    ) -> Result<Progress, FaceError> {
        MulticastIo::recv_burst(self, |from, frame| {
            rx.push(RxFrame {
                from: Endpoint::Ip(from),
                frame,
                own_buffer: 0,
            })
        })
    }

    fn flush(&mut self, q: &mut OutQueue, c: &mut FaceCounters) -> Result<Flushed, FaceError> {
        MulticastIo::flush(self, q, c)
    }
}
