//! A quinn-proto client (the module's [`Client`]) and a server [`Session`] in memory, the
//! UDP payloads passed between them by hand and the time supplied.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use bytes::Bytes;

use super::memory::{first, Pair};
use super::session::{Refused, Sent, Session, Shared};
use super::*;

use super::memory::{addr, CLIENT, SERVER};

fn cert() -> Certificate {
    Certificate::self_signed(&[], SELF_SIGNED_VALIDITY).unwrap()
}

fn listener_shared(cert: &Certificate, config: &H3Config) -> Arc<Shared> {
    shared(cert, config).unwrap()
}

/// A session opened by a client on `path`.
fn open(path: &str) -> Pair {
    let cert = cert();
    Pair::open(path, &listener_shared(&cert, &H3Config::default()), &cert)
}

/// Lets `d` pass, running both sides' timers.
fn wait(p: &mut Pair, d: Duration) {
    p.now += d;
    let frames = &mut p.frames;
    p.server.on_timeout(p.now, &mut |f| frames.push(f));
    p.client.on_timeout(p.now);
    p.pump();
}

const INTEREST: &[u8] = &[0x05, 0x05, 0x07, 0x03, 0x08, 0x01, b'a'];

#[test]
fn a_client_opens_a_session_on_the_path_and_datagrams_carry_ndn_frames_both_ways() {
    let mut p = open("/ndn");
    assert_eq!(p.client.status(), Some(200));
    assert!(p.server.is_open() && !p.server.handshaking());
    p.client.send(INTEREST).unwrap();
    p.pump();
    assert_eq!(p.frames, [Bytes::from_static(INTEREST)]);
    let data = [0x06, 0x03, 0x07, 0x01, 0x08];
    assert_eq!(p.server.send(&data[..2], &data[2..]), Sent::Queued);
    p.pump();
    assert_eq!(p.client.recv().as_deref(), Some(&data[..]));
    assert_eq!(p.server.take_dropped(), session::Dropped::default());
    // At least what a datagram carries at QUIC's smallest path (path MTU discovery raises it).
    let max = p.server.max_frame().unwrap();
    assert!(max >= 1100, "{max}");
}

#[test]
fn path_mtu_discovery_raises_the_datagram_size_past_quics_smallest_path() {
    let mut p = open("/ndn");
    // Probes go and are acknowledged while the session carries traffic.
    for _ in 0..20 {
        p.client.send(INTEREST).unwrap();
        wait(&mut p, Duration::from_millis(50));
    }
    let max = p.server.max_frame().unwrap();
    assert!(max > 1300, "the datagram size stayed at {max}");
}

#[test]
fn a_full_datagram_buffer_holds_frames_back_and_drops_none() {
    let mut p = open("/ndn");
    let frame = vec![0x06; 1000];
    let mut queued = 0;
    while p.server.send(&[], &frame) == Sent::Queued {
        queued += 1;
        assert!(queued < 10_000, "the buffer never filled");
    }
    // What QUIC sends makes room again; every frame queued arrives.
    p.pump();
    let mut got = 0;
    while let Some(d) = p.client.recv() {
        assert_eq!(d.len(), frame.len());
        got += 1;
    }
    assert_eq!(got, queued, "a frame queued was dropped");
    assert_eq!(p.server.send(&[], &frame), Sent::Queued);
}

#[test]
fn another_path_is_answered_404_and_its_datagrams_are_dropped() {
    let mut p = open("/nope");
    assert_eq!(p.client.status(), Some(404));
    assert!(!p.server.is_open());
    p.client.send(INTEREST).unwrap();
    p.pump();
    assert!(p.frames.is_empty());
    assert_eq!(p.server.take_dropped().datagrams, 1);
    assert_eq!(
        p.server.send(&[], INTEREST),
        Sent::Refused,
        "no session to send on"
    );
}

#[test]
fn junk_datagrams_and_streams_are_dropped_and_the_session_goes_on() {
    let mut p = open("/ndn");
    // Another session's quarter stream id, and no id at all.
    p.client
        .send_raw(Bytes::from_static(&[0x05, 1, 2]))
        .unwrap();
    p.client.send_raw(Bytes::new()).unwrap();
    p.client.open_stream(true, b"\x41\x00junk");
    p.client.open_stream(true, &[0xff; 300]);
    p.client.open_stream(false, &[0x54, 0, 1, 2, 3]);
    p.client.open_stream(false, &[0x21; 100]);
    p.pump();
    assert_eq!(p.server.take_dropped().datagrams, 2);
    assert!(p.frames.is_empty());
    p.client.send(INTEREST).unwrap();
    p.pump();
    assert_eq!(p.frames, [Bytes::from_static(INTEREST)]);
    assert!(!p.server.is_closed());
}

#[test]
fn a_request_larger_than_kite_reads_is_refused() {
    let mut p = open("/nope");
    // A HEADERS frame that announces 16 KiB and never ends.
    let mut junk = vec![0x01, 0x80, 0x00, 0x40, 0x00];
    junk.resize(12 << 10, 0);
    p.client.open_stream(true, &junk);
    p.pump();
    assert!(!p.server.is_closed());
}

#[test]
fn a_frame_larger_than_a_datagram_is_counted_and_not_sent() {
    let mut p = open("/ndn");
    assert_eq!(p.server.send(&[], &[0u8; 2000]), Sent::Refused);
    assert_eq!(p.server.take_dropped().too_large, 1);
}

#[test]
fn only_a_quic_initial_opens_a_session_and_handshakes_are_bounded() {
    let cert = cert();
    let shared = listener_shared(&cert, &H3Config::default());
    let now = Instant::now();
    let remote = addr(CLIENT);
    for junk in [&[0u8; 1300][..], &[0xc0; 40][..], &[0x40; 1300][..]] {
        let r = Session::accept(&shared, 1, now, remote, None, junk);
        assert_eq!(r.unwrap_err(), Refused::NotInitial);
    }
    // A long header of version 1 with junk after it opens nothing either.
    let mut fake = vec![0xc0, 0, 0, 0, 1];
    fake.resize(1200, 0xaa);
    let r = Session::accept(&shared, 1, now, remote, None, &fake);
    assert_eq!(r.unwrap_err(), Refused::NotInitial);
    assert_eq!(shared.handshakes.load(Ordering::Relaxed), 0);

    let mut a = Client::connect(now, addr(SERVER), "/ndn", cert.sha256()).unwrap();
    let mut b = Client::connect(now, addr(SERVER), "/ndn", cert.sha256()).unwrap();
    let (da, db) = (first(&mut a, now), first(&mut b, now));
    let sa = Session::accept(&shared, 1, now, remote, None, &da).unwrap();
    let r = Session::accept(&shared, 1, now, addr("192.0.2.8:1"), None, &db);
    assert_eq!(r.unwrap_err(), Refused::Busy, "one handshake at a time");
    let mut p = Pair {
        client: a,
        server: sa,
        now,
        frames: Vec::new(),
    };
    p.pump();
    assert!(p.server.is_open());
    assert_eq!(shared.handshakes.load(Ordering::Relaxed), 0, "given back");
    assert!(Session::accept(&shared, 1, now, addr("192.0.2.8:1"), None, &db).is_ok());
}

#[test]
fn a_handshake_that_never_completes_gives_its_place_back_when_it_times_out() {
    let cert = cert();
    let config = H3Config {
        idle_timeout: Duration::from_secs(5),
        ..H3Config::default()
    };
    let shared = listener_shared(&cert, &config);
    let now = Instant::now();
    let mut c = Client::connect(now, addr(SERVER), "/ndn", cert.sha256()).unwrap();
    let d = first(&mut c, now);
    let mut s = Session::accept(&shared, 1, now, addr(CLIENT), None, &d).unwrap();
    assert_eq!(shared.handshakes.load(Ordering::Relaxed), 1);
    let mut t = now;
    while !s.is_closed() {
        t = s.timeout().expect("a timer while alive");
        s.on_timeout(t, &mut |_| {});
        assert!(t < now + Duration::from_secs(60), "never timed out");
    }
    assert!(t >= now + Duration::from_secs(5));
    drop(s);
    assert_eq!(shared.handshakes.load(Ordering::Relaxed), 0);
}

#[test]
fn a_silent_client_ends_its_session_at_the_idle_timeout() {
    let mut p = open("/ndn");
    let opened = p.now;
    wait(&mut p, Duration::from_secs(10));
    assert!(!p.server.is_closed());
    // The client falls silent: only the server's timers run.
    let mut t = p.now;
    while !p.server.is_closed() {
        t = p.server.timeout().expect("a timer while alive");
        p.server.on_timeout(t, &mut |_| {});
    }
    let lived = t - opened;
    assert!(
        lived >= DEFAULT_IDLE_TIMEOUT - Duration::from_secs(1),
        "{lived:?}"
    );
}

#[test]
fn a_client_that_closes_ends_the_session() {
    let mut p = open("/ndn");
    p.client.close(p.now);
    p.pump();
    let mut guard = 0;
    while !p.server.is_closed() {
        let t = p.server.timeout().expect("draining");
        p.server.on_timeout(t, &mut |_| {});
        guard += 1;
        assert!(guard < 100);
    }
}

#[test]
fn a_client_pinning_another_certificate_opens_no_session() {
    let cert = cert();
    let shared = listener_shared(&cert, &H3Config::default());
    let other = Certificate::self_signed(&[], SELF_SIGNED_VALIDITY).unwrap();
    let p = Pair::pinning("/ndn", &shared, other.sha256());
    assert!(p.client.is_closed() && p.client.status().is_none());
    assert!(!p.server.is_open());
}

#[test]
fn the_self_signed_certificate_is_what_browsers_pin() {
    let c = cert();
    assert_eq!(c.sha256_hex().len(), 64);
    assert_eq!(c.sha256_base64().len(), 44);
    let der = &c.chain[0];
    assert_eq!(Sha256::digest(der.as_ref())[..], c.sha256());
    // ECDSA with SHA-256 (1.2.840.10045.4.3.2) over a P-256 key (1.2.840.10045.3.1.7).
    let ecdsa_sha256 = [0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x02];
    let p256 = [0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07];
    let has = |needle: &[u8]| der.windows(needle.len()).any(|w| w == needle);
    assert!(has(&ecdsa_sha256) && has(&p256));
}
