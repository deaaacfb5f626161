//! Who may send which management command to a real `kite run`, and replay protection: each
//! module's validator keeps its own records, as NFD's do, so a program whose command signers
//! each stamp their commands ahead of the clock (NLSR has three `nfd::Controller`s sharing
//! one key) is answered as NFD answers it, while a replayed rib command is still refused; and
//! `[[authorize]]` grants modules to a certificate's key, to any signer, or to nobody.

mod common;

use std::time::Duration;

use bytes::Bytes;
use common::peer::{Conn, Got};
use common::Daemon;
use kite_app::mgmt::CommandSigner;
use kite_mgmt_proto::nfd::{face_flag_bit, status};
use kite_mgmt_proto::{parse_command, ControlParameters, ControlResponse, Tlv};
use kite_packet::{Interest, Name, NetPacket};
use kite_security::{KeySigner, SignatureKind};

const WAIT: Duration = Duration::from_secs(5);

/// The ControlResponse of the command Interest `wire`, sent on `conn`.
fn answer(conn: &mut Conn, wire: &Bytes) -> ControlResponse {
    conn.send(wire);
    next_answer(conn)
}

fn next_answer(conn: &mut Conn) -> ControlResponse {
    let Got::Frame(f) = conn.recv(WAIT) else {
        panic!("no answer within {WAIT:?}");
    };
    match NetPacket::decode_frame(f).expect("a packet") {
        (_, NetPacket::Data(d)) => {
            ControlResponse::decode(&d.content.unwrap_or_default()).expect("a ControlResponse")
        }
        (_, other) => panic!("a ControlResponse expected, got {other:?}"),
    }
}

fn signature_time(wire: &Bytes) -> u64 {
    let i = Interest::decode(wire.clone()).expect("an Interest");
    let cmd = parse_command(&i).expect("a command");
    cmd.signature.timestamp().expect("a SignatureTime")
}

fn route(prefix: &str) -> ControlParameters {
    ControlParameters {
        name: Some(prefix.parse().unwrap()),
        ..ControlParameters::default()
    }
}

#[test]
fn signers_sharing_a_key_are_answered_as_nfd_answers_them_and_a_replay_is_refused() {
    let kite = Daemon::local(&[]);
    let nfd: Name = "/localhost/nfd".parse().unwrap();
    let key = KeySigner::generate(SignatureKind::EcdsaP256, &"/auth/router".parse().unwrap())
        .expect("a key");
    // Two signers of one key, each with its own clock, as two ndn-cxx Controllers.
    let mut routes = CommandSigner::new(key.clone());
    let mut faces = CommandSigner::new(key);
    let mut conn = Conn::unix(kite.socket());

    // The route signer signs a burst faster than one a millisecond: its times run ahead of
    // the clock, and the other signer's first commands, signed meanwhile, are behind them.
    let burst: Vec<Bytes> = (0..8)
        .map(|i| {
            routes
                .sign(&nfd, "rib", "register", &route(&format!("/auth/a{i}")))
                .unwrap()
        })
        .collect();
    let mut local_fields = ControlParameters::default();
    local_fields.set_flag_bit(face_flag_bit::LOCAL_FIELDS_ENABLED, true);
    let strategy = ControlParameters {
        strategy: Some("/localhost/nfd/strategy/multicast".parse().unwrap()),
        ..route("/auth/s")
    };
    let mut face_commands = || {
        [
            faces.sign(&nfd, "faces", "update", &local_fields).unwrap(),
            faces
                .sign(&nfd, "strategy-choice", "set", &strategy)
                .unwrap(),
        ]
    };
    let behind = face_commands();
    assert!(
        signature_time(&behind[1]) < signature_time(burst.last().unwrap()),
        "the second signer runs behind the first"
    );
    for wire in &burst {
        conn.send(wire);
    }
    for wire in &burst {
        let r = next_answer(&mut conn);
        assert_eq!(r.status_code, status::OK, "{r:?} for {wire:?}");
    }
    // Interleaved: rib, faces, strategy-choice, rib, ...
    let mut pending = behind;
    for i in 0..5 {
        for wire in &pending {
            let r = answer(&mut conn, wire);
            assert_eq!(r.status_code, status::OK, "{r:?}");
        }
        let register = routes
            .sign(&nfd, "rib", "register", &route(&format!("/auth/b{i}")))
            .unwrap();
        let r = answer(&mut conn, &register);
        assert_eq!(r.status_code, status::OK, "{r:?}");
        pending = face_commands();
    }

    // The same rib command again (with a new Interest Nonce, which is not signed, so that
    // the forwarder's loop detection lets it through) is a replay.
    let mut replay = Interest::decode(burst[7].clone()).unwrap();
    replay.nonce = Some(common::peer::nonce());
    let r = answer(&mut conn, &replay.encode());
    assert_eq!(r.status_code, status::FORBIDDEN, "{r:?}");
    let log = kite.log_text();
    assert!(
        log.contains("command refused") && log.contains("/auth/router/KEY/"),
        "the refusal is logged with its signer: {log}"
    );
}

#[test]
fn authorize_grants_modules_to_a_certificate_as_nfds_authorizations_do() {
    let dir = tempfile::tempdir().unwrap();
    let key = KeySigner::generate(SignatureKind::EcdsaP256, &"/operator".parse().unwrap())
        .expect("a key");
    let validity = kite_packet::ValidityPeriod::new("20200101T000000", "20401231T235959").unwrap();
    let cert = kite_security::Certificate::issue(
        key.key_name().unwrap(),
        &key.key().public_der().unwrap(),
        &key,
        b"self",
        1,
        validity,
    )
    .unwrap();
    std::fs::write(dir.path().join("operator.ndncert"), cert.to_base64()).unwrap();
    let config = dir.path().join("kite.toml");
    std::fs::write(
        &config,
        "[[authorize]]\ncertfile = \"operator.ndncert\"\nprivileges = [\"faces\", \"strategy-choice\"]\n\
         [[authorize]]\ncertfile = \"any\"\nprivileges = [\"fib\"]\n",
    )
    .unwrap();
    let kite = Daemon::local(&["--config", config.to_str().unwrap()]);
    let nfd: Name = "/localhost/nfd".parse().unwrap();
    let mut conn = Conn::unix(kite.socket());
    let mut operator = CommandSigner::new(key);
    let mut anyone = CommandSigner::digest();
    let mut local_fields = ControlParameters::default();
    local_fields.set_flag_bit(face_flag_bit::LOCAL_FIELDS_ENABLED, true);

    let signed = operator
        .sign(&nfd, "faces", "update", &local_fields)
        .unwrap();
    assert_eq!(answer(&mut conn, &signed).status_code, status::OK);
    let digest = anyone.sign(&nfd, "faces", "update", &local_fields).unwrap();
    assert_eq!(answer(&mut conn, &digest).status_code, status::FORBIDDEN);
    let hop = ControlParameters {
        face_id: Some(255),
        ..route("/auth/fib")
    };
    let fib = anyone.sign(&nfd, "fib", "add-nexthop", &hop).unwrap();
    assert_eq!(answer(&mut conn, &fib).status_code, status::OK);
    let cs = anyone
        .sign(&nfd, "cs", "config", &ControlParameters::default())
        .unwrap();
    assert_eq!(answer(&mut conn, &cs).status_code, status::FORBIDDEN);
    let log = kite.log_text();
    assert!(
        log.contains("granted to nobody") && log.contains("not a key faces is granted to"),
        "{log}"
    );
}
