use super::*;
use kite_packet::{DigestSha256, OwnedComponent, SignError, SignatureBytes, SignatureType, Signer};

use crate::wire::Tlv;

fn command_name(prefix: &str, p: &ControlParameters) -> Name {
    let n: Name = prefix.parse().unwrap();
    n.append_generic(&p.encode())
}

fn received(i: &Interest) -> Interest {
    Interest::decode(i.encode()).unwrap()
}

fn register_params() -> ControlParameters {
    ControlParameters {
        name: Some("/app".parse().unwrap()),
        ..Default::default()
    }
}

/// A signer with a KeyLocator name, to check the key replay records are kept for.
struct NamedKey;

impl Signer for NamedKey {
    fn signature_type(&self) -> SignatureType {
        SignatureType::SHA256_WITH_ECDSA
    }
    fn key_locator(&self) -> Option<KeyLocator> {
        Some(KeyLocator::Name("/op/KEY/1".parse().unwrap()))
    }
    fn max_signature_len(&self) -> usize {
        32
    }
    fn sign(&self, parts: &[&[u8]]) -> Result<SignatureBytes, SignError> {
        DigestSha256.sign(parts)
    }
}

#[test]
fn unsigned_register_parses_and_gets_nfd_defaults() {
    let i = Interest::new(command_name(
        "/localhost/nfd/rib/register",
        &register_params(),
    ));
    let mut c = parse_command(&received(&i)).unwrap();
    assert_eq!((c.top, c.verb), (TopPrefix::Localhost, Verb::RibRegister));
    assert_eq!(c.signature, CommandSignature::Unsigned);
    c.validate().unwrap();
    let p = &c.params;
    assert_eq!(
        (p.face_id, p.origin, p.cost, p.flags),
        (Some(0), Some(RouteOrigin::APP), Some(0), Some(1))
    );
}

#[test]
fn v03_signed_command_exposes_time_and_key() {
    let mut i = Interest::new(command_name(
        "/localhost/nfd/rib/register",
        &register_params(),
    ));
    let mut info = SignatureInfo::new(SignatureType::SHA256_WITH_ECDSA);
    info.time = Some(1_800_000_000_123);
    info.nonce = Some(Bytes::from_static(&[1, 2, 3, 4, 5, 6, 7, 8]));
    i.sig_info = Some(info);
    let wire = i.encode_signed(&NamedKey).unwrap();
    let decoded = Interest::decode(wire).unwrap();
    // The name ends with the ParametersSha256DigestComponent after the parameters.
    assert_eq!(decoded.name.len(), 6);
    let c = parse_command(&decoded).unwrap();
    assert!(matches!(c.signature, CommandSignature::V03 { .. }));
    assert_eq!(c.signature.timestamp(), Some(1_800_000_000_123));
    assert_eq!(c.signature.key_name(), Some(&"/op/KEY/1".parse().unwrap()));
    assert_eq!(c.params, register_params());
}

/// A v0.2 command name: parameters, then timestamp, nonce, SignatureInfo, SignatureValue.
fn v02_name(prefix: &str, p: &ControlParameters, timestamp: &[u8]) -> Name {
    let mut info = Vec::new();
    let mut si = SignatureInfo::new(SignatureType::SHA256_WITH_ECDSA);
    si.key_locator = Some(KeyLocator::Name("/op/KEY/2".parse().unwrap()));
    si.encode(tlv_type::SIGNATURE_INFO, &mut info);
    let mut value = Vec::new();
    kite_packet::encode::put_tlv(&mut value, tlv_type::SIGNATURE_VALUE, &[0xAB; 32]);
    command_name(prefix, p)
        .append_generic(timestamp)
        .append_generic(&[9; 8])
        .append_generic(&info)
        .append_generic(&value)
}

#[test]
fn v02_signed_command_parses_its_four_components() {
    let ts = 1_800_000_000_456u64.to_be_bytes();
    let name = v02_name("/localhost/nfd/rib/unregister", &register_params(), &ts);
    let c = parse_command(&received(&Interest::new(name))).unwrap();
    match &c.signature {
        CommandSignature::V02 {
            timestamp,
            nonce,
            value,
            ..
        } => {
            assert_eq!(*timestamp, 1_800_000_000_456);
            assert_eq!(nonce.as_ref(), &[9; 8]);
            assert_eq!(value.as_ref(), &[0xAB; 32]);
        }
        other => panic!("not v0.2: {other:?}"),
    }
    assert_eq!(c.signature.key_name(), Some(&"/op/KEY/2".parse().unwrap()));
    assert_eq!(c.verb, Verb::RibUnregister);
}

#[test]
fn v02_with_malformed_timestamp_is_dropped() {
    let name = v02_name(
        "/localhost/nfd/rib/register",
        &register_params(),
        &[1, 2, 3],
    );
    assert!(matches!(
        parse_command(&received(&Interest::new(name))),
        Err(CommandError::MalformedSignature(_))
    ));
}

#[test]
fn silent_drop_paths() {
    let p = register_params();
    let drop = |name: Name| parse_command(&received(&Interest::new(name))).unwrap_err();
    assert_eq!(
        drop(command_name("/localhost/other/rib/register", &p)),
        CommandError::NotManagement
    );
    assert_eq!(
        drop("/localhost/nfd/rib".parse().unwrap()),
        CommandError::NotManagement
    );
    assert_eq!(
        drop(command_name("/localhost/nfd/rib/list", &p)),
        CommandError::UnknownCommand
    );
    assert_eq!(
        drop(command_name("/localhop/nfd/faces/create", &p)),
        CommandError::UnknownCommand
    );
    assert_eq!(
        drop("/localhost/nfd/rib/register".parse().unwrap()),
        CommandError::MissingParameters
    );
    assert!(matches!(
        drop(
            "/localhost/nfd/rib/register"
                .parse::<Name>()
                .unwrap()
                .append_generic(&[104, 3, 105, 1])
        ),
        CommandError::MalformedParameters(_)
    ));
    // Remote registration is a rib command under /localhop.
    let c = parse_command(&received(&Interest::new(command_name(
        "/localhop/nfd/rib/register",
        &p,
    ))))
    .unwrap();
    assert_eq!(c.top, TopPrefix::Localhop);
}

fn validate(path: &str, p: ControlParameters) -> Result<Command, Rejection> {
    let mut c = parse_command(&received(&Interest::new(command_name(path, &p)))).unwrap();
    c.validate().map(|()| c)
}

#[test]
fn validation_failures_are_400_with_nfd_text() {
    let cases: Vec<(&str, ControlParameters, &str)> = vec![
        (
            "/localhost/nfd/faces/create",
            ControlParameters::default(),
            "Uri is required but missing",
        ),
        (
            "/localhost/nfd/rib/unregister",
            ControlParameters {
                cost: Some(1),
                ..register_params()
            },
            "Cost is forbidden but present",
        ),
        (
            "/localhost/nfd/faces/update",
            ControlParameters {
                flags: Some(1),
                ..Default::default()
            },
            "Flags must be accompanied by Mask",
        ),
        (
            "/localhost/nfd/faces/destroy",
            ControlParameters {
                face_id: Some(0),
                ..Default::default()
            },
            "FaceId must be valid",
        ),
        (
            "/localhost/nfd/cs/erase",
            ControlParameters {
                count: Some(0),
                ..register_params()
            },
            "Count must be positive",
        ),
        (
            "/localhost/nfd/strategy-choice/unset",
            ControlParameters {
                name: Some(Name::root()),
                ..Default::default()
            },
            "Name must not be ndn:/",
        ),
        (
            "/localhost/nfd/strategy-choice/set",
            register_params(),
            "Strategy is required but missing",
        ),
    ];
    for (path, p, detail) in cases {
        let r = validate(path, p).unwrap_err();
        assert_eq!(
            (r.code, r.text.as_str(), r.detail.as_str()),
            (400, "failed in validating parameters", detail),
            "{path}"
        );
        assert_eq!(r.response().status_code, 400);
    }
}

#[test]
fn deep_prefixes_are_414_with_each_managers_text() {
    let deep: Name = (0..33).fold(Name::root(), |acc, _| acc.append_generic(b"x"));
    let with = |p: ControlParameters| ControlParameters {
        name: Some(deep.clone()),
        ..p
    };
    let route = validate("/localhost/nfd/rib/register", with(Default::default())).unwrap_err();
    assert_eq!(
        (route.code, route.text.as_str()),
        (414, "Route prefix cannot exceed 32 components")
    );
    let fib = validate("/localhost/nfd/fib/add-nexthop", with(Default::default())).unwrap_err();
    assert_eq!(
        (fib.code, fib.text.as_str()),
        (414, "Prefix has too many components (limit is 32)")
    );
    let sc = validate(
        "/localhost/nfd/strategy-choice/set",
        with(ControlParameters {
            strategy: Some("/s".parse().unwrap()),
            ..Default::default()
        }),
    )
    .unwrap_err();
    assert_eq!(sc.code, 414);
    // Unregister and remove-nexthop have no depth check in NFD.
    assert!(validate("/localhost/nfd/rib/unregister", with(Default::default())).is_ok());
}

#[test]
fn defaults_of_each_verb() {
    let c = validate(
        "/localhost/nfd/faces/create",
        ControlParameters {
            uri: Some("udp4://192.0.2.1:6363".into()),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(
        c.params.face_persistency,
        Some(crate::nfd::FacePersistency::PERSISTENT)
    );
    let c = validate("/localhost/nfd/fib/add-nexthop", register_params()).unwrap();
    assert_eq!((c.params.face_id, c.params.cost), (Some(0), Some(0)));
    let c = validate("/localhost/nfd/rib/unregister", register_params()).unwrap();
    assert_eq!(
        (c.params.face_id, c.params.origin),
        (Some(0), Some(RouteOrigin::APP))
    );
    let c = validate("/localhost/nfd/faces/update", ControlParameters::default()).unwrap();
    assert_eq!(c.params.face_id, Some(0));
    // Explicit values are kept.
    let c = validate(
        "/localhost/nfd/rib/register",
        ControlParameters {
            flags: Some(0),
            origin: Some(RouteOrigin::STATIC),
            ..register_params()
        },
    )
    .unwrap();
    assert_eq!(
        (c.params.flags, c.params.origin),
        (Some(0), Some(RouteOrigin::STATIC))
    );
}

#[test]
fn announce_takes_its_parameters_from_application_parameters() {
    let name: Name = "/app/x".parse().unwrap();
    let kw = OwnedComponent::new(tlv_type::KEYWORD_NAME_COMPONENT, &b"PA"[..]).unwrap();
    let mut pa = kite_packet::Data::new(
        name.append(kw.as_ref())
            .append(OwnedComponent::version(3).as_ref())
            .append(OwnedComponent::segment(0).as_ref()),
        Bytes::from_static(&[109, 2, 0x03, 0xE8]),
    );
    pa.meta.content_type = Some(kite_packet::ContentType::PREFIX_ANN);
    let mut i = Interest::new("/localhost/nfd/rib/announce".parse().unwrap());
    i.app_params = Some(pa.sign(&DigestSha256).unwrap());
    let mut info = SignatureInfo::new(SignatureType::DIGEST_SHA256);
    info.time = Some(5);
    i.sig_info = Some(info);
    let wire = i.encode_signed(&DigestSha256).unwrap();
    let mut c = parse_command(&Interest::decode(wire).unwrap()).unwrap();
    assert_eq!(c.verb, Verb::RibAnnounce);
    let a = c.announcement.as_ref().unwrap();
    assert_eq!(
        (a.announced_name.to_uri(), a.expiration_period),
        ("/app/x".to_string(), 1000)
    );
    assert_eq!(c.signature.timestamp(), Some(5));
    c.validate().unwrap();

    let mut bad = Interest::new("/localhost/nfd/rib/announce".parse().unwrap());
    bad.app_params = Some(Bytes::from_static(&[6, 0]));
    assert!(matches!(
        parse_command(&received(&bad)),
        Err(CommandError::MalformedAnnouncement(_))
    ));
    let none = Interest::new("/localhost/nfd/rib/announce".parse().unwrap());
    assert_eq!(
        parse_command(&received(&none)),
        Err(CommandError::MissingParameters)
    );
}

#[test]
fn verbs_name_themselves() {
    for (v, m, n) in VERBS {
        assert_eq!((v.module(), v.verb()), (m, n));
        assert_eq!(Verb::from_components(m.as_bytes(), n.as_bytes()), Some(v));
    }
}

#[test]
fn face_id_zero_means_the_requesting_face() {
    let mut c = validate("/localhost/nfd/rib/register", register_params()).unwrap();
    c.resolve_self_face(261);
    assert_eq!(c.params.face_id, Some(261));
    let mut explicit = validate(
        "/localhost/nfd/fib/add-nexthop",
        ControlParameters {
            face_id: Some(300),
            ..register_params()
        },
    )
    .unwrap();
    explicit.resolve_self_face(261);
    assert_eq!(explicit.params.face_id, Some(300));
    let mut destroy = validate(
        "/localhost/nfd/faces/destroy",
        ControlParameters {
            face_id: Some(270),
            ..Default::default()
        },
    )
    .unwrap();
    destroy.resolve_self_face(261);
    assert_eq!(destroy.params.face_id, Some(270));
}
