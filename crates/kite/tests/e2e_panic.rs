//! `kite run`'s panic policy: a panic in any of its threads ends the whole process with a
//! non-zero status and the panic (thread, location, message) in its log, so a supervisor
//! (systemd `Restart=on-failure`) restarts it; a daemon never stays up with a dead thread.
//! The restart finds the unix socket file the dead daemon left behind and replaces it.
//!
//! The panics are injected through the debug build's `KITE_FAULT_PANIC` hook
//! (crates/fw/src/fault.rs): the I/O thread, or a forwarding thread, panics on an Interest
//! whose first component is `kite-fault-panic`.

mod common;

use std::path::Path;
use std::time::Duration;

use common::peer::{interest, Conn};
use common::Daemon;

const WAIT: Duration = Duration::from_secs(10);

/// Rust's exit status for a panic, which `kite run` keeps.
const PANIC_STATUS: i32 = 101;

/// Starts a daemon whose `stage` panics on the trigger, sends the trigger, and checks the
/// daemon exits with the panic of thread `thread` in its log, then restarts it.
fn panic_ends_the_process(stage: &str, extra: &[&str], thread: &str) {
    let mut args = vec!["--local-only".to_string()];
    args.extend(extra.iter().map(|s| s.to_string()));
    let mut kite = Daemon::start_with_env(&[], &[("KITE_FAULT_PANIC", stage)], &args);
    common::ctl::ok(kite.socket(), &["status"]);

    Conn::unix(kite.socket()).send(&interest("/kite-fault-panic/now", 1000));
    let status = kite.exited(WAIT).unwrap_or_else(|| {
        panic!(
            "the daemon is still running after a panic in {thread}: {}",
            kite.log_text()
        )
    });
    assert_eq!(status.code(), Some(PANIC_STATUS), "{status}");
    let log = kite.log_text();
    let error = log
        .lines()
        .find(|l| l.contains("ERROR") && l.contains("panic"))
        .unwrap_or_else(|| panic!("no tracing error for the panic in {log}"));
    assert!(error.contains(&format!("thread=\"{thread}\"")), "{error}");
    assert!(error.contains("location="), "{error}");
    assert!(error.contains("KITE_FAULT_PANIC"), "{error}");
    assert!(
        log.contains(&format!("thread '{thread}'")) && log.contains("panicked at"),
        "the standard panic message on stderr: {log}"
    );

    assert!(
        Path::new(kite.socket()).exists(),
        "the dead daemon's socket file is still there"
    );
    kite.restart();
    common::ctl::ok(kite.socket(), &["status"]);
    let mut producer = Conn::unix(kite.socket());
    producer.register("/after");
    let mut consumer = Conn::unix(kite.socket());
    consumer.send(&interest("/after/restart", 1000));
    let (_, asked) = producer.recv_interest(WAIT);
    assert_eq!(
        asked.name.to_string(),
        "/after/restart",
        "the restarted daemon forwards"
    );
}

#[test]
fn a_panic_in_the_io_thread_ends_kite_run() {
    panic_ends_the_process("io", &["--inline", "true"], "kite-io");
}

#[test]
fn a_panic_in_an_inline_forwarding_shard_ends_kite_run() {
    panic_ends_the_process("fwd", &["--inline", "true"], "kite-io");
}

#[test]
fn a_panic_in_a_forwarding_thread_ends_kite_run() {
    panic_ends_the_process("fwd", &["--inline", "false"], "kite-fwd0");
}
