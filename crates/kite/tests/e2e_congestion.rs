//! CoDel under overload through a real `kite run`: consumers flood one forwarding thread with
//! Interests for a producer that answers them all, faster than the thread can take them from
//! its input ring, until the queue's sojourn time has stayed above CoDel's target (5 ms) for
//! an interval (100 ms). The Interest CoDel then marks carries its mark in its PIT record, and
//! the Data answering it leaves Kite with an NDNLPv2 CongestionMark.
//!
//! No rate is assumed: the consumers keep the flood going until a marked Data comes back (the
//! limit is only a hang guard). The overload is real because Kite's I/O thread reads and
//! dispatches an Interest with less work than the forwarding thread's pipeline, so a ring fed
//! by unthrottled consumers fills; CoDel marks rarely by design (one packet per interval at
//! first), so what is asserted is that some Data comes back marked.

mod common;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use common::peer::{interest, Conn, Got, Producer};
use common::Daemon;
use kite_packet::NetPacket;

/// Consumers flooding the forwarder at once.
const CONSUMERS: usize = 3;
/// Interests per write.
const BATCH: usize = 256;
/// Hang guard: the flood stops here even without a mark (and the test fails).
const GUARD: Duration = Duration::from_secs(60);

#[test]
fn an_overloaded_forwarding_thread_marks_data_with_congestion() {
    // One forwarding thread, so every Interest goes through the same ring.
    let kite = Daemon::local(&["--threads", "1"]);
    let s = kite.socket().to_string();
    let _producer = Producer::start(&s, "/flood", Box::new(|_| Some(Bytes::from_static(b"d"))));

    let stop = Arc::new(AtomicBool::new(false));
    let marked = Arc::new(AtomicU64::new(0));
    let received = Arc::new(AtomicU64::new(0));
    let mut threads = Vec::new();
    for c in 0..CONSUMERS {
        let mut writer = Conn::unix(&s);
        let mut reader = writer.try_clone();
        let (stop_w, stop_r) = (stop.clone(), stop.clone());
        let (marked, received) = (marked.clone(), received.clone());
        threads.push(std::thread::spawn(move || {
            let mut seq = 0u64;
            let mut batch = Vec::new();
            while !stop_w.load(Ordering::Relaxed) {
                batch.clear();
                for _ in 0..BATCH {
                    batch.extend_from_slice(&interest(&format!("/flood/{c}/{seq}"), 10_000));
                    seq += 1;
                }
                if writer.try_send(&batch).is_err() {
                    return;
                }
            }
        }));
        threads.push(std::thread::spawn(move || {
            while !stop_r.load(Ordering::Relaxed) {
                let frame = match reader.recv(Duration::from_millis(200)) {
                    Got::Frame(f) => f,
                    Got::Nothing => continue,
                    Got::Closed => return,
                };
                let (header, packet) = NetPacket::decode_frame(frame).expect("a packet");
                let mark = header.congestion_mark.unwrap_or(0);
                match packet {
                    NetPacket::Data(_) => {
                        received.fetch_add(1, Ordering::Relaxed);
                        if mark > 0 {
                            marked.fetch_add(1, Ordering::Relaxed);
                            stop_r.store(true, Ordering::Relaxed);
                        }
                    }
                    other => panic!("only Data may come back: {other:?}"),
                }
            }
        }));
    }
    let until = std::time::Instant::now() + GUARD;
    while !stop.load(Ordering::Relaxed) && std::time::Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        t.join().expect("a consumer thread");
    }
    let (marked, received) = (
        marked.load(Ordering::Relaxed),
        received.load(Ordering::Relaxed),
    );
    assert!(
        marked > 0,
        "no CongestionMark on {received} Data within {GUARD:?} of overload"
    );

    // The forwarder serves again once the backlog drains. Interests that meet a ring still
    // full are dropped (that is overload), so the calm consumer retransmits, as a real one
    // would.
    let mut calm = Conn::unix(&s);
    let answered = common::eventually(GUARD, || {
        calm.send(&interest("/flood/calm", 1_000));
        match calm.recv(Duration::from_millis(1_500)) {
            Got::Frame(f) => match NetPacket::decode_frame(f).expect("a packet").1 {
                NetPacket::Data(d) => Some(d),
                other => panic!("the calm Interest gets Data: {other:?}"),
            },
            Got::Nothing => None,
            Got::Closed => panic!("Kite closed the calm consumer's connection"),
        }
    });
    assert_eq!(
        answered.map(|d| d.name.to_string()).as_deref(),
        Some("/flood/calm")
    );
}
