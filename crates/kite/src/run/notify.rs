//! systemd's service notification protocol (`sd_notify(3)`): one datagram of `KEY=VALUE`
//! lines to the unix datagram socket `$NOTIFY_SOCKET` names, a path or, with a leading `@`,
//! an abstract name. `kite run` sends `READY=1` once its listeners are open and management
//! answers, `RELOADING=1` with `MONOTONIC_USEC` and `READY=1` again around a reload, and
//! `STOPPING=1` when it begins to stop, so that a `Type=notify` (or `notify-reload`) unit knows
//! its state. Written here rather than taken from a crate: it is one `sendto`.

use std::io;
use std::os::unix::net::{SocketAddr, UnixDatagram};

/// Where notifications go; sends nothing when `kite run` was not started by a service manager.
pub(crate) struct Notifier {
    target: Option<(UnixDatagram, SocketAddr)>,
}

impl Notifier {
    /// The notifier `$NOTIFY_SOCKET` asks for (none when unset or empty). A value that names
    /// no usable socket is reported, and notifications are then not sent.
    pub(crate) fn from_env() -> Notifier {
        let target = match std::env::var_os("NOTIFY_SOCKET") {
            Some(v) if !v.is_empty() => match open(&v.to_string_lossy()) {
                Ok(t) => Some(t),
                Err(e) => {
                    tracing::warn!(error = %e, "NOTIFY_SOCKET is not usable; no service notifications");
                    None
                }
            },
            _ => None,
        };
        Notifier { target }
    }

    /// Sends `state` (newline-separated `KEY=VALUE` assignments). A failure is logged: the
    /// service manager then learns nothing, but the forwarder works on.
    pub(crate) fn send(&self, state: &str) {
        let Some((socket, addr)) = &self.target else {
            return;
        };
        if let Err(e) = socket.send_to_addr(state.as_bytes(), addr) {
            tracing::warn!(error = %e, "cannot notify the service manager");
        }
    }

    /// `READY=1`: the listeners are open and management answers.
    pub(crate) fn ready(&self) {
        self.send("READY=1\nSTATUS=forwarding");
    }

    /// `RELOADING=1` with the monotonic clock systemd (253 and later, `Type=notify-reload`)
    /// matches it with.
    pub(crate) fn reloading(&self) {
        self.send(&format!(
            "RELOADING=1\nSTATUS=reloading the configuration\nMONOTONIC_USEC={}",
            monotonic_usec()
        ));
    }

    /// `STOPPING=1`: the forwarder is shutting down.
    pub(crate) fn stopping(&self) {
        self.send("STOPPING=1\nSTATUS=stopping");
    }
}

/// An unbound datagram socket and the address `$NOTIFY_SOCKET` names.
fn open(value: &str) -> io::Result<(UnixDatagram, SocketAddr)> {
    let addr = match value.strip_prefix('@') {
        Some(name) => {
            use std::os::linux::net::SocketAddrExt;
            SocketAddr::from_abstract_name(name.as_bytes())?
        }
        None if value.starts_with('/') => SocketAddr::from_pathname(value)?,
        None => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{value:?} is neither an absolute path nor an abstract name (@...)"),
            ))
        }
    };
    Ok((UnixDatagram::unbound()?, addr))
}

/// CLOCK_MONOTONIC in microseconds.
fn monotonic_usec() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    t.tv_sec as u64 * 1_000_000 + t.tv_nsec as u64 / 1_000
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each notification reaches a path socket, and an abstract one, as one datagram.
    #[test]
    fn notifications_reach_path_and_abstract_sockets() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notify");
        let listener = UnixDatagram::bind(&path).unwrap();
        let n = Notifier {
            target: Some(open(path.to_str().unwrap()).unwrap()),
        };
        n.ready();
        let mut buf = [0u8; 256];
        let len = listener.recv(&mut buf).unwrap();
        assert_eq!(&buf[..len], b"READY=1\nSTATUS=forwarding");

        use std::os::linux::net::SocketAddrExt;
        let name = format!("kite-notify-test-{}", std::process::id());
        let addr = SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
        let listener = UnixDatagram::bind_addr(&addr).unwrap();
        let n = Notifier {
            target: Some(open(&format!("@{name}")).unwrap()),
        };
        n.reloading();
        let len = listener.recv(&mut buf).unwrap();
        let text = std::str::from_utf8(&buf[..len]).unwrap();
        assert!(text.starts_with("RELOADING=1\n"), "{text}");
        let usec: u64 = text
            .lines()
            .find_map(|l| l.strip_prefix("MONOTONIC_USEC="))
            .unwrap()
            .parse()
            .unwrap();
        assert!(usec > 0);
    }

    #[test]
    fn relative_paths_are_refused() {
        assert!(open("notify.sock").is_err());
    }
}
