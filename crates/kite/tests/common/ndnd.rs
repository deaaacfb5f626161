//! NDNd (an independent NDN forwarder, in Go) for the end-to-end tests, run inside a private
//! network namespace: NDNd binds UDP 6363 on every address whatever its configuration says,
//! so it must not run in the host's. The namespace lives in a user namespace (no root needed);
//! programs reach NDNd through its unix socket, which the namespace does not hide, or from
//! inside the namespace through [`Netns::launcher`].

use std::io::{BufRead, BufReader};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tempfile::TempDir;

use super::{reap, terminate, STARTUP};

/// A network namespace (in a user namespace, so no root is needed), held by a sleeping
/// process; loopback is up.
pub struct Netns {
    holder: Child,
}

impl Netns {
    /// A new namespace; panics when `unshare -rn` cannot make one.
    pub fn new() -> Netns {
        let mut holder = Command::new("unshare")
            .args([
                "-rn",
                "sh",
                "-c",
                "ip link set lo up && echo up && exec sleep 600",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run unshare (util-linux)");
        let mut line = String::new();
        let _ = BufReader::new(holder.stdout.take().unwrap()).read_line(&mut line);
        if line.trim() != "up" {
            let _ = holder.kill();
            let out = holder.wait_with_output().expect("unshare output");
            panic!(
                "cannot make a network namespace with `unshare -rn` and bring lo up: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        Netns { holder }
    }

    /// The command prefix that runs a program inside the namespace (nsenter execs it).
    pub fn launcher(&self) -> Vec<String> {
        let pid = self.holder.id().to_string();
        ["nsenter", "-t", &pid, "-U", "-n", "--preserve-credentials"]
            .map(String::from)
            .to_vec()
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = self.holder.kill();
        let _ = self.holder.wait();
    }
}

/// NDNd's forwarder in a namespace, with its unix socket in a temp dir; stopped when dropped.
pub struct Ndnd {
    child: Child,
    socket: PathBuf,
    log: PathBuf,
    dir: TempDir,
}

impl Ndnd {
    /// NDNd with UDP unicast faces on `udp_port` and its unix socket.
    pub fn start(bin: &Path, ns: &Netns, udp_port: u16) -> Ndnd {
        Ndnd::start_with(
            bin,
            ns,
            &format!(
                "  udp:\n    enabled_unicast: true\n    enabled_multicast: false\n    \
                 port_unicast: {udp_port}\n"
            ),
        )
    }

    /// NDNd with its unix socket and an HTTP/3 WebTransport listener on 127.0.0.1:`port`
    /// (path `/ndn`) serving the PEM certificate and key `cert` and `key`; returns once the
    /// listener's UDP socket is bound.
    pub fn start_http3(bin: &Path, ns: &Netns, port: u16, cert: &Path, key: &Path) -> Ndnd {
        let n = Ndnd::start_with(
            bin,
            ns,
            &format!(
                "  udp:\n    enabled_unicast: false\n    enabled_multicast: false\n  \
                 http3:\n    enabled: true\n    bind: 127.0.0.1\n    port: {port}\n    \
                 tls_cert: {}\n    tls_key: {}\n",
                cert.display(),
                key.display()
            ),
        );
        let launcher = ns.launcher();
        let until = Instant::now() + STARTUP;
        loop {
            let out = Command::new(&launcher[0])
                .args(&launcher[1..])
                .args(["ss", "-Hlun", &format!("sport = :{port}")])
                .output()
                .expect("run ss (iproute2) in the namespace");
            if !out.stdout.is_empty() {
                return n;
            }
            assert!(
                Instant::now() < until,
                "NDNd did not bind its HTTP/3 listener on port {port}: {}",
                n.log_text()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Writes a configuration whose `faces` section is the unix socket, no TCP or WebSocket
    /// listener, and `faces` (YAML, indented as inside `faces:`), starts NDNd in `ns` and
    /// waits for its socket.
    fn start_with(bin: &Path, ns: &Netns, faces: &str) -> Ndnd {
        let dir = tempfile::tempdir().expect("temp dir");
        let socket = dir.path().join("ndnd.sock");
        let config = dir.path().join("ndnd.yml");
        let log = dir.path().join("ndnd.log");
        std::fs::write(
            &config,
            format!(
                "core:\n  log_level: WARN\n\
                 faces:\n{faces}  tcp:\n    enabled: false\n  unix:\n    \
                 enabled: true\n    socket_path: {}\n  websocket:\n    enabled: false\n\
                 fw:\n  threads: 1\n\
                 tables:\n  rib:\n    readvertise_nlsr: false\n",
                socket.display()
            ),
        )
        .expect("write NDNd config");
        let launcher = ns.launcher();
        let logfile = std::fs::File::create(&log).expect("log file");
        let child = Command::new(&launcher[0])
            .args(&launcher[1..])
            .arg(bin)
            .args(["fw", "run"])
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(logfile.try_clone().unwrap())
            .stderr(logfile)
            .spawn()
            .expect("start NDNd");
        let mut n = Ndnd {
            child,
            socket,
            log,
            dir,
        };
        let until = Instant::now() + STARTUP;
        while UnixStream::connect(&n.socket).is_err() {
            if let Ok(Some(s)) = n.child.try_wait() {
                panic!("NDNd exited ({s}): {}", n.log_text());
            }
            assert!(Instant::now() < until, "NDNd did not open its socket");
            std::thread::sleep(Duration::from_millis(20));
        }
        n
    }

    /// The unix socket applications connect to.
    pub fn socket(&self) -> &str {
        self.socket.to_str().unwrap()
    }

    /// What NDNd logged so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// NDNd's temp dir (for files a test puts beside it).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Ndnd {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            terminate(self.child.id());
            reap(&mut self.child, Duration::from_secs(5));
        }
    }
}

/// `ndnd ARGS`, one of NDNd's tools (ping, pingserver, put, cat), talking to the forwarder at
/// `socket` (they find it by NDN_CLIENT_TRANSPORT, as NFD's applications do).
pub fn tool(bin: &Path, socket: &str, args: &[&str]) -> Command {
    let mut c = Command::new(bin);
    c.args(args)
        .env("NDN_CLIENT_TRANSPORT", format!("unix://{socket}"));
    c
}
