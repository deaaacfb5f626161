//! A status dataset larger than any fixed number of segments is fetched whole: `faces/list`
//! with 100,000 faces (about 1,700 segments of 8000 octets) from a real `kite run`, by Kite's
//! own `kite face list` and by python-ndn's segment fetcher. The faces are on-demand UDP faces:
//! one well-formed Interest from each of 100,000 source endpoints spread over several loopback
//! addresses (answered by a producer, which tells the sender its face exists), with the
//! listener's on-demand limit raised to hold them.
//!
//! The python-ndn test is ignored by a plain `cargo test`; `scripts/test.sh` runs it.

mod common;

use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use bytes::Bytes;
use common::peer::{interest, Producer};
use common::{ctl, free_tcp_port, free_udp_port, py_one, Daemon};

/// On-demand faces to make.
const FACES: usize = 100_000;
/// Faces every listing has besides them: internal, content store, null, and the producer's
/// unix face.
const BUILTIN: usize = 4;

/// Senders whose faces are made at once.
const BATCH: usize = 1000;

/// A daemon holding [`FACES`] on-demand UDP faces.
struct Crowd {
    kite: Daemon,
    to: SocketAddr,
    _producer: Producer,
}

/// One crowd at a time: two daemons with 100,000 faces each would slow each other down.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

impl Crowd {
    fn new() -> Crowd {
        let udp = free_udp_port();
        let to: SocketAddr = format!("127.0.0.1:{udp}").parse().unwrap();
        let kite = Daemon::start(
            &[],
            &[
                "--udp".into(),
                to.to_string(),
                "--tcp".into(),
                format!("127.0.0.1:{}", free_tcp_port()),
                "--udp-on-demand-limit".into(),
                (2 * FACES).to_string(),
                // One line per face created would slow the daemon down.
                "--log".into(),
                "warn".into(),
            ],
        );
        let producer = Producer::start(
            kite.socket(),
            "/crowd",
            Box::new(|_| Some(Bytes::from_static(b"here"))),
        );
        let crowd = Crowd {
            kite,
            to,
            _producer: producer,
        };
        let mut made = 0;
        let mut free = (2..=20u8).flat_map(|host| {
            (10_000..60_000u16).map(move |port| (Ipv4Addr::new(127, 0, 0, host), port))
        });
        while made < FACES {
            // A port some other socket holds is skipped.
            let batch: Vec<UdpSocket> = free
                .by_ref()
                .filter_map(|from| UdpSocket::bind(from).ok())
                .take(BATCH.min(FACES - made))
                .collect();
            assert!(!batch.is_empty(), "free loopback endpoints");
            made += batch.len();
            crowd.answered(batch);
        }
        crowd
    }

    /// Sends an Interest from each socket until each hears back (the Data), which tells
    /// that its face exists; the answers pace the senders to what Kite takes.
    fn answered(&self, mut waiting: Vec<UdpSocket>) {
        let mut buf = [0u8; 2048];
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            for s in &waiting {
                let _ = s.send_to(&interest("/crowd", 1000), self.to);
            }
            std::thread::sleep(Duration::from_millis(20));
            waiting.retain(|s| {
                s.set_nonblocking(true).unwrap();
                s.recv(&mut buf).is_err()
            });
            if waiting.is_empty() {
                return;
            }
        }
        panic!("{} senders never heard back", waiting.len());
    }

    /// `kite face list --json`: how many faces it listed, and how many of them are UDP.
    fn kite_face_list(&self) -> (usize, usize) {
        let faces = ctl::json(self.kite.socket(), &["face", "list"]);
        let faces = faces.as_array().expect("a JSON array");
        let udp = faces
            .iter()
            .filter(|f| f["uri"].as_str().is_some_and(|u| u.starts_with("udp4://")))
            .count();
        (faces.len(), udp)
    }
}

fn one_at_a_time() -> MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

#[test]
fn kite_face_list_fetches_a_hundred_thousand_faces_whole() {
    let _one = one_at_a_time();
    let crowd = Crowd::new();
    let (all, udp) = crowd.kite_face_list();
    assert_eq!(udp, FACES, "UDP faces listed");
    assert_eq!(
        all,
        FACES + BUILTIN + 1,
        "every face, the listing client's too"
    );
}

#[test]
#[ignore = "needs python-ndn: scripts/test.sh runs it"]
fn python_ndn_fetches_a_hundred_thousand_faces_whole() {
    let _one = one_at_a_time();
    let crowd = Crowd::new();
    // Generating the dataset of 100,000 faces takes seconds in a debug build on a busy
    // machine: the first Interest waits longer than the script's default 2 s.
    let got = py_one(&[
        "dataset",
        crowd.kite.socket(),
        "faces/list",
        "--summary",
        "--timeout",
        "10000",
    ]);
    assert_eq!(got["items"], (FACES + BUILTIN + 1) as u64, "{got}");
    assert!(got["segments"].as_u64().unwrap() > 1_000, "{got}");
    let last = &got["last"][0];
    assert!(
        last["local_uri"].as_str().unwrap().starts_with("unix://"),
        "the listing client's own face comes last: {got}"
    );
}
