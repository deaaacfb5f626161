//! NLSR's start-up, replayed against `kite run` without NLSR: the signed management commands
//! NLSR 24.08 sent to NFD in its first seconds (`tests/fixtures/nlsr-startup.txt`, recorded
//! by `record_nlsr_startup` in `e2e_nlsr.rs`) are sent again over one unix socket connection,
//! as NLSR holds one, each re-signed now with a fresh ECDSA key per signer (the router's key
//! and the NLSR instance key, each named in KeyLocator by its certificate as NLSR names them),
//! with the recorded SignatureTimes relative to the first and the recorded send times. NLSR signs with several controllers, each keeping its own last
//! timestamp, so one key's SignatureTimes do not rise in the order the commands are sent;
//! NFD answered every one 200, and a forwarder NLSR can run on must too (NLSR stops when a
//! prefix registration fails).

mod common;

use std::collections::HashMap;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use common::nlsr_startup::{self, Recorded};
use common::peer::{self, Conn, Got};
use common::{ctl, free_tcp_port, free_udp_port, Daemon};
use kite_mgmt_proto::{ControlResponse, Tlv};
use kite_packet::{Interest, Name, NetPacket, SignatureInfo, Signer};
use kite_security::{key_name, KeySigner, PrivateKey, SignatureKind};

/// The router the replay signs as.
const ROUTER: &str = "/ndn/replay/%C1.Router/r";
/// The lifetime of NLSR's command Interests: ndn-cxx's default command timeout.
const COMMAND_LIFETIME_MS: u64 = 10_000;
/// How long the answers may take after the last command.
const ANSWERS: Duration = Duration::from_secs(10);

fn recorded() -> Vec<Recorded> {
    let path = nlsr_startup::fixture_path();
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    nlsr_startup::parse(&text)
}

/// The identity a fixture's signer stands for.
fn identity(signer: &str) -> Name {
    let uri = match signer.strip_prefix("router") {
        Some(rest) => format!("{ROUTER}{rest}"),
        None => signer.to_string(),
    };
    uri.parse().expect("a valid identity")
}

/// A fresh ECDSA key for `name`'s identity whose KeyLocator names its certificate,
/// `<identity>/KEY/<key-id>/NA/<version>`, as ndn-cxx's signers name it.
fn signer(name: &str) -> KeySigner {
    let key = PrivateKey::generate(SignatureKind::EcdsaP256).expect("a key");
    let key_name = key_name(&identity(name), &key.public_der().expect("its public key"));
    let cert = format!("{key_name}/NA/v={}", unix_ms());
    KeySigner::new(key, Some(cert.parse().expect("a certificate name")))
}

/// The command `r` stands for, signed v0.3 by `signer` with SignatureTime `time`.
fn command(r: &Recorded, neighbour: u64, signer: &KeySigner, time: u64) -> Bytes {
    assert_eq!(r.format, "v0.3", "the replay signs v0.3 only: {r:?}");
    let (module, verb) = r.command.split_once('/').expect("module/verb");
    let mut params = r.params.clone();
    if r.neighbour {
        params.face_id = Some(neighbour);
    }
    let mut name: Name = "/localhost/nfd".parse().unwrap();
    for part in [module.as_bytes(), verb.as_bytes(), &params.encode()] {
        name = name.append_generic(part);
    }
    let mut i = Interest::new(name);
    i.lifetime = Some(COMMAND_LIFETIME_MS);
    i.nonce = Some(peer::nonce());
    let mut info = SignatureInfo::new(signer.signature_type());
    info.nonce = Some(Bytes::copy_from_slice(
        &kite_app::random::random_u64().to_be_bytes(),
    ));
    info.time = Some(time);
    i.sig_info = Some(info);
    i.encode_signed(signer).expect("ECDSA signing")
}

fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

#[test]
fn nlsr_startup_commands_are_answered_as_nfd_answered_them() {
    let recorded = recorded();
    let daemon = Daemon::loopback(free_udp_port(), free_tcp_port());
    // The face to NLSR's neighbour existed before NLSR started.
    let uri = format!("udp4://127.0.0.1:{}", free_udp_port());
    let neighbour = ctl::json(
        daemon.socket(),
        &["face", "create", &uri, "--persistency", "permanent"],
    )["face_id"]
        .as_u64()
        .expect("face_id");

    let mut signers: HashMap<String, KeySigner> = HashMap::new();
    let mut sent: HashMap<String, usize> = HashMap::new();
    let mut conn = Conn::unix(daemon.socket());
    let (start, base) = (Instant::now(), unix_ms());
    for (k, r) in recorded.iter().enumerate() {
        let signer = signers
            .entry(r.signer.clone())
            .or_insert_with(|| signer(&r.signer));
        let wire = command(r, neighbour, signer, base.saturating_add_signed(r.sig_ms));
        let Ok((_, NetPacket::Interest(i))) = NetPacket::decode_frame(wire.clone()) else {
            panic!("the command does not decode");
        };
        sent.insert(i.name.to_string(), k);
        std::thread::sleep(
            (start + Duration::from_millis(r.send_ms)).saturating_duration_since(Instant::now()),
        );
        conn.send(&wire);
    }

    let mut answers: Vec<Option<ControlResponse>> = vec![None; recorded.len()];
    let until = Instant::now() + ANSWERS;
    while answers.iter().any(Option::is_none) {
        let left = until.saturating_duration_since(Instant::now());
        let Got::Frame(f) = conn.recv(left) else {
            break;
        };
        if let Ok((_, NetPacket::Data(d))) = NetPacket::decode_frame(f) {
            if let Some(&k) = sent.get(&d.name.to_string()) {
                let content = d.content.clone().unwrap_or_default();
                answers[k] = Some(ControlResponse::decode(&content).expect("a ControlResponse"));
            }
        }
    }
    let wrong: Vec<String> = recorded
        .iter()
        .zip(&answers)
        .enumerate()
        .filter(|(_, (r, a))| a.as_ref().map(|a| a.status_code) != Some(r.status))
        .map(|(k, (r, a))| {
            let got = a.as_ref().map_or("no answer".to_string(), |a| {
                format!("{} {:?}", a.status_code, a.status_text)
            });
            format!(
                "  command {k}: {} signer {} (controller {}) at sig_ms {}: NFD answered {}, \
                 Kite {got}",
                r.command, r.signer, r.controller, r.sig_ms, r.status
            )
        })
        .collect();
    assert!(
        wrong.is_empty(),
        "{} of {} NLSR start-up commands not answered as NFD answered them:\n{}\nkite log:\n{}",
        wrong.len(),
        recorded.len(),
        wrong.join("\n"),
        daemon.log_text()
    );
}

#[test]
fn the_fixture_reads_back_as_written() {
    let path = nlsr_startup::fixture_path();
    let text = std::fs::read_to_string(path).unwrap();
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .collect();
    assert!(lines.len() >= 10, "NLSR sends more commands than {lines:?}");
    for l in lines {
        let r = Recorded::parse(l).unwrap();
        assert_eq!(r.to_line(), l);
        assert_eq!(
            r.controller,
            nlsr_startup::controller(&r.command, r.neighbour || r.params.face_id.is_some()),
            "{l}"
        );
    }
}
