//! AF_XDP on the chain A — B — C of network namespaces and veth pairs (`common::chain`): B's
//! interfaces through Kite's XDP program and AF_XDP sockets while A and C keep AF_PACKET (the
//! same wire, so either is the other's peer), then all three through AF_XDP; a 30 MB object
//! fetched from C to A must arrive whole, without loss and, with B on AF_XDP, at 1 % frame
//! loss (dropped by nftables on the ingress of A's and C's interfaces: XDP sees a frame
//! before that hook, so on an AF_XDP interface the rule drops nothing). While B runs, ping and a TCP
//! connection across its interface still work (the program passes all but NDN frames to the
//! kernel); once B stops, or is killed with SIGKILL, no XDP program is left on its
//! interfaces.
//!
//! Needs root, nftables and a kernel with AF_XDP; without them the tests skip (each says why
//! through `kite_testkit::skip`, and `scripts/test.sh` counts them skipped, not passed).

mod common;

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::chain::{fetch_intact, one_chain, Chain, Link};
use kite_testkit::netns::ip;

/// A 30 MB object.
const OBJECT: usize = 30 << 20;

/// Whether interface `dev` in namespace `ns` has an XDP program attached.
fn has_xdp(ns: &str, dev: &str) -> bool {
    let out = ip(&["-n", ns, "-d", "link", "show", "dev", dev]);
    let s = String::from_utf8_lossy(&out.stdout);
    s.contains("prog/xdp")
}

/// Whether B's log says both its channels went through AF_XDP in its `starts`-th start; when
/// not (no AF_XDP here), the test skips ([`kite_testkit::skip`]).
fn b_on_xdp(chain: &Chain, starts: usize) -> bool {
    // The unix socket accepts before the I/O thread has opened the interfaces.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let mut log = chain.daemons[1].log_text();
    while log.matches("Ethernet channel on").count() + log.matches("AF_XDP not available").count()
        < 2 * starts
    {
        assert!(
            std::time::Instant::now() < deadline,
            "B never opened its interfaces: {log}"
        );
        std::thread::sleep(Duration::from_millis(20));
        log = chain.daemons[1].log_text();
    }
    if log.contains("AF_XDP not available") {
        kite_testkit::skip(format_args!(
            "AF_XDP not available here: {}",
            log.lines()
                .find(|l| l.contains("AF_XDP not available"))
                .unwrap_or_default()
        ));
        return false;
    }
    assert!(
        log.matches("Ethernet channel on af_xdp").count() == 2 * starts,
        "B's channels: {log}"
    );
    assert!(has_xdp(&chain.ns[1], "ba") && has_xdp(&chain.ns[1], "bc"));
    true
}

#[test]
fn xdp_middle_node_without_loss() {
    fetch_intact("x0", Link::XdpMiddle, 0, OBJECT, &[]);
}

#[test]
fn xdp_middle_node_at_1_percent_loss() {
    fetch_intact("x1", Link::XdpMiddle, 1, OBJECT, &[]);
}

#[test]
fn xdp_on_every_node_without_loss() {
    fetch_intact("xa", Link::XdpAll, 0, OBJECT, &[]);
}

/// Ping and TCP across B's AF_XDP interface still work: only NDN frames leave the kernel.
#[test]
fn ping_and_tcp_cross_an_xdp_interface() {
    let _one = one_chain();
    let Some(chain) = Chain::new("xp", Link::XdpMiddle, 0) else {
        return;
    };
    if !b_on_xdp(&chain, 1) {
        return;
    }
    let ping = Command::new("ip")
        .args([
            "netns",
            "exec",
            &chain.ns[0],
            "ping",
            "-c",
            "3",
            "-i",
            "0.2",
            "-W",
            "2",
        ])
        .arg("10.77.1.2")
        .output()
        .expect("run ping");
    assert!(
        ping.status.success(),
        "ping A -> B: {}",
        String::from_utf8_lossy(&ping.stdout)
    );
    // A TCP echo on B, a client on A.
    let mut server = Command::new("ip")
        .args(["netns", "exec", &chain.ns[1], "python3", "-c"])
        .arg(
            "import socket\ns=socket.socket()\ns.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\n\
             s.bind(('10.77.1.2',7007))\ns.listen(1)\nprint('up',flush=True)\nc,_=s.accept()\n\
             d=c.recv(100)\nc.sendall(d[::-1])\nc.close()\n",
        )
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
        .args(["netns", "exec", &chain.ns[0], "python3", "-c"])
        .arg(
            "import socket\nc=socket.create_connection(('10.77.1.2',7007),timeout=5)\n\
             c.sendall(b'kite-xdp')\nprint(c.recv(100).decode())\n",
        )
        .output()
        .expect("run the TCP client");
    let _ = server.wait();
    assert_eq!(
        String::from_utf8_lossy(&client.stdout).trim(),
        "pdx-etik",
        "TCP across B's interface: {}",
        String::from_utf8_lossy(&client.stderr)
    );
    let _ = std::io::stdout().flush();
}

/// No program is left on B's interfaces once B stops, nor once it is killed (the program is
/// held by a BPF link, which the kernel detaches when the process's descriptors close); a B
/// started again attaches afresh.
#[test]
fn no_program_is_left_after_stop_or_sigkill() {
    let _one = one_chain();
    let Some(mut chain) = Chain::new("xk", Link::XdpMiddle, 0) else {
        return;
    };
    if !b_on_xdp(&chain, 1) {
        return;
    }
    let ns = chain.ns[1].clone();
    chain.daemons[1]
        .stop("KILL", Duration::from_secs(5))
        .expect("B exits on SIGKILL");
    std::thread::sleep(Duration::from_millis(200));
    assert!(
        !has_xdp(&ns, "ba") && !has_xdp(&ns, "bc"),
        "left after SIGKILL"
    );
    chain.daemons[1].restart();
    assert!(b_on_xdp(&chain, 2), "B on AF_XDP again after its restart");
    chain.daemons[1]
        .stop("TERM", Duration::from_secs(10))
        .expect("B exits on SIGTERM");
    assert!(
        !has_xdp(&ns, "ba") && !has_xdp(&ns, "bc"),
        "left after a stop"
    );
}
