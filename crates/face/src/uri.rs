//! Face URIs as NFD writes them (`udp4://192.0.2.1:6363`, `unix:///run/nfd/nfd.sock`, …).
//!
//! [`FaceUri::from_str`](core::str::FromStr) accepts only the canonical form, the one NFD's
//! management requires in `faces/create`: a canonical URI is one that prints back to exactly the
//! same string. [`FaceUri::canonize`] accepts what a user types (`udp://host`, no port, an
//! IPv4-mapped IPv6 address, upper-case MAC) and returns the canonical URI, as `nfdc` does
//! before it sends a command.

use core::fmt;
use core::str::FromStr;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};
use std::path::PathBuf;

use kite_link::{InvalidMac, MacAddr};
use thiserror::Error;

/// NFD's default UDP and TCP port.
pub const DEFAULT_PORT: u16 = 6363;
/// NFD's default WebSocket port.
pub const DEFAULT_WS_PORT: u16 = 9696;

/// A face's (or channel's) address, by scheme.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum FaceUri {
    /// `udp4://a.b.c.d:port` or `udp6://[v6]:port` (the family follows the address).
    Udp(SocketAddr),
    /// `tcp4://…` or `tcp6://…`.
    Tcp(SocketAddr),
    /// `ws://host:port`: a WebSocket listener's local address.
    Ws(SocketAddr),
    /// `wsclient://host:port`: the remote end of an accepted WebSocket face.
    WsClient(SocketAddr),
    /// `quic://host:port`: a WebTransport (HTTP/3) face's client, or its listener's local
    /// address (as NDNd names them).
    Quic(SocketAddr),
    /// `unix:///path`: a Unix stream socket path (absolute).
    Unix(PathBuf),
    /// `fd://n`: an accepted Unix-socket face, named by its file descriptor as NFD does.
    Fd(u64),
    /// `dev://ifname`: a network interface (the local side of an Ethernet face).
    Dev(String),
    /// `ether://[mac]`: an Ethernet peer or multicast group.
    Ether(MacAddr),
    /// `internal://`: the forwarder's own internal face.
    Internal,
}

/// Why a string is not a (canonical) face URI.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum UriError {
    /// No `scheme://`.
    #[error("not a URI: missing scheme://")]
    Syntax,
    /// A scheme Kite has no face for.
    #[error("unsupported URI scheme {0:?}")]
    UnsupportedScheme(String),
    /// The host is not an IP address of the scheme's family (or cannot be resolved).
    #[error("invalid or unresolvable host {0:?}")]
    InvalidHost(String),
    /// The port is missing where required, or not a number in 1..=65535.
    #[error("invalid or missing port")]
    InvalidPort,
    /// The URI has a path, query or fragment where none is allowed.
    #[error("unexpected path in URI")]
    UnexpectedPath,
    /// A Unix socket path must be absolute.
    #[error("unix socket path must be absolute")]
    RelativePath,
    /// Not a MAC address.
    #[error("invalid Ethernet address")]
    InvalidMac,
    /// Not a number where one is required (`fd://`).
    #[error("invalid number")]
    InvalidNumber,
    /// An interface name is empty or holds a `/`.
    #[error("invalid interface name")]
    InvalidDevice,
    /// A multicast address where the scheme allows only unicast (TCP, WebSocket).
    #[error("multicast address not allowed with this scheme")]
    Multicast,
    /// IPv6 zone ids (`%eth0`) are not supported.
    #[error("IPv6 zone ids are not supported")]
    Zone,
    /// Well-formed, but not in canonical form: the canonical form is given.
    #[error("URI is not canonical (canonical form: {0})")]
    NotCanonical(String),
}

impl From<InvalidMac> for UriError {
    fn from(_: InvalidMac) -> Self {
        UriError::InvalidMac
    }
}

/// The IP family a scheme requires.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Family {
    V4,
    V6,
    Any,
}

impl FaceUri {
    /// The URI scheme as NFD prints it (`udp4`, `tcp6`, `unix`, …).
    pub fn scheme(&self) -> &'static str {
        let v6 = |a: &SocketAddr| a.is_ipv6();
        match self {
            FaceUri::Udp(a) if v6(a) => "udp6",
            FaceUri::Udp(_) => "udp4",
            FaceUri::Tcp(a) if v6(a) => "tcp6",
            FaceUri::Tcp(_) => "tcp4",
            FaceUri::Ws(_) => "ws",
            FaceUri::WsClient(_) => "wsclient",
            FaceUri::Quic(_) => "quic",
            FaceUri::Unix(_) => "unix",
            FaceUri::Fd(_) => "fd",
            FaceUri::Dev(_) => "dev",
            FaceUri::Ether(_) => "ether",
            FaceUri::Internal => "internal",
        }
    }

    /// Parses what a user may type and returns the canonical URI: `udp`/`tcp` pick the family
    /// from the address, a missing port becomes the default, host names are resolved (this may
    /// block on DNS), IPv4-mapped IPv6 addresses become IPv4, MAC addresses are lower-cased.
    pub fn canonize(s: &str) -> Result<FaceUri, UriError> {
        parse(s, true)
    }

    /// The IP socket address, for IP-based URIs.
    pub fn socket_addr(&self) -> Option<SocketAddr> {
        match self {
            FaceUri::Udp(a)
            | FaceUri::Tcp(a)
            | FaceUri::Ws(a)
            | FaceUri::WsClient(a)
            | FaceUri::Quic(a) => Some(*a),
            _ => None,
        }
    }
}

impl FromStr for FaceUri {
    type Err = UriError;

    /// Parses a canonical URI; anything else is an error ([`UriError::NotCanonical`] names the
    /// canonical form when one exists).
    fn from_str(s: &str) -> Result<Self, UriError> {
        let uri = parse(s, false)?;
        let canonical = uri.to_string();
        if canonical == s {
            Ok(uri)
        } else {
            Err(UriError::NotCanonical(canonical))
        }
    }
}

impl fmt::Display for FaceUri {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scheme = self.scheme();
        match self {
            FaceUri::Udp(a)
            | FaceUri::Tcp(a)
            | FaceUri::Ws(a)
            | FaceUri::WsClient(a)
            | FaceUri::Quic(a) => {
                write!(f, "{scheme}://{a}")
            }
            FaceUri::Unix(p) => write!(f, "unix://{}", p.display()),
            FaceUri::Fd(n) => write!(f, "fd://{n}"),
            FaceUri::Dev(d) => write!(f, "dev://{d}"),
            FaceUri::Ether(m) => write!(f, "ether://[{m}]"),
            FaceUri::Internal => write!(f, "internal://"),
        }
    }
}

/// Parses `s`; `lenient` allows the forms [`FaceUri::canonize`] accepts.
fn parse(s: &str, lenient: bool) -> Result<FaceUri, UriError> {
    let (scheme, rest) = s.split_once("://").ok_or(UriError::Syntax)?;
    let ip = |family, default_port, multicast_ok| {
        parse_ip(rest, family, default_port, multicast_ok, lenient)
    };
    match scheme {
        "udp4" => ip(Family::V4, DEFAULT_PORT, true).map(FaceUri::Udp),
        "udp6" => ip(Family::V6, DEFAULT_PORT, true).map(FaceUri::Udp),
        "udp" if lenient => ip(Family::Any, DEFAULT_PORT, true).map(FaceUri::Udp),
        "tcp4" => ip(Family::V4, DEFAULT_PORT, false).map(FaceUri::Tcp),
        "tcp6" => ip(Family::V6, DEFAULT_PORT, false).map(FaceUri::Tcp),
        "tcp" if lenient => ip(Family::Any, DEFAULT_PORT, false).map(FaceUri::Tcp),
        "ws" => ip(Family::Any, DEFAULT_WS_PORT, false).map(FaceUri::Ws),
        "wsclient" => ip(Family::Any, DEFAULT_WS_PORT, false).map(FaceUri::WsClient),
        "quic" => ip(Family::Any, 443, false).map(FaceUri::Quic),
        "unix" => {
            if rest.starts_with('/') {
                Ok(FaceUri::Unix(PathBuf::from(rest)))
            } else {
                Err(UriError::RelativePath)
            }
        }
        "fd" => rest
            .parse()
            .map(FaceUri::Fd)
            .map_err(|_| UriError::InvalidNumber),
        "dev" => {
            if rest.is_empty() || rest.contains('/') {
                Err(UriError::InvalidDevice)
            } else {
                Ok(FaceUri::Dev(rest.to_owned()))
            }
        }
        "ether" => {
            let inner = rest
                .strip_prefix('[')
                .and_then(|r| r.strip_suffix(']'))
                .ok_or(UriError::InvalidMac)?;
            inner.parse().map(FaceUri::Ether).map_err(UriError::from)
        }
        "internal" if rest.is_empty() => Ok(FaceUri::Internal),
        "internal" => Err(UriError::UnexpectedPath),
        other => Err(UriError::UnsupportedScheme(other.to_owned())),
    }
}

/// Parses `host[:port]` (IPv6 hosts in brackets) for an IP scheme.
fn parse_ip(
    rest: &str,
    family: Family,
    default_port: u16,
    multicast_ok: bool,
    lenient: bool,
) -> Result<SocketAddr, UriError> {
    if rest.contains(['/', '?', '#']) {
        return Err(UriError::UnexpectedPath);
    }
    let (host, port) = if let Some(r) = rest.strip_prefix('[') {
        let (h, after) = r
            .split_once(']')
            .ok_or(UriError::InvalidHost(rest.into()))?;
        match after {
            "" => (h, None),
            p => (h, Some(p.strip_prefix(':').ok_or(UriError::InvalidPort)?)),
        }
    } else {
        match rest.rsplit_once(':') {
            Some((h, _)) if h.contains(':') => return Err(UriError::InvalidHost(rest.into())),
            Some((h, p)) => (h, Some(p)),
            None => (rest, None),
        }
    };
    if host.contains('%') {
        return Err(UriError::Zone);
    }
    let port = match port {
        Some(p) => match p.parse::<u16>() {
            Ok(n) if n != 0 && !p.starts_with('0') => n,
            Ok(n) if lenient && n != 0 => n,
            _ => return Err(UriError::InvalidPort),
        },
        None => default_port,
    };
    let ip = resolve(host, family, lenient)?;
    if ip.is_multicast() && !multicast_ok {
        return Err(UriError::Multicast);
    }
    Ok(SocketAddr::new(ip, port))
}

/// The address `host` names in `family`: a literal, or (lenient only) an IPv4-mapped IPv6
/// literal in IPv4 form or a resolved host name.
fn resolve(host: &str, family: Family, lenient: bool) -> Result<IpAddr, UriError> {
    let bad = || UriError::InvalidHost(host.to_owned());
    let fits = |ip: &IpAddr| match family {
        Family::V4 => ip.is_ipv4(),
        Family::V6 => ip.is_ipv6(),
        Family::Any => true,
    };
    if let Ok(ip) = host.parse::<IpAddr>() {
        let ip = match ip {
            IpAddr::V6(v6) if lenient && family != Family::V6 => {
                v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4)
            }
            IpAddr::V6(v6) if !lenient && v6.to_ipv4_mapped().is_some() => return Err(bad()),
            ip => ip,
        };
        return if fits(&ip) { Ok(ip) } else { Err(bad()) };
    }
    if !lenient || host.is_empty() {
        return Err(bad());
    }
    (host, 0)
        .to_socket_addrs()
        .map_err(|_| bad())?
        .map(|a| a.ip())
        .find(fits)
        .ok_or_else(bad)
}

/// Whether `ip` is a loopback address (IPv4-mapped loopback included): faces between two
/// loopback ends are local.
pub fn is_loopback(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_loopback(),
        IpAddr::V6(v6) => {
            v6.is_loopback()
                || v6
                    .to_ipv4_mapped()
                    .is_some_and(|v4: Ipv4Addr| v4.is_loopback())
        }
    }
}

/// The unspecified address of `ip`'s family (a listener's wildcard).
pub fn unspecified_like(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
        IpAddr::V6(_) => IpAddr::V6(Ipv6Addr::UNSPECIFIED),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_uris_round_trip() {
        for s in [
            "udp4://127.0.0.1:6363",
            "udp4://224.0.23.170:56363",
            "udp6://[::1]:6363",
            "udp6://[ff02::1234]:56363",
            "tcp4://192.0.2.1:6363",
            "tcp6://[2001:db8::1]:7000",
            "ws://0.0.0.0:9696",
            "wsclient://127.0.0.1:51000",
            "unix:///run/nfd/nfd.sock",
            "fd://20",
            "dev://eth0",
            "ether://[01:00:5e:00:17:aa]",
            "internal://",
        ] {
            let u: FaceUri = s.parse().unwrap_or_else(|e| panic!("{s}: {e}"));
            assert_eq!(u.to_string(), s);
        }
    }

    #[test]
    fn non_canonical_and_invalid_uris_are_typed_errors() {
        let not_canonical = |s: &str, canon: &str| {
            assert_eq!(
                s.parse::<FaceUri>(),
                Err(UriError::NotCanonical(canon.into())),
                "{s}"
            );
        };
        not_canonical("udp4://127.0.0.1", "udp4://127.0.0.1:6363");
        not_canonical("tcp6://[::1]", "tcp6://[::1]:6363");
        not_canonical("udp6://[0::1]:6363", "udp6://[::1]:6363");
        not_canonical("ether://[01:00:5E:00:17:AA]", "ether://[01:00:5e:00:17:aa]");
        not_canonical("ws://127.0.0.1", "ws://127.0.0.1:9696");
        let err = |s: &str, e: UriError| assert_eq!(s.parse::<FaceUri>(), Err(e), "{s}");
        err(
            "udp://127.0.0.1:6363",
            UriError::UnsupportedScheme("udp".into()),
        );
        err("http://x", UriError::UnsupportedScheme("http".into()));
        err("127.0.0.1:6363", UriError::Syntax);
        err("udp4://[::1]:6363", UriError::InvalidHost("::1".into()));
        err(
            "udp6://127.0.0.1:6363",
            UriError::InvalidHost("127.0.0.1".into()),
        );
        err(
            "udp4://localhost:6363",
            UriError::InvalidHost("localhost".into()),
        );
        err("udp4://127.0.0.1:0", UriError::InvalidPort);
        err("udp4://127.0.0.1:70000", UriError::InvalidPort);
        err("udp4://127.0.0.1:06363", UriError::InvalidPort);
        err("udp4://127.0.0.1:6363/x", UriError::UnexpectedPath);
        err("udp6://[fe80::1%eth0]:6363", UriError::Zone);
        err("tcp4://224.0.23.170:6363", UriError::Multicast);
        err("unix://run/nfd.sock", UriError::RelativePath);
        err("ether://01:00:5e:00:17:aa", UriError::InvalidMac);
        err("ether://[01:00:5e:00:17]", UriError::InvalidMac);
        err("dev://", UriError::InvalidDevice);
        err("fd://x", UriError::InvalidNumber);
        err("internal://x", UriError::UnexpectedPath);
    }

    #[test]
    fn canonize_fills_defaults_and_normalizes() {
        let c = |s: &str| FaceUri::canonize(s).map(|u| u.to_string());
        assert_eq!(c("udp://127.0.0.1").unwrap(), "udp4://127.0.0.1:6363");
        assert_eq!(c("udp://[::1]:7000").unwrap(), "udp6://[::1]:7000");
        assert_eq!(
            c("tcp://[::ffff:10.0.0.1]").unwrap(),
            "tcp4://10.0.0.1:6363"
        );
        assert_eq!(c("udp4://localhost").unwrap(), "udp4://127.0.0.1:6363");
        assert_eq!(
            c("ether://[01-00-5E-00-17-AA]").unwrap(),
            "ether://[01:00:5e:00:17:aa]"
        );
        assert_eq!(c("ws://[::1]").unwrap(), "ws://[::1]:9696");
        assert!(matches!(c("udp4://[::1]"), Err(UriError::InvalidHost(_))));
        assert!(matches!(
            c("sctp://1.2.3.4"),
            Err(UriError::UnsupportedScheme(_))
        ));
    }

    #[test]
    fn group_bit_marks_multicast_macs() {
        let mac = |s: &str| s.parse::<MacAddr>().unwrap();
        assert!(mac("01:00:5e:00:17:aa").is_multicast());
        assert!(mac("ff:ff:ff:ff:ff:ff").is_multicast());
        assert!(!mac("02:00:00:00:00:01").is_multicast());
    }

    #[test]
    fn loopback_detection_covers_mapped_addresses() {
        assert!(is_loopback("127.0.0.2".parse().unwrap()));
        assert!(is_loopback("::1".parse().unwrap()));
        assert!(is_loopback("::ffff:127.0.0.1".parse().unwrap()));
        assert!(!is_loopback("192.0.2.1".parse().unwrap()));
    }
}
