use std::collections::BTreeSet;

use kite_mgmt_proto::nfd::RouteOrigin;
use toml::{Spanned, Value};

use super::*;

const EXAMPLE: &str = include_str!("../../../../docs/kite.example.toml");
const DOC: &str = include_str!("../../../../docs/config.md");

fn parse(text: &str) -> Result<Config, String> {
    Config::parse(text, "test.toml").map_err(|e| e.to_string())
}

fn parse_err(text: &str) -> String {
    parse(text).expect_err("should be refused")
}

fn name(s: &str) -> kite_packet::Name {
    s.parse().unwrap()
}

/// A configuration with every key set, built field by field (no `..Default::default()`), so a
/// new key does not compile here until it is added, and the tests below then require it
/// documented and shown in the example.
fn every_key() -> Config {
    let uri = |s: &str| Uri(kite_face::FaceUri::canonize(s).unwrap());
    Config {
        log: Log {
            filter: Some(LogFilter("debug".into())),
        },
        forwarder: Forwarder {
            threads: Some(3),
            io_threads: Some(2),
            inline: Some(false),
            dispatch_prefix: 1,
            default_hop_limit: 9,
            max_interest_lifetime: 30_000,
        },
        face_system: FaceSystem {
            local_only: true,
            max_packet_size: 4096,
            reassembly_bytes: 1 << 20,
            output_queue_bytes: 64 << 20,
            lp_reliability_frames: 128,
            lp_reliability_bytes: 1 << 20,
            unix: Unix {
                path: Some("/tmp/kite.sock".into()),
                shm: false,
                shm_ring_size: 1 << 16,
            },
            udp: Udp {
                listen: vec!["0.0.0.0:6363".parse().unwrap()],
                mtu: 1400,
                idle_timeout: 30,
                on_demand_limit: 100,
                socket_buffer: 1 << 20,
                multicast: true,
                multicast_group: "224.0.23.171:56364".parse().unwrap(),
                multicast_whitelist: vec!["eth0".into()],
                multicast_blacklist: vec!["docker0".into()],
            },
            tcp: Tcp {
                listen: vec!["0.0.0.0:6363".parse().unwrap()],
                reconnect_initial: 2,
                reconnect_max: 120,
                on_demand_limit: 300,
            },
            websocket: WebSocket {
                listen: vec!["127.0.0.1:9696".parse().unwrap()],
                on_demand_limit: 400,
            },
            http3: Http3 {
                listen: vec!["0.0.0.0:4433".parse().unwrap()],
                path: "/ndn".into(),
                cert: Some("kite-cert.pem".into()),
                key: Some("kite-key.pem".into()),
                max_sessions: 500,
                max_handshakes: 32,
                idle_timeout: 30,
                datagram_queue: 128 << 10,
            },
            ether: Ether {
                interfaces: vec!["eth1".into()],
                on_demand_limit: 200,
                socket_buffer: 8 << 20,
                xdp: vec!["eth2".into()],
                xdp_umem: 1 << 20,
                xdp_steering: false,
            },
        },
        metrics: Metrics {
            listen: Some("127.0.0.1:9363".parse().unwrap()),
        },
        tables: Tables {
            network_region: vec![Prefix(name("/region"))],
            cs: Cs {
                capacity: 10,
                capacity_bytes: 1 << 20,
                admit: false,
                serve: false,
                unsolicited_policy: Unsolicited::AdmitAll,
            },
            strategy_choice: [(
                Prefix(name("/m")),
                Strategy(name("/localhost/nfd/strategy/multicast")),
            )]
            .into(),
        },
        rib: Rib {
            readvertise_nlsr: false,
            auto_prefix_propagate: true,
            propagate_prefixes: vec![Prefix(name("/home/laptop"))],
            propagate_key: Some("laptop.ndnkey".into()),
            propagate_key_password_file: Some("laptop.password".into()),
            propagate_certificate: Some("laptop.ndncert".into()),
            propagate_chain: vec!["home.ndncert".into()],
            localhop_registration: true,
            localhost_security: Some("localhost-security.conf".into()),
            localhop_security: Some("localhop-security.conf".into()),
            prefix_announcement_validation: Some("announcements.conf".into()),
        },
        faces: vec![FaceEntry {
            uri: Spanned::new(0..0, uri("udp4://192.0.2.1:6363")),
            local_uri: Some(uri("udp4://0.0.0.0:6363")),
            persistency: Persistency::Permanent,
            mtu: Some(1200),
            lp_reliability: true,
        }],
        routes: vec![RouteEntry {
            prefix: Prefix(name("/r")),
            face: Spanned::new(0..0, FaceRef::Uri(uri("udp4://192.0.2.1:6363"))),
            cost: 5,
            origin: Origin(RouteOrigin::NLSR),
            child_inherit: false,
            capture: true,
        }],
        authorize: vec![Authorize {
            certfile: "any".into(),
            privileges: vec!["faces".into(), "fib".into()],
        }],
    }
}

/// Every key path of a TOML document: `face_system.udp.listen`, `face.uri` for arrays of
/// tables; a table keyed by names (`tables.strategy_choice`) is one key.
fn keys(v: &Value, path: &str, out: &mut BTreeSet<String>) {
    let join = |k: &str| {
        if path.is_empty() {
            k.to_owned()
        } else {
            format!("{path}.{k}")
        }
    };
    match v {
        Value::Table(t) if !t.is_empty() && t.keys().all(|k| !k.starts_with('/')) => {
            for (k, v) in t {
                keys(v, &join(k), out);
            }
        }
        Value::Array(a) if a.first().is_some_and(Value::is_table) => {
            for item in a {
                keys(item, path, out);
            }
        }
        _ => {
            out.insert(path.to_owned());
        }
    }
}

fn key_set(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    keys(&text.parse::<toml::Table>().unwrap().into(), "", &mut out);
    out
}

#[test]
fn an_empty_file_is_the_default() {
    assert_eq!(parse("").unwrap(), Config::default());
    let d = Config::default();
    assert_eq!(
        d.face_system.udp.listen,
        vec!["127.0.0.1:6363".parse().unwrap()]
    );
    assert_eq!(d.face_system.tcp.listen, d.face_system.udp.listen);
    assert!(d.face_system.websocket.listen.is_empty());
    assert_eq!(d.tables.cs.capacity, 65536);
    assert!(d.tables.cs.admit && d.tables.cs.serve);
    assert_eq!(d.forwarder.dispatch_prefix, 2);
    assert_eq!(d.forwarder.threads, None);
}

#[test]
fn a_section_keeps_the_defaults_of_the_keys_it_leaves_out() {
    let c = parse("[face_system.udp]\nmtu = 1400\n[tables.cs]\nadmit = false\n").unwrap();
    assert_eq!(c.face_system.udp.mtu, 1400);
    assert_eq!(c.face_system.udp.listen, Udp::default().listen);
    assert!(!c.tables.cs.admit);
    assert!(c.tables.cs.serve);
    assert_eq!(c.tables.cs.capacity, 65536);
}

#[test]
fn the_example_parses_and_shows_every_key() {
    let c = Config::parse(EXAMPLE, "docs/kite.example.toml").unwrap();
    assert_eq!(c.faces.len(), 2);
    assert_eq!(c.routes.len(), 2);
    assert_eq!(c.forwarder.threads, Some(2));
    assert_eq!(c.tables.cs.unsolicited_policy, Unsolicited::AdmitLocal);
    // Only Ethernet faces use a local URI, and the example's faces are UDP ones.
    let mut wanted = key_set(&every_key().to_toml());
    wanted.remove("face.local_uri");
    // Trust schemas and keys are files of their own: the example names each in a comment.
    for k in [
        "rib.localhost_security",
        "rib.localhop_security",
        "rib.prefix_announcement_validation",
        "rib.propagate_key",
        "rib.propagate_key_password_file",
        "rib.propagate_certificate",
        "rib.propagate_chain",
        "face_system.http3.cert",
        "face_system.http3.key",
    ] {
        wanted.remove(k);
    }
    let shown = key_set(EXAMPLE);
    let missing: Vec<_> = wanted.difference(&shown).collect();
    assert!(
        missing.is_empty(),
        "keys missing from the example: {missing:?}"
    );
}

#[test]
fn the_documentation_describes_every_key_and_holds_the_example() {
    let all = key_set(&every_key().to_toml());
    assert!(all.len() > 25, "{all:?}");
    let undocumented: Vec<_> = all
        .iter()
        .filter(|k| !DOC.contains(&format!("| `{k}` |")))
        .collect();
    assert!(
        undocumented.is_empty(),
        "keys without a row in docs/config.md: {undocumented:?}"
    );
    assert!(
        DOC.contains(EXAMPLE),
        "docs/config.md must hold docs/kite.example.toml verbatim"
    );
}

#[test]
fn the_printed_configuration_reads_back_the_same() {
    let c = every_key();
    let again = parse(&c.to_toml()).unwrap();
    assert_eq!(again, c);
    let example = parse(EXAMPLE).unwrap();
    assert_eq!(parse(&example.to_toml()).unwrap(), example);
}

#[test]
fn faces_and_routes_take_uris_ids_names_and_numbers() {
    let c = parse(
        r#"
[[face]]
uri = "udp://127.0.0.1"

[[route]]
prefix = "/a"
face = "udp4://127.0.0.1:6363"

[[route]]
prefix = "/b"
face = 300
origin = 42
cost = 7
capture = true
"#,
    )
    .unwrap();
    // canonized as `kite face create` does: family and default port
    assert_eq!(
        c.faces[0].uri.get_ref().to_string(),
        "udp4://127.0.0.1:6363"
    );
    assert_eq!(c.faces[0].persistency, Persistency::Persistent);
    assert_eq!(c.faces[0].mtu, None);
    let (a, b) = (&c.routes[0], &c.routes[1]);
    assert_eq!(a.origin, Origin(RouteOrigin::STATIC));
    assert!(a.child_inherit && !a.capture);
    assert_eq!(a.cost, 0);
    assert_eq!(b.face.get_ref(), &FaceRef::Id(300));
    assert_eq!(b.origin, Origin(RouteOrigin(42)));
    assert!(b.capture);
    assert_eq!(b.cost, 7);
}

#[test]
fn strategies_are_named_in_full_or_by_their_last_component() {
    let c = parse(
        "[tables.strategy_choice]\n\"/\" = \"best-route\"\n\"/m\" = \"/localhost/nfd/strategy/multicast/v=5\"\n",
    )
    .unwrap();
    let s = &c.tables.strategy_choice;
    assert_eq!(
        s[&Prefix(name("/"))].0,
        name("/localhost/nfd/strategy/best-route")
    );
    assert_eq!(
        s[&Prefix(name("/m"))].0,
        name("/localhost/nfd/strategy/multicast/v=5")
    );
}

#[test]
fn an_unknown_key_is_named_with_its_file_and_line() {
    let e = parse_err("[forwarder]\nthreads = 2\n\n[face_system.udp]\nmtuu = 5\n");
    assert!(e.starts_with("test.toml:5:1: unknown key `mtuu`"), "{e}");
    assert!(e.contains("5 | mtuu = 5"), "{e}");
    let e = parse_err("[face_sytem]\n");
    assert!(
        e.starts_with("test.toml:1:2: unknown key `face_sytem`"),
        "{e}"
    );
    let e = parse_err("[[route]]\nprefix = \"/a\"\nface = 1\nflags = 3\n");
    assert!(e.starts_with("test.toml:4:1: unknown key `flags`"), "{e}");
}

#[test]
fn bad_values_are_refused_at_their_line() {
    let cases = [
        (
            "[forwarder]\nthreads = 0\n",
            "2:11",
            "threads must be between 1 and 64",
        ),
        (
            "[forwarder]\nthreads = 65\n",
            "2:11",
            "threads must be between 1 and 64",
        ),
        ("[forwarder]\nthreads = \"x\"\n", "2:11", "invalid type"),
        (
            "[face_system.udp]\nmtu = 10\n",
            "2:7",
            "mtu must be between 64",
        ),
        (
            "[face_system]\nmax_packet_size = 8801\n",
            "2:19",
            "max_packet_size must be between 1024 and 8800",
        ),
        (
            "[face_system.unix]\nshm_ring_size = 100000\n",
            "2:17",
            "shm_ring_size must be a power of two",
        ),
        (
            "[face_system.udp]\nidle_timeout = 0\n",
            "2:16",
            "idle_timeout",
        ),
        (
            "[face_system.udp]\non_demand_limit = 0\n",
            "2:19",
            "on_demand_limit must be between 1 and 1048576, not 0",
        ),
        (
            "[face_system.ether]\non_demand_limit = 1048577\n",
            "2:19",
            "on_demand_limit must be between 1 and 1048576",
        ),
        (
            "[face_system.ether]\nsocket_buffer = 4096\n",
            "2:17",
            "must be at least 65536 octets",
        ),
        (
            "[face_system.tcp]\nlisten = [\"nowhere\"]\n",
            "2:11",
            "socket address",
        ),
        ("[log]\nfilter = \"a=b=c\"\n", "2:10", "is not a log filter"),
        (
            "[log]\nfilter = \"verbose\"\n",
            "2:10",
            "unknown level \"verbose\"",
        ),
        (
            "[log]\nfilter = \"kite=debg\"\n",
            "2:10",
            "unknown level \"debg\"",
        ),
        (
            "[log]\nfilter = \"info,kit=debug\"\n",
            "2:10",
            "unknown target \"kit\"",
        ),
        (
            "[log]\nfilter = \"info,\"\n",
            "2:10",
            "a directive has no level",
        ),
        (
            "[tables.cs]\nunsolicited_policy = \"some\"\n",
            "2:22",
            "unknown variant `some`",
        ),
        (
            "[tables.strategy_choice]\n\"/\" = \"fastest\"\n",
            "2:7",
            "unknown strategy \"fastest\"",
        ),
        (
            "[tables]\nnetwork_region = [\"/a/%zz\"]\n",
            "2:18",
            "is not an NDN name",
        ),
        (
            "[[face]]\nuri = \"foo://x\"\n",
            "2:7",
            "is not a usable face URI",
        ),
        (
            "[[face]]\nuri = \"udp4://127.0.0.1:1\"\npersistency = \"on-demand\"\n",
            "3:15",
            "unknown variant `on-demand`",
        ),
        (
            "[[route]]\nprefix = \"/a\"\nface = -1\n",
            "3:8",
            "-1 is negative",
        ),
        (
            "[[route]]\nprefix = \"/a\"\nface = 1\norigin = \"mine\"\n",
            "4:10",
            "unknown origin \"mine\"",
        ),
        (
            "[[route]]\nprefix = \"/a\"\n",
            "1:1",
            "missing field `face`",
        ),
        ("x = \n", "1:5", "string values must be quoted"),
    ];
    for (text, at, message) in cases {
        let e = parse_err(text);
        assert!(e.starts_with(&format!("test.toml:{at}: ")), "{text:?}: {e}");
        assert!(e.contains(message), "{text:?}: {e}");
    }
}

#[test]
fn routes_name_declared_faces_and_faces_are_declared_once() {
    let e = parse_err(
        "[[face]]\nuri = \"udp4://127.0.0.1:1\"\n\n[[route]]\nprefix = \"/a\"\nface = \"udp4://127.0.0.1:2\"\n",
    );
    assert!(
        e.starts_with("test.toml:6:8: route /a: no [[face]] has uri = \"udp4://127.0.0.1:2\""),
        "{e}"
    );
    let e = parse_err(
        "[[face]]\nuri = \"udp4://127.0.0.1:1\"\n[[face]]\nuri = \"udp://127.0.0.1:1\"\n",
    );
    assert!(
        e.starts_with("test.toml:4:7: face udp4://127.0.0.1:1 is declared twice"),
        "{e}"
    );
}

#[test]
fn an_unreadable_file_names_the_path() {
    let e = Config::load(std::path::Path::new("/nonexistent/kite.toml")).unwrap_err();
    assert_eq!(e.to_string(), "cannot read /nonexistent/kite.toml");
}

#[test]
fn log_filters_take_levels_and_kite_targets_only() {
    for ok in [
        "info",
        "OFF",
        "trace",
        "info,kite_runtime=debug",
        "kite=trace",
        " warn , kite_mgmt_proto=info ",
    ] {
        assert!(LogFilter::parse(ok).is_ok(), "{ok:?}");
    }
    for bad in [
        "",
        "inf",
        "verbose",
        "1",
        "kite=debg",
        "kit=debug",
        "kite::=info",
        "=info",
    ] {
        let e = LogFilter::parse(bad).unwrap_err();
        assert!(e.contains("is not a log filter"), "{bad:?}: {e}");
    }
}

#[test]
fn propagation_needs_prefixes_to_propagate() {
    let e = parse_err("[rib]\nauto_prefix_propagate = true\n");
    assert!(e.contains("propagate_prefixes"), "{e}");
    let c =
        parse("[rib]\nauto_prefix_propagate = true\npropagate_prefixes = [\"/home\"]\n").unwrap();
    assert_eq!(c.rib.propagate_prefixes, [Prefix(name("/home"))]);
    assert!(
        c.rib.readvertise_nlsr,
        "on by default, as in NFD's sample configuration"
    );
    assert!(!c.rib.localhop_registration);
}

#[test]
fn a_propagation_key_stands_for_the_prefixes_and_its_companions_need_it() {
    let c =
        parse("[rib]\nauto_prefix_propagate = true\npropagate_key = \"host.ndnkey\"\n").unwrap();
    assert!(
        c.rib.propagate_prefixes.is_empty(),
        "the key's identity, at start"
    );
    assert_eq!(c.rib.propagate_key, Some("host.ndnkey".into()));
    for key in [
        "propagate_key_password_file = \"p\"",
        "propagate_certificate = \"c.ndncert\"",
        "propagate_chain = [\"root.ndncert\"]",
    ] {
        let e = parse_err(&format!("[rib]\n{key}\n"));
        let name = key.split(' ').next().unwrap();
        assert!(
            e.contains(&format!("{name} belongs to propagate_key")),
            "{key}: {e}"
        );
    }
}

#[test]
fn the_multicast_group_must_be_multicast() {
    let e = parse_err("[face_system.udp]\nmulticast_group = \"192.0.2.1:56363\"\n");
    assert!(e.contains("not an IPv4 multicast address"), "{e}");
    assert_eq!(
        parse("").unwrap().face_system.udp.multicast_group,
        NDN_UDP_MULTICAST
    );
    assert!(!parse("").unwrap().face_system.udp.multicast);
}
