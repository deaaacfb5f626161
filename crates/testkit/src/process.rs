//! Programs a test runs to the end.

use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Waits up to `limit` for `child` to exit; kills it when it does not. Whether it exited.
pub fn reap(child: &mut Child, limit: Duration) -> bool {
    let until = Instant::now() + limit;
    while Instant::now() < until {
        if let Ok(Some(_)) = child.try_wait() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    false
}

/// Runs `cmd` (stdin closed, the output captured), which must stop by itself within `limit`.
///
/// # Panics
///
/// When it does not start, or runs longer (it is killed then).
pub fn run_to_exit(cmd: &mut Command, limit: Duration) -> Output {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("start {cmd:?}: {e}"));
    assert!(reap(&mut child, limit), "{cmd:?} kept running");
    child.wait_with_output().expect("its output")
}

/// The standard output of a program that must have succeeded.
///
/// # Panics
///
/// When it failed (with its standard error), or wrote other than UTF-8.
pub fn stdout(o: &Output) -> String {
    assert!(
        o.status.success(),
        "it failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout.clone()).unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_that_stops_gives_its_output() {
        let out = run_to_exit(
            Command::new("sh").args(["-c", "echo out; echo err >&2"]),
            Duration::from_secs(20),
        );
        assert_eq!(stdout(&out), "out\n");
        assert_eq!(out.stderr, b"err\n");
    }

    #[test]
    fn a_program_that_keeps_running_is_killed() {
        let mut child = Command::new("sleep").arg("30").spawn().unwrap();
        assert!(!reap(&mut child, Duration::from_millis(100)));
        assert!(child.try_wait().unwrap().is_some(), "killed and reaped");
    }

    #[test]
    #[should_panic(expected = "it failed: no")]
    fn the_output_of_a_failure_is_refused() {
        let _ = stdout(
            &Command::new("sh")
                .args(["-c", "echo no >&2; exit 3"])
                .output()
                .unwrap(),
        );
    }
}
