//! `kite perf server`: the socket reader hands each Interest's name and PIT token to N signing
//! threads through a bounded queue; each signs a fresh Data (or, with `--cached`, reuses the
//! one it signed for that name) and hands it to one writer, which writes in batches.

use std::collections::HashMap;
use std::io::Write;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Result};
use bytes::Bytes;
use clap::Args;
use crossbeam_channel::{bounded, Receiver, Sender};
use kite_packet::{Data, LpHeader, LpPacket, Name, NetPacketView, PitToken};
use kite_security::KeySigner;

use super::link;
use crate::frames::{Fill, FrameSource};
use crate::sign_args::SignArgs;

/// Interests waiting for a signer, and signed Data waiting for the writer.
const QUEUE: usize = 4096;
/// The writer flushes once this much is batched, or when its queue is empty.
const BATCH: usize = 64 * 1024;
/// Data each signing thread keeps with `--cached` (beyond that it signs without keeping).
const CACHE_ENTRIES: usize = 65_536;

/// Parameters of `kite perf server`.
#[derive(Args)]
pub struct ServerArgs {
    /// The prefix to serve (registered with the forwarder through rib/register).
    prefix: String,
    #[command(flatten)]
    signing: SignArgs,
    /// Content octets per Data.
    #[arg(long, default_value_t = 8192)]
    payload: usize,
    /// Signing threads.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// FreshnessPeriod of the Data, in ms (0: the forwarder's cache never satisfies a
    /// MustBeFresh Interest with it).
    #[arg(long, value_name = "MS", default_value_t = 0)]
    freshness: u64,
    /// Sign one Data per name once and answer repeated names from memory (up to 65536 names
    /// per signing thread).
    #[arg(long)]
    cached: bool,
    /// Stop after this long (e.g. 30s); by default run until SIGINT or SIGTERM.
    #[arg(long, value_parser = crate::bench::parse_duration)]
    duration: Option<Duration>,
    /// The forwarder's unix socket (default: NDN_CLIENT_TRANSPORT, NFD's socket, then Kite's).
    #[arg(long, value_name = "PATH")]
    socket: Option<PathBuf>,
}

/// An Interest to answer.
struct Job {
    name: Name,
    token: Option<PitToken>,
}

/// A signed Data to send.
struct Reply {
    token: Option<PitToken>,
    wire: Bytes,
}

/// Counters shared by the threads (relaxed atomics, one add per packet, no lock).
#[derive(Default)]
struct Stats {
    interests: AtomicU64,
    data: AtomicU64,
    signed: AtomicU64,
    sign_ns: AtomicU64,
    /// CPU time the signing threads used, in microseconds (added as each one ends).
    signer_cpu_us: AtomicU64,
}

/// A snapshot, for per-second differences.
#[derive(Clone, Copy, Default)]
struct Snapshot {
    interests: u64,
    data: u64,
    signed: u64,
    sign_ns: u64,
}

impl Stats {
    fn snapshot(&self) -> Snapshot {
        Snapshot {
            interests: self.interests.load(Relaxed),
            data: self.data.load(Relaxed),
            signed: self.signed.load(Relaxed),
            sign_ns: self.sign_ns.load(Relaxed),
        }
    }
}

/// One report line for the interval between `a` and `b` lasting `secs`.
fn line(label: &str, a: Snapshot, b: Snapshot, secs: f64) -> String {
    let signed = b.signed - a.signed;
    let sign_ns = b.sign_ns - a.sign_ns;
    let mean_us = if signed == 0 {
        0.0
    } else {
        sign_ns as f64 / signed as f64 / 1000.0
    };
    format!(
        "{label}: {:.0} Interests/s, {:.0} Data/s, signing {mean_us:.1} µs/packet, {:.2} signing cores",
        (b.interests - a.interests) as f64 / secs,
        (b.data - a.data) as f64 / secs,
        sign_ns as f64 / 1e9 / secs,
    )
}

/// Runs the server until the duration ends, a signal arrives or the forwarder hangs up.
pub fn run(a: ServerArgs) -> Result<String> {
    if a.threads == 0 {
        return Err(anyhow!("--threads must be at least 1"));
    }
    let prefix: Name = a
        .prefix
        .parse()
        .map_err(|e| anyhow!("prefix {:?}: {e}", a.prefix))?;
    let signer = a.signing.signer(&prefix)?;
    let stop = crate::tools::stop_on_signal()?;
    let stream = link::open_registered(&a.socket, &prefix)?;
    let content = Bytes::from((0..a.payload).map(link::payload_octet).collect::<Vec<_>>());
    eprintln!(
        "kite perf server: {prefix}, {} signing, {} thread(s), {} B payload, freshness {} ms{}",
        a.signing.sign,
        a.threads,
        a.payload,
        a.freshness,
        if a.cached { ", cached" } else { "" }
    );
    let stats = Arc::new(Stats::default());
    let (job_tx, job_rx) = bounded::<Job>(QUEUE);
    let (reply_tx, reply_rx) = bounded::<Reply>(QUEUE);
    let mut signers = Vec::new();
    for _ in 0..a.threads {
        let (rx, tx, stats) = (job_rx.clone(), reply_tx.clone(), Arc::clone(&stats));
        let (signer, content) = (signer.clone(), content.clone());
        let (freshness, cached) = (a.freshness, a.cached);
        signers.push(std::thread::spawn(move || {
            let r = sign_loop(rx, tx, &signer, content, freshness, cached, &stats);
            let cpu = super::cpu::thread_cpu_secs().unwrap_or(0.0);
            stats.signer_cpu_us.fetch_add((cpu * 1e6) as u64, Relaxed);
            r
        }));
    }
    drop((job_rx, reply_tx));
    let out = stream.try_clone()?;
    let writer_stats = Arc::clone(&stats);
    let writer = std::thread::spawn(move || write_loop(reply_rx, out, &writer_stats));
    let start = Instant::now();
    let result = read_loop(stream, job_tx, &stats, &stop, start, a.duration);
    for s in signers {
        let _ = s.join();
    }
    let _ = writer.join();
    result?;
    let secs = start.elapsed().as_secs_f64();
    let end = stats.snapshot();
    let total = line("total", Snapshot::default(), end, secs);
    let sign_secs = end.sign_ns as f64 / 1e9;
    let cpu_secs = stats.signer_cpu_us.load(Relaxed) as f64 / 1e6;
    let per_cpu = if cpu_secs > 0.0 {
        end.signed as f64 / cpu_secs
    } else {
        0.0
    };
    Ok(format!(
        "{total} over {secs:.1} s ({sign_secs:.3} s signing in all; signing threads used \
         {cpu_secs:.2} CPU-s, {per_cpu:.0} signed Data per CPU-second)\n"
    ))
}

/// Reads Interests and queues them for the signers; prints a report line every second.
fn read_loop(
    stream: UnixStream,
    jobs: Sender<Job>,
    stats: &Stats,
    stop: &AtomicBool,
    start: Instant,
    duration: Option<Duration>,
) -> Result<()> {
    let mut src = FrameSource::new(stream, Duration::from_millis(100))?;
    let mut last = (Instant::now(), stats.snapshot());
    loop {
        while let Some(frame) = src.next()? {
            let Ok(lp) = LpPacket::decode(frame) else {
                continue;
            };
            let (Some(fragment), None) = (lp.fragment, lp.header.nack) else {
                continue;
            };
            let Ok(NetPacketView::Interest(i)) = NetPacketView::decode(fragment) else {
                continue;
            };
            stats.interests.fetch_add(1, Relaxed);
            let job = Job {
                name: i.name,
                token: lp.header.pit_token,
            };
            if jobs.send(job).is_err() {
                return Ok(());
            }
        }
        if last.0.elapsed() >= Duration::from_secs(1) {
            let now = (Instant::now(), stats.snapshot());
            eprintln!(
                "{}",
                line("server", last.1, now.1, (now.0 - last.0).as_secs_f64())
            );
            last = now;
        }
        if stop.load(Relaxed) || duration.is_some_and(|d| start.elapsed() >= d) {
            return Ok(());
        }
        match src.fill()? {
            Fill::Data | Fill::Idle => {}
            Fill::Closed => return Ok(()),
        }
    }
}

/// Signs a Data for every job (or reuses the one signed for that name, when cached).
fn sign_loop(
    jobs: Receiver<Job>,
    replies: Sender<Reply>,
    signer: &KeySigner,
    content: Bytes,
    freshness: u64,
    cached: bool,
    stats: &Stats,
) -> Result<()> {
    let mut cache: HashMap<Name, Bytes> = HashMap::new();
    for job in jobs {
        let wire = match cached.then(|| cache.get(&job.name)).flatten() {
            Some(w) => w.clone(),
            None => {
                let mut d = Data::new(job.name.clone(), content.clone());
                d.meta.freshness_period = Some(freshness);
                let t = Instant::now();
                let wire = d.sign(signer)?;
                stats
                    .sign_ns
                    .fetch_add(t.elapsed().as_nanos() as u64, Relaxed);
                stats.signed.fetch_add(1, Relaxed);
                if cached && cache.len() < CACHE_ENTRIES {
                    cache.insert(job.name, wire.clone());
                }
                wire
            }
        };
        let reply = Reply {
            token: job.token,
            wire,
        };
        if replies.send(reply).is_err() {
            break;
        }
    }
    Ok(())
}

/// Writes signed Data, batching whatever is queued into one write.
fn write_loop(replies: Receiver<Reply>, mut out: UnixStream, stats: &Stats) -> Result<()> {
    let mut batch = Vec::with_capacity(2 * BATCH);
    let put = |r: Reply, batch: &mut Vec<u8>| {
        if r.token.is_some() {
            let header = LpHeader {
                pit_token: r.token,
                ..LpHeader::default()
            };
            header.encode_header(Some(r.wire.len()), batch);
        }
        batch.extend_from_slice(&r.wire);
    };
    while let Ok(first) = replies.recv() {
        put(first, &mut batch);
        let mut n = 1;
        while batch.len() < BATCH {
            match replies.try_recv() {
                Ok(r) => {
                    put(r, &mut batch);
                    n += 1;
                }
                Err(_) => break,
            }
        }
        out.write_all(&batch)?;
        stats.data.fetch_add(n, Relaxed);
        batch.clear();
    }
    Ok(())
}
