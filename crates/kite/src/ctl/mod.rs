//! The forwarder control commands (`kite status`, `face`, `channel`, `route`, `fib`,
//! `strategy`, `cs`):
//! Kite's `nfdc`. They speak only the NFD management protocol through `kite-app`, so they work
//! against Kite and NFD alike.

pub mod channel;
pub mod cs;
pub mod face;
pub mod fib;
pub mod route;
pub mod status;
pub mod strategy;
mod table;

pub use kite::ctl::format;

use std::time::Duration;

use anyhow::{Context, Result};
use bytes::Bytes;
use clap::{Args, ValueEnum};
use kite_app::{nfd_name, Client, Endpoint};
use kite_mgmt_proto::{decode_items, ControlParameters, ControlResponse, Tlv};
use serde_json::Value;

/// How long to wait for each answer (ndn-cxx's command lifetime).
const TIMEOUT: Duration = Duration::from_secs(4);

/// Options every control command takes.
#[derive(Args, Debug, Clone)]
pub struct Common {
    /// The forwarder's socket: a path, unix:///PATH, tcp://HOST[:PORT], udp://HOST[:PORT] or
    /// ws://HOST[:PORT][/PATH] [default:
    /// $NDN_CLIENT_TRANSPORT, else /run/nfd/nfd.sock, then $XDG_RUNTIME_DIR/kite/nfd.sock or
    /// $TMPDIR/kite-UID/nfd.sock, where kite run falls back]
    #[arg(long, global = true, value_name = "PATH")]
    socket: Option<String>,
    /// Print one JSON value on standard output instead of a table.
    #[arg(long, global = true)]
    json: bool,
}

impl Common {
    /// Connects to the forwarder.
    fn connect(&self) -> Result<Client> {
        Ok(match &self.socket {
            Some(s) => Client::connect(&Endpoint::parse(s).map_err(anyhow::Error::msg)?)?,
            None => Client::connect_default()?,
        })
    }

    /// `json` (pretty-printed) when --json was given, else `text()`.
    fn output(&self, json: Value, text: impl FnOnce() -> String) -> String {
        if self.json {
            let mut s = serde_json::to_string_pretty(&json).expect("JSON values serialize");
            s.push('\n');
            s
        } else {
            text()
        }
    }
}

/// `on` or `off`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OnOff {
    /// Enabled.
    On,
    /// Disabled.
    Off,
}

impl OnOff {
    fn enabled(self) -> bool {
        self == OnOff::On
    }
}

/// Fetches the dataset `/localhost/nfd/<module>/<what>`.
fn fetch(client: &mut Client, module: &str, what: &str) -> Result<Bytes> {
    client
        .dataset(&nfd_name(&[module.as_bytes(), what.as_bytes()]), TIMEOUT)
        .with_context(|| format!("{module}/{what}"))
}

/// Fetches and decodes a dataset made of `T` items.
fn fetch_items<T: Tlv>(client: &mut Client, module: &str, what: &str) -> Result<Vec<T>> {
    let payload = fetch(client, module, what)?;
    decode_items(&payload).with_context(|| format!("decoding {module}/{what}"))
}

/// Sends a command and returns its response, whatever the status.
fn command(
    client: &mut Client,
    module: &str,
    verb: &str,
    params: &ControlParameters,
) -> Result<ControlResponse> {
    client
        .command(module, verb, params, TIMEOUT)
        .with_context(|| format!("{module}/{verb}"))
}

/// Sends a command that must succeed and returns the response's ControlParameters.
fn command_ok(
    client: &mut Client,
    module: &str,
    verb: &str,
    params: &ControlParameters,
) -> Result<ControlParameters> {
    client
        .command_ok(module, verb, params, TIMEOUT)
        .with_context(|| format!("{module}/{verb}"))
}
