//! `kite bench flood`: the load of a hostile face, to measure what it costs everyone else.
//! One face sends Interests nobody will answer, for names never asked before and with the
//! longest InterestLifetime there is, as fast as its socket takes them, over the forwarder's
//! unix socket or its UDP listener. Their prefix is registered by a second connection that
//! never reads (a producer that never answers), so every Interest the forwarder admits is
//! forwarded and stays pending. Each Interest is a copy of one encoding with its last name
//! component (the sequence number) and its Nonce rewritten in place, so the generator spends
//! little of the machine.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context, Result};
use clap::Args;
use kite_packet::{Interest, Name, Nonce};
use serde_json::json;

use super::attach::Target;
use super::socket::LoadSocket;

/// Interests queued per write.
const BATCH: usize = 64;
/// The Nonce of the template, found again in its encoding to be rewritten.
const MARK: u32 = 0x5EED_F10D;

/// Parameters of `kite bench flood`.
#[derive(Args)]
pub struct FloodArgs {
    /// The prefix of the flood's names (registered to a producer that never answers).
    #[arg(long, default_value = "/flood")]
    prefix: String,
    /// The forwarder's unix socket: the producer registers there, and the flood goes there
    /// unless --udp is given.
    #[arg(long, value_name = "PATH")]
    socket: PathBuf,
    /// Send the flood to this UDP listener (udp://HOST:PORT) instead of the unix socket.
    #[arg(long, value_name = "URI")]
    udp: Option<String>,
    /// InterestLifetime of every Interest, in ms (default: the largest there is).
    #[arg(long, value_name = "MS", default_value_t = u64::MAX)]
    lifetime: u64,
    /// Interests per second to send at most (0: as fast as the socket takes them). A flood
    /// from another machine costs this one's cores nothing; paced, the flooder leaves the
    /// cores it shares with the forwarder to it, so what is measured is the forwarder's work.
    #[arg(long, value_name = "N", default_value_t = 0)]
    rate: u64,
    /// How long to flood, e.g. 10s.
    #[arg(long, default_value = "10s", value_parser = crate::duration::parse_duration)]
    duration: Duration,
    /// Print one JSON object on standard output and nothing else (the human summary goes to
    /// standard error), for scripts.
    #[arg(long)]
    json: bool,
}

/// One encoded Interest and where its sequence number and Nonce lie.
struct Template {
    wire: Vec<u8>,
    seq_at: usize,
    nonce_at: usize,
}

impl Template {
    fn new(prefix: &Name, lifetime: u64) -> Result<Template> {
        let mut i = Interest::new(prefix.clone().append_generic(&[0; 8]));
        i.nonce = Some(Nonce::from(MARK));
        i.lifetime = Some(lifetime);
        let wire = i.encode().to_vec();
        let find = |needle: &[u8]| {
            wire.windows(needle.len())
                .position(|w| w == needle)
                .ok_or_else(|| anyhow!("template Interest lacks {needle:02x?}"))
        };
        let nonce_at = find(&[&[0x0a, 4][..], &MARK.to_be_bytes()].concat())? + 2;
        let seq_at = find(&[8, 8, 0, 0, 0, 0, 0, 0, 0, 0])? + 2;
        Ok(Template {
            wire,
            seq_at,
            nonce_at,
        })
    }

    /// Interest number `seq`: a name never used before, and a Nonce of its own.
    fn fill(&mut self, seq: u64) -> &[u8] {
        self.wire[self.seq_at..self.seq_at + 8].copy_from_slice(&seq.to_be_bytes());
        let nonce = (seq as u32) ^ MARK;
        self.wire[self.nonce_at..self.nonce_at + 4].copy_from_slice(&nonce.to_be_bytes());
        &self.wire
    }
}

/// Floods until the duration ends; returns the report.
pub fn run(a: FloodArgs) -> Result<String> {
    let prefix: Name = a.prefix.parse().context("--prefix")?;
    let socket = Some(a.socket.clone());
    // Kept open and never read: the producer that never answers.
    let _sink = crate::perf::connect::open_registered(&socket, &prefix)?;
    let (mut link, transport) = match &a.udp {
        Some(uri) => match Target::parse(uri).map_err(|e| anyhow!("--udp: {e}"))? {
            Target::Udp(addr) => (LoadSocket::datagram(LoadSocket::udp_socket(addr)?), "udp"),
            Target::Unix(_) => return Err(anyhow!("--udp takes udp://HOST:PORT")),
        },
        None => {
            let stream = kite_app::Client::connect_unix_socket(&a.socket)?
                .into_unix_stream()
                .ok_or_else(|| anyhow!("a new connection has nothing buffered"))?;
            (LoadSocket::stream(stream)?, "unix")
        }
    };
    let mut template = Template::new(&prefix, a.lifetime)?;
    let start = Instant::now();
    let mut seq = 0u64;
    while start.elapsed() < a.duration {
        for _ in 0..BATCH {
            link.send(template.fill(seq))?;
            seq += 1;
        }
        link.flush()?;
        if a.rate > 0 {
            // Sleep until this batch's place in the schedule.
            let due = start + Duration::from_secs_f64(seq as f64 / a.rate as f64);
            if let Some(wait) = due.checked_duration_since(Instant::now()) {
                std::thread::sleep(wait);
            }
        }
    }
    let secs = start.elapsed().as_secs_f64();
    let text = format!(
        "flood over {transport}: {seq} Interests in {secs:.1} s ({:.0}/s)\n",
        seq as f64 / secs
    );
    if !a.json {
        return Ok(text);
    }
    // Standard output carries the JSON alone; the human line goes to standard error.
    eprint!("{text}");
    let summary = json!({
        "transport": transport,
        "interests": seq,
        "interests_per_sec": (seq as f64 / secs).round(),
        "seconds": secs,
    });
    Ok(format!("{summary}\n"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use kite_packet::InterestView;

    #[test]
    fn each_interest_has_its_own_name_and_nonce() {
        let prefix: Name = "/flood".parse().unwrap();
        let mut t = Template::new(&prefix, u64::MAX).unwrap();
        let a = InterestView::decode(bytes::Bytes::copy_from_slice(t.fill(1))).unwrap();
        let b = InterestView::decode(bytes::Bytes::copy_from_slice(t.fill(2))).unwrap();
        assert_ne!(a.name, b.name);
        assert_ne!(a.nonce, b.nonce);
        assert!(prefix.is_prefix_of(&a.name));
        assert_eq!(a.lifetime_ms(), u64::MAX);
    }
}
