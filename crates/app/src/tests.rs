//! The client against the in-process fake forwarder.

use std::io::Write;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bytes::Bytes;
use kite_mgmt_proto::command::CommandSignature;
use kite_mgmt_proto::nfd::RouteOrigin;
use kite_mgmt_proto::{parse_command, ControlParameters, ControlResponse};
use kite_packet::{Data, DigestSha256, Interest, Nack, NackReason, Name, NetPacket};

use crate::fake::FakeForwarder;
use crate::framing::FrameReader;
use crate::{Client, ClientError, Producer};

const T: Duration = Duration::from_secs(5);

fn name(s: &str) -> Name {
    s.parse().unwrap()
}

fn client(fake: &FakeForwarder) -> Client {
    Client::connect_unix(fake.socket_path()).unwrap()
}

/// A signed Data for `i`'s name.
fn signed_data(i: &Interest) -> Bytes {
    Data::new(i.name.clone(), &b"x"[..])
        .sign(&DigestSha256)
        .unwrap()
}

/// A forwarder written out by a test: `serve` runs on its own thread with the one connection
/// made to the socket at the returned path.
fn scripted_forwarder<T: Send + 'static>(
    serve: impl FnOnce(UnixStream) -> T + Send + 'static,
) -> (tempfile::TempDir, PathBuf, JoinHandle<T>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fwd.sock");
    let listener = UnixListener::bind(&path).unwrap();
    let thread = std::thread::spawn(move || serve(listener.accept().unwrap().0));
    (dir, path, thread)
}

#[test]
fn express_returns_the_data_and_unwraps_pit_tokens() {
    let fake = FakeForwarder::builder()
        .with_pit_tokens()
        .raw(|i| {
            if i.name == "/hello".parse().unwrap() {
                // An unrelated Data first: the client must skip it.
                let other = Data::new("/other".parse().unwrap(), &b"no"[..]);
                let d = Data::new(i.name.clone().append_generic(b"v1"), &b"world"[..]);
                vec![
                    other.sign(&DigestSha256).unwrap(),
                    d.sign(&DigestSha256).unwrap(),
                ]
            } else {
                vec![]
            }
        })
        .start();
    let mut c = client(&fake);
    let mut i = Interest::new(name("/hello"));
    i.can_be_prefix = true;
    let d = c.express(&i, T).unwrap();
    assert_eq!(d.name, name("/hello/v1"));
    assert_eq!(d.content.as_deref(), Some(&b"world"[..]));
    let got = fake.received();
    assert_eq!(got.len(), 1);
    assert!(got[0].nonce.is_some(), "the client adds a Nonce");
}

#[test]
fn nack_is_surfaced_with_its_reason() {
    let fake = FakeForwarder::builder()
        .raw(|i| vec![Nack::encode_for(NackReason::NO_ROUTE, i.encode())])
        .start();
    let err = client(&fake)
        .express(&Interest::new(name("/nowhere")), T)
        .unwrap_err();
    match err {
        ClientError::Nack { reason, name: n } => {
            assert_eq!(reason, NackReason::NO_ROUTE);
            assert_eq!(n, name("/nowhere"));
        }
        other => panic!("expected a Nack, got {other:?}"),
    }
}

#[test]
fn silence_is_a_timeout_and_the_connection_stays_usable() {
    let fake = FakeForwarder::builder()
        .dataset("/localhost/nfd/cs/info", Bytes::from_static(b"\x80\x00"))
        .start();
    let mut c = client(&fake);
    let err = c
        .express(&Interest::new(name("/silent")), Duration::from_millis(100))
        .unwrap_err();
    assert!(
        matches!(&err, ClientError::Timeout { name: n, .. } if *n == name("/silent")),
        "{err:?}"
    );
    let payload = c.dataset(&name("/localhost/nfd/cs/info"), T).unwrap();
    assert_eq!(&payload[..], b"\x80\x00");
}

#[test]
fn a_dataset_interest_that_times_out_is_sent_again() {
    // Management answers only the second Interest for the dataset, as when generating it
    // outlasts the first Interest's lifetime; then it answers only a segment's third.
    let asked = Arc::new(AtomicUsize::new(0));
    let count = asked.clone();
    let payload: Vec<u8> = (0..12_000u32).map(|i| i as u8).collect();
    let segments =
        kite_mgmt_proto::dataset::segments(&name("/localhost/nfd/faces/list"), 7, &payload);
    let fake = FakeForwarder::builder()
        .raw(move |_| match count.fetch_add(1, Ordering::Relaxed) {
            1 => vec![segments[0].clone()],
            4 => vec![segments[1].clone()],
            _ => Vec::new(),
        })
        .start();
    let t = Duration::from_millis(300);
    let got = client(&fake)
        .dataset(&name("/localhost/nfd/faces/list"), t)
        .unwrap();
    assert_eq!(&got[..], &payload[..]);
    assert_eq!(asked.load(Ordering::Relaxed), 5);
    let nonces: std::collections::HashSet<_> = fake.received().iter().map(|i| i.nonce).collect();
    assert_eq!(nonces.len(), 5, "each try has its own Nonce");

    // Silence throughout: the error says how long the fetch waited in all.
    let silent = FakeForwarder::builder().start();
    let err = client(&silent)
        .dataset(&name("/localhost/nfd/faces/list"), t)
        .unwrap_err();
    assert!(
        matches!(err, ClientError::Timeout { after, .. } if after == 3 * t),
        "{err:?}"
    );
    assert_eq!(silent.received().len(), 3);
}

#[test]
fn three_segment_dataset_is_reassembled_in_order() {
    let payload: Vec<u8> = (0..20_000u32).map(|i| (i % 251) as u8).collect();
    let fake = FakeForwarder::builder()
        .dataset("/localhost/nfd/faces/list", payload.clone())
        .start();
    let got = client(&fake)
        .dataset(&name("/localhost/nfd/faces/list"), T)
        .unwrap();
    assert_eq!(got.len(), payload.len());
    assert_eq!(&got[..], &payload[..]);
    let asked: Vec<String> = fake.received().iter().map(|i| i.name.to_uri()).collect();
    assert_eq!(asked.len(), 3, "{asked:?}");
    assert_eq!(asked[0], "/localhost/nfd/faces/list");
    assert!(
        asked[1].ends_with("/seg=1") && asked[2].ends_with("/seg=2"),
        "{asked:?}"
    );
    let first = &fake.received()[0];
    assert!(first.can_be_prefix && first.must_be_fresh);
}

#[test]
fn dataset_refusal_is_a_status_error() {
    let fake = FakeForwarder::builder()
        .dataset_error(
            "/localhost/nfd/faces/query",
            ControlResponse::new(400, "Malformed filter"),
        )
        .start();
    let err = client(&fake)
        .dataset(&name("/localhost/nfd/faces/query"), T)
        .unwrap_err();
    assert!(
        matches!(&err, ClientError::Status { code: 400, text } if text == "Malformed filter"),
        "{err:?}"
    );
}

#[test]
fn command_is_a_signed_v03_interest_and_its_response_decodes() {
    let fake = FakeForwarder::builder()
        .command("rib", "register", |p| {
            let mut echo = p.clone();
            echo.face_id = Some(echo.face_id.unwrap_or(0) + 1);
            ControlResponse::success(&echo)
        })
        .command("faces", "destroy", |_| ControlResponse::new(404, "no face"))
        .start();
    let mut c = client(&fake);
    let params = ControlParameters {
        name: Some(name("/demo")),
        face_id: Some(270),
        origin: Some(RouteOrigin::STATIC),
        cost: Some(10),
        ..Default::default()
    };
    let resp = c.command("rib", "register", &params, T).unwrap();
    assert_eq!(
        (resp.status_code, resp.status_text.as_str()),
        (200, "Success")
    );
    let body = resp.parameters().unwrap().unwrap();
    assert_eq!(body.face_id, Some(271));
    assert_eq!(body.name, params.name);

    c.command("rib", "register", &params, T).unwrap();
    let sent = fake.received();
    let times: Vec<u64> = sent
        .iter()
        .map(|i| {
            assert!(i.must_be_fresh);
            assert_eq!(i.lifetime, Some(4000));
            let cmd = parse_command(i).unwrap();
            assert_eq!(cmd.params, params);
            match cmd.signature {
                CommandSignature::V03 { info, value } => {
                    assert_eq!(info.nonce.as_ref().map(Bytes::len), Some(8));
                    assert_eq!(value.len(), 32);
                    info.time.unwrap()
                }
                other => panic!("expected a v0.3 signature, got {other:?}"),
            }
        })
        .collect();
    assert!(
        times[1] > times[0],
        "SignatureTime must increase: {times:?}"
    );

    let err = c
        .command_ok("faces", "destroy", &ControlParameters::default(), T)
        .unwrap_err();
    assert!(
        matches!(&err, ClientError::Status { code: 404, text } if text == "no face"),
        "{err:?}"
    );
}

/// The SignatureTime of a signed command Interest.
fn signature_time(i: &Interest) -> u64 {
    match parse_command(i).unwrap().signature {
        CommandSignature::V03 { info, .. } => info.time.unwrap(),
        other => panic!("expected a v0.3 signature, got {other:?}"),
    }
}

#[test]
fn a_403_is_retried_once_with_a_newer_timestamp() {
    let refusals = Arc::new(AtomicUsize::new(1));
    let left = refusals.clone();
    let fake = FakeForwarder::builder()
        .command("rib", "register", move |p| {
            // Refuses the first command, as a forwarder refuses a reused timestamp.
            let refuse = left
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1))
                .is_ok();
            if refuse {
                ControlResponse::new(403, "authorization rejected")
            } else {
                ControlResponse::success(p)
            }
        })
        .start();
    let mut c = client(&fake);
    let params = ControlParameters {
        name: Some(name("/retry")),
        ..Default::default()
    };
    c.command_ok("rib", "register", &params, T).unwrap();
    let sent = fake.received();
    assert_eq!(sent.len(), 2, "one retry");
    assert!(signature_time(&sent[1]) > signature_time(&sent[0]));
    assert_ne!(sent[0].nonce, sent[1].nonce);

    // A forwarder that keeps refusing gets the command twice, no more, and its 403 back.
    refusals.store(2, Ordering::Release);
    let err = c.command_ok("rib", "register", &params, T).unwrap_err();
    assert!(
        matches!(err, ClientError::Status { code: 403, .. }),
        "{err:?}"
    );
    assert_eq!(fake.received().len(), 4);
}

#[test]
fn a_missing_socket_says_the_forwarder_may_not_be_running() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("absent.sock");
    let err = Client::connect_unix(&path).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, ClientError::NotRunning { .. }));
    assert!(text.contains(&path.display().to_string()), "{text}");
    assert!(text.contains("may not be running"), "{text}");
}

#[test]
fn the_socket_is_handed_over_after_a_command_with_nothing_lost() {
    let fake = FakeForwarder::builder()
        .command("rib", "register", ControlResponse::success)
        .raw(|i| {
            let d = Data::new(i.name.clone(), &b"after"[..]);
            vec![d.sign(&DigestSha256).unwrap()]
        })
        .start();
    let mut c = client(&fake);
    let params = ControlParameters {
        name: Some(name("/app")),
        ..Default::default()
    };
    c.command_ok("rib", "register", &params, T).unwrap();
    let mut stream = c
        .into_unix_stream()
        .expect("a unix client with nothing buffered");
    // The same connection now carries the application's own packets.
    use std::io::Read;
    stream
        .write_all(&Interest::new(name("/app/x")).encode())
        .unwrap();
    stream.set_read_timeout(Some(T)).unwrap();
    let mut buf = vec![0; 4096];
    let n = stream.read(&mut buf).unwrap();
    let d = Data::decode(Bytes::copy_from_slice(&buf[..n])).unwrap();
    assert_eq!(d.content.as_deref(), Some(&b"after"[..]));
}

#[test]
fn a_producer_answers_every_interest_of_one_read_with_its_own_token() {
    use kite_packet::{LpHeader, LpPacket, PitToken};

    let (_dir, path, fwd) = scripted_forwarder(|mut conn| {
        let with_token = |n: &str, t: u64| {
            LpPacket {
                header: LpHeader {
                    pit_token: Some(PitToken::from_u64(t)),
                    ..LpHeader::default()
                },
                fragment: Some(Interest::new(name(n)).encode()),
            }
            .encode()
        };
        // Five packets in one write: answered, bare, silent, undecodable, answered.
        let mut burst = Vec::new();
        burst.extend_from_slice(&with_token("/p/1", 1));
        burst.extend_from_slice(&Interest::new(name("/p/2")).encode());
        burst.extend_from_slice(&with_token("/p/silent", 9));
        burst.extend_from_slice(&[0x05, 0x02, 0xFF, 0xFF]);
        burst.extend_from_slice(&with_token("/p/3", 3));
        conn.write_all(&burst).unwrap();
        let mut frames = FrameReader::new();
        (0..3)
            .map(|_| {
                let frame = frames.next_frame(&mut conn).unwrap();
                match NetPacket::decode_frame(frame).unwrap() {
                    (h, NetPacket::Data(d)) => (d.name.to_string(), h.pit_token),
                    other => panic!("expected Data, got {other:?}"),
                }
            })
            .collect::<Vec<_>>()
    });
    let mut producer = Producer::new(Client::connect_unix_socket(&path).unwrap());
    let stop = AtomicBool::new(false);
    let answered = AtomicUsize::new(0);
    producer
        .serve(&stop, Some(Instant::now() + T), |i| {
            if i.name.to_string().contains("silent") {
                return None;
            }
            if answered.fetch_add(1, Ordering::Relaxed) == 2 {
                // The last of the burst: stop once its answers are written.
                stop.store(true, Ordering::Release);
            }
            Some(signed_data(i))
        })
        .unwrap();
    assert_eq!(answered.load(Ordering::Relaxed), 3);
    assert_eq!(
        fwd.join().unwrap(),
        [
            ("/p/1".to_owned(), Some(PitToken::from_u64(1))),
            ("/p/2".to_owned(), None),
            ("/p/3".to_owned(), Some(PitToken::from_u64(3))),
        ]
    );
}

#[test]
fn an_interest_that_overtakes_the_answer_to_rib_register_is_served() {
    use kite_mgmt_proto::Tlv;

    // A forwarder that installs the route, forwards a consumer's Interest over it, and only
    // then answers the command: the order a real one may deliver them in.
    let (_dir, path, fwd) = scripted_forwarder(|mut conn| {
        let mut frames = FrameReader::new();
        let command = match NetPacket::decode_frame(frames.next_frame(&mut conn).unwrap()) {
            Ok((_, NetPacket::Interest(i))) => i,
            other => panic!("a command Interest expected, got {other:?}"),
        };
        let mut burst = Interest::new(name("/app/early")).encode().to_vec();
        let params = ControlParameters {
            name: Some(name("/app")),
            face_id: Some(300),
            ..Default::default()
        };
        let answer = ControlResponse::success(&params).encode();
        let reply = Data::new(command.name, answer).sign(&DigestSha256).unwrap();
        burst.extend_from_slice(&reply);
        conn.write_all(&burst).unwrap();
        match NetPacket::decode_frame(frames.next_frame(&mut conn).unwrap()) {
            Ok((_, NetPacket::Data(d))) => d.name.to_string(),
            other => panic!("Data expected, got {other:?}"),
        }
    });
    let mut producer = Producer::new(Client::connect_unix_socket(&path).unwrap());
    producer.register(&name("/app")).unwrap();
    let stop = AtomicBool::new(false);
    producer
        .serve(&stop, Some(Instant::now() + T), |i| {
            stop.store(true, Ordering::Release);
            Some(signed_data(i))
        })
        .unwrap();
    assert!(stop.load(Ordering::Acquire), "the Interest was lost");
    assert_eq!(fwd.join().unwrap(), "/app/early");
}

#[test]
fn a_link_handed_over_after_a_command_gives_what_was_received_first() {
    use kite_mgmt_proto::Tlv;
    use std::io::Read;

    let early = Interest::new(name("/app/early")).encode();
    let late = Interest::new(name("/app/late")).encode();
    let (early_len, late_wire) = (early.len(), late.clone());
    // One write: an Interest that overtakes the command's answer, the answer, and the first
    // octets of another Interest, whose rest comes once the client has answered the first.
    let (_dir, path, fwd) = scripted_forwarder(move |mut conn| {
        let mut frames = FrameReader::new();
        let command = match NetPacket::decode_frame(frames.next_frame(&mut conn).unwrap()) {
            Ok((_, NetPacket::Interest(i))) => i,
            other => panic!("a command Interest expected, got {other:?}"),
        };
        let params = ControlParameters {
            name: Some(name("/app")),
            ..Default::default()
        };
        let answer = ControlResponse::success(&params).encode();
        let reply = Data::new(command.name, answer).sign(&DigestSha256).unwrap();
        let mut burst = early.to_vec();
        burst.extend_from_slice(&reply);
        burst.extend_from_slice(&late[..5]);
        conn.write_all(&burst).unwrap();
        let answered = match NetPacket::decode_frame(frames.next_frame(&mut conn).unwrap()) {
            Ok((_, NetPacket::Data(d))) => d.name.to_string(),
            other => panic!("Data expected, got {other:?}"),
        };
        conn.write_all(&late[5..]).unwrap();
        answered
    });
    let mut c = Client::connect_unix_socket(&path).unwrap();
    let params = ControlParameters {
        name: Some(name("/app")),
        ..Default::default()
    };
    c.command_ok("rib", "register", &params, T).unwrap();
    let (mut reader, mut writer) = c.into_link().expect("a unix link");
    reader.set_read_timeout(Some(T)).unwrap();
    // Plain reads give the held Interest first...
    let mut first = vec![0; early_len];
    reader.read_exact(&mut first).unwrap();
    let first = Interest::decode(Bytes::from(first)).unwrap();
    assert_eq!(first.name, name("/app/early"));
    writer.write_all(&signed_data(&first)).unwrap();
    // ...and frames then join the buffered start of the next one to the rest of it.
    let mut frames = FrameReader::new();
    let frame = frames.next_frame(&mut reader).unwrap();
    assert_eq!(frame, late_wire);
    assert_eq!(fwd.join().unwrap(), "/app/early");
}

#[test]
fn over_udp_a_queued_packet_goes_at_once_as_its_own_datagram() {
    use crate::Endpoint;
    use kite_packet::{LpHeader, LpPacket, PitToken};

    let peer = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    peer.set_read_timeout(Some(T)).unwrap();
    let mut c = Client::connect(&Endpoint::Udp(peer.local_addr().unwrap().to_string())).unwrap();
    let data = Data::new(name("/u/1"), &b"x"[..])
        .sign(&DigestSha256)
        .unwrap();
    let token = LpHeader {
        pit_token: Some(PitToken::from_u64(5)),
        ..LpHeader::default()
    };
    assert_eq!(
        c.queue_packet(&LpHeader::default(), data.clone()).unwrap(),
        0
    );
    assert_eq!(
        c.queue_packet(&token, data.clone()).unwrap(),
        0,
        "nothing held back"
    );
    let mut buf = [0u8; 2048];
    let n = peer.recv(&mut buf).unwrap();
    assert_eq!(&buf[..n], &data[..], "bare, without flush_queued");
    let n = peer.recv(&mut buf).unwrap();
    let lp = LpPacket::decode(Bytes::copy_from_slice(&buf[..n])).unwrap();
    assert_eq!(lp.header.pit_token, Some(PitToken::from_u64(5)));
    assert_eq!(lp.fragment.as_deref(), Some(&data[..]));
}

#[test]
fn queued_packets_reach_a_stream_whole_and_in_order_past_a_full_socket() {
    use kite_packet::{LpHeader, PitToken};
    use std::io::Read;

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fwd.sock");
    let listener = UnixListener::bind(&path).unwrap();
    let mut c = Client::connect_unix_socket(&path).unwrap();
    let (mut conn, _) = listener.accept().unwrap();
    // 200 packets of 3000 octets: several writev batches, more than the socket buffers hold.
    let mut expected = Vec::new();
    let mut queued = 0;
    for i in 0..200u64 {
        let data = Data::new(name(&format!("/q/{i}")), vec![i as u8; 3000])
            .sign(&DigestSha256)
            .unwrap();
        let header = LpHeader {
            pit_token: (i % 3 != 0).then(|| PitToken::from_u64(i)),
            ..LpHeader::default()
        };
        header.put_framed(&data, &mut expected);
        queued = c.queue_packet(&header, data).unwrap();
    }
    assert_eq!(queued, expected.len(), "octets queued, headers included");
    let reader = std::thread::spawn(move || {
        let mut got = Vec::new();
        conn.read_to_end(&mut got).unwrap();
        got
    });
    c.flush_queued().unwrap();
    drop(c);
    assert!(
        reader.join().unwrap() == expected,
        "the stream carries every frame as queued"
    );
}
