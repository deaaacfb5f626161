//! Whole TLV frames from a forwarder's unix stream, read in large chunks: what `kite perf` and
//! `kite bench daemon` read their connections through.

use std::io::{ErrorKind, Read};
use std::os::unix::net::UnixStream;
use std::time::Duration;

use anyhow::{anyhow, Result};
use bytes::Bytes;
use kite_face::framing::{Framer, READ_CHUNK};

/// Whether a failed read only means nothing has arrived yet (a non-blocking socket, a read
/// timeout, a signal), so the caller should poll again rather than give up.
pub fn nothing_yet(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
    )
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

    /// Whether octets are buffered that no frame has returned yet (a read may not be needed).
    pub fn buffered(&self) -> bool {
        self.framer.pending() > 0
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
            Err(e) if nothing_yet(&e) => {
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
