//! The NDN C++ stack (ndn-cxx, NFD, NLSR with PSync, ndn-tools) installed under the prefix
//! that `KITE_NDNCXX_PREFIX` names (`bin/`, and `lib/` or `lib64/`), for the tests that run NLSR unchanged on
//! Kite and beside NFD: keys and certificates made with `ndnsec` in NLSR's trust model
//! (network, site, operator, router, NLSR instance), `nlsr.conf` and `nfd.conf` written for a
//! test, and the daemons run in a network namespace, killed on drop.
//!
//! Nothing here builds that stack (docs/routing.md says which versions were built, from what,
//! and why CI does not): a test without the variable skips.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

use tempfile::TempDir;

use super::{reap, terminate};
use kite_testkit::skip;

/// The network every test router belongs to, and its one site (NLSR's `network`, `site`).
pub const NETWORK: &str = "/ndn";
pub const SITE: &str = "/kite";
/// The operator who signs the routers' certificates and `nlsrc` commands.
pub const OPERATOR: &str = "/ndn/kite/%C1.Operator/op";

/// How long a daemon may take to open its socket.
const STARTUP: Duration = Duration::from_secs(15);

/// The installation `KITE_NDNCXX_PREFIX` names.
#[derive(Debug, Clone)]
pub struct Prefix {
    root: PathBuf,
}

impl Prefix {
    /// The prefix, or `None` (the test skips, saying why) when the variable is unset
    /// or names no installation with each program in `tools` (under `bin/`).
    pub fn from_env(tools: &[&str]) -> Option<Prefix> {
        let Some(root) = std::env::var_os("KITE_NDNCXX_PREFIX").map(PathBuf::from) else {
            skip(
                "KITE_NDNCXX_PREFIX is not set (an install prefix of ndn-cxx 0.9, NFD \
                 24.07, NLSR 24.08 and ndn-tools, such as /opt/ndn)",
            );
            return None;
        };
        let p = Prefix { root };
        for tool in tools {
            if !p.bin(tool).is_file() {
                skip(format_args!(
                    "KITE_NDNCXX_PREFIX={} has no bin/{tool}",
                    p.root.display()
                ));
                return None;
            }
        }
        Some(p)
    }

    /// `bin/<tool>` under the prefix.
    pub fn bin(&self, tool: &str) -> PathBuf {
        self.root.join("bin").join(tool)
    }

    /// `launcher... <prefix>/bin/<tool>` with the prefix's libraries, `HOME` (where ndn-cxx
    /// keeps the keychain, `~/.ndn`) and the forwarder's socket (none: the tool's default).
    pub fn command(
        &self,
        launcher: &[String],
        tool: &str,
        home: &Path,
        socket: Option<&str>,
    ) -> Command {
        let mut cmd = match launcher.split_first() {
            Some((first, rest)) => {
                let mut c = Command::new(first);
                c.args(rest).arg(self.bin(tool));
                c
            }
            None => Command::new(self.bin(tool)),
        };
        // waf installs the libraries in lib64 on some systems, lib on others.
        let libs = format!(
            "{}:{}",
            self.root.join("lib").display(),
            self.root.join("lib64").display()
        );
        cmd.env("LD_LIBRARY_PATH", libs)
            .env("HOME", home)
            .env_remove("NDN_CLIENT_PIB")
            .env_remove("NDN_CLIENT_TPM")
            .stdin(Stdio::null());
        if let Some(s) = socket {
            cmd.env("NDN_CLIENT_TRANSPORT", format!("unix://{s}"));
        }
        cmd
    }

    /// Runs `tool args...` with `home` to the end; panics with its stderr unless it succeeds.
    pub fn run(&self, tool: &str, home: &Path, socket: Option<&str>, args: &[&str]) -> Output {
        let out = self
            .command(&[], tool, home, socket)
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("run {tool}: {e}"));
        assert!(
            out.status.success(),
            "{tool} {args:?} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }
}

/// The certificates of a network in NLSR's trust model: the root (`/ndn`, the trust anchor),
/// the site, and the operator who signs each router's certificate, all kept in one keychain
/// (the operator's: its default identity signs `nlsrc` commands).
pub struct Pki {
    prefix: Prefix,
    dir: TempDir,
}

impl Pki {
    /// Makes the root, site and operator keys and certificates.
    pub fn new(prefix: &Prefix) -> Pki {
        let dir = tempfile::tempdir().expect("temp dir");
        let pki = Pki {
            prefix: prefix.clone(),
            dir,
        };
        let home = pki.home();
        std::fs::create_dir_all(&home).unwrap();
        let root = prefix
            .run("ndnsec", &home, None, &["key-gen", NETWORK])
            .stdout;
        std::fs::write(pki.dir.path().join("root.cert"), root).unwrap();
        let site = format!("{NETWORK}{SITE}");
        let site_cert = pki.issue(&home, &site, NETWORK);
        std::fs::write(pki.dir.path().join("site.cert"), site_cert).unwrap();
        let op_cert = pki.issue(&home, OPERATOR, &site);
        std::fs::write(pki.dir.path().join("operator.cert"), op_cert).unwrap();
        pki
    }

    /// The operator's home: `HOME` for `nlsrc`, whose commands NLSR accepts from the operator.
    pub fn home(&self) -> PathBuf {
        self.dir.path().join("operator")
    }

    /// Makes `identity`'s key in the keychain at `home` and has `issuer` (in the operator's
    /// keychain) certify it; the certificate, installed at `home` too.
    fn issue(&self, home: &Path, identity: &str, issuer: &str) -> Vec<u8> {
        let request = self.dir.path().join("request");
        let req = self
            .prefix
            .run("ndnsec", home, None, &["key-gen", identity])
            .stdout;
        std::fs::write(&request, req).unwrap();
        let cert = self
            .prefix
            .run(
                "ndnsec",
                &self.home(),
                None,
                &["cert-gen", "-s", issuer, request.to_str().unwrap()],
            )
            .stdout;
        let file = self.dir.path().join("issued.cert");
        std::fs::write(&file, &cert).unwrap();
        self.prefix.run(
            "ndnsec",
            home,
            None,
            &["cert-install", file.to_str().unwrap()],
        );
        cert
    }

    /// A router's keychain at `dir/home` (its identity `/ndn/kite/%C1.Router/<name>`,
    /// certified by the operator, the default identity) and the certificates its NLSR
    /// publishes and trusts, in `dir`: root.cert, site.cert, operator.cert, router.cert.
    pub fn router(&self, name: &str, dir: &Path) {
        let home = dir.join("home");
        std::fs::create_dir_all(&home).unwrap();
        let cert = self.issue(&home, &router_prefix(name), OPERATOR);
        std::fs::write(dir.join("router.cert"), cert).unwrap();
        for f in ["root.cert", "site.cert", "operator.cert"] {
            std::fs::copy(self.dir.path().join(f), dir.join(f)).unwrap();
        }
    }
}

/// A router's name prefix: `/ndn/kite/%C1.Router/<name>`.
pub fn router_prefix(name: &str) -> String {
    format!("{NETWORK}{SITE}/%C1.Router/{name}")
}

/// One router's NLSR configuration.
pub struct NlsrConf<'a> {
    /// The router's name under the site.
    pub name: &'a str,
    /// Each neighbour: its name under the site and the FaceUri of the face to it.
    pub neighbours: &'a [(&'a str, String)],
    /// Prefixes the configuration advertises.
    pub advertise: &'a [String],
}

/// NLSR's trust model written as a validator configuration: hello and LSA Data signed by the
/// originating router's NLSR instance key, that key by its router's key, a router's key by
/// its site's operator, the operator and the site hierarchically under the root anchor; and
/// `nlsrc` prefix updates signed by an operator.
const TRUST: &str = r#"
  validator
  {
    rule
    {
      id "hello data: the neighbour's NLSR key"
      for data
      filter { type name regex ^(<>*)<nlsr><INFO><><>$ }
      checker
      {
        type customized
        sig-type ecdsa-sha256
        key-locator
        {
          type name
          hyper-relation
          {
            k-regex ^(<>*)<nlsr><KEY><>{1,3}$
            k-expand \\1
            h-relation equal
            p-regex ^(<>*)<nlsr><INFO><><>$
            p-expand \\1
          }
        }
      }
    }
    rule
    {
      id "LSA data: the originating router's NLSR key"
      for data
      filter { type name regex ^<localhop><>*<nlsr><LSA> }
      checker
      {
        type customized
        sig-type ecdsa-sha256
        key-locator
        {
          type name
          hyper-relation
          {
            k-regex ^(<>*)<nlsr><KEY><>{1,3}$
            k-expand \\1
            h-relation equal
            p-regex ^<localhop>(<>*)<nlsr><LSA>(<>*)<><><><>$
            p-expand \\1\\2
          }
        }
      }
    }
    rule
    {
      id "a router's certificate: its site's operator"
      for data
      filter { type name regex ^<>*<%C1.Router><><KEY><><><>$ }
      checker
      {
        type customized
        sig-type ecdsa-sha256
        key-locator
        {
          type name
          hyper-relation
          {
            k-regex ^(<>*)<%C1.Operator><><KEY><>{1,3}$
            k-expand \\1
            h-relation equal
            p-regex ^(<>*)<%C1.Router><><KEY><><><>$
            p-expand \\1
          }
        }
      }
    }
    rule
    {
      id "other certificates: hierarchical"
      for data
      filter { type name regex ^<>*<KEY><><><>$ }
      checker { type hierarchical sig-type ecdsa-sha256 }
    }
    trust-anchor { type file file-name "root.cert" }
  }
  prefix-update-validator
  {
    rule
    {
      id "nlsrc advertise and withdraw: an operator"
      for interest
      filter { type name regex ^<localhost><nlsr><prefix-update>[<advertise><withdraw>]<><><>$ }
      checker
      {
        type customized
        sig-type ecdsa-sha256
        key-locator { type name regex ^<>*<%C1.Operator><><KEY><>{1,3}$ }
      }
    }
    rule
    {
      id "certificates: hierarchical"
      for data
      filter { type name regex ^<>*<KEY><><><>$ }
      checker { type hierarchical sig-type ecdsa-sha256 }
    }
    trust-anchor { type file file-name "root.cert" }
  }
  cert-to-publish "site.cert"
  cert-to-publish "operator.cert"
  cert-to-publish "router.cert"
"#;

impl NlsrConf<'_> {
    /// Writes `dir/nlsr.conf` (with `dir/state` for NLSR's state) with intervals at NLSR's
    /// smallest: the first hello goes out once the neighbour's prefix is registered, the
    /// adjacency LSA is built 5 s after a neighbour answers, routes are computed at once.
    pub fn write(&self, dir: &Path) -> PathBuf {
        let state = dir.join("state");
        std::fs::create_dir_all(&state).unwrap();
        let neighbours: String = self
            .neighbours
            .iter()
            .map(|(n, uri)| {
                format!(
                    "  neighbor\n  {{\n    name {}\n    face-uri {uri}\n    link-cost 10\n  }}\n",
                    router_prefix(n)
                )
            })
            .collect();
        let advertise: String = self
            .advertise
            .iter()
            .map(|p| format!("  prefix {p}\n"))
            .collect();
        let text = format!(
            "general\n{{\n  network {NETWORK}\n  site {SITE}\n  router /%C1.Router/{name}\n  \
             lsa-refresh-time 240\n  lsa-interest-lifetime 1\n  sync-protocol psync\n  \
             sync-interest-lifetime 5000\n  state-dir {state}\n}}\n\
             neighbors\n{{\n  hello-retries 3\n  hello-timeout 1\n  hello-interval 30\n  \
             adj-lsa-build-interval 5\n  face-dataset-fetch-tries 3\n  \
             face-dataset-fetch-interval 1800\n{neighbours}}}\n\
             hyperbolic\n{{\n  state off\n}}\n\
             fib\n{{\n  max-faces-per-prefix 0\n  routing-calc-interval 0\n}}\n\
             advertising\n{{\n{advertise}}}\n\
             security\n{{{TRUST}}}\n",
            name = self.name,
            state = state.display(),
        );
        let conf = dir.join("nlsr.conf");
        std::fs::write(&conf, text).expect("write nlsr.conf");
        conf
    }
}

/// A daemon of the prefix (NLSR or NFD) with its log in a file; SIGTERM, then SIGKILL, on
/// drop.
pub struct Process {
    what: String,
    child: Child,
    log: PathBuf,
}

impl Process {
    /// Starts `cmd` with its stdout and stderr to `log`.
    pub fn spawn(what: &str, mut cmd: Command, log: PathBuf) -> Process {
        let file = std::fs::File::create(&log).expect("log file");
        let child = cmd
            .stdout(file.try_clone().unwrap())
            .stderr(file)
            .spawn()
            .unwrap_or_else(|e| panic!("start {what}: {e}"));
        Process {
            what: what.to_string(),
            child,
            log,
        }
    }

    /// Its exit status, if it has exited.
    pub fn exited(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// The last `n` lines of its log.
    pub fn log_tail(&self, n: usize) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(n)..].join("\n")
    }

    /// Its whole log.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// What it is and the tail of its log, for a failure message.
    pub fn describe(&mut self) -> String {
        let state = match self.exited() {
            Some(s) => format!("exited ({s})"),
            None => "running".to_string(),
        };
        format!(
            "{} {state}; its log (tail):\n{}",
            self.what,
            self.log_tail(40)
        )
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        if self.exited().is_none() {
            terminate(self.child.id());
            reap(&mut self.child, Duration::from_secs(5));
        }
    }
}

/// Starts NLSR with the configuration at `conf` (its directory holds the keychain `home` and
/// the certificates [`Pki::router`] wrote), on the forwarder at `socket`, logging at DEBUG.
pub fn start_nlsr(prefix: &Prefix, launcher: &[String], conf: &Path, socket: &str) -> Process {
    let dir = conf.parent().expect("the configuration's directory");
    let mut cmd = prefix.command(launcher, "nlsr", &dir.join("home"), Some(socket));
    cmd.arg("-f").arg(conf).env("NDN_LOG", "nlsr.*=DEBUG");
    Process::spawn("nlsr", cmd, dir.join("nlsr.log"))
}

/// NFD with its own directory, keychain and unix socket.
pub struct Nfd {
    pub process: Process,
    dir: TempDir,
    socket: String,
}

impl Nfd {
    /// Starts NFD in the namespace `launcher` enters: its unix socket in a temp dir, a UDP
    /// listener on port 6363 (IPv4, no multicast), no TCP, Ethernet or WebSocket, any key
    /// authorized for the forwarder's commands and the RIB (as NFD's sample configuration),
    /// and readvertisement to NLSR on. Waits until the socket accepts connections.
    pub fn start(prefix: &Prefix, launcher: &[String]) -> Nfd {
        let dir = tempfile::tempdir().expect("temp dir");
        let socket = dir.path().join("nfd.sock").display().to_string();
        let conf = dir.path().join("nfd.conf");
        std::fs::write(&conf, nfd_conf(&socket)).expect("write nfd.conf");
        let home = dir.path().join("home");
        std::fs::create_dir_all(&home).unwrap();
        let mut cmd = prefix.command(launcher, "nfd", &home, None);
        cmd.arg("--config").arg(&conf);
        let mut process = Process::spawn("nfd", cmd, dir.path().join("nfd.log"));
        let until = Instant::now() + STARTUP;
        while std::os::unix::net::UnixStream::connect(&socket).is_err() {
            assert!(
                Instant::now() < until && process.exited().is_none(),
                "NFD did not open {socket}: {}",
                process.describe()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Nfd {
            process,
            dir,
            socket,
        }
    }

    /// The unix socket apps connect to.
    pub fn socket(&self) -> &str {
        &self.socket
    }

    /// The home (keychain) NFD runs with: `nfdc` uses it too.
    pub fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }
}

/// The nfd.conf [`Nfd::start`] writes.
pub fn nfd_conf(socket: &str) -> String {
    format!(
        "general\n{{\n}}\n\
         log\n{{\n  default_level INFO\n}}\n\
         tables\n{{\n  cs_max_packets 1024\n}}\n\
         face_system\n{{\n  unix\n  {{\n    path {socket}\n  }}\n  \
         tcp\n  {{\n    listen no\n  }}\n  \
         udp\n  {{\n    listen yes\n    port 6363\n    enable_v6 no\n    mcast no\n  }}\n  \
         ether\n  {{\n    listen no\n    mcast no\n  }}\n}}\n\
         authorizations\n{{\n  authorize\n  {{\n    certfile any\n    privileges\n    {{\n      \
         faces\n      fib\n      cs\n      strategy-choice\n    }}\n  }}\n}}\n\
         rib\n{{\n  localhost_security\n  {{\n    trust-anchor\n    {{\n      type any\n    }}\n  \
         }}\n  readvertise_nlsr yes\n}}\n"
    )
}
