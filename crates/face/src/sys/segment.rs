//! UDP generic segmentation offload (`UDP_SEGMENT`, Linux 4.18+): a run of equal-length
//! datagrams to one destination goes down the network stack as one message and is cut into
//! datagrams at the bottom (by the NIC, or in software just before delivery on loopback), so
//! the route lookup, IP output and device queueing are paid once per run instead of once per
//! datagram. Measured on the loopback of a 2-vCPU x86-64 VM with 64-datagram bursts: 1000-octet
//! datagrams 237 k/s with `sendmmsg` vs 790 k/s segmented; 8000-octet 154 k/s vs 365 k/s.

use std::io;
use std::mem;
use std::net::SocketAddr;
use std::os::fd::RawFd;

use super::to_storage;

/// Frames one [`send_segmented`] call takes: two full runs of `MAX_SEGMENTS` datagrams.
pub const SEGMENTED_BATCH: usize = 2 * MAX_SEGMENTS;

/// Datagrams one segmented message may carry (the kernel's `UDP_MAX_SEGMENTS` on the oldest
/// kernels that have the option).
pub const MAX_SEGMENTS: usize = 64;

/// Octets one segmented message may carry: the largest UDP payload over IPv4.
const MAX_RUN_OCTETS: usize = 65_507;

/// The largest message a coalescing socket can return (a whole IP packet's worth).
pub const MAX_MESSAGE: usize = 65_535;

/// Turns on coalesced receive (`UDP_GRO`, Linux 5.0+) on UDP socket `fd`: a run of
/// same-length datagrams from one sender (a peer's segmented message, or what the NIC's GRO
/// merged) is read as one message, with its segment length in a control message, instead of
/// being cut into datagrams in the sender's send path (on loopback) and queued one by one.
/// Read it with [`RecvBatch::coalescing`](super::RecvBatch::coalescing).
pub fn enable_gro(fd: RawFd) -> io::Result<()> {
    let on: libc::c_int = 1;
    // SAFETY: `on` lives through the call and the length given is its size.
    let r = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_UDP,
            libc::UDP_GRO,
            (&on as *const libc::c_int).cast(),
            mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The segment length a received message's `UDP_GRO` control message reports (0: none).
pub(super) fn gro_segment_len(hdr: &libc::msghdr) -> usize {
    // SAFETY: `hdr` is a header the kernel just filled: its control pointer and length
    // describe the control buffer the caller gave it, which is still borrowed, and the
    // CMSG_* walk stays within that length.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(hdr);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_UDP && (*c).cmsg_type == libc::UDP_GRO {
                let data = libc::CMSG_DATA(c).cast::<libc::c_int>();
                return usize::try_from(data.read_unaligned()).unwrap_or(0);
            }
            c = libc::CMSG_NXTHDR(hdr, c);
        }
    }
    0
}

/// Which runs a socket's destination takes segmented. A path whose MTU is below a segment
/// (the kernel answers `EINVAL`) lowers the largest segment tried; a device that cannot
/// segment at all (`EIO`) turns it off. Either way the refused frames go again unsegmented.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segmenter {
    /// Longest segment still tried (0: never segment).
    limit: usize,
}

impl Segmenter {
    /// Segmentation on for a socket whose kernel knows `UDP_SEGMENT`, off otherwise: a kernel
    /// older than the option would ignore the control message and send each run as one
    /// datagram.
    pub fn for_socket(fd: RawFd) -> Self {
        let mut size: libc::c_int = 0;
        let mut len = mem::size_of::<libc::c_int>() as libc::socklen_t;
        // SAFETY: `size` and `len` live through the call and `len` is `size`'s size.
        let r = unsafe {
            libc::getsockopt(
                fd,
                libc::SOL_UDP,
                libc::UDP_SEGMENT,
                (&mut size as *mut libc::c_int).cast(),
                &mut len,
            )
        };
        Segmenter {
            limit: if r == 0 { usize::MAX } else { 0 },
        }
    }

    /// Whether frames of `len` octets may go out segmented.
    pub fn allows(&self, len: usize) -> bool {
        len > 0 && len <= self.limit
    }

    /// Learns from the kernel refusing a segmented message of `len`-octet segments with
    /// `err`; false when the error is not about segmentation (the caller reports it).
    fn refused(&mut self, len: usize, err: &io::Error) -> bool {
        match err.raw_os_error() {
            Some(libc::EINVAL) | Some(libc::EMSGSIZE) => self.limit = len - 1,
            Some(libc::EIO) | Some(libc::ENOPROTOOPT) | Some(libc::EOPNOTSUPP) => self.limit = 0,
            _ => return false,
        }
        true
    }
}

/// The `UDP_SEGMENT` control message of one segmented message.
#[repr(C)]
#[derive(Clone, Copy)]
struct SegmentCmsg {
    hdr: libc::cmsghdr,
    /// The segment length in the first element; the rest pads to the cmsg alignment.
    len: [u16; 4],
}

/// Sends `frames` (each the concatenation of its `N` parts) to `dest` (or the connected or
/// bound peer) in one `sendmmsg` call, runs of consecutive frames of one length (the last of a
/// run may be shorter) as one segmented message each when `seg` allows that length. Returns
/// how many frames were sent: a prefix of `frames` (at most [`SEGMENTED_BATCH`]).
pub fn send_segmented<const N: usize>(
    fd: RawFd,
    dest: Option<SocketAddr>,
    frames: &[[&[u8]; N]],
    seg: &mut Segmenter,
) -> io::Result<usize> {
    let n = frames.len().min(SEGMENTED_BATCH);
    let mut lens = [0usize; SEGMENTED_BATCH];
    for (len, parts) in lens.iter_mut().zip(&frames[..n]) {
        *len = parts.iter().map(|p| p.len()).sum();
    }
    // SAFETY: plain old data; all-zero is valid.
    let mut iov: [[libc::iovec; N]; SEGMENTED_BATCH] = unsafe { mem::zeroed() };
    for (v, parts) in iov.iter_mut().zip(&frames[..n]) {
        for (slot, part) in v.iter_mut().zip(parts) {
            slot.iov_base = part.as_ptr() as *mut libc::c_void;
            slot.iov_len = part.len();
        }
    }
    let (mut addr, addr_len) = match dest {
        Some(a) => to_storage(a),
        // SAFETY: plain old data; all-zero is valid.
        None => (unsafe { mem::zeroed() }, 0),
    };
    loop {
        // SAFETY: plain old data; all-zero is valid.
        let mut hdrs: [libc::mmsghdr; SEGMENTED_BATCH] = unsafe { mem::zeroed() };
        // SAFETY: as above.
        let mut cmsgs: [SegmentCmsg; SEGMENTED_BATCH] = unsafe { mem::zeroed() };
        let mut counts = [0usize; SEGMENTED_BATCH];
        let runs = plan_runs(&lens[..n], seg, &mut counts);
        let iov_base = iov.as_mut_ptr().cast::<libc::iovec>();
        let mut first = 0;
        for ((h, c), &count) in hdrs.iter_mut().zip(cmsgs.iter_mut()).zip(&counts[..runs]) {
            // SAFETY: `first + count <= n <= SEGMENTED_BATCH`, so the run's iovecs lie inside
            // `iov`, whose rows are contiguous.
            h.msg_hdr.msg_iov = unsafe { iov_base.add(first * N) };
            h.msg_hdr.msg_iovlen = N * count;
            if addr_len > 0 {
                h.msg_hdr.msg_name = (&mut addr as *mut libc::sockaddr_storage).cast();
                h.msg_hdr.msg_namelen = addr_len;
            }
            if count > 1 {
                c.hdr.cmsg_level = libc::SOL_UDP;
                c.hdr.cmsg_type = libc::UDP_SEGMENT;
                // SAFETY: CMSG_LEN only computes a length.
                c.hdr.cmsg_len = unsafe { libc::CMSG_LEN(mem::size_of::<u16>() as u32) } as _;
                c.len[0] = lens[first] as u16;
                h.msg_hdr.msg_control = (c as *mut SegmentCmsg).cast();
                h.msg_hdr.msg_controllen = mem::size_of::<SegmentCmsg>() as _;
            }
            first += count;
        }
        // SAFETY: the headers point at iovecs, control messages and an address that live
        // through the call; the iovecs point at borrowed frame octets the kernel only reads.
        let sent = unsafe {
            libc::sendmmsg(
                fd,
                hdrs.as_mut_ptr(),
                runs as libc::c_uint,
                libc::MSG_DONTWAIT,
            )
        };
        if sent >= 0 {
            return Ok(counts[..sent as usize].iter().sum());
        }
        let err = io::Error::last_os_error();
        // Only the first message can have failed (later failures end the call early and
        // surface on the next one, which starts with them).
        if counts[0] > 1 && seg.refused(lens[0], &err) {
            continue;
        }
        return Err(err);
    }
}

/// Splits frames of `lens` into runs (one message each): a run is frames of one length
/// followed by at most one shorter frame, within [`MAX_SEGMENTS`] and [`MAX_RUN_OCTETS`], of a
/// length `seg` allows. Writes each run's frame count to `counts`; returns the run count.
fn plan_runs(lens: &[usize], seg: &Segmenter, counts: &mut [usize; SEGMENTED_BATCH]) -> usize {
    let mut runs = 0;
    let mut i = 0;
    while i < lens.len() {
        let len = lens[i];
        let mut j = i + 1;
        if seg.allows(len) {
            let mut total = len;
            while j < lens.len()
                && j - i < MAX_SEGMENTS
                && lens[j] <= len
                && total + lens[j] <= MAX_RUN_OCTETS
            {
                total += lens[j];
                j += 1;
                if lens[j - 1] < len {
                    break;
                }
            }
        }
        counts[runs] = j - i;
        runs += 1;
        i = j;
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::RecvBatch;
    use std::net::UdpSocket;
    use std::os::fd::AsRawFd;

    const ON: Segmenter = Segmenter { limit: usize::MAX };

    fn plan(lens: &[usize], seg: Segmenter) -> Vec<usize> {
        let mut counts = [0; SEGMENTED_BATCH];
        let runs = plan_runs(lens, &seg, &mut counts);
        counts[..runs].to_vec()
    }

    #[test]
    fn runs_are_equal_lengths_closed_by_at_most_one_shorter_frame() {
        assert_eq!(plan(&[5, 5, 5, 3, 5, 5], ON), [4, 2]);
        assert_eq!(plan(&[5, 7, 7, 7], ON), [1, 3]);
        assert_eq!(plan(&[5, 3, 3], ON), [2, 1]);
        assert_eq!(plan(&[5, 5, 5], Segmenter { limit: 0 }), [1, 1, 1]);
        assert_eq!(plan(&[], ON), Vec::<usize>::new());
    }

    #[test]
    fn runs_respect_the_segment_count_octet_and_length_limits() {
        assert_eq!(plan(&[10; 100], ON), [64, 36]);
        assert_eq!(plan(&[8000; 12], ON), [8, 4]);
        let limited = Segmenter { limit: 999 };
        assert_eq!(plan(&[1000, 1000, 999, 999], limited), [1, 1, 2]);
    }

    #[test]
    fn a_refused_length_is_not_tried_again_and_eio_turns_segmentation_off() {
        let mut s = ON;
        assert!(s.refused(1500, &io::Error::from_raw_os_error(libc::EINVAL)));
        assert!(!s.allows(1500) && s.allows(1499));
        assert!(!s.refused(100, &io::Error::from_raw_os_error(libc::EAGAIN)));
        assert!(s.refused(100, &io::Error::from_raw_os_error(libc::EIO)));
        assert!(!s.allows(1));
    }

    #[test]
    fn segmented_runs_work_over_ipv6_too() {
        // Hosts without IPv6 on loopback cannot run this; everything else must.
        let Ok(rx) = UdpSocket::bind("[::1]:0") else {
            kite_testkit::skip("no IPv6 on loopback");
            return;
        };
        let tx = UdpSocket::bind("[::1]:0").unwrap();
        rx.set_read_timeout(Some(std::time::Duration::from_secs(5)))
            .unwrap();
        let frames: Vec<[&[u8]; 1]> = (0..10u8).map(|_| [&[7u8; 1200][..]]).collect();
        let mut seg = Segmenter::for_socket(tx.as_raw_fd());
        let to = Some(rx.local_addr().unwrap());
        assert_eq!(
            send_segmented(tx.as_raw_fd(), to, &frames, &mut seg).unwrap(),
            10
        );
        let mut buf = [0u8; 4096];
        for _ in 0..10 {
            assert_eq!(rx.recv(&mut buf).unwrap(), 1200);
        }
    }

    #[test]
    fn a_coalescing_socket_reads_a_segmented_run_as_one_message() {
        let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
        enable_gro(rx.as_raw_fd()).unwrap();
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        let run: Vec<[&[u8]; 1]> = vec![[&[1; 700]], [&[2; 700]], [&[3; 300]]];
        let mut seg = ON;
        let to = Some(rx.local_addr().unwrap());
        assert_eq!(
            send_segmented(tx.as_raw_fd(), to, &run, &mut seg).unwrap(),
            3
        );
        tx.send_to(&[4; 50], rx.local_addr().unwrap()).unwrap();
        let mut batch = RecvBatch::coalescing();
        let mut got = Vec::new();
        for _ in 0..1000 {
            if let Some(n) = batch.recv_ready(rx.as_raw_fd()).unwrap() {
                got.extend((0..n).map(|i| {
                    let cut: Vec<usize> = batch.datagrams(i).map(<[u8]>::len).collect();
                    (batch.datagram(i).len(), batch.segment_len(i), cut)
                }));
            }
            if got.len() >= 2 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        assert_eq!(
            got,
            [(1700, Some(700), vec![700, 700, 300]), (50, None, vec![50])]
        );
    }

    #[test]
    fn segmented_runs_arrive_as_the_datagrams_they_were() {
        let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        let a = [b'a'; 300];
        let b = [b'b'; 300];
        let tail = [b'c'; 120];
        let other = [b'd'; 50];
        // Two parts per frame: the run boundary must fall between frames, not parts.
        let frames: Vec<[&[u8]; 2]> = vec![
            [&a[..100], &a[100..]],
            [&b[..], &[]],
            [&tail[..60], &tail[60..]],
            [&other[..], &[]],
        ];
        let mut seg = Segmenter::for_socket(tx.as_raw_fd());
        assert_eq!(seg, ON, "this kernel knows UDP_SEGMENT");
        let sent = send_segmented(
            tx.as_raw_fd(),
            Some(rx.local_addr().unwrap()),
            &frames,
            &mut seg,
        )
        .unwrap();
        assert_eq!(sent, 4);
        assert_eq!(seg, ON, "loopback takes segmented messages");
        let mut batch = RecvBatch::new(512);
        let mut got = Vec::new();
        for _ in 0..1000 {
            if let Some(n) = batch.recv_ready(rx.as_raw_fd()).unwrap() {
                got.extend((0..n).map(|i| batch.datagram(i).to_vec()));
            }
            if got.len() >= 4 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        assert_eq!(got, [&a[..], &b[..], &tail[..], &other[..]]);
        assert!(got.iter().all(|d| d.len() <= 300));
    }
}
