//! CPU time a thread has used, from `/proc/thread-self/stat`: what "signing cores" means
//! without counting the time a signing thread sat preempted on a busy machine (wall-clock
//! time around each signature counts that too).

/// Clock ticks per second of `/proc` times (USER_HZ, 100 on Linux whatever the kernel's HZ).
const USER_HZ: f64 = 100.0;

/// User plus system CPU seconds the calling thread has used; `None` where `/proc` is missing.
pub fn thread_cpu_secs() -> Option<f64> {
    parse_stat(&std::fs::read_to_string("/proc/thread-self/stat").ok()?)
}

/// utime + stime (fields 14 and 15) of a `stat` line, in seconds. The command name (field 2)
/// is parenthesised and may hold spaces, so fields are counted after its closing parenthesis.
fn parse_stat(stat: &str) -> Option<f64> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some((utime + stime) as f64 / USER_HZ)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_utime_and_stime_after_the_command_name() {
        let line = "4242 (kite perf) S 1 2 3 4 5 6 7 8 9 10 250 50 0 0 20 0 1 0";
        assert_eq!(parse_stat(line), Some(3.0));
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn the_current_thread_has_a_cpu_time() {
        assert!(thread_cpu_secs().is_some());
    }
}
