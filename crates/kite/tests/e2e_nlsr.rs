//! NLSR, the NDN testbed's link-state routing daemon (24.08, PSync), unchanged on Kite, and
//! Kite among NFD routers: two routers in two network namespaces joined by a veth pair, each
//! a forwarder (`kite run`, or NFD 24.07) with NLSR on it. Keys and certificates come from
//! `ndnsec` in NLSR's trust model (root, site, operator, router; NLSR makes its instance key);
//! each router's face to the other is made before NLSR starts (NLSR makes no faces: it finds
//! its neighbours' in `faces/list` by FaceUri). Checked both ways, from each router to the
//! other:
//!
//! - the prefix in the router's `advertising` section is routed on the other, Origin nlsr,
//!   through its face to the router;
//! - a prefix `nlsrc advertise` adds (signed by the operator) is routed on the other;
//! - a producer's prefix of Origin client (`kite put --expose`) is readvertised by the
//!   forwarder to NLSR (`/localhost/nlsr/rib/register`), routed on the other, and `kite get`
//!   there fetches the file intact.
//!
//! `kite_and_kite` runs two Kites; `kite_and_nfd` a Kite and an NFD.
//! `record_nlsr_startup` (ignored, and only with KITE_NLSR_RECORD) records what
//! `tests/fixtures/nlsr-startup.txt` holds, which `e2e_nlsr_startup.rs` replays without NLSR.
//!
//! Needs root (`ip netns add`) and KITE_NDNCXX_PREFIX (an install prefix of ndn-cxx 0.9, NFD 24.07,
//! NLSR 24.08 and ndn-tools, e.g. /opt/ndn); without either the tests skip (each says why through
//! `kite_testkit::skip`, and `scripts/test.sh` counts them skipped, not passed).

mod common;

use std::time::{Duration, Instant};

use common::ndncxx::{self, router_prefix, Nfd, NlsrConf, Pki, Prefix, Process};
use common::netns::Lab;
use common::nlsr_startup::{self, Recorded};
use common::recorder::Recorder;
use common::tools::{get_to_file, random_file, sha256_of, Put};
use common::{ctl, Daemon};
use kite_mgmt_proto::command::{parse_command, CommandSignature};
use kite_mgmt_proto::{ControlResponse, Tlv};
use kite_testkit::{say, skip};
use tempfile::TempDir;

/// The longest routing may take: NLSR builds its adjacency LSA 5 s after a neighbour first
/// answers its hello, so routes come within about 10 s of the second NLSR's start.
const CONVERGE: Duration = Duration::from_secs(40);

#[derive(Clone, Copy)]
enum Kind {
    Kite,
    Nfd,
}

enum Forwarder {
    Kite(Daemon),
    Nfd(Nfd),
}

/// One router: a forwarder and NLSR in a namespace.
struct Router {
    name: &'static str,
    address: String,
    launcher: Vec<String>,
    forwarder: Forwarder,
    /// The face to the other router.
    face: u64,
    nlsr: Option<Process>,
    dir: TempDir,
}

impl Router {
    fn start(prefix: &Prefix, lab: &Lab, i: usize, name: &'static str, kind: Kind) -> Router {
        let launcher = lab.launcher(i);
        let address = format!("10.201.1.{}", i + 1);
        let forwarder = match kind {
            Kind::Kite => Forwarder::Kite(Daemon::start(
                &launcher,
                &[
                    "--udp".into(),
                    "0.0.0.0:6363".into(),
                    "--tcp".into(),
                    "127.0.0.1:6363".into(),
                ],
            )),
            Kind::Nfd => Forwarder::Nfd(Nfd::start(prefix, &launcher)),
        };
        Router {
            name,
            address,
            launcher,
            forwarder,
            face: 0,
            nlsr: None,
            dir: tempfile::tempdir().expect("temp dir"),
        }
    }

    fn socket(&self) -> &str {
        match &self.forwarder {
            Forwarder::Kite(d) => d.socket(),
            Forwarder::Nfd(n) => n.socket(),
        }
    }

    fn uri(&self) -> String {
        format!("udp4://{}:6363", self.address)
    }

    /// Makes the permanent face to `uri`; its FaceId.
    fn create_face(&mut self, prefix: &Prefix, uri: &str) {
        self.face = match &self.forwarder {
            Forwarder::Kite(d) => ctl::json(
                d.socket(),
                &["face", "create", uri, "--persistency", "permanent"],
            )["face_id"]
                .as_u64()
                .expect("face_id"),
            Forwarder::Nfd(n) => {
                let out = prefix.run(
                    "nfdc",
                    &n.home(),
                    Some(n.socket()),
                    &["face", "create", uri, "persistency", "permanent"],
                );
                let text = String::from_utf8_lossy(&out.stdout).to_string();
                attribute(&text, "id")
                    .and_then(|v| v.parse().ok())
                    .unwrap_or_else(|| panic!("nfdc face create: {text}"))
            }
        };
    }

    /// Writes this router's keys and nlsr.conf (`neighbour` is the other router) and starts
    /// NLSR.
    fn start_nlsr(&mut self, prefix: &Prefix, pki: &Pki, neighbour: &Router) {
        pki.router(self.name, self.dir.path());
        let conf = NlsrConf {
            name: self.name,
            neighbours: &[(neighbour.name, neighbour.uri())],
            advertise: &[format!("/ndn/kite/{}/conf", self.name)],
        }
        .write(self.dir.path());
        let socket = self.socket().to_string();
        self.nlsr = Some(ndncxx::start_nlsr(prefix, &self.launcher, &conf, &socket));
    }

    /// The routes of `prefix`: (FaceId, origin name).
    fn routes(&self, prefix: &Prefix, name: &str) -> Vec<(u64, String)> {
        match &self.forwarder {
            Forwarder::Kite(d) => {
                let rib = ctl::json(d.socket(), &["route", "list"]);
                rib.as_array()
                    .expect("a list")
                    .iter()
                    .filter(|e| e["prefix"] == name)
                    .flat_map(|e| e["routes"].as_array().cloned().unwrap_or_default())
                    .map(|r| {
                        let origin = r["origin_name"].as_str().unwrap_or("?").to_string();
                        (r["face_id"].as_u64().unwrap(), origin)
                    })
                    .collect()
            }
            Forwarder::Nfd(_) => self
                .route_list(prefix)
                .lines()
                .filter(|l| attribute(l, "prefix") == Some(name))
                .filter_map(|l| {
                    let face = attribute(l, "nexthop")?.parse().ok()?;
                    Some((face, attribute(l, "origin")?.to_string()))
                })
                .collect(),
        }
    }

    /// `kite route list` or `nfdc route list`, as printed (with its errors, if any).
    fn route_list(&self, prefix: &Prefix) -> String {
        let out = match &self.forwarder {
            Forwarder::Kite(d) => ctl::kite_at(d.socket(), &["route", "list"]),
            Forwarder::Nfd(n) => prefix
                .command(&[], "nfdc", &n.home(), Some(n.socket()))
                .args(["route", "list"])
                .output()
                .expect("run nfdc"),
        };
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    }

    /// The forwarder's and NLSR's state, for a failure message.
    fn describe(&mut self, prefix: &Prefix) -> String {
        let fwd = match &mut self.forwarder {
            Forwarder::Kite(d) => format!("kite log (tail):\n{}", tail(&d.log_text(), 30)),
            Forwarder::Nfd(n) => n.process.describe(),
        };
        let nlsr = self
            .nlsr
            .as_mut()
            .map_or("NLSR not started".to_string(), |n| n.describe());
        format!(
            "--- router {}: routes\n{}\n{fwd}\n{nlsr}",
            self.name,
            self.route_list(prefix)
        )
    }

    fn nlsr_exited(&mut self) -> bool {
        self.nlsr.as_mut().is_some_and(|n| n.exited().is_some())
    }
}

/// The value of `key=value` in nfdc's output.
fn attribute<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    text.split_whitespace()
        .find_map(|w| w.strip_prefix(key)?.strip_prefix('='))
}

fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// Waits until router `at` routes `name` through its face to the other router, Origin nlsr;
/// how long it took. Panics with both routers' state when it does not, or when an NLSR
/// exits.
fn await_route(prefix: &Prefix, routers: &mut [Router; 2], at: usize, name: &str) -> Duration {
    let start = Instant::now();
    loop {
        let r = &routers[at];
        let routes = r.routes(prefix, name);
        if routes.iter().any(|(f, o)| *f == r.face && o == "nlsr") {
            return start.elapsed();
        }
        let died = routers.iter_mut().any(Router::nlsr_exited);
        if died || start.elapsed() > CONVERGE {
            let why = if died { "an NLSR exited" } else { "timed out" };
            let state: Vec<String> = routers.iter_mut().map(|r| r.describe(prefix)).collect();
            panic!(
                "router {}: no route of origin nlsr for {name} through face {} ({why}); routes \
                 of {name}: {routes:?}\n{}",
                routers[at].name,
                routers[at].face,
                state.join("\n")
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Two routers of `kinds`, NLSR on each, and every check both ways.
fn two_routers(tag: &str, kinds: [Kind; 2]) {
    let mut tools = vec!["ndnsec", "nlsr", "nlsrc"];
    if kinds.iter().any(|k| matches!(k, Kind::Nfd)) {
        tools.extend(["nfd", "nfdc"]);
    }
    let Some(prefix) = Prefix::from_env(&tools) else {
        return;
    };
    let Some(mut lab) = Lab::new(tag, &["a", "b"]) else {
        return;
    };
    lab.link(0, 1); // a 10.201.1.1, b 10.201.1.2
    let pki = Pki::new(&prefix);
    let mut routers = [
        Router::start(&prefix, &lab, 0, "a", kinds[0]),
        Router::start(&prefix, &lab, 1, "b", kinds[1]),
    ];
    let uris = [routers[0].uri(), routers[1].uri()];
    routers[0].create_face(&prefix, &uris[1]);
    routers[1].create_face(&prefix, &uris[0]);
    let [a, b] = &mut routers;
    a.start_nlsr(&prefix, &pki, b);
    b.start_nlsr(&prefix, &pki, a);
    let started = Instant::now();

    // The configured advertisements, both ways.
    for (from, to) in [(0, 1), (1, 0)] {
        let name = format!("/ndn/kite/{}/conf", routers[from].name);
        await_route(&prefix, &mut routers, to, &name);
    }
    say(&format!(
        "{tag}: both routers route each other's configured prefix {:?} after NLSR started",
        started.elapsed()
    ));
    // The neighbour's router prefix is registered by NLSR toward its face from the start.
    for at in [0, 1] {
        let other = router_prefix(routers[1 - at].name);
        await_route(&prefix, &mut routers, at, &other);
    }

    // nlsrc advertise, signed by the operator.
    for (from, to) in [(0, 1), (1, 0)] {
        let name = format!("/ndn/kite/{}/cli", routers[from].name);
        let out = prefix
            .command(
                &routers[from].launcher,
                "nlsrc",
                &pki.home(),
                Some(routers[from].socket()),
            )
            .args(["advertise", &name])
            .output()
            .expect("run nlsrc");
        assert!(
            out.status.success(),
            "nlsrc advertise {name} on {}: {}{}",
            routers[from].name,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let took = await_route(&prefix, &mut routers, to, &name);
        say(&format!(
            "{tag}: nlsrc advertise {name} on {} routed on {} after {took:?}",
            routers[from].name, routers[to].name
        ));
    }

    // A producer's prefix of Origin client: readvertised to NLSR, routed on the other
    // router, and fetched there.
    let files = tempfile::tempdir().unwrap();
    let mut producers = Vec::new();
    for (from, to) in [(1, 0), (0, 1)] {
        let name = format!("/ndn/kite/{}/app", routers[from].name);
        let file = files.path().join(format!("object-{from}"));
        let sum = random_file(&file, 100_000, 3 + from as u64);
        producers.push(Put::start(
            routers[from].socket(),
            &name,
            &file,
            &["--expose"],
        ));
        let took = await_route(&prefix, &mut routers, to, &name);
        say(&format!(
            "{tag}: {name} (origin client on {}) routed on {} after {took:?}",
            routers[from].name, routers[to].name
        ));
        let out = files.path().join(format!("fetched-{from}"));
        get_to_file(routers[to].socket(), routers[to].name, &name, &out);
        assert_eq!(sha256_of(&out), sum, "the file arrived changed");
    }
    // What docs/routing.md shows.
    for r in &routers {
        say(&format!(
            "{tag}: router {} (face {} to the other):\n{}",
            r.name,
            r.face,
            r.route_list(&prefix)
        ));
    }
}

#[test]
fn kite_and_kite() {
    two_routers("nk", [Kind::Kite, Kind::Kite]);
}

#[test]
fn kite_and_nfd() {
    two_routers("nn", [Kind::Kite, Kind::Nfd]);
}

/// Records the signed management commands NLSR sends in its first seconds, through a proxy
/// in front of NFD (which answers each as NLSR expects), with one neighbour whose face
/// exists, and writes them to the file $KITE_NLSR_RECORD names (without it: SKIPPED, so that
/// a run of every test leaves the fixture alone). Run by hand:
/// `KITE_NDNCXX_PREFIX=/opt/ndn KITE_NLSR_RECORD=$PWD/crates/kite/tests/fixtures/nlsr-startup.txt
/// cargo test -p kite --test e2e_nlsr -- --ignored record`.
#[test]
#[ignore = "records the fixture: needs root, KITE_NDNCXX_PREFIX and KITE_NLSR_RECORD"]
fn record_nlsr_startup() {
    let Some(path) = std::env::var_os("KITE_NLSR_RECORD").map(std::path::PathBuf::from) else {
        skip("KITE_NLSR_RECORD names no file to record NLSR's start-up to");
        return;
    };
    let Some(prefix) = Prefix::from_env(&["ndnsec", "nlsr", "nfd", "nfdc"]) else {
        return;
    };
    let Some(mut lab) = Lab::new("nr", &["a", "b"]) else {
        return;
    };
    lab.link(0, 1);
    let pki = Pki::new(&prefix);
    let mut a = Router::start(&prefix, &lab, 0, "a", Kind::Nfd);
    let b_name = "b";
    let b_uri = "udp4://10.201.1.2:6363";
    a.create_face(&prefix, b_uri);
    pki.router(a.name, a.dir.path());
    let conf = NlsrConf {
        name: a.name,
        neighbours: &[(b_name, b_uri.to_string())],
        advertise: &["/ndn/kite/a/conf".to_string()],
    }
    .write(a.dir.path());
    let recorder = Recorder::start(&a.dir.path().join("proxy.sock"), a.socket());
    let mut nlsr = ndncxx::start_nlsr(&prefix, &a.launcher, &conf, recorder.socket());
    std::thread::sleep(Duration::from_secs(6));
    assert!(nlsr.exited().is_none(), "{}", nlsr.describe());

    let router = router_prefix(a.name);
    let mut lines = Vec::new();
    let mut first: Option<(Instant, u64)> = None;
    for (at, interest) in recorder.interests() {
        let Ok(cmd) = parse_command(&interest) else {
            continue;
        };
        let (format, time) = match &cmd.signature {
            CommandSignature::Unsigned => continue,
            CommandSignature::V03 { info, .. } => ("v0.3", info.time.expect("SignatureTime")),
            CommandSignature::V02 { timestamp, .. } => ("v0.2", *timestamp),
        };
        let (t0, s0) = *first.get_or_insert((at, time));
        let identity = cmd
            .signature
            .key_name()
            .map(|k| k.to_string())
            .unwrap_or_default();
        let identity = identity.split("/KEY/").next().unwrap_or_default();
        let signer = match identity.strip_prefix(&router) {
            Some("") => "router".to_string(),
            Some(rest) => format!("router{rest}"),
            None => identity.to_string(),
        };
        let command = format!("{}/{}", cmd.verb.module(), cmd.verb.verb());
        let status = recorder
            .answer(&interest.name.to_string())
            .and_then(|c| ControlResponse::decode(&c).ok())
            .map_or(0, |r| r.status_code);
        let mut params = cmd.params.clone();
        let neighbour = params.face_id == Some(a.face);
        if neighbour {
            params.face_id = None;
        }
        lines.push(Recorded {
            send_ms: at.duration_since(t0).as_millis() as u64,
            signer,
            controller: nlsr_startup::controller(&command, cmd.params.face_id.is_some())
                .to_string(),
            sig_ms: time as i64 - s0 as i64,
            format: format.to_string(),
            command,
            status,
            params,
            neighbour,
        });
    }
    assert!(!lines.is_empty(), "NLSR sent no command");
    let mut text = String::from(FIXTURE_HEADER);
    for l in &lines {
        text.push_str(&l.to_line());
        text.push('\n');
    }
    std::fs::write(&path, text).expect("write the recording");
    say(&format!(
        "recorded {} commands to {}",
        lines.len(),
        path.display()
    ));
}

const FIXTURE_HEADER: &str = "\
# NLSR 24.08 (ndn-cxx 0.9.0, PSync 0.5.0) starting on NFD 24.07: every signed management
# command it sent in its first 6 seconds, recorded by `record_nlsr_startup` in
# crates/kite/tests/e2e_nlsr.rs through a proxy on NFD's unix socket. The router is
# /ndn/kite/%C1.Router/a with one neighbour, /ndn/kite/%C1.Router/b, whose face existed
# before NLSR started (the neighbour itself was not running). The format of each line is
# documented in crates/kite/tests/common/nlsr_startup.rs:
# <send_ms> <signer> <controller> <sig_ms> <format> <module>/<verb> <status> [<Field>=<value>...]
";
