//! Network namespaces joined by veth pairs, for the tests of routing across several
//! forwarders (`ip` itself and the skip without root are kite-testkit's).

use std::io::Read;
use std::process::{Command, Output, Stdio};

use kite_testkit::netns::{add_or_skip, ip, ip_ok};

/// Sends each frame (hex) out of `dev` in namespace `ns` through an AF_PACKET socket of the
/// system python (the tests hold no unsafe code); the errno of each send, 0 when sent.
pub fn inject(ns: &str, dev: &str, frames: &[String]) -> Vec<i64> {
    let script = "import json, socket, sys\n\
                  s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)\n\
                  s.bind((sys.argv[1], 0))\n\
                  r = []\n\
                  for f in sys.argv[2:]:\n\
                  \x20   try:\n\
                  \x20       s.send(bytes.fromhex(f))\n\
                  \x20       r.append(0)\n\
                  \x20   except OSError as e:\n\
                  \x20       r.append(e.errno)\n\
                  print(json.dumps(r))\n";
    let out = Command::new("ip")
        .args(["netns", "exec", ns, "python3", "-c", script, dev])
        .args(frames)
        .output()
        .expect("run python3");
    assert!(
        out.status.success(),
        "injecting frames: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("a list of errnos")
}

/// Three pings from namespace `ns` to `addr`, 0.2 s apart, each waited for at most 2 s.
pub fn ping(ns: &str, addr: &str) -> Output {
    Command::new("ip")
        .args([
            "netns", "exec", ns, "ping", "-c", "3", "-i", "0.2", "-W", "2",
        ])
        .arg(addr)
        .output()
        .expect("run ping")
}

/// One TCP exchange across namespaces: a server in `server_ns` on `addr`:`port` sends back
/// what it receives, reversed; a client in `client_ns` sends "kite-xdp". What the client
/// printed (its answer, "pdx-etik" when it went through) and its error output.
pub fn tcp_echo(server_ns: &str, client_ns: &str, addr: &str, port: u16) -> (String, String) {
    let mut server = Command::new("ip")
        .args(["netns", "exec", server_ns, "python3", "-c"])
        .arg(format!(
            "import socket\ns=socket.socket(socket.AF_INET6 if ':' in '{addr}' else socket.AF_INET)\n\
             s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\n\
             s.bind(('{addr}',{port}))\ns.listen(1)\nprint('up',flush=True)\nc,_=s.accept()\n\
             d=c.recv(100)\nc.sendall(d[::-1])\nc.close()\n"
        ))
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the TCP server");
    let mut up = [0u8; 3];
    server
        .stdout
        .as_mut()
        .expect("server stdout")
        .read_exact(&mut up)
        .expect("the server says it listens");
    let client = Command::new("ip")
        .args(["netns", "exec", client_ns, "python3", "-c"])
        .arg(format!(
            "import socket\nc=socket.create_connection(('{addr}',{port}),timeout=5)\n\
             c.sendall(b'kite-xdp')\nprint(c.recv(100).decode())\n"
        ))
        .output()
        .expect("run the TCP client");
    let _ = server.wait();
    (
        String::from_utf8_lossy(&client.stdout).trim().to_string(),
        String::from_utf8_lossy(&client.stderr).into_owned(),
    )
}

/// Network namespaces joined by veth pairs; deleted on drop.
pub struct Lab {
    /// The namespaces' names.
    pub nodes: Vec<String>,
    /// (node, device, address) of each end of each link, in link order.
    ends: Vec<[(usize, String, String); 2]>,
}

impl Lab {
    /// `names.len()` namespaces, or `None` (the test skips) without the right.
    pub fn new(tag: &str, names: &[&str]) -> Option<Lab> {
        let tag = format!("k{}{tag}", std::process::id() % 100_000);
        let mut lab = Lab {
            nodes: Vec::new(),
            ends: Vec::new(),
        };
        for n in names {
            let ns = format!("{tag}{n}");
            if !add_or_skip(&ns) {
                return None;
            }
            lab.nodes.push(ns.clone());
            ip_ok(&["-n", &ns, "link", "set", "lo", "up"]);
        }
        Some(lab)
    }

    /// A veth pair between nodes `a` and `b` on 10.201.<k>.0/24 (k: the link's number).
    pub fn link(&mut self, a: usize, b: usize) {
        let k = self.ends.len() + 1;
        let (da, db) = (format!("l{k}a"), format!("l{k}b"));
        ip_ok(&[
            "link",
            "add",
            &da,
            "netns",
            &self.nodes[a],
            "type",
            "veth",
            "peer",
            "name",
            &db,
            "netns",
            &self.nodes[b],
        ]);
        let (aa, ab) = (format!("10.201.{k}.1"), format!("10.201.{k}.2"));
        for (node, dev, addr) in [(a, &da, &aa), (b, &db, &ab)] {
            let ns = &self.nodes[node];
            ip_ok(&["-n", ns, "addr", "add", &format!("{addr}/24"), "dev", dev]);
            ip_ok(&["-n", ns, "link", "set", dev, "up"]);
        }
        self.ends.push([(a, da, aa), (b, db, ab)]);
    }

    /// Each neighbour's UDP URI, as ndn-dv's configuration lists them.
    pub fn neighbours(&self, node: usize) -> Vec<String> {
        let mut out = Vec::new();
        for [x, y] in &self.ends {
            if x.0 == node {
                out.push(format!("udp4://{}:6363", y.2));
            } else if y.0 == node {
                out.push(format!("udp4://{}:6363", x.2));
            }
        }
        out
    }

    /// The launcher that runs a program in node `i`'s namespace.
    pub fn launcher(&self, i: usize) -> Vec<String> {
        ["ip", "netns", "exec", &self.nodes[i]]
            .map(String::from)
            .to_vec()
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        for ns in &self.nodes {
            let _ = ip(&["netns", "del", ns]);
        }
    }
}
