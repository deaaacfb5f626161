//! A WebSocket face against a tungstenite client: one binary message per packet.

mod common;

use std::net::SocketAddr;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use common::{data, interest, name_of, Driver};
use kite_face::{ws, Accepted, FaceConfig, FaceUri, Listener, Received};
use kite_link::{FaceIds, FaceScope, PacketKind, Persistency};
use tungstenite::{Message, WebSocket};

/// A WebSocket listener, `client` run on its own thread against it, and the face of its
/// connection in a [`Driver`] (index 0) once the client's first packet arrived through it.
fn accepted<T: Send + 'static>(
    client: impl FnOnce(SocketAddr) -> T + Send + 'static,
) -> (Driver, JoinHandle<T>, Vec<Received>) {
    let any: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let mut ch = ws::listen(any, &FaceConfig::default()).unwrap();
    let FaceUri::Ws(addr) = *ch.local_uri() else {
        panic!("not a ws channel")
    };
    let client = std::thread::spawn(move || client(addr));
    let mut ids = FaceIds::new();
    let deadline = Instant::now() + Duration::from_secs(5);
    let face = loop {
        if let Some(Accepted::Face(f, _)) = ch.accept(&mut ids, Instant::now()).unwrap() {
            break *f;
        }
        assert!(Instant::now() < deadline, "no connection accepted");
        std::thread::sleep(Duration::from_millis(2));
    };
    assert!(matches!(face.remote_uri(), FaceUri::WsClient(_)));
    let mut d = Driver::new();
    d.add(face);
    let first = d.receive(1).into_iter().map(|(_, r)| r).collect();
    (d, client, first)
}

/// Connects to `addr` and completes the handshake.
fn connect(addr: SocketAddr) -> WebSocket<std::net::TcpStream> {
    let stream = std::net::TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    tungstenite::client(format!("ws://{addr}/"), stream)
        .unwrap()
        .0
}

#[test]
fn a_websocket_client_that_stops_reading_fills_only_the_bounded_queue() {
    // The client says one packet, then holds the connection without reading.
    let (hold, release) = std::sync::mpsc::channel::<()>();
    let (mut d, client, first) = accepted(move |addr| {
        let mut ws = connect(addr);
        ws.send(Message::Binary(interest("/ws/stalled"))).unwrap();
        let _ = release.recv();
    });
    assert_eq!(first.len(), 1, "the handshake completed");
    // 4,000 Data of 8 KB (32 MB): the kernel's buffers, the writer's bounded buffer and the
    // face's queue of 1,024 frames take some; the rest are dropped and counted.
    let reply = data("/ws/stalled", 8000);
    for _ in 0..4000 {
        d.faces[0].send(PacketKind::Data, reply.clone());
        let _ = d.faces[0].flush();
    }
    let c = d.faces[0].counters();
    assert!(c.n_out_queue_full > 0, "every frame was taken: {c:?}");
    assert!(d.faces[0].pending_output() <= 1024);
    drop(hold);
    client.join().unwrap();
}

#[test]
fn a_websocket_client_that_reads_late_gets_each_packet_once_and_in_order() {
    const N: usize = 1000;
    let (mut d, client, first) = accepted(|addr| {
        let mut ws = connect(addr);
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
    assert_eq!(first.len(), 1, "the handshake completed");
    for i in 0..N {
        assert!(d.faces[0].send(PacketKind::Data, data(&format!("/ws/late/{i}"), 8000)));
        let _ = d.faces[0].flush();
    }
    d.flush(0);
    let want: Vec<String> = (0..N).map(|i| format!("/ws/late/{i}")).collect();
    assert_eq!(client.join().unwrap(), want);
    assert_eq!(d.faces[0].counters().n_out_queue_full, 0);
}

#[test]
fn what_the_writer_holds_when_the_socket_fills_is_written_once_it_drains() {
    // The client reads nothing until told how many packets came, so the server's socket
    // fills, and the writer takes the last packet from the face's queue into its own buffer.
    let (count_tx, count_rx) = std::sync::mpsc::channel::<usize>();
    let (mut d, client, first) = accepted(move |addr| {
        let mut ws = connect(addr);
        ws.send(Message::Binary(interest("/ws/tail"))).unwrap();
        let n = count_rx.recv().unwrap();
        let mut names = Vec::new();
        while names.len() < n {
            match ws.read() {
                Ok(Message::Binary(b)) => {
                    names.push(kite_packet::Data::decode(b).unwrap().name.to_string());
                }
                Ok(_) => {}
                Err(e) => panic!("after {} of {n} packets: {e}", names.len()),
            }
        }
        names
    });
    assert_eq!(first.len(), 1, "the handshake completed");
    let mut sent = 0;
    loop {
        assert!(d.faces[0].send(PacketKind::Data, data(&format!("/ws/tail/{sent}"), 8000)));
        sent += 1;
        let blocked = d.faces[0].flush().unwrap() == kite_face::Flushed::Blocked;
        if blocked && d.faces[0].pending_output() == 0 {
            break;
        }
        assert!(sent < 100_000, "the socket never filled");
    }
    count_tx.send(sent).unwrap();
    // The face's queue is empty; what the writer holds still goes out.
    d.flush(0);
    let want: Vec<String> = (0..sent).map(|i| format!("/ws/tail/{i}")).collect();
    assert_eq!(client.join().unwrap(), want);
    assert_eq!(d.faces[0].counters().n_out_queue_full, 0);
}

#[test]
fn websocket_client_exchanges_packets_with_the_listener() {
    let (mut d, client, first) = accepted(|addr| {
        let mut ws = connect(addr);
        ws.send(Message::Binary(interest("/ws/1"))).unwrap();
        loop {
            match ws.read().unwrap() {
                Message::Binary(b) => return b,
                _ => continue,
            }
        }
    });
    assert_eq!(d.faces[0].scope(), FaceScope::Local);
    assert_eq!(d.faces[0].persistency(), Persistency::OnDemand);
    assert_eq!(name_of(&first[0]), "/ws/1");
    let reply = data("/ws/1", 3000);
    assert!(d.faces[0].send(PacketKind::Data, reply.clone()));
    d.flush(0);
    assert_eq!(client.join().unwrap(), reply);
    assert_eq!(d.faces[0].counters().n_out_data, 1);
}
