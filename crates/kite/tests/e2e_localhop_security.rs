//! A gateway (`kite run` with `rib.localhop_registration`) that checks neighbours'
//! registrations with `rib.localhop_security`, a trust schema in ndn-cxx's validator format:
//! a neighbour over UDP whose key the site's root certifies registers a prefix toward
//! itself (its certificate fetched from it over NDN while the command waits), and one whose
//! key another root certifies is refused 403, the refusal logged with its signer.

mod common;

use std::net::UdpSocket;
use std::time::{Duration, Instant};

use bytes::Bytes;
use common::{ctl, free_tcp_port, free_udp_port, Daemon};
use kite_mgmt_proto::nfd::status;
use kite_mgmt_proto::{ControlParameters, ControlResponse, Tlv};
use kite_packet::{Interest, NetPacket, SignatureInfo, Signer, ValidityPeriod};
use kite_security::{Certificate, KeySigner, SignatureKind};

const SCHEMA: &str = r#"
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
rule
{
  id "site hierarchy"
  for data
  filter
  {
    type name
    regex ^<>*<KEY><><><>$
  }
  checker
  {
    type hierarchical
    sig-type ecdsa-sha256
  }
}
trust-anchor
{
  type file
  file-name "site-root.ndncert"
}
"#;

fn key(identity: &str, issuer: Option<&KeySigner>) -> (KeySigner, Certificate) {
    let k = KeySigner::generate(SignatureKind::EcdsaP256, &identity.parse().unwrap()).unwrap();
    let validity = ValidityPeriod::new("20200101T000000", "20401231T235959").unwrap();
    let public = k.key().public_der().unwrap();
    let by = issuer.unwrap_or(&k);
    let c = Certificate::issue(k.key_name().unwrap(), &public, by, b"root", 1, validity).unwrap();
    (k, c)
}

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
    std::fs::write(dir.join("localhop.conf"), SCHEMA).unwrap();
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
