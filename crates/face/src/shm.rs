//! Shared-memory faces: a local application that connected over the Unix socket switches to
//! two byte rings in a memory region both processes map, so a packet costs a `memcpy` on each
//! side instead of a system call and two kernel copies.
//!
//! **The switch.** The application's first packet on a new Unix connection is an Interest
//! for [`OFFER_NAME`]. A forwarder that offers shared memory answers it with a Data of that
//! name sent together (`SCM_RIGHTS`) with four descriptors: the region (a sealed memfd) and
//! three eventfds. A forwarder that does not (NFD, a Kite with the offer off) forwards the
//! Interest like any other and, having no route for it, answers a Nack (NoRoute): either way
//! the client knows at once, and falls back to the socket (also after a short timeout). After
//! the switch the socket carries no packet: it stays open as the liveness signal, and when
//! either side closes it the face goes down.
//!
//! **The region.** A 4 KiB header, then two rings of [`RING_SIZE_RANGE`] octets each (a power
//! of two): *up* (application to forwarder) and *down*. Each ring carries the same TLV
//! stream the socket would, so the forwarder frames it with the socket's framer and its
//! bounds (a large element at the head it reads alone, into a buffer the CS can keep:
//! [`Consumer::read_next`]). A ring's control block keeps the producer's `tail` and `waiting`
//! flag on one cache line and the consumer's `head` and `sleeping` flag on the next:
//! positions are octet counts that only grow (a u64 does not wrap), the octet at position `p`
//! lives at `p % size`.
//!
//! **Waking.** A consumer about to sleep sets its `sleeping` flag, then looks at the ring once
//! more; a producer, after publishing its tail, swaps the flag back to 0 and writes the
//! consumer's eventfd only if it was set (the SeqCst fences on both sides make either the
//! consumer see the data or the producer see the flag). A producer that found the ring full
//! sets `waiting` likewise, and the consumer wakes it after freeing room. The forwarder keeps
//! looking at its rings for a while after its last work (the I/O thread's spin), so a busy
//! application writes no eventfd; an application sleeps in `poll` as soon as its ring is
//! empty (or full), and the forwarder wakes it with one eventfd write per flush.
//!
//! **Trust.** The application is not trusted: every position it writes is read once
//! (atomically) and checked (`0 <= tail - head <= size`), a violation ends its face; data is
//! copied out of the ring once before it is parsed, so changing it meanwhile changes nothing
//! but its own packets; the forwarder never waits for the application; the region is sealed
//! against resizing (a shrunk mapping would fault the forwarder). Its size is bounded by
//! configuration ([`RING_SIZE_RANGE`]).

#![allow(unsafe_code)]

use std::io::{self, IoSlice};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{fence, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use kite_packet::{pool, Data, DigestSha256, Interest, Name};

use crate::counters::FaceCounters;
use crate::face::{FaceError, Flushed, Progress};
use crate::framing::{element_len, Framer};
use crate::queue::OutQueue;

/// The name of the Interest that asks for shared memory, and of the Data that offers it.
pub const OFFER_NAME: &str = "/localhost/kite/shm";

/// The region's first eight octets.
pub const MAGIC: u64 = u64::from_le_bytes(*b"KITESHM1");
/// The layout version this module writes and reads.
pub const VERSION: u32 = 1;
/// Octets of the header that precedes the rings (one page).
pub const HEADER_LEN: usize = 4096;
/// Octets of each ring by default: 1 MiB, about 120 Data of 8800 octets in flight.
pub const DEFAULT_RING_SIZE: usize = 1 << 20;
/// The ring sizes accepted (powers of two): 64 KiB (seven largest frames) to 64 MiB.
pub const RING_SIZE_RANGE: (usize, usize) = (64 << 10, 64 << 20);
/// Ring reads per receive burst (each up to 64 KiB, [`crate::framing::READ_CHUNK`]).
const READS_PER_BURST: usize = 4;

/// Descriptors sent with the offer: the region, the forwarder's eventfd, the application's
/// receive and transmit eventfds.
pub const OFFER_FDS: usize = 4;

const OFF_MAGIC: usize = 0;
const OFF_VERSION: usize = 8;
const OFF_RING_SIZE: usize = 12;
/// Control block of the ring the application writes.
const UP: usize = 64;
/// Control block of the ring the forwarder writes.
const DOWN: usize = 192;
// Within a control block: the producer's line, then the consumer's.
const TAIL: usize = 0;
const WAITING: usize = 8;
const HEAD: usize = 64;
const SLEEPING: usize = 72;

/// Whether `size` is a valid ring size: a power of two in [`RING_SIZE_RANGE`].
pub fn valid_ring_size(size: usize) -> bool {
    size.is_power_of_two() && (RING_SIZE_RANGE.0..=RING_SIZE_RANGE.1).contains(&size)
}

fn corrupt(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("shared memory: {what}"))
}

/// One process's mapping of a region.
#[derive(Debug)]
pub struct Region {
    base: *mut u8,
    len: usize,
    ring: usize,
}

// SAFETY: the mapping is plain shared memory; this module reaches it only through atomics
// (control fields) and raw copies (ring data), never through references to its octets.
unsafe impl Send for Region {}
// SAFETY: as above: every access is atomic or a raw copy, safe from any thread.
unsafe impl Sync for Region {}

impl Region {
    /// Creates a region with two rings of `ring` octets in a sealed memfd (it can be neither
    /// shrunk nor grown, so no mapping of it can fault) and maps it.
    pub fn create(ring: usize) -> io::Result<(Region, OwnedFd)> {
        if !valid_ring_size(ring) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "shared-memory ring size out of range",
            ));
        }
        let len = HEADER_LEN + 2 * ring;
        // SAFETY: the name is a NUL-terminated literal; the call returns a new descriptor
        // or -1.
        let fd = unsafe {
            libc::memfd_create(
                c"kite-shm".as_ptr(),
                libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` is a descriptor just returned to us and owned by nobody else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        // SAFETY: plain system calls on a descriptor we own.
        unsafe {
            if libc::ftruncate(fd.as_raw_fd(), len as libc::off_t) != 0 {
                return Err(io::Error::last_os_error());
            }
            let seals = libc::F_SEAL_SHRINK | libc::F_SEAL_GROW | libc::F_SEAL_SEAL;
            if libc::fcntl(fd.as_raw_fd(), libc::F_ADD_SEALS, seals) != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        let region = Region::map(&fd, len, ring)?;
        // SAFETY: the header fields are within the first page of a mapping nobody else has
        // yet; the atomics give them their layout.
        region.u64_at(OFF_MAGIC).store(MAGIC, Ordering::Relaxed);
        region.u32_at(OFF_VERSION).store(VERSION, Ordering::Relaxed);
        region
            .u32_at(OFF_RING_SIZE)
            .store(ring as u32, Ordering::Release);
        Ok((region, fd))
    }

    /// Maps a region received from a forwarder, after checking that it is sealed against
    /// shrinking and that its header describes rings that fit in it.
    pub fn attach(fd: &OwnedFd) -> io::Result<Region> {
        // SAFETY: plain system calls on a descriptor we own; `st` is written by fstat.
        let (seals, size) = unsafe {
            let seals = libc::fcntl(fd.as_raw_fd(), libc::F_GET_SEALS);
            let mut st: libc::stat = std::mem::zeroed();
            if libc::fstat(fd.as_raw_fd(), &mut st) != 0 {
                return Err(io::Error::last_os_error());
            }
            (seals, st.st_size as u64)
        };
        if seals < 0 || seals & libc::F_SEAL_SHRINK == 0 {
            return Err(corrupt("region not sealed against shrinking"));
        }
        let max = (HEADER_LEN + 2 * RING_SIZE_RANGE.1) as u64;
        if !(HEADER_LEN as u64..=max).contains(&size) {
            return Err(corrupt("region size out of range"));
        }
        let mut region = Region::map(fd, size as usize, 0)?;
        let ring = region.u32_at(OFF_RING_SIZE).load(Ordering::Acquire) as usize;
        if region.u64_at(OFF_MAGIC).load(Ordering::Relaxed) != MAGIC
            || region.u32_at(OFF_VERSION).load(Ordering::Relaxed) != VERSION
            || !valid_ring_size(ring)
            || HEADER_LEN + 2 * ring > size as usize
        {
            return Err(corrupt("unknown region layout"));
        }
        region.ring = ring;
        Ok(region)
    }

    fn map(fd: &OwnedFd, len: usize, ring: usize) -> io::Result<Region> {
        // SAFETY: a new shared mapping of `len` octets of a file at least that long (created
        // so, or checked by fstat); it is unmapped once, in Drop.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Region {
            base: base.cast(),
            len,
            ring,
        })
    }

    /// Octets of each ring.
    pub fn ring_size(&self) -> usize {
        self.ring
    }

    fn u64_at(&self, off: usize) -> &AtomicU64 {
        assert!(off + 8 <= HEADER_LEN && off % 8 == 0);
        // SAFETY: `off` is within the header page of the live mapping and 8-aligned (the
        // mapping is page-aligned); shared memory is only ever accessed atomically here.
        unsafe { AtomicU64::from_ptr(self.base.add(off).cast()) }
    }

    fn u32_at(&self, off: usize) -> &AtomicU32 {
        assert!(off + 4 <= HEADER_LEN && off % 4 == 0);
        // SAFETY: as in `u64_at`, 4-aligned.
        unsafe { AtomicU32::from_ptr(self.base.add(off).cast()) }
    }

    /// The start of ring data for the control block `ctl`.
    fn data(&self, ctl: usize) -> *mut u8 {
        let at = HEADER_LEN + if ctl == UP { 0 } else { self.ring };
        // SAFETY: `at + ring <= len` (checked when the region was created or attached).
        unsafe { self.base.add(at) }
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        // SAFETY: `base`/`len` are the mapping made in `map`, unmapped only here; every
        // pointer into it is derived from a `Region` this drop outlives (held in an Arc).
        unsafe { libc::munmap(self.base.cast(), self.len) };
    }
}

/// The writing end of one ring.
#[derive(Debug)]
pub struct Producer {
    region: Arc<Region>,
    ctl: usize,
    /// Octets published so far (our own copy: the shared one is only written).
    tail: u64,
}

impl Producer {
    /// Free octets, from the consumer's head read once; an impossible head is an error.
    pub fn room(&self) -> io::Result<usize> {
        let head = self.region.u64_at(self.ctl + HEAD).load(Ordering::Acquire);
        let used = self.tail.wrapping_sub(head);
        if used > self.region.ring as u64 {
            return Err(corrupt("ring head out of bounds"));
        }
        Ok(self.region.ring - used as usize)
    }

    /// Copies `src` (at most `room` octets, from [`Producer::room`]) into the ring after
    /// what is unpublished; returns the octets copied.
    fn write(&mut self, src: &[u8], room: usize, unpublished: usize) -> usize {
        let n = src.len().min(room - unpublished);
        let size = self.region.ring;
        let at = (self.tail as usize + unpublished) & (size - 1);
        let first = n.min(size - at);
        let data = self.region.data(self.ctl);
        // SAFETY: both destination ranges lie within this ring's `size` octets; the source
        // is our own slice. The consumer does not read these octets until the tail is
        // published (Release) past them.
        unsafe {
            std::ptr::copy_nonoverlapping(src.as_ptr(), data.add(at), first);
            // Only a slice that wraps past the ring's end has a second part: the others skip
            // a call of `memcpy` for nothing (half of a write's calls, at two or three slices
            // per packet).
            if n > first {
                std::ptr::copy_nonoverlapping(src.as_ptr().add(first), data, n - first);
            }
        }
        n
    }

    /// Copies as much of `bufs` as the ring takes and publishes it; returns the octets
    /// written and whether the consumer sleeps (its eventfd must be written).
    pub fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<(usize, bool)> {
        let room = self.room()?;
        let mut n = 0;
        for b in bufs {
            if n == room {
                break;
            }
            n += self.write(b, room, n);
        }
        if n == 0 {
            return Ok((0, false));
        }
        self.tail += n as u64;
        let ctl = &self.region;
        ctl.u64_at(self.ctl + TAIL)
            .store(self.tail, Ordering::Release);
        fence(Ordering::SeqCst);
        let wake = ctl.u32_at(self.ctl + SLEEPING).swap(0, Ordering::Relaxed) != 0;
        Ok((n, wake))
    }

    /// Announces that this producer waits for room, then looks again: `true` when there is
    /// room after all (do not sleep).
    pub fn announce_wait(&self) -> io::Result<bool> {
        self.region
            .u32_at(self.ctl + WAITING)
            .store(1, Ordering::Relaxed);
        fence(Ordering::SeqCst);
        Ok(self.room()? > 0)
    }
}

/// What one [`Consumer::read_next`] read.
#[derive(Debug)]
pub enum ShmRead {
    /// An element alone in a reusable buffer of this many octets.
    Own(Bytes, usize),
    /// Octets appended to the framer's buffer (0: the ring was empty).
    Framed(usize),
}

/// The reading end of one ring.
#[derive(Debug)]
pub struct Consumer {
    region: Arc<Region>,
    ctl: usize,
    /// Octets consumed so far (our own copy: the shared one is only written).
    head: u64,
    /// Octets freed for the producer so far (the shared head, as last written).
    published: u64,
}

impl Consumer {
    /// Octets ready, from the producer's tail read once; an impossible tail is an error.
    pub fn available(&self) -> io::Result<usize> {
        let tail = self.region.u64_at(self.ctl + TAIL).load(Ordering::Acquire);
        let ready = tail.wrapping_sub(self.head);
        if ready > self.region.ring as u64 {
            return Err(corrupt("ring tail out of bounds"));
        }
        Ok(ready as usize)
    }

    /// Copies `n` octets from the head on to `dst`, without freeing them.
    ///
    /// # Safety
    /// `dst` must be valid for writes of `n` octets, and `n` at most the octets ready.
    unsafe fn copy_out(&self, dst: *mut u8, n: usize) {
        let size = self.region.ring;
        let at = self.head as usize & (size - 1);
        let first = n.min(size - at);
        let data = self.region.data(self.ctl);
        // SAFETY: the source ranges lie within this ring's `size` octets (`n <= size`, the
        // ready octets); `dst` is valid for `n` octets (the caller's contract) and private to
        // us. A hostile producer may change these octets while they are copied: the copy
        // then holds garbage, which the framer rejects like any other bad stream.
        unsafe {
            std::ptr::copy_nonoverlapping(data.add(at), dst, first);
            std::ptr::copy_nonoverlapping(data, dst.add(first), n - first);
        }
    }

    /// Copies up to `max` ready octets (at most `ready`, from [`Consumer::available`]) to
    /// `dst` and counts them consumed; they are freed for the producer by
    /// [`Consumer::publish`]. Returns how many.
    ///
    /// # Safety
    /// `dst` must be valid for writes of `max.min(ready)` octets.
    unsafe fn take(&mut self, dst: *mut u8, max: usize, ready: usize) -> usize {
        let n = max.min(ready);
        // SAFETY: `n` is at most the octets ready and `dst` is valid for `n` octets.
        unsafe { self.copy_out(dst, n) };
        self.head += n as u64;
        n
    }

    /// Frees what was consumed since the last call for the producer; `true` when it waits
    /// for room (its eventfd must be written).
    pub fn publish(&mut self) -> bool {
        if self.head == self.published {
            return false;
        }
        self.published = self.head;
        let r = &self.region;
        r.u64_at(self.ctl + HEAD)
            .store(self.head, Ordering::Release);
        fence(Ordering::SeqCst);
        r.u32_at(self.ctl + WAITING).swap(0, Ordering::Relaxed) != 0
    }

    /// [`Consumer::take`] into `buf`'s spare room (reserving `max.min(ready)` octets first).
    fn take_into(&mut self, buf: &mut bytes::BytesMut, max: usize, ready: usize) -> usize {
        let n = max.min(ready);
        buf.reserve(n);
        // SAFETY: `reserve` made room for `n` more octets past `len`.
        let got = unsafe { self.take(buf.spare_capacity_mut().as_mut_ptr().cast(), n, ready) };
        // SAFETY: `take` initialized exactly `got <= n` octets of the spare room.
        unsafe { buf.set_len(buf.len() + got) };
        got
    }

    /// The length of the complete element at the head (of `ready` octets), if its header
    /// is well formed and all of it is in the ring.
    fn head_element(&self, ready: usize) -> Option<usize> {
        // Two VAR-NUMBERs of at most nine octets each.
        let mut header = [0u8; 18];
        let n = header.len().min(ready);
        // SAFETY: `header` is valid for `n <= 18` octets, and `n <= ready`.
        unsafe { self.copy_out(header.as_mut_ptr(), n) };
        let total = element_len(&header[..n]).ok()??;
        (total <= ready).then_some(total)
    }

    /// The forwarder's read (freed by a later [`Consumer::publish`]). With `whole` (the
    /// framer holds no partial element): a complete element of at least [`pool::OWN_MIN`]
    /// octets at the head is read alone into an idle reusable buffer of this thread
    /// ([`pool::take_reusable`]), which the CS then keeps as it is, where an element read
    /// with others into the framer's buffer is copied again to be kept. Otherwise up to
    /// `room` octets are appended to `framer`, as a socket read would. An element whose
    /// header the application rewrote while it was copied alone is an error, like an
    /// impossible position.
    pub fn read_next(
        &mut self,
        whole: bool,
        framer: &mut bytes::BytesMut,
        room: usize,
    ) -> io::Result<ShmRead> {
        let ready = self.available()?;
        if whole && ready >= pool::OWN_MIN {
            if let Some(total) = self.head_element(ready).filter(|&t| t >= pool::OWN_MIN) {
                if let Some(mut buf) = pool::take_reusable(total) {
                    let n = self.take_into(&mut buf, total, ready);
                    if element_len(&buf).ok().flatten() != Some(n) {
                        return Err(corrupt("element rewritten while it was read"));
                    }
                    let held = buf.capacity();
                    return Ok(ShmRead::Own(buf.freeze(), held));
                }
            }
        }
        Ok(ShmRead::Framed(self.take_into(framer, room, ready)))
    }

    /// Copies ready octets into `buf`; returns how many and whether to wake the producer.
    pub fn read(&mut self, buf: &mut [u8]) -> io::Result<(usize, bool)> {
        let ready = self.available()?;
        // SAFETY: `buf` is valid for `buf.len()` octets.
        let n = unsafe { self.take(buf.as_mut_ptr(), buf.len(), ready) };
        Ok((n, self.publish()))
    }

    /// Appends up to `max` ready octets to `buf`'s spare room (reserving it first).
    pub fn read_into(
        &mut self,
        buf: &mut bytes::BytesMut,
        max: usize,
    ) -> io::Result<(usize, bool)> {
        let ready = self.available()?;
        let n = self.take_into(buf, max, ready);
        Ok((n, self.publish()))
    }

    /// Announces that this consumer is about to sleep, then looks again: `true` when data
    /// arrived after all (do not sleep). An impossible tail counts as data, so that the
    /// next read reports it.
    pub fn announce_sleep(&self) -> bool {
        self.region
            .u32_at(self.ctl + SLEEPING)
            .store(1, Ordering::Relaxed);
        fence(Ordering::SeqCst);
        !matches!(self.available(), Ok(0))
    }
}

/// A new non-blocking eventfd.
fn eventfd() -> io::Result<OwnedFd> {
    // SAFETY: returns a new descriptor or -1.
    let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a descriptor just returned to us.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Wakes whoever sleeps on eventfd `fd` (a full counter already wakes them).
pub fn signal(fd: BorrowedFd<'_>) {
    let one = 1u64;
    // SAFETY: writes 8 octets from a live u64.
    unsafe { libc::write(fd.as_raw_fd(), (&one as *const u64).cast(), 8) };
}

/// Resets eventfd `fd` (non-blocking).
fn drain(fd: BorrowedFd<'_>) {
    let mut v = 0u64;
    // SAFETY: reads at most 8 octets into a live u64.
    unsafe { libc::read(fd.as_raw_fd(), (&mut v as *mut u64).cast(), 8) };
}

/// Sends `data` with the descriptors `fds` attached (`SCM_RIGHTS`).
fn send_with_fds(sock: RawFd, data: &[u8], fds: &[RawFd; OFFER_FDS]) -> io::Result<usize> {
    let mut iov = libc::iovec {
        iov_base: data.as_ptr() as *mut _,
        iov_len: data.len(),
    };
    let mut cbuf = [0u64; 8];
    // SAFETY: CMSG_SPACE of 4 descriptors (32 octets with its header) fits the 64-octet,
    // 8-aligned `cbuf`; the header and payload are written within it through the CMSG
    // macros; `msg` points at live locals for the duration of the call.
    unsafe {
        let payload = (OFFER_FDS * std::mem::size_of::<RawFd>()) as u32;
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = cbuf.as_mut_ptr().cast();
        msg.msg_controllen = libc::CMSG_SPACE(payload) as _;
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(payload) as _;
        std::ptr::copy_nonoverlapping(fds.as_ptr(), libc::CMSG_DATA(cmsg).cast(), OFFER_FDS);
        let n = libc::sendmsg(sock, &msg, libc::MSG_NOSIGNAL);
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(n as usize)
    }
}

/// Reads into `buf` from `sock`, collecting descriptors sent with the octets (at most
/// [`OFFER_FDS`]; any beyond are closed by the kernel, truncated).
pub fn recv_with_fds(
    sock: &UnixStream,
    buf: &mut [u8],
    fds: &mut Vec<OwnedFd>,
) -> io::Result<usize> {
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    let mut cbuf = [0u64; 8];
    // SAFETY: `msg` points at live locals; the kernel writes at most `msg_controllen`
    // octets of control data into `cbuf`; each SCM_RIGHTS payload holds descriptors now
    // ours, each taken into an OwnedFd exactly once.
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = cbuf.as_mut_ptr().cast();
        msg.msg_controllen = std::mem::size_of_val(&cbuf) as _;
        let n = libc::recvmsg(sock.as_raw_fd(), &mut msg, libc::MSG_CMSG_CLOEXEC);
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        let mut cmsg = libc::CMSG_FIRSTHDR(&msg);
        while !cmsg.is_null() {
            if (*cmsg).cmsg_level == libc::SOL_SOCKET && (*cmsg).cmsg_type == libc::SCM_RIGHTS {
                let data = libc::CMSG_DATA(cmsg).cast::<RawFd>();
                let count = ((*cmsg).cmsg_len as usize - libc::CMSG_LEN(0) as usize)
                    / std::mem::size_of::<RawFd>();
                for i in 0..count {
                    fds.push(OwnedFd::from_raw_fd(data.add(i).read_unaligned()));
                }
            }
            cmsg = libc::CMSG_NXTHDR(&msg, cmsg);
        }
        Ok(n as usize)
    }
}

/// Whether `frame` (a face's first) is the Interest asking for shared memory.
pub(crate) fn is_request(frame: &Bytes) -> bool {
    frame.first() == Some(&(kite_packet::tlv_type::INTEREST as u8))
        && Interest::decode(frame.clone())
            .is_ok_and(|i| i.name == OFFER_NAME.parse::<Name>().expect("a valid name"))
}

/// The Data that answers the request (sent with the region's descriptors).
pub fn offer_data() -> Bytes {
    let name: Name = OFFER_NAME.parse().expect("a valid name");
    Data::new(name, Bytes::from_static(&[VERSION as u8]))
        .sign(&DigestSha256)
        .expect("a digest signature cannot fail")
}

/// The forwarder's side of a shared-memory face.
#[derive(Debug)]
pub(crate) struct ShmIo {
    /// The application's Unix connection: carries nothing now; its end is the face's end.
    control: mio::net::UnixStream,
    rx: Consumer,
    tx: Producer,
    /// Written by the application to wake the forwarder (registered in its poll).
    wake: OwnedFd,
    /// Written by the forwarder when the application sleeps waiting for data / for room.
    peer_rx: OwnedFd,
    peer_tx: OwnedFd,
    framer: Framer,
}

impl ShmIo {
    /// Sets up a region with rings of `ring` octets and offers it over `control` (the
    /// offer's Data with the descriptors attached); the face then reads and writes only
    /// the rings.
    pub fn offer(control: mio::net::UnixStream, ring: usize) -> io::Result<ShmIo> {
        let (region, memfd) = Region::create(ring)?;
        let region = Arc::new(region);
        let (wake, peer_rx, peer_tx) = (eventfd()?, eventfd()?, eventfd()?);
        let answer = offer_data();
        let fds = [
            memfd.as_raw_fd(),
            wake.as_raw_fd(),
            peer_rx.as_raw_fd(),
            peer_tx.as_raw_fd(),
        ];
        // A new connection's socket buffer takes these few octets whole.
        if send_with_fds(control.as_raw_fd(), &answer, &fds)? != answer.len() {
            return Err(io::Error::new(io::ErrorKind::WriteZero, "offer cut short"));
        }
        Ok(ShmIo {
            control,
            rx: Consumer {
                region: region.clone(),
                ctl: UP,
                head: 0,
                published: 0,
            },
            tx: Producer {
                region,
                ctl: DOWN,
                tail: 0,
            },
            wake,
            peer_rx,
            peer_tx,
            framer: Framer::new(),
        })
    }

    /// The descriptors the face is polled on: the connection (its end) and the eventfd.
    pub fn raw_fds(&self) -> [RawFd; 2] {
        [self.control.as_raw_fd(), self.wake.as_raw_fd()]
    }

    /// Whether the up ring holds data (or an impossible tail a read should report).
    pub fn has_input(&self) -> bool {
        !matches!(self.rx.available(), Ok(0))
    }

    /// Before the forwarder sleeps: asks the application to wake it on new data; `true`
    /// when data came meanwhile.
    pub fn announce_sleep(&self) -> bool {
        self.rx.announce_sleep()
    }

    /// Like the stream's burst: at most `budget` complete elements from the up ring (what
    /// the framer already holds first), each with the octets of its buffer when it has one of
    /// its own ([`Consumer::read_next`]; 0 for a slice of the framer's). `hangup`: the
    /// connection's end was reported; what the ring holds is read, then the face ends. What
    /// was read is freed for the application once, at the end (one shared write, and the
    /// application woken if it waits for room).
    pub fn recv_burst(
        &mut self,
        hangup: bool,
        budget: usize,
        deliver: impl FnMut(Bytes, usize),
    ) -> Result<Progress, FaceError> {
        let progress = self.read_burst(hangup, budget, deliver);
        if self.rx.publish() {
            signal(self.peer_tx.as_fd());
        }
        progress
    }

    /// [`ShmIo::recv_burst`] without freeing what it read.
    fn read_burst(
        &mut self,
        hangup: bool,
        budget: usize,
        mut deliver: impl FnMut(Bytes, usize),
    ) -> Result<Progress, FaceError> {
        let mut left = budget;
        // Reads into the framer per burst are bounded, like a stream's: an application
        // writing as fast as the forwarder reads cannot keep it in one face (`budget`
        // bounds the elements read alone).
        let mut reads = 0;
        loop {
            while left > 0 {
                match self.framer.next_frame()? {
                    Some(frame) => {
                        deliver(frame, 0);
                        left -= 1;
                    }
                    None => break,
                }
            }
            if left == 0 {
                return Ok(Progress::More);
            }
            if reads == READS_PER_BURST {
                return Ok(Progress::More);
            }
            let room = self.framer.read_room();
            let whole = self.framer.pending() == 0;
            let read = self.rx.read_next(whole, self.framer.buffer(), room)?;
            let n = match read {
                ShmRead::Own(frame, held) => {
                    deliver(frame, held);
                    left -= 1;
                    continue;
                }
                ShmRead::Framed(n) => n,
            };
            reads += 1;
            if n == 0 {
                if hangup && self.peer_closed() {
                    return Err(FaceError::Closed);
                }
                return Ok(Progress::Drained);
            }
        }
    }

    /// Whether the application closed its connection (read to its end; octets it sent on
    /// it after the switch are discarded).
    fn peer_closed(&self) -> bool {
        let mut buf = [0u8; 256];
        loop {
            // SAFETY: reads at most 256 octets into a live local buffer.
            let n = unsafe {
                libc::recv(
                    self.control.as_raw_fd(),
                    buf.as_mut_ptr().cast(),
                    buf.len(),
                    libc::MSG_DONTWAIT,
                )
            };
            match n {
                0 => return true,
                n if n > 0 => continue,
                _ => {
                    let e = io::Error::last_os_error();
                    return e.kind() != io::ErrorKind::WouldBlock
                        && e.kind() != io::ErrorKind::Interrupted;
                }
            }
        }
    }

    /// Copies the output queue into the down ring until it is empty or the ring is full
    /// (then the application is asked to wake the forwarder when it frees room).
    pub fn flush(&mut self, q: &mut OutQueue, c: &mut FaceCounters) -> Result<Flushed, FaceError> {
        const FRAMES: usize = 64;
        loop {
            if q.is_empty() {
                return Ok(Flushed::Done);
            }
            let mut iov = [IoSlice::new(&[]); 2 * FRAMES];
            let (n_iov, _) = q.gather(&mut iov);
            let (n, wake) = self.tx.write_vectored(&iov[..n_iov])?;
            if wake {
                signal(self.peer_rx.as_fd());
            }
            if n > 0 {
                c.n_out_bytes += n as u64;
                q.consume_octets(n);
                continue;
            }
            if !self.tx.announce_wait()? {
                return Ok(Flushed::Blocked);
            }
        }
    }
}

/// The application's side of a shared-memory link, split into halves that may live on
/// different threads ([`ShmReader`], [`ShmWriter`]).
pub fn attach(control: UnixStream, mut fds: Vec<OwnedFd>) -> io::Result<(ShmReader, ShmWriter)> {
    if fds.len() != OFFER_FDS {
        return Err(corrupt("offer without its descriptors"));
    }
    let tx_wake = fds.pop().expect("four");
    let rx_wake = fds.pop().expect("four");
    let fw_wake = Arc::new(fds.pop().expect("four"));
    let region = Arc::new(Region::attach(&fds[0])?);
    let control = Arc::new(control);
    Ok((
        ShmReader {
            ring: Consumer {
                region: region.clone(),
                ctl: DOWN,
                head: 0,
                published: 0,
            },
            control: control.clone(),
            wake: rx_wake,
            peer: fw_wake.clone(),
            timeout: None,
        },
        ShmWriter {
            ring: Producer {
                region,
                ctl: UP,
                tail: 0,
            },
            control,
            wake: tx_wake,
            peer: fw_wake,
        },
    ))
}

/// Waits until `wake` is written or the connection ends (`Ok(false)`), at most `timeout`
/// (`Err(WouldBlock)` when it passes).
fn sleep_on(wake: &OwnedFd, control: &UnixStream, timeout: Option<Duration>) -> io::Result<bool> {
    let mut fds = [
        libc::pollfd {
            fd: wake.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        },
        libc::pollfd {
            fd: control.as_raw_fd(),
            events: libc::POLLIN | libc::POLLRDHUP,
            revents: 0,
        },
    ];
    let ms = timeout.map_or(-1, |t| t.as_millis().clamp(1, i32::MAX as u128) as i32);
    // SAFETY: `fds` is a live array of two pollfd.
    let n = unsafe { libc::poll(fds.as_mut_ptr(), 2, ms) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    if n == 0 {
        return Err(io::ErrorKind::WouldBlock.into());
    }
    if fds[1].revents != 0 {
        return Ok(false);
    }
    drain(wake.as_fd());
    Ok(true)
}

/// The application's receiving half: reads the down ring as a byte stream.
#[derive(Debug)]
pub struct ShmReader {
    ring: Consumer,
    control: Arc<UnixStream>,
    wake: OwnedFd,
    peer: Arc<OwnedFd>,
    timeout: Option<Duration>,
}

impl ShmReader {
    /// How long a read waits for data (`None`: forever); past it, `WouldBlock`.
    pub fn set_read_timeout(&mut self, t: Option<Duration>) {
        self.timeout = t;
    }

    /// Appends what the ring holds (at most `max` octets) to `buf`, waiting like
    /// [`io::Read::read`]; 0: the forwarder closed the connection.
    pub fn read_buf(&mut self, buf: &mut bytes::BytesMut, max: usize) -> io::Result<usize> {
        self.wait(|ring| ring.read_into(buf, max))
    }

    /// Runs `attempt` until it reads something: on an empty ring, announces sleep and sleeps
    /// on the eventfd (or until the connection ends, or the read timeout) at once.
    ///
    /// It does not poll the ring first: on two cores shared by the forwarder and two
    /// applications, an application polling (yielding between looks) for 50 µs before it slept
    /// cost `kite perf` at 8000 octets a third of its rate and a 100 MB `kite get` about half
    /// its goodput against sleeping at once, and raised the forwarder's CPU per exchange
    /// (docs/performance.md, "Shared-memory faces").
    fn wait(
        &mut self,
        mut attempt: impl FnMut(&mut Consumer) -> io::Result<(usize, bool)>,
    ) -> io::Result<usize> {
        let deadline = self.timeout.map(|t| Instant::now() + t);
        loop {
            let (n, wake) = attempt(&mut self.ring)?;
            if wake {
                signal(self.peer.as_fd());
            }
            if n > 0 {
                return Ok(n);
            }
            if self.ring.announce_sleep() {
                continue;
            }
            let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
            if left.is_some_and(|l| l.is_zero()) {
                return Err(io::ErrorKind::WouldBlock.into());
            }
            if !sleep_on(&self.wake, &self.control, left)? {
                // The connection ended: deliver what the ring still holds first.
                return attempt(&mut self.ring).map(|(n, _)| n);
            }
        }
    }
}

impl io::Read for ShmReader {
    /// Reads what the ring holds; sleeps until the forwarder writes when it is empty.
    /// `Ok(0)`: the forwarder closed the connection.
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        self.wait(|ring| ring.read(buf))
    }
}

/// The application's sending half: writes the up ring as a byte stream.
#[derive(Debug)]
pub struct ShmWriter {
    ring: Producer,
    control: Arc<UnixStream>,
    wake: OwnedFd,
    peer: Arc<OwnedFd>,
}

impl io::Write for ShmWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.write_vectored(&[IoSlice::new(buf)])
    }

    /// Copies as much as the ring takes (at least one octet: when full, announces that it
    /// waits and sleeps until the forwarder frees room, without polling first, as
    /// [`ShmReader`] does).
    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        if bufs.iter().all(|b| b.is_empty()) {
            return Ok(0);
        }
        loop {
            let (n, wake) = self.ring.write_vectored(bufs)?;
            if wake {
                signal(self.peer.as_fd());
            }
            if n > 0 {
                return Ok(n);
            }
            if self.ring.announce_wait()? {
                continue;
            }
            if !sleep_on(&self.wake, &self.control, None)? {
                return Err(io::ErrorKind::BrokenPipe.into());
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests;
