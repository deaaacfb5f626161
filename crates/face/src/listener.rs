//! Listeners: what the I/O thread asks of a channel that accepts peers, whichever transport
//! it belongs to, and what a configuration hands the runtime to open. A transport that
//! accepts connections or sessions implements [`Listener`] in its own module, with an
//! [`OpenListener`] that opens it ([`crate::unix::Listen`], [`crate::tcp::Listen`],
//! [`crate::ws::Listen`]); the runtime holds them as trait objects and names none.
//!
//! Datagram channels ([`crate::UdpChannel`], [`crate::EtherChannel`]) are not listeners:
//! each reads one socket for many faces and reassembles for them, so the I/O thread reads
//! them as the faces' own input.

use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Instant;

use mio::{Registry, Token};
use thiserror::Error;

use crate::config::FaceConfig;
use crate::face::Face;
use crate::tenancy::{Admission, Tenants};
use crate::uri::FaceUri;
use kite_link::ChannelCounters;
use kite_link::{FaceId, FaceIds};

/// A channel that turns each peer it accepts into an on-demand face.
pub trait Listener: fmt::Debug + Send {
    /// The channel's URI (NFD ChannelStatus LocalUri).
    fn local_uri(&self) -> &FaceUri;

    /// What management lists for it; a listener reads nothing before a face exists, so its
    /// counters are zero unless it says otherwise.
    fn status(&self) -> ChannelStatus {
        ChannelStatus {
            local: self.local_uri().clone(),
            counters: ChannelCounters::default(),
            io_path: None,
            xdp: None,
            cert_sha256: None,
        }
    }

    /// Registers the listener's socket for (edge-triggered) readability.
    fn register(&mut self, registry: &Registry, token: Token) -> io::Result<()>;

    /// Accepts one pending peer as a new on-demand face (its id from `ids`); `Ok(None)` when
    /// none is pending. The I/O thread calls it until `None` after each readiness event.
    fn accept(&mut self, ids: &mut FaceIds, now: Instant) -> io::Result<Option<Accepted>>;
}

/// A listener a configuration asks for, opened when the runtime starts.
pub trait OpenListener: fmt::Debug + Send + Sync {
    /// Where it listens, as configured (before a port 0 is given its number).
    fn uri(&self) -> FaceUri;

    /// Opens it, its faces made with `config`.
    fn open(&self, config: &FaceConfig) -> Result<Box<dyn Listener>, ListenError>;
}

/// Why a listener could not be opened.
#[derive(Debug, Error)]
pub enum ListenError {
    /// The socket's directory could not be created.
    #[error("cannot create directory {dir}: {error}")]
    CreateDir {
        /// The directory.
        dir: PathBuf,
        /// Why (in the message, so not also reported as the source).
        error: io::Error,
    },
    /// Another process accepts connections on this socket path.
    #[error("{0} is in use by a running process")]
    InUse(PathBuf),
    /// The path exists and is not a socket: refuse to delete it.
    #[error("{0} exists and is not a socket")]
    NotASocket(PathBuf),
    /// Binding or preparing the socket failed.
    #[error("cannot listen on {path}: {error}")]
    Io {
        /// The socket path.
        path: PathBuf,
        /// Why (in the message, so not also reported as the source).
        error: io::Error,
    },
    /// Binding an IP listener failed.
    #[error("cannot listen on {addr}: {error}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why (in the message, so not also reported as the source).
        error: io::Error,
    },
}

/// What management learns about a channel: NFD's ChannelStatus (its local URI) and Kite's
/// drop counters; for an Ethernet channel, its I/O path and its XDP program's verdicts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelStatus {
    /// The channel's URI (NFD LocalUri).
    pub local: FaceUri,
    /// What it read but handed to no face.
    pub counters: ChannelCounters,
    /// How an Ethernet channel reads its interface ([`crate::IoPath`] as text); `None` for
    /// socket channels.
    pub io_path: Option<String>,
    /// What Kite's XDP program did with the interface's frames, on the AF_XDP path.
    pub xdp: Option<crate::xdp::program::XdpCounts>,
    /// A WebTransport channel's certificate hash (SHA-256, hexadecimal).
    pub cert_sha256: Option<String>,
}

/// `face`, just accepted, seated among the listener's `tenants` at `now`: with the face
/// given up to make room for it, or refused when the process keeps no more accepted
/// connections and this listener has none to give up (dropping the face closes it).
pub(crate) fn admit(tenants: &mut Tenants, mut face: Face, now: Instant) -> Accepted {
    match tenants.admit(face.id(), now) {
        Admission::Admit(tenant, evict) => {
            face.set_tenant(tenant);
            Accepted::Face(Box::new(face), evict)
        }
        Admission::Refuse => Accepted::Refused,
    }
}

/// A peer a listener accepted.
#[derive(Debug)]
pub enum Accepted {
    /// Its face, and the listener's idlest face given up to make room for it: whichever
    /// thread owns that one closes it.
    Face(Box<Face>, Option<FaceId>),
    /// Closed at once: the process keeps no more accepted connections and this listener has
    /// none to give up.
    Refused,
    /// Its face could not be made (the peer reset it already, or its socket refused an
    /// option): the connection is dropped, and the listener's other connections still wait.
    Broken(io::Error),
}
