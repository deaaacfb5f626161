//! What the tests that make network namespaces share: running `ip` (iproute2) and saying why
//! a test skips, past the harness's capture.

use std::io::Write;
use std::process::{Command, Output};

/// Writes past the harness's capture, so a skip shows in every run.
pub fn say(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// `ip ARGS`, whatever its status.
pub fn ip(args: &[&str]) -> Output {
    Command::new("ip")
        .args(args)
        .output()
        .expect("run ip (iproute2)")
}

/// `ip ARGS`, which must succeed.
pub fn ip_ok(args: &[&str]) {
    let out = ip(args);
    assert!(
        out.status.success(),
        "ip {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
