use std::path::Path;

use bytes::BytesMut;
use kite_packet::{tlv_type, SignatureInfo, Signer, ValidityPeriod};

use super::*;
use crate::{KeySigner, SignatureKind};

/// 2026-06-01.
const NOW: u64 = 1_780_272_000;

fn validity() -> ValidityPeriod {
    ValidityPeriod::new("20200101T000000", "20401231T235959").unwrap()
}

/// A key for `identity` and its certificate, issued by `issuer` (self-signed when `None`).
fn key(identity: &str, issuer: Option<&KeySigner>) -> (KeySigner, Certificate) {
    let k = KeySigner::generate(SignatureKind::EcdsaP256, &identity.parse().unwrap()).unwrap();
    let public = k.key().public_der().unwrap();
    let by = issuer.unwrap_or(&k);
    let cert =
        Certificate::issue(k.key_name().unwrap(), &public, by, b"issuer", 1, validity()).unwrap();
    (k, cert)
}

/// A v0.3 signed command Interest `name` signed by `k`.
fn command(name: &str, k: &dyn Signer) -> Bytes {
    let mut i = Interest::new(name.parse().unwrap());
    let mut info = SignatureInfo::new(k.signature_type());
    info.time = Some(NOW * 1000);
    info.nonce = Some(Bytes::from_static(b"12345678"));
    i.sig_info = Some(info);
    i.encode_signed(k).unwrap()
}

/// A v0.2 signed command Interest: `name`/timestamp/nonce/SignatureInfo/SignatureValue.
fn command_v02(name: &str, k: &KeySigner) -> Bytes {
    let mut n: Name = name.parse().unwrap();
    n = n.append_generic(&[1, 2, 3]).append_generic(&[4, 5, 6, 7]);
    let mut info = SignatureInfo::new(k.signature_type());
    info.key_locator = k.key_locator();
    let mut buf = BytesMut::new();
    info.encode(tlv_type::SIGNATURE_INFO, &mut buf);
    n = n.append_generic(&buf);
    let sig = k.sign(&[n.value()]).unwrap();
    let mut v = vec![tlv_type::SIGNATURE_VALUE as u8, sig.len() as u8];
    v.extend_from_slice(&sig);
    n = n.append_generic(&v);
    Interest::new(n).encode()
}

/// A `localhop_security` of the shape NFD's sample has, with the anchor at `anchor`.
fn localhop(anchor: &Path) -> Policy {
    let text = format!(
        r#"
; the shape of NFD's sample localhop_security, accepting v0.3 commands too
rule
{{
  id "registration by a site key"
  for interest
  filter
  {{
    type name
    regex "^<localhop><nfd><rib>[<register><unregister>]<>{{1,3}}$"
  }}
  checker
  {{
    type customized
    sig-type ecdsa-sha256
    key-locator
    {{
      type name
      regex ^<>*<KEY><>$
    }}
  }}
}}
rule
{{
  id "Site Hierarchy Rule"
  for data
  filter
  {{
    type name
    regex ^<>*<KEY><><><>$
  }}
  checker
  {{
    type hierarchical
    sig-type ecdsa-sha256
  }}
}}
trust-anchor
{{
  type file
  file-name "{}"
}}
"#,
        anchor.display()
    );
    Policy::parse(&text, Path::new("/")).unwrap()
}

fn write_anchor(dir: &Path, cert: &Certificate) -> std::path::PathBuf {
    let path = dir.join("anchor.ndncert");
    std::fs::write(&path, cert.to_base64()).unwrap();
    path
}

/// Runs `v` on `packet`, answering each certificate request from `certs`.
fn run(v: &mut Validator, packet: Packet, certs: &[&Certificate]) -> (Step, usize) {
    let mut step = v.validate(packet, NOW);
    let mut fetches = 0;
    while let Step::Fetch(p) = step {
        fetches += 1;
        let got = certs
            .iter()
            .find(|c| p.want().is_prefix_of(c.name()))
            .map(|c| c.wire().clone());
        step = v.resume(p, got, NOW);
    }
    (step, fetches)
}

#[test]
fn a_key_certified_by_the_anchor_may_register_and_others_may_not() {
    let dir = tempfile::tempdir().unwrap();
    let (root, root_cert) = key("/site", None);
    let (router, router_cert) = key("/site/router", Some(&root));
    let mut v = Validator::new(localhop(&write_anchor(dir.path(), &root_cert))).unwrap();

    let ok = Packet::interest(&command("/localhop/nfd/rib/register/p", &router)).unwrap();
    let (step, fetches) = run(&mut v, ok.clone(), &[&router_cert]);
    assert!(
        matches!(step, Step::Accept(Some(ref k)) if k == router.key_name().unwrap()),
        "{step:?}"
    );
    assert_eq!(fetches, 1);
    // Verified once: the certificate is kept.
    let (step, fetches) = run(&mut v, ok, &[]);
    assert!(matches!(step, Step::Accept(_)), "{step:?}");
    assert_eq!((fetches, v.cached().0), (0, 1));

    // v0.2 commands are checked alike.
    let old = Packet::interest(&command_v02("/localhop/nfd/rib/register/p", &router)).unwrap();
    assert!(matches!(run(&mut v, old, &[]).0, Step::Accept(_)));

    // A neighbour whose own root the schema does not trust.
    let (other_root, other_root_cert) = key("/elsewhere", None);
    let (rogue, rogue_cert) = key("/elsewhere/host", Some(&other_root));
    let bad = Packet::interest(&command("/localhop/nfd/rib/register/p", &rogue)).unwrap();
    let (step, _) = run(&mut v, bad, &[&rogue_cert, &other_root_cert]);
    let Step::Reject(why) = step else {
        panic!("{step:?}")
    };
    assert!(why.contains("not a trust anchor"), "{why}");

    // A key of the site that signs another site's name: the hierarchical rule refuses it.
    let (_, cross) = key("/elsewhere/x", Some(&root));
    let (step, _) = run(&mut v, Packet::data(cross.data()).unwrap(), &[&root_cert]);
    assert!(matches!(step, Step::Reject(_)), "{step:?}");

    // The signature must verify: a command signed by one key naming another.
    struct Liar(KeySigner, KeyLocator);
    impl Signer for Liar {
        fn signature_type(&self) -> SignatureType {
            self.0.signature_type()
        }
        fn key_locator(&self) -> Option<KeyLocator> {
            Some(self.1.clone())
        }
        fn max_signature_len(&self) -> usize {
            self.0.max_signature_len()
        }
        fn sign(
            &self,
            parts: &[&[u8]],
        ) -> Result<kite_packet::SignatureBytes, kite_packet::SignError> {
            self.0.sign(parts)
        }
    }
    let liar = Liar(rogue, KeyLocator::Name(router.key_name().unwrap().clone()));
    let forged = Packet::interest(&command("/localhop/nfd/rib/register/p", &liar)).unwrap();
    let (step, _) = run(&mut v, forged, &[]);
    assert!(
        matches!(step, Step::Reject(ref w) if w.contains("does not verify")),
        "{step:?}"
    );

    // No rule for another command.
    let other = Packet::interest(&command("/localhop/nfd/faces/create/p", &router)).unwrap();
    assert!(matches!(run(&mut v, other, &[]).0, Step::Reject(ref w) if w.contains("no rule")));
}

#[test]
fn chains_loops_lost_and_hostile_certificates_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (root, root_cert) = key("/site", None);
    let mut v = Validator::new(localhop(&write_anchor(dir.path(), &root_cert))).unwrap();

    // A chain longer than MAX_DEPTH: /site/a/a/…, each signed by the one above.
    let mut signer = root.clone();
    let mut certs = Vec::new();
    let mut id = String::from("/site");
    for _ in 0..=MAX_DEPTH {
        id.push_str("/a");
        let (k, c) = key(&id, Some(&signer));
        certs.push(c);
        signer = k;
    }
    let deep = Packet::interest(&command("/localhop/nfd/rib/register/p", &signer)).unwrap();
    let refs: Vec<&Certificate> = certs.iter().collect();
    let (step, fetches) = run(&mut v, deep, &refs);
    assert!(
        matches!(step, Step::Reject(ref w) if w.contains("longer")),
        "{step:?}"
    );
    assert_eq!(fetches, MAX_DEPTH);

    // Two certificates signing each other.
    let ka = KeySigner::generate(SignatureKind::EcdsaP256, &"/site/p".parse().unwrap()).unwrap();
    let kb = KeySigner::generate(SignatureKind::EcdsaP256, &"/site/p/q".parse().unwrap()).unwrap();
    let issue = |k: &KeySigner, by: &KeySigner| {
        Certificate::issue(
            k.key_name().unwrap(),
            &k.key().public_der().unwrap(),
            by,
            b"i",
            1,
            validity(),
        )
        .unwrap()
    };
    let (ca, cb) = (issue(&ka, &kb), issue(&kb, &ka));
    let looped = Packet::interest(&command("/localhop/nfd/rib/register/p", &kb)).unwrap();
    let (step, _) = run(&mut v, looped, &[&ca, &cb]);
    assert!(
        matches!(step, Step::Reject(ref w) if w.contains("loop") || w.contains("passes no checker")),
        "{step:?}"
    );

    // A certificate that never comes, one too large, one that is another's.
    let (k, c) = key("/site/h", Some(&root));
    let p = Packet::interest(&command("/localhop/nfd/rib/register/p", &k)).unwrap();
    let Step::Fetch(pending) = v.validate(p.clone(), NOW) else {
        panic!("a fetch")
    };
    assert_eq!(pending.want(), k.key_name().unwrap());
    assert!(matches!(v.resume(pending, None, NOW), Step::Reject(_)));
    let Step::Fetch(pending) = v.validate(p.clone(), NOW) else {
        panic!("a fetch")
    };
    let huge = Bytes::from(vec![6u8; MAX_CERTIFICATE_SIZE * 4]);
    assert!(matches!(
        v.resume(pending, Some(huge), NOW),
        Step::Reject(_)
    ));
    let Step::Fetch(pending) = v.validate(p.clone(), NOW) else {
        panic!("a fetch")
    };
    assert!(matches!(
        v.resume(pending, Some(root_cert.wire().clone()), NOW),
        Step::Reject(ref w) if w.contains("for")
    ));
    // Expired: the same certificate, checked in 2045.
    let Step::Fetch(pending) = v.validate(p, NOW) else {
        panic!("a fetch")
    };
    assert!(matches!(
        v.resume(pending, Some(c.wire().clone()), 2_366_841_600),
        Step::Reject(ref w) if w.contains("not valid")
    ));
}

#[test]
fn trust_anchor_any_accepts_everything_and_digest_is_checked() {
    let mut v = Validator::accept_all();
    assert!(v.accepts_all());
    let (k, _) = key("/x", None);
    let p = Packet::interest(&command("/localhost/nfd/rib/register/p", &k)).unwrap();
    assert!(matches!(v.validate(p, NOW), Step::Accept(_)));

    let digest_only = Policy::parse(
        "rule { id d\n for interest\n checker { type customized\n sig-type sha256 } }\ntrust-anchor { type dir\n dir /nonexistent }",
        Path::new("/"),
    )
    .unwrap();
    let mut v = Validator::new(digest_only).unwrap();
    let good = command("/localhost/nfd/rib/register/p", &kite_packet::DigestSha256);
    assert!(matches!(
        v.validate(Packet::interest(&good).unwrap(), NOW),
        Step::Accept(_)
    ));
    let mut tampered = Packet::interest(&good).unwrap();
    tampered.signed.push(0);
    assert!(matches!(v.validate(tampered, NOW), Step::Reject(_)));
}

#[test]
fn configurations_are_read_as_ndn_cxx_reads_them_and_bad_ones_refused() {
    let p = Policy::parse(
        "rule\n{\n id r\n for data\n filter { type name\n name /a\n relation is-prefix-of }\n \
         checker { type customized\n sig-type rsa-sha256\n key-locator { type name\n name /a\n relation equal } }\n \
         checker { type customized\n key-locator { type name\n hyper-relation { k-regex ^(<>*)<KEY><>$\n k-expand \\1\n h-relation is-strict-prefix-of\n p-regex ^(<>*)$\n p-expand \\1 } } }\n}\n\
         trust-anchor { type any }\n",
        Path::new("/"),
    )
    .unwrap();
    assert!(p.any);
    assert_eq!((p.data_rules.len(), p.interest_rules.len()), (1, 0));
    let rule = &p.data_rules[0];
    assert!(rule.matches(&"/a/b".parse().unwrap()) && !rule.matches(&"/b".parse().unwrap()));
    assert!(rule
        .check(1, &"/a/b".parse().unwrap(), &"/a/KEY/1".parse().unwrap())
        .is_ok());
    assert!(rule
        .check(3, &"/a/b/c".parse().unwrap(), &"/a/KEY/1".parse().unwrap())
        .is_ok());
    assert!(rule
        .check(3, &"/a".parse().unwrap(), &"/a/KEY/1".parse().unwrap())
        .is_err());

    for bad in [
        "rule { id r\n for interest }",
        "rule { for interest\n checker { type hierarchical } }",
        "rule { id r\n for packets\n checker { type hierarchical } }",
        "rule { id r\n for data\n checker { type magic } }",
        "rule { id r\n for data\n checker { type customized\n sig-type md5 } }",
        "rule { id r\n for data\n checker { type customized } }",
        "rule { id r\n for data\n filter { type name\n regex <a\n } checker { type hierarchical } }",
        "rule { id r\n for data\n filter { type name\n name /a\n relation near } checker { type hierarchical } }",
        "trust-anchor { type file }",
        "trust-anchor { type dir\n dir x\n refresh 5d }",
        "trust-anchor { type base64\n base64-string AAAA }",
        "trust-anchor { type cloud }",
        "policy { }",
    ] {
        assert!(Policy::parse(bad, Path::new("/")).is_err(), "{bad}");
    }
    let missing = Policy::parse(
        "trust-anchor { type file\n file-name nope.cert }",
        Path::new("/tmp"),
    )
    .unwrap();
    assert!(
        Validator::new(missing).is_err(),
        "an anchor file that cannot be read"
    );
}
