//! Unix stream faces: those of connections accepted on the listener local applications
//! connect to, and outgoing connections.

use std::io;
use std::path::{Path, PathBuf};

use mio::net::UnixStream;

use crate::config::FaceConfig;
use crate::face::{Face, FaceParts};
use crate::stream::{Conn, StreamIo};
use crate::uri::FaceUri;
use kite_link::{FaceId, FaceScope, LinkType, Persistency};

/// The face of a connection accepted on the listener at `path` (NFD: `fd://<n>`, on-demand,
/// local).
pub(crate) fn accepted(id: FaceId, stream: UnixStream, path: &Path, config: &FaceConfig) -> Face {
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
