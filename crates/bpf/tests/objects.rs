//! The programs shipped in `strategies/` load, and match their sources when clang is here.

use std::process::Command;

use kite_bpf::{elf::ElfError, Engine, LoadError};
use kite_testkit::forwarder::strategies_dir;

const PROGRAMS: [&str; 4] = ["best-route", "multicast", "round-robin", "fastest"];

fn clang() -> bool {
    Command::new("clang")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn every_shipped_program_loads_in_both_engines() {
    for p in PROGRAMS {
        let elf = std::fs::read(strategies_dir().join(format!("{p}.o"))).unwrap();
        for engine in [Engine::Jit, Engine::Interpreter] {
            kite_bpf::load(p, &elf, engine).unwrap_or_else(|e| panic!("{p}: {e}"));
        }
    }
}

#[test]
fn only_programs_that_keep_fib_state_or_read_rtts_pay_for_the_fib_area() {
    for (p, uses) in [
        ("best-route", false),
        ("multicast", false),
        ("round-robin", true),
        ("fastest", true),
    ] {
        let elf = std::fs::read(strategies_dir().join(format!("{p}.o"))).unwrap();
        let s = kite_bpf::load(p, &elf, Engine::Jit).unwrap();
        assert_eq!(s.uses_fib_area(), uses, "{p}");
    }
}

#[test]
fn shipped_objects_match_their_sources() {
    if !clang() {
        kite_testkit::skip(
            "clang is not installed: not rebuilding strategies/*.o (scripts/test.sh installs it)",
        );
        return;
    }
    let out = tempfile::tempdir().unwrap();
    for p in PROGRAMS {
        let built = out.path().join(format!("{p}.o"));
        let status = Command::new("make")
            .arg("-s")
            .arg("-C")
            .arg(strategies_dir())
            .arg(&built)
            .arg(format!("OUT={}", out.path().display()))
            .status()
            .unwrap();
        assert!(status.success(), "make {p}");
        let shipped = std::fs::read(strategies_dir().join(format!("{p}.o"))).unwrap();
        assert_eq!(
            std::fs::read(&built).unwrap(),
            shipped,
            "strategies/{p}.o is stale: run make -C strategies"
        );
    }
}

#[test]
fn extern_helpers_are_resolved_from_relocations_and_globals_refused() {
    if !clang() {
        kite_testkit::skip("clang is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let compile = |src: &str| {
        let c = dir.path().join("p.c");
        let o = dir.path().join("p.o");
        std::fs::write(&c, src).unwrap();
        let ok = Command::new("clang")
            .args(["-O2", "-target", "bpf", "-c"])
            .arg(&c)
            .arg("-o")
            .arg(&o)
            .status()
            .unwrap()
            .success();
        assert!(ok);
        std::fs::read(o).unwrap()
    };
    let externs = compile(
        "extern long kite_forward_interest(unsigned long long face);
         __attribute__((section(\"strategy\"), used)) int p(void *ctx) {
             kite_forward_interest(400); return 0; }",
    );
    let code = kite_bpf::elf::program(&externs).unwrap();
    assert_eq!(code[0..8].len(), 8);
    let call = code.chunks(8).find(|i| i[0] == 0x85).unwrap();
    assert_eq!(i32::from_le_bytes(call[4..8].try_into().unwrap()), 1);
    kite_bpf::load("p", &externs, Engine::Jit).unwrap();

    let global = compile(
        "long counter;
         __attribute__((section(\"strategy\"), used)) int p(void *ctx) { counter++; return 0; }",
    );
    assert!(matches!(
        kite_bpf::load("p", &global, Engine::Jit),
        Err(LoadError::Elf(ElfError::Relocation(..)))
    ));

    let unknown = compile(
        "extern long bpf_map_lookup_elem(unsigned long long);
         __attribute__((section(\"strategy\"), used)) int p(void *ctx) { return bpf_map_lookup_elem(1); }",
    );
    assert!(matches!(
        kite_bpf::load("p", &unknown, Engine::Jit),
        Err(LoadError::Elf(ElfError::Relocation(..)))
    ));

    let nosection = compile("int p(void *ctx) { return 0; }");
    assert_eq!(
        kite_bpf::load("p", &nosection, Engine::Jit).err(),
        Some(LoadError::Elf(ElfError::NoProgram))
    );
}

#[test]
fn bad_objects_and_names_are_refused() {
    assert!(matches!(
        kite_bpf::load("p", b"not an elf", Engine::Jit),
        Err(LoadError::Elf(ElfError::NotBpf(_)))
    ));
    let elf = std::fs::read(strategies_dir().join("best-route.o")).unwrap();
    for bad in ["", "a/b", "v=1"] {
        assert!(matches!(
            kite_bpf::load(bad, &elf, Engine::Jit),
            Err(LoadError::BadName(_))
        ));
    }
}
