//! AF_PACKET sockets: raw Ethernet frames of one EtherType on one interface, and what the
//! kernel knows about that interface (index, hardware type and address, MTU).

use std::ffi::CString;
use std::io;
use std::mem;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd, RawFd};

/// An interface's facts, as the kernel reports them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InterfaceInfo {
    /// The hardware type (`ARPHRD_ETHER` for Ethernet and veth).
    pub hw_type: u16,
    /// The hardware address.
    pub mac: [u8; 6],
    /// The MTU: the most octets a frame carries after its link header.
    pub mtu: usize,
    /// Whether the interface is up and has its carrier (IFF_UP and IFF_RUNNING): frames
    /// sent on it can leave.
    pub running: bool,
}

/// The index of the interface called `name`; `Ok(None)` when there is none.
pub fn interface_index(name: &str) -> io::Result<Option<u32>> {
    if name.len() >= libc::IFNAMSIZ {
        return Ok(None);
    }
    let Ok(c) = CString::new(name) else {
        return Ok(None);
    };
    // SAFETY: `c` is a NUL-terminated string that lives through the call, which only reads it.
    let index = unsafe { libc::if_nametoindex(c.as_ptr()) };
    if index == 0 {
        let e = io::Error::last_os_error();
        return match e.raw_os_error() {
            Some(libc::ENODEV) | Some(libc::ENXIO) => Ok(None),
            _ => Err(e),
        };
    }
    Ok(Some(index))
}

/// A non-blocking AF_PACKET socket that reads and writes whole frames (link header
/// included) of one EtherType on one interface.
#[derive(Debug)]
pub struct PacketSocket {
    fd: OwnedFd,
}

impl PacketSocket {
    /// Opens a socket for frames of `ethertype` on interface `index`. Frames this host sends
    /// are not read back. Needs CAP_NET_RAW (the error is then `PermissionDenied`).
    pub fn open(index: u32, ethertype: u16) -> io::Result<Self> {
        let socket = Self::bound(index, ethertype)?;
        // Linux 4.20 and later; on older kernels the caller's source-address check suffices.
        let _ = socket.set_option(libc::SOL_PACKET, libc::PACKET_IGNORE_OUTGOING, &1i32);
        Ok(socket)
    }

    /// Opens a socket that reads every frame on interface `index`, received or sent by this
    /// host (ETH_P_ALL), for capture. Needs CAP_NET_RAW.
    pub fn capture(index: u32) -> io::Result<Self> {
        Self::bound(index, libc::ETH_P_ALL as u16)
    }

    /// Waits up to `timeout_ms` for a frame, then reads it into `buf` (a longer frame is
    /// truncated to `buf`): its length and whether this host sent it; `None` on timeout.
    pub fn recv_frame(&self, buf: &mut [u8], timeout_ms: i32) -> io::Result<Option<(usize, bool)>> {
        let mut pfd = libc::pollfd {
            fd: self.fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: `pfd` is one live pollfd; poll(2) writes only its `revents`.
        let r = unsafe { libc::poll(&mut pfd, 1, timeout_ms) };
        if r < 0 {
            let e = io::Error::last_os_error();
            return if e.kind() == io::ErrorKind::Interrupted {
                Ok(None)
            } else {
                Err(e)
            };
        }
        if r == 0 {
            return Ok(None);
        }
        // SAFETY: sockaddr_ll is plain old data; all-zero is a valid value.
        let mut from: libc::sockaddr_ll = unsafe { mem::zeroed() };
        let mut from_len = mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t;
        // SAFETY: `buf` is writable for its length and `from` for `from_len` octets;
        // recvfrom(2) writes within both and updates `from_len`.
        let n = unsafe {
            libc::recvfrom(
                self.fd.as_raw_fd(),
                buf.as_mut_ptr().cast(),
                buf.len(),
                0,
                (&mut from as *mut libc::sockaddr_ll).cast(),
                &mut from_len,
            )
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            return if e.kind() == io::ErrorKind::WouldBlock {
                Ok(None)
            } else {
                Err(e)
            };
        }
        let outgoing = from.sll_pkttype == libc::PACKET_OUTGOING;
        Ok(Some((n as usize, outgoing)))
    }

    /// A socket bound to `protocol` (an EtherType, or ETH_P_ALL) on interface `index`.
    fn bound(index: u32, ethertype: u16) -> io::Result<Self> {
        // Protocol 0 receives nothing until `bind` names the EtherType and the interface, so
        // no frame of another interface slips in between.
        // SAFETY: a system call with integer arguments only.
        let fd = unsafe {
            libc::socket(
                libc::AF_PACKET,
                libc::SOCK_RAW | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                0,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` is a descriptor just returned by socket(2) that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let addr = libc::sockaddr_ll {
            sll_family: libc::AF_PACKET as u16,
            sll_protocol: ethertype.to_be(),
            sll_ifindex: index as i32,
            sll_hatype: 0,
            sll_pkttype: 0,
            sll_halen: 0,
            sll_addr: [0; 8],
        };
        // SAFETY: `addr` is a sockaddr_ll of the length given; bind(2) only reads it.
        let r = unsafe {
            libc::bind(
                fd.as_raw_fd(),
                (&addr as *const libc::sockaddr_ll).cast(),
                mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
            )
        };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(PacketSocket { fd })
    }

    /// Receives frames sent to the Ethernet multicast address `group` on interface `index`.
    pub fn join_multicast(&self, index: u32, group: [u8; 6]) -> io::Result<()> {
        let mut address = [0u8; 8];
        address[..6].copy_from_slice(&group);
        let req = libc::packet_mreq {
            mr_ifindex: index as i32,
            mr_type: libc::PACKET_MR_MULTICAST as u16,
            mr_alen: 6,
            mr_address: address,
        };
        self.set_option(libc::SOL_PACKET, libc::PACKET_ADD_MEMBERSHIP, &req)
    }

    /// The hardware type, address, MTU and state of the interface called `name`.
    pub fn interface_info(&self, name: &str) -> io::Result<InterfaceInfo> {
        let hw = self.ifreq(name, libc::SIOCGIFHWADDR)?;
        // SAFETY: SIOCGIFHWADDR succeeded, so the kernel wrote the `ifru_hwaddr` member.
        let addr = unsafe { hw.ifr_ifru.ifru_hwaddr };
        let mut mac = [0u8; 6];
        for (m, &b) in mac.iter_mut().zip(&addr.sa_data) {
            *m = b as u8;
        }
        let m = self.ifreq(name, libc::SIOCGIFMTU)?;
        // SAFETY: SIOCGIFMTU succeeded, so the kernel wrote the `ifru_mtu` member.
        let mtu = unsafe { m.ifr_ifru.ifru_mtu };
        let f = self.ifreq(name, libc::SIOCGIFFLAGS)?;
        // SAFETY: SIOCGIFFLAGS succeeded, so the kernel wrote the `ifru_flags` member.
        let flags = i32::from(unsafe { f.ifr_ifru.ifru_flags });
        let running = libc::IFF_UP | libc::IFF_RUNNING;
        Ok(InterfaceInfo {
            hw_type: addr.sa_family,
            mac,
            mtu: usize::try_from(mtu).unwrap_or(0),
            running: flags & running == running,
        })
    }

    /// The descriptor, for `recvmmsg`, `sendmmsg` and readiness.
    pub fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// An interface ioctl on `name` (shorter than IFNAMSIZ, no NUL: checked by the caller
    /// through [`interface_index`]).
    fn ifreq(&self, name: &str, request: libc::c_ulong) -> io::Result<libc::ifreq> {
        // SAFETY: ifreq is plain old data (a name and a union of plain fields); all-zero is
        // a valid value.
        let mut req: libc::ifreq = unsafe { mem::zeroed() };
        for (d, s) in req
            .ifr_name
            .iter_mut()
            .zip(name.bytes())
            .take(libc::IFNAMSIZ - 1)
        {
            *d = s as libc::c_char;
        }
        // SAFETY: `req` is a live, NUL-terminated ifreq; the kernel reads its name and writes
        // only within the struct.
        let r = unsafe {
            libc::ioctl(
                self.fd.as_raw_fd(),
                request as _,
                &mut req as *mut libc::ifreq,
            )
        };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(req)
    }

    /// Asks for a receive buffer of `octets` (beyond `net.core.rmem_max` when the process
    /// has CAP_NET_ADMIN, else up to it); the size the kernel granted (which it reports
    /// doubled, counting its bookkeeping).
    pub fn set_recv_buffer(&self, octets: usize) -> io::Result<usize> {
        let want = libc::c_int::try_from(octets).unwrap_or(libc::c_int::MAX);
        if self
            .set_option(libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, &want)
            .is_err()
        {
            self.set_option(libc::SOL_SOCKET, libc::SO_RCVBUF, &want)?;
        }
        let got: libc::c_int = self.get_option(libc::SOL_SOCKET, libc::SO_RCVBUF)?;
        Ok(usize::try_from(got).unwrap_or(0))
    }

    /// Frames the kernel dropped since the last call because the receive buffer was full
    /// (`PACKET_STATISTICS`' tp_drops, which reading resets).
    pub fn take_drops(&self) -> io::Result<u64> {
        // struct tpacket_stats { tp_packets, tp_drops }, both unsigned int.
        let [_packets, drops]: [libc::c_uint; 2] =
            self.get_option(libc::SOL_PACKET, libc::PACKET_STATISTICS)?;
        Ok(u64::from(drops))
    }

    fn get_option<T: Copy + Default>(
        &self,
        level: libc::c_int,
        name: libc::c_int,
    ) -> io::Result<T> {
        let mut value = T::default();
        let mut len = mem::size_of::<T>() as libc::socklen_t;
        // SAFETY: `value` is a live `T` of `len` octets; getsockopt(2) writes at most `len`
        // octets into it and the length written into `len`.
        let r = unsafe {
            libc::getsockopt(
                self.fd.as_raw_fd(),
                level,
                name,
                (&mut value as *mut T).cast(),
                &mut len,
            )
        };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(value)
    }

    fn set_option<T>(&self, level: libc::c_int, name: libc::c_int, value: &T) -> io::Result<()> {
        // SAFETY: `value` points at a live `T` of the length given; setsockopt(2) only reads it.
        let r = unsafe {
            libc::setsockopt(
                self.fd.as_raw_fd(),
                level,
                name,
                (value as *const T).cast(),
                mem::size_of::<T>() as libc::socklen_t,
            )
        };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

impl AsFd for PacketSocket {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::{send_mmsg, RecvBatch};
    use std::time::{Duration, Instant};

    /// EtherTypes no forwarder sends (IEEE's two "local experimental" ones and the OUI
    /// extended one), one per test that sends: a packet socket receives every frame of its
    /// EtherType on the interface, whatever multicast group it joined, so tests running in
    /// parallel on one EtherType would read each other's frames.
    const FRAME_ETHERTYPE: u16 = 0x88b5;
    const STAMP_ETHERTYPE: u16 = 0x88b6;
    const DROPS_ETHERTYPE: u16 = 0x88b7;

    /// A socket for `ethertype` on the loopback interface, or `None` (with the reason
    /// printed) without CAP_NET_RAW.
    fn loopback_socket(ethertype: u16) -> Option<(u32, PacketSocket)> {
        let lo = interface_index("lo").unwrap().expect("lo exists");
        match PacketSocket::open(lo, ethertype) {
            Ok(s) => Some((lo, s)),
            Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
                kite_testkit::skip(format_args!("AF_PACKET needs CAP_NET_RAW: {e}"));
                None
            }
            Err(e) => panic!("AF_PACKET socket on lo: {e}"),
        }
    }

    #[test]
    fn unknown_and_impossible_interface_names_have_no_index() {
        assert_eq!(interface_index("kite-no-such0").unwrap(), None);
        assert_eq!(interface_index(&"x".repeat(libc::IFNAMSIZ)).unwrap(), None);
        assert_eq!(interface_index("a\0b").unwrap(), None);
        assert!(interface_index("lo").unwrap().is_some());
    }

    #[test]
    fn loopback_reports_its_type_and_mtu() {
        let Some((_, s)) = loopback_socket(FRAME_ETHERTYPE) else {
            return;
        };
        let info = s.interface_info("lo").unwrap();
        assert_eq!(info.hw_type, libc::ARPHRD_LOOPBACK);
        assert_eq!(info.mac, [0; 6]);
        assert!(info.mtu >= 1500, "{info:?}");
        assert!(info.running, "lo is up: {info:?}");
        let err = s.interface_info("kite-no-such0").unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::ENODEV));
    }

    #[test]
    fn a_frame_sent_on_one_socket_is_read_by_another() {
        let Some((lo, tx)) = loopback_socket(FRAME_ETHERTYPE) else {
            return;
        };
        let (_, rx) = loopback_socket(FRAME_ETHERTYPE).unwrap();
        rx.join_multicast(lo, [0x01, 0x00, 0x5e, 0x00, 0x17, 0xaa])
            .unwrap();
        let mut header = vec![0x01, 0x00, 0x5e, 0x00, 0x17, 0xaa, 2, 0, 0, 0, 0, 7];
        header.extend_from_slice(&FRAME_ETHERTYPE.to_be_bytes());
        let payload = [0x42u8; 50];
        assert_eq!(
            send_mmsg(tx.raw_fd(), None, &[[&header[..], &payload]]).unwrap(),
            1
        );
        let mut batch = RecvBatch::new(2048);
        let until = Instant::now() + Duration::from_secs(5);
        loop {
            match batch.recv(rx.raw_fd()) {
                Ok(n) => {
                    assert_eq!(n, 1);
                    break;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock && Instant::now() < until => {
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(e) => panic!("no frame: {e}"),
            }
        }
        assert_eq!(&batch.datagram(0)[..14], &header[..]);
        assert_eq!(&batch.datagram(0)[14..], &payload[..]);
    }

    #[test]
    fn a_stamped_batch_tells_how_long_its_newest_frame_waited_in_the_socket() {
        let Some((lo, tx)) = loopback_socket(STAMP_ETHERTYPE) else {
            return;
        };
        let (_, rx) = loopback_socket(STAMP_ETHERTYPE).unwrap();
        rx.join_multicast(lo, [0x01, 0x00, 0x5e, 0x00, 0x17, 0xac])
            .unwrap();
        crate::sys::timestamp_arrivals(rx.raw_fd()).unwrap();
        let mut header = vec![0x01, 0x00, 0x5e, 0x00, 0x17, 0xac, 2, 0, 0, 0, 0, 7];
        header.extend_from_slice(&STAMP_ETHERTYPE.to_be_bytes());
        let mut batch = RecvBatch::stamped(2048);
        assert_eq!(batch.waited(), Duration::ZERO, "nothing read yet");
        let frames = [[&header[..], &[0x42u8; 50][..]]; 3];
        // The kernel turns arrival timestamps on for the whole stack a moment after the first
        // socket asks (a deferred static key); until then a frame is stamped when it is read.
        // Wait until a frame that waited 20 ms says so.
        let live = (0..100).any(|_| {
            assert_eq!(send_mmsg(tx.raw_fd(), None, &frames[..1]).unwrap(), 1);
            std::thread::sleep(Duration::from_millis(20));
            let until = Instant::now() + Duration::from_secs(5);
            while batch.recv_ready(rx.raw_fd()).unwrap().is_none() {
                assert!(Instant::now() < until, "the frame never came");
            }
            batch.waited() >= Duration::from_millis(20)
        });
        assert!(live, "arrival timestamps never came on");
        assert_eq!(send_mmsg(tx.raw_fd(), None, &frames).unwrap(), 3);
        std::thread::sleep(Duration::from_millis(30));
        let before = Instant::now();
        assert_eq!(batch.recv_ready(rx.raw_fd()).unwrap(), Some(3));
        let waited = batch.waited();
        assert!(
            waited >= Duration::from_millis(30)
                && waited < Duration::from_millis(30) + before.elapsed() + Duration::from_secs(1),
            "{waited:?}"
        );
        // A frame read as soon as it arrives waited (almost) nothing.
        assert_eq!(send_mmsg(tx.raw_fd(), None, &frames[..1]).unwrap(), 1);
        let until = Instant::now() + Duration::from_secs(5);
        while batch.recv_ready(rx.raw_fd()).unwrap().is_none() {
            assert!(Instant::now() < until, "the frame never came");
        }
        assert!(
            batch.waited() < Duration::from_millis(30),
            "{:?}",
            batch.waited()
        );
        // Without timestamps asked for, a batch knows nothing of the wait.
        let mut plain = RecvBatch::new(2048);
        assert_eq!(send_mmsg(tx.raw_fd(), None, &frames[..1]).unwrap(), 1);
        std::thread::sleep(Duration::from_millis(10));
        assert_eq!(plain.recv_ready(rx.raw_fd()).unwrap(), Some(1));
        assert_eq!(plain.waited(), Duration::ZERO);
    }

    #[test]
    fn the_receive_buffer_is_sized_and_overflow_drops_are_counted_then_reset() {
        let Some((lo, tx)) = loopback_socket(DROPS_ETHERTYPE) else {
            return;
        };
        let (_, rx) = loopback_socket(DROPS_ETHERTYPE).unwrap();
        rx.join_multicast(lo, [0x01, 0x00, 0x5e, 0x00, 0x17, 0xab])
            .unwrap();
        let big = rx.set_recv_buffer(4 << 20).unwrap();
        let limit = std::fs::read_to_string("/proc/sys/net/core/rmem_max")
            .ok()
            .and_then(|s| s.trim().parse::<usize>().ok())
            .unwrap_or(0);
        // Linux reports twice what was asked; without CAP_NET_ADMIN at most rmem_max.
        assert!(big >= (4 << 20).min(limit), "{big}");
        let small = rx.set_recv_buffer(4096).unwrap();
        assert!(small < big, "{small} >= {big}");
        assert_eq!(rx.take_drops().unwrap(), 0, "nothing sent yet");
        let mut header = vec![0x01, 0x00, 0x5e, 0x00, 0x17, 0xab, 2, 0, 0, 0, 0, 7];
        header.extend_from_slice(&DROPS_ETHERTYPE.to_be_bytes());
        let payload = [0x42u8; 1000];
        for _ in 0..200 {
            send_mmsg(tx.raw_fd(), None, &[[&header[..], &payload]]).unwrap();
        }
        let until = Instant::now() + Duration::from_secs(5);
        let mut drops = 0;
        while drops == 0 && Instant::now() < until {
            drops += rx.take_drops().unwrap();
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(drops > 0, "200 frames into a 4 KiB buffer dropped none");
        assert_eq!(rx.take_drops().unwrap(), 0, "reading resets the count");
    }
}
