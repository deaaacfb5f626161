//! UDP faces over AF_XDP: two network namespaces joined by a veth pair, X running
//! `kite run` with its interface xv through Kite's XDP program and AF_XDP sockets and UDP
//! listeners on 0.0.0.0:6363 and [::]:6363, P running `kite run` on plain UDP sockets. The wire
//! is ordinary UDP, so each is the other's peer. A 30 MB object fetched intact across, over
//! IPv4 and IPv6, with X's face made on demand by P's datagrams and with X's face made by
//! configuration (faces/create, X then on two I/O threads); X has one face toward P, and the
//! program's UDP count (logged when X stops) shows the
//! datagrams really went through AF_XDP. A datagram with a bad UDP checksum (or, over IPv6,
//! none) is counted on its channel and makes no face, while the same one with a right checksum
//! does. Ping and TCP across X's interface still work.
//!
//! P's end of the veth computes UDP checksums in software (transmit checksum offload off): a
//! veth leaves them to the receiver otherwise, and a frame read through AF_XDP is checked in
//! Kite, which would find each one wrong. A NIC receives them whole from the wire.
//!
//! Needs root and a kernel with AF_XDP; without them the tests print why and pass.

mod common;

use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use common::netns;
use common::tools::{random_file, sha256_of, Put};
use common::{eventually, Daemon};
use kite_testkit::netns::{add_or_skip, ip, ip_ok};
use kite_testkit::{say, skip};
use serde_json::Value;

/// A 30 MB object.
const OBJECT: usize = 30 << 20;

/// X's and P's addresses on the veth.
const X4: &str = "10.78.0.1";
const P4: &str = "10.78.0.2";
const X6: &str = "fd00:78::1";
const P6: &str = "fd00:78::2";

/// The object's name prefix.
const PREFIX: &str = "/xdp-udp";

/// One pair at a time: two daemons and a transfer on two cores are enough.
static ONE_PAIR: Mutex<()> = Mutex::new(());

fn one_pair() -> MutexGuard<'static, ()> {
    ONE_PAIR.lock().unwrap_or_else(|e| e.into_inner())
}

/// Which node serves and which makes the face toward the other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Way {
    /// X serves; P has the face and route toward X, so X's face is made on demand by P's
    /// Interests, read through AF_XDP.
    OnDemand,
    /// P serves; X has the face and route toward P (made as `faces/create` makes it), and the
    /// Data comes back through AF_XDP.
    Created,
}

/// The two namespaces, deleted on drop after the daemons stop.
struct Pair {
    ns: [String; 2],
    x: Option<Daemon>,
    p: Option<Daemon>,
    dir: tempfile::TempDir,
}

impl Pair {
    /// The namespaces and veth, addresses set; `None` after a skip.
    fn new(tag: &str) -> Option<Pair> {
        let pid = std::process::id();
        let ns = ["x", "p"].map(|n| format!("kite-xu{tag}-{pid}-{n}"));
        if !add_or_skip(&ns[0]) {
            return None;
        }
        let pair = Pair {
            ns,
            x: None,
            p: None,
            dir: tempfile::tempdir().expect("temp dir"),
        };
        ip_ok(&["netns", "add", &pair.ns[1]]);
        ip_ok(&[
            "-n",
            &pair.ns[0],
            "link",
            "add",
            "xv",
            "type",
            "veth",
            "peer",
            "name",
            "pv",
            "netns",
            &pair.ns[1],
        ]);
        for (n, dev, v4, v6) in [(&pair.ns[0], "xv", X4, X6), (&pair.ns[1], "pv", P4, P6)] {
            ip_ok(&["-n", n, "addr", "add", &format!("{v4}/24"), "dev", dev]);
            ip_ok(&[
                "-n",
                n,
                "addr",
                "add",
                &format!("{v6}/64"),
                "dev",
                dev,
                "nodad",
            ]);
            ip_ok(&["-n", n, "link", "set", dev, "up"]);
            ip_ok(&["-n", n, "link", "set", "lo", "up"]);
        }
        let up = |n: &str, dev: &str| {
            let out = ip(&["-n", n, "link", "show", "dev", dev]);
            let s = String::from_utf8_lossy(&out.stdout);
            s.contains("state UP") && !s.contains("qdisc noop")
        };
        let deadline = Instant::now() + Duration::from_secs(5);
        while !(up(&pair.ns[0], "xv") && up(&pair.ns[1], "pv")) {
            assert!(Instant::now() < deadline, "the veth pair never came up");
            std::thread::sleep(Duration::from_millis(10));
        }
        // Transmit checksum offload off on P's end (SIOCETHTOOL, ETHTOOL_STXCSUM).
        pair.python(
            1,
            "import socket,fcntl,struct,array\n\
             s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)\n\
             v=array.array('I',[0x17,0])\n\
             fcntl.ioctl(s.fileno(),0x8946,struct.pack('16sP',b'pv',v.buffer_info()[0]))\n",
            &[],
        );
        Some(pair)
    }

    /// Runs python3 `script` with `args` in namespace `i`, which must succeed.
    fn python(&self, i: usize, script: &str, args: &[&str]) -> Output {
        let out = Command::new("ip")
            .args(["netns", "exec", &self.ns[i], "python3", "-c", script])
            .args(args)
            .output()
            .expect("run python3");
        assert!(
            out.status.success(),
            "python3 in {}: {}",
            self.ns[i],
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    /// Starts node `i` (0 X, on AF_XDP; 1 P, on sockets) with a face and route of
    /// [`PREFIX`] toward `face`, if given. X runs two I/O threads when its face is
    /// configured: the face must then be made on the thread that reads the interface.
    fn start(&mut self, i: usize, face: Option<&str>) {
        let threads = match (i, face) {
            (0, Some(_)) => 2,
            _ => 1,
        };
        let mut toml = format!(
            "[forwarder]\nio_threads = {threads}\n\
             [face_system.udp]\nlisten = [\"0.0.0.0:6363\", \"[::]:6363\"]\n\
             [face_system.tcp]\nlisten = []\n",
        );
        if i == 0 {
            toml.push_str("[face_system.ether]\nxdp = [\"xv\"]\n");
        }
        if let Some(uri) = face {
            toml.push_str(&format!(
                "[[face]]\nuri = \"{uri}\"\npersistency = \"permanent\"\n\
                 [[route]]\nprefix = \"{PREFIX}\"\nface = \"{uri}\"\n"
            ));
        }
        let path = self.dir.path().join(format!("node-{i}.toml"));
        std::fs::write(&path, toml).expect("write the configuration");
        let launcher = ["ip", "netns", "exec", &self.ns[i]].map(String::from);
        let d = Daemon::start(&launcher, &["--config".into(), path.display().to_string()]);
        match i {
            0 => self.x = Some(d),
            _ => self.p = Some(d),
        }
    }

    fn x(&self) -> &Daemon {
        self.x.as_ref().expect("X runs")
    }

    /// Whether X's interface went through AF_XDP with its UDP listeners; when not (no
    /// AF_XDP here), says why and the test passes.
    fn x_on_xdp(&self) -> bool {
        let said = eventually(Duration::from_secs(10), || {
            let log = self.x().log_text();
            if let Some(l) = log.lines().find(|l| l.contains("AF_XDP not available")) {
                return Some(Err(l.to_owned()));
            }
            log.contains("received through AF_XDP").then_some(Ok(()))
        });
        match said {
            Some(Ok(())) => true,
            Some(Err(why)) => {
                skip(format_args!("AF_XDP not available here: {why}"));
                false
            }
            None => panic!(
                "X never said how its UDP datagrams go: {}",
                self.x().log_text()
            ),
        }
    }

    /// `kite get` of [`PREFIX`] on `daemon` to the end, into a file of the pair's.
    fn get(&self, daemon: &Daemon) -> PathBuf {
        let out = self.dir.path().join("fetched");
        let mut child = Command::new(env!("CARGO_BIN_EXE_kite"))
            .args(["get", "--socket", daemon.socket(), PREFIX, "-o"])
            .arg(&out)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start kite get");
        let started = Instant::now();
        while child.try_wait().expect("poll kite get").is_none() {
            if started.elapsed() > Duration::from_secs(120) {
                let _ = child.kill();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let mut stderr = String::new();
        let _ = child.stderr.take().unwrap().read_to_string(&mut stderr);
        let status = child.wait().expect("kite get's status");
        assert!(status.success(), "kite get failed: {stderr}");
        say(&format!("{} octets in {:?}", OBJECT, started.elapsed()));
        out
    }

    /// Stops X and reads the UDP count its XDP program's verdicts ended with.
    fn stop_x_for_udp_count(&mut self) -> u64 {
        let mut x = self.x.take().expect("X runs");
        x.stop("TERM", Duration::from_secs(10)).expect("X stops");
        let log = x.log_text();
        let line = log
            .lines()
            .find(|l| l.contains("XDP program's verdicts"))
            .unwrap_or_else(|| panic!("X logged no verdicts: {log}"));
        line.split_whitespace()
            .find_map(|w| w.strip_prefix("udp=")?.parse().ok())
            .unwrap_or_else(|| panic!("no UDP count in {line}"))
    }
}

impl Drop for Pair {
    fn drop(&mut self) {
        self.x = None;
        self.p = None;
        for n in &self.ns {
            let _ = ip(&["netns", "del", n]);
        }
    }
}

/// `kite JSON-COMMAND list --json` on `daemon`.
fn list(daemon: &Daemon, what: &str) -> Vec<Value> {
    let out = Command::new(env!("CARGO_BIN_EXE_kite"))
        .args([what, "list", "--json", "--socket", daemon.socket()])
        .output()
        .expect("run kite");
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    v.as_array().expect("a list").clone()
}

/// The face of `daemon` whose remote is `uri`.
fn face(daemon: &Daemon, uri: &str) -> Option<Value> {
    list(daemon, "face").into_iter().find(|f| f["uri"] == uri)
}

/// The malformed count of `daemon`'s channel `local_uri`.
fn malformed(daemon: &Daemon, local_uri: &str) -> u64 {
    let channels = list(daemon, "channel");
    let c = channels
        .iter()
        .find(|c| c["local_uri"] == local_uri)
        .unwrap_or_else(|| panic!("no channel {local_uri}: {channels:?}"));
    c["drops"]["malformed"].as_u64().expect("a count")
}

/// A 30 MB fetch across the pair over `v6` or IPv4, the face made `way`: intact, with the
/// face on X of the kind asked for, and the frames through X's XDP program.
fn fetch(tag: &str, v6: bool, way: Way) {
    let _one = one_pair();
    let Some(mut pair) = Pair::new(tag) else {
        return;
    };
    let uri = |addr: &str| match v6 {
        false => format!("udp4://{addr}:6363"),
        true => format!("udp6://[{addr}]:6363"),
    };
    let (x_uri, p_uri) = match v6 {
        false => (uri(X4), uri(P4)),
        true => (uri(X6), uri(P6)),
    };
    match way {
        Way::OnDemand => {
            pair.start(0, None);
            pair.start(1, Some(&x_uri));
        }
        Way::Created => {
            pair.start(0, Some(&p_uri));
            pair.start(1, None);
        }
    }
    if !pair.x_on_xdp() {
        return;
    }
    let (server, client) = match way {
        Way::OnDemand => (pair.x(), pair.p.as_ref().unwrap()),
        Way::Created => (pair.p.as_ref().unwrap(), pair.x()),
    };
    let file = pair.dir.path().join("object");
    let sum = random_file(&file, OBJECT, 0x5eed);
    let mut put = Put::start(server.socket(), PREFIX, &file, &[]);
    let fetched = pair.get(client);
    assert_eq!(sha256_of(&fetched), sum, "the copy differs");
    assert!(put.stop(), "kite put ends cleanly");

    // X's one face toward P: made on demand by P's datagrams, or the configured one.
    let toward_p = list(pair.x(), "face")
        .iter()
        .filter(|f| f["uri"] == p_uri)
        .count();
    assert_eq!(toward_p, 1, "{:?}", list(pair.x(), "face"));
    let f = face(pair.x(), &p_uri)
        .unwrap_or_else(|| panic!("X has no face {p_uri}: {:?}", list(pair.x(), "face")));
    let want = match way {
        Way::OnDemand => "on-demand",
        Way::Created => "permanent",
    };
    assert_eq!(f["persistency"], want, "{f}");
    let in_packets = match way {
        Way::OnDemand => f["counters"]["in_interests"].as_u64().unwrap(),
        Way::Created => f["counters"]["in_data"].as_u64().unwrap(),
    };
    // 30 MB of segments is thousands of packets, each in one datagram or more.
    assert!(in_packets > 1000, "{f}");
    let udp = pair.stop_x_for_udp_count();
    assert!(
        udp >= in_packets,
        "X's program took {udp} UDP datagrams for {in_packets} packets in"
    );
}

#[test]
fn ipv4_face_made_on_demand_through_xdp() {
    fetch("4d", false, Way::OnDemand);
}

#[test]
fn ipv4_face_created_on_the_xdp_side() {
    fetch("4c", false, Way::Created);
}

#[test]
fn ipv6_face_made_on_demand_through_xdp() {
    fetch("6d", true, Way::OnDemand);
}

#[test]
fn ipv6_face_created_on_the_xdp_side() {
    fetch("6c", true, Way::Created);
}

/// Sends, from P through a raw socket, a UDP datagram from `src`:`sport` to `dst`:6363
/// carrying an Interest for /x, its checksum right (`good`), wrong, or (over IPv6, `zero`)
/// left out.
const SEND_RAW: &str = "import socket,struct,sys\n\
src,dst,sport,how=sys.argv[1],sys.argv[2],int(sys.argv[3]),sys.argv[4]\n\
v6=':' in dst\n\
fam=socket.AF_INET6 if v6 else socket.AF_INET\n\
payload=bytes([0x05,0x05,0x07,0x03,0x08,0x01,0x78])\n\
n=8+len(payload)\n\
a=socket.inet_pton(fam,src)+socket.inet_pton(fam,dst)\n\
pseudo=a+(struct.pack('!IxxxB',n,17) if v6 else struct.pack('!xBH',17,n))\n\
h=struct.pack('!HHHH',sport,6363,n,0)\n\
b=pseudo+h+payload\n\
b+=b'\\0'*(len(b)%2)\n\
s=sum(struct.unpack('!%dH'%(len(b)//2),b))\n\
while s>>16: s=(s&0xffff)+(s>>16)\n\
c=(~s&0xffff) or 0xffff\n\
c={'good':c,'bad':c^0x5555,'zero':0}[how]\n\
r=socket.socket(fam,socket.SOCK_RAW,socket.IPPROTO_UDP)\n\
r.bind((src,0))\n\
r.sendto(struct.pack('!HHHH',sport,6363,n,c)+payload,(dst,0))\n";

/// A datagram whose UDP checksum is wrong, or missing over IPv6, is counted as malformed on
/// its channel and makes no face; the same datagram with a right checksum makes one. Over
/// IPv4 a missing checksum is allowed.
#[test]
fn a_bad_udp_checksum_is_counted_and_dropped() {
    let _one = one_pair();
    let Some(mut pair) = Pair::new("ck") else {
        return;
    };
    pair.start(0, None);
    if !pair.x_on_xdp() {
        return;
    }
    let x = pair.x();
    for (src, dst, channel, bad, uri) in [
        (
            P4,
            X4,
            "udp4://0.0.0.0:6363",
            "bad",
            "udp4://10.78.0.2:40001",
        ),
        (
            P6,
            X6,
            "udp6://[::]:6363",
            "bad",
            "udp6://[fd00:78::2]:40001",
        ),
        (
            P6,
            X6,
            "udp6://[::]:6363",
            "zero",
            "udp6://[fd00:78::2]:40002",
        ),
    ] {
        let sport = &uri[uri.len() - 5..];
        let before = malformed(x, channel);
        pair.python(1, SEND_RAW, &[src, dst, sport, bad]);
        // The same datagram, right, after it: once its face shows, the wrong one was read.
        pair.python(1, SEND_RAW, &[src, dst, sport, "good"]);
        let made = eventually(Duration::from_secs(10), || face(x, uri));
        let made = made.unwrap_or_else(|| panic!("no face {uri}: {:?}", list(x, "face")));
        assert_eq!(made["persistency"], "on-demand");
        assert_eq!(
            made["counters"]["in_interests"], 1,
            "only the right one: {made}"
        );
        assert_eq!(malformed(x, channel), before + 1, "{bad} on {channel}");
    }
    let warned = eventually(Duration::from_secs(5), || {
        (x.log_text()).contains("with a bad checksum").then_some(())
    });
    assert!(warned.is_some(), "no warning: {}", x.log_text());
    // IPv4 without a checksum: taken.
    let before = malformed(x, "udp4://0.0.0.0:6363");
    pair.python(1, SEND_RAW, &[P4, X4, "40003", "zero"]);
    let made = eventually(Duration::from_secs(10), || {
        face(x, "udp4://10.78.0.2:40003")
    });
    assert!(made.is_some(), "no face for a datagram without a checksum");
    assert_eq!(malformed(x, "udp4://0.0.0.0:6363"), before);
    assert!(pair.stop_x_for_udp_count() >= 7);
}

/// Ping (IPv4 and IPv6) and a TCP connection across X's interface still work: the program
/// takes only NDN frames and datagrams to Kite's UDP ports.
#[test]
fn ping_and_tcp_cross_the_xdp_interface() {
    let _one = one_pair();
    let Some(mut pair) = Pair::new("pt") else {
        return;
    };
    pair.start(0, None);
    if !pair.x_on_xdp() {
        return;
    }
    for addr in [X4, X6] {
        let ping = netns::ping(&pair.ns[1], addr);
        assert!(
            ping.status.success(),
            "ping P -> X {addr}: {}",
            String::from_utf8_lossy(&ping.stdout)
        );
    }
    let (answer, errors) = netns::tcp_echo(&pair.ns[0], &pair.ns[1], X4, 7007);
    assert_eq!(answer, "pdx-etik", "TCP across X's interface: {errors}");
    let mut up = [0u8; 3];
    // A UDP datagram to another port goes to the kernel's socket.
    let mut server = Command::new("ip")
        .args(["netns", "exec", &pair.ns[0], "python3", "-c"])
        .arg(format!(
            "import socket\ns=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)\n\
             s.bind(('{X4}',7008))\nprint('up',flush=True)\nd,a=s.recvfrom(100)\n\
             s.sendto(d[::-1],a)\n"
        ))
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the UDP server");
    server
        .stdout
        .as_mut()
        .expect("server stdout")
        .read_exact(&mut up)
        .expect("the server says it listens");
    let client = pair.python(
        1,
        &format!(
            "import socket\ns=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)\ns.settimeout(5)\n\
             s.sendto(b'kite-udp',('{X4}',7008))\nprint(s.recv(100).decode())\n"
        ),
        &[],
    );
    let _ = server.wait();
    assert_eq!(String::from_utf8_lossy(&client.stdout).trim(), "pdu-etik");
    assert_eq!(
        pair.stop_x_for_udp_count(),
        0,
        "no datagram to Kite was sent"
    );
}
