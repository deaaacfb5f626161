//! The forwarder's side of the switch: a new region offered over the application's Unix
//! connection, and the ends of its rings the forwarder keeps.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};
use std::sync::Arc;

use crate::fd::{eventfd, send_with_fds};
use crate::layout::{DOWN, UP};
use crate::ring::{Consumer, Producer};
use crate::{offer_data, Region};

/// What the forwarder keeps of a region it offered.
#[derive(Debug)]
pub struct Offered {
    /// The up ring, which the application writes.
    pub rx: Consumer,
    /// The down ring, which the forwarder writes.
    pub tx: Producer,
    /// Written by the application to wake the forwarder (to be polled).
    pub wake: OwnedFd,
    /// Written by the forwarder when the application sleeps waiting for data.
    pub peer_rx: OwnedFd,
    /// Written by the forwarder when the application sleeps waiting for room.
    pub peer_tx: OwnedFd,
}

/// Sets up a region with rings of `ring` octets and offers it over `control` (the offer's
/// Data with the region's and the eventfds' descriptors attached).
pub fn offer(control: BorrowedFd<'_>, ring: usize) -> io::Result<Offered> {
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
    Ok(Offered {
        rx: Consumer::new(region.clone(), UP),
        tx: Producer::new(region, DOWN),
        wake,
        peer_rx,
        peer_tx,
    })
}
