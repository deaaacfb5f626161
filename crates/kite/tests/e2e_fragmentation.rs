//! NDNLPv2 fragmentation through a real `kite run`: an 8800-octet Data crosses a UDP face
//! whose MTU is 1500 (set by `faces/create`). Toward a UDP consumer Kite cuts it into
//! fragments of at most 1500 octets that the test, as that consumer, reassembles; from a UDP
//! producer that fragments it, Kite reassembles it and hands the unix consumer the whole Data.
//! Both arrive byte for byte.

mod common;

use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

use bytes::Bytes;
use common::peer::{self, interest, Conn, Producer};
use common::{free_tcp_port, free_udp_port, Daemon};
use kite_mgmt_proto::ControlParameters;
use kite_packet::{Data, LpHeader, LpPacket, Name, NetPacket, PitToken};

const MTU: usize = 1500;
const DATA_SIZE: usize = 8800;
const WAIT: Duration = Duration::from_secs(10);

/// Content of `len` octets that no two offsets of a cut could confuse.
fn pattern(len: usize) -> Bytes {
    (0..len).map(|i| (i * 7 % 251) as u8).collect()
}

/// A signed Data named `name`, exactly [`DATA_SIZE`] octets long.
fn big_data(name: &Name) -> Bytes {
    let probe = peer::data(name, pattern(8700)).len();
    let wire = peer::data(name, pattern(8700 + DATA_SIZE - probe));
    assert_eq!(wire.len(), DATA_SIZE);
    wire
}

/// A daemon with a UDP listener, and a UDP socket of the test's with a face on Kite toward
/// it, MTU 1500. Returns the daemon, Kite's UDP address, the socket and its FaceId.
fn daemon_with_udp_peer() -> (Daemon, SocketAddr, UdpSocket, u64) {
    let port = free_udp_port();
    let kite = Daemon::loopback(port, free_tcp_port());
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(WAIT)).unwrap();
    let created = peer::command_ok(
        kite.socket(),
        "faces",
        "create",
        ControlParameters {
            uri: Some(format!("udp4://{}", sock.local_addr().unwrap())),
            mtu: Some(MTU as u64),
            ..ControlParameters::default()
        },
    );
    let face = created.face_id.expect("the new face's id");
    let listed = peer::face(kite.socket(), face).expect("the UDP face is listed");
    assert_eq!(listed.mtu, Some(MTU as u64), "{listed:?}");
    let kite_addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    (kite, kite_addr, sock, face)
}

/// Receives one datagram.
fn recv_datagram(sock: &UdpSocket) -> Bytes {
    let mut buf = vec![0u8; 65536];
    let (n, _) = sock.recv_from(&mut buf).expect("a datagram from Kite");
    buf.truncate(n);
    Bytes::from(buf)
}

#[test]
fn kite_fragments_an_8800_octet_data_to_a_1500_octet_udp_mtu() {
    let (kite, kite_addr, consumer, face) = daemon_with_udp_peer();
    let _producer = Producer::start(
        kite.socket(),
        "/frag",
        Box::new(|i| {
            let wire = big_data(&i.name);
            Some(Data::decode(wire).unwrap().content.unwrap())
        }),
    );
    let want = big_data(&"/frag/big".parse().unwrap());

    consumer
        .send_to(&interest("/frag/big", 4000), kite_addr)
        .unwrap();
    let mut pieces: Vec<LpPacket> = Vec::new();
    loop {
        let datagram = recv_datagram(&consumer);
        assert!(datagram.len() <= MTU, "{} octets", datagram.len());
        let lp = LpPacket::decode(datagram).expect("an LpPacket");
        let count = lp.header.frag_count.unwrap_or(1) as usize;
        assert!(count > 1, "the Data came fragmented: {:?}", lp.header);
        pieces.push(lp);
        if pieces.len() == count {
            break;
        }
    }
    let count = pieces.len() as u64;
    assert!(pieces.iter().all(|p| p.header.frag_count == Some(count)));
    pieces.sort_by_key(|p| p.header.frag_index.unwrap_or(0));
    let indexes: Vec<u64> = pieces
        .iter()
        .map(|p| p.header.frag_index.unwrap_or(0))
        .collect();
    assert_eq!(indexes, (0..count).collect::<Vec<_>>());
    let seqs: Vec<u64> = pieces.iter().map(|p| p.header.sequence.unwrap()).collect();
    assert!(
        seqs.windows(2).all(|w| w[1] == w[0].wrapping_add(1)),
        "consecutive Sequence numbers: {seqs:?}"
    );
    let whole: Vec<u8> = pieces
        .iter()
        .flat_map(|p| p.fragment.as_ref().unwrap().to_vec())
        .collect();
    assert_eq!(whole.len(), DATA_SIZE);
    assert!(
        whole == want,
        "the reassembled Data is the producer's, octet for octet"
    );

    let status = peer::face(kite.socket(), face).unwrap();
    assert_eq!(status.counters.n_out_data, 1, "{status:?}");
    assert!(status.counters.n_out_bytes > DATA_SIZE as u64, "{status:?}");
}

/// Cuts `packet` into LpPackets of at most `mtu` octets, the first carrying `token`.
fn fragments(packet: &Bytes, token: Option<PitToken>, mtu: usize) -> Vec<Bytes> {
    let room = mtu - 40;
    let count = packet.len().div_ceil(room) as u64;
    (0..count)
        .map(|i| {
            let start = i as usize * room;
            let end = packet.len().min(start + room);
            LpPacket {
                header: LpHeader {
                    sequence: Some(1000 + i),
                    frag_index: Some(i),
                    frag_count: Some(count),
                    pit_token: if i == 0 { token } else { None },
                    ..LpHeader::default()
                },
                fragment: Some(packet.slice(start..end)),
            }
            .encode()
        })
        .collect()
}

#[test]
fn kite_reassembles_an_8800_octet_data_from_1500_octet_udp_fragments() {
    let (kite, kite_addr, producer, face) = daemon_with_udp_peer();
    peer::command_ok(
        kite.socket(),
        "rib",
        "register",
        ControlParameters {
            name: Some("/up".parse().unwrap()),
            face_id: Some(face),
            ..ControlParameters::default()
        },
    );
    let mut consumer = Conn::unix(kite.socket());
    consumer.send(&interest("/up/big", 4000));

    let (header, NetPacket::Interest(asked)) =
        NetPacket::decode_frame(recv_datagram(&producer)).expect("a packet")
    else {
        panic!("an Interest reaches the UDP producer");
    };
    assert_eq!(asked.name.to_string(), "/up/big");
    let wire = big_data(&asked.name);
    let mut frags = fragments(&wire, header.pit_token, MTU);
    assert!(frags.len() > 1 && frags.iter().all(|f| f.len() <= MTU));
    frags.reverse(); // reassembly must not depend on arrival order
    for f in &frags {
        producer.send_to(f, kite_addr).unwrap();
    }

    let got = match consumer.recv_packet(WAIT) {
        (_, NetPacket::Data(d)) => d,
        (_, other) => panic!("the whole Data expected, got {other:?}"),
    };
    assert_eq!(got.wire().expect("received encoding"), &wire);
    let status = peer::face(kite.socket(), face).unwrap();
    assert_eq!(status.counters.n_in_data, 1, "{status:?}");
}
