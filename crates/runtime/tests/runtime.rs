//! The daemon's threads end to end over real unix sockets: an app's Interest reaches a producer
//! face through the I/O thread, NDT dispatch and a forwarding thread, and the Data comes back,
//! with and without the PIT token echoed, after the threads have parked.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use bytes::Bytes;
use kite_fw::face::FaceId;
use kite_fw::fib::{FibConfig, FibWriter};
use kite_fw::hash::NameHasher;
use kite_fw::strategy::StrategyTable;
use kite_packet::{Data, LpHeader, LpPacket, NetPacketView};
use kite_runtime::{Runtime, RuntimeConfig};

/// Reads one whole top-level TLV element (type and length are single octets or 0xFD forms).
fn read_element(s: &mut UnixStream) -> Bytes {
    let mut head = [0u8; 2];
    s.read_exact(&mut head).unwrap();
    let mut buf = head.to_vec();
    let len = match head[1] {
        0xFD => {
            let mut l = [0u8; 2];
            s.read_exact(&mut l).unwrap();
            buf.extend_from_slice(&l);
            usize::from(u16::from_be_bytes(l))
        }
        n => usize::from(n),
    };
    let mut value = vec![0u8; len];
    s.read_exact(&mut value).unwrap();
    buf.extend_from_slice(&value);
    Bytes::from(buf)
}

struct Setup {
    runtime: Option<Runtime>,
    fib: FibWriter,
    _dir: tempfile::TempDir,
    consumer: UnixStream,
    producer: UnixStream,
    producer_face: FaceId,
}

impl Drop for Setup {
    fn drop(&mut self) {
        if let Some(r) = self.runtime.take() {
            r.shutdown();
        }
    }
}

impl Setup {
    /// Routes `prefix` to the producer's face and publishes the FIB.
    fn route_to_producer(&mut self, prefix: &str) {
        self.fib
            .add_nexthop(&prefix.parse().unwrap(), self.producer_face, 1)
            .unwrap();
        self.fib.publish();
    }
}

fn setup(threads: u8, inline: bool) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kite.sock");
    let hasher = NameHasher::random();
    let strategies = StrategyTable::builtin();
    let best = strategies
        .find(&"/localhost/nfd/strategy/best-route".parse().unwrap())
        .unwrap();
    let (fib, readers) = FibWriter::new(hasher, FibConfig::default(), best);
    let config = RuntimeConfig {
        forwarding_threads: threads,
        inline_forwarding: inline,
        listeners: vec![std::sync::Arc::new(kite_face::unix::Listen(path.clone()))],
        ..RuntimeConfig::default()
    };
    let runtime = Runtime::start(config, readers, strategies, hasher).unwrap();
    let consumer = UnixStream::connect(&path).unwrap();
    let handle = runtime.handle();
    let wait_faces = |n: usize| {
        let t = Instant::now();
        loop {
            let faces = handle.faces();
            if faces.len() == n {
                return faces;
            }
            assert!(t.elapsed() < Duration::from_secs(5), "faces: {faces:?}");
            std::thread::sleep(Duration::from_millis(10));
        }
    };
    wait_faces(1);
    let producer = UnixStream::connect(&path).unwrap();
    let producer_face = wait_faces(2)[1].id;
    for s in [&consumer, &producer] {
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    }
    Setup {
        runtime: Some(runtime),
        fib,
        _dir: dir,
        consumer,
        producer,
        producer_face,
    }
}

fn interest(name: &str, nonce: u32) -> Bytes {
    kite_testkit::packet::interest(name, nonce, 4000)
}

/// Sends Interests for `names` from the consumer, answers each at the producer (echoing the
/// token or not), and checks every Data reaches the consumer.
fn exchange(s: &mut Setup, names: &[String], echo_token: bool) {
    for (k, n) in names.iter().enumerate() {
        s.consumer.write_all(&interest(n, k as u32 + 1)).unwrap();
    }
    for _ in names {
        let lp = LpPacket::decode(read_element(&mut s.producer)).unwrap();
        let token = lp
            .header
            .pit_token
            .expect("Kite attaches its token upstream");
        let NetPacketView::Interest(i) = NetPacketView::decode(lp.fragment.unwrap()).unwrap()
        else {
            panic!("an Interest reaches the producer");
        };
        let data = Data::new(i.name.clone(), &b"content"[..]).encode();
        let frame = if echo_token {
            LpPacket {
                header: LpHeader {
                    pit_token: Some(token),
                    ..LpHeader::default()
                },
                fragment: Some(data),
            }
            .encode()
        } else {
            data
        };
        s.producer.write_all(&frame).unwrap();
    }
    let mut got: Vec<String> = names
        .iter()
        .map(|_| {
            let frame = read_element(&mut s.consumer);
            let lp = LpPacket::decode(frame).unwrap();
            match NetPacketView::decode(lp.fragment.unwrap()).unwrap() {
                NetPacketView::Data(d) => d.name.to_string(),
                other => panic!("expected Data, got {other:?}"),
            }
        })
        .collect();
    got.sort();
    let mut want = names.to_vec();
    want.sort();
    assert_eq!(got, want);
}

/// Two shards: Interests spread over both, Data back with and without the token echoed, and
/// an Interest after everything went to sleep still gets through; management's counters
/// request reaches each shard.
fn two_shards_forward(inline: bool) {
    let mut s = setup(2, inline);
    s.route_to_producer("/p");
    let names: Vec<String> = (0..20).map(|i| format!("/p/{i}/x")).collect();
    exchange(&mut s, &names, true);
    let names: Vec<String> = (20..40).map(|i| format!("/p/{i}/x")).collect();
    exchange(&mut s, &names, false);
    // After the threads have parked, a new Interest still wakes them.
    std::thread::sleep(Duration::from_millis(300));
    exchange(&mut s, &["/p/late".to_string()], true);
    // Asleep again: each management request must wake whichever thread runs the shards.
    // Unwoken, that thread would answer at its next once-a-second housekeeping tick, so
    // five requests would take about five seconds.
    std::thread::sleep(Duration::from_millis(300));
    let handle = s.runtime.as_ref().unwrap().handle();
    let t = Instant::now();
    for _ in 0..4 {
        assert_eq!(handle.thread_counters().len(), 2);
    }
    let counters = handle.thread_counters();
    assert!(
        t.elapsed() < Duration::from_millis(2500),
        "{:?}",
        t.elapsed()
    );
    assert_eq!(counters.len(), 2);
    let satisfied: Vec<u64> = counters.iter().map(|c| c.forwarder.satisfied).collect();
    assert_eq!(satisfied.iter().sum::<u64>(), 41);
    assert!(
        satisfied.iter().all(|&n| n > 0),
        "both shards forwarded: {satisfied:?}"
    );
}

#[test]
fn interest_and_data_cross_the_forwarding_threads() {
    two_shards_forward(false);
}

#[test]
fn interest_and_data_cross_the_shards_the_io_thread_runs_inline() {
    two_shards_forward(true);
}

#[test]
fn a_closed_app_face_is_removed_and_reported() {
    let s = setup(1, false);
    let handle = s.runtime.as_ref().unwrap().handle();
    drop(
        s.consumer
            .try_clone()
            .unwrap()
            .shutdown(std::net::Shutdown::Both),
    );
    let t = Instant::now();
    while handle.faces().len() != 1 {
        assert!(t.elapsed() < Duration::from_secs(5));
        std::thread::sleep(Duration::from_millis(10));
    }
    let events: Vec<_> = handle.face_events().try_iter().collect();
    assert!(matches!(
        events.last(),
        Some(kite_runtime::FaceEvent::Destroyed(_))
    ));
}

#[test]
fn a_backlog_longer_than_one_read_burst_is_read_to_the_end() {
    // The producer answers 100 Interests with 8000-octet Data in one 800 KB write. The I/O
    // thread reads a face a bounded burst per turn; what is left must be read on later turns
    // even though no new data (and so no new readiness event) arrives.
    let mut s = setup(1, true);
    s.route_to_producer("/big");
    let names: Vec<String> = (0..100).map(|i| format!("/big/{i}")).collect();
    for (k, n) in names.iter().enumerate() {
        s.consumer.write_all(&interest(n, k as u32 + 1)).unwrap();
    }
    let mut answers = Vec::new();
    for _ in &names {
        let lp = LpPacket::decode(read_element(&mut s.producer)).unwrap();
        let NetPacketView::Interest(i) = NetPacketView::decode(lp.fragment.unwrap()).unwrap()
        else {
            panic!("an Interest reaches the producer");
        };
        let data = Data::new(i.name.clone(), vec![0x42u8; 8000]).encode();
        let frame = LpPacket {
            header: LpHeader {
                pit_token: lp.header.pit_token,
                ..LpHeader::default()
            },
            fragment: Some(data),
        }
        .encode();
        answers.extend_from_slice(&frame);
    }
    let mut consumer = s.consumer.try_clone().unwrap();
    let reader = std::thread::spawn(move || {
        (0..100)
            .map(|_| {
                let lp = LpPacket::decode(read_element(&mut consumer)).unwrap();
                match NetPacketView::decode(lp.fragment.unwrap()).unwrap() {
                    NetPacketView::Data(d) => d.name.to_string(),
                    other => panic!("expected Data, got {other:?}"),
                }
            })
            .collect::<Vec<_>>()
    });
    // Bounded, so a forwarder that stops reading fails the test instead of hanging it.
    s.producer
        .set_write_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    s.producer.write_all(&answers).unwrap();
    let mut got = reader.join().unwrap();
    got.sort();
    let mut want = names;
    want.sort();
    assert_eq!(got, want);
}
