//! Stream listeners (NFD channels): Unix, TCP, WebSocket, and WebTransport ([`crate::h3`],
//! whose sessions are accepted as connections are). Each accepts connections and turns them
//! into on-demand faces. UDP has its own channel type ([`crate::UdpChannel`])
//! because it demultiplexes one socket instead of accepting connections.

use std::fs;
use std::io;
use std::net::SocketAddr;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::Instant;

use mio::net::{TcpListener, UnixListener};
use mio::{Interest, Registry, Token};
use thiserror::Error;

use crate::config::FaceConfig;
use crate::face::{Face, FaceParts};
use crate::h3::{Certificate, H3Config, H3Listener};
use crate::tenancy::{Admission, Tenants};
use crate::uri::FaceUri;
use crate::ws::WsIo;
use crate::{tcp, unix};
use kite_link::ChannelCounters;
use kite_link::{FaceId, FaceIds, LinkType, Persistency};

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
    /// What it read but handed to no face (always zero for stream listeners, which read
    /// nothing before a face exists).
    pub counters: ChannelCounters,
    /// How an Ethernet channel reads its interface ([`crate::IoPath`] as text); `None` for
    /// socket channels.
    pub io_path: Option<String>,
    /// What Kite's XDP program did with the interface's frames, on the AF_XDP path.
    pub xdp: Option<crate::xdp::program::XdpCounts>,
    /// A WebTransport channel's certificate hash (SHA-256, hexadecimal).
    pub cert_sha256: Option<String>,
}

#[derive(Debug)]
enum Listener {
    /// Local applications, bounded by the open files limit alone.
    Unix(UnixListener, PathBuf),
    /// TCP, or WebSocket (`ws`), with the on-demand faces it keeps.
    Ip {
        socket: TcpListener,
        ws: bool,
        tenants: Tenants,
    },
    /// WebTransport over HTTP/3: a session per client, each on a socket of its own.
    H3(Box<H3Listener>),
}

/// A listening socket that creates a face per accepted connection.
#[derive(Debug)]
pub struct StreamListener {
    listener: Listener,
    local: FaceUri,
    config: FaceConfig,
}

/// A connection a listener accepted.
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

impl StreamListener {
    /// A Unix stream listener at `path` (the daemon's default is `/run/nfd/nfd.sock`).
    pub fn unix(path: &Path, config: FaceConfig) -> Result<Self, ListenError> {
        let l = listen_unix(path)?;
        Ok(StreamListener {
            listener: Listener::Unix(l, path.to_owned()),
            local: FaceUri::Unix(path.to_owned()),
            config,
        })
    }

    /// A TCP listener on `addr` (port 0 picks a free port).
    pub fn tcp(addr: SocketAddr, config: FaceConfig) -> Result<Self, ListenError> {
        Self::ip(addr, config, false)
    }

    /// A WebSocket listener on `addr` (NFD's default port is 9696).
    pub fn ws(addr: SocketAddr, config: FaceConfig) -> Result<Self, ListenError> {
        Self::ip(addr, config, true)
    }

    /// A WebTransport (HTTP/3) listener on UDP `addr`, serving `cert`.
    pub fn h3(
        addr: SocketAddr,
        cert: &Certificate,
        h3: H3Config,
        config: FaceConfig,
    ) -> Result<Self, ListenError> {
        let l = H3Listener::bind(addr, cert, h3, config)
            .map_err(|error| ListenError::Bind { addr, error })?;
        Ok(StreamListener {
            local: l.local_uri(),
            listener: Listener::H3(Box::new(l)),
            config,
        })
    }

    /// The WebTransport listener, if this is one.
    pub fn as_h3(&mut self) -> Option<&mut H3Listener> {
        match &mut self.listener {
            Listener::H3(l) => Some(l),
            _ => None,
        }
    }

    /// A TCP listener, or a WebSocket one when `ws`, keeping at most its scheme's on-demand
    /// limit of connections.
    fn ip(addr: SocketAddr, config: FaceConfig, ws: bool) -> Result<Self, ListenError> {
        let socket = bind_tcp(addr)?;
        let bound = socket
            .local_addr()
            .map_err(|error| ListenError::Bind { addr, error })?;
        let (local, limit) = if ws {
            (FaceUri::Ws(bound), config.ws_on_demand_limit)
        } else {
            (FaceUri::Tcp(bound), config.tcp_on_demand_limit)
        };
        Ok(StreamListener {
            listener: Listener::Ip {
                socket,
                ws,
                tenants: Tenants::new(limit),
            },
            local,
            config,
        })
    }

    /// The channel's URI (NFD ChannelStatus LocalUri).
    pub fn local_uri(&self) -> &FaceUri {
        &self.local
    }

    /// The channel's URI and counters (zero but for WebTransport's, which reads datagrams
    /// before a face exists).
    pub fn status(&self) -> ChannelStatus {
        if let Listener::H3(l) = &self.listener {
            return l.status();
        }
        ChannelStatus {
            local: self.local.clone(),
            counters: ChannelCounters::default(),
            io_path: None,
            xdp: None,
            cert_sha256: None,
        }
    }

    /// Registers the listener for (edge-triggered) readability.
    pub fn register(&mut self, registry: &Registry, token: Token) -> io::Result<()> {
        match &mut self.listener {
            Listener::Unix(l, _) => registry.register(l, token, Interest::READABLE),
            Listener::Ip { socket, .. } => registry.register(socket, token, Interest::READABLE),
            Listener::H3(l) => l.register(registry, token),
        }
    }

    /// Accepts one pending connection as a new on-demand face (id from `ids`); `Ok(None)`
    /// when none is pending. Call until `None` after each readiness event.
    pub fn accept(&mut self, ids: &mut FaceIds, now: Instant) -> io::Result<Option<Accepted>> {
        let res = match &mut self.listener {
            Listener::H3(l) => return l.accept(ids, now),
            Listener::Unix(l, path) => l.accept().map(|(s, _)| {
                Accepted::Face(
                    Box::new(unix::accepted(ids.next_id(), s, path, &self.config)),
                    None,
                )
            }),
            Listener::Ip {
                socket,
                ws,
                tenants,
            } => socket.accept().map(|(s, _)| {
                let id = ids.next_id();
                let made = if *ws {
                    ws_face(id, s, &self.config)
                } else {
                    tcp::face(id, s, Persistency::OnDemand, &self.config)
                };
                let mut face = match made {
                    Ok(face) => face,
                    Err(e) => return Accepted::Broken(e),
                };
                match tenants.admit(id, now) {
                    Admission::Admit(tenant, evict) => {
                        face.set_tenant(tenant);
                        Accepted::Face(Box::new(face), evict)
                    }
                    // Dropping the face closes the connection.
                    Admission::Refuse => Accepted::Refused,
                }
            }),
        };
        match res {
            Ok(a) => Ok(Some(a)),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(None),
            Err(e) => Err(e),
        }
    }
}

impl Drop for StreamListener {
    fn drop(&mut self) {
        if let Listener::Unix(_, path) = &self.listener {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// The face of an accepted WebSocket connection, its handshake started (on-demand; local
/// only when both ends are loopback).
fn ws_face(id: FaceId, stream: mio::net::TcpStream, config: &FaceConfig) -> io::Result<Face> {
    let ws = WsIo::accept(stream)?;
    let (local, remote) = ws.addrs();
    let parts = FaceParts {
        scope: tcp::scope_of(local, remote),
        persistency: Persistency::OnDemand,
        link_type: LinkType::PointToPoint,
        redial: None,
    };
    Ok(Face::new(id, parts, Box::new(ws), config))
}

/// Binds a listener at `path`: creates the directory, replaces a stale socket file (one
/// nobody accepts on), refuses a live one or a non-socket file, and lets every local user
/// connect (mode 0666), as NFD does.
fn listen_unix(path: &Path) -> Result<UnixListener, ListenError> {
    let at = |error| ListenError::Io {
        path: path.to_owned(),
        error,
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        fs::create_dir_all(dir).map_err(|error| ListenError::CreateDir {
            dir: dir.to_owned(),
            error,
        })?;
    }
    match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_socket() => {
            if std::os::unix::net::UnixStream::connect(path).is_ok() {
                return Err(ListenError::InUse(path.to_owned()));
            }
            fs::remove_file(path).map_err(at)?;
        }
        Ok(_) => return Err(ListenError::NotASocket(path.to_owned())),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(at(e)),
    }
    let listener = UnixListener::bind(path).map_err(at)?;
    fs::set_permissions(path, fs::Permissions::from_mode(0o666)).map_err(at)?;
    Ok(listener)
}

fn bind_tcp(addr: SocketAddr) -> Result<TcpListener, ListenError> {
    TcpListener::bind(addr).map_err(|source| ListenError::Bind {
        addr,
        error: source,
    })
}
