//! A WebSocket face against a tungstenite client: one binary message per packet.

mod common;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use common::{data, interest, name_of, Driver};
use kite_face::{Channel, FaceConfig, FaceIds, FaceScope, FaceUri, PacketKind, Persistency};
use tungstenite::Message;

#[test]
fn websocket_client_exchanges_packets_with_the_listener() {
    let any: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let mut ch = Channel::ws(any, FaceConfig::default()).unwrap();
    let FaceUri::Ws(addr) = *ch.local_uri() else {
        panic!("not a ws channel")
    };
    let client = std::thread::spawn(move || {
        let stream = std::net::TcpStream::connect(addr).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let (mut ws, _) = tungstenite::client(format!("ws://{addr}/"), stream).unwrap();
        ws.send(Message::Binary(interest("/ws/1"))).unwrap();
        loop {
            match ws.read().unwrap() {
                Message::Binary(b) => return b,
                _ => continue,
            }
        }
    });
    let mut ids = FaceIds::new();
    let deadline = Instant::now() + Duration::from_secs(5);
    let face = loop {
        if let Some(kite_face::Accepted::Face(f, _)) = ch.accept(&mut ids, Instant::now()).unwrap()
        {
            break *f;
        }
        assert!(Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(2));
    };
    assert!(matches!(face.remote_uri(), FaceUri::WsClient(_)));
    assert_eq!(face.scope(), FaceScope::Local);
    assert_eq!(face.persistency(), Persistency::OnDemand);
    let mut d = Driver::new();
    let f = d.add(face);
    let got = d.receive(1);
    assert_eq!(name_of(&got[0].1), "/ws/1");
    let reply = data("/ws/1", 3000);
    assert!(d.faces[f].send(PacketKind::Data, reply.clone()));
    d.flush(f);
    assert_eq!(client.join().unwrap(), reply);
    assert_eq!(d.faces[f].counters().n_out_data, 1);
}
