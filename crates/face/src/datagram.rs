//! What datagram channels (UDP, Ethernet) hand to their faces: a [`Datagram`] per frame read,
//! copied out of the reusable `recvmmsg` slots into an [`Arena`], back to back in one growing
//! buffer, so the frames handed on are exact-size slices of one allocation; and the way their
//! faces write, [`flush_queue`]: one `sendmmsg` per burst of queued frames (runs of equal-length
//! UDP datagrams segmented by the kernel).

use std::io;
use std::net::SocketAddr;
use std::os::fd::RawFd;

use bytes::{Bytes, BytesMut};
use kite_packet::{LpPacket, NetPacketView};

use crate::queue::OutQueue;
use crate::sys::segment::{send_segmented, Segmenter, SEGMENTED_BATCH};
use crate::sys::{self, BATCH};
use crate::transport::{FaceError, Flushed};
use kite_link::reassembly::Endpoint;
use kite_link::FaceCounters;
use kite_link::FaceId;

/// A frame a channel received for an existing (or just created) face.
#[derive(Debug, Clone)]
pub struct Datagram {
    /// The face it belongs to: pass it to that face's [`Face::receive_frame`](crate::Face::receive_frame).
    pub face: FaceId,
    /// Its sender, as reassembly tells senders apart ([`Endpoint::Peer`] on a
    /// point-to-point face).
    pub from: Endpoint,
    /// The frame (an NDNLPv2 frame or a bare packet); empty for a datagram the channel
    /// could not read whole, which the face counts as malformed.
    pub frame: Bytes,
    /// Octets of the buffer the frame is alone in ([`Arena::receive`]); 0 when it shares one.
    pub own_buffer: usize,
}

impl Datagram {
    /// What a channel hands `face` for a datagram from `from` it had to cut (longer than a
    /// receive slot): an empty frame, so the face counts the drop too.
    pub(crate) fn cut(face: FaceId, from: Endpoint) -> Self {
        Datagram {
            face,
            from,
            frame: Bytes::new(),
            own_buffer: 0,
        }
    }
}

/// Whether `frame` is one well-formed NDN packet: an LpPacket that decodes (with an
/// unfragmented Interest or Data in it that decodes too), or a bare Interest or Data that
/// decodes. Only such a frame from a new sender gets it an on-demand face, so junk from
/// spoofed or scanning sources costs a counter, not a face.
pub(crate) fn is_ndn_packet(frame: &Bytes) -> bool {
    let Ok(lp) = LpPacket::decode(frame.clone()) else {
        return false;
    };
    match lp.fragment {
        Some(f) if !lp.is_fragmented() => NetPacketView::decode(f).is_ok(),
        _ => true,
    }
}

/// Octets the arena grows by.
const ARENA_CHUNK: usize = 256 * 1024;

/// A receive arena (one per socket that reads datagrams): each datagram is copied out of the
/// reusable receive slots into one growing buffer, so the frames handed on are exact-size
/// slices that share an allocation.
#[derive(Debug, Default)]
pub struct Arena {
    buf: BytesMut,
}

impl Arena {
    /// A copy of `d` that shares its allocation with the copies before it.
    pub fn copy(&mut self, d: &[u8]) -> Bytes {
        if self.buf.capacity() - self.buf.len() < d.len() {
            self.buf.reserve(ARENA_CHUNK.max(d.len()));
        }
        self.buf.extend_from_slice(d);
        self.buf.split().freeze()
    }

    /// A received datagram's copy: alone in an idle reusable buffer of this thread when there
    /// is one for its length ([`kite_packet::pool::take_reusable`]), so the CS can keep a
    /// Data in it without a second copy; else [`Arena::copy`]. With the octets of the buffer
    /// it is alone in (0: shared with the arena's other copies).
    pub fn receive(&mut self, d: &[u8]) -> (Bytes, usize) {
        match kite_packet::pool::take_reusable(d.len()) {
            Some(mut own) => {
                own.extend_from_slice(d);
                let held = own.capacity();
                (own.freeze(), held)
            }
            None => (self.copy(d), 0),
        }
    }
}

/// Writes `q` with `sendmmsg` to `dest` (or the socket's bound peer), each frame sent as
/// `header`, the frame, and `padding(frame length)`, until the queue is empty or the socket is
/// full. With `seg` (UDP), runs of equal-length frames go out as segmented messages. A frame
/// the socket refuses for a reason that may pass ([`send_error_passes`]) is dropped and
/// counted, and the flush goes on with the next; another send error drops the frame that
/// caused it and is returned, for the caller to give the face up.
pub(crate) fn flush_queue(
    fd: RawFd,
    dest: Option<SocketAddr>,
    header: &[u8],
    padding: fn(usize) -> &'static [u8],
    mut seg: Option<&mut Segmenter>,
    q: &mut OutQueue,
    c: &mut FaceCounters,
) -> Result<Flushed, FaceError> {
    while !q.is_empty() {
        let res = {
            let (front, _) = q.frames();
            let mut frames: [[&[u8]; 4]; SEGMENTED_BATCH] = [[&[]; 4]; SEGMENTED_BATCH];
            let n = front.len().min(SEGMENTED_BATCH);
            for (slot, f) in frames.iter_mut().zip(front) {
                let [head, body] = f.parts_from(0);
                *slot = [header, head, body, padding(f.len())];
            }
            match seg.as_deref_mut() {
                Some(seg) => send_segmented(fd, dest, &frames[..n], seg),
                None => sys::send_mmsg(fd, dest, &frames[..n.min(BATCH)]),
            }
        };
        match res {
            Ok(sent) => c.n_out_bytes += q.pop_frames(sent) as u64,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(Flushed::Blocked),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                q.pop_frames(1);
                match e.raw_os_error() {
                    Some(libc::ENETDOWN) => c.n_out_link_down += 1,
                    _ if send_error_passes(&e) => c.n_out_send_failed += 1,
                    _ => return Err(e.into()),
                }
            }
        }
    }
    Ok(Flushed::Done)
}

/// Whether a datagram socket's send error concerns the frame or the moment rather than the
/// socket, so the face outlives it: a firewall rule dropping output (EPERM, EACCES), no
/// buffer or queue space (ENOBUFS, ENOMEM), a destination or network that cannot be reached
/// now (EHOSTUNREACH, ENETUNREACH, EHOSTDOWN, ECONNREFUSED from an earlier ICMP error), an
/// address that is not there now (EADDRNOTAVAIL), a frame larger than the path takes now
/// (EMSGSIZE). Anything else (EBADF, EINVAL, ENXIO for an interface gone, …) is for good.
pub(crate) fn send_error_passes(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(
            libc::EPERM
                | libc::EACCES
                | libc::ENOBUFS
                | libc::ENOMEM
                | libc::EHOSTUNREACH
                | libc::ENETUNREACH
                | libc::EHOSTDOWN
                | libc::ECONNREFUSED
                | libc::EADDRNOTAVAIL
                | libc::EMSGSIZE
        )
    )
}

/// No padding: for links without a minimum frame size.
pub(crate) fn no_padding(_: usize) -> &'static [u8] {
    &[]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_decodable_packets_are_ndn() {
        let interest = Bytes::from_static(&[0x05, 0x05, 0x07, 0x03, 0x08, 0x01, b'a']);
        assert!(is_ndn_packet(&interest));
        let mut lp = vec![0x64, 0x09, 0x50, 0x07];
        lp.extend_from_slice(&interest);
        assert!(is_ndn_packet(&Bytes::from(lp)));
        assert!(!is_ndn_packet(&Bytes::from_static(b"x")));
        assert!(!is_ndn_packet(&Bytes::new()));
        // An Interest whose Name is cut short, bare and inside an LpPacket.
        let cut = [0x05, 0x05, 0x07, 0x03, 0x08, 0x05, b'a'];
        assert!(!is_ndn_packet(&Bytes::copy_from_slice(&cut)));
        let mut lp = vec![0x64, 0x09, 0x50, 0x07];
        lp.extend_from_slice(&cut);
        assert!(!is_ndn_packet(&Bytes::from(lp)));
    }

    #[test]
    fn refusals_that_may_pass_are_told_from_broken_sockets() {
        let e = io::Error::from_raw_os_error;
        for passes in [
            libc::EPERM,
            libc::ENOBUFS,
            libc::EHOSTUNREACH,
            libc::EMSGSIZE,
        ] {
            assert!(send_error_passes(&e(passes)), "{passes}");
        }
        for broken in [libc::EBADF, libc::ENOTSOCK, libc::EINVAL, libc::ENXIO] {
            assert!(!send_error_passes(&e(broken)), "{broken}");
        }
    }

    #[test]
    fn a_large_datagram_goes_alone_into_an_idle_reusable_buffer() {
        use kite_packet::pool::{copy_reusable, footprint, give_back, OWN_MIN};
        let mut a = Arena::default();
        let big = vec![7u8; 3000];
        let (frame, own) = a.receive(&big);
        assert_eq!(
            (&frame[..], own),
            (&big[..], 0),
            "none idle: into the arena"
        );
        give_back(copy_reusable(&big));
        let (frame, own) = a.receive(&big);
        assert_eq!((&frame[..], own), (&big[..], footprint(3000)), "alone");
        let (small, own) = a.receive(&[1u8; OWN_MIN - 1]);
        assert_eq!(
            (small.len(), own),
            (OWN_MIN - 1, 0),
            "small ones share the arena"
        );
    }

    #[test]
    fn arena_hands_out_exact_slices_of_one_allocation() {
        let mut a = Arena::default();
        let x = a.copy(b"abc");
        let y = a.copy(b"de");
        assert_eq!(&x[..], b"abc");
        assert_eq!(&y[..], b"de");
        assert_eq!(
            y.as_ptr(),
            x.as_ptr().wrapping_add(3),
            "contiguous, no new allocation"
        );
    }
}
