//! Unix stream faces: the listener local applications connect to, and outgoing connections.

use std::fs;
use std::io;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};

use mio::net::{UnixListener, UnixStream};

use crate::face::{Face, FaceConfig, FaceParts, Transport};
use crate::stream::{Conn, StreamIo};
use crate::stream_listener::ListenError;
use crate::uri::FaceUri;
use kite_link::{FaceId, FaceScope, LinkType, Persistency};

/// Binds a listener at `path`: creates the directory, replaces a stale socket file (one
/// nobody accepts on), refuses a live one or a non-socket file, and lets every local user
/// connect (mode 0666), as NFD does.
pub(crate) fn listen(path: &Path) -> Result<UnixListener, ListenError> {
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

/// The face of a connection accepted on the listener at `path` (NFD: `fd://<n>`, on-demand,
/// local).
pub(crate) fn accepted(id: FaceId, stream: UnixStream, path: &Path, config: &FaceConfig) -> Face {
    use std::os::fd::AsRawFd;
    let parts = FaceParts {
        remote: FaceUri::Fd(stream.as_raw_fd() as u64),
        local: FaceUri::Unix(path.to_owned()),
        scope: FaceScope::Local,
        persistency: Persistency::OnDemand,
        link_type: LinkType::PointToPoint,
        transport: Transport::Stream(StreamIo::new(Conn::Unix(stream))),
        shm_offer: config.shm_ring_size,
    };
    Face::new(id, parts, config)
}

/// Connects to the Unix socket at `path` (an application's face to a forwarder, or a test
/// peer); the face is persistent.
pub fn connect(id: FaceId, path: &Path, config: &FaceConfig) -> io::Result<Face> {
    let std_stream = std::os::unix::net::UnixStream::connect(path)?;
    std_stream.set_nonblocking(true)?;
    let stream = UnixStream::from_std(std_stream);
    let parts = FaceParts {
        remote: FaceUri::Unix(PathBuf::from(path)),
        local: FaceUri::Unix(PathBuf::from(path)),
        scope: FaceScope::Local,
        persistency: Persistency::Persistent,
        link_type: LinkType::PointToPoint,
        transport: Transport::Stream(StreamIo::new(Conn::Unix(stream))),
        shm_offer: None,
    };
    Ok(Face::new(id, parts, config))
}
