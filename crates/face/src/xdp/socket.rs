//! An AF_XDP socket bound to one receive queue of one interface: its UMEM (frames in ordinary
//! memory, no hugepages) and its four rings, as the kernel's AF_XDP documentation describes
//! them ("AF_XDP", Documentation/networking/af_xdp.rst).
//!
//! The UMEM is split in two halves that never trade frames: the receive half cycles between
//! the fill ring and the RX ring, the transmit half between the TX ring and the completion
//! ring. So [`XskRx`] (owned by the channel that reads) and [`XskTx`] (shared by the faces that
//! write) each own their rings and frames outright, and neither waits on the other.
//!
//! A queue can have lane sockets ([`XskLane`]) beside its home socket: they share the home's
//! UMEM and fill ring (the kernel lets one socket per queue fill it), so each I/O thread
//! reads the frames the XDP program steers to it on a socket of its own, and hands the
//! frames back to the home through a return ring.
//!
//! The rings are written by hand over `libc`'s `if_xdp.h` definitions rather than through a
//! crate: the crates that do it in pure Rust either keep one free list for both directions
//! or hide the rings' need-wakeup flag, and the kernel ABI is small and fixed.
//!
//! Every ring is single-producer, single-consumer between Kite and the kernel: the producer
//! writes descriptors and then publishes its index with a release store; the consumer reads
//! the index with an acquire load and then the descriptors.

// The kernel shares the rings and the UMEM as raw memory; this module is where Kite touches
// them, each access argued where it is made.
#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

/// Octets of the largest UMEM frame (a page: AF_XDP's largest aligned chunk).
pub const FRAME_SIZE: usize = 4096;
/// Octets of the UMEM frame used when frames fit it: twice the frames for the same memory.
pub const SMALL_FRAME_SIZE: usize = 2048;
/// Octets the kernel keeps in front of each received frame (XDP_PACKET_HEADROOM).
pub const HEADROOM: usize = 256;
/// The longest Ethernet frame (header included) a UMEM frame holds.
pub const MAX_FRAME: usize = FRAME_SIZE - HEADROOM;
/// The smallest UMEM: 16 of the largest frames for each direction.
pub const MIN_UMEM: usize = 32 * FRAME_SIZE;

/// Which copy mode the socket was bound in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyMode {
    /// The driver writes into the UMEM directly.
    ZeroCopy,
    /// The kernel copies each frame between its buffers and the UMEM (any driver).
    Copy,
}

/// A memory mapping, unmapped when dropped.
#[derive(Debug)]
struct Mapping {
    ptr: NonNull<u8>,
    len: usize,
}

impl Mapping {
    /// An anonymous private mapping of `len` octets (the UMEM).
    fn anonymous(len: usize) -> io::Result<Self> {
        // SAFETY: a fresh anonymous mapping aliases nothing; the result is checked.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_POPULATE,
                -1,
                0,
            )
        };
        Self::checked(p, len)
    }

    /// The ring of `fd` at page offset `offset`, `len` octets.
    fn ring(fd: RawFd, len: usize, offset: u64) -> io::Result<Self> {
        // SAFETY: maps a ring the kernel made for this socket; the result is checked.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_POPULATE,
                fd,
                offset as libc::off_t,
            )
        };
        Self::checked(p, len)
    }

    fn checked(p: *mut libc::c_void, len: usize) -> io::Result<Self> {
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let ptr = NonNull::new(p.cast()).ok_or_else(|| io::Error::other("mmap gave null"))?;
        Ok(Mapping { ptr, len })
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: the mapping is this value's and nothing points into it once it drops
        // (rings and frames are reached only through the values that own the mappings).
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}

/// One ring: a power-of-two array of `T` with a producer and a consumer index.
#[derive(Debug)]
struct Ring<T> {
    producer: NonNull<AtomicU32>,
    consumer: NonNull<AtomicU32>,
    flags: NonNull<AtomicU32>,
    descs: NonNull<T>,
    mask: u32,
    /// This side's copy of its own index, and of the other side's as last read.
    head: u32,
    other: u32,
    _map: Mapping,
}

impl<T: Copy> Ring<T> {
    fn map(fd: RawFd, size: u32, off: &libc::xdp_ring_offset, pgoff: u64) -> io::Result<Self> {
        let len = off.desc as usize + size as usize * std::mem::size_of::<T>();
        let map = Mapping::ring(fd, len, pgoff)?;
        let at = |o: u64| {
            // SAFETY: the kernel's offsets lie inside the mapping it sized.
            unsafe { NonNull::new_unchecked(map.ptr.as_ptr().add(o as usize)) }
        };
        Ok(Ring {
            producer: at(off.producer).cast(),
            consumer: at(off.consumer).cast(),
            flags: at(off.flags).cast(),
            descs: at(off.desc).cast(),
            mask: size - 1,
            head: 0,
            other: 0,
            _map: map,
        })
    }

    fn index(&self, p: NonNull<AtomicU32>) -> &AtomicU32 {
        // SAFETY: the index words live in the mapping this ring owns, aligned by the kernel.
        unsafe { p.as_ref() }
    }

    fn slot(&self, i: u32) -> *mut T {
        // SAFETY: `i & mask` is below the ring's size, inside the mapping.
        unsafe { self.descs.as_ptr().add((i & self.mask) as usize) }
    }

    /// Whether the kernel asked to be woken (XDP_RING_NEED_WAKEUP) to process this ring.
    fn needs_wakeup(&self) -> bool {
        self.index(self.flags).load(Ordering::Relaxed) & libc::XDP_RING_NEED_WAKEUP != 0
    }

    // Producer side (fill, TX): `head` is our producer index, `other` the kernel's consumer.

    /// Free slots, re-reading the kernel's index when fewer than `want` seemed free. The
    /// index last read may be far behind (the home's receive puts frames back without
    /// reading it), so far that more than the ring's size seems in use: none seems free.
    fn free(&mut self, want: u32) -> u32 {
        let size = self.mask + 1;
        let mut free = size.saturating_sub(self.head.wrapping_sub(self.other));
        if free < want {
            self.other = self.index(self.consumer).load(Ordering::Acquire);
            free = size - self.head.wrapping_sub(self.other);
        }
        free
    }

    /// Writes `v` at the next slot; the caller checked [`Ring::free`].
    fn put(&mut self, v: T) {
        // SAFETY: the slot is free (the kernel consumed it), so only we touch it.
        unsafe { self.slot(self.head).write(v) };
        self.head = self.head.wrapping_add(1);
    }

    /// Publishes what [`Ring::put`] wrote.
    fn publish(&self) {
        self.index(self.producer)
            .store(self.head, Ordering::Release);
    }

    /// Entries published and not yet taken by the kernel.
    fn pending(&mut self) -> u32 {
        self.other = self.index(self.consumer).load(Ordering::Acquire);
        self.head.wrapping_sub(self.other)
    }

    // Consumer side (RX, completion): `head` is our consumer index, `other` the kernel's
    // producer.

    /// Entries ready, re-reading the kernel's index when none seemed ready.
    fn ready(&mut self) -> u32 {
        let mut n = self.other.wrapping_sub(self.head);
        if n == 0 {
            self.other = self.index(self.producer).load(Ordering::Acquire);
            n = self.other.wrapping_sub(self.head);
        }
        n
    }

    /// The `i`-th ready entry; the caller checked [`Ring::ready`].
    fn peek(&self, i: u32) -> T {
        // SAFETY: the kernel produced this slot and will not touch it until we release it.
        unsafe { self.slot(self.head.wrapping_add(i)).read() }
    }

    /// Gives `n` read entries back to the kernel.
    fn release(&mut self, n: u32) {
        self.head = self.head.wrapping_add(n);
        self.index(self.consumer)
            .store(self.head, Ordering::Release);
    }
}

/// What both halves share: the socket and the UMEM. Dropped last, the socket first.
#[derive(Debug)]
struct Shared {
    fd: OwnedFd,
    umem: Mapping,
    /// Octets of each UMEM frame: [`FRAME_SIZE`] or [`SMALL_FRAME_SIZE`].
    frame_size: usize,
}

impl Shared {
    /// The start of the UMEM frame `addr` lies in.
    fn frame_start(&self, addr: u64) -> u64 {
        addr & !(self.frame_size as u64 - 1)
    }
}

impl Shared {
    /// The octets of UMEM frame `addr` (a frame's start plus an offset), `len` long.
    fn frame(&self, addr: u64, len: usize) -> Option<&[u8]> {
        let end = (addr as usize).checked_add(len)?;
        (end <= self.umem.len).then(|| {
            // SAFETY: inside the UMEM; the frame is ours (received, not yet given back).
            unsafe { std::slice::from_raw_parts(self.umem.ptr.as_ptr().add(addr as usize), len) }
        })
    }
}

/// Sizes of an AF_XDP socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct XskConfig {
    /// Octets of UMEM, half for receiving and half for sending; rounded down to a power of
    /// two frames per half, at least [`MIN_UMEM`].
    pub umem_octets: usize,
    /// The longest frame (Ethernet header included) the socket carries, at most
    /// [`MAX_FRAME`]: frames of [`SMALL_FRAME_SIZE`] when it fits one, else [`FRAME_SIZE`].
    pub longest_frame: usize,
}

impl XskConfig {
    /// Octets of each UMEM frame.
    pub fn frame_size(&self) -> usize {
        if self.longest_frame + HEADROOM <= SMALL_FRAME_SIZE {
            SMALL_FRAME_SIZE
        } else {
            FRAME_SIZE
        }
    }
}

/// The receive half: the fill and RX rings and the receive frames.
///
/// It is a queue's home socket: it alone produces into the queue's fill ring, also for the
/// lane sockets ([`XskLane`]) that share its UMEM, which give their frames back through
/// return rings it drains each time it receives.
#[derive(Debug)]
pub struct XskRx {
    fill: Ring<u64>,
    rx: Ring<libc::xdp_desc>,
    /// One per lane: the frames the lane has read, for the fill ring.
    returns: Vec<rtrb::Consumer<u64>>,
    /// Receive frames in the UMEM: the most any ring holds.
    frames: u32,
    shared: Arc<Shared>,
}

/// A socket on the same queue as an [`XskRx`] that shares its UMEM (XDP_SHARED_UMEM) and has
/// an RX ring only: the XDP program steers to it the frames meant for another I/O thread.
/// The kernel lets only one socket of a queue fill the shared fill ring, so the lane hands
/// each frame it has read back to its home through a return ring (single producer, single
/// consumer, no lock) sized to every receive frame: a frame is always in exactly one place
/// (fill ring, kernel, an RX ring, a return ring), so the return ring cannot overflow.
///
/// Field order is drop order: the socket closes before the UMEM it holds alive.
#[derive(Debug)]
pub struct XskLane {
    fd: OwnedFd,
    rx: Ring<libc::xdp_desc>,
    returns: rtrb::Producer<u64>,
    /// Frames read that found the return ring full: zero while the invariant above holds.
    lost: u64,
    shared: Arc<Shared>,
}

/// The transmit half: the TX and completion rings and the transmit frames not in flight.
#[derive(Debug)]
pub struct XskTx {
    tx: Ring<libc::xdp_desc>,
    completion: Ring<u64>,
    /// Addresses of the transmit frames Kite holds (not given to the kernel).
    free: Vec<u64>,
    shared: Arc<Shared>,
}

// SAFETY: each half owns its rings' mappings and frames, and reaches them only through
// `&mut self`; the shared part is the socket and the UMEM mapping, whose two halves are
// disjoint (each half touches only its own frames).
unsafe impl Send for XskRx {}
// SAFETY: as for `XskRx`.
unsafe impl Send for XskTx {}
// SAFETY: as for `XskRx`: the lane's RX ring is its own, and it reads only the frames the
// kernel gave it until it hands them back.
unsafe impl Send for XskLane {}
// SAFETY: `Shared` only hands out slices of frames that the caller owns through one half.
unsafe impl Send for Shared {}
// SAFETY: as above; the UMEM base and length never change.
unsafe impl Sync for Shared {}

fn setsockopt<T>(fd: RawFd, opt: libc::c_int, v: &T) -> io::Result<()> {
    // SAFETY: passes a pointer to a live `T` and its size.
    let r = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_XDP,
            opt,
            (v as *const T).cast(),
            std::mem::size_of::<T>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// The value of SOL_XDP option `opt` of socket `fd`, read into a zeroed `T`.
///
/// # Safety
/// `T` must be plain old data that is valid all zero (the kernel may write fewer octets than
/// `T` holds, as older kernels do for a struct that grew).
unsafe fn getsockopt<T>(fd: RawFd, opt: libc::c_int) -> io::Result<T> {
    // SAFETY: the caller vouches that all zeroes is a valid `T`.
    let mut v: T = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<T>() as libc::socklen_t;
    // SAFETY: the kernel writes at most `len` octets into `v`, which lives through the call.
    let r =
        unsafe { libc::getsockopt(fd, libc::SOL_XDP, opt, (&mut v as *mut T).cast(), &mut len) };
    if r == 0 {
        Ok(v)
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Frames of `frame_size` octets per half for `umem_octets`: a power of two, at least 16.
fn frames_per_half(umem_octets: usize, frame_size: usize) -> u32 {
    let half = (umem_octets.max(MIN_UMEM) / frame_size / 2).clamp(16, 1 << 20);
    1 << (usize::BITS - 1 - half.leading_zeros())
}

/// Opens an AF_XDP socket on queue `queue` of interface `ifindex`: zero-copy when the
/// driver takes it, else copy mode; the rings ask for need-wakeup, so an idle socket costs
/// no CPU. Every receive frame starts in the fill ring.
pub fn open(ifindex: u32, queue: u32, config: XskConfig) -> io::Result<(XskRx, XskTx, CopyMode)> {
    if config.longest_frame > MAX_FRAME {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "frames of {} octets do not fit a UMEM frame",
                config.longest_frame
            ),
        ));
    }
    let frame_size = config.frame_size();
    let half = frames_per_half(config.umem_octets, frame_size);
    // SAFETY: a plain socket(2) call; the result is checked.
    let raw = unsafe { libc::socket(libc::AF_XDP, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) };
    if raw < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `raw` is a descriptor we just opened and own.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    let umem = Mapping::anonymous(2 * half as usize * frame_size)?;
    let reg = libc::xdp_umem_reg {
        addr: umem.ptr.as_ptr() as u64,
        len: umem.len as u64,
        chunk_size: frame_size as u32,
        headroom: 0,
        flags: 0,
        tx_metadata_len: 0,
    };
    let s = fd.as_raw_fd();
    setsockopt(s, libc::XDP_UMEM_REG, &reg)?;
    for opt in [
        libc::XDP_UMEM_FILL_RING,
        libc::XDP_UMEM_COMPLETION_RING,
        libc::XDP_RX_RING,
        libc::XDP_TX_RING,
    ] {
        setsockopt(s, opt, &half)?;
    }
    let off = mmap_offsets(s)?;
    let mut fill = Ring::map(s, half, &off.fr, libc::XDP_UMEM_PGOFF_FILL_RING)?;
    let completion = Ring::map(s, half, &off.cr, libc::XDP_UMEM_PGOFF_COMPLETION_RING)?;
    let rx = Ring::map(s, half, &off.rx, libc::XDP_PGOFF_RX_RING as u64)?;
    let tx = Ring::map(s, half, &off.tx, libc::XDP_PGOFF_TX_RING as u64)?;
    // The receive half is the UMEM's first half: all of it starts in the fill ring.
    for i in 0..half {
        fill.put(u64::from(i) * frame_size as u64);
    }
    fill.publish();
    let mode = bind(s, ifindex, queue)?;
    let free = (half..2 * half)
        .map(|i| u64::from(i) * frame_size as u64)
        .collect();
    let shared = Arc::new(Shared {
        fd,
        umem,
        frame_size,
    });
    Ok((
        XskRx {
            fill,
            rx,
            returns: Vec::new(),
            frames: half,
            shared: Arc::clone(&shared),
        },
        XskTx {
            tx,
            completion,
            free,
            shared,
        },
        mode,
    ))
}

/// Where the kernel put each ring in the socket's mappings (XDP_MMAP_OFFSETS).
fn mmap_offsets(s: RawFd) -> io::Result<libc::xdp_mmap_offsets> {
    // SAFETY: xdp_mmap_offsets is plain integers, valid all zero.
    unsafe { getsockopt(s, libc::XDP_MMAP_OFFSETS) }
}

/// bind(2) of AF_XDP socket `fd` to (`ifindex`, `queue`) with `flags`; `shared` is the
/// socket whose UMEM it shares (XDP_SHARED_UMEM), else 0.
fn bind_raw(fd: RawFd, ifindex: u32, queue: u32, flags: u16, shared: RawFd) -> io::Result<()> {
    let sa = libc::sockaddr_xdp {
        sxdp_family: libc::AF_XDP as u16,
        sxdp_flags: flags,
        sxdp_ifindex: ifindex,
        sxdp_queue_id: queue,
        sxdp_shared_umem_fd: shared as u32,
    };
    // SAFETY: passes a live sockaddr_xdp and its size.
    let r = unsafe {
        libc::bind(
            fd,
            (&sa as *const libc::sockaddr_xdp).cast(),
            std::mem::size_of_val(&sa) as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Binds zero-copy, or in copy mode when the driver refuses zero-copy.
fn bind(fd: RawFd, ifindex: u32, queue: u32) -> io::Result<CopyMode> {
    let try_bind = |flags: u16| bind_raw(fd, ifindex, queue, flags | libc::XDP_USE_NEED_WAKEUP, 0);
    match try_bind(libc::XDP_ZEROCOPY) {
        Ok(()) => Ok(CopyMode::ZeroCopy),
        Err(e) if matches!(e.raw_os_error(), Some(libc::EOPNOTSUPP | libc::EINVAL)) => {
            try_bind(libc::XDP_COPY).map(|()| CopyMode::Copy)
        }
        Err(e) => Err(e),
    }
}

/// Wakes the kernel for the socket with an empty non-blocking `sendto` (TX) or `recvfrom`
/// (fill ring). A full or busy ring (EAGAIN, EBUSY, ENOBUFS) is no error: the kernel goes
/// on with what it has.
fn wake(fd: RawFd, tx: bool) -> io::Result<()> {
    // SAFETY: zero-length calls with null buffers, which the AF_XDP socket takes as a kick.
    let r = unsafe {
        if tx {
            libc::sendto(
                fd,
                std::ptr::null(),
                0,
                libc::MSG_DONTWAIT,
                std::ptr::null(),
                0,
            )
        } else {
            libc::recvfrom(
                fd,
                std::ptr::null_mut(),
                0,
                libc::MSG_DONTWAIT,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        }
    };
    if r >= 0 {
        return Ok(());
    }
    let e = io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::EAGAIN | libc::EBUSY | libc::ENOBUFS | libc::EINTR | libc::ENETDOWN) => Ok(()),
        _ => Err(e),
    }
}

impl XskRx {
    /// The socket, for a poll to watch for readable frames.
    pub fn raw_fd(&self) -> RawFd {
        self.shared.fd.as_raw_fd()
    }

    /// The socket, for the XDP program's socket map.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.shared.fd.as_fd()
    }

    /// Opens a lane socket on the same interface and queue (`ifindex`, `queue`, which must
    /// be this socket's) sharing this socket's UMEM and fill ring: an RX ring only, with a
    /// return ring to this socket. Copy mode and need-wakeup are the home's (the kernel takes
    /// no mode flags with XDP_SHARED_UMEM).
    pub fn add_lane(&mut self, ifindex: u32, queue: u32) -> io::Result<XskLane> {
        // SAFETY: a plain socket(2) call; the result is checked.
        let raw = unsafe { libc::socket(libc::AF_XDP, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `raw` is a descriptor we just opened and own.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let s = fd.as_raw_fd();
        setsockopt(s, libc::XDP_RX_RING, &self.frames)?;
        let off = mmap_offsets(s)?;
        let rx = Ring::map(s, self.frames, &off.rx, libc::XDP_PGOFF_RX_RING as u64)?;
        bind_raw(s, ifindex, queue, libc::XDP_SHARED_UMEM, self.raw_fd())?;
        Ok(self.lane(fd, rx))
    }

    /// A lane over socket `fd` and its RX ring `rx`, with its return ring to this socket.
    fn lane(&mut self, fd: OwnedFd, rx: Ring<libc::xdp_desc>) -> XskLane {
        let (returns, home) = rtrb::RingBuffer::new(self.frames as usize);
        self.returns.push(home);
        XskLane {
            fd,
            rx,
            returns,
            lost: 0,
            shared: Arc::clone(&self.shared),
        }
    }

    /// Moves the frames the lanes have handed back into the fill ring. How many.
    pub fn reclaim(&mut self) -> u32 {
        let mut moved = 0;
        // The fill ring holds every receive frame, so it has room for all a lane holds.
        for ret in &mut self.returns {
            let room = self.fill.free(self.frames) as usize;
            let Ok(chunk) = ret.read_chunk(ret.slots().min(room)) else {
                continue;
            };
            let (a, b) = chunk.as_slices();
            for &addr in a.iter().chain(b) {
                self.fill.put(addr);
            }
            moved += chunk.len() as u32;
            chunk.commit_all();
        }
        // A return ring whose lane has gone and that is empty is of no more use.
        self.returns.retain(|r| !(r.is_abandoned() && r.is_empty()));
        if moved > 0 {
            self.fill.publish();
        }
        moved
    }

    /// Frames waiting in the return rings (for tests and status).
    pub fn frames_returned(&self) -> usize {
        self.returns.iter().map(|r| r.slots()).sum()
    }

    /// Reads at most `max` received frames, calling `f` with each frame's octets (which it
    /// must copy to keep), then gives their UMEM frames back to the fill ring, with those the
    /// lanes have handed back. How many it read.
    pub fn recv(&mut self, max: u32, mut f: impl FnMut(&[u8])) -> u32 {
        if !self.returns.is_empty() {
            self.reclaim();
        }
        let n = self.rx.ready().min(max);
        for i in 0..n {
            let d = self.rx.peek(i);
            if let Some(frame) = self.shared.frame(d.addr, d.len as usize) {
                f(frame);
            }
            // The fill ring holds every receive frame, so there is room.
            self.fill.put(self.shared.frame_start(d.addr));
        }
        if n > 0 {
            self.rx.release(n);
            self.fill.publish();
        }
        n
    }

    /// Whether the RX ring holds received frames: one load of the kernel's index, no system
    /// call, so a busy loop can look before it polls.
    pub fn has_frames(&mut self) -> bool {
        self.rx.ready() > 0
    }

    /// Kicks the kernel when it asked to be told that the fill ring has frames again.
    pub fn wake_if_needed(&self) -> io::Result<()> {
        if self.fill.needs_wakeup() {
            wake(self.raw_fd(), false)
        } else {
            Ok(())
        }
    }

    /// The kernel's drop counters for this socket (XDP_STATISTICS).
    pub fn statistics(&self) -> io::Result<libc::xdp_statistics> {
        // SAFETY: xdp_statistics is plain integers, valid all zero.
        unsafe { getsockopt(self.raw_fd(), libc::XDP_STATISTICS) }
    }
}

impl XskLane {
    /// The socket, for a poll to watch for readable frames and for the XDP program's socket
    /// map.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// Reads at most `max` received frames, calling `f` with each frame's octets (which it
    /// must copy to keep), then hands their UMEM frames to the home socket's return ring.
    /// How many; the home must then [`XskRx::reclaim`] them (wake it if it sleeps).
    pub fn recv(&mut self, max: u32, mut f: impl FnMut(&[u8])) -> u32 {
        let n = self.rx.ready().min(max);
        for i in 0..n {
            let d = self.rx.peek(i);
            if let Some(frame) = self.shared.frame(d.addr, d.len as usize) {
                f(frame);
            }
            if self.returns.push(self.shared.frame_start(d.addr)).is_err() {
                self.lost += 1;
            }
        }
        if n > 0 {
            self.rx.release(n);
        }
        n
    }

    /// Whether the RX ring holds received frames (one load, no system call).
    pub fn has_frames(&mut self) -> bool {
        self.rx.ready() > 0
    }

    /// The receive frames of its queue (the most its return ring holds).
    pub fn capacity(&self) -> usize {
        self.returns.buffer().capacity()
    }

    /// Frames this lane handed back that its home has not yet put into the fill ring.
    pub fn returned(&self) -> usize {
        self.returns.buffer().capacity() - self.returns.slots()
    }

    /// Frames read that the return ring could not take (zero unless the accounting broke).
    pub fn lost(&self) -> u64 {
        self.lost
    }
}

impl Drop for XskLane {
    /// Hands back the frames still in the RX ring (its socket must have left the XDP
    /// program's map first), so the home's fill ring keeps every frame.
    fn drop(&mut self) {
        while self.recv(u32::MAX, |_| {}) > 0 {}
    }
}

impl XskTx {
    /// Takes back the transmit frames the kernel sent.
    fn reap(&mut self) {
        let n = self.completion.ready();
        for i in 0..n {
            let addr = self.completion.peek(i);
            self.free.push(self.shared.frame_start(addr));
        }
        if n > 0 {
            self.completion.release(n);
        }
    }

    /// Writes one frame, the concatenation of `parts`, into a free transmit frame and the TX
    /// ring; false when none is free or the ring is full (after taking back what was sent),
    /// or when the frame is longer than [`XskTx::longest`]. Call [`XskTx::commit`] after a
    /// burst.
    pub fn push(&mut self, parts: &[&[u8]]) -> bool {
        let len: usize = parts.iter().map(|p| p.len()).sum();
        if len > self.longest() {
            return false;
        }
        if self.free.is_empty() || self.tx.free(1) == 0 {
            self.reap();
            if self.free.is_empty() || self.tx.free(1) == 0 {
                return false;
            }
        }
        let Some(addr) = self.free.pop() else {
            return false;
        };
        let mut at = addr as usize;
        for p in parts {
            // SAFETY: the frame is free (ours), `at + p.len()` stays within it since the
            // whole frame is at most `longest()` < the frame size, and UMEM frames never overlap
            // `p` (which comes from Kite's own buffers).
            unsafe {
                std::ptr::copy_nonoverlapping(
                    p.as_ptr(),
                    self.shared.umem.ptr.as_ptr().add(at),
                    p.len(),
                );
            }
            at += p.len();
        }
        self.tx.put(libc::xdp_desc {
            addr,
            len: len as u32,
            options: 0,
        });
        true
    }

    /// Publishes the frames [`XskTx::push`] wrote and kicks the kernel when it asked to be
    /// (copy mode always does). In copy mode a kick sends at most a small batch (32 frames in
    /// Linux's generic transmit path), so it kicks again while the kernel takes frames and
    /// some are left: one system call per 32 frames at most, none with zero-copy drivers that
    /// need no kick.
    pub fn commit(&mut self) -> io::Result<()> {
        self.tx.publish();
        let mut left = self.tx.pending();
        while left > 0 && self.tx.needs_wakeup() {
            wake(self.shared.fd.as_raw_fd(), true)?;
            let now = self.tx.pending();
            if now == left {
                // The kernel took none (its queue is full): the rest goes with the next kick.
                break;
            }
            left = now;
        }
        self.reap();
        Ok(())
    }

    /// Whether frames published to the TX ring wait for the kernel to take them (a kick
    /// that found the device's queue full).
    pub fn has_pending(&mut self) -> bool {
        self.tx.pending() > 0
    }

    /// The longest frame [`XskTx::push`] takes.
    pub fn longest(&self) -> usize {
        self.shared.frame_size - HEADROOM
    }

    /// Transmit frames Kite holds (for tests and status).
    pub fn frames_free(&self) -> usize {
        self.free.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel's side of a ring made over ordinary memory: it consumes what Kite produces
    /// (fill) or produces what Kite consumes (RX).
    struct KernelSide<T> {
        producer: NonNull<AtomicU32>,
        consumer: NonNull<AtomicU32>,
        descs: NonNull<T>,
        mask: u32,
    }

    /// A ring of `size` entries over an anonymous mapping laid out as the kernel lays its
    /// rings out (three index words, then the descriptors), with the kernel's side of it.
    fn fake_ring<T: Copy>(size: u32) -> (Ring<T>, KernelSide<T>) {
        let off = libc::xdp_ring_offset {
            producer: 0,
            consumer: 64,
            desc: 192,
            flags: 128,
        };
        let len = off.desc as usize + size as usize * std::mem::size_of::<T>();
        let map = Mapping::anonymous(len).unwrap();
        // SAFETY: the offsets lie inside the mapping just made.
        let at = |o: u64| unsafe { NonNull::new_unchecked(map.ptr.as_ptr().add(o as usize)) };
        let kernel = KernelSide {
            producer: at(off.producer).cast(),
            consumer: at(off.consumer).cast(),
            descs: at(off.desc).cast(),
            mask: size - 1,
        };
        let ring = Ring {
            producer: at(off.producer).cast(),
            consumer: at(off.consumer).cast(),
            flags: at(off.flags).cast(),
            descs: at(off.desc).cast(),
            mask: size - 1,
            head: 0,
            other: 0,
            _map: map,
        };
        (ring, kernel)
    }

    impl<T: Copy> KernelSide<T> {
        fn idx(&self, p: NonNull<AtomicU32>) -> &AtomicU32 {
            // SAFETY: the index words live in the mapping the ring owns, which the test keeps
            // alive for as long as it uses this side.
            unsafe { p.as_ref() }
        }

        /// Takes the next entry Kite produced (the kernel consuming the fill ring).
        fn take(&self) -> Option<T> {
            let c = self.idx(self.consumer).load(Ordering::Relaxed);
            if self.idx(self.producer).load(Ordering::Acquire) == c {
                return None;
            }
            // SAFETY: Kite published slot `c` and will not touch it until we consume it.
            let v = unsafe { self.descs.as_ptr().add((c & self.mask) as usize).read() };
            self.idx(self.consumer)
                .store(c.wrapping_add(1), Ordering::Release);
            Some(v)
        }

        /// Produces an entry for Kite (the kernel writing an RX ring); false when full.
        fn give(&self, v: T) -> bool {
            let p = self.idx(self.producer).load(Ordering::Relaxed);
            let c = self.idx(self.consumer).load(Ordering::Acquire);
            if p.wrapping_sub(c) > self.mask {
                return false;
            }
            // SAFETY: Kite consumed slot `p` (the ring is not full), so only we touch it.
            unsafe { self.descs.as_ptr().add((p & self.mask) as usize).write(v) };
            self.idx(self.producer)
                .store(p.wrapping_add(1), Ordering::Release);
            true
        }

        /// Entries produced and not yet consumed.
        fn len(&self) -> u32 {
            self.idx(self.producer)
                .load(Ordering::Acquire)
                .wrapping_sub(self.idx(self.consumer).load(Ordering::Acquire))
        }
    }

    fn dev_null() -> OwnedFd {
        std::fs::File::open("/dev/null").unwrap().into()
    }

    /// A home socket and `lanes` lane sockets on one queue, over rings in ordinary memory, with
    /// the kernel's side of the fill ring and of each RX ring (home first).
    #[allow(clippy::type_complexity)]
    fn fake_queue(
        frames: u32,
        lanes: usize,
    ) -> (
        XskRx,
        Vec<XskLane>,
        KernelSide<u64>,
        Vec<KernelSide<libc::xdp_desc>>,
    ) {
        let (mut fill, kfill) = fake_ring::<u64>(frames);
        let (rx, krx) = fake_ring::<libc::xdp_desc>(frames);
        let frame_size = SMALL_FRAME_SIZE;
        for i in 0..frames {
            fill.put(u64::from(i) * frame_size as u64);
        }
        fill.publish();
        let shared = Arc::new(Shared {
            fd: dev_null(),
            umem: Mapping::anonymous(frames as usize * frame_size).unwrap(),
            frame_size,
        });
        let mut home = XskRx {
            fill,
            rx,
            returns: Vec::new(),
            frames,
            shared,
        };
        let mut krxs = vec![krx];
        let lanes = (0..lanes)
            .map(|_| {
                let (rx, krx) = fake_ring::<libc::xdp_desc>(frames);
                krxs.push(krx);
                home.lane(dev_null(), rx)
            })
            .collect();
        (home, lanes, kfill, krxs)
    }

    /// Every receive frame stays in exactly one place while the kernel steers frames to two
    /// lanes that hand them back through their return rings: the kernel never gets a frame
    /// from the fill ring that a ring still holds, no return ring overflows (however long
    /// the home leaves them), and the fill ring never runs dry for good.
    #[test]
    fn lanes_hand_every_frame_back_and_no_return_ring_overflows() {
        const FRAMES: u32 = 16;
        let (mut home, mut lanes, kfill, krxs) = fake_queue(FRAMES, 2);
        // Where each frame is: `InRx(i)` in RX ring i (0 the home's), else `Out` (in the
        // fill ring or a return ring, or read and not yet handed back).
        #[derive(Debug, Clone, Copy, PartialEq)]
        enum At {
            Out,
            InRx(usize),
        }
        let mut at = vec![At::Out; FRAMES as usize];
        let frame = |addr: u64| (addr / SMALL_FRAME_SIZE as u64) as usize;
        let mut seed = 0x2545_f491_u32;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            seed
        };
        let read = |at: &mut Vec<At>, who: usize, octets: &[u8]| {
            let addr = u64::from_ne_bytes(octets[..8].try_into().unwrap());
            assert_eq!(
                at[frame(addr)],
                At::InRx(who),
                "frame {addr:#x} read by {who}"
            );
            at[frame(addr)] = At::Out;
        };
        let mut delivered = 0u64;
        for step in 0..20_000 {
            // The kernel: a burst of frames from the fill ring, each to a socket, its first
            // eight octets naming the frame so the reader can tell which it got.
            for _ in 0..next() % 8 {
                let Some(addr) = kfill.take() else { break };
                let f = frame(addr);
                assert_eq!(
                    at[f],
                    At::Out,
                    "step {step}: frame {f} filled while in a ring"
                );
                let to = (next() % 3) as usize;
                let umem = home.shared.umem.ptr.as_ptr();
                // SAFETY: the frame is the kernel's now (taken from the fill ring) and lies
                // inside the UMEM.
                unsafe { umem.add(addr as usize).cast::<u64>().write_unaligned(addr) };
                let given = krxs[to].give(libc::xdp_desc {
                    addr,
                    len: 8,
                    options: 0,
                });
                assert!(given, "step {step}: an RX ring full with a frame to give");
                at[f] = At::InRx(to);
                delivered += 1;
            }
            // The readers, each at its own pace; for a thousand steps out of two the home
            // reads only every 64th step, as one asleep while its lanes work.
            for (i, lane) in lanes.iter_mut().enumerate() {
                lane.recv(next() % 6, |o| read(&mut at, i + 1, o));
            }
            if step % 64 == 0 || (step / 1000) % 2 == 0 {
                home.recv(next() % 6, |o| read(&mut at, 0, o));
            }
            // Every frame is in the fill ring, an RX ring or a return ring.
            let in_rx: u32 = krxs.iter().map(KernelSide::len).sum();
            let held = kfill.len() as usize + in_rx as usize + home.frames_returned();
            assert_eq!(held, FRAMES as usize, "step {step}");
            assert!(lanes.iter().all(|l| l.lost() == 0), "step {step}");
        }
        assert!(delivered > 10_000, "the fill ring ran dry: {delivered}");
    }

    /// On a veth with two queues (in a namespace of the test's own, as root), a lane binds
    /// to its home's queue sharing its UMEM with no fill ring and no mode flags, as the
    /// kernel requires; a lane on another queue, which would need a fill ring of its own, is
    /// refused.
    #[test]
    fn a_lane_shares_its_home_queue_umem() {
        use kite_testkit::netns;
        let name = format!("kite-xsk-lane-{}", std::process::id());
        if !netns::add_or_skip(&name) {
            return;
        }
        netns::ip_ok(&[
            "-n",
            &name,
            "link",
            "add",
            "k0",
            "numrxqueues",
            "2",
            "numtxqueues",
            "2",
            "type",
            "veth",
            "peer",
            "name",
            "k1",
            "numrxqueues",
            "2",
            "numtxqueues",
            "2",
        ]);
        netns::ip_ok(&["-n", &name, "link", "set", "k0", "up"]);
        netns::ip_ok(&["-n", &name, "link", "set", "k1", "up"]);
        let result = std::thread::scope(|s| {
            s.spawn(|| {
                let ns = std::fs::File::open(format!("/run/netns/{name}")).unwrap();
                // SAFETY: setns reads a descriptor `ns` keeps open through the call, and
                // moves only the calling thread, which ends with this closure.
                let r = unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) };
                assert_eq!(r, 0, "setns: {}", io::Error::last_os_error());
                // SAFETY: a NUL-terminated literal.
                let ifindex = unsafe { libc::if_nametoindex(c"k0".as_ptr()) };
                assert_ne!(ifindex, 0);
                let config = XskConfig {
                    umem_octets: 0,
                    longest_frame: 1514,
                };
                let (mut home, _tx, _) = open(ifindex, 1, config).unwrap();
                let mut lane = home.add_lane(ifindex, 1).unwrap();
                assert_ne!(lane.fd().as_raw_fd(), home.raw_fd());
                assert!(!lane.has_frames());
                assert!(home.add_lane(ifindex, 0).is_err());
                assert_eq!(home.reclaim(), 0);
            })
            .join()
        });
        let _ = netns::ip(&["netns", "del", &name]);
        result.unwrap_or_else(|e| std::panic::resume_unwind(e));
    }

    #[test]
    fn umem_halves_are_powers_of_two_from_sixteen_frames() {
        assert_eq!(frames_per_half(0, FRAME_SIZE), 16);
        assert_eq!(frames_per_half(MIN_UMEM, FRAME_SIZE), 16);
        assert_eq!(frames_per_half(4 << 20, FRAME_SIZE), 512);
        assert_eq!(frames_per_half((4 << 20) + 3 * FRAME_SIZE, FRAME_SIZE), 512);
        assert_eq!(frames_per_half(4 << 20, SMALL_FRAME_SIZE), 1024);
        assert_eq!(frames_per_half(usize::MAX, FRAME_SIZE), 1 << 20);
    }

    #[test]
    fn frames_that_fit_half_a_page_get_half_a_page() {
        let c = |longest_frame| XskConfig {
            umem_octets: 0,
            longest_frame,
        };
        assert_eq!(c(1514).frame_size(), SMALL_FRAME_SIZE);
        assert_eq!(
            c(SMALL_FRAME_SIZE - HEADROOM).frame_size(),
            SMALL_FRAME_SIZE
        );
        assert_eq!(c(SMALL_FRAME_SIZE - HEADROOM + 1).frame_size(), FRAME_SIZE);
        assert_eq!(c(MAX_FRAME).frame_size(), FRAME_SIZE);
    }
}
