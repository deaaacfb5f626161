//! A gateway (`kite run` with `rib.localhop_registration`) that checks neighbours'
//! registrations with `rib.localhop_security`, a trust schema in ndn-cxx's validator format:
//! a neighbour over UDP whose key the site's root certifies registers a prefix toward
//! itself (its certificate fetched from it over NDN while the command waits), and one whose
//! key another root certifies is refused 403, the refusal logged with its signer.

mod common;

use std::net::UdpSocket;
use std::time::{Duration, Instant};

use bytes::Bytes;
use common::{ctl, free_udp_port, Daemon};
use kite_mgmt::nfd::status;
use kite_mgmt::{ControlParameters, ControlResponse, Tlv};
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

/// A neighbour on its own UDP socket: registers `prefix` toward itself, signed by `k`,
/// serving its certificate chain `certs` when the gateway asks; returns the answer.
fn register(gateway: u16, prefix: &str, k: &KeySigner, certs: &[&Certificate]) -> ControlResponse {
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.connect(("127.0.0.1", gateway)).unwrap();
    sock.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
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
    sock.send(&i.encode_signed(k).unwrap()).unwrap();
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

#[test]
fn only_neighbours_the_trust_schema_accepts_may_register() {
    let dir = tempfile::tempdir().unwrap();
    let (root, root_cert) = key("/site", None);
    let (router, router_cert) = key("/site/router", Some(&root));
    let (other_root, other_root_cert) = key("/elsewhere", None);
    let (rogue, rogue_cert) = key("/elsewhere/host", Some(&other_root));
    std::fs::write(dir.path().join("site-root.ndncert"), root_cert.to_base64()).unwrap();
    std::fs::write(dir.path().join("localhop.conf"), SCHEMA).unwrap();
    let config = dir.path().join("kite.toml");
    std::fs::write(
        &config,
        "[rib]\nlocalhop_registration = true\nlocalhop_security = \"localhop.conf\"\n",
    )
    .unwrap();
    let port = free_udp_port();
    let gateway = Daemon::start(
        &[],
        &[
            "--udp".into(),
            format!("127.0.0.1:{port}"),
            "--config".into(),
            config.display().to_string(),
        ],
    );

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
