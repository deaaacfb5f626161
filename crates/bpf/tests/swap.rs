//! A strategy swap under load loses no Data: a consumer keeps a window of Interests in flight
//! through the real forwarding threads while the eBPF strategy of their prefix is reloaded
//! again and again (new program, FIB choice moved to it, old one removed).

use std::io::Write;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use kite_app::framing::FrameReader;
use kite_fw::fib::{FibConfig, FibWriter};
use kite_fw::hash::NameHasher;
use kite_fw::strategy::StrategyTable;
use kite_packet::{Data, LpHeader, LpPacket, NetPacketView};
use kite_runtime::{Runtime, RuntimeConfig};
use kite_testkit::forwarder::{load_object, name};

/// Interest number `k`, for `/p/<k>`.
fn interest(k: u32) -> Bytes {
    kite_testkit::packet::interest(&format!("/p/{k}"), k, 4000)
}

#[test]
fn reloading_the_strategy_under_load_loses_no_data() {
    const TOTAL: u32 = 1500;
    const WINDOW: u32 = 16;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kite.sock");
    let hasher = NameHasher::random();
    let mut strategies = StrategyTable::builtin();
    let (mut fib, readers) = FibWriter::new(hasher, FibConfig::default(), StrategyTable::DEFAULT);
    let config = RuntimeConfig {
        forwarding_threads: 2,
        listeners: vec![std::sync::Arc::new(kite_face::unix::Listen(path.clone()))],
        ..RuntimeConfig::default()
    };
    let runtime = Runtime::start(config, readers, strategies.clone(), hasher).unwrap();
    let handle = runtime.handle();
    let wait_faces = |n: usize| {
        let t = Instant::now();
        loop {
            let faces = handle.faces();
            if faces.len() == n {
                return faces;
            }
            assert!(t.elapsed() < Duration::from_secs(5));
            std::thread::sleep(Duration::from_millis(5));
        }
    };
    let mut consumer = UnixStream::connect(&path).unwrap();
    wait_faces(1);
    let mut producer = UnixStream::connect(&path).unwrap();
    let producer_face = wait_faces(2)[1].id;
    for s in [&consumer, &producer] {
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    }
    let mut current = strategies.add(load_object("best-route", "br")).unwrap();
    fib.add_nexthop(&name("/p"), producer_face, 0).unwrap();
    fib.set_strategy(&name("/p"), current).unwrap();
    fib.publish();

    let done = Arc::new(AtomicBool::new(false));
    let answered = std::thread::spawn({
        let done = done.clone();
        move || {
            let mut from_producer = FrameReader::new();
            let mut n = 0u32;
            while !done.load(Ordering::Relaxed) && n < TOTAL {
                let lp =
                    LpPacket::decode(from_producer.next_frame(&mut producer).unwrap()).unwrap();
                let NetPacketView::Interest(i) =
                    NetPacketView::decode(lp.fragment.unwrap()).unwrap()
                else {
                    panic!("an Interest reaches the producer");
                };
                let data = Data::new(i.name.clone(), &b"content"[..]).encode();
                let frame = LpPacket {
                    header: LpHeader {
                        pit_token: lp.header.pit_token,
                        ..LpHeader::default()
                    },
                    fragment: Some(data),
                };
                producer.write_all(&frame.encode()).unwrap();
                n += 1;
            }
            // the socket stays open until the consumer has read every Data
            (n, producer)
        }
    });
    let received = std::thread::spawn({
        let done = done.clone();
        move || {
            let mut from_consumer = FrameReader::new();
            let mut sent = 0;
            while sent < WINDOW {
                consumer.write_all(&interest(sent)).unwrap();
                sent += 1;
            }
            let mut got = 0;
            while got < TOTAL {
                from_consumer.next_frame(&mut consumer).unwrap();
                got += 1;
                if sent < TOTAL {
                    consumer.write_all(&interest(sent)).unwrap();
                    sent += 1;
                }
            }
            done.store(true, Ordering::Relaxed);
            got
        }
    });
    let mut swaps = 0;
    while !done.load(Ordering::Relaxed) && !received.is_finished() && swaps < 5000 {
        let next = strategies
            .add(load_object("best-route", &format!("br{swaps}")))
            .unwrap();
        fib.set_strategy(&name("/p"), next).unwrap();
        fib.publish();
        assert!(strategies.remove(current));
        current = next;
        swaps += 1;
        std::thread::sleep(Duration::from_millis(2));
    }
    let got = received.join().expect("every Interest got its Data");
    assert_eq!(got, TOTAL);
    let (n, _producer) = answered.join().unwrap();
    assert_eq!(n, TOTAL, "every Interest reached the producer once");
    assert!(
        swaps >= 3,
        "the strategy was swapped while Data flowed ({swaps} swaps)"
    );
    runtime.shutdown();
}
