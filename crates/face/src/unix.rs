//! Unix stream faces: the listener local applications connect to, the faces of the
//! connections it accepts, and outgoing connections.

use std::fs;
use std::io;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::Instant;

use mio::net::{UnixListener, UnixStream};
use mio::{Interest, Registry, Token};

use crate::config::FaceConfig;
use crate::face::{Face, FaceParts};
use crate::listener::{Accepted, ListenError, Listener, OpenListener};
use crate::stream::{Conn, StreamIo};
use crate::uri::FaceUri;
use kite_link::{FaceId, FaceIds, FaceScope, LinkType, Persistency};

/// The face of a connection accepted on the listener at `path` (NFD: `fd://<n>`, on-demand,
/// local).
fn accepted(id: FaceId, stream: UnixStream, path: &Path, config: &FaceConfig) -> Face {
    use std::os::fd::AsRawFd;
    let remote = FaceUri::Fd(stream.as_raw_fd() as u64);
    let local = FaceUri::Unix(path.to_owned());
    let transport = StreamIo::new(Conn::Unix(stream), remote, local);
    let parts = FaceParts {
        scope: FaceScope::Local,
        persistency: Persistency::OnDemand,
        link_type: LinkType::PointToPoint,
        redial: None,
    };
    let transport = transport.offering_shm(config.shm_ring_size);
    Face::new(id, parts, Box::new(transport), config)
}

/// Connects to the Unix socket at `path` (an application's face to a forwarder, or a test
/// peer); the face is persistent.
pub fn connect(id: FaceId, path: &Path, config: &FaceConfig) -> io::Result<Face> {
    let std_stream = std::os::unix::net::UnixStream::connect(path)?;
    std_stream.set_nonblocking(true)?;
    let stream = UnixStream::from_std(std_stream);
    let uri = FaceUri::Unix(PathBuf::from(path));
    let transport = StreamIo::new(Conn::Unix(stream), uri.clone(), uri);
    let parts = FaceParts {
        scope: FaceScope::Local,
        persistency: Persistency::Persistent,
        link_type: LinkType::PointToPoint,
        redial: None,
    };
    Ok(Face::new(id, parts, Box::new(transport), config))
}

/// A Unix stream listener at a path (NFD's default is `/run/nfd/nfd.sock`): local
/// applications connect to it, each connection a local on-demand face.
#[derive(Debug, Clone)]
pub struct Listen(pub PathBuf);

impl OpenListener for Listen {
    fn uri(&self) -> FaceUri {
        FaceUri::Unix(self.0.clone())
    }

    fn open(&self, config: &FaceConfig) -> Result<Box<dyn Listener>, ListenError> {
        Ok(Box::new(listen(&self.0, config)?))
    }
}

/// A Unix stream listener, bounded by the open files limit alone; it removes its socket
/// file when dropped.
#[derive(Debug)]
pub struct UnixChannel {
    socket: UnixListener,
    local: FaceUri,
    path: PathBuf,
    config: FaceConfig,
}

/// Listens at `path` ([`Listen`]).
pub fn listen(path: &Path, config: &FaceConfig) -> Result<UnixChannel, ListenError> {
    Ok(UnixChannel {
        socket: bind(path)?,
        local: FaceUri::Unix(path.to_owned()),
        path: path.to_owned(),
        config: *config,
    })
}

impl Listener for UnixChannel {
    fn local_uri(&self) -> &FaceUri {
        &self.local
    }

    fn register(&mut self, registry: &Registry, token: Token) -> io::Result<()> {
        registry.register(&mut self.socket, token, Interest::READABLE)
    }

    fn accept(&mut self, ids: &mut FaceIds, _now: Instant) -> io::Result<Option<Accepted>> {
        match self.socket.accept() {
            Ok((s, _)) => {
                let face = accepted(ids.next_id(), s, &self.path, &self.config);
                Ok(Some(Accepted::Face(Box::new(face), None)))
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(None),
            Err(e) => Err(e),
        }
    }
}

impl Drop for UnixChannel {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}

/// Binds a listener at `path`: creates the directory, replaces a stale socket file (one
/// nobody accepts on), refuses a live one or a non-socket file, and lets every local user
/// connect (mode 0666), as NFD does.
fn bind(path: &Path) -> Result<UnixListener, ListenError> {
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
