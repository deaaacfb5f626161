//! Deterministic pipeline tests: virtual faces, a virtual clock, real encoded packets.

mod asf;
mod harness;

use core::time::Duration;

use kite_packet::{NackReason, Nonce};

use self::harness::*;
use super::*;
use crate::face::{FaceScope, LinkType};
use crate::pcct::PcctConfig;

#[test]
fn forwards_then_satisfies_with_tokens_both_ways() {
    let mut h = Harness::new();
    h.route("/a", UP1, 10);
    let out = h.interest(APP, interest("/a/1", 1), Some(tok(0xC0)));
    let (face, token) = sent_interest(&out);
    assert_eq!(face, UP1);
    let out = h.data(UP1, data("/a/1", 1000), Some(token));
    assert_eq!(out.len(), 1);
    let (face, down_token) = sent_data(&out[0]);
    assert_eq!((face, down_token), (APP, Some(tok(0xC0))));
    assert_eq!(h.fwd.pcct().pit_len(), 0);
    let c = h.fwd.counters();
    assert_eq!(
        (
            c.in_interests,
            c.out_interests,
            c.in_data,
            c.out_data,
            c.satisfied
        ),
        (1, 1, 1, 1, 1)
    );
    assert_eq!(h.fwd.timers_pending(), 0, "the expiry timer was cancelled");
}

#[test]
fn a_burst_finds_each_interests_longest_prefix() {
    // Routes at several depths, some below the 2-stage start depth M = 8 (reached only through
    // virtual markers), thousands of them so the index spreads over many buckets; one burst
    // carries Interests for all of them, so the prefetch passes run over every kind of lookup.
    let mut h = Harness::new();
    let mut want = Vec::new();
    let mut interests = Vec::new();
    for i in 0..64u32 {
        let (prefix, face) = match i % 4 {
            0 => (format!("/r{i}"), UP1),
            1 => (format!("/r{i}/b"), UP2),
            2 => (format!("/r{i}/b/c/d/e/f/g/h/i/j"), UP1),
            _ => (format!("/none{i}"), UP2),
        };
        h.route(&prefix, face, 1);
        if i % 4 == 3 {
            continue;
        }
        interests.push(interest(&format!("{prefix}/x/y"), i));
        want.push(face);
    }
    for i in 0..3000 {
        h.route(&format!("/filler/{i}"), UP2, 1);
    }
    let out = h.interest_burst(APP, interests);
    let got: Vec<FaceId> = out
        .iter()
        .map(|o| match o {
            Out::Interest { face, .. } => *face,
            other => panic!("not an Interest: {other:?}"),
        })
        .collect();
    assert_eq!(got, want);
}

#[test]
fn interests_aggregate_across_consumers() {
    let mut h = Harness::new();
    h.route("/a", UP1, 10);
    let out1 = h.interest(APP, interest("/a/1", 1), Some(tok(1)));
    let out2 = h.interest(APP2, interest("/a/1", 2), Some(tok(2)));
    assert_eq!(out1.len(), 1);
    assert!(out2.is_empty(), "aggregated: not forwarded again");
    let (_, token) = sent_interest(&out1);
    let out = h.data(UP1, data("/a/1", 0), Some(token));
    let mut got: Vec<_> = out.iter().map(sent_data).collect();
    got.sort_by_key(|(f, _)| *f);
    assert_eq!(got, vec![(APP, Some(tok(1))), (APP2, Some(tok(2)))]);
}

#[test]
fn must_be_fresh_is_not_aggregated_with_stale_ok_interests() {
    let mut h = Harness::new();
    h.route("/a", UP1, 10);
    let out1 = h.interest(APP, interest("/a/1", 1), None);
    let mut fresh = interest("/a/1", 2);
    fresh.must_be_fresh = true;
    let out2 = h.interest(APP2, fresh, None);
    assert_eq!(
        (out1.len(), out2.len()),
        (1, 1),
        "two PIT entries, two upstream Interests"
    );
    assert_eq!(h.fwd.pcct().pit_len(), 2);
    let (_, token) = sent_interest(&out2);
    let out = h.data(UP1, data("/a/1", 100), Some(token));
    assert_eq!(out.len(), 2, "the Data satisfies both");
    assert_eq!(h.fwd.pcct().pit_len(), 0);
}

#[test]
fn a_data_fetched_by_a_can_be_prefix_interest_is_cached_under_its_own_name() {
    let mut h = Harness::new();
    h.route("/a", UP1, 10);
    let mut i = interest("/a", 1);
    i.can_be_prefix = true;
    let out = h.interest(APP, i.clone(), None);
    let (_, token) = sent_interest(&out);
    assert_eq!(h.data(UP1, data("/a/b/c", 10_000), Some(token)).len(), 1);
    assert_eq!(h.fwd.pcct().cs_len(), 1, "one Data, under /a/b/c");
    i.nonce = Some(Nonce::from(2));
    let out = h.interest(APP2, i, None);
    assert!(
        matches!(
            out[..],
            [Out::Data {
                face: APP2,
                from_cs: true,
                ..
            }]
        ),
        "{out:?}"
    );
    let out = h.interest(APP2, interest("/a/b/c", 3), None);
    assert!(matches!(out[..], [Out::Data { from_cs: true, .. }]));
    // an exact Interest for /a is not answered by /a/b/c
    let out = h.interest(APP2, interest("/a", 4), None);
    assert!(matches!(out[..], [Out::Interest { face: UP1, .. }]));
    assert_eq!(h.fwd.counters().cs_hits, 2);
}

#[test]
fn a_can_be_prefix_interest_is_answered_by_data_an_exact_interest_cached() {
    // As NFD's CS: any cached Data under its name answers a CanBePrefix Interest, whichever
    // Interest fetched it.
    let mut h = Harness::new();
    h.route("/p", UP1, 10);
    let (_, token) = sent_interest(&h.interest(APP, interest("/p/a/b", 1), None));
    h.data(UP1, data("/p/a/b", 100), Some(token));
    let mut prefix = interest("/p/a", 2);
    prefix.can_be_prefix = true;
    let out = h.interest(APP2, prefix.clone(), None);
    assert!(
        matches!(
            out[..],
            [Out::Data {
                face: APP2,
                from_cs: true,
                ..
            }]
        ),
        "{out:?}"
    );
    // Once it is stale, a MustBeFresh one goes to the producer.
    h.advance(200);
    prefix.nonce = Some(Nonce::from(3));
    prefix.must_be_fresh = true;
    let out = h.interest(APP2, prefix, None);
    assert!(
        matches!(out[..], [Out::Interest { face: UP1, .. }]),
        "{out:?}"
    );
}

#[test]
fn the_cs_keeps_its_ordered_index_only_while_prefix_lookups_use_it() {
    let mut h = Harness::new();
    h.route("/p", UP1, 10);
    let (_, token) = sent_interest(&h.interest(APP, interest("/p/a/b", 1), None));
    h.data(UP1, data("/p/a/b", 1_000_000), Some(token));
    assert!(!h.fwd.pcct().has_order());
    let mut prefix = interest("/p/a", 2);
    prefix.can_be_prefix = true;
    assert!(matches!(
        h.interest(APP2, prefix.clone(), None)[..],
        [Out::Data { from_cs: true, .. }]
    ));
    assert!(h.fwd.pcct().has_order());
    h.advance(61_000);
    assert!(
        !h.fwd.pcct().has_order(),
        "a minute without a prefix lookup"
    );
    prefix.nonce = Some(Nonce::from(3));
    assert!(matches!(
        h.interest(APP2, prefix, None)[..],
        [Out::Data { from_cs: true, .. }]
    ));
}

#[test]
fn must_be_fresh_honours_freshness_period() {
    let mut h = Harness::new();
    h.route("/a", UP1, 10);
    let (_, token) = sent_interest(&h.interest(APP, interest("/a/1", 1), None));
    h.data(UP1, data("/a/1", 50), Some(token));
    let mut fresh = interest("/a/1", 2);
    fresh.must_be_fresh = true;
    assert!(matches!(
        h.interest(APP, fresh.clone(), None)[..],
        [Out::Data { from_cs: true, .. }]
    ));
    h.advance(60);
    fresh.nonce = Some(Nonce::from(3));
    assert!(matches!(
        h.interest(APP, fresh, None)[..],
        [Out::Interest { .. }]
    ));
    // stale Data still answers an Interest without MustBeFresh
    assert!(matches!(
        h.interest(APP2, interest("/a/1", 4), None)[..],
        [Out::Data { from_cs: true, .. }]
    ));
}

#[test]
fn forwarding_hint_partitions_the_cache() {
    let mut h = Harness::new();
    h.route("/isp", UP1, 10);
    h.route("/n", UP2, 10);
    let mut hinted = interest("/n/1", 1);
    hinted.forwarding_hint = vec![name("/isp")];
    let out = h.interest(APP, hinted.clone(), None);
    let (face, token) = sent_interest(&out);
    assert_eq!(face, UP1, "routed by the hint");
    h.data(UP1, data("/n/1", 10_000), Some(token));
    // same name without a hint: not answered by Data fetched under the hint
    let out = h.interest(APP, interest("/n/1", 2), None);
    assert!(
        matches!(out[..], [Out::Interest { face: UP2, .. }]),
        "{out:?}"
    );
    // under another hint: not answered either
    h.route("/other", UP2, 10);
    let mut other = interest("/n/1", 3);
    other.forwarding_hint = vec![name("/other")];
    assert!(matches!(
        h.interest(APP, other, None)[..],
        [Out::Interest { .. }]
    ));
    // under the same hint: a hit
    hinted.nonce = Some(Nonce::from(4));
    assert!(matches!(
        h.interest(APP, hinted, None)[..],
        [Out::Data { from_cs: true, .. }]
    ));
}

#[test]
fn hint_without_route_is_nacked_and_region_hints_are_ignored() {
    let mut h = Harness::new();
    h.route("/n", UP2, 10);
    let mut i = interest("/n/1", 1);
    i.forwarding_hint = vec![name("/nowhere")];
    let out = h.interest(APP, i.clone(), None);
    assert_eq!(nack_reason(&out), Some(NackReason::NO_ROUTE));
    assert_eq!(h.fwd.counters().drops(DropReason::NoHintRoute), 1);
    let mut h = Harness::with_config(ForwarderConfig {
        network_region: vec![name("/nowhere")],
        ..ForwarderConfig::default()
    });
    h.route("/n", UP2, 10);
    assert!(matches!(
        h.interest(APP, i, None)[..],
        [Out::Interest { face: UP2, .. }]
    ));
}

#[test]
fn forged_and_stale_tokens_satisfy_nothing() {
    let mut h = Harness::new();
    h.route("/a", UP1, 10);
    let (_, token) = sent_interest(&h.interest(APP, interest("/a/1", 1), None));
    // right token, wrong name
    assert!(h.data(UP1, data("/a/2", 0), Some(token)).is_empty());
    assert_eq!(h.fwd.counters().drops(DropReason::TokenMismatch), 1);
    assert_eq!(h.fwd.pcct().pit_len(), 1);
    // the real Data still works
    assert_eq!(h.data(UP1, data("/a/1", 0), Some(token)).len(), 1);
    // the same token again is stale now: no PIT entry, so unsolicited
    assert!(h.data(UP1, data("/a/1", 0), Some(token)).is_empty());
}

#[test]
fn tokenless_data_from_the_upstream_is_matched_by_name() {
    let mut h = Harness::new();
    h.route("/p", PRODUCER, 0);
    let mut i = interest("/p", 1);
    i.can_be_prefix = true;
    h.interest(APP, i, Some(tok(9)));
    // from a face the Interest was not sent to: unsolicited
    assert!(h.data(UP2, data("/p/x", 0), None).is_empty());
    assert_eq!(h.fwd.counters().drops(DropReason::Unsolicited), 1);
    let out = h.data(PRODUCER, data("/p/x", 0), None);
    assert_eq!(
        out.iter().map(sent_data).collect::<Vec<_>>(),
        vec![(APP, Some(tok(9)))]
    );
}

#[test]
fn duplicate_nonce_is_a_loop_and_a_new_nonce_is_a_retransmission() {
    let mut h = Harness::new();
    h.route("/a", UP1, 10);
    h.route("/a", UP2, 20);
    h.interest(APP, interest("/a/1", 7), None);
    let out = h.interest(APP2, interest("/a/1", 7), Some(tok(5)));
    assert!(
        matches!(&out[..], [Out::Nack { face: APP2, reason: NackReason::DUPLICATE, token: Some(t), .. }] if *t == tok(5)),
        "{out:?}"
    );
    assert_eq!(h.fwd.counters().drops(DropReason::Loop), 1);
    // the consumer retransmits with a new nonce after suppression: forwarded to the next
    // nexthop
    h.advance(20);
    let out = h.interest(APP, interest("/a/1", 8), None);
    assert!(
        matches!(out[..], [Out::Interest { face: UP2, .. }]),
        "{out:?}"
    );
    // as in NFD, a nonce already sent upstream is a loop even from the same downstream
    let out = h.interest(APP, interest("/a/1", 7), None);
    assert_eq!(nack_reason(&out), Some(NackReason::DUPLICATE), "{out:?}");
}

#[test]
fn dead_nonce_list_catches_a_loop_after_the_pit_entry_is_gone() {
    let mut h = Harness::new();
    h.route("/a", UP1, 10);
    let mut i = interest("/a/1", 42);
    i.lifetime = Some(100);
    h.interest(APP, i.clone(), None);
    h.advance(150);
    assert_eq!(h.fwd.pcct().pit_len(), 0);
    assert_eq!(h.fwd.counters().unsatisfied, 1);
    // the Interest comes back around with the same nonce
    let out = h.interest(UP2, i, None);
    assert_eq!(nack_reason(&out), Some(NackReason::DUPLICATE), "{out:?}");
}

#[test]
fn hop_limit_is_enforced_and_decremented() {
    let mut h = Harness::new();
    h.route("/a", UP1, 10);
    h.route("/a", APP2, 20);
    let mut i = interest("/a/1", 1);
    i.hop_limit = Some(0);
    assert!(h.interest(APP, i.clone(), None).is_empty());
    assert_eq!(h.fwd.counters().drops(DropReason::HopLimitZero), 1);
    i.hop_limit = Some(5);
    let out = h.interest(APP, i.clone(), None);
    let [ref sent] = out[..] else {
        panic!("{out:?}")
    };
    assert_eq!(interest_sent(sent).unwrap().1.hop_limit, Some(4));
    // HopLimit 1 becomes 0: only local faces may still receive it
    i.hop_limit = Some(1);
    i.name = name("/a/2");
    let out = h.interest(APP, i, None);
    let [ref sent] = out[..] else {
        panic!("{out:?}")
    };
    let (face, sent) = interest_sent(sent).unwrap();
    assert_eq!((face, sent.hop_limit), (APP2, Some(0)));
}

#[test]
fn localhost_stays_local() {
    let mut h = Harness::new();
    h.route("/localhost/x", UP1, 10);
    assert!(h
        .interest(UP2, interest("/localhost/x", 1), None)
        .is_empty());
    assert_eq!(h.fwd.counters().drops(DropReason::ScopeViolation), 1);
    // from a local face it may not leave through a non-local one either
    let out = h.interest(APP, interest("/localhost/x", 2), None);
    assert_eq!(nack_reason(&out), Some(NackReason::NO_ROUTE));
    // and a non-local face cannot inject /localhost Data
    assert!(h.data(UP1, data("/localhost/x", 0), None).is_empty());
    assert_eq!(h.fwd.counters().drops(DropReason::ScopeViolation), 2);
}

#[test]
fn localhop_from_the_network_only_reaches_local_faces() {
    let mut h = Harness::new();
    h.route("/localhop/x", UP1, 10);
    let out = h.interest(UP2, interest("/localhop/x", 1), None);
    assert_eq!(nack_reason(&out), Some(NackReason::NO_ROUTE));
    assert!(matches!(
        h.interest(APP, interest("/localhop/x", 2), None)[..],
        [Out::Interest { face: UP1, .. }]
    ));
}

#[test]
fn unsolicited_data_is_dropped_unless_the_policy_admits_it() {
    let mut h = Harness::new();
    assert!(h.data(UP1, data("/u", 1000), None).is_empty());
    assert_eq!(h.fwd.pcct().cs_len(), 0);
    let mut h = Harness::with_config(ForwarderConfig {
        unsolicited: UnsolicitedPolicy::AdmitNetwork,
        ..ForwarderConfig::default()
    });
    h.data(APP, data("/local", 1000), None);
    assert_eq!(
        h.fwd.pcct().cs_len(),
        0,
        "local Data not admitted by admit-network"
    );
    h.data(UP1, data("/u", 1000), None);
    assert_eq!(h.fwd.pcct().cs_len(), 1);
    assert!(matches!(
        h.interest(APP, interest("/u", 1), None)[..],
        [Out::Data { from_cs: true, .. }]
    ));
}

#[test]
fn no_cache_data_is_not_cached() {
    let mut h = Harness::new();
    h.route("/a", UP1, 10);
    let (_, token) = sent_interest(&h.interest(APP, interest("/a/1", 1), None));
    h.data_with(UP1, data("/a/1", 1000), Some(token), |d| d.no_cache = true);
    assert_eq!(h.fwd.pcct().cs_len(), 0);
}

#[test]
fn pit_entries_expire_and_leave_nothing_behind() {
    let mut h = Harness::new();
    h.route("/a", UP1, 10);
    for k in 0..50u32 {
        let mut i = interest(&format!("/a/{k}"), k);
        i.lifetime = Some(u64::from(100 + k));
        h.interest(APP, i, None);
    }
    assert_eq!(h.fwd.pcct().pit_len(), 50);
    h.advance(120);
    assert!(h.fwd.pcct().pit_len() < 50 && h.fwd.pcct().pit_len() > 0);
    h.advance(100);
    assert_eq!((h.fwd.pcct().pit_len(), h.fwd.pcct().len()), (0, 0));
    assert_eq!(h.fwd.timers_pending(), 0);
    assert_eq!(h.fwd.counters().unsatisfied, 50);
}

#[test]
fn nack_goes_downstream_once_every_upstream_has_nacked() {
    let mut h = Harness::new();
    h.route("/a", UP1, 10);
    let out = h.interest(APP, interest("/a/1", 1), Some(tok(3)));
    let (_, token) = sent_interest(&out);
    let out = h.nack(UP1, interest("/a/1", 1), NackReason::NO_ROUTE, Some(token));
    assert!(
        matches!(&out[..], [Out::Nack { face: APP, reason: NackReason::NO_ROUTE, token: Some(t), .. }] if *t == tok(3)),
        "{out:?}"
    );
    assert_eq!(h.fwd.pcct().pit_len(), 0);

    // multicast to two upstreams: the least severe reason, once both have Nacked
    h.strategy("/m", "/localhost/nfd/strategy/multicast");
    h.route("/m", UP1, 10);
    h.route("/m", UP2, 10);
    let out = h.interest(APP, interest("/m/1", 2), None);
    assert_eq!(out.len(), 2);
    let (_, token) = sent_interest(&out);
    assert!(h
        .nack(UP1, interest("/m/1", 2), NackReason::NO_ROUTE, Some(token))
        .is_empty());
    let out = h.nack(
        UP2,
        interest("/m/1", 2),
        NackReason::CONGESTION,
        Some(token),
    );
    assert_eq!(nack_reason(&out), Some(NackReason::CONGESTION), "{out:?}");
}

#[test]
fn nack_duplicate_is_retried_once_with_a_new_nonce() {
    let mut h = Harness::new();
    h.route("/a", UP1, 10);
    let (_, token) = sent_interest(&h.interest(APP, interest("/a/1", 1), None));
    let out = h.nack(UP1, interest("/a/1", 1), NackReason::DUPLICATE, Some(token));
    let Some((face, sent)) = out.first().and_then(interest_sent) else {
        panic!("{out:?}")
    };
    let nonce = sent.nonce.unwrap();
    assert_eq!(face, UP1);
    assert_ne!(nonce, Nonce::from(1));
    let mut again = interest("/a/1", 1);
    again.nonce = Some(nonce);
    let out = h.nack(UP1, again, NackReason::DUPLICATE, Some(token));
    assert_eq!(
        only_nack(&out),
        Some((APP, NackReason::DUPLICATE)),
        "{out:?}"
    );
}

#[test]
fn nack_with_an_unknown_nonce_is_ignored() {
    let mut h = Harness::new();
    h.route("/a", UP1, 10);
    let (_, token) = sent_interest(&h.interest(APP, interest("/a/1", 1), None));
    assert!(h
        .nack(UP1, interest("/a/1", 99), NackReason::NO_ROUTE, Some(token))
        .is_empty());
    assert_eq!(h.fwd.counters().drops(DropReason::NackUnmatched), 1);
    assert_eq!(h.fwd.pcct().pit_len(), 1);
}

#[test]
fn best_route_prefers_low_cost_suppresses_then_tries_the_next() {
    let mut h = Harness::new();
    h.route("/a", UP2, 20);
    h.route("/a", UP1, 10);
    assert!(matches!(
        h.interest(APP, interest("/a/1", 1), None)[..],
        [Out::Interest { face: UP1, .. }]
    ));
    // retransmission (new nonce) within 10 ms: suppressed
    h.advance(5);
    assert!(h.interest(APP, interest("/a/1", 2), None).is_empty());
    // after the interval: the next nexthop not tried yet
    h.advance(10);
    assert!(matches!(
        h.interest(APP, interest("/a/1", 3), None)[..],
        [Out::Interest { face: UP2, .. }]
    ));
    // no route at all: Nack~NoRoute
    assert_eq!(
        nack_reason(&h.interest(APP, interest("/none", 4), None)),
        Some(NackReason::NO_ROUTE)
    );
}

#[test]
fn multicast_sends_everywhere_and_does_not_nack_loops() {
    let mut h = Harness::new();
    h.strategy("/m", "/localhost/nfd/strategy/multicast/v=5");
    h.route("/m", UP1, 10);
    h.route("/m", UP2, 10);
    h.route("/m", APP, 10);
    let out = h.interest(APP, interest("/m/1", 1), None);
    let mut faces: Vec<FaceId> = out.iter().map(Out::face).collect();
    faces.sort();
    assert_eq!(faces, vec![UP1, UP2], "everywhere but where it came from");
    assert!(
        h.interest(APP2, interest("/m/1", 1), None).is_empty(),
        "loop dropped silently"
    );
}

#[test]
fn round_robin_rotates_and_random_spreads() {
    let mut h = Harness::new();
    h.strategy("/r", "/localhost/kite/strategy/round-robin");
    h.route("/r", UP1, 10);
    h.route("/r", UP2, 10);
    let faces: Vec<FaceId> = (0..4)
        .map(|k| h.interest(APP, interest(&format!("/r/{k}"), k), None)[0].face())
        .collect();
    assert_eq!(faces, vec![UP1, UP2, UP1, UP2]);
    h.strategy("/x", "/localhost/nfd/strategy/random");
    h.route("/x", UP1, 10);
    h.route("/x", UP2, 10);
    let mut seen = std::collections::HashSet::new();
    for k in 0..40 {
        seen.insert(h.interest(APP, interest(&format!("/x/{k}"), k), None)[0].face());
    }
    assert_eq!(seen.len(), 2);
}

#[test]
fn next_hop_face_id_bypasses_the_strategy_for_local_apps_only() {
    let mut h = Harness::new();
    h.route("/a", UP1, 10);
    let out = h.interest_with(APP, interest("/a/1", 1), None, |i| i.next_hop = Some(UP2));
    assert!(
        matches!(out[..], [Out::Interest { face: UP2, .. }]),
        "{out:?}"
    );
    let out = h.interest_with(UP1, interest("/a/2", 2), None, |i| i.next_hop = Some(UP2));
    assert!(out.is_empty());
    assert_eq!(h.fwd.counters().drops(DropReason::BadNextHop), 1);
    assert_eq!(
        h.fwd.pcct().pit_len(),
        1,
        "the rejected Interest left no PIT entry"
    );
}

#[test]
fn full_tables_nack_with_congestion() {
    let mut h = Harness::with_config(ForwarderConfig {
        pcct: PcctConfig {
            capacity: 4,
            pit_capacity: 2,
            cs_capacity: 2,
            ..PcctConfig::default()
        },
        ..ForwarderConfig::default()
    });
    h.route("/a", UP1, 10);
    h.interest(APP, interest("/a/1", 1), None);
    h.interest(APP2, interest("/a/2", 2), None);
    let out = h.interest(APP, interest("/a/3", 3), Some(tok(8)));
    assert_eq!(nack_reason(&out), Some(NackReason::CONGESTION), "{out:?}");
    assert_nack_carries(&out[0], APP, tok(8), "/a/3", 3);
    assert_eq!(h.fwd.counters().drops(DropReason::TableFull), 1);
    assert_eq!(h.fwd.pcct().pit_len(), 2);
}

#[test]
fn interest_lifetime_is_capped_by_the_configured_maximum() {
    let mut h = Harness::with_config(ForwarderConfig {
        max_interest_lifetime: core::time::Duration::from_millis(1_000),
        ..ForwarderConfig::default()
    });
    h.route("/a", UP1, 10);
    let mut i = interest("/a/forever", 1);
    i.lifetime = Some(u64::MAX);
    assert_eq!(sent_interest(&h.interest(APP, i, None)).0, UP1);
    let mut short = interest("/a/short", 2);
    short.lifetime = Some(500);
    h.interest(APP, short, None);
    h.advance(600);
    assert_eq!(
        h.fwd.pcct().pit_len(),
        1,
        "the 500 ms Interest keeps its lifetime"
    );
    h.advance(500);
    assert_eq!((h.fwd.pcct().pit_len(), h.fwd.pcct().len()), (0, 0));
    assert_eq!(h.fwd.pit_held(APP), 0);
    assert_eq!(h.fwd.timers_pending(), 0);
}

#[test]
fn a_flooding_face_gets_at_most_half_the_pit_and_lighter_faces_still_get_in() {
    let mut h = Harness::with_config(ForwarderConfig {
        pcct: PcctConfig {
            capacity: 256,
            pit_capacity: 64,
            cs_capacity: 16,
            ..PcctConfig::default()
        },
        ..ForwarderConfig::default()
    });
    h.route("/a", UP1, 10);
    h.route("/flood", UP1, 10);
    h.route("/flood2", UP1, 10);
    let mut nacked = 0;
    for k in 0..100u32 {
        let out = h.interest(APP, interest(&format!("/flood/{k}"), k), Some(tok(1)));
        if nack_reason(&out) == Some(NackReason::CONGESTION) {
            nacked += 1;
        }
    }
    // It may hold entries only while it holds fewer than are free: 32 of 64.
    assert_eq!(h.fwd.pit_held(APP), 32);
    assert_eq!(nacked, 100 - 32, "each refused Interest is Nacked");
    // A second flooding face meets the threshold lower (it shrinks as the PIT fills)...
    for k in 0..100u32 {
        h.interest(PRODUCER, interest(&format!("/flood2/{k}"), 1000 + k), None);
    }
    assert_eq!(h.fwd.pit_held(PRODUCER), 16);
    // ...and a face holding fewer entries than are free is never refused: 16 are free, so
    // a third face gets in until it holds 8 of them.
    for k in 0..8u32 {
        let out = h.interest(APP2, interest(&format!("/a/{k}"), 2000 + k), None);
        assert_eq!(sent_interest(&out).0, UP1, "{out:?}");
    }
    assert_eq!(h.fwd.pit_held(APP2), 8);
    // The flooders, past their share, are still refused.
    let out = h.interest(APP, interest("/flood/more", 3000), Some(tok(2)));
    assert_eq!(nack_reason(&out), Some(NackReason::CONGESTION));
    // Counts follow the entries out: satisfied, and expired.
    h.data(UP1, data("/a/0", 0), None);
    assert_eq!(h.fwd.pit_held(APP2), 7);
    h.advance(5_000);
    assert_eq!(h.fwd.pcct().pit_len(), 0);
    for f in [APP, APP2, PRODUCER] {
        assert_eq!(h.fwd.pit_held(f), 0);
    }
}

#[test]
fn an_aggregated_interest_counts_against_each_downstream_until_satisfied() {
    let mut h = Harness::new();
    h.route("/a", UP1, 10);
    h.interest(APP, interest("/a/1", 1), None);
    h.interest(APP2, interest("/a/1", 2), None);
    h.interest(APP2, interest("/a/1", 3), None);
    assert_eq!((h.fwd.pit_held(APP), h.fwd.pit_held(APP2)), (1, 1));
    h.data(UP1, data("/a/1", 0), None);
    assert_eq!((h.fwd.pit_held(APP), h.fwd.pit_held(APP2)), (0, 0));
    h.interest(APP, interest("/a/2", 4), None);
    h.fwd.remove_face(APP);
    assert_eq!(h.fwd.pit_held(APP), 0);
}

#[test]
fn a_full_timer_wheel_nacks_with_congestion_and_keeps_no_entry() {
    let mut h = Harness::with_config(ForwarderConfig {
        timer_capacity: 1,
        ..ForwarderConfig::default()
    });
    h.route("/a", UP1, 10);
    assert_eq!(
        sent_interest(&h.interest(APP, interest("/a/1", 1), None)).0,
        UP1
    );
    let out = h.interest(APP, interest("/a/2", 2), Some(tok(9)));
    assert_eq!(nack_reason(&out), Some(NackReason::CONGESTION), "{out:?}");
    assert_nack_carries(&out[0], APP, tok(9), "/a/2", 2);
    assert_eq!(h.fwd.counters().drops(DropReason::TableFull), 1);
    assert_eq!(
        h.fwd.pcct().pit_len(),
        1,
        "the refused Interest left no PIT entry"
    );
}

/// `out` is a Nack to `face` echoing `token`, carrying the Interest `name` with `nonce`.
fn assert_nack_carries(out: &Out, face: FaceId, token: PitToken, name: &str, nonce: u32) {
    let Out::Nack {
        face: to,
        token: echoed,
        interest,
        ..
    } = out
    else {
        panic!("not a Nack: {out:?}")
    };
    assert_eq!((*to, *echoed), (face, Some(token)));
    let sent = kite_packet::InterestView::decode(interest.encode()).unwrap();
    assert_eq!(sent.name, harness::name(name));
    assert_eq!(sent.nonce, Some(Nonce::from(nonce)));
}

#[test]
fn removing_a_face_purges_it_from_the_pit() {
    let mut h = Harness::new();
    h.route("/a", UP1, 10);
    h.interest(APP, interest("/a/1", 1), None);
    h.interest(APP2, interest("/a/2", 2), None);
    h.fwd.remove_face(APP);
    assert_eq!(h.fwd.pcct().pit_len(), 1);
    h.fwd.remove_face(UP1);
    let (slot, mbf) = h.fwd.pcct().pit_slots().next().unwrap();
    assert!(h.fwd.pcct().pit(slot, mbf).unwrap().upstreams.is_empty());
    // Data for the purged downstream goes nowhere
    assert!(h.data(UP2, data("/a/1", 0), None).is_empty());
}

#[test]
fn changed_fib_entry_means_default_handling_for_late_nacks() {
    let mut h = Harness::new();
    h.strategy("/m", "/localhost/nfd/strategy/multicast");
    h.route("/m", UP1, 10);
    let (_, token) = sent_interest(&h.interest(APP, interest("/m/1", 1), None));
    // the route changes while the Interest is pending: the FIB entry is rewritten
    h.route("/m", UP2, 5);
    let out = h.nack(UP1, interest("/m/1", 1), NackReason::NO_ROUTE, Some(token));
    assert!(matches!(out[..], [Out::Nack { face: APP, .. }]), "{out:?}");
}

#[test]
fn multi_access_downstreams_get_no_nacks() {
    let mut h = Harness::new();
    h.add_face(MCAST, FaceScope::NonLocal, LinkType::MultiAccess);
    assert!(h.interest(MCAST, interest("/none/1", 1), None).is_empty());
    assert_eq!(h.fwd.pcct().pit_len(), 0);
    let _ = Duration::ZERO;
}

#[test]
fn data_copies_carry_the_larger_congestion_mark() {
    let mut h = Harness::new();
    h.route("/a", UP1, 10);
    let out = h.interest_with(APP, interest("/a/1", 1), None, |i| i.congestion_mark = 1);
    let (_, token) = sent_interest(&out);
    assert!(
        h.interest(APP2, interest("/a/1", 2), None).is_empty(),
        "aggregated"
    );
    let marks = |out: &[Out]| {
        let mut m: Vec<(FaceId, u64)> = out
            .iter()
            .map(|o| match o {
                Out::Data {
                    face,
                    congestion_mark,
                    ..
                } => (*face, *congestion_mark),
                other => panic!("{other:?}"),
            })
            .collect();
        m.sort();
        m
    };
    let out = h.data(UP1, data("/a/1", 0), Some(token));
    assert_eq!(marks(&out), vec![(APP, 1), (APP2, 0)]);
    // a marked Data marks every copy
    let (_, token) = sent_interest(&h.interest(APP, interest("/a/2", 3), None));
    let out = h.data_with(UP1, data("/a/2", 0), Some(token), |d| d.congestion_mark = 2);
    assert_eq!(marks(&out), vec![(APP, 2)]);
}

#[test]
fn a_cs_hit_carries_the_interests_congestion_mark() {
    let mut h = Harness::new();
    h.route("/a", UP1, 10);
    let (_, token) = sent_interest(&h.interest(APP, interest("/a/1", 1), None));
    h.data(UP1, data("/a/1", 0), Some(token));
    let mark_of = |out: &[Out]| match out {
        [Out::Data {
            face,
            congestion_mark,
            from_cs: true,
            ..
        }] => (*face, *congestion_mark),
        other => panic!("{other:?}"),
    };
    let out = h.interest_with(APP2, interest("/a/1", 2), None, |i| i.congestion_mark = 1);
    assert_eq!(
        mark_of(&out),
        (APP2, 1),
        "a marked Interest's answer is marked"
    );
    let out = h.interest(APP, interest("/a/1", 3), None);
    assert_eq!(mark_of(&out), (APP, 0));
}

#[test]
fn data_skips_downstreams_whose_interest_expired() {
    let mut h = Harness::new();
    h.route("/a", UP1, 10);
    let mut short = interest("/a/1", 1);
    short.lifetime = Some(100);
    let (_, token) = sent_interest(&h.interest(APP, short, None));
    h.advance(50);
    let mut long = interest("/a/1", 2);
    long.lifetime = Some(4000);
    h.interest(APP2, long, None);
    h.advance(80);
    // APP's Interest expired at +100 ms; APP2's is still pending
    let out = h.data(UP1, data("/a/1", 0), Some(token));
    assert_eq!(
        out.iter().map(sent_data).collect::<Vec<_>>(),
        vec![(APP2, None)]
    );
}

#[test]
fn tokenless_data_satisfies_an_interest_named_by_its_implicit_digest() {
    let mut h = Harness::new();
    h.route("/p", PRODUCER, 0);
    let d = data("/p/x", 0);
    let wire = d.sign(&kite_packet::DigestSha256).unwrap();
    let digest = kite_packet::DataView::decode(wire)
        .unwrap()
        .implicit_digest();
    let by_digest = format!("/p/x/sha256digest={}", hex_of(&digest));
    h.interest(APP, interest(&by_digest, 1), Some(tok(4)));
    let out = h.data(PRODUCER, d, None);
    assert_eq!(
        out.iter().map(sent_data).collect::<Vec<_>>(),
        vec![(APP, Some(tok(4)))]
    );
    // a Data with the same name but other octets does not match the digest
    h.interest(APP, interest(&by_digest, 2), None);
    let mut other = data("/p/x", 0);
    other.content = Some(bytes::Bytes::from_static(b"different"));
    assert!(h.data(PRODUCER, other, None).is_empty());
}

#[test]
fn data_whose_full_name_would_be_too_long_matches_no_digest_named_interest() {
    let mut h = Harness::new();
    h.route("/p", PRODUCER, 0);
    let by_digest = format!("/p/x/sha256digest={}", "ab".repeat(32));
    h.interest(APP, interest(&by_digest, 1), None);
    // One component filling the name to 33 octets short of the longest: the Data's own name
    // is valid, its name plus an implicit digest (34 octets) is not.
    let value = vec![b'n'; kite_packet::name::MAX_NAME_VALUE_LEN - 33 - 4];
    let name = kite_packet::Name::from_components([kite_packet::Component::generic(&value)]);
    assert_eq!(
        name.value().len(),
        kite_packet::name::MAX_NAME_VALUE_LEN - 33
    );
    let long = kite_packet::Data::new(name, bytes::Bytes::from_static(b"x"));
    assert!(h.data(PRODUCER, long, None).is_empty());
    // The PIT entry is still there, and answered by its Data.
    let d = data("/p/x", 0);
    let wire = d.sign(&kite_packet::DigestSha256).unwrap();
    let digest = kite_packet::DataView::decode(wire)
        .unwrap()
        .implicit_digest();
    h.interest(
        APP,
        interest(&format!("/p/x/sha256digest={}", hex_of(&digest)), 2),
        None,
    );
    assert_eq!(h.data(PRODUCER, d, None).len(), 1);
}

fn hex_of(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[test]
fn cs_erase_removes_data_under_a_prefix_up_to_the_limit() {
    let mut h = Harness::new();
    h.route("/a", UP1, 10);
    h.route("/b", UP1, 10);
    for (k, name) in ["/a/1", "/a/2", "/a/3", "/b/1"].iter().enumerate() {
        let out = h.interest(APP, interest(name, k as u32 + 1), None);
        let (_, token) = sent_interest(&out);
        h.data(UP1, data(name, 10_000), Some(token));
    }
    assert_eq!(h.fwd.pcct().cs_len(), 4);
    assert_eq!(h.fwd.cs_erase(&"/a".parse().unwrap(), 2), 2);
    assert_eq!(h.fwd.pcct().cs_len(), 2);
    assert_eq!(h.fwd.cs_erase(&"/a".parse().unwrap(), 256), 1);
    // /b/1 is still served from the CS; /a/1 goes upstream again
    assert!(matches!(
        h.interest(APP2, interest("/b/1", 9), None)[..],
        [Out::Data { from_cs: true, .. }]
    ));
    assert!(matches!(
        h.interest(APP2, interest("/a/1", 10), None)[..],
        [Out::Interest { face: UP1, .. }]
    ));
}

#[test]
fn exact_and_can_be_prefix_interests_of_one_name_keep_separate_pit_entries() {
    // As NFD: an exact and a CanBePrefix Interest for the same name are not aggregated, so each
    // is forwarded and each downstream gets the Data it asked for.
    let mut h = Harness::new();
    h.route("/a", UP1, 10);
    let mut prefix = interest("/a/x", 1);
    prefix.can_be_prefix = true;
    let (_, prefix_token) = sent_interest(&h.interest(APP, prefix.clone(), Some(tok(1))));
    let (_, exact_token) = sent_interest(&h.interest(APP2, interest("/a/x", 2), Some(tok(2))));
    assert_ne!(prefix_token, exact_token);
    // A second CanBePrefix Interest joins the first one's entry.
    prefix.nonce = Some(Nonce::from(3));
    assert!(h.interest(PRODUCER, prefix, Some(tok(3))).is_empty());
    // A longer Data answers the CanBePrefix entry only...
    let out = h.data(UP1, data("/a/x/1", 100), Some(prefix_token));
    let mut got: Vec<_> = out.iter().map(sent_data).collect();
    got.sort_by_key(|(face, _)| *face);
    assert_eq!(
        got,
        vec![(APP, Some(tok(1))), (PRODUCER, Some(tok(3)))],
        "{out:?}"
    );
    // ...and the exact one waits for its own.
    let out = h.data(UP1, data("/a/x", 100), Some(exact_token));
    let got: Vec<_> = out.iter().map(sent_data).collect();
    assert_eq!(got, vec![(APP2, Some(tok(2)))], "{out:?}");
}

#[test]
fn a_data_of_the_interest_name_answers_every_entry_of_that_name() {
    // The exact and the CanBePrefix entries of /a/x are both satisfied by Data /a/x, whichever
    // entry's token it came back with (NFD satisfies every PIT entry a Data matches).
    let mut h = Harness::new();
    h.route("/a", UP1, 10);
    let mut prefix = interest("/a/x", 1);
    prefix.can_be_prefix = true;
    let (_, prefix_token) = sent_interest(&h.interest(APP, prefix, Some(tok(1))));
    let _ = sent_interest(&h.interest(APP2, interest("/a/x", 2), Some(tok(2))));
    let out = h.data(UP1, data("/a/x", 100), Some(prefix_token));
    let mut got: Vec<_> = out.iter().map(sent_data).collect();
    got.sort_by_key(|(face, _)| *face);
    assert_eq!(
        got,
        vec![(APP, Some(tok(1))), (APP2, Some(tok(2)))],
        "{out:?}"
    );
    assert_eq!(h.fwd.pcct().pit_len(), 0);
}

/// The suppression intervals a run of retransmissions meets (10 ms, doubling, at most
/// 250 ms), as NFD's RetxSuppressionExponential.
const RETX_INTERVALS_MS: [u64; 7] = [10, 20, 40, 80, 160, 250, 250];

/// Sends `/r/1` from APP, then retransmissions with new nonces: one just inside each
/// interval (suppressed) and one at its end (forwarded to `upstreams`, with its own nonce).
fn retransmissions_reach_the_upstreams_after_each_interval(strategy: &str, upstreams: &[FaceId]) {
    let mut h = Harness::new();
    h.strategy("/r", strategy);
    for &f in upstreams {
        h.route("/r", f, 10);
    }
    let faces = |out: &[Out]| {
        let mut f: Vec<FaceId> = out.iter().filter_map(interest_sent).map(|s| s.0).collect();
        f.sort();
        f
    };
    let mut i = interest("/r/1", 1);
    i.lifetime = Some(4000);
    assert_eq!(faces(&h.interest(APP, i.clone(), None)), upstreams);
    let mut nonce = 1;
    for interval in RETX_INTERVALS_MS {
        h.advance(interval - 1);
        nonce += 1;
        i.nonce = Some(Nonce::from(nonce));
        let out = h.interest(APP, i.clone(), None);
        assert!(
            out.is_empty(),
            "{strategy}: suppressed inside {interval} ms: {out:?}"
        );
        h.advance(1);
        nonce += 1;
        i.nonce = Some(Nonce::from(nonce));
        let out = h.interest(APP, i.clone(), None);
        assert_eq!(
            faces(&out),
            upstreams,
            "{strategy}: forwarded at the end of {interval} ms"
        );
        for sent in out.iter().filter_map(interest_sent) {
            assert_eq!(
                sent.1.nonce,
                Some(Nonce::from(nonce)),
                "the new nonce goes up"
            );
        }
    }
}

#[test]
fn best_route_suppresses_retransmissions_only_inside_the_interval() {
    retransmissions_reach_the_upstreams_after_each_interval(
        "/localhost/nfd/strategy/best-route",
        &[UP1],
    );
}

#[test]
fn multicast_suppresses_retransmissions_only_inside_the_interval() {
    retransmissions_reach_the_upstreams_after_each_interval(
        "/localhost/nfd/strategy/multicast",
        &[UP1, UP2],
    );
}

#[test]
fn round_robin_and_random_suppress_retransmissions_only_inside_the_interval() {
    retransmissions_reach_the_upstreams_after_each_interval(
        "/localhost/kite/strategy/round-robin",
        &[UP1],
    );
    retransmissions_reach_the_upstreams_after_each_interval(
        "/localhost/nfd/strategy/random",
        &[UP1],
    );
}

/// An Interest whose upstream record has expired (a short lifetime) while the PIT entry
/// lives on for a later downstream is not pending upstream: the next one goes out at once,
/// as NFD's RetxSuppressionExponential treats an entry with no pending out-record as new.
#[test]
fn a_retransmission_with_nothing_pending_upstream_is_not_suppressed() {
    for strategy in [
        "/localhost/nfd/strategy/best-route",
        "/localhost/kite/strategy/round-robin",
        "/localhost/nfd/strategy/random",
    ] {
        let mut h = Harness::new();
        h.strategy("/r", strategy);
        h.route("/r", UP1, 10);
        let mut short = interest("/r/1", 1);
        short.lifetime = Some(3);
        assert_eq!(sent_interest(&h.interest(APP, short, None)).0, UP1);
        // Pending upstream: held back.
        h.advance(1);
        let mut long = interest("/r/1", 2);
        long.lifetime = Some(4000);
        assert!(h.interest(APP2, long.clone(), None).is_empty());
        // The upstream record expired at 3 ms; the entry lives on for APP2.
        h.advance(4);
        long.nonce = Some(Nonce::from(3));
        let out = h.interest(APP2, long, None);
        assert!(
            out.iter().filter_map(interest_sent).any(|(f, _)| f == UP1),
            "{strategy}: the upstream record expired, yet the Interest was held: {out:?}"
        );
    }
}
