//! `kite bench daemon`: the whole forwarder (I/O thread, forwarding threads, rings, parking)
//! started in-process, loaded through real unix sockets by a consumer with a fixed window and
//! a producer that answers every Interest. Reports exchanges per second; `--spin` runs the
//! same with parking disabled, to measure what sleeping when idle costs under load.
//! `--forwarder PATH` loads an already running forwarder (Kite, NFD, NDNd) through its unix
//! socket instead, registering the prefix with NFD's management protocol, so the same load
//! measures them side by side.

use std::io::Write;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context, Result};
use bytes::Bytes;
use clap::Args;
use kite_fw::fib::{FibConfig, FibWriter};
use kite_fw::hash::NameHasher;
use kite_fw::runtime::{Runtime, RuntimeConfig};
use kite_fw::strategy::StrategyTable;
use kite_packet::{Data, Interest, LpHeader, LpPacket, Name, NetPacketView, Nonce};
use serde_json::json;

use crate::frames::FrameSource;

/// How long a read waits for the forwarder before the benchmark gives up.
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
    #[arg(long, default_value = "5s", value_parser = crate::bench::parse_duration)]
    duration: Duration,
    /// Never park idle threads (busy-poll), for comparison with the default.
    #[arg(long, conflicts_with = "forwarder")]
    spin: bool,
    /// Measure the forwarder already listening on this unix socket (Kite, NFD or NDNd)
    /// instead of starting Kite in-process; the producer registers its prefix with a
    /// rib/register command. --threads and --spin then belong to that forwarder's own
    /// configuration.
    #[arg(long, value_name = "SOCKET")]
    forwarder: Option<PathBuf>,
    /// Print one JSON object as the last line (for scripts).
    #[arg(long)]
    json: bool,
}

fn connect(path: &Path) -> Result<UnixStream> {
    let s = UnixStream::connect(path).with_context(|| format!("connect {}", path.display()))?;
    s.set_read_timeout(Some(READ_TIMEOUT))?;
    Ok(s)
}

/// Answers every Interest with a Data echoing its token, writing in batches.
fn produce(mut input: FrameSource, mut output: UnixStream, payload: usize) -> Result<()> {
    let content = Bytes::from(vec![0x5A; payload]);
    let mut batch = Vec::with_capacity(64 * 1024);
    loop {
        let frame = match input.next_blocking() {
            Ok(f) => f,
            Err(_) => return Ok(()),
        };
        let lp = LpPacket::decode(frame)?;
        let Some(fragment) = lp.fragment else {
            continue;
        };
        let NetPacketView::Interest(i) = NetPacketView::decode(fragment)? else {
            continue;
        };
        let mut d = Data::new(i.name.clone(), content.clone());
        d.meta.freshness_period = Some(0);
        let data = d.encode();
        let header = LpHeader {
            pit_token: lp.header.pit_token,
            ..LpHeader::default()
        };
        header.encode_header(Some(data.len()), &mut batch);
        batch.extend_from_slice(&data);
        if !input.buffered() || batch.len() > 48 * 1024 {
            output.write_all(&batch)?;
            batch.clear();
        }
    }
}

/// What the consumer got back.
#[derive(Default)]
struct Tally {
    data: u64,
    nacks: u64,
}

impl Tally {
    fn count(&mut self, frame: Bytes) -> Result<()> {
        if LpPacket::decode(frame)?.header.nack.is_some() {
            self.nacks += 1;
        } else {
            self.data += 1;
        }
        Ok(())
    }
}

/// Keeps `window` Interests outstanding under `prefix` for `duration`; a Nack frees its slot
/// like a Data does.
fn consume(
    mut input: FrameSource,
    mut output: UnixStream,
    prefix: &Name,
    window: usize,
    duration: Duration,
) -> Result<Tally> {
    let interest = |seq: u64| {
        let mut i = Interest::new(prefix.clone().append_generic(seq.to_string().as_bytes()));
        i.nonce = Some(Nonce::from(seq as u32));
        i.lifetime = Some(4000);
        i.encode()
    };
    let mut seq = 0u64;
    let mut batch = Vec::new();
    for _ in 0..window {
        batch.extend_from_slice(&interest(seq));
        seq += 1;
    }
    output.write_all(&batch)?;
    let start = Instant::now();
    let mut tally = Tally::default();
    while start.elapsed() < duration {
        tally.count(input.next_blocking()?)?;
        batch.clear();
        batch.extend_from_slice(&interest(seq));
        seq += 1;
        while input.buffered() {
            tally.count(input.next_blocking()?)?;
            batch.extend_from_slice(&interest(seq));
            seq += 1;
        }
        output.write_all(&batch)?;
    }
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
    /// Starts it and connects the producer; returns the producer's and consumer's sockets.
    fn start(a: &DaemonArgs, prefix: &Name) -> Result<(InProcess, UnixStream, UnixStream)> {
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
            unix_socket: Some(path.clone()),
            spin_when_idle: a.spin,
            ..RuntimeConfig::default()
        };
        config.forwarder.cs_admit = false;
        let runtime = Runtime::start(config, readers, strategies, hasher)?;
        let handle = runtime.handle();
        let producer = connect(&path)?;
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
        let consumer = connect(&path)?;
        wait_for(2)?;
        Ok((
            InProcess {
                runtime,
                _fib: fib,
                dir,
            },
            producer,
            consumer,
        ))
    }

    fn stop(self) {
        self.runtime.shutdown();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Connects the producer and consumer to the forwarder at `path`, the producer registering
/// `prefix` for its own face.
fn attach(path: &Path, prefix: &Name) -> Result<(UnixStream, UnixStream)> {
    let mut client = kite_app::Client::connect_unix(path)
        .with_context(|| format!("connect {}", path.display()))?;
    let params = kite_mgmt::ControlParameters {
        name: Some(prefix.clone()),
        ..Default::default()
    };
    client
        .command_ok("rib", "register", &params, Duration::from_secs(5))
        .context("registering the producer's prefix")?;
    let producer = client
        .into_unix_stream()
        .ok_or_else(|| anyhow!("the registration left unread packets on the producer's socket"))?;
    producer.set_read_timeout(Some(READ_TIMEOUT))?;
    Ok((producer, connect(path)?))
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
        Some(path) => {
            let (p, c) = attach(path, &prefix)?;
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
        .map_or_else(|| "in-process Kite".to_owned(), |p| p.display().to_string());
    eprintln!(
        "kite bench daemon: {target}, window {}, {} B payload, {}, {:?}",
        a.window,
        a.payload,
        match (&a.forwarder, a.spin) {
            (Some(_), _) => "its own thread settings".to_owned(),
            (None, spin) => format!(
                "{} forwarding thread(s), {} idle threads",
                a.threads,
                if spin { "spinning" } else { "parking" }
            ),
        },
        a.duration
    );
    let p_in = FrameSource::new(producer.try_clone()?, READ_TIMEOUT)?;
    let payload = a.payload;
    let producer_end = producer.try_clone()?;
    let prod = std::thread::spawn(move || produce(p_in, producer, payload));
    let c_in = FrameSource::new(consumer.try_clone()?, READ_TIMEOUT)?;
    let start = Instant::now();
    let tally = consume(c_in, consumer, &prefix, a.window, a.duration)?;
    let secs = start.elapsed().as_secs_f64();
    // Ends the producer's read at once rather than at its timeout.
    let _ = producer_end.shutdown(std::net::Shutdown::Both);
    if let Some(f) = in_process {
        f.stop();
    }
    let _ = prod.join();
    let received = tally.data;
    let rate = received as f64 / secs;
    let text = format!(
        "{rate:.0} exchanges/s through {target} ({received} Data, {} Nacks in {secs:.1} s)\n",
        tally.nacks
    );
    let summary = json!({
        "benchmark": "daemon",
        "forwarder": target,
        "exchanges_per_sec": rate.round(),
        "received": received,
        "nacks": tally.nacks,
        "seconds": secs,
        "window": a.window,
        "payload": a.payload,
        "threads": a.threads,
        "spin": a.spin,
    });
    Ok(if a.json {
        format!("{text}{summary}\n")
    } else {
        text
    })
}
