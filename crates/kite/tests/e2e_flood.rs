//! Floods from one face through a real `kite run`, over real sockets: a face sending
//! Interests that are never answered, as fast as it can and asking to stay pending for
//! 2^64-1 ms, takes at most its share of the PIT and of the input rings, so other faces'
//! Interests still get through and get their Data; its entries leave by
//! `--max-interest-lifetime`; and a stream face whose Interests the forwarder has no room for
//! is read more slowly (its socket pushes back) instead of losing them. A UDP flooder's
//! datagrams reach a socket of its face's own, which is not read while the face is
//! restrained: the kernel drops them there, and other UDP peers exchange as before.
//!
//! Nothing here measures a rate: floods run until the forwarder refuses them (a Congestion
//! Nack back to the flooder), and deadlines only guard against hangs.

mod common;

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bytes::Bytes;
use common::peer::{self, interest, Conn, Got, Producer};
use common::{free_tcp_port, free_udp_port, one_flood_at_a_time, Daemon};
use kite_face::police::{NACK_BURST, NACK_RATE};
use kite_packet::{NackReason, NetPacket};

/// The longest InterestLifetime an Interest can ask for.
const FOREVER: u64 = u64::MAX;
/// Hang guard for floods and waits.
const GUARD: Duration = Duration::from_secs(120);
/// Interests per write (stream) or per round of datagrams (UDP).
const BATCH: usize = 256;

/// A daemon with unix, UDP and TCP listeners, the flood's prefix `/flood` routed to a
/// producer that never answers, and `/ok` to one that answers everything.
struct Setup {
    kite: Daemon,
    udp: u16,
    _silent: Producer,
    _answering: Producer,
}

impl Setup {
    fn start(extra: &[&str]) -> Setup {
        let udp = free_udp_port();
        let mut args = vec![
            "--udp".to_string(),
            format!("127.0.0.1:{udp}"),
            "--tcp".to_string(),
            format!("127.0.0.1:{}", free_tcp_port()),
        ];
        args.extend(extra.iter().map(|a| a.to_string()));
        let kite = Daemon::start(&[], &args);
        let s = kite.socket().to_string();
        let silent = Producer::start(&s, "/flood", Box::new(|_| None));
        let answering = Producer::start(&s, "/ok", Box::new(|_| Some(Bytes::from_static(b"ok"))));
        Setup {
            kite,
            udp,
            _silent: silent,
            _answering: answering,
        }
    }

    fn socket(&self) -> &str {
        self.kite.socket()
    }
}

/// A flood of Interests under `prefix` with the longest lifetime, from one UDP socket or one
/// unix connection, until stopped; counts the Nacks that come back, and among them the
/// Congestion Nacks (the forwarder refusing it room).
struct Flood {
    /// The flooding socket's address (UDP; unspecified for unix).
    addr: SocketAddrV4,
    stop: Arc<AtomicBool>,
    nacks: Arc<AtomicU64>,
    congestion_nacks: Arc<AtomicU64>,
    threads: Vec<JoinHandle<()>>,
}

impl Flood {
    fn udp(port: u16, prefix: &'static str) -> Flood {
        let sock = UdpSocket::bind("127.0.0.1:0").expect("bind a UDP socket");
        sock.connect(("127.0.0.1", port))
            .expect("connect the UDP socket");
        sock.set_read_timeout(Some(Duration::from_millis(100)))
            .expect("read timeout");
        let reader = sock.try_clone().expect("clone the UDP socket");
        let addr = match sock.local_addr().expect("local address") {
            SocketAddr::V4(a) => a,
            other => panic!("IPv4 expected, not {other}"),
        };
        Flood::start(
            addr,
            move |batch: &[Bytes]| {
                for i in batch {
                    // A full socket buffer drops datagrams, as a network would.
                    let _ = sock.send(i);
                }
                // Leave the forwarder's socket room for the datagrams of the other faces.
                std::thread::yield_now();
                true
            },
            move || {
                let mut buf = [0u8; 9000];
                match reader.recv(&mut buf) {
                    Ok(n) => Got::Frame(Bytes::copy_from_slice(&buf[..n])),
                    Err(_) => Got::Nothing,
                }
            },
            prefix,
        )
    }

    fn unix(socket: &str, prefix: &'static str) -> Flood {
        let mut writer = Conn::unix(socket);
        let mut reader = writer.try_clone();
        Flood::start(
            SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 0),
            move |batch: &[Bytes]| writer.try_send(&batch.concat()).is_ok(),
            move || reader.recv(Duration::from_millis(100)),
            prefix,
        )
    }

    fn start(
        addr: SocketAddrV4,
        mut send: impl FnMut(&[Bytes]) -> bool + Send + 'static,
        mut recv: impl FnMut() -> Got + Send + 'static,
        prefix: &'static str,
    ) -> Flood {
        let stop = Arc::new(AtomicBool::new(false));
        let congestion_nacks = Arc::new(AtomicU64::new(0));
        let nacks = Arc::new(AtomicU64::new(0));
        let (stop_w, stop_r) = (stop.clone(), stop.clone());
        let (all, congestion) = (nacks.clone(), congestion_nacks.clone());
        let writer = std::thread::spawn(move || {
            let mut seq = 0u64;
            let mut batch = Vec::with_capacity(BATCH);
            while !stop_w.load(Ordering::Relaxed) {
                batch.clear();
                for _ in 0..BATCH {
                    batch.push(interest(&format!("{prefix}/{seq}"), FOREVER));
                    seq += 1;
                }
                if !send(&batch) {
                    return;
                }
            }
        });
        let reader = std::thread::spawn(move || {
            while !stop_r.load(Ordering::Relaxed) {
                let Got::Frame(f) = recv() else { continue };
                if let Ok((_, NetPacket::Nack(n))) = NetPacket::decode_frame(f) {
                    all.fetch_add(1, Ordering::Relaxed);
                    if n.reason == NackReason::CONGESTION {
                        congestion.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
        });
        Flood {
            addr,
            stop,
            nacks,
            congestion_nacks,
            threads: vec![writer, reader],
        }
    }

    /// Waits until the forwarder has refused the flood room (a Congestion Nack came back).
    fn wait_refused(&self) {
        let refused = common::eventually(GUARD, || {
            (self.congestion_nacks.load(Ordering::Relaxed) > 0).then_some(())
        });
        assert!(
            refused.is_some(),
            "the flood was never refused room within {GUARD:?}"
        );
    }

    fn stop(self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads {
            // A writer blocked on a full socket ends when the daemon is dropped.
            if t.is_finished() {
                t.join().expect("a flood thread");
            }
        }
    }
}

/// Sends one Interest under `/ok` from `conn` and returns what came back: Data, or a Nack's
/// reason. A generous deadline only guards against a hang.
fn exchange(conn: &mut Conn, name: &str) -> Result<(), String> {
    conn.send(&interest(name, 10_000));
    match conn.recv(Duration::from_secs(20)) {
        Got::Frame(f) => match NetPacket::decode_frame(f).expect("a packet").1 {
            NetPacket::Data(d) if d.name.to_string() == name => Ok(()),
            NetPacket::Nack(n) => Err(format!("{name}: Nack {:?}", n.reason)),
            other => Err(format!("{name}: {other:?}")),
        },
        other => Err(format!("{name}: {other:?}")),
    }
}

#[test]
fn a_huge_lifetime_udp_flood_neither_locks_out_other_faces_nor_outlives_the_cap() {
    let _one = one_flood_at_a_time();
    let setup = Setup::start(&["--max-interest-lifetime", "30000"]);
    let s = setup.socket().to_string();

    // The flood goes on until the forwarder refuses it room in the PIT, and after.
    let flood = Flood::udp(setup.udp, "/flood/udp");
    flood.wait_refused();
    // Another face still exchanges while the flood goes on: the flood holds at most its share.
    let mut consumer = Conn::unix(&s);
    for k in 0..20 {
        exchange(&mut consumer, &format!("/ok/during/{k}"))
            .unwrap_or_else(|e| panic!("during the flood: {e}"));
    }
    flood.stop();

    // The flood asked to stay pending for ever; its entries leave by the 30 s cap (the
    // status request itself is the one entry left).
    let emptied = common::eventually(GUARD, || {
        (peer::general(&s).n_pit_entries <= 1).then_some(())
    });
    assert!(
        emptied.is_some(),
        "the flood's PIT entries outlived --max-interest-lifetime: {} left",
        peer::general(&s).n_pit_entries
    );
    exchange(&mut consumer, "/ok/after").expect("after the flood");
}

/// Sends one Interest under `/ok` over UDP from `sock` (connected to the daemon) and returns
/// what came back, as [`exchange`] does.
fn exchange_udp(sock: &UdpSocket, name: &str) -> Result<(), String> {
    sock.send(&interest(name, 10_000))
        .map_err(|e| format!("{name}: send: {e}"))?;
    let mut buf = [0u8; 9000];
    let n = sock.recv(&mut buf).map_err(|e| format!("{name}: {e}"))?;
    match NetPacket::decode_frame(Bytes::copy_from_slice(&buf[..n])) {
        Ok((_, NetPacket::Data(d))) if d.name.to_string() == name => Ok(()),
        Ok((_, NetPacket::Nack(n))) => Err(format!("{name}: Nack {:?}", n.reason)),
        other => Err(format!("{name}: {other:?}")),
    }
}

#[test]
fn a_restrained_udp_flooder_is_dropped_in_its_own_socket_while_another_udp_peer_exchanges() {
    let _one = one_flood_at_a_time();
    let setup = Setup::start(&[]);
    let flood = Flood::udp(setup.udp, "/flood/udp");
    flood.wait_refused();

    // Another UDP peer gets every Data while the flood goes on.
    let consumer = UdpSocket::bind("127.0.0.1:0").expect("bind a UDP socket");
    consumer.connect(("127.0.0.1", setup.udp)).expect("connect");
    consumer
        .set_read_timeout(Some(Duration::from_secs(20)))
        .expect("read timeout");
    for k in 0..200 {
        exchange_udp(&consumer, &format!("/ok/udp/{k}")).unwrap_or_else(|e| panic!("{e}"));
    }

    // Both peers have a socket of their own in the daemon, connected to them; the flooder's
    // is left unread while it is restrained, so the kernel drops the flood there.
    let me = |s: &UdpSocket| match s.local_addr().unwrap() {
        SocketAddr::V4(a) => a,
        other => panic!("IPv4 expected, not {other}"),
    };
    let sockets = common::procnet::udp4_sockets(setup.udp);
    let consumer_socket = sockets.iter().find(|s| s.remote == Some(me(&consumer)));
    assert!(
        consumer_socket.is_some(),
        "no socket for the consumer: {sockets:?}"
    );
    let flooder = flood.addr;
    let dropped = common::eventually(GUARD, || {
        let s = common::procnet::udp4_sockets(setup.udp);
        s.into_iter()
            .find(|s| s.remote == Some(flooder) && s.drops > 0)
    });
    assert!(
        dropped.is_some(),
        "the flooder's own socket never overflowed: {:?}",
        common::procnet::udp4_sockets(setup.udp)
    );
    flood.stop();
}

#[test]
fn a_consumer_gets_its_data_while_a_unix_and_a_udp_face_flood() {
    let _one = one_flood_at_a_time();
    let setup = Setup::start(&[]);
    let s = setup.socket().to_string();
    let unix = Flood::unix(&s, "/flood/unix");
    let udp = Flood::udp(setup.udp, "/flood/udp");
    unix.wait_refused();
    udp.wait_refused();

    // Both flooders are past their share and still sending; an ordinary consumer on a third
    // face gets every Data, and never a Nack for want of room.
    let mut consumer = Conn::unix(&s);
    for k in 0..200 {
        exchange(&mut consumer, &format!("/ok/{k}")).unwrap_or_else(|e| panic!("{e}"));
    }
    unix.stop();
    udp.stop();
}

/// Two UDP faces flood Interests under a prefix nobody routes, every one of them refused
/// (Nack NoRoute), as fast as they can: each is sent at most its rate of Nacks (a burst of
/// [`NACK_BURST`] and [`NACK_RATE`] a second since it began), the rest are counted as not
/// sent on its face, and a consumer on a third face gets every Data meanwhile.
#[test]
fn two_udp_flooders_get_at_most_their_rate_of_nacks_while_a_consumer_gets_its_data() {
    let _one = one_flood_at_a_time();
    let setup = Setup::start(&[]);
    let s = setup.socket().to_string();
    let began = Instant::now();
    let floods = [
        Flood::udp(setup.udp, "/unrouted/a"),
        Flood::udp(setup.udp, "/unrouted/b"),
    ];
    let face_of = |f: &Flood| {
        let uri = format!("udp4://{}", f.addr);
        peer::faces(&s).into_iter().find(|x| x.uri == uri)
    };
    for f in &floods {
        let limited = common::eventually(GUARD, || {
            face_of(f).filter(|x| x.counters.n_out_nack_limited > 0)
        });
        assert!(
            limited.is_some(),
            "no Nack was held back from {}: {:?}",
            f.addr,
            face_of(f)
        );
    }
    let mut consumer = Conn::unix(&s);
    for k in 0..200 {
        exchange(&mut consumer, &format!("/ok/{k}")).unwrap_or_else(|e| panic!("{e}"));
    }
    for f in &floods {
        let face = face_of(f).expect("the flooder's face");
        // Measured after the counters: the bound holds however slowly this machine ran.
        let allowed = u64::from(NACK_BURST)
            + began.elapsed().as_secs() * u64::from(NACK_RATE)
            + u64::from(NACK_RATE);
        let sent = face.counters.n_out_nacks;
        assert!(
            sent <= allowed,
            "{sent} Nacks sent to {} in {:?}",
            f.addr,
            began.elapsed()
        );
        assert!(
            f.nacks.load(Ordering::Relaxed) <= allowed,
            "the flooder got more Nacks than were sent"
        );
    }
    for f in floods {
        f.stop();
    }
}

#[test]
fn a_burst_over_unix_is_read_as_the_forwarder_takes_it_and_nothing_is_lost() {
    let _one = one_flood_at_a_time();
    let kite = Daemon::local(&[]);
    let s = kite.socket().to_string();
    const N: usize = 20_000;
    // Every Interest the forwarder takes is answered with a Data. (Not with a Nack: past a
    // burst, a face is sent Nacks at a bounded rate.)
    let _producer = Producer::start(&s, "/burst", Box::new(|_| Some(Bytes::from_static(b"b"))));
    let mut writer = Conn::unix(&s);
    let mut reader = writer.try_clone();
    let counter = std::thread::spawn(move || {
        let mut answered = 0;
        let until = Instant::now() + GUARD;
        while answered < N && Instant::now() < until {
            match reader.recv(Duration::from_secs(5)) {
                Got::Frame(f) => match NetPacket::decode_frame(f).expect("a packet").1 {
                    NetPacket::Data(_) => answered += 1,
                    other => panic!("a Data expected: {other:?}"),
                },
                Got::Nothing => break,
                Got::Closed => panic!("Kite closed the connection"),
            }
        }
        answered
    });
    let burst: Vec<u8> = (0..N)
        .flat_map(|k| interest(&format!("/burst/{k}"), 60_000).to_vec())
        .collect();
    writer.send(&burst);
    let answered = counter.join().expect("the reader");
    let me = peer::faces(&s)
        .into_iter()
        .max_by_key(|f| f.counters.n_in_interests)
        .expect("the burst's face");
    assert_eq!(
        (answered, me.counters.n_in_queue_full),
        (N, 0),
        "every Interest of the burst is answered, none dropped for a full ring"
    );
}
