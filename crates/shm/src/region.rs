//! One process's mapping of a region: a sealed memfd of a header page and two rings.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use crate::layout::{OFF_MAGIC, OFF_RING_SIZE, OFF_VERSION, UP};
use crate::{corrupt, valid_ring_size, HEADER_LEN, MAGIC, RING_SIZE_RANGE, VERSION};

/// One process's mapping of a region.
#[derive(Debug)]
pub struct Region {
    base: *mut u8,
    len: usize,
    /// Octets of each ring.
    pub(crate) ring: usize,
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

    pub(crate) fn u64_at(&self, off: usize) -> &AtomicU64 {
        assert!(off + 8 <= HEADER_LEN && off.is_multiple_of(8));
        // SAFETY: `off` is within the header page of the live mapping and 8-aligned (the
        // mapping is page-aligned); shared memory is only ever accessed atomically here.
        unsafe { AtomicU64::from_ptr(self.base.add(off).cast()) }
    }

    pub(crate) fn u32_at(&self, off: usize) -> &AtomicU32 {
        assert!(off + 4 <= HEADER_LEN && off.is_multiple_of(4));
        // SAFETY: as in `u64_at`, 4-aligned.
        unsafe { AtomicU32::from_ptr(self.base.add(off).cast()) }
    }

    /// The start of ring data for the control block `ctl`.
    pub(crate) fn data(&self, ctl: usize) -> *mut u8 {
        let at = HEADER_LEN + if ctl == UP { 0 } else { self.ring };
        // SAFETY: `at + ring <= len` (checked when the region was created or attached).
        unsafe { self.base.add(at) }
    }
}

impl Region {
    /// Writes `value` at octet `off` (8-aligned) anywhere in the region, as the other
    /// process may at any time: what tests of either side's defences against a hostile peer
    /// scribble with.
    pub fn scribble(&self, off: usize, value: u64) {
        assert!(off + 8 <= self.len && off.is_multiple_of(8));
        if off < HEADER_LEN {
            self.u64_at(off).store(value, Ordering::Relaxed);
        } else {
            // SAFETY: `off + 8` is within the live mapping and 8-aligned (the mapping is
            // page-aligned); ring data is only ever copied raw, never referenced.
            unsafe { self.base.add(off).cast::<u64>().write_volatile(value) };
        }
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        // SAFETY: `base`/`len` are the mapping made in `map`, unmapped only here; every
        // pointer into it is derived from a `Region` this drop outlives (held in an Arc).
        unsafe { libc::munmap(self.base.cast(), self.len) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A region that is not sealed against shrinking is refused by the application (a shrunk
    /// mapping would fault on access).
    #[test]
    fn an_unsealed_region_is_refused() {
        // SAFETY: returns a new descriptor or -1.
        let fd = unsafe { libc::memfd_create(c"t".as_ptr(), libc::MFD_CLOEXEC) };
        assert!(fd >= 0);
        // SAFETY: a descriptor just returned to us.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        // SAFETY: a plain system call on our descriptor.
        assert_eq!(unsafe { libc::ftruncate(fd.as_raw_fd(), 1 << 20) }, 0);
        assert!(Region::attach(&fd).is_err());
    }
}
