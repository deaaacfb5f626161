//! Headless Chromium for the end-to-end tests: the browser itself ([`chromium`], [`headless`]
//! for a page rendered to the DOM or a screenshot), and [`fetch_in_browser`], which has NDNts
//! in a page fetch one Data or a segmented object through a forwarder's WebTransport or
//! WebSocket face. The page is `tests/interop/ndnts/browser/fetch.mjs`, bundled with esbuild
//! and served on 127.0.0.1 (a secure context, as WebTransport requires) by `serve.mjs` beside
//! it, which prints what the page POSTs back. Without Chromium, Node.js, the npm packages
//! (`tests/interop/ndnts/package-lock.json`) or openssl, a test skips, saying why.

use std::fmt::Write as _;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use kite_testkit::skip;
use sha2::{Digest, Sha256};

use super::{json_lines, ndnts, STARTUP};

/// Chromium, or None (the test then skips, saying so).
pub fn chromium() -> Option<&'static str> {
    let found = ["chromium", "chromium-browser"].into_iter().find(|c| {
        Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    });
    if found.is_none() {
        skip("chromium is not installed (scripts/test.sh installs it)");
    }
    found
}

/// The flags of every headless run: no sandbox (tests may run as root), no GPU, no first-run
/// dialogs, nothing fetched in the background, the profile in `profile`.
fn flags(profile: &Path) -> Vec<String> {
    [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--hide-scrollbars",
        "--disable-background-networking",
        "--disable-component-update",
    ]
    .map(String::from)
    .into_iter()
    .chain([format!("--user-data-dir={}", profile.display())])
    .collect()
}

/// Runs `browser` headless on `url` with `extra` flags (`--dump-dom`, `--screenshot=...`) until
/// it exits; killed after a minute (coreutils' timeout): a page that never settles fails the
/// test instead of hanging it.
pub fn headless(browser: &str, profile: &Path, extra: &[&str], url: &str) -> std::process::Output {
    Command::new("timeout")
        .args(["60", browser])
        .args(flags(profile))
        .args(extra)
        .arg(url)
        .output()
        .expect("run chromium")
}

/// The page's directory, `tests/interop/ndnts/browser`.
pub fn page_dir() -> PathBuf {
    ndnts::dir().join("browser")
}

/// Chromium, when it and everything the page needs are here: Node.js, the NDNts packages with
/// @ndn/quic-transport and @ndn/ws-transport, and esbuild. Otherwise None, and the test skips.
pub fn available() -> Option<&'static str> {
    let browser = chromium()?;
    if !ndnts::available() {
        return None;
    }
    for package in ["@ndn/quic-transport", "@ndn/ws-transport", "esbuild"] {
        let installed = ndnts::dir().join(format!("node_modules/{package}/package.json"));
        if !installed.exists() {
            skip(format_args!(
                "{package} is not installed: no {} (run npm ci in {}; scripts/test.sh does)",
                installed.display(),
                ndnts::dir().display()
            ));
            return None;
        }
    }
    Some(browser)
}

/// A self-signed certificate a browser accepts by its hash alone (WebTransport's
/// `serverCertificateHashes`: ECDSA P-256, valid for less than two weeks; Chromium 156 refuses
/// the handshake with an RSA key or a validity of 20 days), for 127.0.0.1.
pub struct Cert {
    /// The certificate, PEM.
    pub cert: PathBuf,
    /// Its private key, PEM (PKCS#8).
    pub key: PathBuf,
    /// The SHA-256 of the certificate's DER encoding, hex.
    pub sha256: String,
}

/// Makes a [`Cert`] in `dir` with openssl(1), or None (the test skips) without it.
pub fn webtransport_cert(dir: &Path) -> Option<Cert> {
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    let made = Command::new("openssl")
        .args(["req", "-x509", "-newkey", "ec", "-pkeyopt"])
        .args(["ec_paramgen_curve:prime256v1", "-nodes", "-days", "10"])
        .args([
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
        ])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .stdin(Stdio::null())
        .output();
    match made {
        Ok(out) if out.status.success() => {}
        Ok(out) => panic!(
            "openssl req failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(e) => {
            skip(format_args!(
                "openssl does not run ({e}): no certificate for WebTransport"
            ));
            return None;
        }
    }
    let der = Command::new("openssl")
        .args(["x509", "-outform", "DER", "-in"])
        .arg(&cert)
        .output()
        .expect("openssl x509");
    assert!(der.status.success() && !der.stdout.is_empty());
    let sha256 = hex::encode(Sha256::digest(&der.stdout));
    Some(Cert { cert, key, sha256 })
}

/// The face the page connects to.
#[derive(Clone, Debug)]
pub enum Transport {
    /// WebTransport over HTTP/3 (`https://HOST:PORT/PATH`), the server's certificate trusted by
    /// its SHA-256 (hex).
    WebTransport {
        /// The session's URL.
        url: String,
        /// The SHA-256 of the server certificate's DER encoding, hex.
        cert_sha256: String,
    },
    /// WebSocket (`ws://HOST:PORT/`).
    WebSocket {
        /// The server's URL.
        url: String,
    },
}

/// What the page fetches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// One Interest for the name; the Data's Content is the result.
    Data,
    /// A segmented object: the name versioned, or else its version found by RDR metadata.
    Object,
}

/// One fetch in the browser.
#[derive(Clone, Debug)]
pub struct Fetch {
    /// The face.
    pub transport: Transport,
    /// The name to fetch.
    pub name: String,
    /// One Data or a segmented object.
    pub mode: Mode,
    /// The command prefix that runs the page server and Chromium (e.g. in a network
    /// namespace); empty for none.
    pub launcher: Vec<String>,
    /// How long the page may take, from Chromium's start to its report.
    pub limit: Duration,
}

impl Fetch {
    /// A fetch of `name` over `transport`, in this network namespace, within a minute.
    pub fn new(transport: Transport, name: &str, mode: Mode) -> Fetch {
        Fetch {
            transport,
            name: name.to_string(),
            mode,
            launcher: Vec::new(),
            limit: Duration::from_secs(60),
        }
    }

    /// The same fetch, with the page server and Chromium run by `launcher`.
    pub fn inside(mut self, launcher: Vec<String>) -> Fetch {
        self.launcher = launcher;
        self
    }

    /// The page's query string.
    fn query(&self) -> String {
        let mut pairs = vec![("name", self.name.as_str())];
        match &self.transport {
            Transport::WebTransport { url, cert_sha256 } => {
                pairs.extend([("transport", "wt"), ("url", url), ("hash", cert_sha256)]);
            }
            Transport::WebSocket { url } => pairs.extend([("transport", "ws"), ("url", url)]),
        }
        pairs.push((
            "mode",
            match self.mode {
                Mode::Data => "data",
                Mode::Object => "object",
            },
        ));
        let mut q = String::new();
        for (k, v) in pairs {
            if !q.is_empty() {
                q.push('&');
            }
            q.push_str(k);
            q.push('=');
            for b in v.bytes() {
                if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                    q.push(b as char);
                } else {
                    let _ = write!(q, "%{b:02X}");
                }
            }
        }
        q
    }
}

/// What the page fetched.
#[derive(Clone, Debug)]
pub struct BrowserResult {
    /// The Data's name, or the object's versioned name.
    pub name: String,
    /// The octets fetched.
    pub bytes: u64,
    /// Their SHA-256, hex.
    pub sha256: String,
    /// Milliseconds from the start of the connection to its face being up.
    pub connect_ms: f64,
    /// Milliseconds from then to the last octet (version discovery included).
    pub fetch_ms: f64,
    /// The transport's MTU as NDNts saw it (for WebTransport, the session's largest datagram;
    /// none when unbounded).
    pub mtu: Option<u64>,
    /// The segments fetched (1 for one Data).
    pub segments: u64,
    /// The Interests sent for them: more than `segments` when some were retransmitted.
    pub interests: u64,
}

/// A child killed with its whole process group when dropped (Chromium's renderers, the page
/// server's esbuild).
struct Group(Child);

impl Drop for Group {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.0.id())])
            .status();
        let _ = self.0.wait();
    }
}

/// Spawns `launcher... program args...` as the leader of a new process group, stderr to `log`.
fn spawn_group(launcher: &[String], program: &Path, args: &[String], log: &Path) -> Group {
    let mut cmd = match launcher.split_first() {
        Some((first, rest)) => {
            let mut c = Command::new(first);
            c.args(rest).arg(program);
            c
        }
        None => Command::new(program),
    };
    let log = std::fs::File::create(log).expect("log file");
    let child = cmd
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(log)
        .process_group(0)
        .spawn()
        .unwrap_or_else(|e| panic!("start {}: {e}", program.display()));
    Group(child)
}

/// The last lines of a log file, for a failure's message.
fn tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(30)..].join("\n")
}

/// Loads the page in headless `browser` (from [`available`]) to make `fetch`, waits for its
/// report and stops Chromium. Err with the page's error (or the timeout) and the end of the
/// page server's and Chromium's logs.
pub fn fetch_in_browser(browser: &str, fetch: &Fetch) -> Result<BrowserResult, String> {
    let dir = tempfile::tempdir().expect("temp dir");
    let server_log = dir.path().join("serve.log");
    let browser_log = dir.path().join("chromium.log");
    let mut server = spawn_group(
        &fetch.launcher,
        &ndnts::node(),
        &[page_dir().join("serve.mjs").display().to_string()],
        &server_log,
    );
    let lines = json_lines(server.0.stdout.take().expect("server stdout"));
    let page = match lines.recv_timeout(STARTUP) {
        Ok(v) => v["listening"]
            .as_str()
            .map(String::from)
            .ok_or_else(|| format!("the page server said {v}"))?,
        Err(e) => {
            return Err(format!(
                "the page server did not listen ({e}): {}",
                tail(&server_log)
            ))
        }
    };
    let url = format!("{page}?{}", fetch.query());
    let profile = dir.path().join("profile");
    let mut args = flags(&profile);
    args.push(url.clone());
    let started = Instant::now();
    let chromium = spawn_group(&fetch.launcher, Path::new(browser), &args, &browser_log);
    let report = lines.recv_timeout(fetch.limit);
    drop(chromium);
    drop(server);
    let logs = || {
        format!(
            "{url}\npage server:\n{}\nchromium:\n{}",
            tail(&server_log),
            tail(&browser_log)
        )
    };
    let r = match report {
        Ok(v) => v["result"].clone(),
        Err(_) => {
            return Err(format!(
                "no result from the page within {:?}: {}",
                started.elapsed(),
                logs()
            ))
        }
    };
    if r["ok"] != true {
        return Err(format!(
            "the page failed at {}: {}\n{}",
            r["stage"],
            r["error"].as_str().unwrap_or("?"),
            logs()
        ));
    }
    let num = |k: &str| -> Result<f64, String> {
        r[k].as_f64()
            .ok_or_else(|| format!("no {k} in the page's result {r}"))
    };
    Ok(BrowserResult {
        name: r["name"].as_str().unwrap_or_default().to_string(),
        bytes: num("bytes")? as u64,
        sha256: r["sha256"].as_str().unwrap_or_default().to_string(),
        connect_ms: num("connect_ms")?,
        fetch_ms: num("fetch_ms")?,
        mtu: r["mtu"].as_f64().map(|m| m as u64),
        segments: num("segments")? as u64,
        interests: num("interests")? as u64,
    })
}

/// The page's result for a test that needs it: panics with the page's error.
pub fn expect_fetch(browser: &str, fetch: &Fetch) -> BrowserResult {
    fetch_in_browser(browser, fetch).unwrap_or_else(|e| panic!("{:?} in Chromium: {e}", fetch.mode))
}
