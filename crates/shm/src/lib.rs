//! `kite-shm`: shared-memory links between Kite and its local applications: a local application that connected over the Unix socket switches to
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
//!
//! This crate holds the region ([`Region`]), its rings ([`Producer`], [`Consumer`]), both
//! sides of the offer ([`offer`] for the forwarder, [`attach`] for the application) and the
//! application's halves ([`ShmReader`], [`ShmWriter`]); the forwarder's face reads and writes
//! the rings through it.

#![allow(unsafe_code)]

mod client;
mod fd;
pub mod layout;
mod offer;
mod region;
mod ring;

use std::io;

use bytes::Bytes;
use kite_packet::{Data, DigestSha256, Interest, Name};

pub use client::{attach, ShmReader, ShmWriter};
pub use fd::{recv_with_fds, signal};
pub use offer::{offer, Offered};
pub use region::Region;
pub use ring::{Consumer, Producer, ShmRead};

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

/// Descriptors sent with the offer: the region, the forwarder's eventfd, the application's
/// receive and transmit eventfds.
pub const OFFER_FDS: usize = 4;

/// Whether `size` is a valid ring size: a power of two in [`RING_SIZE_RANGE`].
pub fn valid_ring_size(size: usize) -> bool {
    size.is_power_of_two() && (RING_SIZE_RANGE.0..=RING_SIZE_RANGE.1).contains(&size)
}

pub(crate) fn corrupt(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("shared memory: {what}"))
}

/// Whether `frame` (a face's first) is the Interest asking for shared memory.
pub fn is_request(frame: &Bytes) -> bool {
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
