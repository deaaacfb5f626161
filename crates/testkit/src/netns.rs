//! Running `ip` (iproute2), and making a network namespace or skipping the test that needs
//! one where it cannot be made (not root).

use std::process::{Command, Output};

/// `ip ARGS`, whatever its status.
///
/// # Panics
///
/// When `ip` does not run.
pub fn ip(args: &[&str]) -> Output {
    Command::new("ip")
        .args(args)
        .output()
        .expect("run ip (iproute2)")
}

/// `ip ARGS`, which must succeed.
///
/// # Panics
///
/// When `ip` does not run or fails.
pub fn ip_ok(args: &[&str]) {
    let out = ip(args);
    assert!(
        out.status.success(),
        "ip {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Adds network namespace `name`; when that is refused (without root) the running test skips
/// ([`crate::skip()`]) and this returns false.
pub fn add_or_skip(name: &str) -> bool {
    let made = ip(&["netns", "add", name]);
    if !made.status.success() {
        crate::skip(format_args!(
            "cannot create a network namespace (needs root): {}",
            String::from_utf8_lossy(&made.stderr).trim()
        ));
    }
    made.status.success()
}
