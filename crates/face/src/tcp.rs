//! TCP faces: the listener, accepted connections and outgoing ones. A face is local when
//! both ends are loopback addresses (NFD's default `tcp.local` whitelist).

use std::io;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use mio::net::{TcpListener, TcpStream};
use mio::{Interest, Registry, Token};

use crate::config::FaceConfig;
use crate::face::{Face, FaceParts};
use crate::listener::{admit, Accepted, ListenError, Listener, OpenListener};
use crate::stream::{Conn, StreamIo};
use crate::tenancy::Tenants;
use crate::transport::{Dial, Transport};
use crate::uri::{is_loopback, FaceUri};
use kite_link::{FaceId, FaceIds, FaceScope, LinkType, Persistency};

pub use crate::config::{DEFAULT_REDIAL_INITIAL, DEFAULT_REDIAL_MAX};

/// How long an outgoing connection may take: the answer to `faces/create` must reach the
/// requester within its command Interest's lifetime (4 s, ndn-cxx's and Kite's default),
/// and 3 s leave room for the first SYN and its retransmission after Linux's 1 s initial RTO.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// Local when both ends are loopback.
pub(crate) fn scope_of(local: SocketAddr, remote: SocketAddr) -> FaceScope {
    if is_loopback(local.ip()) && is_loopback(remote.ip()) {
        FaceScope::Local
    } else {
        FaceScope::NonLocal
    }
}

/// The face of a TCP connection (accepted: on-demand; created: as asked).
pub(crate) fn face(
    id: FaceId,
    stream: TcpStream,
    persistency: Persistency,
    config: &FaceConfig,
) -> io::Result<Face> {
    let (transport, local, remote) = transport(stream)?;
    let parts = FaceParts {
        scope: scope_of(local, remote),
        persistency,
        link_type: LinkType::PointToPoint,
        redial: Some(dial),
    };
    Ok(Face::new(id, parts, Box::new(transport), config))
}

/// The stream transport of a connected TCP socket, with its local and remote addresses.
fn transport(stream: TcpStream) -> io::Result<(StreamIo, SocketAddr, SocketAddr)> {
    stream.set_nodelay(true)?;
    let (local, remote) = (stream.local_addr()?, stream.peer_addr()?);
    let conn = Conn::Tcp(stream);
    let io = StreamIo::new(conn, FaceUri::Tcp(remote), FaceUri::Tcp(local));
    Ok((io, local, remote))
}

/// Dials a TCP face's peer again.
fn dial(remote: &FaceUri) -> io::Result<Box<dyn Dial>> {
    let FaceUri::Tcp(addr) = remote else {
        return Err(io::Error::other("only TCP faces dial again"));
    };
    Ok(Box::new(Connecting::start(*addr)?))
}

/// An outgoing TCP face that has no connection yet: it dials its peer in the background
/// ([`Face::redial`]) and drops what it would send until connected. A face the configuration
/// file asks for starts so, so that a peer that is down delays nothing.
pub fn unconnected_face(
    id: FaceId,
    remote: SocketAddr,
    persistency: Persistency,
    config: &FaceConfig,
) -> Face {
    let unspecified = match remote {
        SocketAddr::V4(_) => SocketAddr::from(([0, 0, 0, 0], 0)),
        SocketAddr::V6(_) => SocketAddr::from(([0u16; 8], 0)),
    };
    let parts = FaceParts {
        // The local end will be on the interface toward the peer: loopback for a loopback peer.
        scope: scope_of(remote, remote),
        persistency,
        link_type: LinkType::PointToPoint,
        redial: Some(dial),
    };
    let (remote, local) = (FaceUri::Tcp(remote), FaceUri::Tcp(unspecified));
    Face::unconnected(id, parts, remote, local, config)
}

/// An outgoing TCP connection on its way (`faces/create tcp4://…`): started without
/// blocking, watched for writability in the caller's `mio::Poll`, then turned into a face.
/// The caller bounds how long it waits ([`CONNECT_TIMEOUT`]) and drops it to give up.
#[derive(Debug)]
pub struct Connecting {
    stream: TcpStream,
}

impl Connecting {
    /// Starts connecting to `remote` (a non-blocking `connect`: it returns at once).
    pub fn start(remote: SocketAddr) -> io::Result<Self> {
        Ok(Connecting {
            stream: TcpStream::connect(remote)?,
        })
    }

    /// Registers for the writable event that tells the connection completed or failed.
    pub fn register(&mut self, registry: &Registry, token: Token) -> io::Result<()> {
        registry.register(&mut self.stream, token, Interest::WRITABLE)
    }

    /// Stops watching (before the face takes over the socket, or when giving up).
    pub fn deregister(&mut self, registry: &Registry) -> io::Result<()> {
        registry.deregister(&mut self.stream)
    }

    /// After an event: `Ok(true)` once connected, `Ok(false)` while still connecting, the
    /// error once the connection failed (refused, unreachable).
    pub fn progress(&mut self) -> io::Result<bool> {
        if let Some(e) = self.stream.take_error()? {
            return Err(e);
        }
        match self.stream.peer_addr() {
            Ok(_) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::NotConnected => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// The face of the connected socket; [`Connecting::deregister`] first, as the face
    /// registers the socket itself.
    pub fn into_face(
        self,
        id: FaceId,
        persistency: Persistency,
        config: &FaceConfig,
    ) -> io::Result<Face> {
        face(id, self.stream, persistency, config)
    }
}

/// A lost face's dial ([`Face::redial`]): the face takes the socket over once connected.
impl Dial for Connecting {
    fn register(&mut self, registry: &Registry, token: Token) -> io::Result<()> {
        registry.register(
            &mut self.stream,
            token,
            Interest::READABLE | Interest::WRITABLE,
        )
    }

    fn raw_fd(&self) -> std::os::fd::RawFd {
        std::os::fd::AsRawFd::as_raw_fd(&self.stream)
    }

    fn progress(&mut self) -> io::Result<bool> {
        Connecting::progress(self)
    }

    fn connected(self: Box<Self>) -> io::Result<Box<dyn Transport>> {
        Ok(Box::new(transport(self.stream)?.0))
    }
}

/// A TCP listener on an address (port 0 picks a free one), keeping at most
/// [`FaceConfig::tcp_on_demand_limit`] accepted connections.
#[derive(Debug, Clone, Copy)]
pub struct Listen(pub SocketAddr);

impl OpenListener for Listen {
    fn uri(&self) -> FaceUri {
        FaceUri::Tcp(self.0)
    }

    fn open(&self, config: &FaceConfig) -> Result<Box<dyn Listener>, ListenError> {
        Ok(Box::new(listen(self.0, config)?))
    }
}

/// Listens for TCP connections on `addr` ([`Listen`]).
pub fn listen(addr: SocketAddr, config: &FaceConfig) -> Result<TcpChannel, ListenError> {
    let make = |id, s, config: &FaceConfig| face(id, s, Persistency::OnDemand, config);
    TcpChannel::bind(addr, FaceUri::Tcp, config.tcp_on_demand_limit, make, config)
}

/// Makes the face of a connection a [`TcpChannel`] accepted.
pub(crate) type MakeFace = fn(FaceId, TcpStream, &FaceConfig) -> io::Result<Face>;

/// A listening TCP socket whose connections become faces of one kind (TCP, or WebSocket
/// over TCP), keeping at most its limit of them: past it, the idlest is given up.
#[derive(Debug)]
pub struct TcpChannel {
    socket: TcpListener,
    local: FaceUri,
    tenants: Tenants,
    make: MakeFace,
    config: FaceConfig,
}

impl TcpChannel {
    /// Binds `addr`; `uri` names the bound address as the channel's local URI.
    pub(crate) fn bind(
        addr: SocketAddr,
        uri: fn(SocketAddr) -> FaceUri,
        limit: usize,
        make: MakeFace,
        config: &FaceConfig,
    ) -> Result<Self, ListenError> {
        let bind_error = |error| ListenError::Bind { addr, error };
        let socket = TcpListener::bind(addr).map_err(bind_error)?;
        let bound = socket.local_addr().map_err(bind_error)?;
        Ok(TcpChannel {
            socket,
            local: uri(bound),
            tenants: Tenants::new(limit),
            make,
            config: *config,
        })
    }
}

impl Listener for TcpChannel {
    fn local_uri(&self) -> &FaceUri {
        &self.local
    }

    fn register(&mut self, registry: &Registry, token: Token) -> io::Result<()> {
        registry.register(&mut self.socket, token, Interest::READABLE)
    }

    fn accept(&mut self, ids: &mut FaceIds, now: Instant) -> io::Result<Option<Accepted>> {
        let stream = match self.socket.accept() {
            Ok((s, _)) => s,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(None),
            Err(e) => return Err(e),
        };
        let face = match (self.make)(ids.next_id(), stream, &self.config) {
            Ok(face) => face,
            Err(e) => return Ok(Some(Accepted::Broken(e))),
        };
        Ok(Some(admit(&mut self.tenants, face, now)))
    }
}
