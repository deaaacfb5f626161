//! `kite peek`: one Interest, its Data printed (as ndnpeek). Standard output gets the Data's
//! content, or with `--tlv` / `--base64` / `--hex` the whole Data packet; the exit status says
//! what happened: 0 Data, 3 timeout, 4 Nack (ndnpeek's codes), 1 any other error.

use std::io::Write;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use base64::Engine as _;
use bytes::Bytes;
use clap::Args;
use kite_app::error::nack_reason_text;
use kite_app::{Event, Pipeline};
use kite_packet::{Interest, Name};

use super::{parse_name, Exit, SocketArgs};

/// `kite peek` options.
#[derive(Args, Debug)]
pub struct PeekArgs {
    /// The Interest's name.
    #[arg(value_parser = parse_name)]
    name: Name,
    /// Set CanBePrefix: a Data under NAME answers.
    #[arg(short = 'P', long)]
    prefix: bool,
    /// Set MustBeFresh: no stale cached Data answers.
    #[arg(short = 'f', long)]
    fresh: bool,
    /// InterestLifetime in milliseconds; also how long to wait.
    #[arg(short = 'l', long, default_value_t = 4000, value_name = "MS")]
    lifetime: u64,
    /// HopLimit (0 to 255).
    #[arg(short = 'H', long, value_name = "N")]
    hop_limit: Option<u8>,
    /// ApplicationParameters, as hexadecimal.
    #[arg(
        short = 'A',
        long,
        value_name = "HEX",
        conflicts_with = "app_params_file"
    )]
    app_params: Option<String>,
    /// ApplicationParameters, read from this file.
    #[arg(long, value_name = "FILE")]
    app_params_file: Option<std::path::PathBuf>,
    /// Print the whole Data packet (binary TLV) instead of its content.
    #[arg(long, group = "form")]
    tlv: bool,
    /// Print the whole Data packet in base64 (one line).
    #[arg(long, group = "form")]
    base64: bool,
    /// Print the whole Data packet in hexadecimal (one line).
    #[arg(long, group = "form")]
    hex: bool,
    #[command(flatten)]
    socket: SocketArgs,
}

/// Runs `kite peek`.
pub fn run(args: PeekArgs) -> Result<String> {
    if args.lifetime == 0 {
        bail!("--lifetime must be at least 1 ms");
    }
    let mut interest = Interest::new(args.name.clone());
    interest.can_be_prefix = args.prefix;
    interest.must_be_fresh = args.fresh;
    interest.lifetime = Some(args.lifetime);
    interest.hop_limit = args.hop_limit;
    interest.app_params = match (&args.app_params, &args.app_params_file) {
        (Some(h), _) => Some(Bytes::from(
            hex::decode(h.trim()).context("--app-params is not hexadecimal")?,
        )),
        (None, Some(f)) => Some(Bytes::from(
            std::fs::read(f).with_context(|| format!("reading {}", f.display()))?,
        )),
        (None, None) => None,
    };
    let mut pipe = Pipeline::new(args.socket.connect()?);
    let timeout = Duration::from_millis(args.lifetime);
    let id = pipe.express(interest, timeout)?;
    // A margin past the lifetime, so the pipeline's own timeout is what ends the wait.
    let until = Instant::now() + timeout + Duration::from_millis(100);
    while Instant::now() < until {
        for ev in pipe.poll(until)? {
            match ev {
                Event::Data { id: got, data, .. } if got == id => {
                    let wire = data.wire().cloned().unwrap_or_else(|| data.encode());
                    let out: Vec<u8> = if args.tlv {
                        wire.to_vec()
                    } else if args.base64 {
                        let mut s = base64::engine::general_purpose::STANDARD.encode(&wire);
                        s.push('\n');
                        s.into_bytes()
                    } else if args.hex {
                        format!("{}\n", hex::encode(&wire)).into_bytes()
                    } else {
                        data.content.as_deref().unwrap_or_default().to_vec()
                    };
                    let mut stdout = std::io::stdout().lock();
                    stdout.write_all(&out).context("writing standard output")?;
                    stdout.flush().context("writing standard output")?;
                    return Ok(String::new());
                }
                Event::Nack { id: got, reason } if got == id => {
                    return Err(Exit::new(
                        4,
                        format!("Nack ({}) for {}", nack_reason_text(reason), args.name),
                    )
                    .into());
                }
                Event::Timeout { id: got } if got == id => break,
                _ => {}
            }
        }
    }
    Err(Exit::new(3, format!("no answer for {} within {timeout:?}", args.name)).into())
}
