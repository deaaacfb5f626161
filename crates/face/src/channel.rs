//! Stream listeners (NFD channels): Unix, TCP and WebSocket. Each accepts connections and
//! turns them into on-demand faces. UDP has its own channel type ([`crate::UdpChannel`])
//! because it demultiplexes one socket instead of accepting connections.

use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use mio::net::{TcpListener, UnixListener};
use mio::{Interest, Registry, Token};
use thiserror::Error;

use crate::counters::ChannelCounters;
use crate::face::{Face, FaceConfig};
use crate::props::{FaceIds, Persistency};
use crate::uri::FaceUri;
use crate::{tcp, unix, ws};

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
/// drop counters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelStatus {
    /// The channel's URI (NFD LocalUri).
    pub local: FaceUri,
    /// What it read but handed to no face (always zero for stream listeners, which read
    /// nothing before a face exists).
    pub counters: ChannelCounters,
}

#[derive(Debug)]
enum Listener {
    Unix(UnixListener, PathBuf),
    Tcp(TcpListener),
    Ws(TcpListener),
}

/// A listening socket that creates a face per accepted connection.
#[derive(Debug)]
pub struct Channel {
    listener: Listener,
    local: FaceUri,
    config: FaceConfig,
}

impl Channel {
    /// A Unix stream listener at `path` (the daemon's default is `/run/nfd/nfd.sock`).
    pub fn unix(path: &Path, config: FaceConfig) -> Result<Self, ListenError> {
        let l = unix::listen(path)?;
        Ok(Channel {
            listener: Listener::Unix(l, path.to_owned()),
            local: FaceUri::Unix(path.to_owned()),
            config,
        })
    }

    /// A TCP listener on `addr` (port 0 picks a free port).
    pub fn tcp(addr: SocketAddr, config: FaceConfig) -> Result<Self, ListenError> {
        let l = bind_tcp(addr)?;
        let local = FaceUri::Tcp(l.local_addr().map_err(|source| ListenError::Bind {
            addr,
            error: source,
        })?);
        Ok(Channel {
            listener: Listener::Tcp(l),
            local,
            config,
        })
    }

    /// A WebSocket listener on `addr` (NFD's default port is 9696).
    pub fn ws(addr: SocketAddr, config: FaceConfig) -> Result<Self, ListenError> {
        let l = bind_tcp(addr)?;
        let local = FaceUri::Ws(l.local_addr().map_err(|source| ListenError::Bind {
            addr,
            error: source,
        })?);
        Ok(Channel {
            listener: Listener::Ws(l),
            local,
            config,
        })
    }

    /// The channel's URI (NFD ChannelStatus LocalUri).
    pub fn local_uri(&self) -> &FaceUri {
        &self.local
    }

    /// The channel's URI and (zero) counters.
    pub fn status(&self) -> ChannelStatus {
        ChannelStatus {
            local: self.local.clone(),
            counters: ChannelCounters::default(),
        }
    }

    /// Registers the listener for (edge-triggered) readability.
    pub fn register(&mut self, registry: &Registry, token: Token) -> io::Result<()> {
        match &mut self.listener {
            Listener::Unix(l, _) => registry.register(l, token, Interest::READABLE),
            Listener::Tcp(l) | Listener::Ws(l) => registry.register(l, token, Interest::READABLE),
        }
    }

    /// Accepts one pending connection as a new on-demand face (id from `ids`); `Ok(None)`
    /// when none is pending. Call until `None` after each readiness event.
    pub fn accept(&mut self, ids: &mut FaceIds) -> io::Result<Option<Face>> {
        let res = match &self.listener {
            Listener::Unix(l, path) => l
                .accept()
                .map(|(s, _)| unix::accepted(ids.next_id(), s, path, &self.config)),
            Listener::Tcp(l) => l.accept().and_then(|(s, _)| {
                tcp::face(ids.next_id(), s, Persistency::OnDemand, &self.config)
            }),
            Listener::Ws(l) => l
                .accept()
                .and_then(|(s, _)| ws::accepted(ids.next_id(), s, &self.config)),
        };
        match res {
            Ok(face) => Ok(Some(face)),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(None),
            Err(e) => Err(e),
        }
    }
}

impl Drop for Channel {
    fn drop(&mut self) {
        if let Listener::Unix(_, path) = &self.listener {
            let _ = std::fs::remove_file(path);
        }
    }
}

fn bind_tcp(addr: SocketAddr) -> Result<TcpListener, ListenError> {
    TcpListener::bind(addr).map_err(|source| ListenError::Bind {
        addr,
        error: source,
    })
}
