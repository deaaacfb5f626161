//! `kite poke`: publishes one signed Data (as ndnpoke): registers its name, answers the first
//! Interest the Data satisfies (the exact name, or a CanBePrefix Interest for a prefix of it),
//! and exits; exit status 3 when no such Interest came within `--timeout`.

use std::io::Read;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::Args;
use kite_app::Producer;
use kite_packet::{Data, Interest, Name};

use super::{parse_name, stop_on_signal, Exit, SocketArgs};
use crate::sign_args::SignArgs;

/// `kite poke` options.
#[derive(Args, Debug)]
pub struct PokeArgs {
    /// The Data's name (also the prefix registered).
    #[arg(value_parser = parse_name)]
    name: Name,
    /// The content: a file, or - for standard input.
    #[arg(default_value = "-")]
    file: PathBuf,
    /// FreshnessPeriod in milliseconds [default: none].
    #[arg(short = 'F', long, value_name = "MS")]
    freshness: Option<u64>,
    /// Give up when no Interest came within this many milliseconds.
    #[arg(short = 'w', long, default_value_t = 10_000, value_name = "MS")]
    timeout: u64,
    #[command(flatten)]
    signing: SignArgs,
    #[command(flatten)]
    socket: SocketArgs,
}

/// Whether a Data named `name` answers `i` (exact name, or CanBePrefix and a prefix of it).
fn satisfies(name: &Name, i: &Interest) -> bool {
    i.name == *name || (i.can_be_prefix && i.name.is_prefix_of(name))
}

/// Runs `kite poke`.
pub fn run(args: PokeArgs) -> Result<String> {
    let mut content = Vec::new();
    if args.file.as_os_str() == "-" {
        std::io::stdin()
            .lock()
            .read_to_end(&mut content)
            .context("reading standard input")?;
    } else {
        content = std::fs::read(&args.file)
            .with_context(|| format!("reading {}", args.file.display()))?;
    }
    let signer = args.signing.signer(&args.name)?;
    let mut data = Data::new(args.name.clone(), content);
    data.meta.freshness_period = args.freshness;
    let wire = data.sign(&signer).context("signing the Data")?;
    let stop = stop_on_signal()?;
    let mut producer = Producer::new(args.socket.connect()?);
    producer
        .register(&args.name)
        .with_context(|| format!("registering {}", args.name))?;
    eprintln!("kite poke: serving {}", args.name);
    let deadline = Instant::now() + Duration::from_millis(args.timeout);
    let mut sent = false;
    producer.serve(&stop, Some(deadline), |i| {
        if sent || !satisfies(&args.name, i) {
            return None;
        }
        sent = true;
        stop.store(true, Ordering::Release);
        Some(wire.clone())
    })?;
    if sent {
        Ok(String::new())
    } else {
        Err(Exit::new(
            3,
            format!("no Interest for {} within {} ms", args.name, args.timeout),
        )
        .into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_the_exact_name_or_a_prefix_interest_only() {
        let name: Name = "/a/b".parse().unwrap();
        let mut i = Interest::new("/a/b".parse().unwrap());
        assert!(satisfies(&name, &i));
        i.name = "/a".parse().unwrap();
        assert!(!satisfies(&name, &i), "a prefix needs CanBePrefix");
        i.can_be_prefix = true;
        assert!(satisfies(&name, &i));
        i.name = "/a/b/c".parse().unwrap();
        assert!(!satisfies(&name, &i), "a longer name is not answered");
    }
}
