//! Packet capture for `kite dump`: every frame on one interface, received or sent, through an
//! AF_PACKET socket (ETH_P_ALL). Needs CAP_NET_RAW.

use std::io;

use crate::ether::EtherError;
use crate::sys::packet::{interface_index, PacketSocket};

/// Whether a captured frame came in or went out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Received on the interface.
    In,
    /// Sent by this host.
    Out,
}

/// Frames of one interface.
#[derive(Debug)]
pub struct Capture {
    socket: PacketSocket,
}

impl Capture {
    /// Starts capturing on interface `iface`.
    pub fn open(iface: &str) -> Result<Self, EtherError> {
        let io_err = |error: io::Error| {
            if error.kind() == io::ErrorKind::PermissionDenied {
                EtherError::PermissionDenied(iface.to_owned())
            } else {
                EtherError::Io {
                    iface: iface.to_owned(),
                    error,
                }
            }
        };
        let index = interface_index(iface)
            .map_err(io_err)?
            .ok_or_else(|| EtherError::NoSuchInterface(iface.to_owned()))?;
        let socket = PacketSocket::capture(index).map_err(io_err)?;
        Ok(Capture { socket })
    }

    /// The next frame, into `buf` (truncated to its length), waiting up to `timeout_ms`: its
    /// length and direction; `None` when none came.
    pub fn next(
        &mut self,
        buf: &mut [u8],
        timeout_ms: i32,
    ) -> io::Result<Option<(usize, Direction)>> {
        Ok(self
            .socket
            .recv_frame(buf, timeout_ms)?
            .map(|(n, out)| (n, if out { Direction::Out } else { Direction::In })))
    }
}
