//! The Ethernet transport: a face's end on its channel's AF_PACKET socket, toward a peer or
//! NDN's group, written with `sendmmsg` (header, frame, padding); its channel reads for it.

use std::os::fd::RawFd;
use std::sync::Arc;

use super::frame::{self, HEADER_LEN};
use crate::datagram::flush_queue;
use crate::queue::OutQueue;
use crate::sys::packet::PacketSocket;
use crate::transport::{FaceError, Flushed, LinkState, Progress, RxFrame, Source, Transport};
use crate::uri::FaceUri;
use kite_link::FaceCounters;
use kite_link::MacAddr;

/// An Ethernet face's end: its channel's socket, the remote address (a peer or the group) and
/// the header every frame to it starts with.
#[derive(Debug)]
pub(crate) struct EtherPeer {
    pub socket: Arc<PacketSocket>,
    pub remote: MacAddr,
    /// The channel's URI, `dev://ifname`.
    pub local: FaceUri,
    pub header: [u8; HEADER_LEN],
    pub link: LinkState,
}

impl EtherPeer {
    pub fn raw_fd(&self) -> RawFd {
        self.socket.raw_fd()
    }

    /// Writes the queue with `sendmmsg` (header, frame, padding) until it is empty or the
    /// socket is full. A frame refused because the link is down (before the link monitor
    /// told the face) or for a reason that may pass is dropped and counted, and the flush
    /// goes on ([`flush_queue`]); another send error drops the frame that caused it and is
    /// returned.
    pub fn flush(&mut self, q: &mut OutQueue, c: &mut FaceCounters) -> Result<Flushed, FaceError> {
        flush_queue(
            self.raw_fd(),
            None,
            &self.header,
            frame::padding,
            None,
            q,
            c,
        )
    }
}

impl Transport for EtherPeer {
    fn remote_uri(&self) -> FaceUri {
        FaceUri::Ether(self.remote)
    }

    fn local_uri(&self) -> FaceUri {
        self.local.clone()
    }

    fn mtu(&self) -> Option<usize> {
        Some(self.link.mtu)
    }

    /// None of its own: its channel's socket carries its readiness.
    fn sources(&self) -> [Option<Source>; 2] {
        [None, None]
    }

    /// Its channel reads for it.
    fn recv_burst(
        &mut self,
        _hangup: bool,
        _budget: usize,
        _rx: &mut Vec<RxFrame>,
    ) -> Result<Progress, FaceError> {
        Ok(Progress::Drained)
    }

    fn flush(&mut self, q: &mut OutQueue, c: &mut FaceCounters) -> Result<Flushed, FaceError> {
        EtherPeer::flush(self, q, c)
    }

    fn via_channel(&self) -> bool {
        true
    }

    /// A unicast peer's face; the group's is multi-access.
    fn reliable_capable(&self) -> bool {
        !self.remote.is_multicast()
    }

    fn clamp_mtu(&self, mtu: usize) -> usize {
        mtu.min(self.link.mtu)
    }

    fn is_up(&self) -> bool {
        self.link.up
    }

    fn follow_link(&mut self, link: LinkState) -> Option<bool> {
        let flipped = link.up != self.link.up;
        self.link = link;
        Some(flipped)
    }
}
