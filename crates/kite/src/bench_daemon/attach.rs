//! Attaching the load to a forwarder already running (Kite, NFD, NDNd): over its unix socket,
//! the producer registering its prefix on its own connection; or over UDP, where the consumer
//! and the producer each get an on-demand face and the producer's prefix is registered for
//! its face by FaceId through a unix-socket management connection (forwarders take
//! `/localhost/nfd` commands from local faces only, and NDNd answers `/localhop/nfd` only when
//! configured to).

use std::fmt;
use std::io::ErrorKind;
use std::net::{SocketAddr, UdpSocket};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use kite_app::{nfd_name, Client};
use kite_face::FaceUri;
use kite_mgmt_proto::datasets::FaceStatus;
use kite_mgmt_proto::{decode_items, ControlParameters};
use kite_packet::{LpPacket, Name};

use super::socket::LoadSocket;

/// How long management commands, and the wait for on-demand faces, may take.
const MGMT_TIMEOUT: Duration = Duration::from_secs(5);

/// Where the forwarder under test takes the load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// Its unix socket.
    Unix(PathBuf),
    /// Its UDP listener.
    Udp(SocketAddr),
}

impl Target {
    /// A unix socket path (plain or `unix://`) or `udp://HOST:PORT` (`udp4`, `udp6` too).
    pub fn parse(s: &str) -> Result<Target, String> {
        if !s.contains("://") {
            return Ok(Target::Unix(PathBuf::from(s)));
        }
        match FaceUri::canonize(s).map_err(|e| format!("{s}: {e}"))? {
            FaceUri::Unix(p) => Ok(Target::Unix(p)),
            FaceUri::Udp(a) => Ok(Target::Udp(a)),
            other => Err(format!("{other}: give a unix socket or udp://HOST:PORT")),
        }
    }

    /// `unix` or `udp`, for the report.
    pub fn transport(&self) -> &'static str {
        match self {
            Target::Unix(_) => "unix",
            Target::Udp(_) => "udp",
        }
    }

    /// Connects the producer and the consumer; `control` is the management socket a UDP
    /// target registers through (default: the usual forwarder sockets). Returns the
    /// producer's link and the consumer's.
    pub fn attach(
        &self,
        control: Option<&Path>,
        prefix: &Name,
    ) -> Result<(LoadSocket, LoadSocket)> {
        match self {
            Target::Unix(path) => attach_unix(path, prefix),
            Target::Udp(addr) => attach_udp(*addr, control, prefix),
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Unix(p) => write!(f, "{}", p.display()),
            Target::Udp(a) => write!(f, "{}", FaceUri::Udp(*a)),
        }
    }
}

fn register(client: &mut Client, prefix: &Name, face_id: Option<u64>) -> Result<()> {
    let params = ControlParameters {
        name: Some(prefix.clone()),
        face_id,
        ..Default::default()
    };
    client
        .command_ok("rib", "register", &params, MGMT_TIMEOUT)
        .context("registering the producer's prefix")?;
    Ok(())
}

fn attach_unix(path: &Path, prefix: &Name) -> Result<(LoadSocket, LoadSocket)> {
    let connect =
        || Client::connect_unix_socket(path).with_context(|| format!("connect {}", path.display()));
    let mut client = connect()?;
    register(&mut client, prefix, None)?;
    let producer = client
        .into_unix_stream()
        .ok_or_else(|| anyhow!("the registration left unread packets on the producer's socket"))?;
    let consumer =
        UnixStream::connect(path).with_context(|| format!("connect {}", path.display()))?;
    Ok((LoadSocket::stream(producer)?, LoadSocket::stream(consumer)?))
}

fn attach_udp(
    addr: SocketAddr,
    control: Option<&Path>,
    prefix: &Name,
) -> Result<(LoadSocket, LoadSocket)> {
    let mut client = match control {
        Some(p) => Client::connect_unix(p).with_context(|| format!("connect {}", p.display()))?,
        None => Client::connect_default().context("connecting to the forwarder's management")?,
    };
    let producer = LoadSocket::udp_socket(addr)?;
    let consumer = LoadSocket::udp_socket(addr)?;
    let ids = face_ids(&mut client, &[&producer, &consumer])
        .with_context(|| format!("getting faces for the load at {}", FaceUri::Udp(addr)))?;
    register(&mut client, prefix, Some(ids[0]))?;
    Ok((
        LoadSocket::datagram(producer),
        LoadSocket::datagram(consumer),
    ))
}

/// Makes the forwarder create an on-demand face for each socket (each sends an empty
/// LpPacket, which forwarders drop) and returns their FaceIds from `faces/list`. Waiting for
/// the faces also keeps the load's first datagrams from racing their creation.
fn face_ids(client: &mut Client, sockets: &[&UdpSocket]) -> Result<Vec<u64>> {
    let idle = LpPacket::default().encode();
    let locals: Vec<SocketAddr> = sockets
        .iter()
        .map(|s| s.local_addr())
        .collect::<std::io::Result<_>>()?;
    let deadline = Instant::now() + MGMT_TIMEOUT;
    // A refusal is reported once per ICMP error, so remember it.
    let mut refused = false;
    loop {
        for s in sockets {
            match s.send(&idle) {
                // Nothing listens (yet: the listener may open after the unix socket).
                Err(e) if e.kind() == ErrorKind::ConnectionRefused => refused = true,
                r => {
                    r?;
                }
            }
        }
        let list = client
            .dataset(&nfd_name(&[b"faces", b"list"]), MGMT_TIMEOUT)
            .context("faces/list")?;
        let faces: Vec<FaceStatus> = decode_items(&list).context("decoding faces/list")?;
        let found: Option<Vec<u64>> = locals.iter().map(|a| face_of(&faces, *a)).collect();
        if let Some(ids) = found {
            return Ok(ids);
        }
        if Instant::now() > deadline {
            if refused {
                bail!("the datagrams were refused: is a forwarder listening there?");
            }
            bail!("no on-demand face appeared for {locals:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The UDP face whose remote endpoint is `remote`.
fn face_of(faces: &[FaceStatus], remote: SocketAddr) -> Option<u64> {
    faces
        .iter()
        .find(|f| matches!(FaceUri::canonize(&f.uri), Ok(FaceUri::Udp(a)) if a == remote))
        .map(|f| f.face_id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse_from_paths_and_uris() {
        let unix = Target::Unix(PathBuf::from("/run/nfd/nfd.sock"));
        assert_eq!(Target::parse("/run/nfd/nfd.sock"), Ok(unix.clone()));
        assert_eq!(Target::parse("unix:///run/nfd/nfd.sock"), Ok(unix));
        let udp = Target::Udp("127.0.0.1:6363".parse().unwrap());
        assert_eq!(Target::parse("udp://127.0.0.1:6363"), Ok(udp.clone()));
        assert_eq!(Target::parse("udp4://127.0.0.1:6363"), Ok(udp.clone()));
        assert_eq!(udp.to_string(), "udp4://127.0.0.1:6363");
        assert_eq!(udp.transport(), "udp");
        assert!(Target::parse("tcp://127.0.0.1:6363").is_err());
    }

    #[test]
    fn the_face_is_found_by_its_remote_endpoint() {
        let face = |id, uri: &str| FaceStatus {
            face_id: id,
            uri: uri.into(),
            ..FaceStatus::default()
        };
        let faces = [
            face(1, "internal://"),
            face(260, "unix:///run/nfd.sock"),
            face(261, "udp4://127.0.0.1:40000"),
            face(262, "udp4://127.0.0.1:40001"),
        ];
        assert_eq!(
            face_of(&faces, "127.0.0.1:40001".parse().unwrap()),
            Some(262)
        );
        assert_eq!(face_of(&faces, "127.0.0.1:40002".parse().unwrap()), None);
    }
}
