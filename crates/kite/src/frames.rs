//! Whole TLV frames from a forwarder's unix stream or shared-memory ring, read in large
//! chunks by kite-app's [`FrameReader`], with reads that time out so the caller keeps time:
//! what `kite perf` and `kite bench daemon` read their connections through.

use std::io::ErrorKind;
use std::time::Duration;

use anyhow::{anyhow, Result};
use bytes::Bytes;
use kite_app::framing::FrameReader;
use kite_app::shm::LinkReader;

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
    stream: LinkReader,
    reader: FrameReader,
}

/// What arrived in one [`FrameSource::fill`].
pub enum Arrived {
    /// Octets arrived (frames may be ready).
    Data,
    /// The read timed out, or a signal interrupted it, with nothing new.
    Idle,
    /// The forwarder closed the connection.
    Closed,
}

impl FrameSource {
    /// Reads from `stream`, waking at least every `tick` so the caller can keep time.
    pub fn new(stream: impl Into<LinkReader>, tick: Duration) -> Result<Self> {
        let mut stream = stream.into();
        stream.set_read_timeout(Some(tick))?;
        Ok(FrameSource {
            stream,
            reader: FrameReader::new(),
        })
    }

    /// Whether octets are buffered that no frame has returned yet (a read may not be needed).
    pub fn buffered(&self) -> bool {
        self.reader.has_buffered()
    }

    /// The next buffered frame, if a whole one is there.
    pub fn next(&mut self) -> Result<Option<Bytes>> {
        self.reader.buffered_frame().map_err(|e| anyhow!("{e}"))
    }

    /// One read from the socket or ring into the buffer's spare room (not zeroed first).
    pub fn fill(&mut self) -> Result<Arrived> {
        match self.reader.fill(&mut self.stream) {
            Ok(0) => Ok(Arrived::Closed),
            Ok(_) => Ok(Arrived::Data),
            Err(e) if nothing_yet(&e) => Ok(Arrived::Idle),
            Err(e) => Err(e.into()),
        }
    }
}
