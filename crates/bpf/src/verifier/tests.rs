use rbpf::assembler::assemble;

use super::*;

fn check(src: &str) -> Result<Verified, VerifyError> {
    verify(&assemble(src).expect("assembles"))
}

#[test]
fn accepts_context_and_stack_access_at_constant_offsets() {
    let ok = check(
        "
        ldxw r2, [r1+4]
        mov r6, r1
        add r6, 336
        stxdw [r6+0], r2
        stxdw [r1+488], r2
        stxdw [r10-8], r2
        ldxdw r3, [r10-8]
        mov r0, 0
        exit",
    );
    assert_eq!(
        ok,
        Ok(Verified {
            uses_fib_scratch: true,
            ..Verified::default()
        })
    );
}

#[test]
fn accepts_bounded_variable_offsets_into_the_context() {
    // r1 + (r2 & 7) * 32 + 80: a nexthop chosen at run time
    let ok = check(
        "
        ldxdw r2, [r1+8]
        and r2, 7
        lsh r2, 5
        add r1, r2
        ldxdw r0, [r1+80]
        exit",
    );
    assert!(ok.is_ok(), "{ok:?}");
}

#[test]
fn rejects_out_of_bounds_access() {
    let cases = [
        ("ldxdw r0, [r1+496]\n exit", "past the context"),
        ("ldxb r0, [r1-1]\n exit", "before the context"),
        ("stxw [r1+0], r0\n exit", "a store outside the scratch areas"),
        ("stxdw [r10+0], r1\n exit", "above the stack"),
        ("ldxdw r0, [r10-520]\n exit", "below the stack"),
        ("ldxdw r0, [r2+0]\n exit", "through a number"),
        ("ldxdw r2, [r1+8]\n add r1, r2\n ldxb r0, [r1+0]\n exit", "unbounded offset"),
        ("ldxdw r2, [r1+8]\n and r2, 511\n add r1, r2\n ldxb r0, [r1+0]\n exit", "offset too large"),
        ("stxdw [r10-8], r1\n ldxdw r2, [r10-8]\n ldxb r0, [r2+0]\n exit", "spilled pointer"),
        (
            "ldxdw r2, [r1+8]\n and r2, 0x7fffffff\n lsh r2, 31\n lsh r2, 31\n add r1, r2\n ldxb r0, [r1+0]\n exit",
            "a shift that would wrap",
        ),
        ("jeq r2, 0, +1\n mov r1, 0\n ldxb r0, [r1+0]\n exit", "pointer on one path only"),
    ];
    for (src, why) in cases {
        assert!(
            matches!(check(src), Err(VerifyError::BadAccess(..))),
            "{why}: {:?}",
            check(src)
        );
    }
}

#[test]
fn rejects_loops_even_bounded_ones() {
    assert_eq!(check("ja -1\n exit"), Err(VerifyError::Loop(0, 0)));
    let counted = "
        mov r2, 10
        sub r2, 1
        jne r2, 0, -2
        exit";
    assert_eq!(check(counted), Err(VerifyError::Loop(2, 1)));
}

#[test]
fn accepts_a_backward_jump_that_makes_no_loop() {
    // 0 -> 2 -> 4 (exit) and 2 jumps back to 1 which exits: no cycle
    let ok = check(
        "
        ja +1
        exit
        jeq r1, 0, -2
        mov r0, 0
        exit",
    );
    assert!(ok.is_ok(), "{ok:?}");
}

#[test]
fn rejects_bad_helpers_jumps_and_opcodes() {
    assert_eq!(check("call 99\n exit"), Err(VerifyError::BadHelper(0, 99)));
    assert_eq!(check("call 0\n exit"), Err(VerifyError::BadHelper(0, 0)));
    assert_eq!(check("ja +5\n exit"), Err(VerifyError::BadJump(0, 6)));
    assert_eq!(check("mov r0, 0"), Err(VerifyError::FallsOff));
    assert!(matches!(
        check("ldabsw 0\n exit"),
        Err(VerifyError::BadOpcode(0, _))
    ));
    assert!(matches!(
        check("mov r10, 0\n exit"),
        Err(VerifyError::BadRegister(0))
    ));
    // a bpf-to-bpf call (src 1)
    let mut code = assemble("call 1\n exit").unwrap();
    code[1] = 0x10;
    assert!(matches!(
        verify(&code),
        Err(VerifyError::BadOpcode(0, 0x85))
    ));
    // an atomic add
    let mut code = assemble("stxdw [r10-8], r0\n exit").unwrap();
    code[0] = 0xdb;
    assert!(matches!(
        verify(&code),
        Err(VerifyError::BadOpcode(0, 0xdb))
    ));
    // lddw referring to a map (src 1)
    let mut code = assemble("lddw r0, 0\n exit").unwrap();
    code[1] = 0x10;
    assert!(matches!(
        verify(&code),
        Err(VerifyError::BadOpcode(0, 0x18))
    ));
    // a jump into the second half of lddw
    assert!(matches!(
        check("jeq r1, 0, +1\n lddw r0, 5\n exit"),
        Err(VerifyError::BadJump(0, 2))
    ));
}

#[test]
fn rejects_division_by_constant_zero() {
    assert_eq!(check("div r0, 0\n exit"), Err(VerifyError::DivByZero(0)));
    assert_eq!(check("mod32 r0, 0\n exit"), Err(VerifyError::DivByZero(0)));
    assert!(
        check("div r0, r2\n exit").is_ok(),
        "a register divisor is allowed"
    );
}

#[test]
fn rejects_empty_and_too_long_programs() {
    assert_eq!(verify(&[]), Err(VerifyError::Empty));
    assert_eq!(verify(&[0; 7]), Err(VerifyError::Empty));
    let long = "mov r0, 0\n".repeat(MAX_INSNS) + "exit";
    assert_eq!(check(&long), Err(VerifyError::TooLong(MAX_INSNS + 1)));
}

#[test]
fn notes_programs_that_read_the_name() {
    assert!(check("mov r1, 0\n call 6\n exit").unwrap().reads_name);
    assert!(!check("call 4\n exit").unwrap().reads_name);
}

#[test]
fn notes_programs_that_touch_the_fib_scratch_or_read_rtts() {
    let v = |src: &str| check(src).unwrap();
    // the FIB scratch is context octets 336..432
    assert!(v("ldxb r0, [r1+336]\n exit").uses_fib_scratch);
    assert!(
        v("ldxdw r0, [r1+424]\n exit").uses_fib_scratch,
        "its last octets"
    );
    assert!(
        v("ldxdw r0, [r1+330]\n exit").uses_fib_scratch,
        "a load overlapping it"
    );
    assert!(v("mov r2, 1\n stxb [r1+400], r2\n exit").uses_fib_scratch);
    // a nexthop picked at run time (80 + 32k, k < 8) stays below it; k < 12 may reach it
    let pick = |mask: u32| {
        format!(
            "ldxdw r2, [r1+8]\n and r2, {mask}\n lsh r2, 5\n add r1, r2\n ldxdw r0, [r1+80]\n exit"
        )
    };
    assert!(!v(&pick(7)).uses_fib_scratch);
    assert!(v(&pick(11)).uses_fib_scratch);
    assert!(!v("ldxw r0, [r1+92]\n ldxdw r0, [r1+432]\n exit").uses_fib_scratch);
    assert!(v("mov r1, 5\n call 8\n exit").reads_rtt);
    assert!(!v("call 4\n exit").reads_rtt);
}
