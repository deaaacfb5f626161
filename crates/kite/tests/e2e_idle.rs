//! An idle `kite run` uses (almost) no CPU: with unix, UDP and TCP listeners open and one
//! python-ndn app connected, its threads park instead of polling. A short, loose check
//! (3% of a core over 3 s); `bench/idle.sh` measures against the target (< 0.5% over 30 s).
//! Ignored by a plain `cargo test`; `scripts/test.sh` runs it.

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::{free_tcp_port, free_udp_port, Daemon, Producer};
use kite_testkit::process::cpu_ticks;

fn ticks_per_second() -> u64 {
    let out = Command::new("getconf").arg("CLK_TCK").output();
    out.ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(100)
}

#[test]
#[ignore = "needs python-ndn: scripts/test.sh runs it"]
fn idle_daemon_uses_under_three_percent_of_a_core() {
    let kite = Daemon::loopback(free_udp_port(), free_tcp_port());
    let _app = Producer::start(kite.socket(), "/idle", &[]);
    std::thread::sleep(Duration::from_secs(1));

    let before = cpu_ticks(kite.pid());
    let start = Instant::now();
    std::thread::sleep(Duration::from_secs(3));
    let used = cpu_ticks(kite.pid()) - before;
    let wall = start.elapsed().as_secs_f64();
    let share = used as f64 / ticks_per_second() as f64 / wall;
    assert!(
        share < 0.03,
        "idle kite run used {:.2}% of a core ({used} ticks in {wall:.2} s)",
        share * 100.0
    );
}
