//! `kite put`: publishes a file or standard input as signed, versioned segments (as
//! ndnputchunks does) and serves them from memory until stopped.

use std::cell::Cell;
use std::io::Read;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use bytes::Bytes;
use clap::Args;
use kite_app::segmented::publish::{DEFAULT_CHUNK_SIZE, DEFAULT_FRESHNESS};
use kite_app::segmented::{PublishOptions, Published};
use kite_app::Producer;
use kite_mgmt_proto::nfd::RouteOrigin;
use kite_packet::Name;

use super::{parse_name, stop_on_signal, SocketArgs};
use crate::sign_args::SignArgs;

/// How often `--once` looks whether every segment was served.
const ONCE_CHECK: Duration = Duration::from_millis(100);

/// `kite put` options.
#[derive(Args, Debug)]
pub struct PutArgs {
    /// The name to publish under; segments are NAME/v=<version>/seg=<n> (a NAME that ends in
    /// a version component is used as it is).
    #[arg(value_parser = parse_name)]
    name: Name,
    /// The file to publish, or - for standard input.
    file: PathBuf,
    /// Content octets per segment.
    #[arg(long, default_value_t = DEFAULT_CHUNK_SIZE, value_name = "OCTETS")]
    chunk_size: usize,
    /// FreshnessPeriod of each segment, in milliseconds.
    #[arg(long, default_value_t = DEFAULT_FRESHNESS.as_millis() as u64, value_name = "MS")]
    freshness: u64,
    /// The version number [default: the current time in milliseconds since the Unix epoch].
    #[arg(long)]
    version: Option<u64>,
    /// Exit once every segment has been served at least once and then no Interest came for
    /// --grace milliseconds (so a consumer's retransmission after a loss is still answered).
    #[arg(long)]
    once: bool,
    /// With --once: milliseconds without an Interest, after every segment was served, before
    /// exiting.
    #[arg(long, default_value_t = 2000, value_name = "MS")]
    grace: u64,
    /// Exit after serving for this many seconds.
    #[arg(long, value_name = "SECONDS")]
    timeout: Option<f64>,
    /// Register the prefix with Origin client (65), so that the forwarder readvertises it to
    /// the routing daemon (NLSR, ndn-dv) and the network learns a route to it, as `ndnd put
    /// --expose` does. Without it the route is local (Origin app, 0).
    #[arg(long)]
    expose: bool,
    #[command(flatten)]
    signing: SignArgs,
    #[command(flatten)]
    socket: SocketArgs,
}

/// Runs `kite put`.
pub fn run(args: PutArgs) -> Result<String> {
    if args.chunk_size == 0 {
        bail!("--chunk-size must be at least 1");
    }
    let content = read_input(&args.file)?;
    let opts = PublishOptions {
        chunk_size: args.chunk_size,
        freshness: Duration::from_millis(args.freshness),
        version: args.version,
    };
    let signer = args.signing.signer(&args.name)?;
    let published =
        Published::new(&args.name, &content, &opts, &signer).context("signing the segments")?;
    let stop = stop_on_signal()?;
    let mut producer = Producer::new(args.socket.connect()?);
    if args.expose {
        producer.set_origin(RouteOrigin::CLIENT);
    }
    producer
        .register(published.prefix())
        .with_context(|| format!("registering {}", published.prefix()))?;
    println!("{}", published.versioned_name());
    eprintln!(
        "kite put: serving {} octets in {} segments; Ctrl-C stops",
        content.len(),
        published.segments().len()
    );
    let deadline = args
        .timeout
        .map(|s| Instant::now() + Duration::from_secs_f64(s.max(0.0)));
    let grace = Duration::from_millis(args.grace);
    let mut served = vec![false; published.segments().len()];
    let mut unserved = served.len();
    // With --once: when the last Interest came, once every segment was served.
    let quiet_since: Cell<Option<Instant>> = Cell::new(None);
    let mut answer = |interest: &kite_packet::Interest| {
        let wire = published.answer(interest).cloned();
        if args.once {
            if let Some(w) = &wire {
                let seg = if w.as_ptr() == published.segments()[0].as_ptr() {
                    Some(0)
                } else {
                    interest
                        .name
                        .last()
                        .and_then(|c| c.as_segment())
                        .and_then(|n| usize::try_from(n).ok())
                        .filter(|&n| n < served.len())
                };
                if let Some(seg) = seg.filter(|&s| !served[s]) {
                    served[seg] = true;
                    unserved -= 1;
                }
            }
            if unserved == 0 {
                quiet_since.set(Some(Instant::now()));
            }
        }
        wire
    };
    loop {
        // With --once, come back now and then to see whether the quiet period began.
        let quiet_end = match quiet_since.get() {
            Some(t) => Some(t + grace),
            None if args.once => Some(Instant::now() + ONCE_CHECK),
            None => None,
        };
        let until = match (deadline, quiet_end) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        producer.serve(&stop, until, &mut answer)?;
        let now = Instant::now();
        let quiet = quiet_since.get().is_some_and(|t| now >= t + grace);
        if stop.load(Ordering::Acquire) || deadline.is_some_and(|d| now >= d) || quiet {
            break;
        }
    }
    Ok(String::new())
}

/// The whole content of `path` (`-`: standard input).
fn read_input(path: &PathBuf) -> Result<Bytes> {
    let mut buf = Vec::new();
    if path.as_os_str() == "-" {
        std::io::stdin()
            .lock()
            .read_to_end(&mut buf)
            .context("reading standard input")?;
    } else {
        buf = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    }
    Ok(buf.into())
}
