//! TCP faces: accepted connections and outgoing ones. A face is local when both ends are
//! loopback addresses (NFD's default `tcp.local` whitelist).

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use mio::net::TcpStream;

use crate::face::{Face, FaceConfig, FaceParts, Transport};
use crate::props::{FaceId, FaceScope, LinkType, Persistency};
use crate::stream::{Conn, StreamIo};
use crate::uri::{is_loopback, FaceUri};

/// How long an outgoing connection may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

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
    stream.set_nodelay(true)?;
    let local = stream.local_addr()?;
    let remote = stream.peer_addr()?;
    let parts = FaceParts {
        remote: FaceUri::Tcp(remote),
        local: FaceUri::Tcp(local),
        scope: scope_of(local, remote),
        persistency,
        link_type: LinkType::PointToPoint,
        transport: Transport::Stream(StreamIo::new(Conn::Tcp(stream))),
    };
    Ok(Face::new(id, parts, config))
}

/// Connects to `remote` (blocking up to [`CONNECT_TIMEOUT`], as a management command may)
/// and returns a non-blocking face (`faces/create tcp4://…`).
pub fn connect(
    id: FaceId,
    remote: SocketAddr,
    persistency: Persistency,
    config: &FaceConfig,
) -> io::Result<Face> {
    let s = std::net::TcpStream::connect_timeout(&remote, CONNECT_TIMEOUT)?;
    s.set_nonblocking(true)?;
    face(id, TcpStream::from_std(s), persistency, config)
}
