//! python-ndn verifies Data that Kite signed, with its own verifiers (pycryptodome underneath),
//! for every kind it supports; a tampered Data must fail there too. The python side is
//! `tests/interop/pyndn_verify.py`. Needs python-ndn, so ignored by a plain `cargo test`;
//! `scripts/test.sh` runs it (KITE_PYTHON names the interpreter).

use std::io::Write;
use std::process::{Command, Stdio};

use kite_packet::Data;
use kite_security::{key_name, KeySigner, PrivateKey, SignatureKind};
use serde_json::{json, Value};

use kite_testkit::pyndn;

#[test]
#[ignore = "needs python-ndn: scripts/test.sh runs it"]
fn python_ndn_verifies_what_kite_signs() {
    let mut input = String::new();
    let mut expected = Vec::new();
    // Every kind python-ndn can verify (it has no Null verifier: nothing to check).
    for kind in SignatureKind::ALL
        .into_iter()
        .filter(|&k| k != SignatureKind::Null)
    {
        let key = PrivateKey::generate(kind).unwrap();
        let public = key.public_der().unwrap();
        let name = key_name(&"/interop".parse().unwrap(), &public);
        let signer = KeySigner::new(key, Some(name));
        let data = Data::new("/interop/data/1".parse().unwrap(), vec![0x42u8; 8192]);
        let wire = data.sign(&signer).unwrap();
        let mut tampered = wire.to_vec();
        tampered[100] ^= 0x80;
        for (w, valid) in [(wire.to_vec(), true), (tampered, false)] {
            let case =
                json!({"kind": kind.as_str(), "key": hex::encode(&public), "data": hex::encode(w)});
            input.push_str(&format!("{case}\n"));
            expected.push((kind, valid));
        }
    }
    let mut child = Command::new(pyndn::python())
        .arg(pyndn::interop_script("pyndn_verify.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start python");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "python-ndn side failed");
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), expected.len());
    for (line, (kind, valid)) in lines.iter().zip(expected) {
        assert_eq!(line["kind"], kind.as_str());
        assert_eq!(line["sig_type"], kind.signature_type().0);
        assert_eq!(line["valid"], valid, "{kind}: python-ndn says {line}");
    }
}

#[test]
#[ignore = "needs python-ndn: scripts/test.sh runs it"]
fn kite_reads_the_keys_python_ndns_file_tpm_makes() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(pyndn::python())
        .arg(pyndn::interop_script("pyndn_tpm.py"))
        .arg(dir.path())
        .output()
        .expect("run python");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    for l in lines {
        let name: kite_packet::Name = l["key_name"].as_str().unwrap().parse().unwrap();
        let key = kite_security::cert::read_tpm_file_key(dir.path(), &name)
            .unwrap_or_else(|e| panic!("{l}: {e}"));
        let want = match l["type"].as_str().unwrap() {
            "ec" => SignatureKind::EcdsaP256,
            _ => SignatureKind::Rsa2048,
        };
        assert_eq!(key.kind(), want);
        // python-ndn's public key is the one Kite derives from the private key it read.
        assert_eq!(hex::encode(key.public_der().unwrap()), l["public"], "{l}");
    }
}
