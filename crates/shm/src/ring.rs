//! The two ends of one ring: a [`Producer`] publishes octets past its tail, a [`Consumer`]
//! frees them past its head; each reads the other's position once per call and checks it.

use std::io::{self, IoSlice};
use std::sync::atomic::{fence, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use kite_packet::pool;

use crate::corrupt;
use crate::layout::{HEAD, SLEEPING, TAIL, WAITING};
use crate::region::Region;

/// The writing end of one ring.
#[derive(Debug)]
pub struct Producer {
    region: Arc<Region>,
    ctl: usize,
    /// Octets published so far (our own copy: the shared one is only written).
    tail: u64,
}

impl Producer {
    /// The producer of the ring whose control block is at `ctl`, from its start.
    pub(crate) fn new(region: Arc<Region>, ctl: usize) -> Self {
        Producer {
            region,
            ctl,
            tail: 0,
        }
    }

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
    /// The consumer of the ring whose control block is at `ctl`, from its start.
    pub(crate) fn new(region: Arc<Region>, ctl: usize) -> Self {
        Consumer {
            region,
            ctl,
            head: 0,
            published: 0,
        }
    }

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
    fn head_element(
        &self,
        ready: usize,
        element_len: impl Fn(&[u8]) -> Option<usize>,
    ) -> Option<usize> {
        // Two VAR-NUMBERs of at most nine octets each.
        let mut header = [0u8; 18];
        let n = header.len().min(ready);
        // SAFETY: `header` is valid for `n <= 18` octets, and `n <= ready`.
        unsafe { self.copy_out(header.as_mut_ptr(), n) };
        let total = element_len(&header[..n])?;
        (total <= ready).then_some(total)
    }

    /// The forwarder's read (freed by a later [`Consumer::publish`]). With `whole` (the
    /// framer holds no partial element): a complete element of at least [`pool::OWN_MIN`]
    /// octets at the head is read alone into an idle reusable buffer of this thread
    /// ([`pool::take_reusable`]), which the CS then keeps as it is, where an element read
    /// with others into the framer's buffer is copied again to be kept. Otherwise up to
    /// `room` octets are appended to `framer`, as a socket read would. An element whose
    /// header the application rewrote while it was copied alone is an error, like an
    /// impossible position. `element_len`: the length of the element a buffer starts with,
    /// when its header is whole and well formed (the stream's framing rule).
    pub fn read_next(
        &mut self,
        whole: bool,
        framer: &mut bytes::BytesMut,
        room: usize,
        element_len: impl Fn(&[u8]) -> Option<usize>,
    ) -> io::Result<ShmRead> {
        let ready = self.available()?;
        if whole && ready >= pool::OWN_MIN {
            if let Some(total) = self
                .head_element(ready, &element_len)
                .filter(|&t| t >= pool::OWN_MIN)
            {
                if let Some(mut buf) = pool::take_reusable(total) {
                    let n = self.take_into(&mut buf, total, ready);
                    if element_len(&buf) != Some(n) {
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
