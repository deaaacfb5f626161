//! The application tools: `kite ping`, `kite get`, `kite put` (ndnping, ndncatchunks and
//! ndnputchunks for any NFD-compatible forwarder), and what they share: the socket option,
//! name parsing and Ctrl-C handling.

pub mod dump;
pub mod get;
pub mod peek;
pub mod ping;
pub mod poke;
pub mod put;

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use anyhow::{Context, Result};
use clap::Args;
use kite_app::{Client, Endpoint};
use kite_packet::Name;

/// Where the forwarder listens.
#[derive(Args, Debug, Clone)]
pub struct SocketArgs {
    /// The forwarder's socket: a path, unix:///PATH, tcp://HOST[:PORT], udp://HOST[:PORT] or
    /// ws://HOST[:PORT][/PATH] [default:
    /// $NDN_CLIENT_TRANSPORT, else /run/nfd/nfd.sock, then $XDG_RUNTIME_DIR/kite/nfd.sock or
    /// $TMPDIR/kite-UID/nfd.sock, where kite run falls back]
    #[arg(long, value_name = "PATH")]
    socket: Option<String>,
}

impl SocketArgs {
    /// Connects to the forwarder; the error names every endpoint tried.
    pub fn connect(&self) -> Result<Client> {
        Ok(match &self.socket {
            Some(s) => Client::connect(&Endpoint::parse(s).map_err(anyhow::Error::msg)?)?,
            None => Client::connect_default()?,
        })
    }
}

/// An error that ends `kite` with its own exit status (ndnpeek's and ndnpoke's: 3 timeout,
/// 4 Nack) instead of 1.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct Exit {
    /// The exit status.
    pub code: u8,
    message: String,
}

impl Exit {
    /// Exit status `code`, saying `message` on standard error.
    pub fn new(code: u8, message: String) -> Self {
        Exit { code, message }
    }
}

/// Parses an NDN name URI for clap, with a message that says what is wrong.
pub fn parse_name(s: &str) -> Result<Name, String> {
    if !s.starts_with('/') && !s.starts_with("ndn:/") {
        return Err(format!("{s:?} is not an NDN name (it must start with '/')"));
    }
    s.parse::<Name>().map_err(|e| format!("{s:?}: {e}"))
}

/// A flag that SIGINT or SIGTERM sets, so a serving loop ends cleanly.
pub fn stop_on_signal() -> Result<Arc<AtomicBool>> {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, stop.clone()).context("installing a signal handler")?;
    }
    Ok(stop)
}
