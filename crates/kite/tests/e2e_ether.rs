//! Two `kite run` daemons, each in a network namespace of its own, joined by a veth pair and
//! nothing else: `--ether` on each end. A consumer on A fetches from a python-ndn producer on B
//! over the multicast face (a route toward `ether://[01:00:5e:00:17:aa]`), and over a unicast
//! face made by `kite face create ether://[B] --local dev://veth0` (a segmented object whose
//! 4000-octet segments are fragmented to the 1500-octet MTU); B answers through the on-demand
//! face its channel made for A. Random octets sent with NDN's EtherType are counted on the face
//! they reach (or, from a host with no face, on the channel, making no face), and forwarding
//! goes on. A packet reassembled from Ethernet fragments that is longer than the largest packet
//! accepted is dropped and counted on its face.
//!
//! One daemon also follows its interface: an MTU change shows in `faces/list`, and the
//! interface going down and up again is told by face events and the face's state, with what
//! it would have sent meanwhile dropped and counted.
//!
//! Unicast faces with NDNLPv2 LpReliability on both ends carry a segmented object intact
//! across a link that drops 5 % of the frames each way, resending what was lost.
//!
//! Needs root (`ip netns add`); without netns permission the tests skip (each says why through
//! `kite_testkit::skip`, and `scripts/test.sh` counts them skipped, not passed). Those that also
//! need python-ndn are ignored by a plain `cargo test`; `scripts/test.sh` runs them.

mod common;

use std::process::Command;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::{ctl, py, py_one, Daemon, Producer};
use kite_mgmt_proto::nfd::FaceEventKind;
use kite_mgmt_proto::{FaceEventNotification, Tlv};
use kite_packet::{Interest, Name};
use kite_testkit::netns::{add_or_skip, ip, ip_ok};
use serde_json::Value;

const MAC_A: &str = "02:00:00:00:00:0a";
const MAC_B: &str = "02:00:00:00:00:0b";
const GROUP: &str = "ether://[01:00:5e:00:17:aa]";

/// Two network namespaces joined by a veth pair (`veth0` in A with [`MAC_A`], `veth1` in B
/// with [`MAC_B`]); both namespaces, and with them the pair, are deleted on drop.
struct Link {
    a: String,
    b: String,
}

impl Link {
    fn new(tag: &str) -> Option<Link> {
        let pid = std::process::id();
        let (a, b) = (format!("kite-{tag}-{pid}-a"), format!("kite-{tag}-{pid}-b"));
        if !add_or_skip(&a) {
            return None;
        }
        // From here on, Drop removes whatever was made, even if a step below panics.
        let link = Link { a, b };
        ip_ok(&["netns", "add", &link.b]);
        ip_ok(&[
            "-n", &link.a, "link", "add", "veth0", "address", MAC_A, "type", "veth", "peer",
            "name", "veth1", "address", MAC_B, "netns", &link.b,
        ]);
        for (ns, dev) in [(&link.a, "veth0"), (&link.b, "veth1")] {
            ip_ok(&["-n", ns, "link", "set", dev, "up"]);
            ip_ok(&["-n", ns, "link", "set", "lo", "up"]);
        }
        // Until the kernel marks the link up and gives it a queue (asynchronously), frames
        // sent on it are dropped without an error.
        let up = |ns: &str, dev: &str| {
            let out = ip(&["-n", ns, "link", "show", "dev", dev]);
            let s = String::from_utf8_lossy(&out.stdout);
            s.contains("state UP") && !s.contains("qdisc noop")
        };
        let deadline = Instant::now() + Duration::from_secs(5);
        while !(up(&link.a, "veth0") && up(&link.b, "veth1")) {
            assert!(Instant::now() < deadline, "veth pair never came up");
            std::thread::sleep(Duration::from_millis(10));
        }
        Some(link)
    }

    /// `kite run --local-only --ether DEV` inside namespace `ns` (`ip netns exec` execs it).
    fn daemon(ns: &str, dev: &str) -> Daemon {
        Self::daemon_with(ns, dev, &[])
    }

    /// [`Link::daemon`] with more flags. With `KITE_TEST_ETHER=xdp` (scripts/test.sh runs
    /// these tests again so) the interface goes through AF_XDP (`--xdp DEV`).
    fn daemon_with(ns: &str, dev: &str, extra: &[&str]) -> Daemon {
        let launcher = ["ip", "netns", "exec", ns].map(String::from);
        let flag = match std::env::var("KITE_TEST_ETHER").as_deref() {
            Ok("xdp") => "--xdp",
            _ => "--ether",
        };
        let mut args = vec!["--local-only", flag, dev];
        args.extend_from_slice(extra);
        Daemon::start(
            &launcher,
            &args.iter().map(|a| a.to_string()).collect::<Vec<_>>(),
        )
    }

    /// Sends each frame (hex) out of `dev` in namespace `ns` ([`common::netns::inject`]);
    /// every one must be sent.
    fn inject(ns: &str, dev: &str, frames: &[String]) {
        let errnos = common::netns::inject(ns, dev, frames);
        assert_eq!(
            errnos,
            vec![0; frames.len()],
            "injecting frames: errnos {errnos:?}"
        );
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        let _ = ip(&["netns", "del", &self.a]);
        let _ = ip(&["netns", "del", &self.b]);
    }
}

fn face_id(f: &Value) -> String {
    f["face_id"].as_u64().expect("face_id").to_string()
}

fn counter(f: &Value, name: &str) -> u64 {
    f["counters"][name].as_u64().expect("counter")
}

/// A frame with NDN's EtherType from `src` to `dst` (colon-separated MACs) carrying
/// `payload`, as hex.
fn frame(dst: &str, src: &str, payload: &[u8]) -> String {
    format!(
        "{}{}8624{}",
        dst.replace(':', ""),
        src.replace(':', ""),
        hex::encode(payload)
    )
}

/// `n` payloads of random octets (a fixed-seed generator, so a failure repeats), 60 to 200
/// octets each.
fn random_payloads(n: usize) -> Vec<Vec<u8>> {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    (0..n)
        .map(|_| {
            let len = 60 + (next() % 141) as usize;
            (0..len).map(|_| next() as u8).collect()
        })
        .collect()
}

#[test]
#[ignore = "needs root and python-ndn: scripts/test.sh runs it"]
fn fetch_over_the_multicast_face_and_survive_random_frames() {
    let Some(link) = Link::new("mc") else {
        return;
    };
    let a = Link::daemon(&link.a, "veth0");
    let b = Link::daemon(&link.b, "veth1");
    let mut producer = Producer::start(b.socket(), "/ether", &[]);

    let mcast = ctl::face(a.socket(), GROUP);
    assert_eq!(mcast["local_uri"], "dev://veth0", "{mcast}");
    assert_eq!(mcast["persistency"], "permanent", "{mcast}");
    assert_eq!(mcast["link_type"], "multi-access", "{mcast}");
    assert_eq!(mcast["scope"], "non-local", "{mcast}");
    assert_eq!(mcast["mtu"], 1500, "{mcast}");

    ctl::json(a.socket(), &["route", "add", "/ether", &face_id(&mcast)]);
    let got = py(&["get", a.socket(), "plain:/ether/x", "fresh:/ether/y"]);
    assert_eq!(got[0]["content"], "1 /ether/x", "{got:?}");
    assert_eq!(got[1]["content"], "2 /ether/y", "{got:?}");
    assert_eq!(producer.interests().len(), 2);
    let b_mcast = ctl::face(b.socket(), GROUP);
    assert_eq!(counter(&b_mcast, "in_interests"), 2, "{b_mcast}");
    assert_eq!(counter(&b_mcast, "out_data"), 2, "{b_mcast}");

    // Random octets from B's side: to the group, and to A's address from a host A never met.
    let stranger = "02:00:00:00:00:0c";
    let payloads = random_payloads(20);
    let frames: Vec<String> = payloads
        .iter()
        .enumerate()
        .map(|(i, p)| match i % 2 {
            0 => frame("01:00:5e:00:17:aa", MAC_B, p),
            _ => frame(MAC_A, stranger, p),
        })
        .collect();
    let before = ctl::face(a.socket(), GROUP);
    Link::inject(&link.b, "veth1", &frames);
    let after = common::eventually(Duration::from_secs(5), || {
        let f = ctl::face(a.socket(), GROUP);
        (counter(&f, "in_bytes") > counter(&before, "in_bytes")).then_some(f)
    })
    .expect("the multicast face counted the random frames' octets");
    for c in ["in_interests", "in_data", "in_nacks"] {
        assert_eq!(counter(&after, c), counter(&before, c), "{c}: {after}");
    }
    // Junk from a host with no face makes none: the channel counts it as malformed.
    let faces = ctl::json(a.socket(), &["face", "list"]);
    let odd = format!("ether://[{stranger}]");
    assert!(
        !faces.as_array().unwrap().iter().any(|f| f["uri"] == odd),
        "{faces}"
    );
    let channels = ctl::json(a.socket(), &["channel", "list"]);
    let veth = channels
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["local_uri"] == "dev://veth0")
        .unwrap_or_else(|| panic!("no channel dev://veth0 in {channels}"));
    assert_eq!(veth["drops"]["malformed"], 10, "{veth}");

    // Forwarding goes on over the same face.
    let got = py(&["get", a.socket(), "plain:/ether/z"]);
    assert_eq!(got[0]["content"], "3 /ether/z", "{got:?}");
}

#[test]
fn a_full_interface_gives_up_its_idlest_on_demand_face_for_a_new_sender() {
    let Some(link) = Link::new("cap") else {
        return;
    };
    let a = Link::daemon_with(&link.a, "veth0", &["--ether-on-demand-limit", "2"]);
    let senders = [
        "02:00:00:00:00:c1",
        "02:00:00:00:00:c2",
        "02:00:00:00:00:c3",
    ];
    for (n, src) in senders.iter().enumerate() {
        let mut i = Interest::new(format!("/cap/{n}").parse::<Name>().unwrap());
        i.lifetime = Some(1000);
        i.nonce = Some(common::peer::nonce());
        Link::inject(&link.b, "veth1", &[frame(MAC_A, src, &i.encode())]);
        std::thread::sleep(Duration::from_millis(100));
    }
    let uris = |faces: &Value| -> Vec<String> {
        faces
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["persistency"] == "on-demand" && f["local_uri"] == "dev://veth0")
            .map(|f| f["uri"].as_str().unwrap().to_string())
            .collect()
    };
    let want = [senders[1], senders[2]].map(|m| format!("ether://[{m}]"));
    let got = common::eventually(Duration::from_secs(5), || {
        let got = uris(&ctl::json(a.socket(), &["face", "list"]));
        (got == want).then_some(got)
    });
    assert!(
        got.is_some(),
        "the two newest senders keep their faces: {:?}",
        uris(&ctl::json(a.socket(), &["face", "list"]))
    );
}

#[test]
#[ignore = "needs root and python-ndn: scripts/test.sh runs it"]
fn fetch_over_a_unicast_face_with_fragmentation() {
    let Some(link) = Link::new("uc") else {
        return;
    };
    let a = Link::daemon(&link.a, "veth0");
    let b = Link::daemon(&link.b, "veth1");
    let object = Producer::start(
        b.socket(),
        "/ether/obj",
        &["--object-size", "20000", "--segment-size", "4000"],
    );
    let mut plain = Producer::start(b.socket(), "/ether/plain", &[]);

    // What NFD refuses, Kite refuses with the same status.
    let uri = format!("ether://[{MAC_B}]");
    let refused = |args: &[&str], status: &str| {
        let out = ctl::kite_at(a.socket(), args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains(status),
            "{args:?}: {err}"
        );
    };
    refused(&["face", "create", &uri], "406");
    refused(&["face", "create", GROUP, "--local", "dev://veth0"], "406");
    refused(&["face", "create", &uri, "--local", "dev://eth9"], "504");

    let created = ctl::json(
        a.socket(),
        &["face", "create", &uri, "--local", "dev://veth0"],
    );
    assert_eq!(created["result"], "face-created", "{created}");
    assert_eq!(created["local_uri"], "dev://veth0", "{created}");
    assert_eq!(created["persistency"], "persistent", "{created}");
    let id = created["face_id"].as_u64().unwrap().to_string();
    let again = ctl::json(
        a.socket(),
        &["face", "create", &uri, "--local", "dev://veth0"],
    );
    assert_eq!(again["result"], "face-exists", "{again}");
    assert_eq!(again["face_id"].as_u64().unwrap().to_string(), id);

    ctl::json(a.socket(), &["route", "add", "/ether", &id]);
    let fetched = py_one(&["fetch", a.socket(), "/ether/obj", "--window", "4"]);
    assert_eq!(fetched["sha256"], object.ready["sha256"], "{fetched}");
    assert_eq!(fetched["segments"], 5);
    let out = ctl::face(a.socket(), &uri);
    assert_eq!(counter(&out, "in_data"), 5, "{out}");
    assert!(counter(&out, "in_bytes") > 20000, "{out}");
    assert_eq!(counter(&ctl::face(a.socket(), GROUP), "out_interests"), 0);

    // B answered through the face its channel made for A's address.
    let back = ctl::face(b.socket(), &format!("ether://[{MAC_A}]"));
    assert_eq!(back["local_uri"], "dev://veth1", "{back}");
    assert_eq!(back["persistency"], "on-demand", "{back}");
    assert_eq!(back["link_type"], "point-to-point", "{back}");
    assert_eq!(counter(&back, "out_data"), 5, "{back}");

    // Destroyed, the face is gone (and its route with it); created again, it works.
    ctl::json(a.socket(), &["face", "destroy", &id]);
    let faces = ctl::json(a.socket(), &["face", "list"]).to_string();
    assert!(!faces.contains(&uri), "{faces}");
    let created = ctl::json(
        a.socket(),
        &["face", "create", &uri, "--local", "dev://veth0"],
    );
    assert_eq!(created["result"], "face-created", "{created}");
    let id = created["face_id"].as_u64().unwrap().to_string();
    ctl::json(a.socket(), &["route", "add", "/ether", &id]);
    let got = py(&["get", a.socket(), "plain:/ether/plain/after"]);
    assert_eq!(got[0]["content"], "1 /ether/plain/after", "{got:?}");
    assert_eq!(plain.interests().len(), 1);
}

/// Follows `/localhost/nfd/faces/events` as NFD's FaceMonitor does (the latest event, then
/// each next sequence number) on a thread; every notification goes to the receiver until it
/// is dropped.
fn watch_face_events(socket: &str) -> mpsc::Receiver<FaceEventNotification> {
    let mut client = kite_app::Client::connect_unix(socket).expect("connect for events");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut next: Option<String> = None;
        loop {
            let name = next.as_deref().unwrap_or("/localhost/nfd/faces/events");
            let mut i = Interest::new(name.parse::<Name>().unwrap());
            i.can_be_prefix = next.is_none();
            i.must_be_fresh = next.is_none();
            i.lifetime = Some(2000);
            let Ok(data) = client.express(&i, Duration::from_secs(3)) else {
                continue;
            };
            let uri = data.name.to_string();
            let seq: u64 = uri.rsplit_once("seq=").expect("seq=N").1.parse().unwrap();
            next = Some(format!("/localhost/nfd/faces/events/seq={}", seq + 1));
            let event = FaceEventNotification::decode(data.content.as_ref().unwrap()).unwrap();
            if tx.send(event).is_err() {
                return;
            }
        }
    });
    rx
}

/// Waits (at most 10 s) for an event of `kind` about face `id`.
fn event_seen(events: &mpsc::Receiver<FaceEventNotification>, kind: FaceEventKind, id: u64) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        match events.recv_timeout(left) {
            Ok(e) if e.kind == kind && e.face_id == id => return,
            Ok(_) => {}
            Err(_) => break,
        }
    }
    panic!("no {kind:?} event for face {id}");
}

/// An encoded Interest named `name` (Nonce 7) whose ApplicationParameters make it `len`
/// octets long.
fn interest_of_len(name: &str, len: usize) -> Vec<u8> {
    kite_testkit::packet::interest_of_len(name, 7u32, len).to_vec()
}

#[test]
fn a_reassembled_packet_over_the_largest_is_dropped_and_counted() {
    let Some(link) = Link::new("big") else {
        return;
    };
    let a = Link::daemon(&link.a, "veth0");
    // From B's side to A's address: the fragments (1500-octet MTU) of a 9000-octet
    // Interest, then an ordinary Interest, all from one sender, so one on-demand face.
    let big = interest_of_len("/big/over", 9000);
    let pieces =
        kite_packet::Fragments::new(kite_packet::LpHeader::default(), big.into(), 1500, 1).unwrap();
    let mut frames: Vec<String> = pieces.map(|lp| frame(MAC_A, MAC_B, &lp.encode())).collect();
    assert!(frames.len() > 6);
    frames.push(frame(MAC_A, MAC_B, &interest_of_len("/big/fine", 500)));
    Link::inject(&link.b, "veth1", &frames);
    let uri = format!("ether://[{MAC_B}]");
    let f = common::eventually(Duration::from_secs(5), || {
        let f = ctl::face(a.socket(), &uri);
        (counter(&f, "in_interests") > 0).then_some(f)
    })
    .expect("the ordinary Interest arrived");
    assert_eq!(counter(&f, "in_interests"), 1, "only the ordinary one: {f}");
    assert_eq!(f["drops"]["in_too_large"], 1, "{f}");
    ctl::json(a.socket(), &["status"]);
}

#[test]
fn ethernet_faces_follow_their_interface() {
    let Some(link) = Link::new("lk") else {
        return;
    };
    let a = Link::daemon(&link.a, "veth0");
    let ip_a = |args: &[&str]| {
        let mut all = vec!["-n", link.a.as_str(), "link", "set", "dev", "veth0"];
        all.extend_from_slice(args);
        ip_ok(&all);
    };
    let mcast = ctl::face(a.socket(), GROUP);
    let id = mcast["face_id"].as_u64().unwrap();
    assert_eq!(
        (mcast["mtu"].as_u64(), mcast["state"].as_str()),
        (Some(1500), Some("up"))
    );
    let until = |what: &str, ok: &dyn Fn(&Value) -> bool| {
        common::eventually(Duration::from_secs(10), || {
            let f = ctl::face(a.socket(), GROUP);
            ok(&f).then_some(f)
        })
        .unwrap_or_else(|| panic!("{what}: {}", ctl::face(a.socket(), GROUP)))
    };

    ip_a(&["mtu", "1400"]);
    until("faces/list shows the new MTU", &|f| f["mtu"] == 1400);
    let show = ctl::kite_at(a.socket(), &["face", "show", &id.to_string()]);
    let text = String::from_utf8_lossy(&show.stdout);
    assert!(text.contains("1400") && text.contains("up"), "{text}");

    let events = watch_face_events(a.socket());
    // The subscription reaches the forwarder's PIT before the link changes.
    std::thread::sleep(Duration::from_millis(500));
    ip_a(&["down"]);
    event_seen(&events, FaceEventKind::DOWN, id);
    until("faces/list shows the face down", &|f| f["state"] == "down");

    // Sent while down: dropped and counted, the face stays.
    ctl::json(a.socket(), &["route", "add", "/down", &id.to_string()]);
    let mut consumer = kite_app::Client::connect_unix(a.socket()).unwrap();
    let mut i = Interest::new("/down/x".parse::<Name>().unwrap());
    i.lifetime = Some(300);
    assert!(consumer.express(&i, Duration::from_secs(1)).is_err());
    let down = until("the link-down drop is counted", &|f| {
        f["drops"]["out_link_down"].as_u64() > Some(0)
    });
    assert_eq!(counter(&down, "out_interests"), 1, "{down}");

    ip_a(&["up"]);
    event_seen(&events, FaceEventKind::UP, id);
    let back = until("faces/list shows the face up", &|f| f["state"] == "up");
    assert_eq!(back["mtu"], 1400, "{back}");
}

/// Drops `percent` % of the NDN frames `dev` receives in namespace `ns` (an nftables ingress
/// rule on the device).
fn lossy_ingress(ns: &str, dev: &str, percent: u32) {
    let rules = format!(
        "table netdev kite_loss {{\n  chain drop_some {{\n    type filter hook ingress device \
         {dev} priority 0;\n    ether type 0x8624 numgen random mod 100 < {percent} drop\n  }}\n}}\n"
    );
    let mut nft = Command::new("ip")
        .args(["netns", "exec", ns, "nft", "-f", "-"])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .expect("run nft");
    use std::io::Write;
    nft.stdin
        .take()
        .unwrap()
        .write_all(rules.as_bytes())
        .unwrap();
    assert!(nft.wait().unwrap().success(), "nft refused {rules}");
}

#[test]
fn lp_reliability_repairs_a_lossy_unicast_ethernet_link() {
    let Some(link) = Link::new("lpr") else {
        return;
    };
    let a = Link::daemon(&link.a, "veth0");
    let b = Link::daemon(&link.b, "veth1");
    lossy_ingress(&link.a, "veth0", 5);
    lossy_ingress(&link.b, "veth1", 5);
    // The multicast face cannot have it: faces/update answers 406.
    let group: u64 = face_id(&ctl::face(a.socket(), GROUP)).parse().unwrap();
    let mut p = kite_mgmt_proto::ControlParameters {
        face_id: Some(group),
        ..Default::default()
    };
    p.set_flag_bit(
        kite_mgmt_proto::nfd::face_flag_bit::LP_RELIABILITY_ENABLED,
        true,
    );
    let resp = common::peer::mgmt(a.socket())
        .command("faces", "update", &p, Duration::from_secs(10))
        .expect("an answer");
    assert_eq!(resp.status_code, 406, "{resp:?}");
    let reliable = |socket: &str, mac: &str, dev: &str| {
        let uri = format!("ether://[{mac}]");
        let local = format!("dev://{dev}");
        let created = ctl::json(
            socket,
            &[
                "face",
                "create",
                &uri,
                "--local",
                &local,
                "--lp-reliability",
                "on",
            ],
        );
        assert_eq!(created["flags"].as_u64().unwrap() & 2, 2, "{created}");
        created["face_id"].as_u64().unwrap().to_string()
    };
    let to_b = reliable(a.socket(), MAC_B, "veth0");
    reliable(b.socket(), MAC_A, "veth1");
    ctl::json(a.socket(), &["route", "add", "/ether", &to_b]);

    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    let want = common::tools::random_file(&input, 1_000_000, 0x657468);
    // 4000-octet segments: each is three fragments at the veth's 1500-octet MTU.
    let _put =
        common::tools::Put::start(b.socket(), "/ether/lpr", &input, &["--chunk-size", "4000"]);
    let output = dir.path().join("out");
    let got = common::tools::kite(&[
        "get",
        "/ether/lpr",
        "-o",
        output.to_str().unwrap(),
        "--socket",
        a.socket(),
    ]);
    assert!(
        got.status.success(),
        "{}",
        String::from_utf8_lossy(&got.stderr)
    );
    assert_eq!(common::tools::sha256_of(&output), want);
    let back = ctl::face(b.socket(), &format!("ether://[{MAC_A}]"));
    let lp = &back["lp_reliability_counters"];
    assert!(lp["retransmitted"].as_u64().unwrap() > 0, "{back}");
    assert!(lp["acks_received"].as_u64().unwrap() > 0, "{back}");
}
