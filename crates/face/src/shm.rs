//! The forwarder's shared-memory transport: a local application that connected over the Unix
//! socket and asked for shared memory ([`kite_shm`] describes the switch, the region and its
//! rings) is read and written through the rings from then on, its connection kept only as
//! the liveness signal. The stream transport hands this one back when its peer asks
//! ([`crate::stream`]).

#![allow(unsafe_code)]

use std::io::{self, IoSlice};
use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};

use bytes::Bytes;
use kite_shm::{signal, Consumer, Offered, Producer, ShmRead};
use mio::Interest;

use crate::queue::OutQueue;
use crate::transport::{FaceError, Flushed, Progress, RxFrame, Source, Transport};
use crate::uri::FaceUri;
use kite_link::framing::{element_len, Framer};
use kite_link::reassembly::Endpoint;
use kite_link::FaceCounters;

/// Ring reads per receive burst (each up to 64 KiB, [`kite_link::framing::READ_CHUNK`]).
const READS_PER_BURST: usize = 4;

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
    remote: FaceUri,
    local: FaceUri,
}

impl ShmIo {
    /// Sets up a region with rings of `ring` octets and offers it over `control` (the
    /// offer's Data with the descriptors attached); the face between `local` and `remote`
    /// then reads and writes only the rings.
    pub fn offer(
        control: mio::net::UnixStream,
        ring: usize,
        remote: FaceUri,
        local: FaceUri,
    ) -> io::Result<ShmIo> {
        let Offered {
            rx,
            tx,
            wake,
            peer_rx,
            peer_tx,
        } = kite_shm::offer(control.as_fd(), ring)?;
        Ok(ShmIo {
            control,
            rx,
            tx,
            wake,
            peer_rx,
            peer_tx,
            framer: Framer::new(),
            remote,
            local,
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
            let read = self.rx.read_next(whole, self.framer.buffer(), room, |b| {
                element_len(b).ok().flatten()
            })?;
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

impl Transport for ShmIo {
    fn remote_uri(&self) -> FaceUri {
        self.remote.clone()
    }

    fn local_uri(&self) -> FaceUri {
        self.local.clone()
    }

    fn mtu(&self) -> Option<usize> {
        None
    }

    fn sources(&self) -> [Option<Source>; 2] {
        let [control, wake] = self.raw_fds();
        [
            Some((control, Interest::READABLE | Interest::WRITABLE)),
            Some((wake, Interest::READABLE)),
        ]
    }

    fn recv_burst(
        &mut self,
        hangup: bool,
        budget: usize,
        rx: &mut Vec<RxFrame>,
    ) -> Result<Progress, FaceError> {
        ShmIo::recv_burst(self, hangup, budget, |frame, own_buffer| {
            rx.push(RxFrame {
                from: Endpoint::Peer,
                frame,
                own_buffer,
            })
        })
    }

    fn flush(&mut self, q: &mut OutQueue, c: &mut FaceCounters) -> Result<Flushed, FaceError> {
        ShmIo::flush(self, q, c)
    }

    fn pushes_back(&self) -> bool {
        true
    }

    fn flush_after_recv(&self) -> bool {
        true
    }

    fn polled(&self) -> bool {
        true
    }

    fn has_input(&self) -> bool {
        ShmIo::has_input(self)
    }

    fn announce_sleep(&self) -> bool {
        ShmIo::announce_sleep(self)
    }
}

#[cfg(test)]
mod tests;
