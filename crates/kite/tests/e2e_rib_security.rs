//! `kite run` checking local `rib` commands and prefix announcements with trust schemas in
//! ndn-cxx's validator format, as NFD's `rib.localhost_security` and
//! `rib.prefix_announcement_validation` do:
//!
//! - a `rib/announce` whose announcement a key the site's root certifies signed installs its
//!   route (the key's certificate fetched from the app over the FIB while the command waits);
//!   one a stranger signed is refused 403, the refusal logged with the stranger's key;
//! - with a non-`any` `localhost_security`, a `rib/register` on `/localhost/nfd` signed by a
//!   certified key is accepted, one signed by another root's key, or by DigestSha256 (as
//!   `kite route add` signs), is refused 403.

mod common;

use std::time::{Duration, Instant};

use bytes::Bytes;
use common::certs::{self, key};
use common::peer::{self, with_token, Conn, Got};
use common::{ctl, Daemon};
use kite_app::mgmt::{next_signature_time, CommandSigner};
use kite_mgmt_proto::nfd::status;
use kite_mgmt_proto::{ControlParameters, ControlResponse, Tlv};
use kite_packet::{
    tlv_type, ContentType, Data, DigestSha256, Interest, Name, NetPacket, OwnedComponent,
    SignatureInfo, SignatureType,
};
use kite_security::{Certificate, KeySigner};

/// How long a command may take, a certificate fetch included.
const WAIT: Duration = Duration::from_secs(8);

/// Prefix announcements signed by a key of an identity the announced prefix is under.
const ANNOUNCEMENTS: &str = r#"
rule
{
  id "an announcement by its prefix's key"
  for data
  filter
  {
    type name
    regex ^<>*<32=PA><><>$
  }
  checker
  {
    type hierarchical
    sig-type ecdsa-sha256
  }
}
"#;

/// Local route commands signed by a key under `/site`.
const LOCALHOST: &str = r#"
rule
{
  id "local route commands by a site key"
  for interest
  filter
  {
    type name
    regex ^<localhost><nfd><rib>[<register><unregister><announce>]<>
  }
  checker
  {
    type customized
    sig-type ecdsa-sha256
    key-locator
    {
      type name
      regex ^<site><>*<KEY><>$
    }
  }
}
"#;

/// `kite run` whose `[rib]` sets `key` to a schema of `rules` and the chain to `root`.
fn kite(dir: &std::path::Path, key: &str, rules: &str, root: &Certificate) -> Daemon {
    std::fs::write(dir.join("site-root.ndncert"), root.to_base64()).unwrap();
    std::fs::write(dir.join("schema.conf"), format!("{rules}{}", certs::CHAIN)).unwrap();
    let config = dir.join("kite.toml");
    std::fs::write(&config, format!("[rib]\n{key} = \"schema.conf\"\n")).unwrap();
    Daemon::local(&["--config", config.to_str().unwrap()])
}

/// Sends the command `wire` on `conn` and returns its answer, serving any of `certs` the
/// forwarder asks for meanwhile.
fn answer(conn: &mut Conn, wire: &Bytes, certs: &[&Certificate]) -> ControlResponse {
    conn.send(wire);
    let until = Instant::now() + WAIT;
    while Instant::now() < until {
        let Got::Frame(f) = conn.recv(Duration::from_millis(200)) else {
            continue;
        };
        match NetPacket::decode_frame(f).expect("a packet") {
            (h, NetPacket::Interest(want)) => {
                if let Some(c) = certs.iter().find(|c| want.name.is_prefix_of(c.name())) {
                    conn.send(&with_token(h.pit_token, c.wire().clone()));
                }
            }
            (_, NetPacket::Data(d)) if d.name.to_string().starts_with("/localhost/nfd/") => {
                return ControlResponse::decode(&d.content.unwrap_or_default())
                    .expect("a ControlResponse");
            }
            _ => {}
        }
    }
    panic!("no answer within {WAIT:?}");
}

/// `rib/announce` of `prefix` for an hour, the announcement signed by `by`, the command by
/// DigestSha256 (what an app's forwarder client signs with when it has no key).
fn announce(prefix: &str, by: &KeySigner) -> Bytes {
    let name: Name = prefix.parse().unwrap();
    let pa_name = name
        .append(
            OwnedComponent::new(tlv_type::KEYWORD_NAME_COMPONENT, &b"PA"[..])
                .unwrap()
                .as_ref(),
        )
        .append(OwnedComponent::version(1).as_ref())
        .append(OwnedComponent::segment(0).as_ref());
    // ExpirationPeriod (109): 3 600 000 ms.
    let mut pa = Data::new(
        pa_name,
        Bytes::from_static(&[109, 4, 0x00, 0x36, 0xEE, 0x80]),
    );
    pa.meta.content_type = Some(ContentType::PREFIX_ANN);
    let mut i = Interest::new("/localhost/nfd/rib/announce".parse().unwrap());
    i.must_be_fresh = true;
    i.lifetime = Some(WAIT.as_millis() as u64);
    i.nonce = Some(peer::nonce());
    i.app_params = Some(pa.sign(by).unwrap());
    let mut info = SignatureInfo::new(SignatureType::DIGEST_SHA256);
    info.time = Some(next_signature_time());
    info.nonce = Some(Bytes::copy_from_slice(&peer::nonce().0));
    i.sig_info = Some(info);
    i.encode_signed(&DigestSha256).unwrap()
}

/// The origins of `prefix`'s routes in `kite route list`.
fn origins(kite: &Daemon, prefix: &str) -> Vec<String> {
    let rib = ctl::json(kite.socket(), &["route", "list"]);
    rib.as_array()
        .expect("a list")
        .iter()
        .filter(|e| e["prefix"] == prefix)
        .flat_map(|e| e["routes"].as_array().cloned().unwrap_or_default())
        .map(|r| r["origin_name"].as_str().unwrap_or("?").to_string())
        .collect()
}

/// The "command refused" lines of `command` naming `signer`, each saying 403.
fn refusals_logged(kite: &Daemon, command: &str, signer: &str) -> Vec<String> {
    let log = kite.log_text();
    let lines: Vec<String> = log
        .lines()
        .filter(|l| l.contains("command refused") && l.contains(command) && l.contains(signer))
        .map(str::to_string)
        .collect();
    assert!(
        !lines.is_empty(),
        "the refusal is logged with {signer}: {log}"
    );
    for line in &lines {
        assert!(line.contains("status=403"), "{line}");
    }
    lines
}

#[test]
fn only_announcements_a_certified_key_signed_install_a_route() {
    let dir = tempfile::tempdir().unwrap();
    let (root, root_cert) = key("/site", None);
    let (app, app_cert) = key("/site/app", Some(&root));
    let (stranger, stranger_cert) = key("/stranger", None);
    let kite = kite(
        dir.path(),
        "prefix_announcement_validation",
        ANNOUNCEMENTS,
        &root_cert,
    );

    // The app serves its certificate: the forwarder fetches it through the FIB.
    let mut conn = Conn::unix(kite.socket());
    conn.register("/site/app/KEY");
    let ok = answer(&mut conn, &announce("/site/app", &app), &[&app_cert]);
    assert_eq!(ok.status_code, status::OK, "{ok:?}\n{}", kite.log_text());
    assert_eq!(origins(&kite, "/site/app"), ["prefixann"]);

    // A stranger may not announce the site's prefix (refused by the rule, nothing fetched),
    // nor its own (its certificate, fetched, leads to no anchor): neither installs a route.
    let mut other = Conn::unix(kite.socket());
    other.register("/stranger/KEY");
    for prefix in ["/site/stolen", "/stranger"] {
        let refused = answer(&mut other, &announce(prefix, &stranger), &[&stranger_cert]);
        assert_eq!(
            refused.status_code,
            status::FORBIDDEN,
            "{prefix}: {refused:?}"
        );
        assert!(origins(&kite, prefix).is_empty());
    }
    // Logged with the announcement's signer, and which signature was refused.
    let lines = refusals_logged(&kite, "command=rib/announce", "/stranger/KEY/");
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(
        lines
            .iter()
            .all(|l| l.contains("prefix announcement unauthorized")),
        "{lines:?}"
    );
    assert!(
        lines[0].contains("params=\"announced=/site/stolen\""),
        "{lines:?}"
    );
}

#[test]
fn a_localhost_schema_decides_who_may_register_local_routes() {
    let dir = tempfile::tempdir().unwrap();
    let (root, root_cert) = key("/site", None);
    let (operator, operator_cert) = key("/site/operator", Some(&root));
    let (other_root, _) = key("/elsewhere", None);
    let (rogue, _) = key("/elsewhere/host", Some(&other_root));
    let kite = kite(dir.path(), "localhost_security", LOCALHOST, &root_cert);

    // fib commands stay open to any local app (authorizations' `certfile any`): the operator's
    // connection routes its certificate's prefix to itself, so the forwarder can fetch it.
    let mut conn = Conn::unix(kite.socket());
    let to_me = ControlParameters {
        name: Some("/site/operator/KEY".parse().unwrap()),
        ..ControlParameters::default()
    };
    let fib = answer(&mut conn, &peer::command("fib", "add-nexthop", &to_me), &[]);
    assert_eq!(fib.status_code, status::OK, "{fib:?}");

    let nfd: Name = "/localhost/nfd".parse().unwrap();
    let route = |prefix: &str| ControlParameters {
        name: Some(prefix.parse().unwrap()),
        ..ControlParameters::default()
    };
    let mut signer = CommandSigner::new(operator);
    let register = signer
        .sign(&nfd, "rib", "register", &route("/site/operator/photos"))
        .unwrap();
    let ok = answer(&mut conn, &register, &[&operator_cert]);
    assert_eq!(ok.status_code, status::OK, "{ok:?}\n{}", kite.log_text());
    assert_eq!(origins(&kite, "/site/operator/photos"), ["app"]);

    // Another root's key: refused by the rule, nothing fetched.
    let register = CommandSigner::new(rogue)
        .sign(&nfd, "rib", "register", &route("/stolen"))
        .unwrap();
    let refused = answer(&mut conn, &register, &[]);
    assert_eq!(refused.status_code, status::FORBIDDEN, "{refused:?}");
    assert!(origins(&kite, "/stolen").is_empty());
    let lines = refusals_logged(&kite, "command=rib/register", "signer=/elsewhere/host/KEY/");
    assert!(lines[0].contains("params=\"name=/stolen\""), "{lines:?}");

    // DigestSha256, as `kite route add` signs: refused too, and the operator is told.
    let err = ctl::err(kite.socket(), &["route", "add", "/digest", "1"]);
    assert!(err.contains("403"), "{err}");
    assert!(origins(&kite, "/digest").is_empty());

    // The operator unregisters with the same key (its certificate is cached now).
    let unregister = signer
        .sign(&nfd, "rib", "unregister", &route("/site/operator/photos"))
        .unwrap();
    let ok = answer(&mut conn, &unregister, &[]);
    assert_eq!(ok.status_code, status::OK, "{ok:?}");
    assert!(origins(&kite, "/site/operator/photos").is_empty());
}
