//! Pipeline, producer and segmented fetch against in-process fakes.

use std::io::Write;
use std::os::unix::net::UnixListener;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use kite_mgmt_proto::dataset::response_data;
use kite_mgmt_proto::{parse_command, ControlResponse};
use kite_packet::{
    Data, DigestSha256, Interest, LpHeader, LpPacket, Nack, NackReason, Name, NetPacket, PitToken,
};

use super::{
    fetch, CcKind, CcOptions, Discovery, FetchError, FetchOptions, PublishOptions, Published,
    RdrFailure,
};
use crate::fake::FakeForwarder;
use crate::framing::FrameReader;
use crate::{Client, Event, Pipeline, Producer};

fn name(s: &str) -> Name {
    s.parse().unwrap()
}

fn pipeline(fake: &FakeForwarder) -> Pipeline {
    Pipeline::new(Client::connect_unix(fake.socket_path()).unwrap())
}

fn signed(n: &str, content: &'static [u8]) -> Bytes {
    Data::new(name(n), content).sign(&DigestSha256).unwrap()
}

#[test]
fn pipeline_matches_answers_out_of_order_by_name_and_prefix() {
    let fake = FakeForwarder::builder()
        .raw(|i| match i.name.to_uri().as_str() {
            "/a" => vec![signed("/b", b"b"), signed("/a", b"a")],
            "/p" => vec![signed("/p/x/y", b"p")],
            "/n" => vec![Nack::encode_for(NackReason::NO_ROUTE, i.encode())],
            _ => vec![],
        })
        .start();
    let mut p = pipeline(&fake);
    let t = Duration::from_secs(5);
    let b = p.express(Interest::new(name("/b")), t).unwrap();
    let a = p.express(Interest::new(name("/a")), t).unwrap();
    let a_again = p.express(Interest::new(name("/a")), t).unwrap();
    let mut cbp = Interest::new(name("/p"));
    cbp.can_be_prefix = true;
    let pfx = p.express(cbp, t).unwrap();
    let exact_p = p.express(Interest::new(name("/p")), t).unwrap();
    let n = p.express(Interest::new(name("/n")), t).unwrap();
    let silent = p
        .express(Interest::new(name("/silent")), Duration::from_millis(50))
        .unwrap();
    assert_eq!(p.outstanding(), 7);
    let mut got = Vec::new();
    let until = Instant::now() + t;
    while got.len() < 6 && Instant::now() < until {
        got.extend(p.poll(until).unwrap());
    }
    let data_of = |id| {
        got.iter().find_map(|e| match e {
            Event::Data { id: i, data, .. } if *i == id => Some(data.name.to_uri()),
            _ => None,
        })
    };
    // /b's Data came while answering /a: it still satisfies the /b Interest.
    assert_eq!(data_of(b).as_deref(), Some("/b"));
    assert_eq!(data_of(a).as_deref(), Some("/a"));
    // Two Interests of one name: the first /a Data answers both, once each.
    assert_eq!(data_of(a_again).as_deref(), Some("/a"));
    assert_eq!(
        got.iter()
            .filter(|e| matches!(e, Event::Data { data, .. } if data.name == name("/a")))
            .count(),
        2
    );
    assert_eq!(data_of(pfx).as_deref(), Some("/p/x/y"));
    assert!(got.iter().any(
        |e| matches!(e, Event::Nack { id, reason } if *id == n && *reason == NackReason::NO_ROUTE)
    ));
    assert!(got
        .iter()
        .any(|e| matches!(e, Event::Timeout { id } if *id == silent)));
    assert_eq!(
        p.outstanding(),
        1,
        "only the exact /p is left: /p/x/y is not /p"
    );
    assert!(p.interest(exact_p).is_some());
}

#[test]
fn timeouts_come_one_per_poll_and_can_be_postponed() {
    let fake = FakeForwarder::builder().start();
    let mut p = pipeline(&fake);
    let t = Duration::from_millis(20);
    let first = p.express(Interest::new(name("/quiet/1")), t).unwrap();
    let second = p.express(Interest::new(name("/quiet/2")), t).unwrap();
    let third = p.express(Interest::new(name("/quiet/3")), t).unwrap();
    std::thread::sleep(2 * t);
    let now = Instant::now();
    let events = p.poll(now + t).unwrap();
    assert!(
        matches!(events[..], [Event::Timeout { id }] if id == first),
        "the earliest alone: {events:?}"
    );
    // Postponed, the second is not reported at its old deadline; the third is.
    p.postpone(second, now + Duration::from_secs(10));
    p.postpone(third, now - Duration::from_secs(1));
    let events = p.poll(now + t).unwrap();
    assert!(
        matches!(events[..], [Event::Timeout { id }] if id == third),
        "a timeout is never brought forward, nor lost: {events:?}"
    );
    assert!(p.poll(Instant::now() + t).unwrap().is_empty());
    assert_eq!(p.outstanding(), 1);
    assert!(p.interest(second).is_some());
}

#[test]
fn poll_sleeps_until_the_deadline_when_nothing_comes() {
    let fake = FakeForwarder::builder().start();
    let mut p = pipeline(&fake);
    let start = Instant::now();
    let events = p.poll(start + Duration::from_millis(100)).unwrap();
    assert!(events.is_empty());
    assert!(start.elapsed() >= Duration::from_millis(100));
}

/// A fake that serves `published`, dropping the first request for every `drop_every`-th
/// segment and marking every `mark_every`-th Data with a CongestionMark.
fn serving(published: Published, drop_every: u64, mark_every: u64) -> FakeForwarder {
    let asked = AtomicU64::new(0);
    let dropped = std::sync::Mutex::new(std::collections::HashSet::new());
    FakeForwarder::builder()
        .raw(move |i| {
            let Some(wire) = published.answer(i) else {
                return vec![];
            };
            let seg = i.name.last().and_then(|c| c.as_segment());
            if let Some(seg) = seg.filter(|s| drop_every > 0 && s % drop_every == 1) {
                if dropped.lock().unwrap().insert(seg) {
                    return vec![];
                }
            }
            let n = asked.fetch_add(1, Ordering::Relaxed);
            if mark_every > 0 && n % mark_every == mark_every - 1 {
                let lp = LpPacket {
                    header: LpHeader {
                        congestion_mark: Some(1),
                        ..LpHeader::default()
                    },
                    fragment: Some(wire.clone()),
                };
                return vec![lp.encode()];
            }
            vec![wire.clone()]
        })
        .start()
}

fn object(len: usize) -> Bytes {
    (0..len)
        .map(|i| (i * 7 % 251) as u8)
        .collect::<Vec<_>>()
        .into()
}

fn published(content: &Bytes) -> Published {
    let opts = PublishOptions {
        chunk_size: 1000,
        version: Some(9),
        ..PublishOptions::default()
    };
    Published::new(&name("/obj"), content, &opts, &DigestSha256).unwrap()
}

fn opts(kind: CcKind) -> FetchOptions {
    FetchOptions {
        cc: CcOptions {
            kind,
            initial_window: 4.0,
            ..CcOptions::default()
        },
        min_rto: Duration::from_millis(50),
        ..FetchOptions::default()
    }
}

#[test]
fn fetch_discovers_the_version_retransmits_losses_and_writes_in_order() {
    let content = object(50_500);
    for kind in [CcKind::Aimd, CcKind::Cubic, CcKind::Fixed] {
        let fake = serving(published(&content), 10, 7);
        let mut out = Vec::new();
        let mut calls = 0;
        let stats = fetch(
            pipeline(&fake),
            &name("/obj"),
            &opts(kind),
            &mut out,
            &mut |_| calls += 1,
        )
        .unwrap();
        assert!(out == content, "{kind:?}: content differs");
        assert_eq!(stats.versioned, Some(name("/obj/v=9")));
        assert_eq!(stats.segments, 51);
        assert_eq!(stats.octets, 50_500);
        assert_eq!(
            stats.timeouts + stats.lost_early,
            5,
            "{kind:?}: segments 1, 11, .. 41 dropped once"
        );
        assert_eq!(stats.retransmissions, 5);
        assert_eq!(stats.final_segment, Some(50));
        let past_end = |i: &Interest| i.name.last().and_then(|c| c.as_segment()) > Some(50);
        assert!(
            !fake.received().iter().any(past_end),
            "nothing asked past FinalBlockId"
        );
        assert!(stats.congestion_marks >= 6, "{kind:?}: {stats:?}");
        if kind != CcKind::Fixed {
            assert!(stats.window_decreases >= 1, "{kind:?}: {stats:?}");
        }
        assert!(calls > 0);
        let asked = fake.received();
        assert!(
            asked[0].can_be_prefix && asked[0].must_be_fresh,
            "discovery"
        );
    }
}

/// A forwarder that stops for a second in the middle of a fetch (its host took its core)
/// holds every Interest of the window past the RTO; the fetch times out once per backed-off
/// timer, as TCP does, not once per Interest of the window, and nothing it retransmits is
/// taken for a sign that the rest was lost.
#[test]
fn a_stalled_forwarder_costs_a_timeout_per_backoff_not_the_window() {
    let content = object(300_000);
    let p = published(&content);
    let stalled = AtomicBool::new(false);
    let fake = FakeForwarder::builder()
        .raw(move |i| {
            let seg = i.name.last().and_then(|c| c.as_segment());
            if seg == Some(150) && !stalled.swap(true, Ordering::Relaxed) {
                std::thread::sleep(Duration::from_secs(1));
            }
            p.answer(i).cloned().into_iter().collect()
        })
        .start();
    let mut out = Vec::new();
    let stats = fetch(
        pipeline(&fake),
        &name("/obj"),
        &opts(CcKind::Cubic),
        &mut out,
        &mut |_| {},
    )
    .unwrap();
    assert!(out == content);
    // 50 ms, 100, 200, 400, 800: five expiries cover the second.
    assert!(stats.timeouts <= 8, "{stats:?}");
    assert!(stats.retransmissions <= 8, "{stats:?}");
}

#[test]
fn losses_are_resent_before_their_timer_when_later_segments_arrive_or_in_the_tail() {
    let content = object(50_500);
    let p = published(&content);
    // Drops the first Interest for segments 1, 11, .. 41 (each overtaken by later segments
    // answered) and for the last one, 50 (nothing is sent after it: the tail).
    let dropped = std::sync::Mutex::new(std::collections::HashSet::new());
    let fake = FakeForwarder::builder()
        .raw(move |i| {
            let seg = i.name.last().and_then(|c| c.as_segment());
            if let Some(seg) = seg.filter(|s| s % 10 == 1 || *s == 50) {
                if dropped.lock().unwrap().insert(seg) {
                    return vec![];
                }
            }
            p.answer(i).cloned().into_iter().collect()
        })
        .start();
    // A timer far longer than the fetch: every loss must be found without it.
    let o = FetchOptions {
        min_rto: Duration::from_secs(3),
        ..opts(CcKind::Cubic)
    };
    let started = Instant::now();
    let mut out = Vec::new();
    let stats = fetch(pipeline(&fake), &name("/obj"), &o, &mut out, &mut |_| {}).unwrap();
    assert!(out == content);
    assert_eq!(stats.timeouts, 0, "{stats:?}");
    assert_eq!(stats.lost_early, 6, "{stats:?}");
    assert_eq!(stats.retransmissions, 6);
    assert!(started.elapsed() < Duration::from_secs(2), "{stats:?}");
    // Each was resent only after the forwarders' first suppression interval (10 ms), or a
    // forwarder would have held the retransmission back.
    let asked = fake.received();
    for seg in [1, 11, 21, 31, 41, 50] {
        let n = name(&format!("/obj/v=9/seg={seg}"));
        assert_eq!(asked.iter().filter(|i| i.name == n).count(), 2, "{n}");
    }
}

#[test]
fn fetch_of_a_versioned_name_and_fetch_errors() {
    let content = object(3000);
    let fake = serving(published(&content), 0, 0);
    let mut out = Vec::new();
    fetch(
        pipeline(&fake),
        &name("/obj/v=9"),
        &opts(CcKind::Aimd),
        &mut out,
        &mut |_| {},
    )
    .unwrap();
    assert!(out == content);
    let fake = FakeForwarder::builder()
        .raw(|i| {
            if i.name == name("/plain") {
                vec![signed("/plain/x", b"not segmented")]
            } else {
                vec![Nack::encode_for(NackReason::NO_ROUTE, i.encode())]
            }
        })
        .start();
    let err = fetch(
        pipeline(&fake),
        &name("/plain"),
        &opts(CcKind::Aimd),
        &mut Vec::new(),
        &mut |_| {},
    )
    .unwrap_err();
    assert!(matches!(err, FetchError::NotSegmented(n) if n == name("/plain/x")));
    let err = fetch(
        pipeline(&fake),
        &name("/elsewhere"),
        &opts(CcKind::Aimd),
        &mut Vec::new(),
        &mut |_| {},
    )
    .unwrap_err();
    assert!(matches!(err, FetchError::Nack { reason, .. } if reason == NackReason::NO_ROUTE));
    let silent = FakeForwarder::builder().start();
    let mut o = opts(CcKind::Aimd);
    o.max_retries = 1;
    let err = fetch(
        pipeline(&silent),
        &name("/x"),
        &o,
        &mut Vec::new(),
        &mut |_| {},
    )
    .unwrap_err();
    assert!(
        matches!(err, FetchError::TooManyRetries { retries: 1, .. }),
        "{err}"
    );
}

/// Whether `i` asks for RDR metadata.
fn asks_metadata(i: &Interest) -> bool {
    i.name.last().is_some_and(|c| c.value() == b"metadata")
}

/// A fake that serves `content` as [`published`] does, except the Interests `special`
/// answers for (`Some`: what to send back instead, possibly nothing).
fn serving_except(
    content: &Bytes,
    special: impl Fn(&Interest) -> Option<Vec<Bytes>> + Send + Sync + 'static,
) -> FakeForwarder {
    let p = published(content);
    FakeForwarder::builder()
        .raw(move |i| special(i).unwrap_or_else(|| p.answer(i).cloned().into_iter().collect()))
        .start()
}

#[test]
fn rdr_finds_the_version_from_the_metadata() {
    let content = object(3000);
    let fake = serving(published(&content), 0, 0);
    let mut out = Vec::new();
    let o = FetchOptions {
        discovery: Discovery::Rdr,
        ..opts(CcKind::Aimd)
    };
    let stats = fetch(pipeline(&fake), &name("/obj"), &o, &mut out, &mut |_| {}).unwrap();
    assert!(out == content);
    assert_eq!(stats.discovered_by, Some(Discovery::Rdr));
    assert_eq!(stats.rdr_failure, None);
    assert_eq!(stats.versioned, Some(name("/obj/v=9")));
    let asked = fake.received();
    assert_eq!(asked[0].name, name("/obj/32=metadata"));
    assert!(asked[0].can_be_prefix && asked[0].must_be_fresh);
    assert!(
        asked[1..].iter().all(|i| !i.can_be_prefix),
        "only exact segment Interests after the metadata"
    );
}

#[test]
fn auto_falls_back_quickly_when_metadata_times_out_is_nacked_or_malformed() {
    let content = object(3000);
    let quiet = serving_except(&content, |i| asks_metadata(i).then(Vec::new));
    let nacking = serving_except(&content, |i| {
        asks_metadata(i).then(|| vec![Nack::encode_for(NackReason::NO_ROUTE, i.encode())])
    });
    let malformed = serving_except(&content, |i| {
        asks_metadata(i).then(|| {
            let n = i
                .name
                .clone()
                .append(kite_packet::OwnedComponent::version(1).as_ref());
            let n = n.append(kite_packet::OwnedComponent::segment(0).as_ref());
            vec![Data::new(n, &b"not a name"[..])
                .sign(&DigestSha256)
                .unwrap()]
        })
    });
    let o = FetchOptions {
        rdr_timeout: Duration::from_millis(150),
        ..opts(CcKind::Aimd)
    };
    for (fake, failure) in [
        (&quiet, RdrFailure::Timeout),
        (&nacking, RdrFailure::Nack(NackReason::NO_ROUTE)),
        (&malformed, RdrFailure::Malformed),
    ] {
        let started = Instant::now();
        let mut out = Vec::new();
        let stats = fetch(pipeline(fake), &name("/obj"), &o, &mut out, &mut |_| {}).unwrap();
        assert!(out == content, "{failure}");
        assert_eq!(stats.discovered_by, Some(Discovery::Iterative));
        assert_eq!(stats.rdr_failure, Some(failure));
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{failure}: quick"
        );
    }
    // RDR alone does not fall back.
    let o = FetchOptions {
        discovery: Discovery::Rdr,
        max_retries: 1,
        ..o
    };
    let err = fetch(
        pipeline(&nacking),
        &name("/obj"),
        &o,
        &mut Vec::new(),
        &mut |_| {},
    )
    .unwrap_err();
    assert!(
        matches!(
            err,
            FetchError::Rdr {
                failure: RdrFailure::Nack(_),
                ..
            }
        ),
        "{err}"
    );
    // The older way alone never asks for metadata.
    let o = FetchOptions {
        discovery: Discovery::Iterative,
        ..opts(CcKind::Aimd)
    };
    let before = quiet.received().len();
    fetch(
        pipeline(&quiet),
        &name("/obj"),
        &o,
        &mut Vec::new(),
        &mut |_| {},
    )
    .unwrap();
    assert!(!quiet.received()[before..].iter().any(asks_metadata));
}

/// Over a lossy path the RDR Interest may time out while its metadata Data is still on the
/// way: a cache then answers the fallback's CanBePrefix Interest for the prefix with that
/// metadata packet, which names the version just as well.
#[test]
fn auto_takes_late_metadata_that_answers_the_fallback() {
    let content = object(3000);
    let mut ask = Interest::new(name("/obj/32=metadata"));
    ask.can_be_prefix = true;
    ask.must_be_fresh = true;
    let metadata = (published(&content).answer(&ask))
        .expect("the producer's metadata")
        .clone();
    let fake = serving_except(&content, move |i| {
        if asks_metadata(i) {
            Some(vec![])
        } else {
            (i.can_be_prefix && i.name == name("/obj")).then(|| vec![metadata.clone()])
        }
    });
    let o = FetchOptions {
        rdr_timeout: Duration::from_millis(150),
        ..opts(CcKind::Aimd)
    };
    let mut out = Vec::new();
    let stats = fetch(pipeline(&fake), &name("/obj"), &o, &mut out, &mut |_| {}).unwrap();
    assert!(out == content);
    assert_eq!(stats.rdr_failure, Some(RdrFailure::Timeout));
    assert_eq!(stats.discovered_by, Some(Discovery::Rdr));
    assert_eq!(stats.versioned, Some(name("/obj/v=9")));
}

#[test]
fn producer_registers_and_echoes_the_pit_token() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fwd.sock");
    let listener = UnixListener::bind(&path).unwrap();
    // A forwarder that accepts rib/register, then sends one Interest with a PIT token and
    // hands back the first reply.
    let fwd = std::thread::spawn(move || {
        let (mut conn, _) = listener.accept().unwrap();
        let mut reader = conn.try_clone().unwrap();
        let mut frames = FrameReader::new();
        let frame = frames.next_frame(&mut reader).unwrap();
        let Ok((_, NetPacket::Interest(cmd))) = NetPacket::decode_frame(frame) else {
            panic!("expected the register command");
        };
        let parsed = parse_command(&cmd).unwrap();
        assert_eq!(parsed.verb.verb(), "register");
        assert_eq!(parsed.params.name, Some(name("/svc")));
        let ok = ControlResponse::new(200, "OK");
        conn.write_all(&response_data(&cmd.name, &ok)).unwrap();
        let lp = LpPacket {
            header: LpHeader {
                pit_token: Some(PitToken::from_u64(77)),
                ..LpHeader::default()
            },
            fragment: Some(Interest::new(name("/svc/q")).encode()),
        };
        conn.write_all(&lp.encode()).unwrap();
        let reply = frames.next_frame(&mut reader).unwrap();
        NetPacket::decode_frame(reply).unwrap()
    });
    let mut producer = Producer::new(Client::connect_unix_socket(&path).unwrap());
    producer.register(&name("/svc")).unwrap();
    assert_eq!(producer.prefixes(), [name("/svc")]);
    let stop = Arc::new(AtomicBool::new(false));
    producer
        .serve(&stop, Some(Instant::now() + Duration::from_secs(5)), |i| {
            stop.store(true, Ordering::Release);
            Some(
                Data::new(i.name.clone(), &b"answer"[..])
                    .sign(&DigestSha256)
                    .unwrap(),
            )
        })
        .unwrap();
    let (header, packet) = fwd.join().unwrap();
    assert_eq!(header.pit_token, Some(PitToken::from_u64(77)));
    assert!(matches!(packet, NetPacket::Data(d) if d.name == name("/svc/q")));
}

#[test]
fn a_path_gone_mid_fetch_fails_for_no_progress_with_the_rto_capped_at_the_lifetime() {
    let content = object(20_000);
    let p = published(&content);
    // Answers the first five segments, then nothing: the path is gone.
    let fake = FakeForwarder::builder()
        .raw(move |i| {
            let seg = i.name.last().and_then(|c| c.as_segment());
            if seg.is_some_and(|s| s >= 5) {
                return vec![];
            }
            p.answer(i).cloned().into_iter().collect()
        })
        .start();
    let o = FetchOptions {
        discovery: Discovery::Iterative,
        lifetime: Duration::from_millis(150),
        max_retries: 1000,
        no_progress: Some(Duration::from_millis(1200)),
        ..opts(CcKind::Aimd)
    };
    let mut stalls = Vec::new();
    let started = Instant::now();
    let mut out = Vec::new();
    let err = fetch(pipeline(&fake), &name("/obj"), &o, &mut out, &mut |s| {
        if let Some((n, _)) = &s.waiting_for {
            stalls.push(n.clone());
        }
    })
    .unwrap_err();
    let took = started.elapsed();
    let FetchError::NoProgress {
        name: n, waited, ..
    } = &err
    else {
        panic!("not a no-progress failure: {err}");
    };
    assert_eq!(*n, name("/obj/v=9/seg=5"), "the oldest segment unanswered");
    assert!(*waited >= Duration::from_millis(1200), "{err}");
    assert!(took < Duration::from_secs(5), "gave up after {took:?}");
    assert!(err.to_string().contains("no progress"), "{err}");
    assert!(stalls.contains(&name("/obj/v=9/seg=5")), "{stalls:?}");
    assert!(
        out[..] == content[..5_000],
        "what came in order is written when the fetch fails"
    );
    // With the RTO never above the 150 ms lifetime, segment 5 was asked again every
    // 150 ms or so: with 60 s backoff it would have been asked about three times.
    let asked5 = fake
        .received()
        .iter()
        .filter(|i| i.name == name("/obj/v=9/seg=5"))
        .count();
    assert!(asked5 >= 5, "segment 5 asked only {asked5} times");
}

#[test]
fn the_rto_cap_and_no_progress_limit_follow_the_lifetime() {
    let o = FetchOptions::default();
    assert_eq!(o.effective_max_rto(), Duration::from_secs(4));
    assert_eq!(o.no_progress_limit(), Duration::from_secs(12));
    let long = FetchOptions {
        lifetime: Duration::from_secs(60),
        ..FetchOptions::default()
    };
    assert_eq!(long.no_progress_limit(), Duration::from_secs(30));
    let set = FetchOptions {
        no_progress: Some(Duration::from_secs(2)),
        ..FetchOptions::default()
    };
    assert_eq!(set.no_progress_limit(), Duration::from_secs(2));
}
