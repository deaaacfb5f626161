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
use std::time::{Duration, Instant};

use bytes::Bytes;
use common::peer::{self, interest, Conn, Got, Producer};
use common::{one_flood_at_a_time, Daemon};
use kite_app::nfd_name;
use kite_packet::{NackReason, NetPacket};

/// Consumers flooding the forwarder at once.
const CONSUMERS: usize = 3;
/// Interests per write.
const BATCH: usize = 256;
/// Hang guard: the flood stops here even without a mark (and the test fails).
const GUARD: Duration = Duration::from_secs(60);

/// Consumers writing Interests for `/flood/<c>/<seq>` as fast as the socket takes them, each
/// with a reader counting the Data that come back and those marked, until stopped (or, with
/// `stop_on_signal`, until the first marked Data or Congestion Nack; nothing else may come back).
struct Flood {
    stop: Arc<AtomicBool>,
    marked: Arc<AtomicU64>,
    /// Congestion Nacks: the flooding faces' share of the PIT is full.
    nacked: Arc<AtomicU64>,
    received: Arc<AtomicU64>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Flood {
    fn start(socket: &str, stop_on_signal: bool) -> Flood {
        let stop = Arc::new(AtomicBool::new(false));
        let marked = Arc::new(AtomicU64::new(0));
        let received = Arc::new(AtomicU64::new(0));
        let nacked = Arc::new(AtomicU64::new(0));
        let mut threads = Vec::new();
        for c in 0..CONSUMERS {
            let mut writer = Conn::unix(socket);
            let mut reader = writer.try_clone();
            let (stop_w, stop_r) = (stop.clone(), stop.clone());
            let (marked, received) = (marked.clone(), received.clone());
            let nacked = nacked.clone();
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
                                if stop_on_signal {
                                    stop_r.store(true, Ordering::Relaxed);
                                }
                            }
                        }
                        // A flood that outruns the producer fills each flooding face's share of
                        // the PIT, which then Nacks the face's new Interests with Congestion:
                        // the other congestion signal, which may come before CoDel's first mark.
                        NetPacket::Nack(n) if n.reason == NackReason::CONGESTION => {
                            nacked.fetch_add(1, Ordering::Relaxed);
                            if stop_on_signal {
                                stop_r.store(true, Ordering::Relaxed);
                            }
                        }
                        other => panic!("only Data may come back: {other:?}"),
                    }
                }
            }));
        }
        Flood {
            stop,
            marked,
            nacked,
            received,
            threads,
        }
    }

    /// Waits until the flood stopped itself or `limit` passed.
    fn wait(&self, limit: Duration) {
        let until = Instant::now() + limit;
        while !self.stop.load(Ordering::Relaxed) && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Stops the consumers; returns (marked, received) Data.
    fn stop(self) -> (u64, u64) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads {
            t.join().expect("a consumer thread");
        }
        (
            self.marked.load(Ordering::Relaxed),
            self.received.load(Ordering::Relaxed),
        )
    }
}

/// One forwarding shard, in a thread of its own or run by the I/O thread (`--inline`).
fn one_shard(inline: bool) -> Daemon {
    Daemon::local(&[
        "--threads",
        "1",
        "--inline",
        if inline { "true" } else { "false" },
    ])
}

#[test]
fn an_overloaded_forwarding_thread_signals_congestion() {
    overload_signals_congestion(false);
}

#[test]
fn an_overloaded_inline_shard_signals_congestion() {
    overload_signals_congestion(true);
}

/// A flood past what one shard forwards is told so: CoDel marks the Data of a standing Interest
/// ring (`crates/runtime/src/codel.rs` tests the control law), or the flooding faces, past
/// their share of the PIT, are Nacked with Congestion; which comes first depends on whether the
/// forwarder or the producer falls behind first.
fn overload_signals_congestion(inline: bool) {
    let _one = one_flood_at_a_time();
    // One shard, so every Interest goes through the same ring.
    let kite = one_shard(inline);
    let s = kite.socket().to_string();
    let _producer = Producer::start(&s, "/flood", Box::new(|_| Some(Bytes::from_static(b"d"))));

    let flood = Flood::start(&s, true);
    flood.wait(GUARD);
    let nacked = flood.nacked.load(Ordering::Relaxed);
    let (marked, received) = flood.stop();
    assert!(
        marked + nacked > 0,
        "no CongestionMark on {received} Data and no Congestion Nack within {GUARD:?} of overload"
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

#[test]
fn management_answers_while_a_flood_overloads_the_interest_ring() {
    management_answers_during_a_flood(false);
}

#[test]
fn management_answers_while_a_flood_overloads_an_inline_shards_ring() {
    management_answers_during_a_flood(true);
}

fn management_answers_during_a_flood(inline: bool) {
    let _one = one_flood_at_a_time();
    let kite = one_shard(inline);
    let s = kite.socket().to_string();
    let _producer = Producer::start(&s, "/flood", Box::new(|_| Some(Bytes::from_static(b"d"))));
    let flood = Flood::start(&s, false);

    // The flood overloads the forwarder: the flooding faces, past their share of the Interest
    // ring, are held back (their sockets left unread), which CoDel counts as a standing queue
    // and marks; past their share of the PIT, they are Nacked with Congestion. Either shows the
    // overload. Until then a read may time out (the dataset Interest is not what is tested yet).
    let overloaded = common::eventually(GUARD, || {
        let signals = flood.marked.load(Ordering::Relaxed) + flood.nacked.load(Ordering::Relaxed);
        (signals > 0).then_some(())
    });
    assert!(
        overloaded.is_some(),
        "the flood overloads the forwarding thread"
    );

    // While it goes on, every management request is answered in time: its /localhost
    // Interest does not queue behind the flood (it has a ring of its own), and the PIT keeps
    // room for it (a reserve for /localhost).
    let before = flood.received.load(Ordering::Relaxed);
    for round in 0..8 {
        let general =
            peer::mgmt(&s).dataset(&nfd_name(&[b"status", b"general"]), Duration::from_secs(2));
        assert!(general.is_ok(), "status/general round {round}: {general:?}");
        let faces = peer::mgmt(&s).dataset(&nfd_name(&[b"faces", b"list"]), Duration::from_secs(2));
        assert!(faces.is_ok(), "faces/list round {round}: {faces:?}");
    }
    let after = flood.received.load(Ordering::Relaxed);
    assert!(
        after > before,
        "the flood went on ({before} -> {after} Data)"
    );
    flood.stop();
}
