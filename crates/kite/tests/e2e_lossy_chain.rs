//! Three `kite run` daemons in a line, A — B — C, each in a network namespace of its own and
//! joined by veth pairs (1500-octet MTU), with frame loss made by nftables on the ingress of
//! every interface that receives (`numgen random mod 100 < N drop`): `kite put` on C serves an
//! object and `kite get` on A fetches it through B, over UDP faces and over Ethernet faces,
//! at 0 %, 1 % and 5 % loss, and over Ethernet faces with NDNLPv2 LpReliability on at 5 %
//! (resent per hop), and the copy must be whole. A UDP face's MTU is its path's (1472
//! here, so no Data leaves as IP fragments); without loss, no Ethernet socket drops a frame
//! for a full receive buffer (`kite channel list`). B's faces and routes come from its
//! configuration file, so B killed and started again with that file carries the rest of a
//! fetch; B gone for good makes `kite get` fail with a non-zero exit, in bounded time, leaving
//! no output file.
//!
//! Needs root (`ip netns add`) and `nft` (Debian's nftables); without either the tests skip (each
//! says why through `kite_testkit::skip`, and `scripts/test.sh` counts them skipped, not passed).

mod common;

use std::time::{Duration, Instant};

use common::chain::{fetch_intact, one_chain, Chain, Link};
use common::signal;
use common::tools::sha256_of;

#[test]
fn udp_chain_without_loss() {
    fetch_intact("u0", Link::Udp, 0, 4 << 20, &[]);
}

#[test]
fn udp_chain_at_1_percent_loss() {
    fetch_intact("u1", Link::Udp, 1, 4 << 20, &[]);
}

#[test]
fn udp_chain_at_5_percent_loss() {
    fetch_intact("u5", Link::Udp, 5, 2 << 20, &[]);
}

#[test]
fn ether_chain_without_loss() {
    fetch_intact("e0", Link::Ether, 0, 4 << 20, &[]);
}

#[test]
fn ether_chain_at_1_percent_loss() {
    fetch_intact("e1", Link::Ether, 1, 4 << 20, &[]);
}

/// Segments that fit one Ethernet frame: each Data is lost whole or not at all, as over the
/// UDP chain. A Data of six fragments crosses two hops at 5 % whole only about half the time;
/// with neither side resending frames, `kite get`'s timer backs off to its cap and one segment
/// failing three times in a row ends the fetch (about one run in eight). That case is what
/// LpReliability is for (the next test); `bench/lossy.sh` measures it without.
#[test]
fn ether_chain_at_5_percent_loss() {
    fetch_intact("e5", Link::Ether, 5, 1 << 20, &["--chunk-size", "1200"]);
}

/// Ethernet loses single frames, so a Data of six fragments crosses two hops at 5 % loss whole
/// only about half the time; resent per hop by LpReliability, the fetch goes through.
#[test]
fn ether_chain_with_lp_reliability_at_5_percent_loss() {
    fetch_intact("r5", Link::EtherLpr, 5, 4 << 20, &[]);
}

/// B stopped while A fetches (as when its host takes its core): what A sent meanwhile waits in
/// B's socket, is read when B runs again and counted there as delayed (`kite channel list`),
/// and the fetch completes.
#[test]
fn frames_that_waited_in_a_paused_forwarders_socket_are_counted_as_delayed() {
    let _one = one_chain();
    let Some(chain) = Chain::new("dl", Link::Ether, 0) else {
        return;
    };
    let (_put, sum) = chain.put(1 << 20, &[]);
    assert_eq!(chain.delayed(1), 0, "nothing waited yet");
    let b = chain.daemons[1].pid();
    signal(b, "STOP");
    let get = chain.spawn_get(&[]);
    std::thread::sleep(Duration::from_millis(300));
    signal(b, "CONT");
    let out = get.wait_with_output().expect("kite get output");
    assert!(
        out.status.success(),
        "kite get failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(sha256_of(&chain.output()), sum, "the copy differs");
    assert!(chain.delayed(1) > 0, "B counted no delayed frame");
}

/// B killed while A fetches and started again from the same configuration file: the fetch
/// goes on once B is back and the copy is whole.
#[test]
fn middle_node_restarted_from_its_configuration() {
    let _one = one_chain();
    let Some(mut chain) = Chain::new("rs", Link::Udp, 1) else {
        return;
    };
    let (_put, sum) = chain.put(8 << 20, &[]);
    let started = Instant::now();
    let mut get = chain.spawn_get(&[]);
    std::thread::sleep(Duration::from_millis(150));
    chain.daemons[1]
        .stop("KILL", Duration::from_secs(5))
        .expect("B exits on SIGKILL");
    std::thread::sleep(Duration::from_secs(2));
    chain.daemons[1].restart();
    while get.try_wait().expect("poll kite get").is_none() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "kite get did not finish within 60 s of B's restart"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = get.wait_with_output().expect("kite get output");
    assert!(
        out.status.success(),
        "kite get failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(sha256_of(&chain.output()), sum, "the copy differs");
}

/// B gone for good: `kite get` says what it waits for, then fails with a non-zero exit within
/// its no-progress limit (3 × the 4 s Interest lifetime by default), and leaves no file.
#[test]
fn middle_node_gone_for_good_fails_in_bounded_time() {
    let _one = one_chain();
    let Some(mut chain) = Chain::new("gone", Link::Udp, 0) else {
        return;
    };
    let (_put, _) = chain.put(1 << 20, &[]);
    chain.daemons[1]
        .stop("KILL", Duration::from_secs(5))
        .expect("B exits on SIGKILL");
    let (out, took) = chain.get(&[], Duration::from_secs(40));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "kite get succeeded: {stderr}");
    assert!(
        took < Duration::from_secs(20),
        "kite get took {took:?} to give up: {stderr}"
    );
    assert!(
        stderr.contains("waiting for"),
        "kite get never said what it waits for: {stderr}"
    );
    assert!(
        stderr.contains("no progress"),
        "kite get's error does not say why it gave up: {stderr}"
    );
    assert!(
        !chain.output().exists(),
        "a failed kite get left {}",
        chain.output().display()
    );
}
