//! Programs a test runs to the end, and the processor time a process used.

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

/// The processor time process `pid` used so far (user and system), in clock ticks
/// (`getconf CLK_TCK` a second), from `/proc/PID/stat`.
///
/// # Panics
///
/// When the process is gone or its stat line is not Linux's.
pub fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("read /proc stat");
    stat_ticks(&stat)
}

/// utime + stime of a `/proc/PID/stat` line: fields 14 and 15, counted after the command
/// name, which is in parentheses and may hold spaces and parentheses itself.
fn stat_ticks(stat: &str) -> u64 {
    let rest = &stat[stat.rfind(')').expect("comm") + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_ticks_add_user_and_system_time_past_any_command_name() {
        let stat = "4242 (kite (io) 1) S 1 4242 4242 0 -1 4194560 900 0 0 0 17 5 0 0 20 0 3";
        assert_eq!(stat_ticks(stat), 22);
        let me = cpu_ticks(std::process::id());
        assert!(cpu_ticks(std::process::id()) >= me);
    }

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
