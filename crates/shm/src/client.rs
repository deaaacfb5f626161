//! The application's side of a link: [`attach`] maps the region an offer brought, and its
//! halves read and write the rings as byte streams, sleeping on their eventfds.

use std::io::{self, IoSlice};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::fd::{drain, signal};
use crate::layout::{DOWN, UP};
use crate::ring::{Consumer, Producer};
use crate::{corrupt, Region, OFFER_FDS};

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
            ring: Consumer::new(region.clone(), DOWN),
            control: control.clone(),
            wake: rx_wake,
            peer: fw_wake.clone(),
            timeout: None,
        },
        ShmWriter {
            ring: Producer::new(region, UP),
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
