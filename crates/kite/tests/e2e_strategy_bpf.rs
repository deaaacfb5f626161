//! eBPF strategies through a real `kite run`: `kite strategy load` a program, choose it for a
//! prefix, exchange Interests and Data through it, reload it, and see unload refused while a
//! prefix uses it; bad programs and duplicate names come back as NFD status codes.

mod common;

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::Duration;

use bytes::Bytes;
use common::Daemon;
use kite_app::Client;
use kite_packet::{Data, Interest, LpHeader, LpPacket, Name, NetPacketView};
use serde_json::Value;

fn kite(socket: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kite"))
        .args(args)
        .args(["--socket", socket])
        .output()
        .expect("kite runs")
}

fn ok(socket: &str, args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.push("--json");
    let out = kite(socket, &all);
    assert!(
        out.status.success(),
        "kite {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON output")
}

fn err(socket: &str, args: &[&str]) -> String {
    let out = kite(socket, args);
    assert!(!out.status.success(), "kite {args:?} should fail");
    String::from_utf8(out.stderr).unwrap()
}

fn program(name: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../../strategies/{name}.o"));
    p.display().to_string()
}

/// Reads one whole top-level TLV element (type and length are single octets or 0xFD forms).
fn read_element(s: &mut UnixStream) -> Bytes {
    let mut head = [0u8; 2];
    s.read_exact(&mut head).unwrap();
    let mut buf = head.to_vec();
    let len = match head[1] {
        0xFD => {
            let mut l = [0u8; 2];
            s.read_exact(&mut l).unwrap();
            buf.extend_from_slice(&l);
            usize::from(u16::from_be_bytes(l))
        }
        n => usize::from(n),
    };
    let mut value = vec![0u8; len];
    s.read_exact(&mut value).unwrap();
    buf.extend_from_slice(&value);
    Bytes::from(buf)
}

/// A producer on its own unix connection answering every Interest (token echoed).
fn producer(mut s: UnixStream) {
    std::thread::spawn(move || loop {
        let Ok(lp) = LpPacket::decode(read_element(&mut s)) else {
            return;
        };
        let Some(Ok(NetPacketView::Interest(i))) = lp.fragment.map(NetPacketView::decode) else {
            continue;
        };
        let data = Data::new(i.name.clone(), &b"via eBPF"[..]).encode();
        let frame = LpPacket {
            header: LpHeader {
                pit_token: lp.header.pit_token,
                ..LpHeader::default()
            },
            fragment: Some(data),
        };
        if s.write_all(&frame.encode()).is_err() {
            return;
        }
    });
}

fn fetch(client: &mut Client, name: &str) -> Data {
    let mut i = Interest::new(name.parse::<Name>().unwrap());
    i.lifetime = Some(2000);
    client
        .express(&i, Duration::from_secs(4))
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn load_choose_exchange_reload_and_unload() {
    let daemon = Daemon::local(&[]);
    let s = daemon.socket();
    let face_ids = || -> Vec<u64> {
        let faces = ok(s, &["face", "list"]);
        faces
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["face_id"].as_u64().unwrap())
            .collect()
    };
    let before = face_ids();
    producer(UnixStream::connect(s).unwrap());
    // the new faces are the producer's and the listing command's own (the newest)
    let producer_face = common::eventually(Duration::from_secs(5), || {
        let new: Vec<u64> = face_ids()
            .into_iter()
            .filter(|f| !before.contains(f))
            .collect();
        (new.len() >= 2).then(|| new[0])
    })
    .expect("the producer's face appears");
    ok(s, &["route", "add", "/bpf", &producer_face.to_string()]);

    let loaded = ok(s, &["strategy", "load", "br", &program("best-route")]);
    assert_eq!(loaded["strategy"], "/localhost/kite/strategy/br/v=1");
    let set = ok(s, &["strategy", "set", "/bpf", "br"]);
    assert_eq!(set["strategy"], "/localhost/kite/strategy/br/v=1");
    let list = ok(s, &["strategy", "list"]).to_string();
    assert!(list.contains("/localhost/kite/strategy/br/v=1"), "{list}");

    let mut client = Client::connect_unix(s).unwrap();
    for n in 0..20 {
        let d = fetch(&mut client, &format!("/bpf/{n}"));
        assert_eq!(d.content.as_deref(), Some(&b"via eBPF"[..]));
    }

    // a duplicate name and a bad program are refused with NFD status codes
    assert!(err(s, &["strategy", "load", "br", &program("multicast")]).contains("409"));
    let junk = daemon.dir().join("junk.o");
    std::fs::write(&junk, b"not an ELF object").unwrap();
    let bad = err(s, &["strategy", "load", "junk", junk.to_str().unwrap()]);
    assert!(
        bad.contains("400") && bad.contains("not an eBPF ELF object"),
        "{bad}"
    );

    // reload in place: the prefix moves to the new program and traffic goes on
    ok(
        s,
        &[
            "strategy",
            "load",
            "br",
            &program("best-route"),
            "--replace",
        ],
    );
    assert!(ok(s, &["strategy", "list"])
        .to_string()
        .contains("/localhost/kite/strategy/br/v=1"));
    for n in 20..30 {
        fetch(&mut client, &format!("/bpf/{n}"));
    }

    // unload refused while /bpf uses it, accepted once it does not
    let refused = err(s, &["strategy", "unload", "br"]);
    assert!(
        refused.contains("409") && refused.contains("/bpf"),
        "{refused}"
    );
    ok(s, &["strategy", "set", "/bpf", "best-route"]);
    ok(s, &["strategy", "unload", "br"]);
    assert!(err(s, &["strategy", "set", "/bpf", "br"]).contains("404"));
    fetch(&mut client, "/bpf/after");
}
