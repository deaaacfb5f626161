//! Bad bytes on every kind of face of a real `kite run`: unix, TCP, UDP and WebSocket.
//!
//! A frame that arrives whole but does not decode (random octets, a truncated TLV, a bad or
//! forbidden LP header, a TLV-LENGTH larger than the frame) is dropped and counted on its face
//! (`faces/list` carries Kite's drop counters), and the same face goes on exchanging packets.
//! On a stream (unix, TCP) an element that breaks the framing (a TLV-LENGTH over the largest
//! frame, TLV-TYPE 0) leaves nothing to resynchronise on, so Kite closes that connection, as
//! NFD does, and says why in its log; likewise a WebSocket message over the largest frame.
//! Either way the other faces never notice, and a fresh connection works.

mod common;

use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::time::Duration;

use bytes::Bytes;
use common::peer::{self, interest, Conn, Got, Producer};
use common::{eventually, free_tcp_port, free_udp_port, Daemon};
use kite_link::FaceCounters;
use kite_packet::{Data, LpHeader, LpPacket, NetPacket, NetPacketView};
use tungstenite::{Message, WebSocket};

const WAIT: Duration = Duration::from_secs(10);

/// A daemon with unix, UDP, TCP and WebSocket listeners, a producer answering `/ok` and a
/// bystander consumer connected before any bad byte is sent.
struct Setup {
    kite: Daemon,
    udp: SocketAddr,
    tcp: SocketAddr,
    ws: SocketAddr,
    _producer: Producer,
    bystander: Conn,
}

impl Setup {
    fn new() -> Setup {
        let (udp, tcp, ws) = (free_udp_port(), free_tcp_port(), free_tcp_port());
        let at = |p: u16| -> SocketAddr { format!("127.0.0.1:{p}").parse().unwrap() };
        let kite = Daemon::start(
            &[],
            &[
                "--udp".into(),
                at(udp).to_string(),
                "--tcp".into(),
                at(tcp).to_string(),
                "--ws".into(),
                at(ws).to_string(),
            ],
        );
        let producer = Producer::start(
            kite.socket(),
            "/ok",
            Box::new(|_| Some(Bytes::from_static(b"fine"))),
        );
        let bystander = Conn::unix(kite.socket());
        Setup {
            udp: at(udp),
            tcp: at(tcp),
            ws: at(ws),
            _producer: producer,
            bystander,
            kite,
        }
    }

    fn socket(&self) -> &str {
        self.kite.socket()
    }

    /// The drop counters of face `id` once `done` holds for them.
    fn drops_when(&self, id: u64, done: impl Fn(&FaceCounters) -> bool) -> FaceCounters {
        eventually(WAIT, || {
            let f = peer::face(self.socket(), id)?;
            done(&f.counters).then_some(f.counters)
        })
        .unwrap_or_else(|| panic!("drops of face {id}: {:?}", peer::face(self.socket(), id)))
    }

    /// The bystander, connected all along, is still served.
    fn bystander_served(&mut self) {
        let d = self.bystander.fetch("/ok/bystander", WAIT);
        assert_eq!(d.content.as_deref(), Some(&b"fine"[..]));
    }
}

/// Octets from a fixed linear congruential sequence (no TLV-TYPE an NDN face accepts first).
fn random_octets(n: usize) -> Vec<u8> {
    let mut x: u32 = 0x2545_F491;
    let mut out: Vec<u8> = (0..n)
        .map(|_| {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            (x >> 16) as u8
        })
        .collect();
    out[0] = 0xC3;
    out
}

/// An Interest whose Name claims more octets than the Interest holds.
fn truncated_tlv() -> Vec<u8> {
    vec![0x05, 0x05, 0x07, 0x10, 0x08, 0x01, b'a']
}

/// An LpPacket with an unknown critical header field.
fn bad_lp_header() -> Vec<u8> {
    let mut v = vec![0x64, 0x00, 0x61, 0x01, 0x00, 0x50];
    let i = interest("/ok/lp", 1000);
    v.push(i.len() as u8);
    v.extend_from_slice(&i);
    v[1] = (v.len() - 2) as u8;
    v
}

/// A Data whose TLV-LENGTH says 10000 octets follow.
fn oversize_length() -> Vec<u8> {
    vec![0x06, 0xFD, 0x27, 0x10, 0x07, 0x00]
}

/// A TLV element of a type that is neither Interest, Data nor LpPacket.
fn unknown_element() -> Vec<u8> {
    vec![0x80, 0x02, 0x00, 0x00]
}

/// An Interest with NextHopFaceId, which only a face with local fields may send.
fn forbidden_lp_field() -> Vec<u8> {
    LpPacket {
        header: LpHeader {
            next_hop_face_id: Some(1),
            ..LpHeader::default()
        },
        fragment: Some(interest("/ok/next-hop", 1000)),
    }
    .encode()
    .to_vec()
}

/// Whether `frame` fails to decode as an NDN frame (the fixtures are truly malformed).
fn undecodable(frame: &[u8]) -> bool {
    LpPacket::decode(Bytes::copy_from_slice(frame))
        .and_then(|lp| NetPacketView::decode(lp.fragment.unwrap_or_default()))
        .is_err()
}

/// Frames a datagram face must drop as malformed, one by one.
fn malformed_datagrams() -> Vec<Vec<u8>> {
    let cut = interest("/ok/cut", 1000);
    let all = vec![
        random_octets(64),
        truncated_tlv(),
        cut[..cut.len() - 3].to_vec(),
        bad_lp_header(),
        oversize_length(),
    ];
    assert!(all.iter().all(|f| undecodable(f)));
    all
}

/// Elements a stream face must drop as malformed without losing its framing.
fn malformed_elements() -> Vec<u8> {
    let all = [unknown_element(), truncated_tlv(), bad_lp_header()];
    assert!(all.iter().all(|f| undecodable(f)));
    all.concat()
}

/// Stream bytes after which no element boundary can be found.
fn framing_breakers() -> [Vec<u8>; 3] {
    [
        oversize_length_over_max_frame(),
        largest_length(),
        [vec![0x00], random_octets(40)].concat(),
    ]
}

/// An element header announcing 2^64 - 1 octets, the largest TLV-LENGTH there is.
fn largest_length() -> Vec<u8> {
    [&[0x05, 0xFF][..], &[0xFF; 8]].concat()
}

/// An element header announcing 65536 octets: more than any frame may hold.
fn oversize_length_over_max_frame() -> Vec<u8> {
    vec![0x05, 0xFE, 0x00, 0x01, 0x00, 0x00]
}

/// The stream face test, over connections `connect` opens to the daemon it is given.
fn stream_face(connect: impl Fn(&Setup) -> Conn) {
    let mut t = Setup::new();
    let mut c = connect(&t);
    let face = c.register("/bad-stream");
    c.send(&malformed_elements());
    c.send(&forbidden_lp_field());
    let drops = t.drops_when(face, |d| d.n_in_malformed >= 3 && d.n_in_lp_dropped >= 1);
    assert_eq!((drops.n_in_malformed, drops.n_in_lp_dropped), (3, 1));
    let d = c.fetch("/ok/after-bad-elements", WAIT);
    assert_eq!(
        d.content.as_deref(),
        Some(&b"fine"[..]),
        "the same face works"
    );

    for breaker in framing_breakers() {
        let mut c = connect(&t);
        let face = c.register("/broken-stream");
        c.send(&breaker);
        let closed = eventually(WAIT, || match c.recv(Duration::from_millis(500)) {
            Got::Closed => Some(()),
            _ => None,
        });
        assert!(
            closed.is_some(),
            "Kite closes the stream after {breaker:02x?}"
        );
        assert!(
            eventually(WAIT, || peer::face(t.socket(), face)
                .is_none()
                .then_some(()))
            .is_some(),
            "face {face} is gone"
        );
    }
    let log = t.kite.log_text();
    assert!(log.contains("exceeds the maximum frame length"), "{log}");
    assert!(log.contains("malformed TLV header"), "{log}");

    t.bystander_served();
    let d = connect(&t).fetch("/ok/fresh", WAIT);
    assert_eq!(
        d.content.as_deref(),
        Some(&b"fine"[..]),
        "a fresh connection works"
    );
}

#[test]
fn unix_face() {
    stream_face(|t| Conn::unix(t.socket()));
}

#[test]
fn tcp_face() {
    stream_face(|t| Conn::tcp(t.tcp));
}

#[test]
fn udp_face() {
    let mut t = Setup::new();
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(WAIT)).unwrap();
    // Only a well-formed packet makes a face (junk from a new sender is counted on the
    // channel); the face then counts the bad datagrams its sender sends.
    let mut buf = vec![0u8; 9000];
    sock.send_to(&interest("/ok/first", 4000), t.udp).unwrap();
    sock.recv_from(&mut buf).expect("an answer over UDP");
    let uri = format!("udp4://{}", sock.local_addr().unwrap());
    let face = eventually(WAIT, || {
        peer::faces(t.socket())
            .into_iter()
            .find(|f| f.uri == uri)
            .map(|f| f.face_id)
    })
    .expect("Kite made a face for the sender of the Interest");
    let mut sent = malformed_datagrams();
    sent.push(forbidden_lp_field());
    for d in &sent {
        sock.send_to(d, t.udp).unwrap();
    }
    let drops = t.drops_when(face, |d| d.n_in_malformed >= 5 && d.n_in_lp_dropped >= 1);
    assert_eq!((drops.n_in_malformed, drops.n_in_lp_dropped), (5, 1));

    // A datagram longer than any frame is dropped by the channel before any face sees it;
    // the same face then exchanges packets.
    sock.send_to(&vec![0x06; 9_500], t.udp).unwrap();
    sock.send_to(&interest("/ok/udp", 4000), t.udp).unwrap();
    let (n, _) = sock.recv_from(&mut buf).expect("an answer over UDP");
    let (_, packet) = NetPacket::decode_frame(Bytes::copy_from_slice(&buf[..n])).unwrap();
    let NetPacket::Data(d) = packet else {
        panic!("Data expected, got {packet:?}");
    };
    assert_eq!(d.name.to_string(), "/ok/udp");
    let status = peer::face(t.socket(), face).unwrap();
    assert_eq!(status.counters.n_in_interests, 2, "{status:?}");
    t.bystander_served();
}

#[test]
fn udp_channel_counts_what_no_face_received() {
    let t = Setup::new();
    let local = format!("udp4://{}", t.udp);
    let truncated = || {
        peer::channels(t.socket())
            .into_iter()
            .find(|c| c.local_uri == local)
            .unwrap_or_else(|| panic!("no channel {local} in faces/channels"))
            .counters
            .n_truncated
    };
    assert_eq!(truncated(), 0);

    // From a fresh socket, a datagram longer than any frame: counted, and no face is made.
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    let uri = format!("udp4://{}", sock.local_addr().unwrap());
    sock.send_to(&vec![0x06; 9_500], t.udp).unwrap();
    eventually(WAIT, || (truncated() == 1).then_some(()))
        .expect("the channel counted the truncated datagram");
    assert!(!peer::faces(t.socket()).iter().any(|f| f.uri == uri));

    // Once the sender has a face, its next one counts there too.
    sock.send_to(&interest("/ok/hello", 4000), t.udp).unwrap();
    let face = eventually(WAIT, || {
        peer::faces(t.socket())
            .into_iter()
            .find(|f| f.uri == uri)
            .map(|f| f.face_id)
    })
    .expect("a face for the sender");
    sock.send_to(&vec![0x06; 9_500], t.udp).unwrap();
    let drops = t.drops_when(face, |d| d.n_in_malformed >= 1);
    assert_eq!(drops.n_in_malformed, 1);
    assert_eq!(truncated(), 2);

    // The operator sees it with `kite channel list`.
    let list = common::ctl::json(t.socket(), &["channel", "list"]);
    let row = list
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["local_uri"] == local.as_str())
        .cloned()
        .unwrap_or_else(|| panic!("{local} missing from {list}"));
    assert_eq!(row["drops"]["truncated"], 2, "{row}");
    let unix = list.as_array().unwrap().iter().find(|c| {
        c["local_uri"]
            .as_str()
            .is_some_and(|u| u.starts_with("unix://"))
    });
    assert!(unix.is_some(), "every channel is listed: {list}");
}

/// A WebSocket connection to Kite.
struct Ws(WebSocket<TcpStream>);

impl Ws {
    fn connect(addr: SocketAddr) -> Ws {
        let stream = TcpStream::connect(addr).unwrap();
        stream.set_read_timeout(Some(WAIT)).unwrap();
        let (ws, _) = tungstenite::client(format!("ws://{addr}/"), stream).expect("handshake");
        Ws(ws)
    }

    fn send(&mut self, frame: &[u8]) {
        self.0
            .send(Message::Binary(Bytes::copy_from_slice(frame)))
            .expect("send a WebSocket message");
    }

    /// The next packet Kite sends; `None` when the connection ends.
    fn recv(&mut self) -> Option<NetPacket> {
        loop {
            match self.0.read() {
                Ok(Message::Binary(b)) => return Some(NetPacket::decode_frame(b).unwrap().1),
                Ok(Message::Close(_)) | Err(_) => return None,
                Ok(_) => continue,
            }
        }
    }

    fn data(&mut self) -> Data {
        match self.recv() {
            Some(NetPacket::Data(d)) => d,
            other => panic!("Data expected, got {other:?}"),
        }
    }

    fn register(&mut self, prefix: &str) -> u64 {
        self.send(&peer::register_command(prefix));
        loop {
            if let Some(face) = peer::registered_face(&self.data()) {
                return face;
            }
        }
    }
}

#[test]
fn websocket_face() {
    let mut t = Setup::new();
    let mut ws = Ws::connect(t.ws);
    let face = ws.register("/bad-ws");
    for m in malformed_datagrams() {
        ws.send(&m);
    }
    ws.send(&forbidden_lp_field());
    let drops = t.drops_when(face, |d| d.n_in_malformed >= 5 && d.n_in_lp_dropped >= 1);
    assert_eq!((drops.n_in_malformed, drops.n_in_lp_dropped), (5, 1));
    ws.send(&interest("/ok/ws", 4000));
    assert_eq!(ws.data().name.to_string(), "/ok/ws", "the same face works");

    // A message larger than any frame: Kite closes the connection.
    ws.send(&vec![0x06; 10_000]);
    assert!(ws.recv().is_none(), "Kite closes the WebSocket");
    assert!(eventually(WAIT, || peer::face(t.socket(), face)
        .is_none()
        .then_some(()))
    .is_some());
    assert!(t.kite.log_text().contains("receive failed"));

    t.bystander_served();
    let mut fresh = Ws::connect(t.ws);
    fresh.send(&interest("/ok/ws-fresh", 4000));
    assert_eq!(fresh.data().name.to_string(), "/ok/ws-fresh");
}
