use super::*;
use bytes::Bytes;
use kite_mgmt_proto::command::{CommandSignature, Verb};
use kite_mgmt_proto::ControlParameters;
use kite_mgmt_proto::{parse_command, Tlv};
use kite_packet::{Interest, Signer, ValidityPeriod};
use kite_packet::{KeyLocator, SignatureInfo, SignatureType};
use kite_security::validator::Policy;
use kite_security::{Certificate, KeySigner, SignatureKind};

const NOW: u64 = 1_800_000_000_000;

fn cmd(top: TopPrefix, verb: Verb, ts: u64, nonce: u64) -> Command {
    let mut info = SignatureInfo::new(SignatureType::SHA256_WITH_ECDSA);
    info.key_locator = Some(KeyLocator::Name("/nlsr/KEY/1".parse().unwrap()));
    info.time = Some(ts);
    info.nonce = Some(Bytes::copy_from_slice(&nonce.to_be_bytes()));
    Command {
        top,
        verb,
        params: ControlParameters::default(),
        announcement: None,
        signature: CommandSignature::V03 {
            info,
            value: Bytes::new(),
        },
    }
}

#[test]
fn each_validator_keeps_its_own_records() {
    let mut a = Authorizer::new();
    let local = TopPrefix::Localhost;
    a.authorize(
        &cmd(local, Verb::RibRegister, NOW + 10, 1),
        &Bytes::new(),
        300,
        NOW,
    )
    .accepted();
    // Another signer of the same key, behind: faces and strategy-choice accept all.
    a.authorize(
        &cmd(local, Verb::FacesUpdate, NOW, 2),
        &Bytes::new(),
        300,
        NOW,
    )
    .accepted();
    a.authorize(
        &cmd(local, Verb::StrategyChoiceSet, NOW, 2),
        &Bytes::new(),
        300,
        NOW,
    )
    .accepted();
    // The localhop validator has never seen the key.
    a.authorize(
        &cmd(TopPrefix::Localhop, Verb::RibRegister, NOW, 3),
        &Bytes::new(),
        300,
        NOW,
    )
    .accepted();
    // The localhost rib validator has.
    let err = a
        .authorize(
            &cmd(local, Verb::RibUnregister, NOW + 5, 4),
            &Bytes::new(),
            300,
            NOW,
        )
        .rejected();
    assert!(err.contains("older"), "{err}");
    let replay = cmd(local, Verb::RibRegister, NOW + 10, 1);
    assert!(a.authorize(&replay, &Bytes::new(), 300, NOW).is_rejected());
}

#[test]
fn neighbours_records_are_kept_per_face() {
    let mut a = Authorizer::new();
    let hop = TopPrefix::Localhop;
    a.authorize(
        &cmd(hop, Verb::RibRegister, NOW + 100_000, 1),
        &Bytes::new(),
        300,
        NOW,
    )
    .accepted();
    a.authorize(
        &cmd(hop, Verb::RibRegister, NOW, 2),
        &Bytes::new(),
        301,
        NOW,
    )
    .accepted();
    assert!(a
        .authorize(
            &cmd(hop, Verb::RibRegister, NOW, 3),
            &Bytes::new(),
            300,
            NOW
        )
        .is_rejected());
}

#[test]
fn rib_commands_must_be_signed_and_others_need_not() {
    let mut a = Authorizer::new();
    let mut unsigned = cmd(TopPrefix::Localhost, Verb::RibRegister, NOW, 1);
    unsigned.signature = CommandSignature::Unsigned;
    assert!(a
        .authorize(&unsigned, &Bytes::new(), 300, NOW)
        .rejected()
        .contains("unsigned"));
    unsigned.top = TopPrefix::Localhop;
    assert!(a
        .authorize(&unsigned, &Bytes::new(), 300, NOW)
        .is_rejected());
    unsigned.verb = Verb::FibAddNextHop;
    a.authorize(&unsigned, &Bytes::new(), 300, NOW).accepted();
}

fn key(identity: &str, issuer: Option<&KeySigner>) -> (KeySigner, Certificate) {
    let k = KeySigner::generate(SignatureKind::EcdsaP256, &identity.parse().unwrap()).unwrap();
    let validity = ValidityPeriod::new("20200101T000000", "20401231T235959").unwrap();
    let public = k.key().public_der().unwrap();
    let by = issuer.unwrap_or(&k);
    let c = Certificate::issue(k.key_name().unwrap(), &public, by, b"i", 1, validity).unwrap();
    (k, c)
}

/// A `/localhop/nfd/rib/register` command signed by `k` at `ts`: the command and its wire.
fn signed(k: &KeySigner, ts: u64, nonce: u8) -> (Command, Bytes) {
    let p = ControlParameters {
        name: Some("/neighbour".parse().unwrap()),
        ..ControlParameters::default()
    };
    let name: Name = "/localhop/nfd/rib/register".parse().unwrap();
    let mut i = Interest::new(name.append_generic(&p.encode()));
    let mut info = SignatureInfo::new(k.signature_type());
    info.time = Some(ts);
    info.nonce = Some(Bytes::copy_from_slice(&[nonce; 8]));
    i.sig_info = Some(info);
    let wire = i.encode_signed(k).unwrap();
    let cmd = parse_command(&Interest::decode(wire.clone()).unwrap()).unwrap();
    (cmd, wire)
}

#[test]
fn a_neighbour_is_authorized_once_its_certificate_chains_to_the_anchor() {
    let (root, root_cert) = key("/site", None);
    let (router, router_cert) = key("/site/router", Some(&root));
    let (other, other_cert) = key("/elsewhere", None);
    let schema = format!(
        "rule {{ id cmd\n for interest\n filter {{ type name\n regex ^<localhop><nfd><rib><register><> }}\n \
         checker {{ type customized\n key-locator {{ type name\n regex ^<>*<KEY><>$ }} }} }}\n\
         rule {{ id certs\n for data\n checker {{ type hierarchical }} }}\n\
         trust-anchor {{ type base64\n base64-string \"{}\" }}\n",
        root_cert.to_base64().replace('\n', "")
    );
    let policy = Policy::parse(&schema, std::path::Path::new("/")).unwrap();
    let mut a = Authorizer::with_rib_security(RibSecurity {
        localhop: Some(policy),
        ..RibSecurity::default()
    })
    .unwrap();

    // Two commands wait for the router's certificate: neither is recorded yet, so the
    // second, stamped earlier, is not refused for it.
    let (c1, w1) = signed(&router, NOW + 10, 1);
    let (c2, w2) = signed(&router, NOW + 5, 2);
    let Decision::Fetch(first) = a.authorize(&c1, &w1, 300, NOW) else {
        panic!("a certificate to fetch")
    };
    assert_eq!(first.want(), router.key_name().unwrap());
    assert!(first.direct());
    let Decision::Fetch(second) = a.authorize(&c2, &w2, 300, NOW) else {
        panic!("a certificate to fetch")
    };
    a.resume(*first, Some(router_cert.wire().clone()), NOW)
        .accepted();
    a.resume(*second, Some(router_cert.wire().clone()), NOW)
        .accepted();
    // Now recorded, and the certificate kept: an older command is refused at once, from
    // another face too (the key is verified: one record for it).
    let (c3, w3) = signed(&router, NOW + 7, 3);
    assert!(a.authorize(&c3, &w3, 301, NOW).rejected().contains("older"));
    let (c4, w4) = signed(&router, NOW + 11, 4);
    a.authorize(&c4, &w4, 300, NOW).accepted();

    // A key the schema does not lead to, and a certificate that does not come.
    let (c5, w5) = signed(&other, NOW, 5);
    let Decision::Fetch(w) = a.authorize(&c5, &w5, 302, NOW) else {
        panic!("a certificate to fetch")
    };
    let why = a
        .resume(*w, Some(other_cert.wire().clone()), NOW)
        .rejected();
    assert!(why.contains("unauthorized"), "{why}");
    let Decision::Fetch(w) = a.authorize(&c5, &w5, 302, NOW) else {
        panic!("a certificate to fetch")
    };
    assert!(a.resume(*w, None, NOW).rejected().contains("not retrieved"));
}

/// A `/localhost/nfd/<module>/<verb>` command signed by `k` at `ts`.
fn local_command(module: &str, verb: &str, k: &dyn Signer, ts: u64) -> (Command, Bytes) {
    let name: Name = format!("/localhost/nfd/{module}/{verb}").parse().unwrap();
    let p = ControlParameters {
        name: Some("/x".parse().unwrap()),
        ..ControlParameters::default()
    };
    let mut i = Interest::new(name.append_generic(&p.encode()));
    let mut info = SignatureInfo::new(k.signature_type());
    info.time = Some(ts);
    // A module's validator needs no nonce (NFD's command-Interest policy); rib's does.
    if module == "rib" {
        info.nonce = Some(Bytes::copy_from_slice(&ts.to_be_bytes()));
    }
    i.sig_info = Some(info);
    let wire = i.encode_signed(k).unwrap();
    let cmd = parse_command(&Interest::decode(wire.clone()).unwrap()).unwrap();
    (cmd, wire)
}

#[test]
fn modules_are_granted_as_nfds_authorizations_grant_them() {
    let (operator, operator_cert) = key("/operator", None);
    let (stranger, _) = key("/stranger", None);
    let mut a = Authorizer::new();
    a.set_grants(vec![
        Grant {
            certificate: Some(operator_cert),
            privileges: vec!["fib".into(), "strategy-choice".into()],
        },
        Grant {
            certificate: None,
            privileges: vec!["faces".into()],
        },
    ])
    .unwrap();
    let (c, w) = local_command("fib", "add-nexthop", &operator, NOW);
    a.authorize(&c, &w, 300, NOW).accepted();
    // The same command again, and an older one: refused; a newer one is not.
    assert!(a.authorize(&c, &w, 300, NOW).is_rejected());
    let (c, w) = local_command("fib", "add-nexthop", &operator, NOW - 5);
    assert!(a.authorize(&c, &w, 300, NOW).rejected().contains("older"));
    // Each module is its own validator, with its own records, as in NFD.
    let (c, w) = local_command("strategy-choice", "set", &operator, NOW - 5);
    a.authorize(&c, &w, 300, NOW).accepted();
    // Another key, a digest, no signature: refused for fib.
    let (c, w) = local_command("fib", "add-nexthop", &stranger, NOW + 2);
    assert!(a
        .authorize(&c, &w, 300, NOW)
        .rejected()
        .contains("not a key"));
    let (c, w) = local_command("fib", "add-nexthop", &kite_packet::DigestSha256, NOW + 3);
    assert!(a.authorize(&c, &w, 300, NOW).is_rejected());
    let mut unsigned = c.clone();
    unsigned.signature = CommandSignature::Unsigned;
    assert!(a
        .authorize(&unsigned, &w, 300, NOW)
        .rejected()
        .contains("unsigned"));
    // faces: any; cs and kite-strategy: granted to nobody; rib: its own validators.
    unsigned.verb = Verb::FacesUpdate;
    a.authorize(&unsigned, &w, 300, NOW).accepted();
    unsigned.verb = Verb::CsErase;
    assert!(a
        .authorize(&unsigned, &w, 300, NOW)
        .rejected()
        .contains("nobody"));
    let (c, w) = local_command("rib", "register", &stranger, NOW);
    a.authorize(&c, &w, 300, NOW).accepted();
    // A forged signature: the operator's key name on a stranger's signature.
    struct Named(KeySigner, Name);
    impl Signer for Named {
        fn signature_type(&self) -> SignatureType {
            self.0.signature_type()
        }
        fn key_locator(&self) -> Option<KeyLocator> {
            Some(KeyLocator::Name(self.1.clone()))
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
    let forger = Named(stranger, operator.key_name().unwrap().clone());
    let (c, w) = local_command("fib", "add-nexthop", &forger, NOW + 9);
    assert!(a
        .authorize(&c, &w, 300, NOW)
        .rejected()
        .contains("does not verify"));
    assert!(a
        .set_grants(vec![Grant {
            certificate: None,
            privileges: vec!["rib".into()],
        }])
        .is_err());
}

/// A `rib/announce` of `/site/app` whose announcement `pa_key` signs, the command signed
/// with DigestSha256.
fn announce(pa_key: &KeySigner, ts: u64) -> (Command, Bytes) {
    use kite_packet::OwnedComponent;
    let name: Name = "/site/app".parse().unwrap();
    let kw =
        OwnedComponent::new(kite_packet::tlv_type::KEYWORD_NAME_COMPONENT, &b"PA"[..]).unwrap();
    let mut pa = kite_packet::Data::new(
        name.append(kw.as_ref())
            .append(OwnedComponent::version(3).as_ref())
            .append(OwnedComponent::segment(0).as_ref()),
        Bytes::from_static(&[109, 2, 0x03, 0xE8]),
    );
    pa.meta.content_type = Some(kite_packet::ContentType::PREFIX_ANN);
    let mut i = Interest::new("/localhost/nfd/rib/announce".parse().unwrap());
    i.app_params = Some(pa.sign(pa_key).unwrap());
    let mut info = SignatureInfo::new(SignatureType::DIGEST_SHA256);
    info.time = Some(ts);
    info.nonce = Some(Bytes::copy_from_slice(&ts.to_be_bytes()));
    i.sig_info = Some(info);
    let wire = i.encode_signed(&kite_packet::DigestSha256).unwrap();
    (
        parse_command(&Interest::decode(wire.clone()).unwrap()).unwrap(),
        wire,
    )
}

#[test]
fn a_prefix_announcement_must_pass_its_own_validator() {
    let (root, root_cert) = key("/site", None);
    let (app, app_cert) = key("/site/app", Some(&root));
    let (stranger, _) = key("/stranger", None);
    let schema = format!(
        "rule {{ id pa\n for data\n filter {{ type name\n regex ^<>*<32=PA><><>$ }}\n checker {{ type hierarchical }} }}\n\
         rule {{ id certs\n for data\n filter {{ type name\n regex ^<>*<KEY><><><>$ }}\n checker {{ type hierarchical }} }}\n\
         trust-anchor {{ type base64\n base64-string \"{}\" }}\n",
        root_cert.to_base64().replace('\n', "")
    );
    let mut a = Authorizer::with_rib_security(RibSecurity {
        prefix_announcement: Some(Policy::parse(&schema, std::path::Path::new("/")).unwrap()),
        ..RibSecurity::default()
    })
    .unwrap();
    let (c, w) = announce(&app, NOW);
    let Decision::Fetch(waiting) = a.authorize(&c, &w, 300, NOW) else {
        panic!("the announcement's signer's certificate to fetch")
    };
    assert_eq!(waiting.want(), app.key_name().unwrap());
    a.resume(*waiting, Some(app_cert.wire().clone()), NOW)
        .accepted();
    // Another identity may not announce /site/app: refused by the rule, nothing fetched.
    let (c, w) = announce(&stranger, NOW + 1);
    let why = a.authorize(&c, &w, 300, NOW).rejected();
    assert!(why.contains("passes no checker"), "{why}");
    // Refused, so not recorded: the same timestamp with a new nonce is checked afresh.
    let (c, w) = announce(&app, NOW + 1);
    a.authorize(&c, &w, 300, NOW).accepted();
}

impl Decision {
    fn accepted(self) {
        assert!(matches!(self, Decision::Accept), "{self:?}");
    }
    fn rejected(self) -> String {
        match self {
            Decision::Reject(why) => why,
            other => panic!("{other:?}"),
        }
    }
    fn is_rejected(&self) -> bool {
        matches!(self, Decision::Reject(_))
    }
}
