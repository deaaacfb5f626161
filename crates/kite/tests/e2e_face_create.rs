//! `faces/create tcp4://…` toward an address that drops SYNs does not stall the forwarder:
//! the connection is made without blocking, packets keep flowing on other faces and
//! management keeps answering (`kite status`) while it waits, and the command is answered 504
//! once the connection times out, within the command Interest's lifetime.
//!
//! The daemon runs in a network namespace of its own where 10.9.9.2 is reached over a veth pair
//! through a static neighbour entry with an address no interface has: SYNs leave and nothing ever
//! answers them. Needs root (`ip netns add`); without it the test skips (it says why through
//! `kite_testkit::skip`, and `scripts/test.sh` counts it skipped, not passed).

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use common::peer::{self, interest, Conn, Got, Producer};
use common::{ctl, Daemon};
use kite_mgmt_proto::nfd::status;
use kite_mgmt_proto::ControlParameters;
use kite_packet::NetPacket;
use kite_testkit::netns::{add_or_skip, ip, ip_ok};

/// Where SYNs go unanswered, inside the namespace.
const SILENT: &str = "10.9.9.2";

/// A namespace in which [`SILENT`] swallows every packet sent to it; deleted on drop.
struct Silent {
    ns: String,
}

impl Silent {
    fn new() -> Option<Silent> {
        let ns = format!("kite-silent-{}", std::process::id());
        if !add_or_skip(&ns) {
            return None;
        }
        let s = Silent { ns };
        let n = s.ns.as_str();
        ip_ok(&["-n", n, "link", "set", "lo", "up"]);
        ip_ok(&[
            "-n", n, "link", "add", "v0", "type", "veth", "peer", "name", "v1",
        ]);
        ip_ok(&["-n", n, "addr", "add", "10.9.9.1/24", "dev", "v0"]);
        ip_ok(&["-n", n, "link", "set", "v0", "up"]);
        ip_ok(&["-n", n, "link", "set", "v1", "up"]);
        // Frames to this address reach v1, which is not it, and drops them.
        ip_ok(&[
            "-n",
            n,
            "neigh",
            "add",
            SILENT,
            "lladdr",
            "02:00:00:00:99:99",
            "dev",
            "v0",
            "nud",
            "permanent",
        ]);
        Some(s)
    }
}

impl Drop for Silent {
    fn drop(&mut self) {
        let _ = ip(&["netns", "del", &self.ns]);
    }
}

#[test]
fn a_connection_that_hangs_stalls_neither_forwarding_nor_management() {
    let Some(silent) = Silent::new() else {
        return;
    };
    let launcher = ["ip", "netns", "exec", &silent.ns].map(String::from);
    let kite = Daemon::start(&launcher, &["--local-only".to_string()]);
    let socket = kite.socket().to_string();
    let _producer = Producer::start(
        &socket,
        "/flow",
        Box::new(|_| Some(Bytes::from_static(b"d"))),
    );

    // A consumer fetches one Data after another and notes the longest wait for one.
    let stop = Arc::new(AtomicBool::new(false));
    let consumer = {
        let (stop, socket) = (stop.clone(), socket.clone());
        std::thread::spawn(move || {
            let mut conn = Conn::unix(&socket);
            let (mut n, mut worst) = (0u64, Duration::ZERO);
            while !stop.load(Ordering::Relaxed) {
                let asked = Instant::now();
                conn.send(&interest(&format!("/flow/{n}"), 4000));
                loop {
                    match conn.recv(Duration::from_secs(5)) {
                        Got::Frame(f) => {
                            if let Ok((_, NetPacket::Data(_))) = NetPacket::decode_frame(f) {
                                break;
                            }
                        }
                        Got::Nothing => break,
                        Got::Closed => panic!("the forwarder closed the consumer"),
                    }
                }
                worst = worst.max(asked.elapsed());
                n += 1;
            }
            (n, worst)
        })
    };
    std::thread::sleep(Duration::from_millis(300));

    let create = {
        let socket = socket.clone();
        std::thread::spawn(move || {
            let params = ControlParameters {
                uri: Some(format!("tcp4://{SILENT}:6363")),
                ..ControlParameters::default()
            };
            let asked = Instant::now();
            let resp =
                peer::mgmt(&socket).command("faces", "create", &params, Duration::from_secs(8));
            (resp, asked.elapsed())
        })
    };
    // While the connection hangs, the operator's status command answers.
    std::thread::sleep(Duration::from_millis(500));
    let asked = Instant::now();
    let out = ctl::kite_at(&socket, &["status"]);
    let status_took = asked.elapsed();
    assert!(
        out.status.success(),
        "kite status while a connection hangs: {}",
        String::from_utf8_lossy(&out.stderr)
    );

    let (resp, create_took) = create.join().expect("the create thread");
    stop.store(true, Ordering::Relaxed);
    let (fetched, worst) = consumer.join().expect("the consumer");
    let resp = resp.expect("faces/create is answered within its Interest's lifetime");
    assert_eq!(resp.status_code, status::TIMEOUT, "{resp:?}");
    assert!(
        create_took < Duration::from_secs(4),
        "faces/create answered after {create_took:?}"
    );
    assert!(
        status_took < Duration::from_secs(2),
        "kite status took {status_took:?}"
    );
    assert!(
        worst < Duration::from_secs(1),
        "a Data took {worst:?} while the connection hung ({fetched} fetched)"
    );
}
