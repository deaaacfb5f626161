//! A gateway (`kite run` with `rib.localhop_registration`) that checks neighbours'
//! registrations with `rib.localhop_security`, a trust schema in ndn-cxx's validator format:
//! a neighbour over UDP whose key the site's root certifies registers a prefix toward
//! itself (its certificate fetched from it over NDN while the command waits), and one whose
//! key another root certifies is refused 403, the refusal logged with its signer.
//!
//! And a Kite host propagating its prefix to such a gateway (`rib.auto_prefix_propagate`),
//! two `kite run` over UDP on loopback: signed with a key the root certifies
//! (`rib.propagate_key`, an `ndnsec export` safe bag), whose certificate the host serves, the
//! prefix reaches the gateway's RIB; signed with another root's key, or with DigestSha256
//! (no key), it is refused. A wrong password stops the host's start.

mod common;

use std::net::UdpSocket;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use base64::Engine as _;
use bytes::Bytes;
use common::certs::{self, key};
use common::peer::Producer;
use common::{ctl, free_tcp_port, free_udp_port, Daemon};
use kite_mgmt_proto::nfd::status;
use kite_mgmt_proto::nfd::RouteOrigin;
use kite_mgmt_proto::{ControlParameters, ControlResponse, Tlv};
use kite_packet::{Interest, NetPacket, SignatureInfo, Signer};
use kite_security::{Certificate, KeySigner};

/// Registrations under /localhop/nfd signed by a key the chain ([`certs::CHAIN`]) certifies.
const COMMANDS: &str = r#"
rule
{
  id "prefix registration by a site key"
  for interest
  filter
  {
    type name
    regex ^<localhop><nfd><rib>[<register><unregister>]<>
  }
  checker
  {
    type customized
    sig-type ecdsa-sha256
    key-locator
    {
      type name
      regex ^<>*<KEY><>$
    }
  }
}
"#;

/// `/localhop/nfd/rib/register` of `prefix`, signed by `k`.
fn command(prefix: &str, k: &KeySigner) -> Bytes {
    let p = ControlParameters {
        name: Some(prefix.parse().unwrap()),
        ..ControlParameters::default()
    };
    let name: kite_packet::Name = "/localhop/nfd/rib/register".parse().unwrap();
    let mut i = Interest::new(name.append_generic(&p.encode()));
    i.must_be_fresh = true;
    i.lifetime = Some(8000);
    i.nonce = Some(common::peer::nonce());
    let mut info = SignatureInfo::new(k.signature_type());
    info.time = Some(kite_app::mgmt::next_signature_time());
    info.nonce = Some(Bytes::copy_from_slice(&common::peer::nonce().0));
    i.sig_info = Some(info);
    i.encode_signed(k).unwrap()
}

/// A neighbour on its own UDP socket: registers `prefix` toward itself, signed by `k`,
/// serving its certificate chain `certs` when the gateway asks; returns the answer.
fn register(gateway: u16, prefix: &str, k: &KeySigner, certs: &[&Certificate]) -> ControlResponse {
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.connect(("127.0.0.1", gateway)).unwrap();
    sock.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    sock.send(&command(prefix, k)).unwrap();
    let until = Instant::now() + Duration::from_secs(8);
    let mut buf = vec![0u8; 9000];
    while Instant::now() < until {
        let Ok(n) = sock.recv(&mut buf) else {
            continue;
        };
        let frame = Bytes::copy_from_slice(&buf[..n]);
        match NetPacket::decode_frame(frame).map(|(_, p)| p) {
            Ok(NetPacket::Interest(want)) => {
                if let Some(c) = certs.iter().find(|c| want.name.is_prefix_of(c.name())) {
                    sock.send(c.wire()).unwrap();
                }
            }
            Ok(NetPacket::Data(d)) if d.name.to_string().starts_with("/localhop/nfd/rib") => {
                return ControlResponse::decode(&d.content.unwrap_or_default()).unwrap();
            }
            _ => {}
        }
    }
    panic!("no answer to rib/register {prefix}");
}

/// A gateway on 127.0.0.1:`port` whose `localhop_security` trusts `root`.
fn gateway(dir: &std::path::Path, root: &Certificate, port: u16) -> Daemon {
    std::fs::write(dir.join("site-root.ndncert"), root.to_base64()).unwrap();
    std::fs::write(
        dir.join("localhop.conf"),
        format!("{COMMANDS}{}", certs::CHAIN),
    )
    .unwrap();
    let config = dir.join("kite.toml");
    std::fs::write(
        &config,
        "[rib]\nlocalhop_registration = true\nlocalhop_security = \"localhop.conf\"\n",
    )
    .unwrap();
    Daemon::start(
        &[],
        &[
            "--udp".into(),
            format!("127.0.0.1:{port}"),
            "--tcp".into(),
            format!("127.0.0.1:{}", free_tcp_port()),
            "--config".into(),
            config.display().to_string(),
        ],
    )
}

#[test]
fn a_neighbour_whose_certificates_never_come_holds_four_waiting_commands_at_most() {
    let dir = tempfile::tempdir().unwrap();
    let (root, root_cert) = key("/site", None);
    let (router, router_cert) = key("/site/router", Some(&root));
    let (silent, _) = key("/site/silent", Some(&root));
    let port = free_udp_port();
    let gateway = gateway(dir.path(), &root_cert, port);

    // A neighbour that never answers for its certificate sends five commands at once.
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.connect(("127.0.0.1", port)).unwrap();
    sock.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    for i in 0..5 {
        sock.send(&command(&format!("/site/silent/p{i}"), &silent))
            .unwrap();
    }
    // Meanwhile another neighbour registers at once.
    let started = Instant::now();
    let ok = register(port, "/site/router/photos", &router, &[&router_cert]);
    assert_eq!(ok.status_code, status::OK, "{ok:?}");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "not stuck behind the others"
    );
    // Every one of the five is refused: one at once, four when their wait ends.
    let mut refused = 0;
    let until = Instant::now() + Duration::from_secs(10);
    let mut buf = vec![0u8; 9000];
    while refused < 5 && Instant::now() < until {
        let Ok(n) = sock.recv(&mut buf) else {
            continue;
        };
        if let Ok((_, NetPacket::Data(d))) =
            NetPacket::decode_frame(Bytes::copy_from_slice(&buf[..n]))
        {
            let r = ControlResponse::decode(&d.content.unwrap_or_default()).unwrap();
            assert_eq!(r.status_code, status::FORBIDDEN, "{r:?}");
            refused += 1;
        }
    }
    assert_eq!(refused, 5);
    let log = gateway.log_text();
    assert!(log.contains("too many commands waiting"), "{log}");
    assert!(log.contains("not retrieved"), "{log}");
}

#[test]
fn only_neighbours_the_trust_schema_accepts_may_register() {
    let dir = tempfile::tempdir().unwrap();
    let (root, root_cert) = key("/site", None);
    let (router, router_cert) = key("/site/router", Some(&root));
    let (other_root, other_root_cert) = key("/elsewhere", None);
    let (rogue, rogue_cert) = key("/elsewhere/host", Some(&other_root));
    let port = free_udp_port();
    let gateway = gateway(dir.path(), &root_cert, port);

    let ok = register(port, "/site/router/photos", &router, &[&router_cert]);
    assert_eq!(ok.status_code, status::OK, "{ok:?}\n{}", gateway.log_text());
    let rib = ctl::ok(gateway.socket(), &["route", "list"]);
    assert!(rib.contains("/site/router/photos"), "{rib}");

    let refused = register(port, "/stolen", &rogue, &[&rogue_cert, &other_root_cert]);
    assert_eq!(refused.status_code, status::FORBIDDEN, "{refused:?}");
    let rib = ctl::ok(gateway.socket(), &["route", "list"]);
    assert!(!rib.contains("/stolen"), "{rib}");
    let log = gateway.log_text();
    let line = log
        .lines()
        .find(|l| l.contains("command refused") && l.contains("/elsewhere/host/KEY/"))
        .unwrap_or_else(|| panic!("the refusal is logged with its signer: {log}"));
    assert!(line.contains("status=403"), "{line}");
}

/// The password every safe bag here is encrypted with.
const PASSWORD: &str = "correct horse";

/// `k`'s safe bag, as `ndnsec export -P PASSWORD` writes it, and the password's file (mode
/// 0600, with a line ending as `echo` writes it), in `dir`; their paths.
fn export(dir: &Path, k: &KeySigner, cert: &Certificate, name: &str) -> (PathBuf, PathBuf) {
    let der = k.key().to_der().unwrap();
    let info = pkcs8::PrivateKeyInfo::try_from(der.as_slice()).unwrap();
    let params =
        pkcs8::pkcs5::pbes2::Parameters::pbkdf2_sha256_aes256cbc(2048, b"kite-e2e", &[9; 16])
            .unwrap();
    let encrypted = info.encrypt_with_params(params, PASSWORD).unwrap();
    let bag = kite_security::SafeBag::encode(cert, encrypted.as_bytes());
    let bag_path = dir.join(format!("{name}.safebag"));
    std::fs::write(
        &bag_path,
        base64::engine::general_purpose::STANDARD.encode(bag),
    )
    .unwrap();
    let password = dir.join(format!("{name}.password"));
    std::fs::write(&password, format!("{PASSWORD}\n")).unwrap();
    std::fs::set_permissions(&password, std::fs::Permissions::from_mode(0o600)).unwrap();
    (bag_path, password)
}

/// A host on 127.0.0.1:`port` propagating to the gateway on `gateway`: `kite run
/// --auto-prefix-propagate` with `extra`, a face to the gateway and a route for
/// `/localhop/nfd` on it.
fn host(port: u16, gateway: u16, extra: &[String]) -> Daemon {
    let mut args = vec![
        "--udp".to_string(),
        format!("127.0.0.1:{port}"),
        "--tcp".into(),
        format!("127.0.0.1:{}", free_tcp_port()),
        "--auto-prefix-propagate".into(),
    ];
    args.extend_from_slice(extra);
    let host = Daemon::start(&[], &args);
    let out = ctl::json(
        host.socket(),
        &["face", "create", &format!("udp4://127.0.0.1:{gateway}")],
    );
    let up = out["face_id"].as_u64().expect("the face to the gateway");
    ctl::ok(
        host.socket(),
        &["route", "add", "/localhop/nfd", &up.to_string()],
    );
    host
}

/// The gateway's log line refusing a command signed by `signer` (a prefix of the key name),
/// once it is there.
fn refusal(gateway: &Daemon, signer: &str) -> String {
    common::eventually(Duration::from_secs(10), || {
        gateway
            .log_text()
            .lines()
            .find(|l| l.contains("command refused") && l.contains(signer))
            .map(str::to_string)
    })
    .unwrap_or_else(|| {
        panic!(
            "no refusal of {signer} in the gateway's log:\n{}",
            gateway.log_text()
        )
    })
}

#[test]
fn a_kite_host_signing_with_a_key_the_root_certifies_propagates_and_others_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (root, root_cert) = key("/site", None);
    let (laptop, laptop_cert) = key("/site/laptop", Some(&root));
    let (other_root, other_root_cert) = key("/elsewhere", None);
    let (rogue, rogue_cert) = key("/elsewhere/laptop", Some(&other_root));
    let gw_port = free_udp_port();
    let gateway = gateway(dir.path(), &root_cert, gw_port);

    // Certified: propagated as its key's identity (no --propagate-prefix), the certificate
    // fetched from the host's face (the gateway has only the root's).
    let (bag, password) = export(dir.path(), &laptop, &laptop_cert, "laptop");
    let port = free_udp_port();
    let good = host(
        port,
        gw_port,
        &[
            "--propagate-key".into(),
            bag.display().to_string(),
            "--propagate-key-password-file".into(),
            password.display().to_string(),
        ],
    );
    let fib = ctl::ok(good.socket(), &["fib", "list"]);
    let key_name = laptop_cert.key_name().to_string();
    assert!(fib.contains(&key_name), "the certificate is served: {fib}");
    let _photos = Producer::start(
        good.socket(),
        "/site/laptop/photos",
        Box::new(|_| Some(Bytes::from_static(b"photo"))),
    );
    let propagated = common::eventually(Duration::from_secs(10), || {
        let rs = ctl::routes(gateway.socket(), "/site/laptop");
        (!rs.is_empty()).then_some(rs)
    })
    .unwrap_or_else(|| {
        panic!(
            "/site/laptop never reached the gateway\ngateway: {}\nhost: {}",
            gateway.log_text(),
            good.log_text()
        )
    });
    let faces = ctl::json(gateway.socket(), &["face", "list"]);
    let toward_host = faces
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["uri"] == format!("udp4://127.0.0.1:{port}"))
        .and_then(|f| f["face_id"].as_u64())
        .expect("the gateway's face toward the host");
    assert_eq!(propagated, [(toward_host, RouteOrigin::CLIENT.0, 15)]);
    let accepted = gateway
        .log_text()
        .lines()
        .any(|l| l.contains("rib/register") && l.contains("name=/site/laptop"));
    assert!(accepted, "{}", gateway.log_text());

    // Another root's key, its whole chain served: refused, and logged with its signer.
    let (bag, password) = export(dir.path(), &rogue, &rogue_cert, "rogue");
    std::fs::write(
        dir.path().join("elsewhere.ndncert"),
        other_root_cert.to_base64(),
    )
    .unwrap();
    let rogue_host = host(
        free_udp_port(),
        gw_port,
        &[
            "--propagate-key".into(),
            bag.display().to_string(),
            "--propagate-key-password-file".into(),
            password.display().to_string(),
            "--propagate-chain".into(),
            dir.path().join("elsewhere.ndncert").display().to_string(),
        ],
    );
    let _stolen = Producer::start(
        rogue_host.socket(),
        "/elsewhere/laptop/stolen",
        Box::new(|_| None),
    );
    let line = refusal(&gateway, "/elsewhere/laptop/KEY/");
    assert!(line.contains("status=403"), "{line}");

    // No key: DigestSha256, which the schema's checker does not take.
    let plain = host(
        free_udp_port(),
        gw_port,
        &["--propagate-prefix".into(), "/site/plain".into()],
    );
    let _plain_app = Producer::start(plain.socket(), "/site/plain/app", Box::new(|_| None));
    let line = refusal(&gateway, "/localhost/identity/digest-sha256");
    assert!(
        line.contains("status=403") && line.contains("/site/plain"),
        "{line}"
    );

    // Each host heard its refusal; neither prefix is in the gateway's RIB.
    for (h, prefix) in [(&rogue_host, "/elsewhere/laptop"), (&plain, "/site/plain")] {
        let said = common::eventually(Duration::from_secs(10), || {
            h.log_text()
                .lines()
                .any(|l| l.contains("register refused") && l.contains("code=403"))
                .then_some(())
        });
        assert!(said.is_some(), "{}", h.log_text());
        assert!(ctl::routes(gateway.socket(), prefix).is_empty(), "{prefix}");
    }
    assert_eq!(ctl::routes(gateway.socket(), "/site/laptop").len(), 1);
}

/// Runs `kite run` with `args` until it exits (it must, within 20 s); its stderr.
fn failed_start(args: &[&str]) -> String {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kite"))
        .arg("run")
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let status = common::eventually(Duration::from_secs(20), || child.try_wait().unwrap())
        .unwrap_or_else(|| {
            let _ = child.kill();
            panic!("kite run did not stop");
        });
    assert!(!status.success());
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    err
}

#[test]
fn a_wrong_password_or_an_unreadable_key_stops_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let (laptop, laptop_cert) = key("/site/laptop", None);
    let (bag, password) = export(dir.path(), &laptop, &laptop_cert, "laptop");
    let socket = dir.path().join("nfd.sock");
    let run = |extra: &[&str]| {
        let mut args = vec![
            "--local-only",
            "--socket",
            socket.to_str().unwrap(),
            "--auto-prefix-propagate",
        ];
        args.extend_from_slice(extra);
        failed_start(&args)
    };

    std::fs::write(&password, "not the password\n").unwrap();
    let bag_arg = bag.to_str().unwrap();
    let pw_arg = password.to_str().unwrap();
    let err = run(&[
        "--propagate-key",
        bag_arg,
        "--propagate-key-password-file",
        pw_arg,
    ]);
    assert!(
        err.contains("rib.propagate_key") && err.contains("wrong password"),
        "{err}"
    );
    assert!(err.contains(bag_arg), "names the file: {err}");
    assert!(!socket.exists(), "nothing was started");

    let missing = dir.path().join("missing.safebag");
    let err = run(&[
        "--propagate-key",
        missing.to_str().unwrap(),
        "--propagate-key-password-file",
        pw_arg,
    ]);
    assert!(
        err.contains("cannot read") && err.contains("missing.safebag"),
        "{err}"
    );
    let err = run(&["--propagate-key", bag_arg]);
    assert!(err.contains("propagate_key_password_file"), "{err}");
}
