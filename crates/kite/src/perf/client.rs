//! `kite perf client`: one thread keeps `--window` Interests outstanding, each for a name never
//! asked before (`/<prefix>/<run id>/<seq>`), reading and writing in batches; it measures RTT
//! per Data, counts timeouts and Nacks, and optionally verifies every signature.

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context, Result};
use bytes::Bytes;
use clap::Args;
use kite_packet::{Data, Interest, LpPacket, NackReason, Name, NetPacketView, Nonce};
use kite_security::{KeyFile, SignatureKind, Verifier};
use serde_json::json;

use super::connect;
use super::histogram::Histogram;
use crate::frames::{Arrived, FrameSource};

/// How often the loop wakes when nothing arrives, to check timeouts and the clock.
const TICK: Duration = Duration::from_millis(10);

/// Parameters of `kite perf client`.
#[derive(Args)]
pub struct ClientArgs {
    /// The prefix the server serves.
    prefix: String,
    /// Interests kept outstanding.
    #[arg(long, default_value_t = 64)]
    window: usize,
    /// How long to measure, e.g. 30s, 500ms, 2m.
    #[arg(long, default_value = "10s", value_parser = crate::duration::parse_duration)]
    duration: Duration,
    /// InterestLifetime; an Interest unanswered this long counts as a timeout.
    #[arg(long, default_value = "4s", value_parser = crate::duration::parse_duration)]
    lifetime: Duration,
    /// Cycle through this many names instead of asking a new one each time, so the
    /// forwarder's cache or a `--cached` server can answer repeats (at least twice --window).
    #[arg(long, value_name = "N")]
    names: Option<u64>,
    /// Check that every Data's content is the pattern `kite perf server` sends.
    #[arg(long)]
    payload_check: bool,
    /// Verify every Data's signature (needs --key-pub or --verify-digest).
    #[arg(long)]
    verify: bool,
    /// The server's public key file (its --pub-out, or `kite key generate --pub-out`); also
    /// names the kind, so digest-sha256 and null files work too.
    #[arg(long, value_name = "FILE", requires = "verify")]
    key_pub: Option<PathBuf>,
    /// Verify DigestSha256 signatures (no key file needed).
    #[arg(long, requires = "verify", conflicts_with = "key_pub")]
    verify_digest: bool,
    /// Print one JSON object on standard output and nothing else (the human summary goes to
    /// standard error), for scripts.
    #[arg(long)]
    json: bool,
    /// The forwarder's unix socket (default: NDN_CLIENT_TRANSPORT, NFD's socket, then Kite's).
    #[arg(long, value_name = "PATH")]
    socket: Option<PathBuf>,
}

/// What the client counted.
#[derive(Default, Clone, Copy)]
struct Counts {
    received: u64,
    content_octets: u64,
    timeouts: u64,
    nacks: u64,
    /// Those of `nacks` with reason Congestion (the forwarder had no room for the Interest).
    congestion_nacks: u64,
    verified: u64,
    verify_failures: u64,
    payload_errors: u64,
}

/// The outstanding Interests and the numbers that name them.
struct Window {
    prefix: Name,
    names: u64,
    next: u64,
    lifetime: Duration,
    /// Name number -> when its Interest was sent.
    pending: HashMap<u64, Instant>,
    out: Vec<u8>,
}

impl Window {
    /// Queues Interests until `size` are outstanding.
    fn fill(&mut self, size: usize, now: Instant) {
        while self.pending.len() < size {
            let n = self.next % self.names;
            self.next += 1;
            if self.pending.contains_key(&n) {
                continue;
            }
            let mut i = Interest::new(self.prefix.clone().append_generic(n.to_string().as_bytes()));
            i.nonce = Some(Nonce::from(self.next as u32 ^ 0x9E37_79B9));
            i.lifetime = Some(self.lifetime.as_millis() as u64);
            self.out.extend_from_slice(&i.encode());
            self.pending.insert(n, now);
        }
    }

    /// The name number of `name` when it is one of ours.
    fn number(&self, name: &Name) -> Option<u64> {
        if name.len() != self.prefix.len() + 1 || !self.prefix.is_prefix_of(name) {
            return None;
        }
        std::str::from_utf8(name.last()?.value()).ok()?.parse().ok()
    }

    /// Forgets Interests older than the lifetime; returns how many.
    fn expire(&mut self, now: Instant) -> u64 {
        let before = self.pending.len();
        let lifetime = self.lifetime;
        self.pending.retain(|_, sent| now - *sent < lifetime);
        (before - self.pending.len()) as u64
    }
}

/// Runs the client for `--duration` and returns the final summary.
pub fn run(a: ClientArgs) -> Result<String> {
    if a.window == 0 {
        return Err(anyhow!("--window must be at least 1"));
    }
    if a.names.is_some_and(|n| n < 2 * a.window as u64) {
        return Err(anyhow!("--names must be at least twice --window"));
    }
    let prefix: Name = a
        .prefix
        .parse()
        .map_err(|e| anyhow!("prefix {:?}: {e}", a.prefix))?;
    let verifier = match (a.verify, &a.key_pub, a.verify_digest) {
        (false, _, _) => None,
        (true, Some(p), _) => Some(
            KeyFile::read(p)
                .and_then(|f| f.verifier())
                .with_context(|| format!("reading {}", p.display()))?,
        ),
        (true, None, true) => Some(Verifier::new(SignatureKind::DigestSha256, &[])?),
        (true, None, false) => {
            return Err(anyhow!("--verify needs --key-pub FILE or --verify-digest"))
        }
    };
    let (stream, mut out) = connect::open(&a.socket)?;
    let mut src = FrameSource::new(stream, TICK)?;
    // Names no earlier run used, so no cache answers (unless --names makes them repeat).
    let run_id = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let mut w = Window {
        prefix: prefix.append_generic(format!("{run_id:x}").as_bytes()),
        names: a.names.unwrap_or(u64::MAX),
        next: 0,
        lifetime: a.lifetime,
        pending: HashMap::with_capacity(2 * a.window),
        out: Vec::with_capacity(64 * 1024),
    };
    eprintln!(
        "kite perf client: {}, window {}, {:?}{}",
        w.prefix,
        a.window,
        a.duration,
        verifier
            .as_ref()
            .map_or(String::new(), |v| format!(", verifying {}", v.kind()))
    );
    let mut counts = Counts::default();
    let mut rtt_all = Histogram::new();
    let mut rtt_tick = Histogram::new();
    let start = Instant::now();
    let mut last = (start, counts);
    w.fill(a.window, start);
    out.write_all(&w.out)?;
    w.out.clear();
    while start.elapsed() < a.duration {
        let fill = src.fill()?;
        if matches!(fill, Arrived::Closed) {
            return Err(anyhow!("the forwarder closed the connection"));
        }
        let now = Instant::now();
        while let Some(frame) = src.next()? {
            let Some(rtt) = take(
                frame,
                &mut w,
                &mut counts,
                verifier.as_ref(),
                a.payload_check,
                now,
            ) else {
                continue;
            };
            let us = rtt.as_micros() as u64;
            rtt_all.record(us);
            rtt_tick.record(us);
        }
        counts.timeouts += w.expire(now);
        w.fill(a.window, now);
        if !w.out.is_empty() {
            out.write_all(&w.out)?;
            w.out.clear();
        }
        if now - last.0 >= Duration::from_secs(1) {
            eprintln!(
                "{}",
                report(
                    "client",
                    &last.1,
                    &counts,
                    &rtt_tick,
                    (now - last.0).as_secs_f64()
                )
            );
            rtt_tick.clear();
            last = (now, counts);
        }
    }
    let secs = start.elapsed().as_secs_f64();
    let text = format!(
        "{} over {secs:.1} s; {} timeouts, {} Nacks\n",
        report("total", &Counts::default(), &counts, &rtt_all, secs),
        counts.timeouts,
        counts.nacks
    );
    if !a.json {
        return Ok(text);
    }
    // Standard output carries the JSON alone; the human line goes to standard error.
    eprint!("{text}");
    let mut summary = json!({
        "data_per_sec": (counts.received as f64 / secs).round(),
        "goodput_mbps": counts.content_octets as f64 * 8.0 / secs / 1e6,
        "rtt_p50_us": rtt_all.quantile(0.5),
        "rtt_p99_us": rtt_all.quantile(0.99),
        "received": counts.received,
        "timeouts": counts.timeouts,
        "nacks": counts.nacks,
        "congestion_nacks": counts.congestion_nacks,
        "seconds": secs,
        "window": a.window,
    });
    if verifier.is_some() {
        summary["verified"] = counts.verified.into();
        summary["verify_failures"] = counts.verify_failures.into();
    }
    if a.payload_check {
        summary["payload_errors"] = counts.payload_errors.into();
    }
    Ok(format!("{summary}\n"))
}

/// Accounts for one frame; returns the RTT when it is a Data for an outstanding Interest.
fn take(
    frame: Bytes,
    w: &mut Window,
    counts: &mut Counts,
    verifier: Option<&Verifier>,
    payload_check: bool,
    now: Instant,
) -> Option<Duration> {
    let lp = LpPacket::decode(frame).ok()?;
    let fragment = lp.fragment?;
    if let Some(reason) = lp.header.nack {
        if let Ok(NetPacketView::Interest(i)) = NetPacketView::decode(fragment) {
            let n = w.number(&i.name)?;
            w.pending.remove(&n)?;
            counts.nacks += 1;
            counts.congestion_nacks += u64::from(reason == NackReason::CONGESTION);
        }
        return None;
    }
    let NetPacketView::Data(view) = NetPacketView::decode(fragment).ok()? else {
        return None;
    };
    let n = w.number(&view.name)?;
    let sent = w.pending.remove(&n)?;
    counts.received += 1;
    if verifier.is_some() || payload_check {
        match Data::from_view(view) {
            Ok(d) => {
                if let Some(v) = verifier {
                    match v.verify(&d) {
                        Ok(()) => counts.verified += 1,
                        Err(_) => counts.verify_failures += 1,
                    }
                }
                let content = d.content.unwrap_or_default();
                counts.content_octets += content.len() as u64;
                let pattern_ok = content
                    .iter()
                    .enumerate()
                    .all(|(i, &b)| b == connect::payload_octet(i));
                if payload_check && !pattern_ok {
                    counts.payload_errors += 1;
                }
            }
            Err(_) => counts.verify_failures += u64::from(verifier.is_some()),
        }
    } else {
        let wire = view.wire();
        counts.content_octets += content_len(wire, view.content_offset()) as u64;
    }
    Some(now - sent)
}

/// The Content's TLV-LENGTH at `at` in `wire` (0 when the Data has no Content).
fn content_len(wire: &[u8], at: usize) -> usize {
    kite_packet::tlv::Reader::new(&wire[at..])
        .next_element()
        .and_then(Result::ok)
        .filter(|el| el.typ == kite_packet::tlv_type::CONTENT)
        .map_or(0, |el| el.value.len())
}

/// One report line: Data/s and goodput between `a` and `b`, and RTT percentiles of `rtt`.
fn report(label: &str, a: &Counts, b: &Counts, rtt: &Histogram, secs: f64) -> String {
    format!(
        "{label}: {:.0} Data/s, {:.1} Mbps, RTT p50 {} µs p99 {} µs{}",
        (b.received - a.received) as f64 / secs,
        (b.content_octets - a.content_octets) as f64 * 8.0 / secs / 1e6,
        rtt.quantile(0.5),
        rtt.quantile(0.99),
        if b.verify_failures > a.verify_failures || b.verified > a.verified {
            format!(
                ", {} verified, {} failed",
                b.verified - a.verified,
                b.verify_failures - a.verify_failures
            )
        } else {
            String::new()
        }
    )
}
