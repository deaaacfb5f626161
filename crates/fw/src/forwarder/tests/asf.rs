//! The asf strategy through the pipelines: it forwards to the face with the lowest measured
//! SRTT, probes the others, and leaves a face that times out or Nacks.

use kite_packet::{NackReason, PitToken};

use super::harness::*;
use crate::face::FaceId;
use crate::out::Out;

const ASF: &str = "/localhost/nfd/strategy/asf";

/// The faces (and tokens) the Interests in `out` went to, in order.
fn sent(out: &[Out]) -> Vec<(FaceId, PitToken)> {
    out.iter()
        .filter_map(|o| match o {
            Out::Interest { face, token, .. } => Some((*face, *token)),
            _ => None,
        })
        .collect()
}

/// Two upstreams under /p with asf: UP1 cheaper than UP2.
fn setup() -> Harness {
    let mut h = Harness::new();
    h.strategy("/p", ASF);
    h.route("/p", UP1, 10);
    h.route("/p", UP2, 20);
    h
}

/// Sends /p/<n>; the face answering (with its token) after `rtt_ms`, if any. Returns the
/// faces the Interest went to.
fn exchange(h: &mut Harness, n: u32, answer: Option<(FaceId, u64)>) -> Vec<FaceId> {
    let uri = format!("/p/{n}");
    let out = sent(&h.interest(APP, interest(&uri, n), None));
    if let Some((face, rtt_ms)) = answer {
        let token = out
            .iter()
            .find(|(f, _)| *f == face)
            .map(|(_, t)| *t)
            .expect("the Interest went to the answering face");
        h.advance(rtt_ms);
        h.data(face, data(&uri, 0), Some(token));
    }
    out.iter().map(|(f, _)| *f).collect()
}

#[test]
fn asf_is_a_builtin_under_nfds_name() {
    let h = Harness::new();
    let id = h.strategies.find(&name(ASF)).unwrap();
    let full = h.strategies.get(id).unwrap().name().to_uri();
    assert_eq!(full, "/localhost/nfd/strategy/asf/v=5");
}

#[test]
fn asf_probes_then_prefers_the_faster_face() {
    let mut h = setup();
    // Unmeasured: cost order. UP1 answers slowly.
    assert_eq!(exchange(&mut h, 1, Some((UP1, 50)))[0], UP1);
    // Measured (working) beats unmeasured: UP1 stays the choice until a probe measures UP2.
    assert_eq!(exchange(&mut h, 2, Some((UP1, 50)))[0], UP1);
    // The first probe is due within 5 s: one Interest then also goes to the unmeasured UP2.
    h.advance(5_001);
    let faces = exchange(&mut h, 3, Some((UP2, 2)));
    assert_eq!(faces, vec![UP1, UP2], "forwarded to UP1, probed UP2");
    // UP2 is measured faster: it is chosen from now on, and no probe until the interval.
    for n in 4..20 {
        assert_eq!(exchange(&mut h, n, Some((UP2, 2))), vec![UP2]);
    }
    // 60 s later the next probe goes to the other face.
    h.advance(60_000);
    assert_eq!(exchange(&mut h, 20, Some((UP2, 2))), vec![UP2, UP1]);
}

#[test]
fn asf_leaves_a_face_after_three_timeouts() {
    let mut h = setup();
    assert_eq!(exchange(&mut h, 1, Some((UP1, 50)))[0], UP1);
    h.advance(5_001);
    assert_eq!(exchange(&mut h, 2, Some((UP2, 2))), vec![UP1, UP2]);
    assert_eq!(exchange(&mut h, 3, Some((UP2, 2))), vec![UP2]);
    // UP2 stops answering: each Interest times out after its RTO (200 ms at least).
    for n in 4..6 {
        assert_eq!(exchange(&mut h, n, None), vec![UP2]);
        h.advance(300);
        assert_eq!(exchange(&mut h, n + 100, Some((UP2, 2))), vec![UP2]);
    }
    // A Data in between resets the count: three timeouts in a row are needed.
    for n in 6..9 {
        assert_eq!(exchange(&mut h, n, None), vec![UP2], "timeout {n}");
        h.advance(300);
    }
    assert_eq!(
        exchange(&mut h, 9, Some((UP1, 50))),
        vec![UP1],
        "timed out: the working UP1 is next"
    );
}

#[test]
fn asf_leaves_a_face_that_nacks() {
    let mut h = setup();
    let out = sent(&h.interest(APP, interest("/p/1", 1), None));
    assert_eq!(out[0].0, UP1);
    h.nack(
        UP1,
        interest("/p/1", 1),
        NackReason::CONGESTION,
        Some(out[0].1),
    );
    assert_eq!(exchange(&mut h, 2, Some((UP2, 5)))[0], UP2);
}

#[test]
fn asf_nacks_without_a_route() {
    let mut h = Harness::new();
    h.strategy("/p", ASF);
    let out = h.interest(APP, interest("/p/1", 1), None);
    assert_eq!(nack_reason(&out), Some(NackReason::NO_ROUTE));
}
