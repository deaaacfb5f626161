//! Programs that misbehave at run time are contained: a zero divisor yields 0, a program that
//! asks for too much is switched off and its namespace falls back to best-route, and the
//! forwarder goes on.

use kite_testkit::forwarder::*;
use std::sync::Arc;

use kite_bpf::{BpfStrategy, Engine};
use rbpf::assembler::assemble;

fn load(src: &str, engine: Engine) -> Arc<BpfStrategy> {
    kite_bpf::load_code(
        name("/localhost/kite/strategy/t/v=1"),
        assemble(src).unwrap(),
        engine,
    )
    .unwrap()
}

fn with(strategy: Arc<BpfStrategy>) -> Harness {
    let mut h = Harness::with_three_upstreams();
    let id = h.strategies.add(strategy).unwrap();
    h.set_strategy("/p", id);
    h.route("/p", UP2, 20);
    h.route("/p", UP1, 10);
    h
}

#[test]
fn division_by_a_zero_register_yields_zero_in_both_engines() {
    // face = 400 + (ingress / timer_data) where timer_data is 0 on an Interest: 400 + 0
    let src = "
        ldxdw r2, [r1+24]
        ldxdw r3, [r1+16]
        div r3, r2
        mod r3, r2
        mov r1, 400
        add r1, r3
        call 1
        mov r0, 0
        exit";
    for engine in [Engine::Jit, Engine::Interpreter] {
        let mut h = with(load(src, engine));
        assert_eq!(
            interest_faces(&h.interest(APP, interest("/p/x", 1), None)),
            vec![UP1],
            "{engine:?}"
        );
    }
}

#[test]
fn a_program_asking_too_much_is_switched_off_and_best_route_stands_in() {
    // 17 Nacks in one trigger: more than a trigger allows
    let src = "mov r1, 150\n call 2\n".repeat(17) + "mov r0, 0\n exit";
    let s = load(&src, Engine::Jit);
    let mut h = with(s.clone());
    assert!(!s.faulted());
    let out = h.interest(APP, interest("/p/x", 1), None);
    assert!(s.faulted());
    assert_eq!(
        interest_faces(&out),
        vec![UP1],
        "best-route forwarded instead"
    );
    assert!(
        nacks(&out).is_empty(),
        "none of the program's actions were applied"
    );
    assert_eq!(
        interest_faces(&h.interest(APP, interest("/p/y", 2), None)),
        vec![UP1]
    );
}

#[test]
fn forwarding_to_a_face_that_is_not_an_eligible_nexthop_is_refused() {
    // forward to APP (the ingress) and to face 999 (unknown): both refused, r0 = -1
    let src = "
        mov r1, 300
        call 1
        mov r6, r0
        mov r1, 999
        call 1
        add r6, r0
        jeq r6, -2, +2
        mov r0, 0
        exit
        mov r1, 150
        call 2
        mov r0, 0
        exit";
    let mut h = with(load(src, Engine::Jit));
    h.route("/p", APP, 1);
    let out = h.interest(APP, interest("/p/x", 1), None);
    assert!(interest_faces(&out).is_empty());
    assert_eq!(nacks(&out).len(), 1, "both refusals were seen: {out:?}");
}

#[test]
fn a_program_too_large_for_the_jit_page_is_refused_not_run() {
    // within the verifier's length limit, but its machine code would overflow the JIT's page
    let src = "call 4\n".repeat(kite_bpf::verifier::MAX_INSNS - 1) + "exit";
    let err = kite_bpf::load_code(
        name("/localhost/kite/strategy/big/v=1"),
        assemble(&src).unwrap(),
        Engine::Jit,
    )
    .err();
    assert!(matches!(err, Some(kite_bpf::LoadError::Vm(_))), "{err:?}");
    let too_long = "mov r0, 0\n".repeat(kite_bpf::verifier::MAX_INSNS) + "exit";
    let err = kite_bpf::load_code(
        name("/localhost/kite/strategy/long/v=1"),
        assemble(&too_long).unwrap(),
        Engine::Jit,
    )
    .err();
    assert!(
        matches!(err, Some(kite_bpf::LoadError::Verify(_))),
        "{err:?}"
    );
}
