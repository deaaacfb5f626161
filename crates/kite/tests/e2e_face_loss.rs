//! A face lost in the middle of a transfer through a real `kite run`: a consumer whose
//! connection drops with many Interests pending leaves no PIT entry behind (its face is purged
//! from the PIT at once, long before the Interests' lifetimes), and a producer that vanishes
//! leaves its consumers with Nacks rather than a hang, while Kite keeps serving everyone else.

mod common;

use std::time::Duration;

use bytes::Bytes;
use common::peer::{self, interest, Conn, Got, Producer};
use common::{eventually, Daemon};
use kite_packet::{NackReason, NetPacket};

/// Hang guard for anything the forwarder should do promptly.
const WAIT: Duration = Duration::from_secs(10);
/// Interests outstanding when the face goes.
const PENDING: usize = 200;

/// PIT entries the forwarder reports once `status/general` shows `want` (datasets are fresh
/// for a second, so an older count may come back first).
fn pit_reaches(socket: &str, want: impl Fn(u64) -> bool) -> Option<u64> {
    eventually(WAIT, || {
        let n = peer::general(socket).n_pit_entries;
        want(n).then_some(n)
    })
}

/// Answers only Interests whose last component is `ok`.
fn answers_ok() -> peer::Answer {
    Box::new(|i| {
        let last = i.name.last()?;
        (last.value() == b"ok").then(|| Bytes::from_static(b"fine"))
    })
}

#[test]
fn a_consumer_that_disconnects_leaves_no_pit_entries() {
    let kite = Daemon::local(&["--threads", "2"]);
    let s = kite.socket();
    let producer = Producer::start(s, "/hole", answers_ok());
    let baseline = peer::general(s).n_pit_entries;

    let mut consumer = Conn::unix(s);
    let consumer_face = consumer.register("/consumer");
    let mut batch = Vec::new();
    for i in 0..PENDING {
        // A minute of lifetime: only the face's teardown can clear these in time.
        batch.extend_from_slice(&interest(&format!("/hole/{i}"), 60_000));
    }
    consumer.send(&batch);
    producer.interests(PENDING, WAIT);
    pit_reaches(s, |n| n >= baseline + PENDING as u64).expect("the Interests are pending");

    // Drop the connection in the middle of a packet.
    let half = interest("/hole/half", 60_000);
    consumer.send(&half[..half.len() / 2]);
    drop(consumer);

    let left = pit_reaches(s, |n| n == baseline);
    assert_eq!(
        left,
        Some(baseline),
        "the consumer's PIT entries are purged"
    );
    assert!(
        eventually(WAIT, || peer::face(s, consumer_face)
            .is_none()
            .then_some(()))
        .is_some(),
        "the consumer's face is gone"
    );

    // The producer's face is unharmed and Kite still serves a new consumer.
    let mut fresh = Conn::unix(s);
    let got = fresh.fetch("/hole/ok", WAIT);
    assert_eq!(got.content.as_deref(), Some(&b"fine"[..]));
    let up = peer::face(s, producer.face_id()).expect("the producer's face");
    assert_eq!(up.counters.n_out_interests, PENDING as u64 + 1, "{up:?}");
    assert_eq!(up.counters.n_in_data, 1, "{up:?}");
}

#[test]
fn a_producer_that_disconnects_leaves_nacks_not_a_hang() {
    let kite = Daemon::local(&["--threads", "2"]);
    let s = kite.socket();
    let mut gone = Producer::start(s, "/gone", Box::new(|_| None));
    let _other = Producer::start(s, "/other", Box::new(|_| Some(Bytes::from_static(b"here"))));
    let baseline = peer::general(s).n_pit_entries;

    let mut consumer = Conn::unix(s);
    let mut batch = Vec::new();
    for i in 0..PENDING {
        batch.extend_from_slice(&interest(&format!("/gone/{i}"), 2_000));
    }
    consumer.send(&batch);
    gone.interests(PENDING, WAIT);
    gone.kill();

    // The route left with the face: asking again gets a Nack, and the Interests pending at
    // the producer's death time out silently (no Data, no hang).
    let mut attempt = 0;
    let nacked = eventually(WAIT, || {
        attempt += 1;
        let name = format!("/gone/again/{attempt}");
        consumer.send(&interest(&name, 1_000));
        loop {
            match consumer.recv(Duration::from_millis(1_500)) {
                Got::Frame(f) => match NetPacket::decode_frame(f).expect("a packet").1 {
                    NetPacket::Nack(n) if n.interest.name.to_string() == name => {
                        return Some(n.reason);
                    }
                    NetPacket::Nack(_) => continue,
                    other => panic!("only Nacks may come back: {other:?}"),
                },
                Got::Nothing => return None,
                Got::Closed => panic!("Kite closed the consumer's connection"),
            }
        }
    });
    assert_eq!(nacked, Some(NackReason::NO_ROUTE));

    // Everyone else is served, the same consumer included, and the PIT drains.
    let got = consumer.fetch("/other/x", WAIT);
    assert_eq!(got.content.as_deref(), Some(&b"here"[..]));
    let got = Conn::unix(s).fetch("/other/y", WAIT);
    assert_eq!(got.content.as_deref(), Some(&b"here"[..]));
    assert_eq!(pit_reaches(s, |n| n == baseline), Some(baseline));
}
