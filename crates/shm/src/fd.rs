//! The descriptors of a link: eventfds to wake a sleeping side, and the offer's descriptors
//! passed over the Unix connection (`SCM_RIGHTS`).

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;

use crate::OFFER_FDS;

/// A new non-blocking eventfd.
pub(crate) fn eventfd() -> io::Result<OwnedFd> {
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
pub(crate) fn drain(fd: BorrowedFd<'_>) {
    let mut v = 0u64;
    // SAFETY: reads at most 8 octets into a live u64.
    unsafe { libc::read(fd.as_raw_fd(), (&mut v as *mut u64).cast(), 8) };
}

/// Sends `data` with the descriptors `fds` attached (`SCM_RIGHTS`).
pub(crate) fn send_with_fds(
    sock: RawFd,
    data: &[u8],
    fds: &[RawFd; OFFER_FDS],
) -> io::Result<usize> {
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
