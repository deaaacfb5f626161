//! `kite get`: fetches a segmented object (as ndncatchunks does) and writes it to standard
//! output or a file; progress and a summary go to standard error.

use std::fs::File;
use std::io::{BufWriter, IsTerminal, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use kite_app::segmented::fetch::DEFAULT_RDR_TIMEOUT;
use kite_app::segmented::{fetch, CcKind, CcOptions, Discovery, FetchOptions, FetchStats};
use kite_app::Pipeline;
use kite_packet::Name;

use super::{parse_name, SocketArgs};

/// The congestion control choices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Cc {
    /// Additive increase, multiplicative decrease (slow start below the threshold).
    Aimd,
    /// CUBIC window growth (RFC 8312).
    Cubic,
    /// A constant window of --window Interests.
    Fixed,
}

/// The version discovery choices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Discover {
    /// RDR first, once, waiting --rdr-timeout; then iterative when the metadata times out,
    /// is Nacked or is malformed.
    Auto,
    /// RDR only (as ndncatchunks): the Content of PREFIX/32=metadata names the version.
    Rdr,
    /// A CanBePrefix + MustBeFresh Interest for PREFIX; the first segment's name carries the
    /// version (what python-ndn producers answer).
    Iterative,
}

/// `kite get` options.
#[derive(Args, Debug)]
pub struct GetArgs {
    /// The object's name: a prefix (the latest version is discovered, see --discover) or a
    /// name ending in a version component.
    #[arg(value_parser = parse_name)]
    name: Name,
    /// How the version of a prefix is found.
    #[arg(long, value_enum, default_value_t = Discover::Auto)]
    discover: Discover,
    /// With --discover auto: milliseconds to wait for the RDR metadata before falling back
    /// (short, so a producer that does not answer metadata costs little).
    #[arg(long, default_value_t = DEFAULT_RDR_TIMEOUT.as_millis() as u64, value_name = "MS")]
    rdr_timeout: u64,
    /// Write the content to FILE instead of standard output.
    #[arg(short = 'o', long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Congestion control: the window grows on each Data and shrinks on a timeout, a
    /// congestion Nack or a congestion mark (at most once per round trip).
    #[arg(long, value_enum, default_value_t = Cc::Cubic)]
    cc: Cc,
    /// The initial window in Interests (the whole window with --cc fixed).
    #[arg(long, default_value_t = 2, value_name = "N")]
    window: u32,
    /// The largest window in Interests. The default stays under a forwarder's per-face output
    /// queue (Kite's holds 1024 frames): with Data from a cache, a whole window arrives in one
    /// burst, faster than any congestion mark can slow it.
    #[arg(long, default_value_t = 512, value_name = "N")]
    max_window: u32,
    /// Retransmissions of one segment before giving up.
    #[arg(long, default_value_t = 15, value_name = "N")]
    max_retries: u32,
    /// InterestLifetime in milliseconds (the retransmission timer is the RTO, RFC 6298).
    #[arg(long, default_value_t = 4000, value_name = "MS")]
    lifetime: u64,
    /// The smallest retransmission timeout, in milliseconds.
    #[arg(long, default_value_t = 200, value_name = "MS")]
    min_rto: u64,
    /// Print a progress line every second on standard error (the default when standard
    /// error is a terminal).
    #[arg(long)]
    progress: bool,
    /// Print the version found and the final window.
    #[arg(short, long)]
    verbose: bool,
    #[command(flatten)]
    socket: SocketArgs,
}

/// Runs `kite get`.
pub fn run(args: GetArgs) -> Result<String> {
    if args.window == 0 || args.max_window < args.window {
        bail!("--window must be at least 1 and at most --max-window");
    }
    if args.lifetime == 0 || args.rdr_timeout == 0 {
        bail!("--lifetime and --rdr-timeout must be at least 1 ms");
    }
    let opts = FetchOptions {
        discovery: match args.discover {
            Discover::Auto => Discovery::Auto,
            Discover::Rdr => Discovery::Rdr,
            Discover::Iterative => Discovery::Iterative,
        },
        rdr_timeout: Duration::from_millis(args.rdr_timeout),
        cc: CcOptions {
            kind: match args.cc {
                Cc::Aimd => CcKind::Aimd,
                Cc::Cubic => CcKind::Cubic,
                Cc::Fixed => CcKind::Fixed,
            },
            initial_window: f64::from(args.window),
            max_window: f64::from(args.max_window),
            ..CcOptions::default()
        },
        lifetime: Duration::from_millis(args.lifetime),
        max_retries: args.max_retries,
        min_rto: Duration::from_millis(args.min_rto),
        ..FetchOptions::default()
    };
    let pipe = Pipeline::new(args.socket.connect()?);
    let mut out: Box<dyn Write> = match &args.output {
        Some(p) => Box::new(File::create(p).with_context(|| format!("creating {}", p.display()))?),
        None => Box::new(std::io::stdout().lock()),
    };
    let mut out = BufWriter::with_capacity(1 << 20, &mut out);
    let terminal = std::io::stderr().is_terminal();
    let show = args.progress || terminal;
    let mut last_line = Instant::now();
    let mut announced = false;
    let mut progress = |s: &FetchStats| {
        if args.verbose && !announced {
            if let Some(v) = &s.versioned {
                eprintln!("kite get: fetching {v} ({})", discovery_text(s));
                announced = true;
            }
        }
        if show && last_line.elapsed() >= Duration::from_secs(1) {
            last_line = Instant::now();
            let end = if terminal { "\r" } else { "\n" };
            eprint!("{}{end}", progress_line(s));
        }
    };
    let stats = fetch(pipe, &args.name, &opts, &mut out, &mut progress)
        .with_context(|| format!("fetching {}", args.name))?;
    drop(out);
    if show && terminal {
        eprintln!();
    }
    eprint!("{}", summary(&stats));
    if args.verbose {
        eprintln!("Final window: {:.1}", stats.cwnd);
    }
    Ok(String::new())
}

/// Megabits per second for `octets` over `t`.
fn mbps(octets: u64, t: Duration) -> f64 {
    octets as f64 * 8.0 / t.as_secs_f64().max(1e-9) / 1e6
}

fn ms(d: Option<Duration>) -> String {
    d.map_or_else(|| "-".into(), |d| format!("{:.3}", d.as_secs_f64() * 1e3))
}

/// One progress line.
fn progress_line(s: &FetchStats) -> String {
    let total = s
        .final_segment
        .map_or_else(|| "?".into(), |f| (f + 1).to_string());
    format!(
        "{}/{total} segments, {} octets, {:.1} Mbit/s, window {:.1}, {} retransmissions",
        s.segments,
        s.octets,
        mbps(s.octets, s.elapsed),
        s.cwnd,
        s.retransmissions
    )
}

/// How the version was found: `rdr`, `iterative`, `iterative (metadata: <why not>)`, or
/// `none` for a versioned name.
fn discovery_text(s: &FetchStats) -> String {
    match (s.discovered_by, s.rdr_failure) {
        (None, _) => "none".into(),
        (Some(d), None) => d.to_string(),
        (Some(d), Some(why)) => format!("{d} (metadata: {why})"),
    }
}

/// The closing report, one `key: value` per line.
fn summary(s: &FetchStats) -> String {
    format!(
        "Version: {}\nDiscovery: {}\nSegments: {}\nOctets: {}\nTime: {:.3} s\n\
         Goodput: {:.3} Mbit/s\nRTT min/avg/max: {}/{}/{} ms\nRetransmissions: {}\n\
         Timeouts: {}\nCongestion marks: {}\nNacks: {}\nWindow decreases: {}\n",
        s.versioned
            .as_ref()
            .map_or_else(|| "-".into(), Name::to_uri),
        discovery_text(s),
        s.segments,
        s.octets,
        s.elapsed.as_secs_f64(),
        mbps(s.octets, s.elapsed),
        ms(s.rtt_min),
        ms(s.rtt_avg()),
        ms(s.rtt_max),
        s.retransmissions,
        s.timeouts,
        s.congestion_marks,
        s.nacks,
        s.window_decreases,
    )
}
