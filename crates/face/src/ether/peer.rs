//! The Ethernet transport: a face's end on its channel's socket, toward a peer or NDN's
//! group, written with `sendmmsg` on AF_PACKET or into the TX ring of the channel's AF_XDP
//! socket (header, frame, padding); its channel reads for it.

use std::sync::{Arc, Mutex};

use super::frame::{self, HEADER_LEN};
use crate::datagram::flush_queue;
use crate::lanes::LaneStats;
use crate::queue::OutQueue;
use crate::sys::packet::PacketSocket;
use crate::transport::{FaceError, Flushed, LinkState, Progress, RxFrame, Source, Transport};
use crate::uri::FaceUri;
use crate::xdp::socket::XskTx;
use kite_link::FaceCounters;
use kite_link::MacAddr;

/// The socket an Ethernet face writes to, its channel's.
#[derive(Debug)]
pub(crate) enum EtherOut {
    /// The channel's AF_PACKET socket.
    Packet(Arc<PacketSocket>),
    /// The TX half of the channel's first AF_XDP socket. Every face of a channel lives on
    /// the channel's I/O thread, so the lock, taken once per flush, is never contended.
    Xdp(Arc<Mutex<XskTx>>),
}

/// An Ethernet face's end: its channel's socket, the remote address (a peer or the group) and
/// the header every frame to it starts with.
#[derive(Debug)]
pub(crate) struct EtherPeer {
    pub out: EtherOut,
    pub remote: MacAddr,
    /// The channel's URI, `dev://ifname`.
    pub local: FaceUri,
    pub header: [u8; HEADER_LEN],
    pub link: LinkState,
    /// What the channel's lanes received for it, when its channel is steered.
    pub lanes: Option<Arc<LaneStats>>,
}

impl EtherPeer {
    /// Writes the queue (header, frame, padding) until it is empty or the socket is full.
    /// On AF_PACKET, with `sendmmsg`: a frame refused because the link is down (before the
    /// link monitor told the face) or for a reason that may pass is dropped and counted, and
    /// the flush goes on ([`flush_queue`]); another send error drops the frame that caused
    /// it and is returned. On AF_XDP, frames go into the TX ring, published and kicked once.
    pub fn flush(&mut self, q: &mut OutQueue, c: &mut FaceCounters) -> Result<Flushed, FaceError> {
        let tx = match &self.out {
            EtherOut::Packet(socket) => {
                return flush_queue(
                    socket.raw_fd(),
                    None,
                    &self.header,
                    frame::padding,
                    None,
                    q,
                    c,
                )
            }
            EtherOut::Xdp(tx) => tx,
        };
        if !self.link.up {
            c.n_out_link_down += q.len() as u64;
            q.clear();
            return Ok(Flushed::Done);
        }
        let mut tx = tx.lock().unwrap_or_else(|e| e.into_inner());
        let mut pushed = 0;
        let mut too_long = 0;
        {
            let (front, back) = q.frames();
            for f in front.iter().chain(back) {
                let [head, body] = f.parts_from(0);
                let parts = [&self.header[..], head, body, frame::padding(f.len())];
                if HEADER_LEN + f.len() > tx.longest() {
                    // Longer than a UMEM frame (the face's MTU is the interface's, so only a
                    // frame past the link service's fragmentation): dropped, counted.
                    too_long += 1;
                } else if !tx.push(&parts) {
                    break;
                }
                pushed += 1;
            }
        }
        c.n_out_bytes += q.pop_frames(pushed) as u64;
        c.n_out_send_failed += too_long;
        tx.commit()?;
        Ok(if q.is_empty() {
            Flushed::Done
        } else {
            Flushed::Blocked
        })
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

    fn lane_stats(&self) -> Option<&LaneStats> {
        self.lanes.as_deref()
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
