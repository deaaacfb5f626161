//! Three `kite run` daemons in a line, A — B — C, each in a network namespace of its own and
//! joined by veth pairs (1500-octet MTU), with frame loss made by nftables on the ingress of
//! every interface that receives (`numgen random mod 100 < N drop`), and a fetch across it.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::tools::{random_file, sha256_of, summary_value, Put};
use super::Daemon;
use kite_testkit::netns::{add_or_skip, ip, ip_ok};
use kite_testkit::{say, skip};

/// The object's name prefix.
pub const PREFIX: &str = "/lossy";

/// One chain at a time: nine daemons and their transfers on two cores would starve each
/// other into losses of their own, and a transfer without loss must lose nothing in a socket.
static ONE_CHAIN: Mutex<()> = Mutex::new(());

pub fn one_chain() -> MutexGuard<'static, ()> {
    ONE_CHAIN.lock().unwrap_or_else(|e| e.into_inner())
}

/// How the daemons reach each other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Link {
    /// UDP unicast faces between the namespaces' addresses.
    Udp,
    /// Ethernet unicast faces between the interfaces' MACs.
    Ether,
    /// Ethernet unicast faces both ways on every link, with NDNLPv2 LpReliability on.
    EtherLpr,
    /// Ethernet unicast faces, B's interfaces through AF_XDP (A's and C's AF_PACKET).
    XdpMiddle,
    /// Ethernet unicast faces, every interface through AF_XDP.
    XdpAll,
}

impl Link {
    /// Whether node `i` runs its interfaces through AF_XDP.
    pub fn xdp_on(self, i: usize) -> bool {
        self == Link::XdpAll || (self == Link::XdpMiddle && i == 1)
    }

    /// Whether its faces are Ethernet unicast ones made by configuration, one way.
    fn ether_one_way(self) -> bool {
        matches!(self, Link::Ether | Link::XdpMiddle | Link::XdpAll)
    }
}

/// One veth end: its namespace index (0 A, 1 B, 2 C), name, MAC and IPv4 address.
struct End {
    ns: usize,
    dev: &'static str,
    mac: &'static str,
    addr: &'static str,
}

/// A — B over ab/ba, B — C over bc/cb.
const ENDS: [End; 4] = [
    End {
        ns: 0,
        dev: "ab",
        mac: "02:00:00:00:01:0a",
        addr: "10.77.1.1",
    },
    End {
        ns: 1,
        dev: "ba",
        mac: "02:00:00:00:01:0b",
        addr: "10.77.1.2",
    },
    End {
        ns: 1,
        dev: "bc",
        mac: "02:00:00:00:02:0b",
        addr: "10.77.2.1",
    },
    End {
        ns: 2,
        dev: "cb",
        mac: "02:00:00:00:02:0c",
        addr: "10.77.2.2",
    },
];

/// Three namespaces in a line and a daemon in each; the namespaces (and the veths with them)
/// are deleted on drop, after the daemons stop.
pub struct Chain {
    pub daemons: Vec<Daemon>,
    pub ns: [String; 3],
    pub dir: tempfile::TempDir,
}

impl Chain {
    /// The chain with `loss` percent of frames dropped on every receiving interface; `None`
    /// (after saying why) when namespaces or nftables cannot be had.
    pub fn new(tag: &str, link: Link, loss: u32) -> Option<Chain> {
        Self::new_with(tag, link, loss, ["", "", ""], |_| {})
    }

    /// [`Chain::new`] with `extra` appended to each node's configuration, and `before` run
    /// once the namespaces and links are up, before any daemon starts.
    pub fn new_with(
        tag: &str,
        link: Link,
        loss: u32,
        extra: [&str; 3],
        before: impl FnOnce(&Chain),
    ) -> Option<Chain> {
        Self::with_queues(tag, link, loss, extra, 1, before)
    }

    /// [`Chain::new_with`] over veths of `queues` receive and transmit queues each.
    pub fn with_queues(
        tag: &str,
        link: Link,
        loss: u32,
        extra: [&str; 3],
        queues: u32,
        before: impl FnOnce(&Chain),
    ) -> Option<Chain> {
        if Command::new("nft").arg("--version").output().is_err() {
            skip("nft (Debian's nftables) is not installed");
            return None;
        }
        let pid = std::process::id();
        let ns = ["a", "b", "c"].map(|n| format!("kite-{tag}-{pid}-{n}"));
        if !add_or_skip(&ns[0]) {
            return None;
        }
        let mut chain = Chain {
            daemons: Vec::new(),
            ns,
            dir: tempfile::tempdir().expect("temp dir"),
        };
        ip_ok(&["netns", "add", &chain.ns[1]]);
        ip_ok(&["netns", "add", &chain.ns[2]]);
        let q = queues.to_string();
        for pair in ENDS.chunks(2) {
            let (x, y) = (&pair[0], &pair[1]);
            #[rustfmt::skip]
            ip_ok(&[
                "-n", &chain.ns[x.ns], "link", "add", x.dev, "address", x.mac,
                "numrxqueues", &q, "numtxqueues", &q, "type", "veth",
                "peer", "name", y.dev, "address", y.mac, "numrxqueues", &q, "numtxqueues", &q,
                "netns", &chain.ns[y.ns],
            ]);
        }
        for e in &ENDS {
            let n = &chain.ns[e.ns];
            ip_ok(&[
                "-n",
                n,
                "addr",
                "add",
                &format!("{}/24", e.addr),
                "dev",
                e.dev,
            ]);
            ip_ok(&["-n", n, "link", "set", e.dev, "up"]);
            ip_ok(&["-n", n, "link", "set", "lo", "up"]);
            if loss > 0 {
                chain.drop_frames(e, loss);
            }
        }
        let up = |e: &End| {
            let out = ip(&["-n", &chain.ns[e.ns], "link", "show", "dev", e.dev]);
            let s = String::from_utf8_lossy(&out.stdout);
            s.contains("state UP") && !s.contains("qdisc noop")
        };
        let deadline = Instant::now() + Duration::from_secs(5);
        while !ENDS.iter().all(up) {
            assert!(Instant::now() < deadline, "veth pairs never came up");
            std::thread::sleep(Duration::from_millis(10));
        }
        before(&chain);
        for (i, extra) in extra.iter().enumerate() {
            let config = chain.write_config(i, link, extra);
            let d = chain.daemon(i, &config);
            chain.daemons.push(d);
        }
        Some(chain)
    }

    /// Drops `loss` percent of the frames (all but ARP) that reach `e`, before the IP layer
    /// sees them: a lost frame may be one fragment of a datagram.
    fn drop_frames(&self, e: &End, loss: u32) {
        let rules = format!(
            "table netdev lossy {{\n chain in_{dev} {{\n  type filter hook ingress device \"{dev}\" \
             priority 0;\n  ether type != arp numgen random mod 100 < {loss} drop\n }}\n}}\n",
            dev = e.dev
        );
        let file = self.dir.path().join(format!("loss-{}.nft", e.dev));
        std::fs::write(&file, rules).expect("write the nft rules");
        let out = Command::new("ip")
            .args(["netns", "exec", &self.ns[e.ns], "nft", "-f"])
            .arg(&file)
            .output()
            .expect("run nft");
        assert!(
            out.status.success(),
            "nft: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Writes node `i`'s configuration: its listeners, and for A and B a permanent face to
    /// the next node with the route of [`PREFIX`] on it; `extra` merged in ([`merged`]).
    fn write_config(&self, i: usize, link: Link, extra: &str) -> PathBuf {
        let mut toml = String::from("[face_system]\n");
        let devs: Vec<String> = ENDS
            .iter()
            .filter(|e| e.ns == i)
            .map(|e| format!("\"{}\"", e.dev))
            .collect();
        match link {
            Link::Udp => toml.push_str(
                "[face_system.udp]\nlisten = [\"0.0.0.0:6363\"]\n\
                 [face_system.tcp]\nlisten = []\n",
            ),
            _ => {
                toml.push_str("[face_system.udp]\nlisten = []\n[face_system.tcp]\nlisten = []\n");
                let key = if link.xdp_on(i) { "xdp" } else { "interfaces" };
                toml.push_str(&format!(
                    "[face_system.ether]\n{key} = [{}]\n",
                    devs.join(", ")
                ));
                if link.xdp_on(i) {
                    // The default 8 MiB of UMEM (2,048 receive frames) dropped about 70 of
                    // the 30 MB fetch's frames at B (fill ring empty or RX ring full, counted
                    // since the sockets' XDP_STATISTICS feed the channel's socket drops);
                    // 32 MiB dropped none.
                    toml.push_str("xdp_umem = 33554432\n");
                }
            }
        }
        if link == Link::EtherLpr {
            // A face to each neighbour, so Data goes back over a face with LpReliability too
            // (not over one the channel made on demand); the route toward C.
            for (k, end) in ENDS.iter().enumerate().filter(|(_, e)| e.ns == i) {
                let peer = &ENDS[k ^ 1];
                toml.push_str(&format!(
                    "[[face]]\nuri = \"ether://[{}]\"\npersistency = \"permanent\"\n\
                     local_uri = \"dev://{}\"\nlp_reliability = true\n",
                    peer.mac, end.dev
                ));
                if peer.ns > i {
                    toml.push_str(&format!(
                        "[[route]]\nprefix = \"{PREFIX}\"\nface = \"ether://[{}]\"\n",
                        peer.mac
                    ));
                }
            }
        } else if i < 2 {
            // The end toward the next node, and the next node's end.
            let (out_end, next) = match i {
                0 => (&ENDS[0], &ENDS[1]),
                _ => (&ENDS[2], &ENDS[3]),
            };
            let uri = match link {
                Link::Udp => format!("udp4://{}:6363", next.addr),
                _ => format!("ether://[{}]", next.mac),
            };
            toml.push_str(&format!(
                "[[face]]\nuri = \"{uri}\"\npersistency = \"permanent\"\n"
            ));
            if link.ether_one_way() {
                toml.push_str(&format!("local_uri = \"dev://{}\"\n", out_end.dev));
            }
            toml.push_str(&format!(
                "[[route]]\nprefix = \"{PREFIX}\"\nface = \"{uri}\"\n"
            ));
        }
        let path = self.dir.path().join(format!("node-{i}.toml"));
        std::fs::write(&path, merged(&toml, extra)).expect("write the configuration");
        path
    }

    fn daemon(&self, i: usize, config: &Path) -> Daemon {
        let launcher = ["ip", "netns", "exec", &self.ns[i]].map(String::from);
        Daemon::start(
            &launcher,
            &["--config".to_string(), config.display().to_string()],
        )
    }

    /// Serves `len` random octets under [`PREFIX`] from C, with `kite put` options `extra`;
    /// the file and its SHA-256.
    pub fn put(&self, len: usize, extra: &[&str]) -> (Put, String) {
        let file = self.dir.path().join("object");
        let sum = random_file(&file, len, 0x5eed);
        let put = Put::start(self.daemons[2].socket(), PREFIX, &file, extra);
        (put, sum)
    }

    /// The MTU of node `i`'s face whose remote URI is `uri`.
    pub fn face_mtu(&self, i: usize, uri: &str) -> u64 {
        let out = Command::new(env!("CARGO_BIN_EXE_kite"))
            .args([
                "face",
                "list",
                "--json",
                "--socket",
                self.daemons[i].socket(),
            ])
            .output()
            .expect("run kite face list");
        let faces: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        faces
            .as_array()
            .expect("a list")
            .iter()
            .find(|f| f["uri"] == uri)
            .and_then(|f| f["mtu"].as_u64())
            .unwrap_or_else(|| panic!("no face {uri} with an MTU in {faces}"))
    }

    /// Frames the kernel dropped for full socket buffers, on every node's channels.
    pub fn socket_drops(&self) -> u64 {
        let mut total = 0;
        for d in &self.daemons {
            let out = Command::new(env!("CARGO_BIN_EXE_kite"))
                .args(["channel", "list", "--json", "--socket", d.socket()])
                .output()
                .expect("run kite channel list");
            let channels: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
            for c in channels.as_array().expect("a list") {
                total += c["drops"]["socket"]
                    .as_u64()
                    .expect("the socket drop counter");
            }
        }
        total
    }

    /// Frames node `i`'s channels read after they waited in its sockets (`kite channel list`).
    pub fn delayed(&self, i: usize) -> u64 {
        let out = Command::new(env!("CARGO_BIN_EXE_kite"))
            .args([
                "channel",
                "list",
                "--json",
                "--socket",
                self.daemons[i].socket(),
            ])
            .output()
            .expect("run kite channel list");
        let channels: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        (channels.as_array().expect("a list").iter())
            .map(|c| c["delayed"].as_u64().expect("the delayed frame counter"))
            .sum()
    }

    /// Frames resent by LpReliability, on every node's faces.
    pub fn lp_retransmissions(&self) -> u64 {
        let mut total = 0;
        for d in &self.daemons {
            let out = Command::new(env!("CARGO_BIN_EXE_kite"))
                .args(["face", "list", "--json", "--socket", d.socket()])
                .output()
                .expect("run kite face list");
            let faces: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
            for f in faces.as_array().expect("a list") {
                total += f["lp_reliability_counters"]["retransmitted"]
                    .as_u64()
                    .unwrap_or(0);
            }
        }
        total
    }

    /// Every node's faces with their counters (JSON), for a failure's message.
    pub fn faces(&self) -> String {
        let mut all = String::new();
        for (i, d) in self.daemons.iter().enumerate() {
            let out = Command::new(env!("CARGO_BIN_EXE_kite"))
                .args(["face", "list", "--json", "--socket", d.socket()])
                .output()
                .expect("run kite face list");
            all.push_str(&format!(
                "\nnode {i}: {}",
                String::from_utf8_lossy(&out.stdout)
            ));
        }
        all
    }

    /// Where A's fetch writes.
    pub fn output(&self) -> PathBuf {
        self.dir.path().join("fetched")
    }

    /// `kite get` on A, started, writing to [`Chain::output`].
    pub fn spawn_get(&self, extra: &[&str]) -> Child {
        Command::new(env!("CARGO_BIN_EXE_kite"))
            .args(["get", "--socket", self.daemons[0].socket(), PREFIX, "-o"])
            .arg(self.output())
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start kite get")
    }

    /// `kite get` on A to the end, killed past `limit`; its output and how long it ran.
    pub fn get(&self, extra: &[&str], limit: Duration) -> (Output, Duration) {
        let started = Instant::now();
        let mut child = self.spawn_get(extra);
        while child.try_wait().expect("poll kite get").is_none() {
            if started.elapsed() > limit {
                let _ = child.kill();
                let out = child.wait_with_output().expect("kite get output");
                panic!(
                    "kite get still running after {limit:?}: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let out = child.wait_with_output().expect("kite get output");
        (out, started.elapsed())
    }
}

impl Drop for Chain {
    fn drop(&mut self) {
        self.daemons.clear();
        for n in &self.ns {
            let _ = ip(&["netns", "del", n]);
        }
    }
}

/// Fetches `len` octets served with `kite put` options `put_args` over the chain at `loss`
/// percent and checks the copy.
pub fn fetch_intact(tag: &str, link: Link, loss: u32, len: usize, put_args: &[&str]) {
    let _one = one_chain();
    let Some(chain) = Chain::new(tag, link, loss) else {
        return;
    };
    if link == Link::Udp {
        // A 1500-octet veth less 20 octets of IPv4 and 8 of UDP: no Data leaves as IP
        // fragments, NDNLPv2 fragments it per hop instead.
        assert_eq!(chain.face_mtu(0, "udp4://10.77.1.2:6363"), 1472);
    }
    let (_put, sum) = chain.put(len, put_args);
    let (out, took) = chain.get(&[], Duration::from_secs(60));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "kite get failed: {stderr}");
    assert_eq!(sha256_of(&chain.output()), sum, "the copy differs");
    say(&format!(
        "{link:?} chain at {loss}% loss: {len} octets in {took:?}, {} retransmissions",
        summary_value(&stderr, "Retransmissions")
    ));
    if link == Link::EtherLpr && loss > 0 {
        // The link layer, not only `kite get`, repaired what was lost.
        assert!(
            chain.lp_retransmissions() > 0,
            "no frame resent by LpReliability: {}",
            chain.faces()
        );
    }
    if link.ether_one_way() && loss == 0 {
        // Nothing lost on the wire, and the sockets' receive buffers took every frame.
        let drops = chain.socket_drops();
        assert_eq!(
            drops,
            0,
            "frames dropped by the kernel for full buffers: {}",
            chain.faces()
        );
    }
}

/// The configuration `base` with `extra`'s keys added (a table of both merged, key by key; an
/// array of tables extended; any other value of `extra` taking the place of `base`'s), so a
/// test can set a key of a table the chain writes itself.
fn merged(base: &str, extra: &str) -> String {
    fn merge(into: &mut toml::Table, from: toml::Table) {
        for (k, v) in from {
            match (into.get_mut(&k), v) {
                (Some(toml::Value::Table(a)), toml::Value::Table(b)) => merge(a, b),
                (Some(toml::Value::Array(a)), toml::Value::Array(b)) => a.extend(b),
                (_, v) => {
                    into.insert(k, v);
                }
            }
        }
    }
    let mut config: toml::Table = base.parse().expect("the chain's configuration");
    merge(&mut config, extra.parse().expect("a test's configuration"));
    toml::to_string(&config).expect("a configuration")
}
