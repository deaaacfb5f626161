//! Tests that cannot run here (not root, no network namespaces, a tool or an installation
//! missing) say so with [`skip`] and return. The harness still counts such a test as passed, so
//! [`skip`] also appends a line to the file [`LOG_VAR`] names, when set: `scripts/test.sh`
//! counts those lines, reports them as skipped and takes them off the passed count. Without the
//! variable (a plain `cargo test`) the line is only printed.

use std::collections::BTreeSet;
use std::fmt::Display;
use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;

/// The environment variable naming the file every skip is appended to (`scripts/test.sh`
/// sets it).
pub const LOG_VAR: &str = "KITE_SKIP_LOG";

/// The tests of this process that have been logged as skipped, so a test that gives several
/// reasons counts once.
static LOGGED: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());

/// Writes `line` to stderr past the test harness's capture (it captures only the print
/// macros), so it shows in every run.
pub fn say(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// Says that the running test skips, and why, as `SKIPPED <binary>::<test>: <reason>` (past
/// the harness's capture), and appends that line to the file [`LOG_VAR`] names, once per test.
/// The caller returns from the test afterwards; call it on the test's own thread, whose name
/// is the test's.
///
/// # Panics
///
/// When [`LOG_VAR`] names a file that cannot be appended to: a skip must not go uncounted.
pub fn skip(reason: impl Display) {
    let log = std::env::var_os(LOG_VAR);
    record(
        log.as_deref().map(Path::new),
        &current_test(),
        &reason.to_string(),
    );
}

/// Prints the skip line of `test` and appends it to `log` unless this process logged `test`
/// already.
fn record(log: Option<&Path>, test: &str, reason: &str) {
    let line = line(test, reason);
    say(&line);
    let Some(log) = log else { return };
    let first = LOGGED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(format!("{}\n{test}", log.display()));
    if first {
        // One write of one whole line to a file opened for appending: lines that parallel
        // tests and test binaries append do not interleave.
        let appended = OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .and_then(|mut f| f.write_all(format!("{line}\n").as_bytes()));
        if let Err(e) = appended {
            panic!("cannot append to {LOG_VAR}={}: {e}", log.display());
        }
    }
}

/// The line a skip prints and logs: one line, whatever the reason holds.
fn line(test: &str, reason: &str) -> String {
    let reason = reason.split_whitespace().collect::<Vec<_>>().join(" ");
    format!("SKIPPED {test}: {reason}")
}

/// `<binary>::<test>`: the test binary's name without Cargo's hash, and the running thread's
/// name, which the test harness sets to the test's path.
fn current_test() -> String {
    let exe = std::env::current_exe().ok();
    let binary = exe
        .as_deref()
        .and_then(Path::file_stem)
        .and_then(|s| s.to_str())
        .map_or("?", strip_hash);
    match std::thread::current().name() {
        Some(name) if name != "main" => format!("{binary}::{name}"),
        _ => binary.to_owned(),
    }
}

/// `name` without the `-<16 hex digits>` Cargo appends to a test binary's name.
fn strip_hash(name: &str) -> &str {
    match name.rsplit_once('-') {
        Some((base, hash)) if hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()) => {
            base
        }
        _ => name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(path: &Path) -> Vec<String> {
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn the_line_is_one_line_in_a_fixed_format() {
        assert_eq!(
            line("e2e_x::t", "needs\n  root:\tno"),
            "SKIPPED e2e_x::t: needs root: no"
        );
    }

    #[test]
    fn cargo_s_hash_comes_off_the_binary_name() {
        assert_eq!(strip_hash("e2e_ether-0123456789abcdef"), "e2e_ether");
        assert_eq!(strip_hash("kite_face-0123456789abcdef"), "kite_face");
        assert_eq!(strip_hash("e2e-tools"), "e2e-tools");
        assert_eq!(strip_hash("plain"), "plain");
    }

    #[test]
    fn the_test_is_named_by_its_binary_and_its_thread() {
        let name = current_test();
        assert!(
            name.starts_with("kite_testkit::") || name == "kite_testkit",
            "{name}"
        );
        let named = std::thread::Builder::new()
            .name("suite::a_test".into())
            .spawn(current_test)
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(named, "kite_testkit::suite::a_test");
    }

    /// Parallel threads each log their skip as one whole line; a second reason of the same
    /// test is printed but not logged again.
    #[test]
    fn parallel_skips_append_one_whole_line_per_test() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("skips");
        let threads: Vec<_> = (0..16)
            .map(|k| {
                let log = log.clone();
                std::thread::spawn(move || {
                    let reason = format!("reason {k} {}", "x".repeat(2000));
                    record(Some(&log), &format!("bin::t{k}"), &reason);
                    record(Some(&log), &format!("bin::t{k}"), "a second reason");
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let mut got = lines(&log);
        got.sort();
        let mut want: Vec<_> = (0..16)
            .map(|k| {
                line(
                    &format!("bin::t{k}"),
                    &format!("reason {k} {}", "x".repeat(2000)),
                )
            })
            .collect();
        want.sort();
        assert_eq!(got, want);
    }

    /// The public entry point: with the variable set the running test is logged once; without
    /// it nothing is written (the line is only printed). The only test here that reads the
    /// variable, so setting it races with no other.
    #[test]
    fn skip_logs_to_the_file_the_variable_names() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("skips");
        std::env::set_var(LOG_VAR, &log);
        skip("not root");
        skip(format_args!("again: {}", 2));
        std::env::remove_var(LOG_VAR);
        skip("printed only");
        assert_eq!(
            lines(&log),
            [
                "SKIPPED kite_testkit::skip::tests::skip_logs_to_the_file_the_variable_names: \
              not root"
            ]
        );
    }

    #[test]
    fn an_unwritable_log_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("no-such-dir/skips");
        let err = std::panic::catch_unwind(|| record(Some(&log), "bin::t", "why")).unwrap_err();
        let msg = err.downcast_ref::<String>().unwrap();
        assert!(msg.starts_with("cannot append to KITE_SKIP_LOG="), "{msg}");
    }
}
