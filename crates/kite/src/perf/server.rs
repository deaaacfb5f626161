//! `kite perf server`: the socket reader hands each Interest's name and PIT token to N signing
//! threads through a bounded queue; each signs a fresh Data (or, with `--cached`, reuses the
//! one it signed for that name) and hands it to one writer, which writes in batches. With
//! `--threads 0` the reader signs and writes itself: no hand-off between threads, which is
//! what a machine with fewer cores than threads to keep busy wants.

use kite_app::shm::{LinkReader, LinkWriter};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Result};
use bytes::Bytes;
use clap::Args;
use crossbeam_channel::{bounded, Receiver, Sender};
use kite_app::WriteQueue;
use kite_packet::{Data, LpHeader, LpPacket, Name, NetPacketView, PitToken};
use kite_security::KeySigner;

use super::connect;
use crate::frames::{Arrived, FrameSource};
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
    /// Signing threads; 0 signs in the thread that reads the Interests and writes each batch
    /// of Data itself (no hand-off between threads: fastest when cores are few).
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
    #[arg(long, value_parser = crate::duration::parse_duration)]
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
    let prefix: Name = a
        .prefix
        .parse()
        .map_err(|e| anyhow!("prefix {:?}: {e}", a.prefix))?;
    let signer = a.signing.signer(&prefix)?;
    let stop = crate::tools::stop_on_signal()?;
    let (stream, out) = connect::open_registered(&a.socket, &prefix)?;
    let content = Bytes::from(
        (0..a.payload)
            .map(connect::payload_octet)
            .collect::<Vec<_>>(),
    );
    eprintln!(
        "kite perf server: {prefix}, {} signing, {}, {} B payload, freshness {} ms{}",
        a.signing.sign,
        match a.threads {
            0 => "signing in the reading thread".to_owned(),
            n => format!("{n} signing thread(s)"),
        },
        a.payload,
        a.freshness,
        if a.cached { ", cached" } else { "" }
    );
    let stats = Arc::new(Stats::default());
    let maker = Maker::new(signer, content, a.freshness, a.cached);
    let start = Instant::now();
    let clock = (&*stop, start, a.duration);
    // CPU seconds the signing work used: the signing threads', or inline the reading
    // thread's (whose figure then includes the reads and writes).
    let cpu_secs = if a.threads == 0 {
        let mut sink = Inline {
            maker,
            out,
            batch: WriteQueue::new(),
            stats: &stats,
        };
        read_loop(stream, &stats, clock, &mut sink)?;
        super::cpu::thread_cpu_secs().unwrap_or(0.0)
    } else {
        threaded((stream, out), maker, a.threads, &stats, clock)?
    };
    let secs = start.elapsed().as_secs_f64();
    let end = stats.snapshot();
    let total = line("total", Snapshot::default(), end, secs);
    let sign_secs = end.sign_ns as f64 / 1e9;
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

/// When the reader stops: on a signal, or once the duration (if any) since the start passed.
type Clock<'a> = (&'a AtomicBool, Instant, Option<Duration>);

/// Runs `threads` signing threads and one writer beside the reading thread; returns the
/// signing threads' CPU seconds.
fn threaded(
    (stream, out): (LinkReader, LinkWriter),
    maker: Maker,
    threads: usize,
    stats: &Arc<Stats>,
    clock: Clock,
) -> Result<f64> {
    let (job_tx, job_rx) = bounded::<Job>(QUEUE);
    let (reply_tx, reply_rx) = bounded::<Reply>(QUEUE);
    let mut signers = Vec::new();
    for _ in 0..threads {
        let (rx, tx, stats) = (job_rx.clone(), reply_tx.clone(), Arc::clone(stats));
        let mut maker = maker.clone();
        signers.push(std::thread::spawn(move || {
            let r = sign_loop(rx, tx, &mut maker, &stats);
            let cpu = super::cpu::thread_cpu_secs().unwrap_or(0.0);
            stats.signer_cpu_us.fetch_add((cpu * 1e6) as u64, Relaxed);
            r
        }));
    }
    drop((job_rx, reply_tx));
    let writer_stats = Arc::clone(stats);
    let writer = std::thread::spawn(move || write_loop(reply_rx, out, &writer_stats));
    let result = read_loop(stream, stats, clock, &mut Queue(job_tx));
    for s in signers {
        let _ = s.join();
    }
    let _ = writer.join();
    result?;
    Ok(stats.signer_cpu_us.load(Relaxed) as f64 / 1e6)
}

/// Where the reader puts each Interest.
trait Sink {
    /// Takes one Interest; `false` means stop reading.
    fn take(&mut self, job: Job) -> Result<bool>;
    /// Called whenever the octets read so far are used up (before the next read).
    fn drained(&mut self) -> Result<()>;
}

/// Queues Interests for the signing threads (dropping it stops them).
struct Queue(Sender<Job>);

impl Sink for Queue {
    fn take(&mut self, job: Job) -> Result<bool> {
        Ok(self.0.send(job).is_ok())
    }

    fn drained(&mut self) -> Result<()> {
        Ok(())
    }
}

/// Signs in the reading thread and writes what one read answered as one batch.
struct Inline<'a> {
    maker: Maker,
    out: LinkWriter,
    batch: WriteQueue,
    stats: &'a Stats,
}

impl Sink for Inline<'_> {
    fn take(&mut self, job: Job) -> Result<bool> {
        if put(self.maker.make(job, self.stats)?, &mut self.batch) >= BATCH {
            self.drained()?;
        }
        Ok(true)
    }

    fn drained(&mut self) -> Result<()> {
        write_batch(&mut self.out, &mut self.batch, self.stats)
    }
}

/// Reads Interests into `sink` and prints a report line every second.
fn read_loop(
    stream: LinkReader,
    stats: &Stats,
    (stop, start, duration): Clock,
    sink: &mut impl Sink,
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
            if !sink.take(job)? {
                return Ok(());
            }
        }
        sink.drained()?;
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
            Arrived::Data | Arrived::Idle => {}
            Arrived::Closed => return Ok(()),
        }
    }
}

/// What a signing thread (or the inline reader) needs to answer an Interest.
#[derive(Clone)]
struct Maker {
    signer: KeySigner,
    content: Bytes,
    freshness: u64,
    /// With `--cached`: the Data signed per name (up to [`CACHE_ENTRIES`]).
    cache: Option<HashMap<Name, Bytes>>,
}

impl Maker {
    fn new(signer: KeySigner, content: Bytes, freshness: u64, cached: bool) -> Self {
        Maker {
            signer,
            content,
            freshness,
            cache: cached.then(HashMap::new),
        }
    }

    /// A fresh signed Data for `job` (or, when cached, the one signed for its name before).
    fn make(&mut self, job: Job, stats: &Stats) -> Result<Reply> {
        if let Some(wire) = self.cache.as_ref().and_then(|c| c.get(&job.name)) {
            return Ok(Reply {
                token: job.token,
                wire: wire.clone(),
            });
        }
        let mut d = Data::new(job.name.clone(), self.content.clone());
        d.meta.freshness_period = Some(self.freshness);
        let t = Instant::now();
        let wire = d.sign(&self.signer)?;
        stats
            .sign_ns
            .fetch_add(t.elapsed().as_nanos() as u64, Relaxed);
        stats.signed.fetch_add(1, Relaxed);
        if let Some(c) = self.cache.as_mut().filter(|c| c.len() < CACHE_ENTRIES) {
            c.insert(job.name, wire.clone());
        }
        Ok(Reply {
            token: job.token,
            wire,
        })
    }
}

/// Signs a Data for every job (or reuses the one signed for that name, when cached).
fn sign_loop(
    jobs: Receiver<Job>,
    replies: Sender<Reply>,
    maker: &mut Maker,
    stats: &Stats,
) -> Result<()> {
    for job in jobs {
        if replies.send(maker.make(job, stats)?).is_err() {
            break;
        }
    }
    Ok(())
}

/// Queues `r` in `batch`, in an LpPacket when it carries a PIT token; returns the octets
/// queued.
fn put(r: Reply, batch: &mut WriteQueue) -> usize {
    let header = LpHeader {
        pit_token: r.token,
        ..LpHeader::default()
    };
    batch.push(&header, r.wire)
}

/// Writes the Data queued in `batch`, if any, and counts them.
fn write_batch(out: &mut LinkWriter, batch: &mut WriteQueue, stats: &Stats) -> Result<()> {
    let queued = batch.len() as u64;
    if queued > 0 {
        batch.write_to(out)?;
        stats.data.fetch_add(queued, Relaxed);
    }
    Ok(())
}

/// Writes signed Data, batching whatever is queued into one write.
fn write_loop(replies: Receiver<Reply>, mut out: LinkWriter, stats: &Stats) -> Result<()> {
    let mut batch = WriteQueue::new();
    while let Ok(first) = replies.recv() {
        let mut octets = put(first, &mut batch);
        while octets < BATCH {
            match replies.try_recv() {
                Ok(r) => octets = put(r, &mut batch),
                Err(_) => break,
            }
        }
        write_batch(&mut out, &mut batch, stats)?;
    }
    Ok(())
}
