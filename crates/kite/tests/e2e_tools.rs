//! `kite ping`, `kite put` and `kite get` through a real `kite run`: probes answered by
//! `kite ping --server` with a parsed summary, a 100 MB object put and fetched back with the
//! same SHA-256, every congestion control completing a fetch, and clear errors; over UDP,
//! Data the forwarder fragments reassembled and an oversized Interest fragmented; RDR version
//! discovery and its fallback; `put --once` answering a late retransmission; and two producers
//! whose registration commands collide on the timestamp both registered.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::tools::{kite, random_file, sha256_hex, sha256_of, summary_value, Put};
use common::{free_tcp_port, free_udp_port, reap, terminate, Daemon};
use kite_testkit::skip;

#[test]
fn ping_server_answers_every_probe_and_the_summary_counts_them() {
    let d = Daemon::local(&[]);
    let mut server = Command::new(env!("CARGO_BIN_EXE_kite"))
        .args([
            "ping",
            "--server",
            "/e2e/ping",
            "-c",
            "4",
            "--socket",
            d.socket(),
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the ping server");
    let mut lines = BufReader::new(server.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    assert_eq!(first, "PING SERVER /e2e/ping/ping", "registered");

    let out = kite(&[
        "ping",
        "/e2e/ping",
        "-c",
        "4",
        "-i",
        "50",
        "--start-seq",
        "100",
        "--socket",
        d.socket(),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    for seq in 100..104 {
        assert!(
            text.contains(&format!("content from /e2e/ping: seq={seq} time=")),
            "{text}"
        );
    }
    assert!(
        text.contains("4 packets transmitted, 4 received, 0.0% lost, 0 nacked"),
        "{text}"
    );
    let rtt = text
        .lines()
        .find_map(|l| l.strip_prefix("rtt min/avg/max/mdev = "))
        .expect("rtt line");
    let v: Vec<f64> = rtt
        .trim_end_matches(" ms")
        .split('/')
        .map(|x| x.parse().unwrap())
        .collect();
    assert!(v[0] > 0.0 && v[0] <= v[1] && v[1] <= v[2], "{rtt}");

    assert!(
        reap(&mut server, Duration::from_secs(10)),
        "the server stops after -c probes"
    );
    let served: Vec<String> = lines.map_while(Result::ok).collect();
    let asked: Vec<&String> = served
        .iter()
        .filter(|l| l.starts_with("interest "))
        .collect();
    assert_eq!(asked.len(), 4, "{served:?}");
    assert_eq!(asked[0], "interest /e2e/ping/ping/100");
    assert!(
        served.iter().any(|l| l.contains("4 probes answered")),
        "{served:?}"
    );
}

#[test]
fn ping_without_a_server_times_out_or_is_nacked() {
    let d = Daemon::local(&[]);
    let out = kite(&[
        "ping",
        "/nobody",
        "-c",
        "1",
        "--timeout",
        "300",
        "--socket",
        d.socket(),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("1 packets transmitted, 0 received, 100.0% lost"),
        "{text}"
    );
}

/// Size of the big object. 100 MB: in the debug build the put (signing every segment) takes
/// about 10 s and the get about 2 s on the development machine.
const BIG: usize = 100_000_000;

#[test]
fn hundred_megabytes_put_and_get_back_with_the_same_sha256() {
    let d = Daemon::local(&[]);
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    let want = random_file(&input, BIG, 0x6b697465);
    let started = Instant::now();
    let mut put = Put::start(d.socket(), "/e2e/big", &input, &[]);
    let published = started.elapsed();
    assert!(
        put.versioned.starts_with("/e2e/big/v="),
        "{}",
        put.versioned
    );
    let output = dir.path().join("out");
    let started = Instant::now();
    let out = kite(&[
        "get",
        "/e2e/big",
        "-o",
        output.to_str().unwrap(),
        "--socket",
        d.socket(),
    ]);
    let fetched = started.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(sha256_of(&output), want);
    assert_eq!(summary_value(&stderr, "Octets"), BIG.to_string());
    assert_eq!(summary_value(&stderr, "Segments"), "12500");
    assert_eq!(summary_value(&stderr, "Version"), put.versioned);
    eprintln!("100 MB: published in {published:?}, fetched in {fetched:?}\n{stderr}");
    assert!(put.stop(), "kite put stops on SIGTERM");
}

#[test]
fn every_congestion_control_completes_and_stdin_and_stdout_work() {
    let d = Daemon::local(&[]);
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    let want = random_file(&input, 3_000_000, 7);
    for cc in ["aimd", "cubic", "fixed"] {
        // A name per run, so no run is served from the Content Store by the one before.
        let name = format!("/e2e/cc/{cc}");
        let _put = Put::start(d.socket(), &name, &input, &["--chunk-size", "4000"]);
        let output = dir.path().join(cc);
        let out = kite(&[
            "get",
            &name,
            "--cc",
            cc,
            "--window",
            "8",
            "--max-window",
            "64",
            "-o",
            output.to_str().unwrap(),
            "--socket",
            d.socket(),
        ]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{cc}: {stderr}");
        assert_eq!(sha256_of(&output), want, "{cc}");
        assert_eq!(summary_value(&stderr, "Segments"), "750", "{cc}");
    }
    // Standard input to put, standard output from get.
    let mut put = Command::new(env!("CARGO_BIN_EXE_kite"))
        .args(["put", "/e2e/stdin", "-", "--once", "--socket", d.socket()])
        .stdin(std::fs::File::open(&input).unwrap())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(put.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let out = kite(&["get", line.trim(), "--socket", d.socket()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.len() == 3_000_000 && sha256_hex(&out.stdout) == want);
    assert!(
        reap(&mut put, Duration::from_secs(10)),
        "--once: put exits once all is served"
    );
}

#[test]
fn bad_input_gets_clear_errors() {
    let out = kite(&["get", "not-a-name"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("is not an NDN name"), "{err}");
    let out = kite(&["get", "/x", "--socket", "/nonexistent/kite.sock"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("/nonexistent/kite.sock"),
        "names the path tried: {err}"
    );
    let out = kite(&[
        "put",
        "/x",
        "/nonexistent/file",
        "--socket",
        "/nonexistent/kite.sock",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("reading /nonexistent/file"), "{err}");
    let d = Daemon::local(&[]);
    let out = kite(&[
        "get",
        "/unrouted",
        "--socket",
        d.socket(),
        "--max-retries",
        "0",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("/unrouted"), "{err}");
}

#[test]
fn put_signs_with_the_kind_and_key_asked_for() {
    let d = Daemon::local(&[]);
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    random_file(&input, 20_000, 3);
    let key = dir.path().join("key.pem");
    let public = dir.path().join("key.pub.pem");
    let gen = kite(&[
        "key",
        "generate",
        "--type",
        "ecdsa-p256",
        "--name",
        "/e2e/alice",
        "--out",
        key.to_str().unwrap(),
        "--pub-out",
        public.to_str().unwrap(),
    ]);
    assert!(
        gen.status.success(),
        "{}",
        String::from_utf8_lossy(&gen.stderr)
    );
    let put = Put::start(
        d.socket(),
        "/e2e/signed",
        &input,
        &["--sign", "ecdsa-p256", "--key", key.to_str().unwrap()],
    );
    let versioned: kite_packet::Name = put.versioned.parse().unwrap();
    let verifier = kite_security::KeyFile::read(&public)
        .unwrap()
        .verifier()
        .unwrap();
    let mut conn = common::peer::Conn::unix(d.socket());
    for seg in 0..3 {
        let name = versioned
            .clone()
            .append(kite_packet::OwnedComponent::segment(seg).as_ref());
        let data = conn.fetch(&name.to_string(), Duration::from_secs(4));
        let info = &data.sig_info;
        assert_eq!(info.sig_type, kite_packet::SignatureType::SHA256_WITH_ECDSA);
        let locator = format!("{:?}", info.key_locator);
        assert!(locator.contains("/e2e/alice/KEY/"), "{locator}");
        verifier.verify(&data).expect("the public key verifies it");
    }
    // a key of another kind is refused with a clear message
    let out = kite(&[
        "put",
        "/e2e/wrong",
        input.to_str().unwrap(),
        "--sign",
        "ed25519",
        "--key",
        key.to_str().unwrap(),
        "--socket",
        d.socket(),
    ]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not ed25519"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn ping_and_get_reach_the_forwarder_over_udp_and_websocket() {
    let (udp, ws) = (free_udp_port(), free_tcp_port());
    let d = Daemon::start(
        &[],
        &[
            "--udp".into(),
            format!("127.0.0.1:{udp}"),
            "--tcp".into(),
            format!("127.0.0.1:{}", free_tcp_port()),
            "--ws".into(),
            format!("127.0.0.1:{ws}"),
        ],
    );
    let mut server = Command::new(env!("CARGO_BIN_EXE_kite"))
        .args([
            "ping",
            "--server",
            "/e2e/transports",
            "--socket",
            d.socket(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut banner = String::new();
    BufReader::new(server.stdout.as_mut().unwrap())
        .read_line(&mut banner)
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    let want = random_file(&input, 300_000, 5);
    let _put = Put::start(d.socket(), "/e2e/over", &input, &[]);
    for transport in [
        format!("udp://127.0.0.1:{udp}"),
        format!("ws://127.0.0.1:{ws}"),
    ] {
        let out = kite(&[
            "ping",
            "/e2e/transports",
            "-c",
            "3",
            "-i",
            "50",
            "--socket",
            &transport,
        ]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && text.contains("3 received"),
            "{transport}: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let output = dir.path().join("out");
        let out = kite(&[
            "get",
            "/e2e/over",
            "-o",
            output.to_str().unwrap(),
            "--socket",
            &transport,
        ]);
        assert!(
            out.status.success(),
            "{transport}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(sha256_of(&output), want, "{transport}");
    }
    terminate(server.id());
    reap(&mut server, Duration::from_secs(5));
}

/// A daemon whose UDP faces have a 1400-octet MTU (so every 8000-octet segment reaches a UDP
/// consumer in fragments); returns it and its `udp://` URI.
fn daemon_with_small_udp_mtu(dir: &std::path::Path) -> (Daemon, String) {
    let udp = free_udp_port();
    let config = dir.join("kite.toml");
    std::fs::write(
        &config,
        format!(
            "[face_system.unix]\npath = \"/nonexistent/kite/nfd.sock\"\n\n\
             [face_system.udp]\nlisten = [\"127.0.0.1:{udp}\"]\nmtu = 1400\n\n\
             [face_system.tcp]\nlisten = []\n"
        ),
    )
    .unwrap();
    let d = Daemon::start(&[], &["--config".into(), config.display().to_string()]);
    (d, format!("udp://127.0.0.1:{udp}"))
}

#[test]
fn get_over_udp_reassembles_segments_the_forwarder_fragments() {
    let dir = tempfile::tempdir().unwrap();
    let (d, udp) = daemon_with_small_udp_mtu(dir.path());
    let input = dir.path().join("in");
    let want = random_file(&input, 400_000, 21);
    // 8000-octet segments (the default): each Data is cut into 6 fragments toward UDP.
    let _put = Put::start(d.socket(), "/e2e/udpfrag", &input, &[]);
    let output = dir.path().join("out");
    let out = kite(&[
        "get",
        "/e2e/udpfrag",
        "--max-window",
        "32",
        // Without reassembly no segment ever arrives: fail in seconds, not minutes.
        "--max-retries",
        "5",
        "-o",
        output.to_str().unwrap(),
        "--socket",
        &udp,
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(sha256_of(&output), want);
    assert_eq!(summary_value(&stderr, "Segments"), "50");
}

#[test]
fn a_udp_client_fragments_what_exceeds_a_datagram_and_kite_forwards_nothing_over_the_largest() {
    let dir = tempfile::tempdir().unwrap();
    let (d, udp) = daemon_with_small_udp_mtu(dir.path());
    let producer = common::peer::Producer::start(
        d.socket(),
        "/e2e/udpout",
        Box::new(|i| i.app_params.clone()),
    );
    let mut client = kite_app::Client::connect(&kite_app::Endpoint::parse(&udp).unwrap()).unwrap();
    let octets = |n: u32| -> bytes::Bytes { (0..n).map(|i| (i % 251) as u8).collect() };

    // Over the largest packet (8800 octets), so over the client's 8800-octet datagram: the
    // client sends it in fragments, and Kite reassembles no more than the largest packet,
    // drops it and counts it on the client's face.
    let mut big = kite_packet::Interest::new("/e2e/udpout/big".parse().unwrap());
    big.app_params = Some(octets(8800));
    assert!(big.encode().len() > 8800);
    assert!(client.express(&big, Duration::from_secs(2)).is_err());
    let too_large = |faces: &serde_json::Value| -> u64 {
        let all = faces.as_array().expect("a list of faces");
        all.iter()
            .filter_map(|f| f["drops"]["in_too_large"].as_u64())
            .sum()
    };
    let counted = common::eventually(Duration::from_secs(10), || {
        let n = too_large(&common::ctl::json(d.socket(), &["face", "list"]));
        (n >= 1).then_some(n)
    });
    assert_eq!(counted, Some(1), "dropped and counted once, not forwarded");

    // Within it: the Data echoing the parameters comes back in fragments over the face's
    // small MTU, reassembled whole by the client.
    let params = octets(8600);
    let mut interest = kite_packet::Interest::new("/e2e/udpout/fits".parse().unwrap());
    interest.app_params = Some(params.clone());
    let data = client.express(&interest, Duration::from_secs(10)).unwrap();
    assert_eq!(data.content, Some(params.clone()));
    let asked = producer.interests(1, Duration::from_secs(5));
    assert_eq!(
        asked.len(),
        1,
        "only the Interest within the largest size arrived"
    );
    assert_eq!(asked[0].app_params, Some(params));
}

#[test]
fn get_discovers_the_version_by_rdr_and_falls_back_when_metadata_is_unanswered() {
    use kite_app::segmented::{PublishOptions, Published};
    use std::sync::atomic::{AtomicBool, Ordering};

    let d = Daemon::local(&[]);
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    let want = random_file(&input, 50_000, 31);

    // kite put answers RDR metadata: the summary says RDR found the version.
    let put = Put::start(d.socket(), "/e2e/rdr", &input, &[]);
    // A long RDR timeout: a loaded machine must not turn this into a fallback.
    let out = kite(&[
        "get",
        "/e2e/rdr",
        "-v",
        "--rdr-timeout",
        "5000",
        "--socket",
        d.socket(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(sha256_hex(&out.stdout), want);
    assert_eq!(summary_value(&stderr, "Discovery"), "rdr");
    assert_eq!(summary_value(&stderr, "Version"), put.versioned);
    assert!(
        stderr.contains(&format!("kite get: fetching {} (rdr)", put.versioned)),
        "{stderr}"
    );

    // A producer that answers segments and CanBePrefix discovery but not metadata.
    let content = bytes::Bytes::from(std::fs::read(&input).unwrap());
    let published = Published::new(
        &"/e2e/nometa".parse().unwrap(),
        &content,
        &PublishOptions::default(),
        &kite_packet::DigestSha256,
    )
    .unwrap();
    let mut producer = kite_app::Producer::new(kite_app::Client::connect_unix(d.socket()).unwrap());
    producer.register(published.prefix()).unwrap();
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let halt = stop.clone();
    let serving = std::thread::spawn(move || {
        producer
            .serve(&halt, None, |i| {
                let metadata = i.name.last().is_some_and(|c| c.value() == b"metadata");
                published.answer(i).filter(|_| !metadata).cloned()
            })
            .unwrap();
    });
    let started = Instant::now();
    let out = kite(&[
        "get",
        "/e2e/nometa",
        "--rdr-timeout",
        "300",
        "--socket",
        d.socket(),
    ]);
    let took = started.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(sha256_hex(&out.stdout), want);
    assert_eq!(
        summary_value(&stderr, "Discovery"),
        "iterative (metadata: timeout)"
    );
    assert!(took >= Duration::from_millis(300), "{took:?}");
    // RDR alone fails on it.
    let out = kite(&[
        "get",
        "/e2e/nometa",
        "--discover",
        "rdr",
        "--lifetime",
        "200",
        "--max-retries",
        "1",
        "--socket",
        d.socket(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("RDR discovery of /e2e/nometa/32=metadata"),
        "{stderr}"
    );
    stop.store(true, Ordering::Release);
    serving.join().unwrap();
}

#[test]
fn put_once_still_answers_a_retransmission_after_every_segment_was_served() {
    use common::peer::{nonce, Conn};
    use kite_packet::{Interest, NetPacket, OwnedComponent};

    let d = Daemon::local(&[]);
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    random_file(&input, 2500, 41);
    // FreshnessPeriod 0: the Content Store cannot answer the MustBeFresh retransmission.
    let mut put = Command::new(env!("CARGO_BIN_EXE_kite"))
        .args(["put", "/e2e/once", input.to_str().unwrap(), "--once"])
        .args([
            "--chunk-size",
            "1000",
            "--freshness",
            "0",
            "--grace",
            "1500",
        ])
        .args(["--socket", d.socket()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(put.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let versioned: kite_packet::Name = line.trim().parse().unwrap();
    let mut conn = Conn::unix(d.socket());
    let ask = |conn: &mut Conn, seg: u64| {
        let mut i = Interest::new(
            versioned
                .clone()
                .append(OwnedComponent::segment(seg).as_ref()),
        );
        i.must_be_fresh = true;
        i.nonce = Some(nonce());
        i.lifetime = Some(1000);
        conn.send(&i.encode());
        conn.recv_packet(Duration::from_secs(2))
    };
    for seg in 0..3 {
        assert!(
            matches!(ask(&mut conn, seg), (_, NetPacket::Data(_))),
            "{seg}"
        );
    }
    // Every segment was served; the Data of segment 2 was "lost", and the consumer asks
    // again after its retransmission timeout.
    std::thread::sleep(Duration::from_millis(700));
    match ask(&mut conn, 2) {
        (_, NetPacket::Data(d)) => assert_eq!(d.name.last().unwrap().as_segment(), Some(2)),
        other => panic!("the retransmission is answered, got {other:?}"),
    }
    assert!(
        put.try_wait().unwrap().is_none(),
        "still serving within the grace period"
    );
    assert!(
        reap(&mut put, Duration::from_secs(10)),
        "exits once no Interest came for the grace period"
    );
    assert!(put.wait().unwrap().success());
}

/// Reads one TLV element from `s`.
fn read_element(s: &mut impl std::io::Read) -> Vec<u8> {
    let mut head = vec![0u8; 2];
    s.read_exact(&mut head).unwrap();
    let extra = match head[1] {
        253 => 2,
        254 => 4,
        255 => 8,
        _ => 0,
    };
    let mut len_bytes = vec![0u8; extra];
    s.read_exact(&mut len_bytes).unwrap();
    let len = if extra == 0 {
        usize::from(head[1])
    } else {
        len_bytes
            .iter()
            .fold(0usize, |n, &b| n << 8 | usize::from(b))
    };
    head.extend_from_slice(&len_bytes);
    let mut value = vec![0u8; len];
    s.read_exact(&mut value).unwrap();
    head.extend_from_slice(&value);
    head
}

/// The SignatureTime of an encoded signed command Interest.
fn signature_time(wire: &[u8]) -> u64 {
    let i = kite_packet::Interest::decode(bytes::Bytes::copy_from_slice(wire)).unwrap();
    match kite_mgmt_proto::parse_command(&i).unwrap().signature {
        kite_mgmt_proto::command::CommandSignature::V03 { info, .. } => info.time.unwrap(),
        other => panic!("a v0.3 signed command expected, got {other:?}"),
    }
}

#[test]
fn two_producers_registering_at_once_with_the_same_key_both_succeed() {
    use std::os::unix::net::{UnixListener, UnixStream};

    let d = Daemon::local(&[]);
    let dir = tempfile::tempdir().unwrap();
    // A relay between the producers and Kite that holds both first commands, then delivers
    // the newer one first: the older timestamp arrives second and is refused (403), as when
    // two tools sign in the same millisecond. The refused producer must retry and succeed.
    let relay = dir.path().join("relay.sock");
    let listener = UnixListener::bind(&relay).unwrap();
    let servers: Vec<_> = ["a", "b"]
        .iter()
        .map(|p| {
            Command::new(env!("CARGO_BIN_EXE_kite"))
                .args(["ping", "--server", &format!("/e2e/race/{p}")])
                .args(["--socket", relay.to_str().unwrap()])
                // The relay expects the command first, not a request for shared memory.
                .env("KITE_SHM", "off")
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut held: Vec<(UnixStream, Vec<u8>)> = (0..2)
        .map(|_| {
            let (mut c, _) = listener.accept().unwrap();
            let first = read_element(&mut c);
            (c, first)
        })
        .collect();
    held.sort_by_key(|(_, cmd)| std::cmp::Reverse(signature_time(cmd)));
    for (client, first) in held {
        let mut upstream = UnixStream::connect(d.socket()).unwrap();
        std::io::Write::write_all(&mut upstream, &first).unwrap();
        let (mut up_read, mut client_write) =
            (upstream.try_clone().unwrap(), client.try_clone().unwrap());
        let mut client_read = client;
        std::thread::spawn(move || std::io::copy(&mut up_read, &mut client_write));
        std::thread::spawn(move || std::io::copy(&mut client_read, &mut upstream));
        // Kite handles the first command before the second arrives.
        std::thread::sleep(Duration::from_millis(200));
    }
    for (mut server, p) in servers.into_iter().zip(["a", "b"]) {
        let mut banner = String::new();
        BufReader::new(server.stdout.take().unwrap())
            .read_line(&mut banner)
            .unwrap();
        terminate(server.id());
        let out = server.wait_with_output().unwrap();
        assert_eq!(
            banner.trim(),
            format!("PING SERVER /e2e/race/{p}/ping"),
            "{p} registered: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Without `-o`, `kite get` whose standard output is a terminal (script(1) gives it one)
/// refuses to write the content there, before it connects anywhere, and exits non-zero.
#[test]
fn get_refuses_to_write_content_to_a_terminal() {
    if Command::new("script").arg("--version").output().is_err() {
        skip("script (util-linux) is not installed");
        return;
    }
    let line = format!(
        "{} get /anything --socket /nonexistent/nfd.sock",
        env!("CARGO_BIN_EXE_kite")
    );
    let out = Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .stdin(Stdio::null())
        .output()
        .expect("run script");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{text}");
    assert!(
        text.contains("refusing to write the content to a terminal"),
        "{text}"
    );
}
