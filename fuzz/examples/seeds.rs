//! Writes the seed corpus of the trust, link, ether, xdp_udp, mgmt, config and forwarder targets with
//! Kite's own encoders: `cargo run --example seeds` (from `fuzz/`). Each seed is one situation
//! the target should start from; libFuzzer grows the rest. Seeds are rewritten in place (same
//! name, same octets when the encoders did not change).

use std::fs;
use std::path::Path;

use bytes::Bytes;
use kite_fuzz::forwarder::{self as fwd, face, InterestSpec, Lp, Op, Reply, Token};
use kite_fuzz::input::Writer;
use kite_fuzz::names::sel::*;
use kite_fuzz::{ether, link, mgmt};
use kite_mgmt_proto::datasets::{
    ChannelStatus, CsInfo, FaceQueryFilter, FaceStatus, FibEntry, ForwarderStatus, NextHopRecord,
    RibEntry, Route, StrategyChoice,
};
use kite_mgmt_proto::nfd::RouteOrigin;
use kite_mgmt_proto::{
    encode_items, ControlParameters, ControlResponse, FaceEventNotification, Tlv,
};
use kite_packet::encode::put_nonneg_tlv;
use kite_packet::{
    tlv_type, ContentType, Data, DigestSha256, Interest, KeyLocator, MetaInfo, Name,
    OwnedComponent, SignatureInfo, SignatureType,
};

fn write(target: &str, seed: &str, octets: &[u8]) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("corpus")
        .join(target);
    fs::create_dir_all(&dir).expect("corpus directory");
    fs::write(dir.join(format!("seed-{seed}")), octets).expect("seed written");
}

fn name(uri: &str) -> Name {
    uri.parse().expect("a name")
}

fn link_seeds() {
    let datagram = |w: &mut Writer| link::Setup::write(w, Some(1500), false, 4, 65535);
    // A packet the face's sender cuts into fragments, arriving rotated.
    let mut w = Writer::default();
    datagram(&mut w);
    w.u8(link::op::SEND)
        .u8(1)
        .u16(4000)
        .u8(1 | 4)
        .u16(500)
        .u8(3);
    w.u8(link::op::SEND).u8(0).u16(900).u8(2).u16(300).u8(1);
    write("link", "send-fragmented", &w.0);
    // Two halves of an Interest as explicit fragments, then a duplicate and a bad count.
    let i = link::packet(false, 40);
    let (a, b) = i.split_at(i.len() / 2);
    let mut w = Writer::default();
    datagram(&mut w);
    w.u8(link::op::FRAGMENT)
        .u8(0)
        .u16(10)
        .u8(0)
        .u8(2)
        .u8(1)
        .blob(a);
    w.u8(link::op::FRAGMENT)
        .u8(0)
        .u16(10)
        .u8(0)
        .u8(2)
        .u8(0)
        .blob(a);
    w.u8(link::op::FRAGMENT)
        .u8(0)
        .u16(11)
        .u8(1)
        .u8(2)
        .u8(0)
        .blob(b);
    w.u8(link::op::FRAGMENT)
        .u8(0)
        .u16(13)
        .u8(1)
        .u8(3)
        .u8(0)
        .blob(b);
    write("link", "explicit-fragments", &w.0);
    // Partials from several senders until reassembly is full, then they time out.
    let mut w = Writer::default();
    link::Setup::write(&mut w, Some(1500), false, 2, 200);
    for s in 0..4u8 {
        w.u8(link::op::FRAGMENT)
            .u8(s)
            .u16(100 * u16::from(s))
            .u8(0)
            .u8(3)
            .u8(0)
            .blob(&[7; 80]);
    }
    w.u8(link::op::ADVANCE).u16(600);
    w.u8(link::op::FRAGMENT)
        .u8(1)
        .u16(7)
        .u8(1)
        .u8(3)
        .u8(0)
        .blob(&[7; 80]);
    write("link", "full-then-expired", &w.0);
    // Bare and LP-framed packets on a stream face with local fields, fragments refused there.
    let mut w = Writer::default();
    link::Setup::write(&mut w, None, true, 4, 4096);
    w.u8(link::op::RAW).u8(0).blob(&link::packet(false, 0));
    w.u8(link::op::RAW).u8(0).blob(&link::packet(true, 100));
    let lp = kite_packet::LpPacket {
        header: link::header(8 | 1),
        fragment: Some(link::packet(false, 0)),
    };
    w.u8(link::op::RAW).u8(0).blob(&lp.encode());
    let nack = kite_packet::LpPacket {
        header: link::header(2 | 4),
        fragment: Some(link::packet(false, 0)),
    };
    w.u8(link::op::RAW).u8(0).blob(&nack.encode());
    w.u8(link::op::FRAGMENT)
        .u8(0)
        .u16(1)
        .u8(0)
        .u8(2)
        .u8(0)
        .blob(a);
    w.u8(link::op::SETTINGS).u8(1);
    w.u8(link::op::RAW).u8(0).blob(&lp.encode());
    write("link", "stream-local-fields", &w.0);
}

fn ether_seeds() {
    // Interests to the group and to this host, from peers, from us, to others.
    let mut w = Writer::default();
    ether::write_interest_frame(&mut w, 0, 0, 1);
    ether::write_interest_frame(&mut w, 1, 1, 2);
    ether::write_interest_frame(&mut w, 1, 4, 3);
    ether::write_interest_frame(&mut w, 2, 2, 4);
    ether::write_interest_frame(&mut w, 3, 3, 5);
    ether::write_interest_frame(&mut w, 4, 5, 6);
    write("ether", "interest-destinations", &w.0);
    // Fragments to the group from two senders, interleaved, then the clock moves on.
    let mut w = Writer::default();
    for s in 0..2u8 {
        w.u8(ether::op::BUILT)
            .u8(0)
            .u8(s)
            .u8(1 << 2)
            .u16(5)
            .u8(0)
            .u8(2)
            .blob(&[5, 4]);
    }
    for s in 0..2u8 {
        w.u8(ether::op::BUILT)
            .u8(0)
            .u8(s)
            .u8(1 << 2)
            .u16(6)
            .u8(1)
            .u8(2)
            .blob(&[7, 1, 0x61]);
    }
    w.u8(ether::op::ADVANCE).u16(1000);
    write("ether", "group-fragments", &w.0);
    // Short frames, another EtherType, no padding, trailing garbage.
    let mut w = Writer::default();
    w.u8(ether::op::RAW).blob(&[0; 13]);
    w.u8(ether::op::BUILT)
        .u8(1)
        .u8(0)
        .u8(1 | 2 << 2)
        .u16(0x0800)
        .u8(1);
    w.u8(ether::op::BUILT).u8(1).u8(0).u8(2 | 2 << 2).u8(1);
    w.u8(ether::op::BUILT)
        .u8(1)
        .u8(0)
        .u8(3 << 2)
        .u8(1)
        .blob(&[0xff, 0xff, 0xff]);
    write("ether", "odd-frames", &w.0);
}

fn with_kind(kind: u8, octets: &[u8]) -> Vec<u8> {
    let mut v = vec![kind];
    v.extend_from_slice(octets);
    v
}

fn command(verb: &str, p: &ControlParameters) -> Interest {
    Interest::new(name(&format!("/localhost/nfd/{verb}")).append_generic(&p.encode()))
}

fn mgmt_seeds() {
    use mgmt::kind;
    let register = ControlParameters {
        name: Some(name("/app")),
        face_id: Some(0),
        origin: Some(RouteOrigin::CLIENT),
        cost: Some(10),
        flags: Some(1),
        expiration_period: Some(60_000),
        ..ControlParameters::default()
    };
    let create = ControlParameters {
        uri: Some("udp4://127.0.0.1:6363".into()),
        mtu: Some(1400),
        flags: Some(1),
        mask: Some(1),
        ..ControlParameters::default()
    };
    let m = |k: u8, s: &str, o: &[u8]| write("mgmt", s, &with_kind(k, o));
    m(
        kind::CONTROL_PARAMETERS,
        "control-parameters",
        &register.encode(),
    );
    m(
        kind::CONTROL_PARAMETERS,
        "control-parameters-create",
        &create.encode(),
    );
    let resp = ControlResponse::success(&register);
    m(kind::CONTROL_RESPONSE, "control-response", &resp.encode());
    m(
        kind::CONTROL_RESPONSE,
        "control-response-error",
        &ControlResponse::new(404, "not found").encode(),
    );
    let event = FaceEventNotification {
        face_id: 300,
        uri: "unix:///run/nfd.sock".into(),
        local_uri: "fd://30".into(),
        flags: 1,
        ..FaceEventNotification::default()
    };
    m(kind::FACE_EVENT, "face-event", &event.encode());
    let face = FaceStatus {
        face_id: 300,
        uri: "tcp4://127.0.0.1:6363".into(),
        local_uri: "tcp4://127.0.0.1:40000".into(),
        expiration_period: Some(1000),
        ..FaceStatus::default()
    };
    m(
        kind::FACE_STATUS,
        "face-status",
        &encode_items(&[face.clone(), FaceStatus::default()]),
    );
    let channel = ChannelStatus {
        local_uri: "udp4://0.0.0.0:6363".into(),
        ..ChannelStatus::default()
    };
    m(
        kind::CHANNEL_STATUS,
        "channel-status",
        &encode_items(&[channel]),
    );
    let fib = FibEntry {
        name: name("/a/b"),
        next_hops: vec![
            NextHopRecord {
                face_id: 300,
                cost: 1,
            },
            NextHopRecord {
                face_id: 301,
                cost: 7,
            },
        ],
    };
    m(kind::FIB, "fib", &encode_items(&[fib]));
    let rib = RibEntry {
        name: name("/a"),
        routes: vec![Route {
            face_id: 300,
            cost: 5,
            expiration_period: Some(9),
            ..Route::default()
        }],
    };
    m(kind::RIB, "rib", &encode_items(&[rib]));
    let sc = StrategyChoice {
        name: name("/"),
        strategy: name("/localhost/nfd/strategy/best-route/v=5"),
    };
    m(
        kind::STRATEGY_CHOICE,
        "strategy-choice",
        &encode_items(&[sc]),
    );
    let cs = CsInfo {
        capacity: 65536,
        flags: 3,
        n_cs_entries: 10,
        n_hits: 4,
        n_misses: 2,
    };
    m(kind::CS_INFO, "cs-info", &encode_items(&[cs]));
    m(
        kind::FORWARDER_STATUS,
        "forwarder-status",
        &ForwarderStatus::default().encode(),
    );
    let filter = FaceQueryFilter {
        face_id: Some(300),
        ..FaceQueryFilter::default()
    };
    m(
        kind::FACE_QUERY_FILTER,
        "face-query-filter",
        &filter.encode(),
    );
    let mut content = Vec::new();
    put_nonneg_tlv(
        &mut content,
        kite_mgmt_proto::nfd::EXPIRATION_PERIOD,
        3_600_000,
    );
    let pa_name = name("/announced")
        .append(
            OwnedComponent::new(tlv_type::KEYWORD_NAME_COMPONENT, &b"PA"[..])
                .expect("keyword")
                .as_ref(),
        )
        .append(OwnedComponent::version(1).as_ref())
        .append(OwnedComponent::segment(0).as_ref());
    let mut pa = Data::new(pa_name, content);
    pa.meta = MetaInfo {
        content_type: Some(ContentType::PREFIX_ANN),
        ..MetaInfo::default()
    };
    let pa = pa.sign(&DigestSha256).expect("signed");
    m(kind::PREFIX_ANNOUNCEMENT, "prefix-announcement", &pa);
    // Commands: unsigned, signed Interest v0.3, signed command Interest v0.2, rib/announce,
    // and a dataset request.
    m(
        kind::INTEREST,
        "command-unsigned",
        &command("rib/register", &register).encode(),
    );
    m(
        kind::INTEREST,
        "command-faces-create",
        &command("faces/create", &create).encode(),
    );
    let mut signed = command("rib/register", &register);
    let mut info = SignatureInfo::new(SignatureType::DIGEST_SHA256);
    info.time = Some(1_800_000_000_123);
    info.nonce = Some(Bytes::from_static(&[1, 2, 3, 4, 5, 6, 7, 8]));
    info.key_locator = Some(KeyLocator::Name(name("/op/KEY/1")));
    signed.sig_info = Some(info);
    m(
        kind::INTEREST,
        "command-v03",
        &signed.encode_signed(&DigestSha256).expect("signed"),
    );
    let mut sig_info = Vec::new();
    SignatureInfo::new(SignatureType::DIGEST_SHA256)
        .encode(tlv_type::SIGNATURE_INFO, &mut sig_info);
    let mut sig_value = Vec::new();
    kite_packet::encode::put_tlv(&mut sig_value, tlv_type::SIGNATURE_VALUE, &[0; 32]);
    let v02 = Interest::new(
        name("/localhost/nfd/rib/unregister")
            .append_generic(&register.encode())
            .append_generic(&[0x00, 0x00, 0x01, 0x8e, 0x00, 0x00, 0x00, 0x00])
            .append_generic(&[9, 9, 9, 9, 9, 9, 9, 9])
            .append_generic(&sig_info)
            .append_generic(&sig_value),
    );
    m(kind::INTEREST, "command-v02", &v02.encode());
    // A v0.2 timestamp at the end of the clock's range: its replay must still be refused.
    let v02_end = Interest::new(
        name("/localhost/nfd/rib/unregister")
            .append_generic(&register.encode())
            .append_generic(&[0xff; 8])
            .append_generic(&[9, 9, 9, 9, 9, 9, 9, 9])
            .append_generic(&sig_info)
            .append_generic(&sig_value),
    );
    m(
        kind::INTEREST,
        "command-v02-end-of-clock",
        &v02_end.encode(),
    );
    let mut announce = Interest::new(name("/localhop/nfd/rib/announce"));
    announce.app_params = Some(pa);
    m(kind::INTEREST, "command-announce", &announce.encode());
    m(
        kind::INTEREST,
        "dataset-faces-list",
        &Interest::new(name("/localhost/nfd/faces/list")).encode(),
    );
    let query = Interest::new(name("/localhost/nfd/faces/query").append_generic(&filter.encode()));
    m(kind::INTEREST, "dataset-faces-query", &query.encode());
}

fn config_seeds() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/kite.example.toml");
    write(
        "config",
        "example",
        &fs::read(example).expect("the example configuration"),
    );
    write("config", "empty", b"");
    write(
        "config",
        "faces-and-routes",
        b"[forwarder]\nthreads = 2\n\n[[face]]\nuri = \"udp4://192.0.2.1:6363\"\nmtu = 1400\n\n\
          [[route]]\nprefix = \"/a\"\nface = \"udp4://192.0.2.1:6363\"\ncost = 3\n",
    );
    write("config", "bad-value", b"[face_system.udp]\nmtu = 10\n");
}

fn interest(f: u8, sel: &[u8], nonce: u32) -> Op {
    Op::Interest {
        face: f,
        spec: InterestSpec::new(sel, nonce),
        lp: Lp::NONE,
    }
}

fn answer(extra: u8) -> Op {
    Op::Answer {
        which: 0,
        reply: Reply::Data {
            extra,
            freshness: 50,
        },
        echo: true,
    }
}

fn forwarder_seeds() {
    let p =
        |s: &str, flags: u8, ops: &[Op]| write("forwarder", s, &fwd::encode_program(flags, ops));
    p(
        "forward-then-answer",
        0,
        &[
            Op::Interest {
                face: face::APP,
                spec: InterestSpec::new(&[A, seg(1)], 1),
                lp: Lp::token(Token::Raw(vec![1, 2, 3])),
            },
            answer(0),
            interest(face::APP2, &[A, seg(1)], 2),
        ],
    );
    p(
        "aggregate-then-answer-by-name",
        0,
        &[
            interest(face::APP, &[A, seg(2)], 1),
            interest(face::APP2, &[A, seg(2)], 2),
            Op::Answer {
                which: 0,
                reply: Reply::Data {
                    extra: 0,
                    freshness: 0,
                },
                echo: false,
            },
        ],
    );
    let mut cbp = InterestSpec::new(&[A], 5);
    cbp.can_be_prefix = true;
    cbp.must_be_fresh = true;
    p(
        "can-be-prefix-then-cache-hit",
        0,
        &[
            Op::Interest {
                face: face::APP,
                spec: cbp.clone(),
                lp: Lp::NONE,
            },
            answer(2),
            Op::Interest {
                face: face::APP2,
                spec: InterestSpec {
                    nonce: Some(6),
                    ..cbp
                },
                lp: Lp::NONE,
            },
            Op::Advance(100),
            interest(face::APP, &[A, seg(0), seg(1)], 7),
        ],
    );
    p(
        "nack-and-duplicate",
        0,
        &[
            interest(face::APP, &[B, seg(1)], 9),
            Op::Answer {
                which: 0,
                reply: Reply::Nack(150),
                echo: true,
            },
            interest(face::APP, &[B, seg(2)], 10),
            interest(face::UP1, &[B, seg(2)], 10),
            Op::Nack {
                face: face::UP2,
                spec: InterestSpec::new(&[B, seg(2)], 10),
                reason: 100,
                lp: Lp::token(Token::Echo(0)),
            },
        ],
    );
    let mut big = InterestSpec::new(&[A, D], 11);
    big.params = Some(255);
    p(
        "fragments",
        0,
        &[
            Op::Fragment {
                mtu: 120,
                seq: 1,
                rotate: 1,
                reverse: true,
                drop: None,
                dup: Some(0),
                sender: 0,
                inner: Box::new(Op::Interest {
                    face: face::APP2,
                    spec: big,
                    lp: Lp::token(Token::Raw(vec![9; 8])),
                }),
            },
            Op::Fragment {
                mtu: 100,
                seq: 900,
                rotate: 0,
                reverse: false,
                drop: None,
                dup: None,
                sender: 1,
                inner: Box::new(answer(1)),
            },
            Op::Fragment {
                mtu: 80,
                seq: 2000,
                rotate: 2,
                reverse: false,
                drop: Some(1),
                dup: None,
                sender: 2,
                inner: Box::new(Op::Data {
                    face: face::MCAST,
                    name: vec![X, seg(3)],
                    freshness: Some(10),
                    content: 200,
                    lp: Lp::NONE,
                }),
            },
            Op::Advance(600),
        ],
    );
    p(
        "expiry-then-late-data",
        0,
        &[
            interest(face::APP, &[A, seg(3)], 12),
            Op::Advance(150),
            answer(0),
            Op::Advance(5000),
        ],
    );
    p(
        "localhost-scope",
        0,
        &[
            interest(face::APP, &[LOCALHOST, NFD, A], 13),
            interest(face::UP1, &[LOCALHOST, NFD, A], 14),
            interest(face::UP1, &[LOCALHOP, NFD, A], 15),
            interest(face::UNKNOWN, &[A], 16),
        ],
    );
    p(
        "multicast-strategy",
        0,
        &[
            interest(face::APP, &[X, seg(1)], 17),
            answer(0),
            Op::Answer {
                which: 1,
                reply: Reply::Nack(50),
                echo: true,
            },
        ],
    );
    p(
        "unsolicited-admitted",
        3,
        &[
            Op::Data {
                face: face::UP1,
                name: vec![D, seg(1)],
                freshness: Some(1000),
                content: 10,
                lp: Lp::NONE,
            },
            interest(face::APP, &[D, seg(1)], 18),
        ],
    );
    p(
        "routes-and-faces",
        0,
        &[
            Op::Route {
                prefix: vec![D],
                face: face::MCAST,
                cost: Some(1),
            },
            Op::Strategy {
                prefix: vec![D],
                which: 2,
            },
            interest(face::APP, &[D, seg(4)], 19),
            Op::Face {
                face: face::MCAST,
                add: false,
            },
            answer(0),
            Op::Face {
                face: face::MCAST,
                add: true,
            },
            Op::Route {
                prefix: vec![D],
                face: face::MCAST,
                cost: None,
            },
            interest(face::APP, &[D, seg(5)], 20),
        ],
    );
    p(
        "burst",
        0,
        &[
            Op::Burst(5),
            interest(face::APP, &[A, seg(9)], 21),
            interest(face::APP2, &[B, seg(9)], 22),
            interest(face::APP, &[C, seg(9)], 23),
            Op::Data {
                face: face::UP1,
                name: vec![A, seg(9)],
                freshness: None,
                content: 1,
                lp: Lp::NONE,
            },
            interest(face::UP2, &[A, seg(9)], 24),
        ],
    );
    let mut hop = InterestSpec::new(&[A, seg(10)], 25);
    hop.hop_limit = Some(1);
    let mut hinted = InterestSpec::new(&[C, seg(10)], 26);
    hinted.hint = Some(vec![B]);
    p(
        "next-hop-hop-limit-hint",
        4 | 8,
        &[
            Op::Interest {
                face: face::APP,
                spec: InterestSpec::new(&[A, seg(11)], 27),
                lp: Lp {
                    next_hop: Some(face::UP2),
                    mark: 1,
                    ..Lp::NONE
                },
            },
            Op::Interest {
                face: face::UP1,
                spec: hop,
                lp: Lp::NONE,
            },
            Op::Interest {
                face: face::APP,
                spec: hinted,
                lp: Lp::NONE,
            },
            answer(0),
        ],
    );
    p(
        "content-store-controls",
        3,
        &[
            Op::CsCapacity(2),
            Op::Data {
                face: face::UP1,
                name: vec![A, seg(20)],
                freshness: Some(5),
                content: 3,
                lp: Lp::NONE,
            },
            Op::Data {
                face: face::UP1,
                name: vec![A, seg(21)],
                freshness: Some(5),
                content: 3,
                lp: Lp {
                    no_cache: true,
                    ..Lp::NONE
                },
            },
            Op::CsErase {
                prefix: vec![A],
                limit: 1,
            },
            Op::CsFlags {
                admit: true,
                serve: false,
            },
            interest(face::APP, &[A, seg(20)], 28),
        ],
    );
    p(
        "long-names-and-digests",
        0,
        &[
            interest(face::APP, &[A, long(5), long(5), long(3)], 29),
            answer(0),
            interest(face::APP, &[A, 0xc0], 30),
            answer(0),
            Op::Raw {
                face: face::UP1,
                frame: vec![0x64, 0x02, 0x50, 0x00],
            },
        ],
    );
    p(
        "max-length-names",
        0,
        &[
            interest(face::APP, &[A, 0xc0], 31),
            interest(face::APP, &longest_name(), 32),
            Op::Data {
                face: face::UP1,
                name: longest_name(),
                freshness: None,
                content: 0,
                lp: Lp::NONE,
            },
        ],
    );
}

/// Selectors of a name whose value is 65531 octets: a digest component no longer fits.
fn longest_name() -> Vec<u8> {
    let mut n = vec![long(5); 7];
    n.extend([long(4), long(3), long(2), long(1), long(0)]);
    n.extend([sized(55), sized(55), sized(55), sized(30)]);
    n
}

fn trust_seeds() {
    let schema = fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates/kite/tests/e2e_localhop_security.rs"),
    )
    .expect("the e2e schema");
    let start = schema.find("rule\n{").expect("a rule");
    let end = schema[start..].find("\"#;").expect("the schema's end") + start;
    let mut seed = vec![0u8];
    seed.extend_from_slice(&schema.as_bytes()[start..end]);
    write("trust", "schema", &seed);
    // Ed25519 from a fixed seed: the same certificate, to the octet, on every run.
    let mut pkcs8 = vec![
        0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04,
        0x20,
    ];
    pkcs8.extend_from_slice(&[7u8; 32]);
    let key = kite_security::PrivateKey::from_der(kite_security::SignatureKind::Ed25519, &pkcs8)
        .expect("an Ed25519 key");
    let public = key.public_der().expect("a public key");
    let name = kite_security::key_name(&"/site/router".parse().expect("a name"), &public);
    let signer = kite_security::KeySigner::new(key, Some(name));
    let validity = kite_packet::ValidityPeriod::new("20200101T000000", "20401231T235959")
        .expect("a validity period");
    let cert = kite_security::Certificate::issue(
        signer.key_name().expect("a key name"),
        &signer.key().public_der().expect("a public key"),
        &signer,
        b"self",
        1,
        validity,
    )
    .expect("a certificate");
    let mut seed = vec![1u8];
    seed.extend_from_slice(cert.wire());
    write("trust", "certificate", &seed);
    let mut seed = vec![2u8];
    seed.extend_from_slice(b"^(<>*)<KEY><>{1,3}$\0");
    let name: kite_packet::Name = "/site/router/KEY/k/self/v".parse().expect("a name");
    seed.push(7);
    seed.extend_from_slice(name.value());
    write("trust", "regex", &seed);
}

/// The ones' complement sum of `octets`, folded, as IP and UDP checksums add them.
fn ones_sum(mut sum: u32, octets: &[u8]) -> u32 {
    for pair in octets.chunks(2) {
        let hi = u32::from(pair[0]) << 8;
        sum += hi | pair.get(1).map_or(0, |&lo| u32::from(lo));
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    sum
}

/// An Ethernet frame carrying a UDP datagram from port 6363 to `port`, with correct IPv4
/// header and UDP checksums (IPv6 when the addresses are 16 octets); `options` are IPv4 header
/// options, `frag` the IPv4 flags and fragment offset field.
fn udp_frame(
    src: &[u8],
    dst: &[u8],
    port: u16,
    options: &[u8],
    frag: u16,
    payload: &[u8],
) -> Vec<u8> {
    let mut f = vec![0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2];
    let udp_len = (8 + payload.len()) as u16;
    let mut udp = Vec::new();
    udp.extend_from_slice(&6363u16.to_be_bytes());
    udp.extend_from_slice(&port.to_be_bytes());
    udp.extend_from_slice(&udp_len.to_be_bytes());
    udp.extend_from_slice(&[0, 0]);
    udp.extend_from_slice(payload);
    let mut pseudo = Vec::new();
    pseudo.extend_from_slice(src);
    pseudo.extend_from_slice(dst);
    pseudo.extend_from_slice(&[0, 17]);
    pseudo.extend_from_slice(&udp_len.to_be_bytes());
    let sum = !(ones_sum(ones_sum(0, &pseudo), &udp) as u16);
    udp[6..8].copy_from_slice(&(if sum == 0 { 0xffff } else { sum }).to_be_bytes());
    if src.len() == 4 {
        f.extend_from_slice(&[0x08, 0x00]);
        let ihl = 5 + options.len() / 4;
        let total = (ihl * 4 + udp.len()) as u16;
        let mut ip = vec![0x40 | ihl as u8, 0];
        ip.extend_from_slice(&total.to_be_bytes());
        ip.extend_from_slice(&[0, 1]);
        ip.extend_from_slice(&frag.to_be_bytes());
        ip.extend_from_slice(&[64, 17, 0, 0]);
        ip.extend_from_slice(src);
        ip.extend_from_slice(dst);
        ip.extend_from_slice(options);
        let sum = !(ones_sum(0, &ip) as u16);
        ip[10..12].copy_from_slice(&sum.to_be_bytes());
        f.extend_from_slice(&ip);
    } else {
        f.extend_from_slice(&[0x86, 0xdd, 0x60, 0, 0, 0]);
        f.extend_from_slice(&udp_len.to_be_bytes());
        f.extend_from_slice(&[17, 64]);
        f.extend_from_slice(src);
        f.extend_from_slice(dst);
    }
    f.extend_from_slice(&udp);
    f
}

fn xdp_udp_seeds() {
    let interest = Interest::new(name("/example/xdp")).encode();
    let v4 = |last: u8| [10, 0, 0, last];
    let v6 = |first: u16, last: u8| {
        let mut a = [0u8; 16];
        a[..2].copy_from_slice(&first.to_be_bytes());
        a[2..4].copy_from_slice(&[0x0d, 0xb8]);
        a[15] = last;
        a
    };
    let link_local = |last: u8| {
        let mut a = [0u8; 16];
        a[..2].copy_from_slice(&[0xfe, 0x80]);
        a[15] = last;
        a
    };
    write(
        "xdp_udp",
        "ipv4",
        &udp_frame(&v4(2), &v4(1), 6363, &[], 0, &interest),
    );
    write(
        "xdp_udp",
        "ipv4-options",
        &udp_frame(&v4(2), &v4(1), 6363, &[1, 1, 1, 0], 0, &interest),
    );
    write(
        "xdp_udp",
        "ipv4-fragment",
        &udp_frame(&v4(2), &v4(1), 6363, &[], 0x2000, &interest),
    );
    write(
        "xdp_udp",
        "ipv4-other-port",
        &udp_frame(&v4(2), &v4(1), 6364, &[], 0, &interest),
    );
    write(
        "xdp_udp",
        "ipv6",
        &udp_frame(&v6(0x2001, 2), &v6(0x2001, 1), 6363, &[], 0, &interest),
    );
    write(
        "xdp_udp",
        "ipv6-link-local",
        &udp_frame(&link_local(2), &link_local(1), 6363, &[], 0, &interest),
    );
}

fn main() {
    trust_seeds();
    link_seeds();
    ether_seeds();
    xdp_udp_seeds();
    mgmt_seeds();
    config_seeds();
    forwarder_seeds();
}
