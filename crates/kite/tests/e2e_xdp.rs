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

use std::io::Write;
use std::process::Command;
use std::time::Duration;

use common::chain::{fetch_intact, one_chain, Chain, Link};
use common::tools::sha256_of;
use common::{ctl, netns};
use kite_testkit::netns::ip;
use serde_json::Value;

/// A 30 MB object.
const OBJECT: usize = 30 << 20;

/// Whether interface `dev` in namespace `ns` has an XDP program attached.
fn has_xdp(ns: &str, dev: &str) -> bool {
    let out = ip(&["-n", ns, "-d", "link", "show", "dev", dev]);
    let s = String::from_utf8_lossy(&out.stdout);
    s.contains("prog/xdp")
}

/// Whether B's log says both its channels went through AF_XDP in its `starts`-th start (and,
/// waited for, that its route toward C is in place); when not (no AF_XDP here), the test
/// skips ([`kite_testkit::skip`]).
fn b_on_xdp(chain: &Chain, starts: usize) -> bool {
    // The unix socket accepts before the I/O thread has opened the interfaces.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let mut log = chain.daemons[1].log_text();
    // B opens its channels before it adds its configured route toward C: an Interest from A
    // in between would be Nacked (NoRoute), so the route is waited for too.
    while log.matches("Ethernet channel on").count() + log.matches("AF_XDP not available").count()
        < 2 * starts
        || log.matches("configured route added").count() < starts
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
    let ping = netns::ping(&chain.ns[0], "10.77.1.2");
    assert!(
        ping.status.success(),
        "ping A -> B: {}",
        String::from_utf8_lossy(&ping.stdout)
    );
    // A TCP echo on B, a client on A.
    let (answer, errors) = netns::tcp_echo(&chain.ns[1], &chain.ns[0], "10.77.1.2", 7007);
    assert_eq!(answer, "pdx-etik", "TCP across B's interface: {errors}");
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

/// B's metrics listener, inside its namespace.
const B_METRICS: &str = "[metrics]\nlisten = \"127.0.0.1:9464\"\n";

/// The channel `local` in `kite channel list --json` of the daemon at `socket`.
fn channel(socket: &str, local: &str) -> Value {
    let all = ctl::json(socket, &["channel", "list"]);
    all.as_array()
        .expect("a list")
        .iter()
        .find(|c| c["local_uri"] == local)
        .cloned()
        .unwrap_or_else(|| panic!("no channel {local} in {all}"))
}

/// The line of `kite channel list` (the table) that starts with `local`.
fn channel_line(socket: &str, local: &str) -> String {
    let text = ctl::ok(socket, &["channel", "list"]);
    text.lines()
        .find(|l| l.starts_with(local))
        .unwrap_or_else(|| panic!("no {local} in {text}"))
        .trim_end()
        .to_owned()
}

/// An XDP verdict count of a channel's JSON.
fn xdp(c: &Value, verdict: &str) -> u64 {
    c["xdp"][verdict]
        .as_u64()
        .unwrap_or_else(|| panic!("no XDP count {verdict} in {c}"))
}

/// A drop counter of a channel's JSON.
fn drops(c: &Value, reason: &str) -> u64 {
    c["drops"][reason].as_u64().expect("a drop counter")
}

/// `/metrics` of B, fetched inside its namespace.
fn b_metrics(chain: &Chain) -> String {
    let out = Command::new("ip")
        .args(["netns", "exec", &chain.ns[1], "python3", "-c"])
        .arg(
            "import sys, urllib.request\n\
             print(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())\n",
        )
        .arg("http://127.0.0.1:9464/metrics")
        .output()
        .expect("run python3");
    assert!(
        out.status.success(),
        "scraping B: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// The value of the sample `series` (name and labels, as printed) in `metrics`.
fn sample(metrics: &str, series: &str) -> u64 {
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
        .unwrap_or_else(|| panic!("no {series} in {metrics}"))
        .parse()
        .expect("an integer sample")
}

/// Fetches `len` octets in chunks of `chunk` from C to A; panics (at the caller) unless the
/// copy is whole.
#[track_caller]
fn fetch(chain: &Chain, len: usize, chunk: usize) {
    let (mut put, sum) = chain.put(len, &["--chunk-size", &chunk.to_string()]);
    let (out, _) = chain.get(&[], Duration::from_secs(30));
    assert!(
        out.status.success(),
        "kite get: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(sha256_of(&chain.output()), sum, "the copy differs");
    put.stop();
}

/// The MACs of A's and B's ends of the A — B link.
const AB_MAC: &str = "02:00:00:00:01:0a";
const BA_MAC: &str = "02:00:00:00:01:0b";

/// An operator sees each channel's I/O path and the XDP program's verdicts: `kite channel
/// list` (table and JSON) names af_xdp for B's interfaces and af_packet for A's, the counts
/// rise with a fetch, `kite face show` gives a face its channel's path, and B's metrics carry
/// `kite_channel_info` and `kite_channel_xdp_frames_total`.
#[test]
fn channel_list_face_show_and_metrics_name_the_io_path() {
    let _one = one_chain();
    let Some(chain) = Chain::new_with("xs", Link::XdpMiddle, 0, ["", B_METRICS, ""], |_| {}) else {
        return;
    };
    if !b_on_xdp(&chain, 1) {
        return;
    }
    let (a, b) = (chain.daemons[0].socket(), chain.daemons[1].socket());
    let before = [channel(b, "dev://ba"), channel(b, "dev://bc")];
    for c in &before {
        let path = c["io_path"].as_str().expect("an I/O path");
        assert!(path.starts_with("af_xdp ("), "{c}");
        assert!(
            path.contains(" mode, ") && path.ends_with(" queues)"),
            "{c}"
        );
    }
    let ab = channel(a, "dev://ab");
    assert_eq!(ab["io_path"], "af_packet", "{ab}");
    assert_eq!(ab["xdp"], Value::Null, "{ab}");
    assert!(channel_line(b, "dev://ba").ends_with(before[0]["io_path"].as_str().unwrap()));
    assert!(channel_line(a, "dev://ab").ends_with("  af_packet"));

    // 200 chunks of 1000 octets: at least 200 Interests reach B from A, and 200 Data from C.
    fetch(&chain, 200_000, 1000);
    let after = [channel(b, "dev://ba"), channel(b, "dev://bc")];
    for (x, y) in before.iter().zip(&after) {
        assert!(xdp(y, "ndn") >= xdp(x, "ndn") + 200, "{x} then {y}");
        assert_eq!(xdp(y, "runt"), 0, "{y}");
        assert_eq!(drops(y, "socket"), 0, "{y}");
    }
    let line = channel_line(b, "dev://ba");
    let cell: Vec<u64> = line
        .split_whitespace()
        .find(|c| c.matches('/').count() == 3 && !c.contains(':'))
        .unwrap_or_else(|| panic!("no XDP counts in {line}"))
        .split('/')
        .map(|n| n.parse().expect("a count"))
        .collect();
    assert!(cell[0] >= xdp(&after[0], "ndn") && cell[3] == 0, "{line}");

    // B's face toward A (made on demand) is on B's AF_XDP channel; A's toward B on AF_PACKET.
    let to_a = format!("ether://[{AB_MAC}]");
    let text = ctl::ok(b, &["face", "show", &to_a]);
    let io = text
        .lines()
        .find_map(|l| l.strip_prefix("io "))
        .unwrap_or_else(|| panic!("no io line in {text}"));
    assert_eq!(io.trim(), after[0]["io_path"].as_str().unwrap(), "{text}");
    let j = ctl::json(b, &["face", "show", &to_a]);
    assert_eq!(j["io_path"], after[0]["io_path"], "{j}");
    let j = ctl::json(a, &["face", "show", &format!("ether://[{BA_MAC}]")]);
    assert_eq!(j["io_path"], "af_packet", "{j}");
    let listed = ctl::json(a, &["face", "list"]);
    let internal = &listed.as_array().unwrap()[0];
    assert_eq!(internal["io_path"], Value::Null, "{internal}");

    let m = b_metrics(&chain);
    for dev in ["ba", "bc"] {
        let info =
            format!("kite_channel_info{{channel=\"dev://{dev}\",io_path=\"af_xdp\",detail=\"");
        assert!(m.contains(&info), "no {info} in {m}");
        let ndn = sample(
            &m,
            &format!("kite_channel_xdp_frames_total{{channel=\"dev://{dev}\",verdict=\"ndn\"}}"),
        );
        assert!(ndn >= 200, "{dev}: {ndn}");
        sample(
            &m,
            &format!("kite_channel_xdp_frames_total{{channel=\"dev://{dev}\",verdict=\"runt\"}}"),
        );
    }
}

/// An object built by `make -C xdp`.
fn object(name: &str) -> String {
    format!("{}/../../xdp/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// Attaches XDP object `name` to `dev` in namespace `ns` in generic mode through netlink, as
/// `ip` does (no link: it stays until detached).
fn attach_by_netlink(ns: &str, dev: &str, name: &str) {
    let out = ip(&[
        "-n",
        ns,
        "link",
        "set",
        "dev",
        dev,
        "xdpgeneric",
        "obj",
        &object(name),
        "sec",
        "xdp",
    ]);
    assert!(
        out.status.success(),
        "ip link set {dev} xdpgeneric obj {name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The name of the XDP program on `dev` in `ns`, as `ip -d link show` prints it.
fn xdp_name(ns: &str, dev: &str) -> Option<String> {
    let out = ip(&["-n", ns, "-d", "link", "show", "dev", dev]);
    let s = String::from_utf8_lossy(&out.stdout);
    let (_, rest) = s.split_once("prog/xdp ")?;
    let (_, name) = rest.split_once(" name ")?;
    name.split_whitespace().next().map(str::to_owned)
}

/// A Kite program left on an interface by netlink (an older Kite on a kernel without XDP
/// links, or `ip link set … xdpgeneric obj kite_xdp.o`) does not keep Kite off it: B replaces
/// it at start and says so, 30 Data cross, and once B stops no program is left.
#[test]
fn a_stale_kite_program_is_replaced_at_start() {
    let _one = one_chain();
    let Some(mut chain) = Chain::new_with("xr", Link::XdpMiddle, 0, ["", "", ""], |c| {
        attach_by_netlink(&c.ns[1], "ba", "kite_xdp.o");
        assert_eq!(xdp_name(&c.ns[1], "ba").as_deref(), Some("kite_xdp"));
    }) else {
        return;
    };
    if !b_on_xdp(&chain, 1) {
        return;
    }
    let log = chain.daemons[1].log_text();
    let replaced: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("replaced a stale Kite XDP program"))
        .collect();
    assert_eq!(replaced.len(), 1, "{log}");
    assert!(
        replaced[0].contains("ba") && replaced[0].contains("generic mode"),
        "{log}"
    );
    fetch(&chain, 30_000, 1000);
    let to_a = ctl::json(
        chain.daemons[1].socket(),
        &["face", "show", &format!("ether://[{AB_MAC}]")],
    );
    assert!(
        to_a["counters"]["in_interests"].as_u64().unwrap() >= 30,
        "{to_a}"
    );
    assert!(
        to_a["counters"]["out_data"].as_u64().unwrap() >= 30,
        "{to_a}"
    );
    let ns = chain.ns[1].clone();
    chain.daemons[1]
        .stop("TERM", Duration::from_secs(10))
        .expect("B exits on SIGTERM");
    assert!(
        !has_xdp(&ns, "ba") && !has_xdp(&ns, "bc"),
        "left after a stop"
    );
}

/// Another program on an interface is not Kite's to replace: B keeps AF_PACKET there, says
/// why in its log and in `kite channel list`, still forwards, and leaves the program alone.
#[test]
fn a_foreign_program_makes_kite_fall_back_to_af_packet() {
    let _one = one_chain();
    let Some(mut chain) = Chain::new_with("xf", Link::XdpMiddle, 0, ["", "", ""], |c| {
        attach_by_netlink(&c.ns[1], "ba", "xdp_pass.o");
    }) else {
        return;
    };
    let b = chain.daemons[1].socket().to_owned();
    let log = common::eventually(Duration::from_secs(10), || {
        let log = chain.daemons[1].log_text();
        let opened = log.contains("AF_XDP not available") && log.contains("Ethernet channel on");
        (opened && log.contains("configured route added")).then_some(log)
    });
    let Some(log) = log else {
        let log = chain.daemons[1].log_text();
        if log.matches("AF_XDP not available").count() == 2 {
            return kite_testkit::skip("AF_XDP not available here");
        }
        panic!("B never opened its interfaces: {log}");
    };
    let refused = log
        .lines()
        .find(|l| l.contains("AF_XDP not available"))
        .unwrap();
    assert!(
        refused.contains("ba") && refused.contains("already has an XDP program"),
        "{log}"
    );
    let ba = channel(&b, "dev://ba");
    let path = ba["io_path"].as_str().unwrap();
    assert!(
        path.starts_with("af_packet (AF_XDP refused: ")
            && path.contains("already has an XDP program"),
        "{ba}"
    );
    assert_eq!(ba["xdp"], Value::Null, "{ba}");
    assert!(channel_line(&b, "dev://ba").contains("af_packet (AF_XDP refused: "));
    assert!(channel(&b, "dev://bc")["io_path"]
        .as_str()
        .unwrap()
        .starts_with("af_xdp ("));
    fetch(&chain, 30_000, 1000);
    let ns = chain.ns[1].clone();
    chain.daemons[1]
        .stop("TERM", Duration::from_secs(10))
        .expect("B exits on SIGTERM");
    assert_eq!(
        xdp_name(&ns, "ba").as_deref(),
        Some("xdp_pass"),
        "left as it was"
    );
    assert!(!has_xdp(&ns, "bc"));
}

/// A frame from `src` to `dst` (colon-separated MACs) of EtherType `ethertype` carrying
/// `payload`, as hex.
fn frame(dst: &str, src: &str, ethertype: u16, payload: &[u8]) -> String {
    format!(
        "{}{}{ethertype:04x}{}",
        dst.replace(':', ""),
        src.replace(':', ""),
        hex::encode(payload)
    )
}

/// `n` pseudo-random octets from `seed` (xorshift, so a failure repeats).
fn junk(seed: u64, n: usize) -> Vec<u8> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Never an LpPacket, Interest or Data TLV-TYPE first: junk stays junk.
            (x >> 24) as u8
        })
        .map(|b| {
            if matches!(b, 0x05 | 0x06 | 0x64) {
                0xff
            } else {
                b
            }
        })
        .collect()
}

/// A host Kite never met, on A's side of the A — B link.
const STRANGER: &str = "02:00:00:00:00:99";

/// B's interface ba with a 1778-octet MTU: its frames (1792 octets) fill a 2048-octet UMEM
/// frame, less the kernel's 256 of headroom, to the octet.
const BA_MTU: usize = 1778;

/// Hostile frames at an AF_XDP interface are counted and break nothing: from A's side of the
/// link (MTU 9000, so frames beyond B's MTU can be sent), runts, frames of a bare header and a
/// few octets more, other EtherTypes, a truncated LpPacket, random octets under NDN's
/// EtherType, a VLAN-tagged NDN frame, and frames at, just past and far past B's MTU. The
/// program's counts, B's channel counters and its face toward A move as each frame's fate
/// says, and a fetch across B still works.
#[test]
fn hostile_frames_at_an_xdp_interface_are_counted() {
    let _one = one_chain();
    let Some(chain) = Chain::new_with("xh", Link::XdpMiddle, 0, ["", "", ""], |c| {
        for (ns, dev, mtu) in [(&c.ns[0], "ab", 9000), (&c.ns[1], "ba", BA_MTU)] {
            // No IPv6 neighbour discovery: the program's "passed" count is the test's alone.
            let sysctl = format!("net.ipv6.conf.{dev}.disable_ipv6=1");
            let out = Command::new("ip")
                .args(["netns", "exec", ns, "sysctl", "-qw", &sysctl])
                .output()
                .expect("run sysctl");
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let out = ip(&["-n", ns, "link", "set", "dev", dev, "mtu", &mtu.to_string()]);
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }) else {
        return;
    };
    if !b_on_xdp(&chain, 1) {
        return;
    }
    let b = chain.daemons[1].socket().to_owned();
    // A first fetch gives B an on-demand face toward A.
    fetch(&chain, 30_000, 1000);
    let to_a = format!("ether://[{AB_MAC}]");
    let face_before = ctl::json(&b, &["face", "show", &to_a]);
    let before = channel(&b, "dev://ba");

    // Shorter than an Ethernet header: Linux sends none (its Ethernet devices' minimum header
    // length), so no software peer can make the program's runt count move.
    let runts: Vec<String> = (0..14usize)
        .map(|n| frame(BA_MAC, STRANGER, 0x8624, &[])[..2 * n].to_owned())
        .collect();
    assert_eq!(
        netns::inject(&chain.ns[0], "ab", &runts),
        vec![EINVAL; 14],
        "runts refused"
    );

    // From the stranger: a bare header and one or two octets more (the last an LpPacket
    // header whose length runs past the frame) under NDN's EtherType and IPv4's, another
    // EtherType, an LpPacket 4096 octets long in 44, random octets, a VLAN-tagged NDN frame.
    let mut frames = Vec::new();
    for payload in [&[][..], &[0x64][..], &[0x64, 0x05][..]] {
        frames.push(frame(BA_MAC, STRANGER, 0x8624, payload));
        frames.push(frame(BA_MAC, STRANGER, 0x0800, payload));
    }
    frames.push(frame(BA_MAC, STRANGER, 0x88b5, &junk(1, 86)));
    let mut truncated_lp = vec![0x64, 0xfd, 0x10, 0x00];
    truncated_lp.extend_from_slice(&junk(2, 40));
    frames.push(frame(BA_MAC, STRANGER, 0x8624, &truncated_lp));
    for i in 0..10 {
        frames.push(frame(
            BA_MAC,
            STRANGER,
            0x8624,
            &junk(10 + i, 46 + 15 * i as usize),
        ));
    }
    let mut tagged = vec![0x00, 0x05, 0x86, 0x24];
    tagged.extend_from_slice(&junk(3, 60));
    frames.push(frame(BA_MAC, STRANGER, 0x8100, &tagged));
    assert_eq!(
        netns::inject(&chain.ns[0], "ab", &frames),
        vec![0; frames.len()]
    );
    // The program took the 14 NDN frames and passed the 3 short IPv4 ones, the other
    // EtherType and the tagged frame. Every NDN frame is malformed and from a host with no
    // face, so it is counted on the channel and makes none; so is the tagged frame, which
    // the kernel untags and hands to the channel's AF_PACKET socket.
    let mid = settled(&b, &before, 14, 5, |c| drops(c, "malformed") >= 15);
    assert_eq!(drops(&mid, "malformed"), 15, "{mid}");

    // At B's MTU, then 1 to 5 octets past it, then far past it. The first is read (and is
    // malformed); the next four reach the program (a veth takes a frame up to its MTU plus a
    // VLAN tag) and are longer than a UMEM frame holds, so the socket drops them, and the
    // channel counts them with its socket drops; the veth itself drops the rest (telling
    // the sender ENOBUFS), before the program runs: the interface's own statistics count
    // them (`ip -s link`).
    let big: Vec<String> = [0, 1, 2, 3, 4, 5, 4000 - 14 - BA_MTU, 9000 - BA_MTU]
        .iter()
        .map(|extra| {
            let len = BA_MTU + extra;
            frame(BA_MAC, STRANGER, 0x8624, &junk(len as u64, len))
        })
        .collect();
    let sent = netns::inject(&chain.ns[0], "ab", &big);
    assert_eq!(&sent[..5], &[0; 5], "{sent:?}");
    // From A, whose face B has: a truncated LpPacket and random octets, malformed on it.
    let mut known = vec![frame(BA_MAC, AB_MAC, 0x8624, &truncated_lp)];
    for i in 0..5 {
        known.push(frame(BA_MAC, AB_MAC, 0x8624, &junk(40 + i, 60)));
    }
    assert_eq!(netns::inject(&chain.ns[0], "ab", &known), vec![0; 6]);
    // Socket drops are read once a second.
    let after = settled(&b, &mid, 11, 0, |c| {
        drops(c, "socket") >= 4 && drops(c, "malformed") >= 16
    });
    assert_eq!(drops(&after, "malformed"), 16, "{after}");
    assert_eq!(drops(&after, "socket"), 4, "{after}");
    assert_eq!(drops(&after, "truncated"), 0, "{after}");
    assert_eq!(xdp(&after, "runt"), 0, "{after}");
    let face_after = common::eventually(Duration::from_secs(5), || {
        let f = ctl::json(&b, &["face", "show", &to_a]);
        (f["drops"]["in_malformed"].as_u64()? >= 6).then_some(f)
    })
    .expect("B's face toward A counted the malformed frames");
    let malformed = |f: &Value| f["drops"]["in_malformed"].as_u64().unwrap();
    assert_eq!(
        malformed(&face_after) - malformed(&face_before),
        6,
        "{face_after}"
    );
    let faces = ctl::json(&b, &["face", "list"]);
    let odd = format!("ether://[{STRANGER}]");
    assert!(
        !faces.as_array().unwrap().iter().any(|f| f["uri"] == odd),
        "{faces}"
    );

    // Forwarding goes on across B: 30 more Interests from A reach it.
    let interests = |f: &Value| f["counters"]["in_interests"].as_u64().unwrap();
    fetch(&chain, 30_000, 1000);
    let face_end = ctl::json(&b, &["face", "show", &to_a]);
    assert!(
        interests(&face_end) >= interests(&face_after) + 30,
        "{face_after} then {face_end}"
    );
}

/// EINVAL, as Linux numbers it.
const EINVAL: i64 = 22;

/// B's channel dev://ba once `done` holds of it (5 s at most), after the program's ndn and
/// passed counts grew from `from`'s by exactly `ndn` and `passed`.
fn settled(b: &str, from: &Value, ndn: u64, passed: u64, done: impl Fn(&Value) -> bool) -> Value {
    let c = common::eventually(Duration::from_secs(5), || {
        let c = channel(b, "dev://ba");
        done(&c).then_some(c)
    })
    .unwrap_or_else(|| {
        panic!(
            "the channel never counted the frames: {}",
            channel(b, "dev://ba")
        )
    });
    assert_eq!(xdp(&c, "ndn") - xdp(from, "ndn"), ndn, "{from} then {c}");
    assert_eq!(
        xdp(&c, "passed") - xdp(from, "passed"),
        passed,
        "{from} then {c}"
    );
    c
}

/// B with two I/O threads that run its two forwarding shards themselves (inline), each
/// Interest dispatched by its whole name so a fetch's Interests spread over both shards, and
/// its metrics; `steering` for `face_system.ether.xdp_steering`.
fn two_io_threads(steering: bool) -> String {
    format!(
        "[forwarder]\nthreads = 2\nio_threads = 2\ninline = true\ndispatch_prefix = 0\n\
         [face_system.ether]\nxdp_steering = {steering}\n{B_METRICS}"
    )
}

/// Each of B's I/O threads' `kite_io_crossed_total`: packets it read for a shard the other
/// runs.
fn crossed(chain: &Chain) -> [u64; 2] {
    let m = b_metrics(chain);
    [0, 1].map(|k| {
        sample(
            &m,
            &format!("kite_io_crossed_total{{thread=\"kite-io{k}\"}}"),
        )
    })
}

/// Fetches 4 MB in chunks of 1000 octets from C to A through B with two I/O threads, each
/// running one of B's two forwarding shards, and B's interfaces on two threads (ba on
/// kite-io0, bc on kite-io1), over veths of two queues; B's I/O threads' crossings after it.
fn fetch_through_two_threads(tag: &str, steering: bool) -> Option<(Chain, [u64; 2])> {
    let b = two_io_threads(steering);
    let chain = Chain::with_queues(tag, Link::XdpMiddle, 0, ["", &b, ""], 2, |_| {})?;
    if !b_on_xdp(&chain, 1) {
        return None;
    }
    fetch(&chain, 4 << 20, 1000);
    let crossed = crossed(&chain);
    Some((chain, crossed))
}

/// With steering, the XDP program hands every Interest from A to the I/O thread whose shard
/// its name's Name Dispatch Table entry names, and every Data from C to the thread of the
/// shard its PIT token names: a 4 MB fetch arrives whole and, but for its first packets,
/// none crossed between B's I/O threads, although the fetch's Interests went to both
/// shards. The face
/// toward A counts every Interest, whichever thread read it; the channels say they are
/// steered, over both queues of their veths. Without steering the same fetch crosses: the test sees what it claims to.
#[test]
fn steered_frames_never_cross_between_io_threads() {
    let _one = one_chain();
    let Some((chain, crossed)) = fetch_through_two_threads("xt", true) else {
        return;
    };
    let b = chain.daemons[1].socket();
    for dev in ["dev://ba", "dev://bc"] {
        let c = channel(b, dev);
        let path = c["io_path"].as_str().expect("an I/O path");
        assert!(path.ends_with("2 queues, steered to 2 I/O threads)"), "{c}");
        assert_eq!(drops(&c, "socket"), 0, "{c}");
    }
    // A few may cross: A's Interests that came before B had a face for A (only ba's own
    // thread may make it, whatever shard they go to), and the fetch's first Interest
    // (CanBePrefix, for the version), which looks in both shards' content stores. None of
    // the 4,200 segments' Interests or Data.
    assert!(
        crossed.iter().sum::<u64>() <= 8,
        "packets crossed between B's I/O threads: {crossed:?}"
    );
    // Every Interest of the fetch (about 4,200 segments) counted on B's face toward A.
    let face = ctl::json(b, &["face", "show", &format!("ether://[{AB_MAC}]")]);
    let interests = face["counters"]["in_interests"].as_u64().expect("a count");
    assert!(interests >= 4 << 10, "{face}");
    let log = chain.daemons[1].log_text();
    assert!(
        log.contains("reading the NDN frames of this I/O thread's shards"),
        "{log}"
    );
    drop(chain);
    let _ = fetch_through_two_threads("xu", false).map(|(_, crossed)| {
        assert!(crossed.iter().sum::<u64>() > 1000, "{crossed:?}");
    });
}
