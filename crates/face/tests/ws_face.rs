//! A WebSocket face against a tungstenite client: one binary message per packet.

mod common;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use common::{data, interest, name_of, Driver};
use kite_face::{Channel, FaceConfig, FaceIds, FaceScope, FaceUri, PacketKind, Persistency};
use tungstenite::Message;

#[test]
fn a_websocket_client_that_stops_reading_fills_only_the_bounded_queue() {
    let any: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let mut ch = Channel::ws(any, FaceConfig::default()).unwrap();
    let FaceUri::Ws(addr) = *ch.local_uri() else {
        panic!("not a ws channel")
    };
    // The client says one packet, then holds the connection without reading.
    let (hold, release) = std::sync::mpsc::channel::<()>();
    let client = std::thread::spawn(move || {
        let stream = std::net::TcpStream::connect(addr).unwrap();
        let (mut ws, _) = tungstenite::client(format!("ws://{addr}/"), stream).unwrap();
        ws.send(Message::Binary(interest("/ws/stalled"))).unwrap();
        let _ = release.recv();
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
    let mut d = Driver::new();
    let f = d.add(face);
    assert_eq!(d.receive(1).len(), 1, "the handshake completed");
    // 4,000 Data of 8 KB (32 MB): the kernel's buffers, the writer's bounded buffer and the
    // face's queue of 1,024 frames take some; the rest are dropped and counted.
    let reply = data("/ws/stalled", 8000);
    for _ in 0..4000 {
        d.faces[f].send(PacketKind::Data, reply.clone());
        let _ = d.faces[f].flush();
    }
    let c = d.faces[f].counters();
    assert!(c.n_out_queue_full > 0, "every frame was taken: {c:?}");
    assert!(d.faces[f].pending_output() <= 1024);
    drop(hold);
    client.join().unwrap();
}

#[test]
fn a_websocket_client_that_reads_late_gets_each_packet_once_and_in_order() {
    let any: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let mut ch = Channel::ws(any, FaceConfig::default()).unwrap();
    let FaceUri::Ws(addr) = *ch.local_uri() else {
        panic!("not a ws channel")
    };
    const N: usize = 1000;
    let client = std::thread::spawn(move || {
        let stream = std::net::TcpStream::connect(addr).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let (mut ws, _) = tungstenite::client(format!("ws://{addr}/"), stream).unwrap();
        ws.send(Message::Binary(interest("/ws/late"))).unwrap();
        // The server's socket fills while this one does not read.
        std::thread::sleep(Duration::from_millis(300));
        let mut names = Vec::new();
        while names.len() < N {
            match ws.read() {
                Ok(Message::Binary(b)) => {
                    let d = kite_packet::Data::decode(b).unwrap();
                    names.push(d.name.to_string());
                }
                Ok(_) => {}
                Err(e) => panic!("after {} packets: {e}", names.len()),
            }
        }
        names
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
    let mut d = Driver::new();
    let f = d.add(face);
    assert_eq!(d.receive(1).len(), 1, "the handshake completed");
    for i in 0..N {
        assert!(d.faces[f].send(PacketKind::Data, data(&format!("/ws/late/{i}"), 8000)));
        let _ = d.faces[f].flush();
    }
    d.flush(f);
    let want: Vec<String> = (0..N).map(|i| format!("/ws/late/{i}")).collect();
    assert_eq!(client.join().unwrap(), want);
    assert_eq!(d.faces[f].counters().n_out_queue_full, 0);
}

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
