//! The perf tools' connection to the forwarder: a unix stream or, when the forwarder offers
//! it, shared memory (registered for a prefix when serving), read through
//! [`crate::frames::FrameSource`].

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{anyhow, Context, Result};
use kite_app::shm::{LinkReader, LinkWriter};
use kite_app::Client;
use kite_packet::Name;

/// Connects to `socket`, or to the first default endpoint that accepts.
fn connect(socket: &Option<PathBuf>) -> Result<Client> {
    Ok(match socket {
        Some(p) => Client::connect_unix(p).with_context(|| format!("connect {}", p.display()))?,
        None => Client::connect_default()?,
    })
}

/// The two directions of a new connection (perf needs a unix socket or shared memory).
pub fn open(socket: &Option<PathBuf>) -> Result<(LinkReader, LinkWriter)> {
    connect(socket)?
        .into_link()
        .ok_or_else(|| anyhow!("kite perf needs the forwarder's unix socket"))
}

/// A connection with `prefix` registered (rib/register for this face) through it.
pub fn open_registered(
    socket: &Option<PathBuf>,
    prefix: &Name,
) -> Result<(LinkReader, LinkWriter)> {
    let mut client = connect(socket)?;
    let params = kite_mgmt_proto::ControlParameters {
        name: Some(prefix.clone()),
        ..Default::default()
    };
    client
        .command_ok("rib", "register", &params, Duration::from_secs(5))
        .with_context(|| format!("registering {prefix}"))?;
    client
        .into_link()
        .ok_or_else(|| anyhow!("kite perf needs the forwarder's unix socket"))
}

/// Content octet `i` of every perf Data, so the client can check payloads.
pub fn payload_octet(i: usize) -> u8 {
    (i % 251) as u8
}
