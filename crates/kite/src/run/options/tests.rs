use clap::Parser;
use kite_fw::forwarder::UnsolicitedPolicy;

use super::*;

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    run: RunArgs,
}

fn args(flags: &[&str]) -> RunArgs {
    Cli::try_parse_from(std::iter::once("kite").chain(flags.iter().copied()))
        .expect("valid flags")
        .run
}

const FILE: &str = r#"
[log]
filter = "warn"
[forwarder]
threads = 4
io_threads = 3
inline = true
dispatch_prefix = 3
default_hop_limit = 16
max_interest_lifetime = 30000
[face_system]
local_only = false
max_packet_size = 4000
[face_system.unix]
path = "/file/nfd.sock"
[face_system.udp]
listen = ["127.0.0.1:7001"]
mtu = 1400
idle_timeout = 30
on_demand_limit = 50
socket_buffer = 524288
[face_system.tcp]
listen = ["127.0.0.1:7002"]
on_demand_limit = 90
[face_system.websocket]
listen = ["127.0.0.1:7003"]
on_demand_limit = 95
[face_system.ether]
interfaces = ["file0"]
on_demand_limit = 60
socket_buffer = 1048576
[metrics]
listen = "127.0.0.1:7004"
[tables]
network_region = ["/region"]
[tables.cs]
capacity = 1000
admit = false
unsolicited_policy = "admit-network"
"#;

fn file() -> Config {
    Config::parse(FILE, "file.toml").unwrap()
}

#[test]
fn without_flags_the_file_decides() {
    let mut c = file();
    apply(&mut c, &args(&[]), None).unwrap();
    assert_eq!(c, file());
}

#[test]
fn every_flag_overrides_the_file() {
    let mut c = file();
    let flags = args(&[
        "--socket",
        "/flag/nfd.sock",
        "--udp",
        "127.0.0.1:8001",
        "--udp",
        "127.0.0.1:8011",
        "--tcp",
        "127.0.0.1:8002",
        "--ws",
        "127.0.0.1:8003",
        "--ether",
        "flag0",
        "--local-only",
        "--threads",
        "2",
        "--io-threads",
        "2",
        "--inline",
        "false",
        "--cs-capacity",
        "50",
        "--log",
        "debug",
        "--dispatch-prefix",
        "0",
        "--max-packet-size",
        "2000",
        "--udp-on-demand-limit",
        "70",
        "--ether-on-demand-limit",
        "80",
        "--tcp-on-demand-limit",
        "85",
        "--ws-on-demand-limit",
        "87",
        "--ether-socket-buffer",
        "8388608",
        "--max-interest-lifetime",
        "5000",
        "--metrics",
        "127.0.0.1:8004",
    ]);
    apply(&mut c, &flags, Some("trace")).unwrap();
    let fs = &c.face_system;
    assert_eq!(fs.unix.path.as_deref(), Some(Path::new("/flag/nfd.sock")));
    assert_eq!(
        fs.udp.listen,
        [
            "127.0.0.1:8001".parse().unwrap(),
            "127.0.0.1:8011".parse().unwrap()
        ]
    );
    assert_eq!(fs.tcp.listen, ["127.0.0.1:8002".parse().unwrap()]);
    assert_eq!(fs.websocket.listen, ["127.0.0.1:8003".parse().unwrap()]);
    assert_eq!(fs.ether.interfaces, ["flag0"]);
    assert!(fs.local_only);
    assert_eq!(fs.max_packet_size, 2000);
    assert_eq!(fs.udp.on_demand_limit, 70);
    assert_eq!(fs.ether.on_demand_limit, 80);
    assert_eq!(fs.tcp.on_demand_limit, 85);
    assert_eq!(fs.websocket.on_demand_limit, 87);
    assert_eq!(fs.ether.socket_buffer, 8 << 20);
    assert_eq!(c.forwarder.threads, Some(2));
    assert_eq!(c.forwarder.io_threads, Some(2));
    assert_eq!(c.forwarder.inline, Some(false));
    assert_eq!(c.forwarder.dispatch_prefix, 0);
    assert_eq!(c.forwarder.max_interest_lifetime, 5000);
    assert_eq!(c.tables.cs.capacity, 50);
    assert_eq!(c.metrics.listen, Some("127.0.0.1:8004".parse().unwrap()));
    assert_eq!(c.log.filter, Some(LogFilter("debug".into())));
    // what no flag sets stays as the file has it
    assert_eq!(fs.udp.mtu, 1400);
    assert_eq!(c.forwarder.default_hop_limit, 16);
    assert!(!c.tables.cs.admit);
}

#[test]
fn kite_log_overrides_the_file_and_the_flag_overrides_both() {
    let mut c = file();
    apply(&mut c, &args(&[]), Some("trace")).unwrap();
    assert_eq!(c.log.filter, Some(LogFilter("trace".into())));
    let e = apply(&mut file(), &args(&[]), Some("a=b=c")).unwrap_err();
    assert!(e.to_string().starts_with("$KITE_LOG: "), "{e}");
    let e = apply(&mut file(), &args(&["--log", "a=b=c"]), None).unwrap_err();
    assert!(e.to_string().starts_with("--log: "), "{e}");
}

#[test]
fn a_bare_inline_flag_means_true() {
    let mut c = file();
    c.forwarder.inline = Some(false);
    apply(&mut c, &args(&["--inline"]), None).unwrap();
    assert_eq!(c.forwarder.inline, Some(true));
}

#[test]
fn max_packet_size_has_one_rule_for_the_flag_and_the_file() {
    for (n, ok) in [
        ("1023", false),
        ("1024", true),
        ("8800", true),
        ("8801", false),
    ] {
        let flag = Cli::try_parse_from(["kite", "--max-packet-size", n]);
        let file = Config::parse(&format!("[face_system]\nmax_packet_size = {n}\n"), "f.toml");
        assert_eq!(flag.is_ok(), ok, "--max-packet-size {n}");
        assert_eq!(file.is_ok(), ok, "max_packet_size = {n}");
        if !ok {
            let why = "max_packet_size must be between 1024 and 8800";
            assert!(flag.err().unwrap().to_string().contains(why));
            assert!(file.unwrap_err().to_string().contains(why));
        }
    }
}

#[test]
fn thread_counts_outside_1_to_64_are_refused_on_the_command_line() {
    for n in ["0", "65"] {
        assert!(Cli::try_parse_from(["kite", "--threads", n]).is_err());
        assert!(Cli::try_parse_from(["kite", "--io-threads", n]).is_err());
        let file = Config::parse(&format!("[forwarder]\nio_threads = {n}\n"), "t.toml");
        assert!(file.is_err(), "the file refuses {n} as the flag does");
    }
    for n in ["1", "64"] {
        assert!(Cli::try_parse_from(["kite", "--io-threads", n]).is_ok());
        let file = Config::parse(&format!("[forwarder]\nio_threads = {n}\n"), "t.toml");
        assert!(file.is_ok(), "the file takes {n} as the flag does");
    }
}

#[test]
fn one_io_thread_per_two_cores_and_forwarding_threads_on_the_rest() {
    assert_eq!(io_threads_for(1), 1);
    assert_eq!(io_threads_for(2), 1);
    assert_eq!(io_threads_for(3), 1);
    assert_eq!(io_threads_for(8), 4);
    assert_eq!(io_threads_for(1024), 64);
    assert_eq!(
        default_threads(1),
        cores().saturating_sub(1).clamp(1, 64) as u8
    );
}

#[test]
fn on_demand_limits_follow_the_configuration_files_rule_on_the_command_line() {
    for flag in [
        "--udp-on-demand-limit",
        "--ether-on-demand-limit",
        "--tcp-on-demand-limit",
        "--ws-on-demand-limit",
    ] {
        for n in ["0", "1048577", "many"] {
            assert!(
                Cli::try_parse_from(["kite", flag, n]).is_err(),
                "{flag} {n}"
            );
        }
        assert!(Cli::try_parse_from(["kite", flag, "1048576"]).is_ok());
    }
}

#[test]
fn the_udp_socket_buffer_follows_the_configuration_files_rule_on_the_command_line() {
    let file = "[face_system.udp]\nsocket_buffer = 4096\n";
    let e = Config::parse(file, "t.toml").expect_err("4096 octets refused in the file");
    let Err(flag) = Cli::try_parse_from(["kite", "--udp-socket-buffer", "4096"]) else {
        panic!("--udp-socket-buffer 4096 accepted");
    };
    let rule = crate::config::check_budget(4096).unwrap_err();
    assert!(e.to_string().contains(&rule), "{e}");
    assert!(flag.to_string().contains(&rule), "{flag}");
    assert!(Cli::try_parse_from(["kite", "--udp-socket-buffer", "65536"]).is_ok());
}

#[test]
fn max_interest_lifetimes_outside_the_files_range_are_refused_on_the_command_line() {
    for bad in ["99", "3600001", "-1", "x"] {
        let r = Cli::try_parse_from(["kite", "--max-interest-lifetime", bad]);
        assert!(r.is_err(), "--max-interest-lifetime {bad} accepted");
    }
    let file = "[forwarder]\nmax_interest_lifetime = 99\n";
    let e = Config::parse(file, "t.toml").expect_err("99 ms refused in the file");
    let Err(flag) = Cli::try_parse_from(["kite", "--max-interest-lifetime", "99"]) else {
        panic!("--max-interest-lifetime 99 accepted");
    };
    let rule = crate::config::check_max_interest_lifetime(99).unwrap_err();
    assert!(e.to_string().contains(&rule), "{e}");
    assert!(flag.to_string().contains(&rule), "{flag}");
}

#[test]
fn resolving_fills_threads_socket_and_log_filter() {
    let mut c = Config::default();
    c.face_system.unix.path = Some("/x/nfd.sock".into());
    resolve(&mut c);
    assert!(matches!(c.forwarder.threads, Some(1..=64)));
    let two_cores_or_fewer = std::thread::available_parallelism().map_or(1, |n| n.get()) <= 2;
    assert_eq!(c.forwarder.inline, Some(two_cores_or_fewer));
    assert_eq!(
        c.face_system.unix.path.as_deref(),
        Some(Path::new("/x/nfd.sock"))
    );
    assert_eq!(c.log.filter, Some(LogFilter("info".into())));
    let mut f = file();
    resolve(&mut f);
    assert_eq!(f.forwarder.threads, Some(4));
    assert_eq!(f.log.filter, Some(LogFilter("warn".into())));
}

/// The URIs of the listeners `r` opens, in order.
fn listeners(r: &RuntimeConfig) -> Vec<String> {
    r.listeners.iter().map(|l| l.uri().to_string()).collect()
}

#[test]
fn the_runtime_starts_with_the_file_values() {
    let r = runtime_config(&file());
    assert_eq!(r.forwarding_threads, 4);
    assert_eq!(r.io_threads, 3);
    assert!(r.inline_forwarding);
    assert_eq!(r.dispatch_prefix_len, 3);
    assert_eq!(
        listeners(&r),
        [
            "unix:///file/nfd.sock",
            "tcp4://127.0.0.1:7002",
            "ws://127.0.0.1:7003"
        ]
    );
    assert_eq!(r.udp, ["127.0.0.1:7001".parse().unwrap()]);
    assert_eq!(r.ether, ["file0"]);
    assert_eq!(r.face.udp_mtu, 1400);
    assert_eq!(r.face.max_packet_size, 4000);
    assert_eq!(r.face.idle_timeout, Duration::from_secs(30));
    assert_eq!(r.face.udp_on_demand_limit, 50);
    assert_eq!(r.face.udp_socket_buffer, 512 << 10);
    assert_eq!(r.face.ether_on_demand_limit, 60);
    assert_eq!(r.face.tcp_on_demand_limit, 90);
    assert_eq!(r.face.ws_on_demand_limit, 95);
    assert_eq!(r.face.ether_socket_buffer, 1 << 20);
    let f = &r.forwarder;
    assert_eq!(f.pcct.cs_capacity, 250, "1000 packets over 4 threads");
    assert!(!f.cs_admit && f.cs_serve);
    assert_eq!(f.unsolicited, UnsolicitedPolicy::AdmitNetwork);
    assert_eq!(f.default_hop_limit, 16);
    assert_eq!(f.max_interest_lifetime, Duration::from_secs(30));
    assert_eq!(f.network_region, ["/region".parse().unwrap()]);
}

#[test]
fn local_only_drops_udp_and_tcp_but_keeps_websocket_and_zero_hashes_whole_names() {
    let mut c = file();
    c.face_system.local_only = true;
    c.forwarder.dispatch_prefix = 0;
    let r = runtime_config(&c);
    assert!(r.udp.is_empty());
    assert_eq!(
        listeners(&r),
        ["unix:///file/nfd.sock", "ws://127.0.0.1:7003"]
    );
    assert_eq!(r.dispatch_prefix_len, usize::MAX);
}

#[test]
fn the_defaults_are_what_kite_run_did_without_a_file() {
    let mut c = Config::default();
    c.forwarder.threads = Some(2);
    let r = runtime_config(&c);
    let loopback = ["127.0.0.1:6363".parse().unwrap()];
    assert_eq!(r.udp, loopback);
    assert_eq!(listeners(&r), ["tcp4://127.0.0.1:6363"]);
    assert_eq!(r.dispatch_prefix_len, 2);
    assert_eq!(r.forwarder.pcct.cs_capacity, 32768);
    assert_eq!(r.face.udp_mtu, kite_face::DEFAULT_UDP_MTU);
    assert_eq!(r.face.max_packet_size, 8800);
    assert_eq!(r.forwarder.unsolicited, UnsolicitedPolicy::DropAll);
}

#[test]
fn octet_budgets_follow_one_rule_in_the_file_and_on_the_command_line() {
    for flag in [
        "--cs-capacity-bytes",
        "--reassembly-bytes",
        "--output-queue-bytes",
    ] {
        let e = Cli::try_parse_from(["kite", flag, "65535"])
            .err()
            .expect("refused")
            .to_string();
        assert!(e.contains("must be at least 65536 octets"), "{flag}: {e}");
    }
    for text in [
        "[tables.cs]\ncapacity_bytes = 65535\n",
        "[face_system]\nreassembly_bytes = 65535\n",
        "[face_system]\noutput_queue_bytes = 65535\n",
    ] {
        let e = Config::parse(text, "t.toml").unwrap_err().to_string();
        assert!(e.contains("must be at least 65536 octets"), "{text}: {e}");
    }
    let mut c = Config::default();
    let flags = [
        "--cs-capacity-bytes",
        "1000000",
        "--reassembly-bytes",
        "65536",
        "--output-queue-bytes",
        "1048576",
    ];
    apply(&mut c, &args(&flags), None).unwrap();
    c.forwarder.threads = Some(2);
    let r = runtime_config(&c);
    assert_eq!(r.forwarder.pcct.cs_bytes, 500_000, "split over the threads");
    assert_eq!(r.face.reassembly.max_bytes, 65536);
    assert_eq!(r.face.output_queue_bytes, 1 << 20);
}

#[test]
fn propagation_key_flags_override_the_file_with_paths_from_the_working_directory() {
    let mut c = Config::parse(
        "[rib]\nauto_prefix_propagate = true\npropagate_key = \"file.safebag\"\n\
         propagate_key_password_file = \"file.password\"\n",
        "file.toml",
    )
    .unwrap();
    let flags = args(&[
        "--propagate-key",
        "host.safebag",
        "--propagate-key-password-file",
        "/etc/kite/password",
        "--propagate-chain",
        "site.ndncert",
        "--propagate-chain",
        "root.ndncert",
    ]);
    apply(&mut c, &flags, None).unwrap();
    let here = std::env::current_dir().unwrap();
    let rib = &c.rib;
    assert_eq!(rib.propagate_key, Some(here.join("host.safebag")));
    assert_eq!(
        rib.propagate_key_password_file.as_deref(),
        Some(Path::new("/etc/kite/password"))
    );
    assert_eq!(
        rib.propagate_chain,
        [here.join("site.ndncert"), here.join("root.ndncert")]
    );
    assert_eq!(rib.propagate_certificate, None);

    // With the key, propagation needs no prefixes; without it, its companions are refused.
    let mut c = Config::default();
    apply(
        &mut c,
        &args(&["--auto-prefix-propagate", "--propagate-key", "k"]),
        None,
    )
    .unwrap();
    let e = apply(
        &mut Config::default(),
        &args(&["--propagate-certificate", "c.ndncert"]),
        None,
    )
    .unwrap_err();
    assert!(e.to_string().contains("belongs to propagate_key"), "{e}");
}

#[test]
fn http3_listeners_come_from_the_flag_over_the_file_and_stay_with_local_only() {
    let mut c = Config::default();
    c.face_system.http3.listen = vec!["127.0.0.1:9001".parse().unwrap()];
    let args = args(&["--http3", "127.0.0.1:9002", "--local-only"]);
    apply(&mut c, &args, None).unwrap();
    let r = runtime_config(&c);
    assert!(r.udp.is_empty(), "local-only");
    let cert = kite_face::Certificate::self_signed(&[], kite_face::h3::SELF_SIGNED_VALIDITY);
    let slot = kite_face::h3::CertSlot::new(cert.unwrap());
    let uris: Vec<String> = (webtransport_listeners(&c, &slot).iter())
        .map(|l| l.uri().to_string())
        .collect();
    assert_eq!(uris, ["quic://127.0.0.1:9002"]);
}
