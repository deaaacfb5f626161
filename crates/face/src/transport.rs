//! The one interface every transport implements: what a [`Face`](crate::Face) asks of the
//! socket (or rings) under it, whichever kind it is. A face holds its transport as a
//! `Box<dyn Transport>` and makes one dynamic call per receive burst or flush, never one per
//! packet: a burst's frames are staged in a [`RxFrame`] buffer, which the face hands to its
//! link service. Besides bursts and flushes, a transport reports its descriptors and the
//! readiness they are watched for, its MTU, its URIs, and the few properties in which faces
//! differ (pushing back on the sender, reading through a channel, link state).
//!
//! A face replaces its transport in two cases, neither of which it knows the kind of: an
//! outgoing connection that is lost and dialed again ([`Dial`]), and a transport whose peer
//! asked to move to another one ([`Upgrade`]: a local application asking for shared memory
//! on its Unix connection).
//!
//! Transports close their descriptors when dropped.

use std::fmt;
use std::io;
use std::os::fd::RawFd;
use std::time::Instant;

use bytes::Bytes;
use mio::{Interest, Registry, Token};
use thiserror::Error;

use crate::queue::OutQueue;
use crate::uri::FaceUri;
use kite_link::framing::FramingError;
use kite_link::reassembly::Endpoint;
use kite_link::FaceCounters;
use kite_link::{FaceId, Persistency};

// A variant that wraps another error says it in its message and does not also report it as
// its source, or a chain printer (anyhow's `{:#}`) would print it twice.
impl From<io::Error> for FaceError {
    fn from(e: io::Error) -> Self {
        FaceError::Io(e)
    }
}

impl From<FramingError> for FaceError {
    fn from(e: FramingError) -> Self {
        FaceError::Framing(e)
    }
}

/// Why a face failed or refused an operation.
#[derive(Debug, Error)]
pub enum FaceError {
    /// The peer closed the connection.
    #[error("connection closed by peer")]
    Closed,
    /// A socket error.
    #[error("socket error: {0}")]
    Io(io::Error),
    /// The stream stopped being a sequence of TLV elements.
    #[error("framing error: {0}")]
    Framing(FramingError),
    /// A WebSocket protocol error.
    #[error("WebSocket error: {0}")]
    WebSocket(String),
    /// Local fields were asked of a non-local face.
    #[error("local fields can only be enabled on faces with local scope")]
    NotLocal,
    /// A face to this remote already exists.
    #[error("face {0} already exists for this remote")]
    Exists(FaceId),
    /// A unicast face was asked for with a group (multicast) address.
    #[error("a unicast face needs a unicast remote address")]
    NotUnicast,
    /// LpReliability was asked of a face that is not UDP or Ethernet unicast.
    #[error("LpReliability is available on UDP and Ethernet unicast faces only")]
    NoReliability,
}

/// What a receive burst left behind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// The socket had nothing more: wait for the next readiness event.
    Drained,
    /// The burst budget ran out first: call again without waiting (readiness is
    /// edge-triggered and will not be reported again).
    More,
}

/// What a flush left behind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flushed {
    /// The output queue is empty.
    Done,
    /// The socket is full: flush again when it reports writable.
    Blocked,
}

/// An interface's state as its faces see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkState {
    /// Up and running (IFF_UP and IFF_RUNNING); false once the interface is gone.
    pub up: bool,
    /// The interface MTU.
    pub mtu: usize,
}

/// One frame a receive burst read, staged for the face's link service.
#[derive(Debug)]
pub(crate) struct RxFrame {
    /// Who sent it, as reassembly keys fragments.
    pub from: Endpoint,
    /// The frame.
    pub frame: Bytes,
    /// Octets of the buffer the frame is alone in, or 0 when it shares one.
    pub own_buffer: usize,
}

/// A descriptor a face registers in its thread's poll, and the readiness it waits for.
pub(crate) type Source = (RawFd, Interest);

/// The socket side of a face.
pub(crate) trait Transport: fmt::Debug + Send {
    /// The peer's URI.
    fn remote_uri(&self) -> FaceUri;

    /// The local end's URI.
    fn local_uri(&self) -> FaceUri;

    /// The MTU the link service fragments to when the face is made; `None` for a stream,
    /// which never fragments.
    fn mtu(&self) -> Option<usize>;

    /// The descriptors the face is polled on: first its socket (read and write readiness;
    /// `None` for a face whose channel's socket carries its readiness), then one more that
    /// wakes it for reading, if any.
    fn sources(&self) -> [Option<Source>; 2];

    /// Reads one burst (at most `budget` frames where the transport can hold the rest back)
    /// into `rx`. `hangup`: the readiness event reported the peer's side closed.
    fn recv_burst(
        &mut self,
        hangup: bool,
        budget: usize,
        rx: &mut Vec<RxFrame>,
    ) -> Result<Progress, FaceError>;

    /// Writes `q` until it is empty or the socket is full, counting the octets sent in `c`.
    fn flush(&mut self, q: &mut OutQueue, c: &mut FaceCounters) -> Result<Flushed, FaceError>;

    /// Whether its channel reads for it (UDP unicast, Ethernet): the face reads nothing
    /// itself, reassembles in the channel's reassembler, and goes when idle.
    fn via_channel(&self) -> bool {
        false
    }

    /// What other I/O threads received for the face (an Ethernet face whose frames AF_XDP
    /// steering hands to the threads of their shards), to add to its own counts.
    fn lane_stats(&self) -> Option<&crate::lanes::LaneStats> {
        None
    }

    /// Whether a sender that is not read is held back (a stream), rather than lost.
    fn pushes_back(&self) -> bool {
        false
    }

    /// Whether frames waiting in the queue may go after a receive burst (a handshake that
    /// completed, a peer that made room).
    fn flush_after_recv(&self) -> bool {
        false
    }

    /// Whether it holds output of its own that its socket had no room for (WebTransport's
    /// QUIC packets, the messages in a WebSocket writer's buffer): it is written when the
    /// socket becomes writable, even with the face's queue empty.
    fn holds_output(&self) -> bool {
        false
    }

    /// Whether NDNLPv2 LpReliability may run on it (unicast datagrams).
    fn reliable_capable(&self) -> bool {
        false
    }

    /// The MTU a face may be given, from the one asked.
    fn clamp_mtu(&self, mtu: usize) -> usize {
        mtu
    }

    /// The MTU its link carries now, once after it changed (WebTransport: QUIC's path MTU
    /// discovery moved the session's datagram size); `None`: unchanged since last taken.
    fn take_mtu(&mut self) -> Option<usize> {
        None
    }

    /// Whether its link is up.
    fn is_up(&self) -> bool {
        true
    }

    /// Takes its interface's new state (Ethernet): whether up/down flipped; `None`
    /// when it has no interface.
    fn follow_link(&mut self, _link: LinkState) -> Option<bool> {
        None
    }

    /// The face's persistency changed.
    fn persistency_changed(&self, _p: Persistency) {}

    /// The receive buffer of its own socket as the kernel reports it.
    #[cfg(test)]
    fn recv_buffer(&self) -> Option<usize> {
        None
    }

    /// Whether its peer asked to move to another transport ([`Transport::take_upgrade`]).
    fn upgrade_requested(&self) -> bool {
        false
    }

    /// The request to move to another transport, taken once.
    fn take_upgrade(&mut self) -> Option<Upgrade> {
        None
    }

    /// Whether the I/O thread looks at it while awake ([`Transport::has_input`]) and so
    /// keeps it (shared memory).
    fn polled(&self) -> bool {
        false
    }

    /// Whether input waits that no readiness event announced.
    fn has_input(&self) -> bool {
        false
    }

    /// Before the I/O thread sleeps: asks the peer to wake it; `true` when input arrived
    /// meanwhile (do not sleep).
    fn announce_sleep(&self) -> bool {
        false
    }

    /// Whether the transport keeps timers of its own ([`Transport::deadline`]): the I/O
    /// thread then lists the face among those whose deadlines it watches.
    fn timed(&self) -> bool {
        false
    }

    /// When its timers want [`Transport::on_deadline`] (QUIC's loss detection, delayed
    /// acknowledgements, idle timeout), as of its last call; `None`: no timer.
    fn deadline(&self) -> Option<Instant> {
        None
    }

    /// Lets its timers run at `now`, sending what they have to; an error means the face is
    /// done (its connection timed out or closed).
    fn on_deadline(&mut self, _now: Instant) -> Result<(), FaceError> {
        Ok(())
    }
}

/// Makes the transport that replaces another.
pub(crate) type Replace = Box<dyn FnOnce() -> io::Result<Box<dyn Transport>> + Send>;

/// A peer's request to move to another transport.
pub(crate) struct Upgrade {
    /// The packet that asked: it goes on to the forwarder if the move fails.
    pub request: Bytes,
    /// What makes the replacement (answering the request), or why it cannot be made.
    pub replace: io::Result<Replace>,
}

/// An outgoing connection on its way, which becomes a face's transport once connected.
pub(crate) trait Dial: fmt::Debug + Send {
    /// Registers for the readiness the transport it becomes needs (read and write).
    fn register(&mut self, registry: &Registry, token: Token) -> io::Result<()>;

    /// The socket's descriptor.
    fn raw_fd(&self) -> RawFd;

    /// After an event: `Ok(true)` once connected, `Ok(false)` while connecting, the error
    /// once the connection failed.
    fn progress(&mut self) -> io::Result<bool>;

    /// The transport of the connected socket (registered as it was).
    fn connected(self: Box<Self>) -> io::Result<Box<dyn Transport>>;
}

/// Dials a face's peer again (the face keeps it from its making).
pub(crate) type Redial = fn(&FaceUri) -> io::Result<Box<dyn Dial>>;
