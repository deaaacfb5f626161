//! `kite get`: fetches a segmented object (as ndncatchunks does) and writes it to standard
//! output or a file; progress and a summary go to standard error. A file is written beside
//! its destination under a temporary name and renamed into place only once whole, so a
//! failed fetch leaves no partial file.

use std::fs::File;
use std::io::{BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};
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
    /// InterestLifetime in milliseconds. The retransmission timer is the RTO (RFC 6298),
    /// doubled on timeouts but never beyond the lifetime.
    #[arg(long, default_value_t = 4000, value_name = "MS")]
    lifetime: u64,
    /// Milliseconds with nothing received before giving up (exit status 1): the path is
    /// gone. Default: three times the largest RTO (the lifetime), at most 30000.
    #[arg(long, value_name = "MS")]
    no_progress_timeout: Option<u64>,
    /// The smallest retransmission timeout, in milliseconds. Most losses are found sooner,
    /// when segments sent after them come back (or, at the end, by a probe); the timer is for
    /// the rest: a whole window lost, a path gone. At 50 it already fires on queueing delay
    /// (bench/lossy.sh).
    #[arg(long, default_value_t = FetchOptions::default().min_rto.as_millis() as u64, value_name = "MS")]
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
    if args.lifetime == 0 || args.rdr_timeout == 0 || args.no_progress_timeout == Some(0) {
        bail!("--lifetime, --rdr-timeout and --no-progress-timeout must be at least 1 ms");
    }
    if args.output.is_none() && std::io::stdout().is_terminal() {
        bail!(
            "refusing to write the content to a terminal: give -o FILE or redirect standard \
             output"
        );
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
        max_rto: Duration::from_millis(args.lifetime),
        no_progress: args.no_progress_timeout.map(Duration::from_millis),
    };
    let give_up = opts.no_progress_limit();
    let pipe = Pipeline::new(args.socket.connect()?);
    let mut file = args.output.as_deref().map(Output::create).transpose()?;
    let mut out: Box<dyn Write> = match &file {
        Some(f) => Box::new(f.file.try_clone().context("duplicating the output file")?),
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
        if last_line.elapsed() < Duration::from_secs(1) {
            return;
        }
        // Nothing came for a second: say what is awaited, whether or not progress is shown.
        let stalled = s.stalled_for >= Duration::from_secs(1);
        if stalled || show {
            last_line = Instant::now();
            let end = if terminal { "\r" } else { "\n" };
            if stalled {
                eprint!("{}{end}", waiting_line(s, give_up));
            } else {
                eprint!("{}{end}", progress_line(s));
            }
        }
    };
    let fetched = fetch(pipe, &args.name, &opts, &mut out, &mut progress);
    let flushed = out.into_inner().map_err(|e| e.into_error());
    if show && terminal {
        eprintln!();
    }
    let stats = fetched.with_context(|| format!("fetching {}", args.name))?;
    flushed.context("writing the content")?;
    if let Some(f) = file.take() {
        f.commit()?;
    }
    eprint!("{}", summary(&stats));
    if args.verbose {
        eprintln!("Final window: {:.1}", stats.cwnd);
    }
    Ok(String::new())
}

/// An output file being written: a temporary file beside the destination, renamed onto it
/// by [`Output::commit`] and removed when dropped uncommitted (a failed fetch). A
/// destination that is not a regular file (`/dev/null`, a FIFO) is written directly.
struct Output {
    file: File,
    /// (temporary, destination) when renaming.
    rename: Option<(PathBuf, PathBuf)>,
}

impl Output {
    fn create(dest: &Path) -> Result<Output> {
        let special = std::fs::metadata(dest).is_ok_and(|m| !m.is_file());
        if special {
            let file = File::create(dest).with_context(|| format!("opening {}", dest.display()))?;
            return Ok(Output { file, rename: None });
        }
        let name = dest
            .file_name()
            .with_context(|| format!("{} names no file", dest.display()))?;
        let mut temp_name = std::ffi::OsString::from(".");
        temp_name.push(name);
        temp_name.push(format!(".kite-get-{}", std::process::id()));
        let temp = dest.with_file_name(temp_name);
        let file = File::create(&temp).with_context(|| format!("creating {}", temp.display()))?;
        Ok(Output {
            file,
            rename: Some((temp, dest.to_path_buf())),
        })
    }

    /// Moves the whole file into place.
    fn commit(mut self) -> Result<()> {
        if let Some((temp, dest)) = self.rename.take() {
            std::fs::rename(&temp, &dest).with_context(|| {
                let _ = std::fs::remove_file(&temp);
                format!("renaming {} to {}", temp.display(), dest.display())
            })?;
        }
        Ok(())
    }
}

impl Drop for Output {
    fn drop(&mut self) {
        if let Some((temp, _)) = &self.rename {
            let _ = std::fs::remove_file(temp);
        }
    }
}

/// Megabits per second for `octets` over `t`.
fn mbps(octets: u64, t: Duration) -> f64 {
    octets as f64 * 8.0 / t.as_secs_f64().max(1e-9) / 1e6
}

fn ms(d: Option<Duration>) -> String {
    d.map_or_else(|| "-".into(), |d| format!("{:.3}", d.as_secs_f64() * 1e3))
}

/// `octets` in decimal units (B, kB, MB, GB), as a person reads them.
fn human(octets: f64) -> String {
    let mut v = octets;
    for unit in ["B", "kB", "MB", "GB"] {
        if v < 1000.0 || unit == "GB" {
            return if unit == "B" {
                format!("{v:.0} {unit}")
            } else {
                format!("{v:.1} {unit}")
            };
        }
        v /= 1000.0;
    }
    unreachable!("the loop returns at GB")
}

/// A duration as `1h02m03s`, `2m03s` or `3s`.
fn clock(d: Duration) -> String {
    let s = d.as_secs();
    match (s / 3600, s / 60 % 60, s % 60) {
        (0, 0, s) => format!("{s}s"),
        (0, m, s) => format!("{m}m{s:02}s"),
        (h, m, s) => format!("{h}h{m:02}m{s:02}s"),
    }
}

/// One progress line: a percentage and the time left once the last segment is known.
fn progress_line(s: &FetchStats) -> String {
    let secs = s.elapsed.as_secs_f64().max(1e-9);
    let rate = s.octets as f64 / secs;
    let done = match s.final_segment {
        Some(last) => {
            let total = last + 1;
            let fraction = s.segments as f64 / total as f64;
            let left = if s.segments > 0 {
                clock(Duration::from_secs_f64(
                    secs * (total - s.segments.min(total)) as f64 / s.segments as f64,
                ))
            } else {
                "?".into()
            };
            format!(
                "{:.1}% ({}/{total} segments), ETA {left}",
                fraction * 100.0,
                s.segments
            )
        }
        None => format!("{} segments", s.segments),
    };
    format!(
        "{done}, {} at {}/s, window {:.1}, {} retransmissions",
        human(s.octets as f64),
        human(rate),
        s.cwnd,
        s.retransmissions
    )
}

/// What a stalled fetch waits for, and when it gives up.
fn waiting_line(s: &FetchStats, give_up: Duration) -> String {
    let what = s.waiting_for.as_ref().map_or_else(
        || "an answer".into(),
        |(n, r)| format!("{n} ({r} retransmissions)"),
    );
    format!(
        "kite get: waiting for {what}: nothing received for {:.0} s, giving up after {:.0} s",
        s.stalled_for.as_secs_f64(),
        give_up.as_secs_f64()
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
         Timeouts: {}\nLost before their timer: {}\nCongestion marks: {}\nNacks: {}\nWindow decreases: {}\n",
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
        s.lost_early,
        s.congestion_marks,
        s.nacks,
        s.window_decreases,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_shows_percentage_eta_and_a_rate_in_human_units() {
        let mut s = FetchStats::default();
        s.segments = 250;
        s.final_segment = Some(999);
        s.octets = 2_000_000;
        s.elapsed = Duration::from_secs(2);
        let line = progress_line(&s);
        assert!(
            line.starts_with("25.0% (250/1000 segments), ETA 6s"),
            "{line}"
        );
        assert!(line.contains("2.0 MB at 1.0 MB/s"), "{line}");
        s.final_segment = None;
        let unknown = progress_line(&s);
        assert!(unknown.starts_with("250 segments, 2.0 MB"), "{unknown}");
        assert_eq!(human(999.0), "999 B");
        assert_eq!(human(12_345_678.0), "12.3 MB");
        assert_eq!(clock(Duration::from_secs(3723)), "1h02m03s");
        assert_eq!(clock(Duration::from_secs(123)), "2m03s");
    }

    #[test]
    fn a_stall_says_what_it_waits_for() {
        let mut s = FetchStats::default();
        s.stalled_for = Duration::from_secs(3);
        s.waiting_for = Some(("/a/v=1/seg=7".parse().unwrap(), 2));
        assert_eq!(
            waiting_line(&s, Duration::from_secs(12)),
            "kite get: waiting for /a/v=1/seg=7 (2 retransmissions): nothing received for 3 s, \
             giving up after 12 s"
        );
    }

    #[test]
    fn a_failed_output_leaves_no_file_and_a_committed_one_is_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("out.bin");
        let mut o = Output::create(&dest).unwrap();
        o.file.write_all(b"part").unwrap();
        drop(o);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        let mut o = Output::create(&dest).unwrap();
        o.file.write_all(b"whole").unwrap();
        o.commit().unwrap();
        assert_eq!(std::fs::read(&dest).unwrap(), b"whole");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
