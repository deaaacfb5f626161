//! `kite ping`: reachability and round-trip time, as ndnping and ndnpingserver measure them.
//! Probes are named `<prefix>/ping/<sequence number>` (a generic component, decimal), start at
//! a random sequence number and carry MustBeFresh, so no cache answers them. Like ndnping,
//! it exits 1 when any probe is unanswered (timed out or Nacked).

use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Args;
use kite_app::error::nack_reason_text;
use kite_app::{random::random_u64, Event, InterestId, Pipeline, Producer};
use kite_packet::{Data, Interest, Name};

use super::{parse_name, stop_on_signal, SocketArgs};
use crate::sign_args::SignArgs;

/// `kite ping` options.
#[derive(Args, Debug)]
pub struct PingArgs {
    /// The prefix to ping (probes go to PREFIX/ping/<seq>), or with --server the prefix to
    /// answer under.
    #[arg(value_parser = parse_name)]
    prefix: Name,
    /// Answer pings under PREFIX/ping instead of sending them (ndnpingserver), printing each.
    #[arg(long)]
    server: bool,
    /// Probes to send; with --server, probes to answer before exiting [default: until Ctrl-C].
    #[arg(short = 'c', long)]
    count: Option<u64>,
    /// Milliseconds between probes.
    #[arg(short = 'i', long, default_value_t = 1000, value_name = "MS")]
    interval: u64,
    /// Milliseconds to wait for each probe's answer (also its InterestLifetime).
    #[arg(long, default_value_t = 4000, value_name = "MS")]
    timeout: u64,
    /// The first sequence number [default: random].
    #[arg(long)]
    start_seq: Option<u64>,
    /// With --server: octets of content in each answer.
    #[arg(long, default_value_t = 0, value_name = "OCTETS")]
    size: usize,
    /// With --server: FreshnessPeriod of each answer, in milliseconds.
    #[arg(long, default_value_t = 1000, value_name = "MS")]
    freshness: u64,
    #[command(flatten)]
    signing: SignArgs,
    #[command(flatten)]
    socket: SocketArgs,
}

/// Runs `kite ping`.
pub fn run(args: PingArgs) -> Result<String> {
    if args.interval == 0 || args.timeout == 0 {
        bail!("--interval and --timeout must be at least 1 ms");
    }
    let stop = stop_on_signal()?;
    if args.server {
        serve(&args, &stop)
    } else {
        ping(&args, &stop)
    }
}

/// The probe prefix `<prefix>/ping`.
fn ping_prefix(prefix: &Name) -> Name {
    prefix.clone().append_generic(b"ping")
}

fn ping(args: &PingArgs, stop: &AtomicBool) -> Result<String> {
    let mut pipe = Pipeline::new(args.socket.connect()?);
    let base = ping_prefix(&args.prefix);
    let interval = Duration::from_millis(args.interval);
    let timeout = Duration::from_millis(args.timeout);
    let mut seq = args.start_seq.unwrap_or_else(|| random_u64() >> 1);
    let mut probes: Vec<(InterestId, u64)> = Vec::new();
    let mut stats = Summary::default();
    println!("PING {}", args.prefix);
    let mut next_send = Instant::now();
    while !stop.load(Ordering::Acquire) {
        let more = args.count.is_none_or(|c| stats.sent < c);
        if !more && pipe.outstanding() == 0 {
            break;
        }
        if more && Instant::now() >= next_send {
            let mut i = Interest::new(base.clone().append_generic(seq.to_string().as_bytes()));
            i.must_be_fresh = true;
            i.lifetime = Some(args.timeout);
            probes.push((pipe.express(i, timeout)?, seq));
            stats.sent += 1;
            seq = seq.wrapping_add(1);
            next_send += interval;
        }
        let until = if more {
            next_send
        } else {
            Instant::now() + Duration::from_millis(100)
        };
        for ev in pipe.poll(until)? {
            report(&args.prefix, &mut probes, &mut stats, ev);
        }
    }
    let summary = stats.render(&args.prefix);
    let received = stats.rtts.len() as u64;
    if received < stats.sent {
        // As ndnping: the summary, then a failure exit when any probe went unanswered.
        print!("{summary}");
        bail!(
            "{} of {} probes unanswered",
            stats.sent - received,
            stats.sent
        );
    }
    Ok(summary)
}

/// Prints what happened to one probe and counts it.
fn report(prefix: &Name, probes: &mut Vec<(InterestId, u64)>, stats: &mut Summary, ev: Event) {
    let id = match &ev {
        Event::Data { id, .. } | Event::Nack { id, .. } | Event::Timeout { id } => *id,
    };
    let Some(at) = probes.iter().position(|(p, _)| *p == id) else {
        return;
    };
    let (_, seq) = probes.swap_remove(at);
    match ev {
        Event::Data { rtt, .. } => {
            stats.rtts.push(rtt);
            println!("content from {prefix}: seq={seq} time={} ms", ms(rtt));
        }
        Event::Nack { reason, .. } => {
            stats.nacks += 1;
            println!(
                "nack from {prefix}: seq={seq} reason={}",
                nack_reason_text(reason)
            );
        }
        Event::Timeout { .. } => println!("timeout from {prefix}: seq={seq}"),
    }
}

/// What `kite ping` counted.
#[derive(Debug, Default)]
struct Summary {
    sent: u64,
    nacks: u64,
    rtts: Vec<Duration>,
}

impl Summary {
    /// ndnping's closing lines.
    fn render(&self, prefix: &Name) -> String {
        let received = self.rtts.len() as u64;
        let lost = self.sent.saturating_sub(received);
        let loss = if self.sent == 0 {
            0.0
        } else {
            lost as f64 * 100.0 / self.sent as f64
        };
        let mut s = format!(
            "\n--- {prefix} ping statistics ---\n{} packets transmitted, {received} received, {loss:.1}% lost, {} nacked\n",
            self.sent, self.nacks
        );
        if received > 0 {
            let v: Vec<f64> = self.rtts.iter().map(|d| d.as_secs_f64() * 1e3).collect();
            let n = v.len() as f64;
            let avg = v.iter().sum::<f64>() / n;
            let min = v.iter().copied().fold(f64::INFINITY, f64::min);
            let max = v.iter().copied().fold(0.0, f64::max);
            let mdev = (v.iter().map(|x| (x - avg).powi(2)).sum::<f64>() / n).sqrt();
            let _ = writeln!(
                s,
                "rtt min/avg/max/mdev = {min:.3}/{avg:.3}/{max:.3}/{mdev:.3} ms"
            );
        }
        s
    }
}

fn ms(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64() * 1e3)
}

fn serve(args: &PingArgs, stop: &AtomicBool) -> Result<String> {
    let prefix = ping_prefix(&args.prefix);
    let mut producer = Producer::new(args.socket.connect()?);
    producer
        .register(&prefix)
        .with_context(|| format!("registering {prefix}"))?;
    println!("PING SERVER {prefix}");
    let signer = args.signing.signer(&prefix)?;
    let payload = bytes::Bytes::from(vec![b'a'; args.size]);
    let mut answered = 0u64;
    let mut failure = None;
    producer.serve(stop, None, |i| {
        if !prefix.is_prefix_of(&i.name) || i.name.len() <= prefix.len() {
            return None;
        }
        let mut d = Data::new(i.name.clone(), payload.clone());
        d.meta.freshness_period = Some(args.freshness);
        match d.sign(&signer) {
            Ok(wire) => {
                answered += 1;
                println!("interest {}", i.name);
                if args.count.is_some_and(|c| answered >= c) {
                    stop.store(true, Ordering::Release);
                }
                Some(wire)
            }
            Err(e) => {
                failure = Some(e);
                stop.store(true, Ordering::Release);
                None
            }
        }
    })?;
    if let Some(e) = failure {
        return Err(e.into());
    }
    Ok(format!(
        "\n--- {prefix} ping server: {answered} probes answered\n"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_counts_loss_and_rtt_spread() {
        let s = Summary {
            sent: 4,
            nacks: 1,
            rtts: vec![Duration::from_millis(1), Duration::from_millis(3)],
        };
        let text = s.render(&"/p".parse().unwrap());
        assert!(
            text.contains("4 packets transmitted, 2 received, 50.0% lost, 1 nacked"),
            "{text}"
        );
        assert!(
            text.contains("rtt min/avg/max/mdev = 1.000/2.000/3.000/1.000 ms"),
            "{text}"
        );
    }
}
