//! The system calls std and mio do not offer: `recvmmsg`, `sendmmsg`, AF_PACKET sockets
//! ([`packet`]) and UDP segmentation offload ([`segment`]). Every `unsafe` block of the
//! crate's sockets lives here; the others touch memory the kernel or a peer shares (the
//! shared-memory faces, the AF_XDP rings and UMEM, the XDP program's maps).
#![allow(unsafe_code)]

pub mod packet;
pub mod segment;

use std::io;
use std::mem;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, SystemTime};

/// Datagrams read (or written) by one `recvmmsg` (`sendmmsg`) call.
pub const BATCH: usize = 32;

/// Buffers for receiving one burst of datagrams, allocated once and reused.
pub struct RecvBatch {
    slots: Vec<u8>,
    slot_len: usize,
    lens: [usize; BATCH],
    truncated: [bool; BATCH],
    addrs: Box<[libc::sockaddr_storage; BATCH]>,
    /// With coalesced receive ([`segment::enable_gro`]): each message's control buffer and
    /// the segment length it reported (0: one datagram).
    gro: Option<Box<GroState>>,
    /// With kernel receive times ([`RecvBatch::stamped`]): each message's control buffer, and
    /// when the kernel received the newest message of the last burst.
    stamps: Option<Box<StampState>>,
}

/// Control buffers of a [`RecvBatch`] that reads the kernel's receive times.
struct StampState {
    /// Room for one `SCM_TIMESTAMPNS` message each (a header and a timespec).
    controls: [[u64; 4]; BATCH],
    newest: Option<SystemTime>,
}

/// Control buffers and segment lengths of a coalescing [`RecvBatch`].
struct GroState {
    controls: [[u64; 4]; BATCH],
    segments: [usize; BATCH],
}

impl std::fmt::Debug for RecvBatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecvBatch")
            .field("slot_len", &self.slot_len)
            .finish()
    }
}

impl RecvBatch {
    /// Room for [`BATCH`] datagrams of up to `slot_len` octets each.
    pub fn new(slot_len: usize) -> Self {
        RecvBatch {
            slots: vec![0; slot_len * BATCH],
            slot_len,
            lens: [0; BATCH],
            truncated: [false; BATCH],
            // SAFETY: sockaddr_storage is plain old data; all-zero is a valid value.
            addrs: Box::new(unsafe { mem::zeroed() }),
            gro: None,
            stamps: None,
        }
    }

    /// [`RecvBatch::new`] that also reads when the kernel received each burst's newest
    /// datagram (see [`RecvBatch::waited`]), from a socket asked for receive times
    /// (`SO_TIMESTAMPNS`, which this crate sets on Ethernet channels).
    pub fn stamped(slot_len: usize) -> Self {
        RecvBatch {
            stamps: Some(Box::new(StampState {
                controls: [[0; 4]; BATCH],
                newest: None,
            })),
            ..Self::new(slot_len)
        }
    }

    /// Room for [`BATCH`] messages from a socket with coalesced receive on
    /// ([`segment::enable_gro`]): slots of the largest UDP message, and the segment length
    /// of each message read (see [`RecvBatch::segment_len`]).
    pub fn coalescing() -> Self {
        RecvBatch {
            gro: Some(Box::new(GroState {
                controls: [[0; 4]; BATCH],
                segments: [0; BATCH],
            })),
            ..Self::new(segment::MAX_MESSAGE)
        }
    }

    /// [`RecvBatch::recv`], retried when a signal interrupts it; `None` when nothing is
    /// waiting (the socket is drained).
    pub fn recv_ready(&mut self, fd: RawFd) -> io::Result<Option<usize>> {
        self.recv_ready_at_most(fd, BATCH)
    }

    /// [`RecvBatch::recv_ready`] of at most `max` (at most [`BATCH`]) datagrams.
    pub fn recv_ready_at_most(&mut self, fd: RawFd, max: usize) -> io::Result<Option<usize>> {
        loop {
            match self.recv_at_most(fd, max) {
                Ok(n) => return Ok(Some(n)),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(None),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Receives up to [`BATCH`] datagrams from `fd` in one `recvmmsg` call; returns how many.
    /// A datagram longer than a slot arrives truncated (see [`RecvBatch::truncated`]).
    pub fn recv(&mut self, fd: RawFd) -> io::Result<usize> {
        self.recv_at_most(fd, BATCH)
    }

    /// [`RecvBatch::recv`] of at most `max` (at most [`BATCH`]) datagrams.
    fn recv_at_most(&mut self, fd: RawFd, max: usize) -> io::Result<usize> {
        let max = max.min(BATCH);
        // SAFETY: iovec and mmsghdr are plain old data; all-zero is a valid value.
        let mut iov: [libc::iovec; BATCH] = unsafe { mem::zeroed() };
        // SAFETY: as above.
        let mut hdrs: [libc::mmsghdr; BATCH] = unsafe { mem::zeroed() };
        for (i, ((v, h), chunk)) in iov
            .iter_mut()
            .zip(hdrs.iter_mut())
            .zip(self.slots.chunks_exact_mut(self.slot_len))
            .enumerate()
        {
            v.iov_base = chunk.as_mut_ptr().cast();
            v.iov_len = chunk.len();
            h.msg_hdr.msg_iov = v;
            h.msg_hdr.msg_iovlen = 1;
            h.msg_hdr.msg_name = (&mut self.addrs[i] as *mut libc::sockaddr_storage).cast();
            h.msg_hdr.msg_namelen = mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
            if let Some(g) = self.gro.as_deref_mut() {
                h.msg_hdr.msg_control = g.controls[i].as_mut_ptr().cast();
                h.msg_hdr.msg_controllen = mem::size_of_val(&g.controls[i]) as _;
            } else if let Some(s) = self.stamps.as_deref_mut() {
                h.msg_hdr.msg_control = s.controls[i].as_mut_ptr().cast();
                h.msg_hdr.msg_controllen = mem::size_of_val(&s.controls[i]) as _;
            }
        }
        // SAFETY: every header points at a live slot of `self.slots` and a live address slot,
        // both exclusively borrowed for the call; the kernel writes within the given lengths.
        let n = unsafe {
            libc::recvmmsg(
                fd,
                hdrs.as_mut_ptr(),
                max as libc::c_uint,
                libc::MSG_DONTWAIT,
                std::ptr::null_mut(),
            )
        };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        let n = n as usize;
        for ((len, cut), h) in self
            .lens
            .iter_mut()
            .zip(self.truncated.iter_mut())
            .zip(&hdrs[..n])
        {
            *len = (h.msg_len as usize).min(self.slot_len);
            *cut = h.msg_hdr.msg_flags & libc::MSG_TRUNC != 0;
        }
        if let Some(g) = self.gro.as_deref_mut() {
            for (seg, h) in g.segments.iter_mut().zip(&hdrs[..n]) {
                *seg = segment::gro_segment_len(&h.msg_hdr);
            }
        }
        if let Some(s) = self.stamps.as_deref_mut() {
            // Datagrams are queued in arrival order: the last one read is the newest.
            s.newest = hdrs[..n].last().and_then(|h| receive_time(&h.msg_hdr));
        }
        Ok(n)
    }

    /// How long the newest datagram of the last burst waited in the socket's receive queue
    /// (from when the kernel received it to now; every other datagram of the burst waited
    /// longer). Zero without kernel receive times ([`RecvBatch::stamped`]), and when the
    /// realtime clock was set back meanwhile.
    pub fn waited(&self) -> Duration {
        let newest = self.stamps.as_deref().and_then(|s| s.newest);
        newest.map_or(Duration::ZERO, |t| {
            SystemTime::now().duration_since(t).unwrap_or_default()
        })
    }

    /// The length of the datagrams message `i` of the last burst coalesced (each but the
    /// last exactly this long); `None` when it is one datagram.
    pub fn segment_len(&self, i: usize) -> Option<usize> {
        let g = self.gro.as_deref()?;
        let len = g.segments[i];
        (len > 0 && len < self.lens[i]).then_some(len)
    }

    /// The datagrams message `i` of the last burst holds: itself, or those a coalesced
    /// message is cut into at its segment length (none when it was truncated).
    pub fn datagrams(&self, i: usize) -> std::slice::Chunks<'_, u8> {
        let message = self.datagram(i);
        message.chunks(self.segment_len(i).unwrap_or(message.len()).max(1))
    }

    /// Whether datagram `i` of the last burst was longer than a slot.
    pub fn truncated(&self, i: usize) -> bool {
        self.truncated[i]
    }

    /// Datagram `i` of the last burst (empty when truncated).
    pub fn datagram(&self, i: usize) -> &[u8] {
        if self.truncated(i) {
            &[]
        } else {
            self.head(i)
        }
    }

    /// The octets of datagram `i` that fit in its slot: all of it, or the head of a truncated
    /// one (enough to read a link header and learn its sender).
    pub fn head(&self, i: usize) -> &[u8] {
        let start = i * self.slot_len;
        &self.slots[start..start + self.lens[i]]
    }

    /// The sender of datagram `i` of the last burst.
    pub fn source(&self, i: usize) -> Option<SocketAddr> {
        from_storage(&self.addrs[i])
    }
}

/// Asks the kernel to attach to each datagram read from `fd` when it received it
/// (`SO_TIMESTAMPNS`; read with a [`RecvBatch::stamped`]). The time is taken as the frame
/// enters the host's receive path, so a wait in the socket's queue (or before it, in the
/// device's backlog) shows in it.
pub fn timestamp_arrivals(fd: RawFd) -> io::Result<()> {
    let on: libc::c_int = 1;
    // SAFETY: `on` is a live c_int of the length given; setsockopt(2) only reads it.
    let r = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_TIMESTAMPNS,
            (&on as *const libc::c_int).cast(),
            mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The kernel's receive time in a header `recvmmsg` just filled, if it carries one.
fn receive_time(hdr: &libc::msghdr) -> Option<SystemTime> {
    // SAFETY: `hdr` is a header the kernel just filled: its control pointer and length
    // describe the control buffer the caller gave it, which is still borrowed, and the
    // CMSG_* walk stays within that length.
    let ts = unsafe {
        let mut c = libc::CMSG_FIRSTHDR(hdr);
        loop {
            if c.is_null() {
                return None;
            }
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_TIMESTAMPNS {
                break libc::CMSG_DATA(c).cast::<libc::timespec>().read_unaligned();
            }
            c = libc::CMSG_NXTHDR(hdr, c);
        }
    };
    let secs = u64::try_from(ts.tv_sec).ok()?;
    let nanos = u32::try_from(ts.tv_nsec).ok()?;
    SystemTime::UNIX_EPOCH.checked_add(Duration::new(secs, nanos))
}

/// Sends each of `frames` (each frame the concatenation of its `N` parts) to `dest` (or the
/// connected or bound peer) in one `sendmmsg` call; returns how many frames were sent.
pub fn send_mmsg<const N: usize>(
    fd: RawFd,
    dest: Option<SocketAddr>,
    frames: &[[&[u8]; N]],
) -> io::Result<usize> {
    let n = frames.len().min(BATCH);
    // SAFETY: plain old data; all-zero is valid.
    let mut iov: [[libc::iovec; N]; BATCH] = unsafe { mem::zeroed() };
    // SAFETY: as above.
    let mut hdrs: [libc::mmsghdr; BATCH] = unsafe { mem::zeroed() };
    let (mut addr, addr_len) = match dest {
        Some(a) => to_storage(a),
        // SAFETY: as above.
        None => (unsafe { mem::zeroed() }, 0),
    };
    for ((v, h), parts) in iov.iter_mut().zip(hdrs.iter_mut()).zip(&frames[..n]) {
        for (slot, part) in v.iter_mut().zip(parts) {
            slot.iov_base = part.as_ptr() as *mut libc::c_void;
            slot.iov_len = part.len();
        }
        h.msg_hdr.msg_iov = v.as_mut_ptr();
        h.msg_hdr.msg_iovlen = N;
        if addr_len > 0 {
            h.msg_hdr.msg_name = (&mut addr as *mut libc::sockaddr_storage).cast();
            h.msg_hdr.msg_namelen = addr_len;
        }
    }
    // SAFETY: the headers point at iovecs and an address that live through the call; the
    // iovecs point at borrowed frame octets the kernel only reads.
    let sent =
        unsafe { libc::sendmmsg(fd, hdrs.as_mut_ptr(), n as libc::c_uint, libc::MSG_DONTWAIT) };
    if sent < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(sent as usize)
}

/// The socket address in `ss`, for IPv4 and IPv6.
fn from_storage(ss: &libc::sockaddr_storage) -> Option<SocketAddr> {
    match i32::from(ss.ss_family) {
        libc::AF_INET => {
            // SAFETY: the family says `ss` holds a sockaddr_in, which fits in the storage.
            let a: libc::sockaddr_in = unsafe { *(ss as *const _ as *const libc::sockaddr_in) };
            let ip = Ipv4Addr::from(u32::from_be(a.sin_addr.s_addr));
            Some(SocketAddr::V4(SocketAddrV4::new(
                ip,
                u16::from_be(a.sin_port),
            )))
        }
        libc::AF_INET6 => {
            // SAFETY: the family says `ss` holds a sockaddr_in6, which fits in the storage.
            let a: libc::sockaddr_in6 = unsafe { *(ss as *const _ as *const libc::sockaddr_in6) };
            Some(SocketAddr::V6(SocketAddrV6::new(
                Ipv6Addr::from(a.sin6_addr.s6_addr),
                u16::from_be(a.sin6_port),
                a.sin6_flowinfo,
                a.sin6_scope_id,
            )))
        }
        _ => None,
    }
}

/// `a` as a sockaddr_storage and its length.
fn to_storage(a: SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
    // SAFETY: plain old data; all-zero is valid.
    let mut ss: libc::sockaddr_storage = unsafe { mem::zeroed() };
    let len = match a {
        SocketAddr::V4(v4) => {
            // SAFETY: sockaddr_in fits in sockaddr_storage, which is suitably aligned.
            let sin = unsafe { &mut *(&mut ss as *mut _ as *mut libc::sockaddr_in) };
            sin.sin_family = libc::AF_INET as libc::sa_family_t;
            sin.sin_port = v4.port().to_be();
            sin.sin_addr.s_addr = u32::from(*v4.ip()).to_be();
            mem::size_of::<libc::sockaddr_in>()
        }
        SocketAddr::V6(v6) => {
            // SAFETY: sockaddr_in6 fits in sockaddr_storage, which is suitably aligned.
            let sin6 = unsafe { &mut *(&mut ss as *mut _ as *mut libc::sockaddr_in6) };
            sin6.sin6_family = libc::AF_INET6 as libc::sa_family_t;
            sin6.sin6_port = v6.port().to_be();
            sin6.sin6_addr.s6_addr = v6.ip().octets();
            sin6.sin6_flowinfo = v6.flowinfo();
            sin6.sin6_scope_id = v6.scope_id();
            mem::size_of::<libc::sockaddr_in6>()
        }
    };
    (ss, len as libc::socklen_t)
}

/// The process's soft limit on open file descriptors (`RLIMIT_NOFILE`); `None` when it cannot
/// be read or is unlimited.
pub fn fd_limit() -> Option<usize> {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `r` is a live local the kernel fills in; the call has no other effect.
    let rc = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) };
    (rc == 0 && r.rlim_cur != libc::RLIM_INFINITY).then_some(r.rlim_cur as usize)
}

/// The share of the process's file descriptor limit that one kind of descriptor peers make
/// may hold (UDP faces' own sockets, accepted connections), so that peers can never take the
/// descriptors local applications, management and the operator's faces need.
#[derive(Debug)]
pub(crate) struct FdShare {
    used: AtomicUsize,
    /// The limit is divided by this (read once, after `kite run` raised it).
    divisor: usize,
    limit: OnceLock<usize>,
}

/// One descriptor's place in an [`FdShare`], given back when dropped.
#[derive(Debug)]
pub(crate) struct FdSlot(&'static FdShare);

impl FdShare {
    /// A share of `1 / divisor` of the limit.
    pub const fn new(divisor: usize) -> Self {
        FdShare {
            used: AtomicUsize::new(0),
            divisor,
            limit: OnceLock::new(),
        }
    }

    fn limit(&self) -> usize {
        *(self.limit).get_or_init(|| fd_limit().map_or(usize::MAX, |n| n / self.divisor))
    }

    /// A place, if one is free.
    pub fn take(&'static self) -> Option<FdSlot> {
        let limit = self.limit();
        (self.used)
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                (n < limit).then_some(n + 1)
            })
            .ok()
            .map(|_| FdSlot(self))
    }

    /// A place even beyond the share, for one that another gives back soon.
    pub fn take_anyway(&'static self) -> FdSlot {
        self.used.fetch_add(1, Ordering::Relaxed);
        FdSlot(self)
    }
}

impl Drop for FdSlot {
    fn drop(&mut self) {
        self.0.used.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Raises the process's soft limit on open file descriptors to its hard limit, as a daemon
/// holding a descriptor per face and connection needs (the budgets of UDP face sockets and
/// accepted connections are shares of it, read after this). Returns the soft limit before
/// and after, when it changed.
pub fn raise_fd_limit() -> io::Result<Option<(u64, u64)>> {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `r` is a live local the kernel fills in; the call has no other effect.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) } != 0 {
        return Err(io::Error::last_os_error());
    }
    if r.rlim_cur >= r.rlim_max {
        return Ok(None);
    }
    let before = r.rlim_cur;
    r.rlim_cur = r.rlim_max;
    // SAFETY: `r` is a valid rlimit whose soft limit does not pass its hard one; raising the
    // soft limit only lets the process open more descriptors.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &r) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(Some((before, r.rlim_cur)))
}

/// The MTU of the path to `remote` as the kernel knows it (the outgoing interface's, or a
/// smaller one learned by path MTU discovery): a UDP socket connected to `remote` (which
/// looks up the route and sends nothing), asked for `IP_MTU` or `IPV6_MTU`.
pub fn path_mtu(remote: SocketAddr) -> io::Result<usize> {
    let socket = std::net::UdpSocket::bind(match remote {
        SocketAddr::V4(_) => SocketAddr::from((Ipv4Addr::UNSPECIFIED, 0)),
        SocketAddr::V6(_) => SocketAddr::from((Ipv6Addr::UNSPECIFIED, 0)),
    })?;
    socket.connect(remote)?;
    let (level, name) = match remote {
        SocketAddr::V4(_) => (libc::IPPROTO_IP, libc::IP_MTU),
        SocketAddr::V6(_) => (libc::IPPROTO_IPV6, libc::IPV6_MTU),
    };
    let mut mtu: libc::c_int = 0;
    let mut len = mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: `mtu` and `len` are live locals; the kernel writes at most `len` octets (one
    // c_int) into `mtu` and the actual length into `len`.
    let rc = unsafe {
        libc::getsockopt(
            std::os::fd::AsRawFd::as_raw_fd(&socket),
            level,
            name,
            (&mut mtu as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    usize::try_from(mtu).map_err(|_| io::Error::other("negative MTU"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::UdpSocket;
    use std::os::fd::AsRawFd;

    #[test]
    fn the_path_mtu_of_loopback_is_the_loopback_interface_mtu() {
        let lo = std::fs::read_to_string("/sys/class/net/lo/mtu")
            .ok()
            .and_then(|s| s.trim().parse::<usize>().ok());
        let got = path_mtu("127.0.0.1:6363".parse().unwrap()).unwrap();
        if let Some(lo) = lo {
            // An IP datagram is at most 65535 octets, whatever the interface allows.
            assert_eq!(got, lo.min(65535));
        }
        assert!(got >= 1280, "{got}");
    }

    #[test]
    fn addresses_survive_the_round_trip_through_sockaddr_storage() {
        for s in ["127.0.0.1:6363", "[::1]:9", "[2001:db8::7]:65535"] {
            let a: SocketAddr = s.parse().unwrap();
            assert_eq!(from_storage(&to_storage(a).0), Some(a));
        }
    }

    #[test]
    fn sendmmsg_and_recvmmsg_move_a_burst_with_sources_and_truncation() {
        let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        let frames: Vec<[&[u8]; 2]> = vec![[b"ab", b"cd"], [b"", b"x"], [b"0123456789", b""]];
        let sent = send_mmsg(tx.as_raw_fd(), Some(rx.local_addr().unwrap()), &frames).unwrap();
        assert_eq!(sent, 3);
        let mut batch = RecvBatch::new(8);
        let n = batch.recv(rx.as_raw_fd()).unwrap();
        assert_eq!(n, 3);
        assert_eq!(batch.datagram(0), b"abcd");
        assert_eq!(batch.datagram(1), b"x");
        assert!(batch.truncated(2));
        assert_eq!(batch.datagram(2), b"");
        assert_eq!(
            batch.head(2),
            b"01234567",
            "the head of a truncated datagram stays"
        );
        assert_eq!(batch.source(0), Some(tx.local_addr().unwrap()));
        let err = batch.recv(rx.as_raw_fd()).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::WouldBlock);
        assert_eq!(batch.recv_ready(rx.as_raw_fd()).unwrap(), None, "drained");
        tx.send_to(b"again", rx.local_addr().unwrap()).unwrap();
        assert_eq!(batch.recv_ready(rx.as_raw_fd()).unwrap(), Some(1));
    }

    #[test]
    fn a_share_of_the_fd_limit_gives_places_back_when_they_drop() {
        static NONE: FdShare = FdShare::new(usize::MAX);
        assert!(NONE.take().is_none(), "a share of no descriptor");
        let forced = NONE.take_anyway();
        assert_eq!(NONE.used.load(Ordering::Relaxed), 1);
        drop(forced);
        assert_eq!(NONE.used.load(Ordering::Relaxed), 0);
        static HALF: FdShare = FdShare::new(2);
        let slots: Vec<FdSlot> = (0..3).map(|_| HALF.take().unwrap()).collect();
        assert_eq!(HALF.used.load(Ordering::Relaxed), 3);
        drop(slots);
        assert_eq!(HALF.used.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn the_fd_limit_is_read_as_getrlimit_reports_it_and_raised_to_the_hard_limit() {
        // One test: nothing else in this process changes the limit meanwhile.
        let limits = || {
            let text = std::fs::read_to_string("/proc/self/limits").unwrap();
            let line = text
                .lines()
                .find(|l| l.starts_with("Max open files"))
                .unwrap();
            let field = |i| {
                line.split_whitespace()
                    .nth(i)
                    .unwrap()
                    .parse::<usize>()
                    .ok()
            };
            (field(3), field(4))
        };
        let (soft, hard) = limits();
        assert_eq!(fd_limit(), soft);
        raise_fd_limit().unwrap();
        assert_eq!(limits(), (hard, hard));
        assert_eq!(fd_limit(), hard);
        assert_eq!(raise_fd_limit().unwrap(), None, "already at the maximum");
    }
}
