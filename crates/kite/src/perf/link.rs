//! The perf tools' connection to the forwarder: a unix stream (registered for a prefix when
//! serving), a reader that splits it into frames, and the LP-aware packet split.

use std::io::{ErrorKind, Read};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{anyhow, Context, Result};
use bytes::Bytes;
use kite_app::Client;
use kite_face::framing::{Framer, READ_CHUNK};
use kite_packet::Name;

/// Connects to `socket`, or to the first default endpoint that accepts.
fn connect(socket: &Option<PathBuf>) -> Result<Client> {
    Ok(match socket {
        Some(p) => Client::connect_unix(p).with_context(|| format!("connect {}", p.display()))?,
        None => Client::connect_default()?,
    })
}

/// The raw socket of a new connection (perf needs a unix socket).
pub fn open(socket: &Option<PathBuf>) -> Result<UnixStream> {
    connect(socket)?
        .into_unix_stream()
        .ok_or_else(|| anyhow!("kite perf needs the forwarder's unix socket"))
}

/// A connection with `prefix` registered (rib/register for this face) through it.
pub fn open_registered(socket: &Option<PathBuf>, prefix: &Name) -> Result<UnixStream> {
    let mut client = connect(socket)?;
    let params = kite_mgmt::ControlParameters {
        name: Some(prefix.clone()),
        ..Default::default()
    };
    client
        .command_ok("rib", "register", &params, Duration::from_secs(5))
        .with_context(|| format!("registering {prefix}"))?;
    client
        .into_unix_stream()
        .ok_or_else(|| anyhow!("kite perf needs the forwarder's unix socket"))
}

/// Whole TLV frames from a stream, read in large chunks.
pub struct FrameSource {
    stream: UnixStream,
    framer: Framer,
}

/// What one [`FrameSource::fill`] saw.
pub enum Fill {
    /// Octets arrived (frames may be ready).
    Data,
    /// The read timed out, or a signal interrupted it, with nothing new.
    Idle,
    /// The forwarder closed the connection.
    Closed,
}

impl FrameSource {
    /// Reads from `stream`, waking at least every `tick` so the caller can keep time.
    pub fn new(stream: UnixStream, tick: Duration) -> Result<Self> {
        stream.set_read_timeout(Some(tick))?;
        Ok(FrameSource {
            stream,
            framer: Framer::new(),
        })
    }

    /// The next buffered frame, if a whole one is there.
    pub fn next(&mut self) -> Result<Option<Bytes>> {
        self.framer.next_frame().map_err(|e| anyhow!("{e}"))
    }

    /// One read from the socket into the buffer.
    pub fn fill(&mut self) -> Result<Fill> {
        let buf = self.framer.buffer();
        let old = buf.len();
        buf.resize(old + READ_CHUNK, 0);
        let r = self.stream.read(&mut buf[old..]);
        let n = match r {
            Ok(n) => n,
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                ) =>
            {
                buf.truncate(old);
                return Ok(Fill::Idle);
            }
            Err(e) => {
                buf.truncate(old);
                return Err(e.into());
            }
        };
        buf.truncate(old + n);
        Ok(if n == 0 { Fill::Closed } else { Fill::Data })
    }
}

/// Content octet `i` of every perf Data, so the client can check payloads.
pub fn payload_octet(i: usize) -> u8 {
    (i % 251) as u8
}
