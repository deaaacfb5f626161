//! The largest network packet a real `kite run` accepts (8800 octets by default, NFD's
//! MAX_NDN_PACKET_SIZE), on every kind of face and after NDNLPv2 reassembly.
//!
//! - A token-less Data whose Name is within 33 octets of the codec's longest name (so the
//!   Name plus an implicit digest would not fit) arrives as UDP fragments while a PIT entry
//!   named by an implicit digest waits: the daemon, inline or with forwarding threads, drops
//!   and counts it, keeps answering management (`kite status`) and forwards an ordinary
//!   exchange afterwards.
//! - An Interest of about 1 MB in 127 UDP fragments is dropped and counted on the face it
//!   came from as soon as its fragments exceed the limit, never forwarded.
//! - A bare packet just over the limit, in one frame on unix, TCP, UDP and WebSocket faces,
//!   is dropped and counted, and the same face keeps working.

mod common;

use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::time::Duration;

use bytes::Bytes;
use common::peer::{self, interest, Conn, Producer};
use common::{eventually, free_tcp_port, free_udp_port, Daemon};
use kite_packet::{Component, Fragments, LpHeader, Name, NetPacket};
use tungstenite::{Message, WebSocket};

const WAIT: Duration = Duration::from_secs(10);
/// NFD's MAX_NDN_PACKET_SIZE, Kite's default largest packet.
const MAX_PACKET: usize = 8800;
/// The codec's longest Name value (component offsets are 16-bit).
const MAX_NAME_VALUE: usize = 65_535;

fn at(port: u16) -> SocketAddr {
    format!("127.0.0.1:{port}").parse().unwrap()
}

/// A daemon with unix, UDP, TCP and WebSocket listeners (plus `extra` flags) and a producer
/// answering `/ok`.
struct Setup {
    kite: Daemon,
    udp: SocketAddr,
    tcp: SocketAddr,
    ws: SocketAddr,
    producer: Producer,
}

impl Setup {
    fn new(extra: &[&str]) -> Setup {
        let (udp, tcp, ws) = (
            at(free_udp_port()),
            at(free_tcp_port()),
            at(free_tcp_port()),
        );
        let mut args: Vec<String> = [
            "--udp",
            &udp.to_string(),
            "--tcp",
            &tcp.to_string(),
            "--ws",
            &ws.to_string(),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        args.extend(extra.iter().map(|s| s.to_string()));
        let kite = Daemon::start(&[], &args);
        let producer = Producer::start(
            kite.socket(),
            "/ok",
            Box::new(|_| Some(Bytes::from_static(b"fine"))),
        );
        Setup {
            kite,
            udp,
            tcp,
            ws,
            producer,
        }
    }

    fn socket(&self) -> &str {
        self.kite.socket()
    }

    /// The daemon is alive, answers `kite status`, and forwards an ordinary exchange whose
    /// Interest is the next one the producer sees.
    fn still_serves(&mut self, what: &str) {
        assert!(
            self.kite.exited(Duration::ZERO).is_none(),
            "the daemon exited after {what}: {}",
            self.kite.log_text()
        );
        let out = common::ctl::kite_at(self.socket(), &["status"]);
        assert!(
            out.status.success(),
            "kite status after {what}: {}\n{}",
            String::from_utf8_lossy(&out.stderr),
            self.kite.log_text()
        );
        let name = format!("/ok/after/{}", what.replace(' ', "-"));
        let d = Conn::unix(self.socket()).fetch(&name, WAIT);
        assert_eq!(d.content.as_deref(), Some(&b"fine"[..]), "after {what}");
        let asked = self.producer.interests(1, WAIT);
        assert_eq!(
            asked[0].name.to_string(),
            name,
            "nothing reached the producer before the ordinary Interest after {what}"
        );
    }

    /// The face whose remote URI is `uri`, once it exists.
    fn face_of(&self, uri: &str) -> u64 {
        eventually(WAIT, || {
            peer::faces(self.socket())
                .into_iter()
                .find(|f| f.uri == uri)
                .map(|f| f.face_id)
        })
        .unwrap_or_else(|| panic!("no face {uri}"))
    }

    /// Waits until face `id` has counted `n` packets dropped for their size.
    fn too_large_counted(&self, id: u64, n: u64) {
        let got = eventually(WAIT, || {
            let f = peer::face(self.socket(), id)?;
            (f.counters.n_in_too_large >= n).then_some(f.counters.n_in_too_large)
        });
        assert_eq!(
            got,
            Some(n),
            "face {id}: {:?}",
            peer::face(self.socket(), id)
        );
    }
}

/// The LpPackets (encoded) that carry `packet` in pieces of at most `mtu` octets, with no
/// PIT token.
fn fragments(packet: Bytes, mtu: usize, first_seq: u64) -> Vec<Bytes> {
    Fragments::new(LpHeader::default(), packet, mtu, first_seq)
        .expect("fragmentable")
        .map(|lp| lp.encode())
        .collect()
}

/// A signed Data whose Name value is `name_len` octets (one GenericNameComponent).
fn data_with_name_value(name_len: usize) -> Bytes {
    let component = vec![b'n'; name_len - 4]; // type 8, TLV-LENGTH in 3 octets
    let name = Name::from_components([Component::generic(&component)]);
    assert_eq!(name.value().len(), name_len);
    peer::data(&name, Bytes::from_static(b"attack"))
}

/// An Interest named under `prefix` with a fresh Nonce, exactly `len` octets long.
fn interest_of_len(prefix: &str, len: usize) -> Bytes {
    kite_testkit::packet::interest_of_len(prefix, peer::nonce(), len)
}

/// The attack: a PIT entry named by an implicit digest, then a token-less Data whose Name
/// plus an implicit digest would be longer than any Name, as UDP fragments.
fn long_name_data_over_udp_fragments(extra: &[&str]) {
    let mut t = Setup::new(extra);
    // Some peer's Interest named by an implicit digest, pending for a minute toward a
    // producer that never answers.
    let mut silent = Conn::unix(t.socket());
    silent.register("/atk");
    let mut consumer = Conn::unix(t.socket());
    consumer.send(&interest(
        &format!("/atk/sha256digest={}", "ab".repeat(32)),
        60_000,
    ));
    let (_, pending) = silent.recv_interest(WAIT);
    assert!(pending.name.to_string().starts_with("/atk/sha256digest="));

    let data = data_with_name_value(MAX_NAME_VALUE - 33);
    let attacker = UdpSocket::bind("127.0.0.1:0").unwrap();
    for f in fragments(data, 8000, 1) {
        attacker.send_to(&f, t.udp).unwrap();
    }
    let face = t.face_of(&format!("udp4://{}", attacker.local_addr().unwrap()));
    t.too_large_counted(face, 1);
    t.still_serves("long-name Data");
}

#[test]
fn long_name_data_in_udp_fragments_inline() {
    long_name_data_over_udp_fragments(&["--inline", "true"]);
}

#[test]
fn long_name_data_in_udp_fragments_with_forwarding_threads() {
    long_name_data_over_udp_fragments(&["--inline", "false"]);
}

#[test]
fn megabyte_interest_from_127_udp_fragments_is_dropped() {
    let mut t = Setup::new(&[]);
    let mut upstream = Conn::unix(t.socket());
    let upstream_face = upstream.register("/big");
    let big = interest_of_len("/big/mb", 1_000_000);
    let frags = fragments(big, 7960, 1);
    assert_eq!(frags.len(), 127);
    let attacker = UdpSocket::bind("127.0.0.1:0").unwrap();
    for f in &frags {
        attacker.send_to(f, t.udp).unwrap();
        // Paced, so the kernel's socket buffer never drops a fragment.
        std::thread::sleep(Duration::from_millis(1));
    }
    // The same sender's next Interest is the first the upstream receives.
    attacker
        .send_to(&interest("/big/small", 4000), t.udp)
        .unwrap();
    let (_, first) = upstream.recv_interest(WAIT);
    assert_eq!(first.name.to_string(), "/big/small");
    let face = t.face_of(&format!("udp4://{}", attacker.local_addr().unwrap()));
    t.too_large_counted(face, 1);
    // Dropped at its second fragment (past 8800 octets): the 125 after it are refused (the
    // kernel may have lost a few), not held until the packet would be whole.
    let drops = peer::face(t.socket(), face).unwrap().counters;
    assert!(drops.n_reassembly_dropped >= 100, "{drops:?}");
    let up = peer::face(t.socket(), upstream_face).unwrap();
    assert_eq!(up.counters.n_out_interests, 1, "{up:?}");
    t.still_serves("a megabyte Interest");
}

/// A bare Interest one octet over the largest packet (a frame every transport carries).
fn just_too_large() -> Bytes {
    interest_of_len("/ok/too-large", MAX_PACKET + 1)
}

/// The largest packet accepted, to show the limit is where it should be.
fn largest() -> Bytes {
    interest_of_len("/ok/largest", MAX_PACKET)
}

/// Over a stream face (unix or TCP): the over-long packet is dropped and counted, the
/// connection stays open, and the largest packet still goes through on it.
fn stream_face(connect: impl Fn(&Setup) -> Conn) {
    let mut t = Setup::new(&[]);
    let mut c = connect(&t);
    let face = c.register("/stream-face");
    c.send(&just_too_large());
    t.too_large_counted(face, 1);
    let d = c.fetch("/ok/same-face", WAIT);
    assert_eq!(d.content.as_deref(), Some(&b"fine"[..]));
    assert_eq!(
        t.producer.interests(1, WAIT)[0].name.to_string(),
        "/ok/same-face"
    );
    c.send(&largest());
    match c.recv_packet(WAIT) {
        (_, NetPacket::Data(d)) => assert!(d.name.to_string().starts_with("/ok/largest")),
        (_, other) => panic!("Data for the largest Interest expected, got {other:?}"),
    }
    t.producer.interests(1, WAIT);
    t.still_serves("a stream packet too large");
}

#[test]
fn unix_face_drops_a_packet_over_the_limit() {
    stream_face(|t| Conn::unix(t.socket()));
}

#[test]
fn tcp_face_drops_a_packet_over_the_limit() {
    stream_face(|t| Conn::tcp(t.tcp));
}

#[test]
fn udp_face_drops_a_packet_over_the_limit() {
    let mut t = Setup::new(&[]);
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(WAIT)).unwrap();
    sock.send_to(&just_too_large(), t.udp).unwrap();
    let face = t.face_of(&format!("udp4://{}", sock.local_addr().unwrap()));
    t.too_large_counted(face, 1);
    sock.send_to(&interest("/ok/udp", 4000), t.udp).unwrap();
    let mut buf = vec![0u8; 65536];
    let (n, _) = sock.recv_from(&mut buf).expect("an answer over UDP");
    let (_, packet) = NetPacket::decode_frame(Bytes::copy_from_slice(&buf[..n])).unwrap();
    let NetPacket::Data(d) = packet else {
        panic!("Data expected, got {packet:?}");
    };
    assert_eq!(d.name.to_string(), "/ok/udp");
    assert_eq!(t.producer.interests(1, WAIT)[0].name.to_string(), "/ok/udp");
    t.still_serves("a UDP packet too large");
}

#[test]
fn websocket_face_drops_a_packet_over_the_limit() {
    let mut t = Setup::new(&[]);
    let stream = TcpStream::connect(t.ws).unwrap();
    stream.set_read_timeout(Some(WAIT)).unwrap();
    let (mut ws, _) =
        tungstenite::client(format!("ws://{}/", t.ws), stream).expect("WebSocket handshake");
    let send = |ws: &mut WebSocket<TcpStream>, frame: Bytes| {
        ws.send(Message::Binary(frame)).expect("send a message");
    };
    send(&mut ws, just_too_large());
    let face = t.face_of(&format!(
        "wsclient://{}",
        ws.get_ref().local_addr().unwrap()
    ));
    t.too_large_counted(face, 1);
    send(&mut ws, interest("/ok/ws", 4000));
    let got = loop {
        match ws.read().expect("an answer over the WebSocket") {
            Message::Binary(b) => break NetPacket::decode_frame(b).unwrap().1,
            _ => continue,
        }
    };
    let NetPacket::Data(d) = got else {
        panic!("Data expected, got {got:?}");
    };
    assert_eq!(d.name.to_string(), "/ok/ws");
    assert_eq!(t.producer.interests(1, WAIT)[0].name.to_string(), "/ok/ws");
    t.still_serves("a WebSocket packet too large");
}
