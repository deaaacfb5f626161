//! Networks of Kites whose routes come from NDNd's distance-vector router, ndn-dv (`ndnd dv
//! run`, v1.5.3), unchanged: each node is a network namespace running `kite run` and
//! `ndnd dv run`, joined to its neighbours by veth pairs, with the neighbours given to ndn-dv
//! by UDP URI. No route is configured: ndn-dv creates the faces (`faces/create`), enables
//! local fields (`faces/update`), sets the multicast strategy on its sync prefixes
//! (`strategy-choice/set`), registers its own prefixes and the routes it computes
//! (`rib/register`, Origin nlsr), and learns the producer's prefix from Kite's readvertisement
//! (`/localhost/nlsr/rib/register`) of a route of Origin client (`kite put --expose`).
//!
//! - A line a–b–c: a file published on a is fetched intact on c, through b (c's route costs 2,
//!   so a's `/localhop` sync Interests stopped at b: had b passed them on, c would take a for
//!   a neighbour); when the producer stops, its prefix is withdrawn across the network.
//! - A ring a–b–c–d: b fetches from a over their direct link; the link goes down, ndn-dv
//!   moves b's route to the way round (c, d), and a fetch that follows succeeds, as does
//!   NDNd's `ndnd cat` of a name a second producer on a registered (Origin app) under the
//!   readvertised prefix: a's FIB lists that producer before the one it inherits from the
//!   prefix, so each of `ndnd cat`'s metadata Interests, which it resends only once its 1 s
//!   lifetime is over (a new PIT entry each time), goes to the producer that has the name.
//!   The time routing took is printed (docs/routing.md), not asserted.
//!
//! Needs root (`ip netns add`) and KITE_NDND (scripts/test.sh builds NDNd v1.5.3 and sets it);
//! without either the tests skip (each says why through `kite_testkit::skip`, and `scripts/test.sh`
//! counts them skipped, not passed). Ignored by a plain `cargo test`.

mod common;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::netns::Lab;
use common::tools::{get_to_file, random_file, sha256_of, Put};
use common::{ctl, reap, terminate, Daemon};
use kite_testkit::netns::ip_ok;
use kite_testkit::say;
use serde_json::Value;
use tempfile::TempDir;

/// The routers' network name; each router is `/kite-dv/<node>`.
const NETWORK: &str = "/kite-dv";
/// ndn-dv's sync Interest period and the silence after which a neighbour is dead (its
/// smallest allowed values are 1 s and twice that).
const ADVERTISE_MS: u64 = 1000;
const DEAD_MS: u64 = 3000;
/// The longest routing may take to converge before a test gives up (it takes a few seconds).
const CONVERGE: Duration = Duration::from_secs(40);

/// One router: `kite run` and `ndnd dv run` in a namespace.
struct Node {
    name: String,
    kite: Daemon,
    dv: Child,
    dir: TempDir,
}

impl Node {
    fn start(lab: &Lab, i: usize, name: &str, ndnd: &Path) -> Node {
        let launcher = lab.launcher(i);
        let kite = Daemon::start(
            &launcher,
            &[
                "--udp".into(),
                "0.0.0.0:6363".into(),
                "--tcp".into(),
                "127.0.0.1:6363".into(),
            ],
        );
        let dir = tempfile::tempdir().expect("temp dir");
        let neighbours: Vec<String> = lab
            .neighbours(i)
            .iter()
            .map(|u| format!("    - uri: {u}\n"))
            .collect();
        let config = dir.path().join("dv.yml");
        std::fs::write(
            &config,
            format!(
                "dv:\n  network: {NETWORK}\n  router: {NETWORK}/{name}\n  keychain: insecure\n  \
                 trust_anchors: []\n  advertise_interval: {ADVERTISE_MS}\n  \
                 router_dead_interval: {DEAD_MS}\n  neighbors:\n{}",
                neighbours.concat()
            ),
        )
        .expect("write the dv configuration");
        let log = std::fs::File::create(dir.path().join("dv.log")).expect("dv log");
        let dv = Command::new(&launcher[0])
            .args(&launcher[1..])
            .arg(ndnd)
            .args(["dv", "run"])
            .arg(&config)
            .env("NDN_CLIENT_TRANSPORT", format!("unix://{}", kite.socket()))
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("start ndnd dv");
        Node {
            name: name.to_string(),
            kite,
            dv,
            dir,
        }
    }

    fn socket(&self) -> &str {
        self.kite.socket()
    }

    /// The routes of `prefix`: (face, origin name, cost).
    fn routes(&self, prefix: &str) -> Vec<(u64, String, u64)> {
        let rib = ctl::json(self.socket(), &["route", "list"]);
        rib.as_array()
            .expect("a list")
            .iter()
            .filter(|e| e["prefix"] == prefix)
            .flat_map(|e| e["routes"].as_array().cloned().unwrap_or_default())
            .map(|r| {
                (
                    r["face_id"].as_u64().unwrap(),
                    r["origin_name"].as_str().unwrap_or("?").to_string(),
                    r["cost"].as_u64().unwrap(),
                )
            })
            .collect()
    }

    /// The FaceId of the face whose remote URI is `uri`.
    fn face_to(&self, uri: &str) -> Option<u64> {
        let faces = ctl::json(self.socket(), &["face", "list"]);
        faces
            .as_array()?
            .iter()
            .find(|f| f["uri"] == uri)
            .and_then(|f| f["face_id"].as_u64())
    }

    /// Waits until `ok` holds for `prefix`'s routes; how long it took.
    fn await_routes(
        &self,
        prefix: &str,
        what: &str,
        ok: impl Fn(&[(u64, String, u64)]) -> bool,
    ) -> Duration {
        let start = Instant::now();
        loop {
            let routes = self.routes(prefix);
            if ok(&routes) {
                return start.elapsed();
            }
            if start.elapsed() > CONVERGE {
                panic!(
                    "{}: {what} within {CONVERGE:?}; routes of {prefix}: {routes:?}\n\
                     kite route list:\n{}\nndn-dv log (tail):\n{}",
                    self.name,
                    ctl::ok(self.socket(), &["route", "list"]),
                    self.dv_log_tail()
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn dv_log_tail(&self) -> String {
        let log = std::fs::read_to_string(self.dir.path().join("dv.log")).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        terminate(self.dv.id());
        reap(&mut self.dv, Duration::from_secs(3));
    }
}

/// Waits until every node has a route to every other router (the prefix of its prefix-table
/// sync, which ndn-dv routes once the router is reachable); how long it took. A producer's
/// prefix published before that waits for ndn-dv's next periodic prefix sync (30 s).
fn converge(nodes: &[Node]) -> Duration {
    let start = Instant::now();
    for n in nodes {
        for other in nodes.iter().filter(|o| o.name != n.name) {
            let prefix = format!("{NETWORK}/32=DV/32=PFS{NETWORK}/{}", other.name);
            n.await_routes(&prefix, "no route to another router", |rs| !rs.is_empty());
        }
    }
    start.elapsed()
}

/// Every route of every node: none is static, none was configured.
fn assert_all_learned(nodes: &[Node]) {
    for n in nodes {
        let rib: Value = ctl::json(n.socket(), &["route", "list"]);
        for e in rib.as_array().unwrap() {
            for r in e["routes"].as_array().unwrap() {
                assert_ne!(r["source"], "static", "{}: {e}", n.name);
            }
        }
    }
}

#[test]
#[ignore = "needs root and NDNd: scripts/test.sh runs it"]
fn a_file_crosses_a_line_of_kites_over_routes_from_ndn_dv() {
    let Some(ndnd) = common::ndnd() else { return };
    let Some(mut lab) = Lab::new("l", &["a", "b", "c"]) else {
        return;
    };
    lab.link(0, 1);
    lab.link(1, 2);
    let nodes: Vec<Node> = ["a", "b", "c"]
        .iter()
        .enumerate()
        .map(|(i, n)| Node::start(&lab, i, n, &ndnd))
        .collect();
    let took = converge(&nodes);
    say(&format!("line: routers converged {took:?} after start"));
    let (a, b, c) = (&nodes[0], &nodes[1], &nodes[2]);

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("object");
    let sum = random_file(&file, 300_000, 7);
    let put = Put::start(a.socket(), "/app/line", &file, &["--expose"]);

    // c learns /app/line from ndn-dv: two hops, through its face to b.
    let c_to_b = c.face_to("udp4://10.201.2.1:6363");
    let took = c.await_routes("/app/line", "no route via b at cost 2", |rs| {
        rs.iter()
            .any(|(f, o, cost)| Some(*f) == c_to_b && o == "nlsr" && *cost == 2)
    });
    say(&format!(
        "line: /app/line routed on c {took:?} after kite put"
    ));
    let b_to_a = b.face_to("udp4://10.201.1.1:6363");
    b.await_routes("/app/line", "no route via a", |rs| {
        rs.iter().any(|(f, o, _)| Some(*f) == b_to_a && o == "nlsr")
    });
    assert_all_learned(&nodes);

    let out = dir.path().join("fetched");
    get_to_file(c.socket(), &c.name, "/app/line", &out);
    assert_eq!(sha256_of(&out), sum, "the file arrived changed");

    // The producer goes: its route on a goes, Kite withdraws it from ndn-dv, and c's route
    // goes too.
    drop(put);
    c.await_routes("/app/line", "the withdrawn route still there", |rs| {
        rs.is_empty()
    });
}

#[test]
#[ignore = "needs root and NDNd: scripts/test.sh runs it"]
fn a_ring_of_kites_routes_around_a_link_that_goes_down() {
    let Some(ndnd) = common::ndnd() else { return };
    let Some(mut lab) = Lab::new("r", &["a", "b", "c", "d"]) else {
        return;
    };
    lab.link(0, 1); // a–b: 10.201.1.0/24
    lab.link(1, 2); // b–c: 10.201.2.0/24
    lab.link(2, 3); // c–d: 10.201.3.0/24
    lab.link(3, 0); // d–a: 10.201.4.0/24
    let nodes: Vec<Node> = ["a", "b", "c", "d"]
        .iter()
        .enumerate()
        .map(|(i, n)| Node::start(&lab, i, n, &ndnd))
        .collect();
    let took = converge(&nodes);
    say(&format!("ring: routers converged {took:?} after start"));
    let (a, b) = (&nodes[0], &nodes[1]);

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("object");
    let sum = random_file(&file, 200_000, 11);
    let _put = Put::start(a.socket(), "/app/ring", &file, &["--expose"]);
    // A second producer on a, under the readvertised prefix, registered after it (so on a
    // face with a higher FaceId) and not readvertised itself.
    let second = dir.path().join("second");
    let second_sum = random_file(&second, 50_000, 12);
    let _put_second = Put::start(a.socket(), "/app/ring/second", &second, &[]);

    let b_to_a = b.face_to("udp4://10.201.1.1:6363");
    let b_to_c = b.face_to("udp4://10.201.2.2:6363");
    assert!(
        b_to_a.is_some() && b_to_c.is_some(),
        "ndn-dv made b's faces"
    );
    let took = b.await_routes("/app/ring", "no direct route to a", |rs| {
        rs.iter()
            .any(|(f, _, cost)| Some(*f) == b_to_a && *cost == 1)
    });
    say(&format!(
        "ring: /app/ring routed on b {took:?} after kite put"
    ));
    let out = dir.path().join("before");
    get_to_file(b.socket(), &b.name, "/app/ring", &out);
    assert_eq!(sha256_of(&out), sum);

    // The a–b link goes down (both ends lose their carrier).
    ip_ok(&["-n", &lab.nodes[0], "link", "set", "l1a", "down"]);
    let down = Instant::now();
    b.await_routes("/app/ring", "no route the way round", |rs| {
        !rs.is_empty() && rs.iter().all(|(f, _, _)| Some(*f) == b_to_c)
    });
    let converged = down.elapsed();
    say(&format!(
        "ring: b's route to /app/ring moved from a to c {converged:?} after the a-b link went \
         down (ndn-dv: advertise {ADVERTISE_MS} ms, dead after {DEAD_MS} ms)"
    ));
    let out = dir.path().join("after");
    get_to_file(b.socket(), &b.name, "/app/ring", &out);
    assert_eq!(sha256_of(&out), sum, "the file arrived changed");

    let got = dir.path().join("second-fetched");
    let (ok, log) = ndnd_cat(&ndnd, b, "/app/ring/second", &got);
    assert!(
        ok,
        "ndnd cat /app/ring/second on b: {log}\na's FIB:\n{}",
        ctl::ok(a.socket(), &["fib", "list"])
    );
    assert_eq!(sha256_of(&got), second_sum, "ndnd cat got another object");
}

/// NDNd's `ndnd cat NAME` through `node`'s forwarder into `out`: whether it succeeded (it is
/// killed after 30 s), and what it said on stderr.
fn ndnd_cat(ndnd: &Path, node: &Node, name: &str, out: &Path) -> (bool, String) {
    let err = out.with_extension("err");
    let mut child = Command::new(ndnd)
        .args(["cat", name])
        .env("NDN_CLIENT_TRANSPORT", format!("unix://{}", node.socket()))
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(out).expect("ndnd cat output"))
        .stderr(std::fs::File::create(&err).expect("ndnd cat log"))
        .spawn()
        .expect("start ndnd cat");
    let ended = reap(&mut child, Duration::from_secs(30));
    let ok = ended && child.wait().is_ok_and(|s| s.success());
    (ok, std::fs::read_to_string(&err).unwrap_or_default())
}
