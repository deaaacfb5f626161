//! On-demand UDP faces are bounded against `kite run` over loopback: only a datagram that
//! decodes as an NDN packet makes a face (junk from new senders is counted on the channel),
//! and a listener keeps at most `on_demand_limit` on-demand faces, giving up the idlest for a
//! new sender. Each on-demand face has a socket of its own connected to its peer, and only
//! while the face lives. A TCP listener likewise keeps at most its `on_demand_limit`
//! connections, closing the idlest for a new one; a listener that ran out of descriptors
//! accepts what waited in its backlog once they are back.

mod common;

use std::io::{Read, Write};
use std::net::{SocketAddr, SocketAddrV4, TcpStream, UdpSocket};
use std::os::unix::net::UnixStream;
use std::time::Duration;

use common::peer::{self, interest};
use common::procnet::connected_peers;
use common::{eventually, free_tcp_port, free_udp_port, Daemon};
use kite_mgmt_proto::nfd::FacePersistency;

const WAIT: Duration = Duration::from_secs(10);

fn daemon(udp: u16, extra: &[&str]) -> Daemon {
    let mut args = vec![
        "--udp".to_string(),
        format!("127.0.0.1:{udp}"),
        "--tcp".to_string(),
        format!("127.0.0.1:{}", common::free_tcp_port()),
    ];
    args.extend(extra.iter().map(|a| a.to_string()));
    Daemon::start(&[], &args)
}

fn sender() -> UdpSocket {
    UdpSocket::bind("127.0.0.1:0").expect("bind a UDP socket")
}

fn addr(s: &UdpSocket) -> SocketAddrV4 {
    match s.local_addr().unwrap() {
        SocketAddr::V4(a) => a,
        SocketAddr::V6(a) => panic!("an IPv4 sender, not {a}"),
    }
}

fn uri(s: &UdpSocket) -> String {
    format!("udp4://{}", s.local_addr().unwrap())
}

/// Remote URIs of the daemon's on-demand faces whose URIs start with `scheme`, sorted.
fn on_demand(socket: &str, scheme: &str) -> Vec<String> {
    let mut uris: Vec<String> = peer::faces(socket)
        .into_iter()
        .filter(|f| f.uri.starts_with(scheme) && f.face_persistency == FacePersistency::ON_DEMAND)
        .map(|f| f.uri)
        .collect();
    uris.sort();
    uris
}

/// Remote URIs of the daemon's on-demand UDP faces, sorted.
fn on_demand_udp(socket: &str) -> Vec<String> {
    on_demand(socket, "udp4://")
}

#[test]
fn junk_from_new_senders_makes_no_face_and_is_counted_on_the_channel() {
    let udp = free_udp_port();
    let kite = daemon(udp, &[]);
    let to: SocketAddr = format!("127.0.0.1:{udp}").parse().unwrap();
    let local = format!("udp4://{to}");
    let malformed = || {
        peer::channels(kite.socket())
            .into_iter()
            .find(|c| c.local_uri == local)
            .expect("the UDP channel is listed")
            .counters
            .n_malformed
    };
    let junk: Vec<UdpSocket> = (0..40).map(|_| sender()).collect();
    let cut = {
        let mut i = interest("/junk", 4000).to_vec();
        i.truncate(i.len() - 3);
        i
    };
    for (n, s) in junk.iter().enumerate() {
        // One junk octet, or an Interest cut short: neither decodes.
        let octets: &[u8] = if n % 2 == 0 { &[0x42] } else { &cut };
        s.send_to(octets, to).unwrap();
    }
    eventually(WAIT, || (malformed() == 40).then_some(()))
        .unwrap_or_else(|| panic!("40 junk datagrams counted, got {}", malformed()));
    let faces = on_demand_udp(kite.socket());
    assert!(faces.is_empty(), "junk made faces: {faces:?}");
    assert_eq!(connected_peers(udp), vec![], "junk made sockets");

    // The same sender's next datagram, a well-formed Interest, makes its face, with a socket
    // of its own connected to the sender.
    junk[0].send_to(&interest("/ok", 4000), to).unwrap();
    let want = uri(&junk[0]);
    eventually(WAIT, || {
        on_demand_udp(kite.socket()).contains(&want).then_some(())
    })
    .expect("a face for the well-formed Interest's sender");
    assert_eq!(connected_peers(udp), vec![addr(&junk[0])]);
}

#[test]
fn a_full_listener_gives_up_its_idlest_on_demand_face_for_a_new_sender() {
    let udp = free_udp_port();
    let kite = daemon(udp, &["--udp-on-demand-limit", "4"]);
    let to: SocketAddr = format!("127.0.0.1:{udp}").parse().unwrap();
    // `busy` sends again after each new sender, so it is never the idlest.
    let busy = sender();
    let others: Vec<UdpSocket> = (0..10).map(|_| sender()).collect();
    busy.send_to(&interest("/busy/0", 4000), to).unwrap();
    for (n, s) in others.iter().enumerate() {
        std::thread::sleep(Duration::from_millis(20));
        s.send_to(&interest(&format!("/other/{n}"), 4000), to)
            .unwrap();
        std::thread::sleep(Duration::from_millis(20));
        busy.send_to(&interest(&format!("/busy/{}", n + 1), 4000), to)
            .unwrap();
    }
    let mut want: Vec<String> = [&busy, &others[7], &others[8], &others[9]]
        .into_iter()
        .map(uri)
        .collect();
    want.sort();
    let got = eventually(WAIT, || {
        let got = on_demand_udp(kite.socket());
        (got == want).then_some(got)
    });
    assert!(
        got.is_some(),
        "the busy sender and the three newest kept, got {:?}",
        on_demand_udp(kite.socket())
    );
    // The faces given up closed their sockets: one socket per face kept.
    let mut kept: Vec<SocketAddrV4> = [&busy, &others[7], &others[8], &others[9]]
        .into_iter()
        .map(addr)
        .collect();
    kept.sort();
    assert_eq!(connected_peers(udp), kept);
}

#[test]
fn new_senders_within_one_burst_stay_within_the_limit() {
    let udp = free_udp_port();
    let kite = daemon(udp, &["--udp-on-demand-limit", "2"]);
    let to: SocketAddr = format!("127.0.0.1:{udp}").parse().unwrap();
    // Sent back to back, so that one receive burst holds many new senders: each one beyond
    // the limit gives up a face made earlier in the same burst.
    let senders: Vec<UdpSocket> = (0..60).map(|_| sender()).collect();
    for (n, s) in senders.iter().enumerate() {
        s.send_to(&interest(&format!("/crowd/{n}"), 4000), to)
            .unwrap();
    }
    let last = uri(&senders[59]);
    eventually(WAIT, || {
        on_demand_udp(kite.socket()).contains(&last).then_some(())
    })
    .expect("the newest sender has a face");
    let faces = on_demand_udp(kite.socket());
    assert!(
        faces.len() <= 2,
        "{} on-demand faces: {faces:?}",
        faces.len()
    );
    let sockets = connected_peers(udp);
    assert!(
        sockets.len() <= 2,
        "{} face sockets: {sockets:?}",
        sockets.len()
    );
}

#[test]
fn a_full_tcp_listener_closes_the_connection_that_received_longest_ago() {
    let tcp = free_tcp_port();
    let args = [
        "--udp".to_string(),
        format!("127.0.0.1:{}", free_udp_port()),
        "--tcp".to_string(),
        format!("127.0.0.1:{tcp}"),
        "--tcp-on-demand-limit".to_string(),
        "3".to_string(),
    ];
    let kite = Daemon::start(&[], &args);
    let to: SocketAddr = format!("127.0.0.1:{tcp}").parse().unwrap();
    let uri = |s: &TcpStream| format!("tcp4://{}", s.local_addr().unwrap());
    // `busy` sends after each new connection, so it is never the idlest; the others stay
    // silent, so each new one beyond the limit closes the oldest of them.
    let mut busy = TcpStream::connect(to).unwrap();
    busy.write_all(&interest("/busy/0", 4000)).unwrap();
    let mut others = Vec::new();
    for n in 0..8 {
        std::thread::sleep(Duration::from_millis(20));
        others.push(TcpStream::connect(to).unwrap());
        std::thread::sleep(Duration::from_millis(20));
        busy.write_all(&interest(&format!("/busy/{}", n + 1), 4000))
            .unwrap();
    }
    let mut want = vec![uri(&busy), uri(&others[6]), uri(&others[7])];
    want.sort();
    let got = eventually(WAIT, || {
        let got = on_demand(kite.socket(), "tcp4://");
        (got == want).then_some(got)
    });
    assert!(
        got.is_some(),
        "the busy connection and the two newest kept, got {:?}",
        on_demand(kite.socket(), "tcp4://")
    );
    // Kite closed the connections it gave up: their peers read the end of the stream.
    for s in &mut others[..6] {
        s.set_read_timeout(Some(WAIT)).unwrap();
        assert!(
            matches!(s.read(&mut [0; 64]), Ok(0)),
            "{} still open",
            uri(s)
        );
    }
    let log = kite.log_text();
    assert!(
        log.contains("evicted for a new sender or connection"),
        "{log}"
    );
}

#[test]
fn a_connection_that_waited_while_descriptors_ran_out_is_accepted_once_they_are_back() {
    let launcher = ["prlimit", "--nofile=64", "--"].map(String::from);
    let kite = Daemon::start(&launcher, &["--local-only".to_string()]);
    // A leaky local app: connections until the daemon has no descriptor left for them; the
    // rest wait in the listener's backlog.
    let leaky: Vec<UnixStream> = (0..100)
        .map(|_| UnixStream::connect(kite.socket()).unwrap())
        .collect();
    eventually(WAIT, || {
        kite.log_text().contains("accept failed").then_some(())
    })
    .expect("the daemon ran out of descriptors");
    let mut waiting = UnixStream::connect(kite.socket()).unwrap();
    waiting
        .write_all(&interest("/no/route/here", 4000))
        .unwrap();
    // The app goes away. No new connection comes that would wake the listener: the daemon
    // must try it again by itself, then answer the waiting connection's Interest (a Nack).
    drop(leaky);
    waiting.set_read_timeout(Some(WAIT)).unwrap();
    let n = waiting
        .read(&mut [0; 256])
        .expect("an answer on the waiting connection");
    assert!(n > 0, "the daemon closed the waiting connection");
}

#[test]
fn the_daemon_raises_its_open_files_limit_to_the_maximum() {
    let launcher = ["prlimit", "--nofile=256:4096", "--"].map(String::from);
    let kite = Daemon::start(&launcher, &["--local-only".to_string()]);
    let limits = std::fs::read_to_string(format!("/proc/{}/limits", kite.pid())).unwrap();
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .unwrap();
    let fields: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(fields[3..5], ["4096", "4096"], "{line}");
    let log = kite.log_text();
    assert!(
        log.contains("open files limit raised to its maximum"),
        "{log}"
    );
}
