//! eBPF strategies through a real `kite run`: `kite strategy load` a program, choose it for a
//! prefix, exchange Interests and Data through it, reload it, and see unload refused while a
//! prefix uses it; bad programs and duplicate names come back as NFD status codes.

mod common;

use std::path::PathBuf;
use std::time::Duration;

use bytes::Bytes;
use common::ctl::{err, json};
use common::peer::Producer;
use common::Daemon;
use kite_app::Client;
use kite_packet::{Data, Interest, Name};

fn program(name: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../../strategies/{name}.o"));
    p.display().to_string()
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
    // a producer registering /bpf on its own connection, answering every Interest
    let _producer = Producer::start(
        s,
        "/bpf",
        Box::new(|_| Some(Bytes::from_static(b"via eBPF"))),
    );

    let loaded = json(s, &["strategy", "load", "br", &program("best-route")]);
    assert_eq!(loaded["strategy"], "/localhost/kite/strategy/br/v=1");
    let set = json(s, &["strategy", "set", "/bpf", "br"]);
    assert_eq!(set["strategy"], "/localhost/kite/strategy/br/v=1");
    let list = json(s, &["strategy", "list"]).to_string();
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
    json(
        s,
        &[
            "strategy",
            "load",
            "br",
            &program("best-route"),
            "--replace",
        ],
    );
    assert!(json(s, &["strategy", "list"])
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
    json(s, &["strategy", "set", "/bpf", "best-route"]);
    json(s, &["strategy", "unload", "br"]);
    assert!(err(s, &["strategy", "set", "/bpf", "br"]).contains("404"));
    fetch(&mut client, "/bpf/after");
}
