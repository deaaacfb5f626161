//! [`Endpoint`]: where a forwarder listens for local applications, and where to look by
//! default.

use std::fmt;
use std::path::PathBuf;

/// NFD's Unix socket on Linux (since 24.07).
pub const NFD_SOCKET: &str = "/run/nfd/nfd.sock";

/// The environment variable ndn-cxx applications read their transport from.
pub const TRANSPORT_ENV: &str = "NDN_CLIENT_TRANSPORT";

/// The TCP and UDP port a forwarder listens on when a URI names none.
const DEFAULT_PORT: u16 = 6363;
/// The WebSocket port a forwarder listens on when a URI names none (NFD's).
const DEFAULT_WS_PORT: u16 = 9696;

/// A forwarder's local listening point.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// A Unix stream socket path.
    Unix(PathBuf),
    /// A TCP `host:port`.
    Tcp(String),
    /// A UDP `host:port` (one packet per datagram).
    Udp(String),
    /// A WebSocket server (one packet per binary message).
    Ws {
        /// `host:port`.
        host_port: String,
        /// The request path (`/` when the URI names none).
        path: String,
    },
}

/// `host[:port]` with `port` added when absent (IPv6 literals in brackets).
fn with_port(s: &str, rest: &str, port: u16) -> Result<String, String> {
    if rest.is_empty() {
        return Err(format!("{s:?} names no host"));
    }
    let has_port = match rest.rfind(']') {
        Some(close) => rest[close..].contains(':'),
        None => rest.contains(':'),
    };
    Ok(if has_port {
        rest.to_owned()
    } else {
        format!("{rest}:{port}")
    })
}

impl Endpoint {
    /// Parses `unix:///path`, `tcp://host[:port]`, `udp://host[:port]` (also `tcp4`, `tcp6`,
    /// `udp4`, `udp6`; port 6363 when absent), `ws://host[:port][/path]` (port 9696) or a
    /// bare path, as ndn-cxx's `transport=` setting and `NDN_CLIENT_TRANSPORT` are written.
    pub fn parse(s: &str) -> Result<Endpoint, String> {
        if let Some(path) = s.strip_prefix("unix://") {
            return Ok(Endpoint::Unix(PathBuf::from(path)));
        }
        for scheme in ["tcp://", "tcp4://", "tcp6://"] {
            if let Some(rest) = s.strip_prefix(scheme) {
                return with_port(s, rest.trim_end_matches('/'), DEFAULT_PORT).map(Endpoint::Tcp);
            }
        }
        for scheme in ["udp://", "udp4://", "udp6://"] {
            if let Some(rest) = s.strip_prefix(scheme) {
                return with_port(s, rest.trim_end_matches('/'), DEFAULT_PORT).map(Endpoint::Udp);
            }
        }
        if let Some(rest) = s.strip_prefix("ws://") {
            let (authority, path) = match rest.find('/') {
                Some(i) => (&rest[..i], &rest[i..]),
                None => (rest, "/"),
            };
            return Ok(Endpoint::Ws {
                host_port: with_port(s, authority, DEFAULT_WS_PORT)?,
                path: path.to_owned(),
            });
        }
        if s.contains("://") {
            return Err(format!(
                "{s:?}: the transports are unix://, tcp://, udp:// and ws://"
            ));
        }
        Ok(Endpoint::Unix(PathBuf::from(s)))
    }

    /// Where an application looks for the forwarder: `NDN_CLIENT_TRANSPORT` when set, else
    /// NFD's socket, then Kite's per-user socket ([`user_socket`]).
    pub fn defaults() -> Result<Vec<Endpoint>, String> {
        if let Some(t) = std::env::var_os(TRANSPORT_ENV) {
            let t = t
                .into_string()
                .map_err(|_| format!("{TRANSPORT_ENV} is not UTF-8"))?;
            return Ok(vec![Endpoint::parse(&t)?]);
        }
        Ok(vec![
            Endpoint::Unix(PathBuf::from(NFD_SOCKET)),
            Endpoint::Unix(user_socket()),
        ])
    }
}

/// Kite's per-user socket, where `kite run` listens when it may not create NFD's and where
/// every client looks next: `$XDG_RUNTIME_DIR/kite/nfd.sock`, or without `XDG_RUNTIME_DIR`,
/// `kite-<uid>/nfd.sock` in the temporary directory (`$TMPDIR`, else /tmp; one directory per
/// user, so users do not share one). The one place this choice is made.
pub fn user_socket() -> PathBuf {
    if let Some(dir) = std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir).join("kite").join("nfd.sock");
    }
    // The owner of /proc/self is this process's user (no libc call needed).
    let uid = std::fs::metadata("/proc/self").map_or(0, |m| {
        use std::os::unix::fs::MetadataExt;
        m.uid()
    });
    std::env::temp_dir()
        .join(format!("kite-{uid}"))
        .join("nfd.sock")
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Endpoint::Unix(p) => write!(f, "unix://{}", p.display()),
            Endpoint::Tcp(a) => write!(f, "tcp://{a}"),
            Endpoint::Udp(a) => write!(f, "udp://{a}"),
            Endpoint::Ws { host_port, path } => write!(f, "ws://{host_port}{path}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_forms_ndn_cxx_accepts() {
        let unix = |p: &str| Endpoint::Unix(PathBuf::from(p));
        let tcp = |a: &str| Endpoint::Tcp(a.into());
        assert_eq!(
            Endpoint::parse("unix:///run/nfd/nfd.sock"),
            Ok(unix(NFD_SOCKET))
        );
        assert_eq!(Endpoint::parse("/tmp/x.sock"), Ok(unix("/tmp/x.sock")));
        assert_eq!(
            Endpoint::parse("tcp://localhost"),
            Ok(tcp("localhost:6363"))
        );
        assert_eq!(
            Endpoint::parse("tcp4://127.0.0.1:7000"),
            Ok(tcp("127.0.0.1:7000"))
        );
        assert_eq!(Endpoint::parse("tcp6://[::1]"), Ok(tcp("[::1]:6363")));
        assert_eq!(Endpoint::parse("tcp6://[::1]:9/"), Ok(tcp("[::1]:9")));
        assert_eq!(
            Endpoint::parse("udp4://127.0.0.1"),
            Ok(Endpoint::Udp("127.0.0.1:6363".into()))
        );
        assert_eq!(
            Endpoint::parse("udp6://[::1]:7000/"),
            Ok(Endpoint::Udp("[::1]:7000".into()))
        );
        let ws = Endpoint::parse("ws://localhost").unwrap();
        assert_eq!(ws.to_string(), "ws://localhost:9696/");
        assert_eq!(
            Endpoint::parse("ws://127.0.0.1:9000/ndn")
                .unwrap()
                .to_string(),
            "ws://127.0.0.1:9000/ndn"
        );
        assert!(Endpoint::parse("ether://[02:00:00:00:00:01]").is_err());
        assert!(Endpoint::parse("tcp://").is_err());
        assert!(Endpoint::parse("udp://").is_err());
        assert_eq!(
            unix(NFD_SOCKET).to_string(),
            "unix:///run/nfd/nfd.sock".to_string()
        );
    }
}
