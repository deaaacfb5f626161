//! `scripts/test-summary.sh`, the end of `scripts/test.sh`: on the output of two test binaries
//! (one failing) and the skips they logged, it lists the skipped tests with their reasons and
//! counts them as skipped, not passed.

use std::process::Command;

const LOG: &str = "\
     Running tests/e2e_ndnd.rs (target/debug/deps/e2e_ndnd-0123456789abcdef)

running 3 tests
SKIPPED e2e_ndnd::a: KITE_NDND is not set
SKIPPED e2e_ndnd::b: KITE_NDND is not set
test a ... ok
test b ... ok
test c ... ok

test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s

     Running tests/e2e_ether.rs (target/debug/deps/e2e_ether-0123456789abcdef)

running 4 tests
a test that printed: 2 failed attempts, 9 passed
test d ... ok
test e ... FAILED
test f ... ok
test g ... ok

test result: FAILED. 3 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 1.20s
error: 1 target failed:
";

fn summary(log: &str, skips: Option<&str>) -> String {
    let dir = tempfile::tempdir().unwrap();
    let (log_path, skips_path) = (dir.path().join("log"), dir.path().join("skips"));
    std::fs::write(&log_path, log).unwrap();
    if let Some(s) = skips {
        std::fs::write(&skips_path, s).unwrap();
    }
    let script = kite_testkit::pyndn::workspace().join("scripts/test-summary.sh");
    let out = Command::new("bash")
        .args([&script, &log_path, &skips_path])
        .output()
        .expect("run bash");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn skipped_tests_are_listed_and_not_counted_as_passed() {
    let skips = "SKIPPED e2e_ndnd::a: KITE_NDND is not set\n\
                 SKIPPED e2e_ether::d: cannot create a network namespace (needs root): denied\n";
    assert_eq!(
        summary(LOG, Some(skips)),
        "skipped (2):\n  \
         e2e_ndnd::a: KITE_NDND is not set\n  \
         e2e_ether::d: cannot create a network namespace (needs root): denied\n\
         tests: 4 passed, 1 failed, 2 skipped\n"
    );
}

#[test]
fn without_skips_every_pass_counts() {
    assert_eq!(
        summary(LOG, Some("")),
        "tests: 6 passed, 1 failed, 0 skipped\n"
    );
    assert_eq!(summary(LOG, None), "tests: 6 passed, 1 failed, 0 skipped\n");
}
