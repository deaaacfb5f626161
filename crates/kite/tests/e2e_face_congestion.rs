//! NFD's congestion marking on a face's output through a real `kite run`: a consumer that
//! does not keep up with its Data makes Kite's output queue for its face grow; once the
//! backlog has stayed above the threshold (65536 octets) for the base interval (100 ms), Data
//! leave that face with an NDNLPv2 CongestionMark, so the consumer can slow down before the
//! queue overflows. `faces/list` shows NFD's defaults and `faces/update` turns it off.
//!
//! In a file of its own: the flood tests of e2e_congestion.rs would starve it of CPU.

mod common;

use std::time::Duration;

use bytes::Bytes;
use common::peer::{self, interest, Conn, Got, Producer};
use common::Daemon;
use kite_mgmt_proto::ControlParameters;
use kite_packet::NetPacket;

/// Sends `batches` × 32 Interests under `prefix`, 30 ms apart, without reading, then reads
/// every answer; returns (Data received, Data carrying a CongestionMark).
fn unread_burst(conn: &mut Conn, prefix: &str, batches: usize) -> (usize, usize) {
    let mut seq = 0;
    for _ in 0..batches {
        let mut batch = Vec::new();
        for _ in 0..32 {
            batch.extend_from_slice(&interest(&format!("{prefix}/{seq}"), 10_000));
            seq += 1;
        }
        conn.send(&batch);
        std::thread::sleep(Duration::from_millis(30));
    }
    let (mut received, mut marked) = (0, 0);
    while received < seq {
        let Got::Frame(f) = conn.recv(Duration::from_secs(5)) else {
            break;
        };
        let (header, packet) = NetPacket::decode_frame(f).expect("a packet");
        assert!(matches!(packet, NetPacket::Data(_)), "{packet:?}");
        received += 1;
        marked += usize::from(header.congestion_mark.unwrap_or(0) > 0);
    }
    (received, marked)
}

#[test]
fn a_face_whose_consumer_reads_slowly_marks_its_data() {
    let kite = Daemon::local(&[]);
    let s = kite.socket().to_string();
    let _producer = Producer::start(&s, "/big", Box::new(|_| Some(Bytes::from(vec![7u8; 4000]))));
    let mut consumer = Conn::unix(&s);
    let face = consumer.register("/the-consumer");
    // NFD's defaults, listed as NFD lists them
    let status = peer::face(&s, face).expect("the consumer's face");
    assert_eq!(status.flags & (1 << 2), 1 << 2, "CongestionMarking flag");
    assert_eq!(status.base_congestion_marking_interval, Some(100_000_000));
    assert_eq!(status.default_congestion_threshold, Some(65_536));

    // 16 batches of 4000-octet Data over 480 ms, unread: the backlog in Kite's output queue
    // passes 65536 octets after a few batches (once the socket's buffer is full) and stays
    // above it for longer than the 100 ms base interval while Data keep coming, so some leave
    // marked; 512 frames fit the queue, so none is dropped.
    let (received, marked) = unread_burst(&mut consumer, "/big/on", 16);
    assert_eq!(received, 512);
    assert!(marked > 0, "no Data marked");

    // faces/update turns marking off for that face
    let mut off = ControlParameters {
        face_id: Some(face),
        ..ControlParameters::default()
    };
    off.set_flag_bit(2, false);
    peer::command_ok(&s, "faces", "update", off);
    let status = peer::face(&s, face).expect("the consumer's face");
    assert_eq!(status.flags & (1 << 2), 0);
    let (received, marked) = unread_burst(&mut consumer, "/big/off", 16);
    assert_eq!((received, marked), (512, 0));
}
