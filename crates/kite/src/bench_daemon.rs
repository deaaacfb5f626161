//! `kite bench daemon`: the whole forwarder (I/O thread, forwarding threads, rings, parking)
//! started in-process, loaded through real unix sockets by a consumer with a fixed window and
//! a producer that answers every Interest. Reports exchanges (Data) per second and goodput;
//! `--spin` runs the same with parking disabled, to measure what sleeping when idle costs under
//! load. `--forwarder SOCKET` or `--forwarder udp://HOST:PORT` loads an already running
//! forwarder (Kite, NFD, NDNd) through its unix socket or its UDP listener instead, registering
//! the prefix with NFD's management protocol, so the same load measures them side by side.

mod answer;
mod attach;
pub mod flood;
mod socket;
mod window;

use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Result};
use clap::Args;
use kite_fw::fib::{FibConfig, FibWriter};
use kite_fw::hash::NameHasher;
use kite_fw::strategy::StrategyTable;
use kite_packet::{LpHeader, LpPacket, Name, NetPacketView};
use kite_runtime::{Runtime, RuntimeConfig};
use serde_json::json;

use answer::Answer;
use attach::Target;
use socket::{LoadSocket, Recv};
use window::Window;

/// How long the consumer waits for anything from the forwarder before giving up.
const READ_TIMEOUT: Duration = Duration::from_secs(5);

/// Parameters of `kite bench daemon`.
#[derive(Args)]
pub struct DaemonArgs {
    /// Interests the consumer keeps outstanding.
    #[arg(long, default_value_t = 64)]
    window: usize,
    /// Content octets per Data.
    #[arg(long, default_value_t = 1000)]
    payload: usize,
    /// Forwarding threads.
    #[arg(long, default_value_t = 1)]
    threads: u8,
    /// How long to measure, e.g. 10s, 500ms.
    #[arg(long, default_value = "5s", value_parser = crate::duration::parse_duration)]
    duration: Duration,
    /// Never park idle threads (busy-poll), for comparison with the default.
    #[arg(long, conflicts_with = "forwarder")]
    spin: bool,
    /// Run the forwarding shards in the I/O thread (`kite run --inline`); `--inline false`
    /// gives them threads of their own. Default: as `kite run` (on with two cores or fewer).
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true",
        conflicts_with = "forwarder")]
    inline: Option<bool>,
    /// Measure the forwarder already running (Kite, NFD or NDNd) instead of starting Kite
    /// in-process: its unix socket (a path or unix://PATH), where the producer registers its
    /// prefix with a rib/register command; or its UDP listener (udp://HOST:PORT), where the
    /// consumer and the producer each get an on-demand face from their own socket and the
    /// prefix is registered for the producer's face through --control. --threads, --spin and
    /// --inline then belong to that forwarder's own configuration.
    #[arg(long, value_name = "SOCKET|URI", value_parser = Target::parse)]
    forwarder: Option<Target>,
    /// The forwarder's unix socket for management, with a udp:// --forwarder (default: the
    /// sockets `kite status` tries).
    #[arg(long, value_name = "SOCKET", requires = "forwarder")]
    control: Option<PathBuf>,
    /// Print one JSON object on standard output and nothing else (the human summary goes to
    /// standard error), for scripts.
    #[arg(long)]
    json: bool,
}

/// Answers every Interest with a Data echoing its PIT token, until `stop` is set and no
/// Interest came for a tick, or the forwarder closes the connection.
fn produce(mut link: LoadSocket, payload: usize, stop: &AtomicBool) -> Result<()> {
    let answer = Answer::new(payload);
    let mut head = Vec::new();
    loop {
        let lp = match link.recv()? {
            Recv::Packet(lp) => lp,
            Recv::Idle if stop.load(Ordering::Relaxed) => return Ok(()),
            Recv::Idle => continue,
            Recv::Closed => return Ok(()),
        };
        let Some(fragment) = lp.fragment else {
            continue;
        };
        if lp.header.nack.is_some() {
            continue;
        }
        let NetPacketView::Interest(i) = NetPacketView::decode(fragment)? else {
            continue;
        };
        head.clear();
        answer.head(&i.name, &mut head);
        let header = LpHeader {
            pit_token: lp.header.pit_token,
            ..LpHeader::default()
        };
        link.send_split(&header, &head, answer.tail());
        link.flush_if_due()?;
    }
}

/// What the consumer got back.
#[derive(Default)]
struct Tally {
    data: u64,
    nacks: u64,
    /// Interests given up as lost (UDP drops datagrams when a socket buffer fills).
    lost: u64,
    /// Data that came after its Interest was given up (a loss timeout that fired too early).
    late: u64,
    /// NDNLPv2 fragments the consumer reassembled Data from.
    fragments: u64,
}

impl Tally {
    /// Counts one packet; `true` when it answered an outstanding Interest (its slot is free).
    fn count(&mut self, lp: LpPacket, window: &mut Window, now: Instant) -> Result<bool> {
        let Some(fragment) = lp.fragment else {
            return Ok(false);
        };
        Ok(match NetPacketView::decode(fragment)? {
            NetPacketView::Interest(i) if lp.header.nack.is_some() => {
                self.nacks += 1;
                window.answered(&i.name, now)
            }
            NetPacketView::Interest(_) => false,
            NetPacketView::Data(d) => {
                self.data += 1;
                let freed = window.answered(&d.name, now);
                self.late += u64::from(!freed);
                freed
            }
        })
    }
}

/// Keeps `window` Interests outstanding under `prefix` for `duration`; a Data or a Nack frees
/// its slot, and so does giving the Interest up as lost.
fn consume(
    mut link: LoadSocket,
    prefix: &Name,
    window: usize,
    duration: Duration,
) -> Result<Tally> {
    let mut w = Window::new(prefix.clone());
    let now = Instant::now();
    for _ in 0..window {
        link.send(&w.next_interest(now))?;
    }
    link.flush()?;
    let start = Instant::now();
    let mut heard = start;
    let mut tally = Tally::default();
    let mut now = start;
    while now.duration_since(start) < duration {
        let got = link.recv()?;
        now = Instant::now();
        match got {
            Recv::Packet(lp) => {
                heard = now;
                if tally.count(lp, &mut w, now)? {
                    link.send(&w.next_interest(now))?;
                }
            }
            Recv::Idle if heard.elapsed() > READ_TIMEOUT => {
                bail!("nothing from the forwarder for {READ_TIMEOUT:?}")
            }
            Recv::Idle => {}
            Recv::Closed => bail!("the forwarder closed the connection"),
        }
        for _ in 0..w.expire(now) {
            tally.lost += 1;
            link.send(&w.next_interest(now))?;
        }
        link.flush_if_due()?;
    }
    tally.fragments = link.fragments();
    Ok(tally)
}

/// Kite's whole forwarder started in this process, with the producer's route in its FIB.
struct InProcess {
    runtime: Runtime,
    /// Kept while the forwarder runs: readers see no FIB once the writer is gone.
    _fib: FibWriter,
    dir: PathBuf,
}

impl InProcess {
    /// Starts it and connects the producer; returns the producer's and consumer's links.
    fn start(a: &DaemonArgs, prefix: &Name) -> Result<(InProcess, LoadSocket, LoadSocket)> {
        let dir = std::env::temp_dir().join(format!("kite-bench-{}", std::process::id()));
        let path = dir.join("kite.sock");
        let hasher = NameHasher::random();
        let strategies = StrategyTable::builtin();
        let best = strategies
            .find(&"/localhost/nfd/strategy/best-route".parse()?)
            .map_err(|_| anyhow!("best-route is built in"))?;
        let (mut fib, readers) = FibWriter::new(hasher, FibConfig::default(), best);
        let mut config = RuntimeConfig {
            forwarding_threads: a.threads,
            listeners: vec![std::sync::Arc::new(kite_face::unix::Listen(path.clone()))],
            spin_when_idle: a.spin,
            inline_forwarding: a.inline.unwrap_or_else(crate::run::default_inline),
            ..RuntimeConfig::default()
        };
        config.forwarder.cs_admit = false;
        let runtime = Runtime::start(config, readers, strategies, hasher)?;
        let handle = runtime.handle();
        let producer = UnixStream::connect(&path)?;
        let wait_for = |n: usize| -> Result<Vec<_>> {
            let t = Instant::now();
            loop {
                let faces = handle.faces();
                if faces.len() >= n {
                    return Ok(faces);
                }
                if t.elapsed() > Duration::from_secs(5) {
                    return Err(anyhow!("the forwarder did not accept the connection"));
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        };
        let producer_face = wait_for(1)?[0].id;
        fib.add_nexthop(prefix, producer_face, 1)?;
        fib.publish();
        let consumer = UnixStream::connect(&path)?;
        wait_for(2)?;
        Ok((
            InProcess {
                runtime,
                _fib: fib,
                dir,
            },
            LoadSocket::stream(producer)?,
            LoadSocket::stream(consumer)?,
        ))
    }

    fn stop(self) {
        self.runtime.shutdown();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Runs the benchmark.
pub fn run(a: DaemonArgs) -> Result<String> {
    if a.window == 0 || a.threads == 0 {
        return Err(anyhow!("--window and --threads must be at least 1"));
    }
    // A name no earlier run used, so no forwarder answers from its cache.
    let run_id = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let prefix = Name::root()
        .append_generic(b"bench")
        .append_generic(run_id.to_string().as_bytes());
    let (in_process, producer, consumer) = match &a.forwarder {
        Some(t) => {
            let (p, c) = t.attach(a.control.as_deref(), &prefix)?;
            (None, p, c)
        }
        None => {
            let (f, p, c) = InProcess::start(&a, &prefix)?;
            (Some(f), p, c)
        }
    };
    let target = a
        .forwarder
        .as_ref()
        .map_or_else(|| "in-process Kite".to_owned(), Target::to_string);
    let transport = a.forwarder.as_ref().map_or("unix", Target::transport);
    let inline = a
        .forwarder
        .is_none()
        .then(|| a.inline.unwrap_or_else(crate::run::default_inline));
    eprintln!(
        "kite bench daemon: {target}, window {}, {} B payload, {}, {:?}",
        a.window,
        a.payload,
        match (&a.forwarder, a.spin) {
            (Some(_), _) => "its own thread settings".to_owned(),
            (None, spin) => format!(
                "{} forwarding shard(s) {}, {} idle threads",
                a.threads,
                if inline == Some(true) {
                    "in the I/O thread"
                } else {
                    "in threads of their own"
                },
                if spin { "spinning" } else { "parking" }
            ),
        },
        a.duration
    );
    let payload = a.payload;
    let stop = Arc::new(AtomicBool::new(false));
    let prod = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || produce(producer, payload, &stop))
    };
    let start = Instant::now();
    let tally = consume(consumer, &prefix, a.window, a.duration);
    let secs = start.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    if let Some(f) = in_process {
        f.stop();
    }
    let produced = prod
        .join()
        .map_err(|_| anyhow!("the producer thread panicked"))?;
    let tally = match (tally, produced) {
        (Ok(t), _) => t,
        (Err(e), Err(p)) => return Err(e.context(format!("the producer failed: {p:#}"))),
        (Err(e), Ok(())) => return Err(e),
    };
    let received = tally.data;
    let rate = received as f64 / secs;
    let goodput = rate * a.payload as f64 * 8.0 / 1e6;
    let text = format!(
        "{rate:.0} exchanges/s, {goodput:.0} Mbit/s of content through {target} ({received} \
         Data, {} Nacks, {} lost ({} answered late), {} fragments in {secs:.1} s)\n",
        tally.nacks, tally.lost, tally.late, tally.fragments
    );
    let summary = json!({
        "benchmark": "daemon",
        "forwarder": target,
        "transport": transport,
        "exchanges_per_sec": rate.round(),
        "goodput_mbit_per_sec": (goodput * 10.0).round() / 10.0,
        "received": received,
        "nacks": tally.nacks,
        "lost": tally.lost,
        "late": tally.late,
        "fragments": tally.fragments,
        "seconds": secs,
        "window": a.window,
        "payload": a.payload,
        "threads": a.threads,
        "spin": a.spin,
        "inline": inline,
    });
    Ok(if a.json {
        // Standard output carries the JSON alone; the human line goes to standard error.
        eprint!("{text}");
        format!("{summary}\n")
    } else {
        text
    })
}
