//! Shared memory with the forwarder ([`kite_shm`]): right after connecting to a Unix
//! socket, the client asks for a region; a forwarder that offers one answers with its
//! descriptors, any other answers a Nack (no route) or nothing, and the client keeps the
//! socket. Set `KITE_SHM=off` (or `0`, `false`) to keep the socket always.

use std::io::{self, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant};

use bytes::Bytes;
use kite_link::framing::Framer;
use kite_packet::{Interest, NetPacket};
use kite_shm::{self as shm, ShmReader, ShmWriter, OFFER_NAME};

use crate::random::random_nonce;

/// How long the client waits for the forwarder's answer before it gives up on shared
/// memory (a forwarder that drops the request instead of answering it).
const OFFER_WAIT: Duration = Duration::from_secs(2);

/// Whether shared memory may be asked for: not when `KITE_SHM` is `off`, `0` or `false`.
pub fn enabled() -> bool {
    !matches!(
        std::env::var("KITE_SHM").as_deref(),
        Ok("off" | "0" | "false")
    )
}

/// A link to the forwarder after the request: shared memory, or the socket it came over.
pub(crate) enum Negotiated {
    Shm(ShmReader, ShmWriter),
    Socket(UnixStream),
}

/// Asks the forwarder behind `stream` (connected to `path`) for shared memory. Without an
/// offer the socket is kept (after a Nack) or a fresh connection is made (after no answer,
/// so that a late offer cannot arrive on the socket the client goes on using).
pub(crate) fn negotiate(stream: UnixStream, path: &Path) -> io::Result<Negotiated> {
    let mut request = Interest::new(OFFER_NAME.parse().expect("a valid name"));
    request.nonce = Some(random_nonce());
    request.lifetime = Some(OFFER_WAIT.as_millis() as u64);
    (&stream).write_all(&request.encode())?;
    let deadline = Instant::now() + OFFER_WAIT;
    let mut framer = Framer::new();
    let mut fds = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(frame) = framer
            .next_frame()
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?
        {
            return Ok(match is_offer(frame) {
                true => {
                    let (r, w) = shm::attach(stream, fds)?;
                    Negotiated::Shm(r, w)
                }
                false => Negotiated::Socket(stream),
            });
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(Negotiated::Socket(UnixStream::connect(path)?));
        }
        stream.set_read_timeout(Some(left))?;
        match shm::recv_with_fds(&stream, &mut chunk, &mut fds) {
            Ok(0) => {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the forwarder closed the connection",
                ))
            }
            Ok(n) => framer.buffer().extend_from_slice(&chunk[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                return Ok(Negotiated::Socket(UnixStream::connect(path)?));
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// Whether the forwarder's answer is the offer (a Data of the request's name).
fn is_offer(frame: Bytes) -> bool {
    matches!(
        NetPacket::decode_frame(frame),
        Ok((_, NetPacket::Data(d))) if d.name == OFFER_NAME.parse().expect("a valid name")
    )
}

/// The receiving half of a raw link to the forwarder ([`crate::Client::into_link`]): what
/// the client had already received and not returned comes first, then the link itself.
#[derive(Debug)]
pub struct LinkReader {
    /// Octets received before the hand-over (whole frames, then the start of one).
    ahead: Bytes,
    link: Link,
}

#[derive(Debug)]
enum Link {
    Unix(UnixStream),
    Shm(ShmReader),
}

impl From<UnixStream> for LinkReader {
    fn from(s: UnixStream) -> Self {
        LinkReader::new(Bytes::new(), Link::Unix(s))
    }
}

impl LinkReader {
    pub(crate) fn unix(ahead: Bytes, s: UnixStream) -> Self {
        LinkReader::new(ahead, Link::Unix(s))
    }

    pub(crate) fn shm(ahead: Bytes, r: ShmReader) -> Self {
        LinkReader::new(ahead, Link::Shm(r))
    }

    fn new(ahead: Bytes, link: Link) -> Self {
        LinkReader { ahead, link }
    }

    /// How long a read waits for data before `WouldBlock`.
    pub fn set_read_timeout(&mut self, t: Option<Duration>) -> io::Result<()> {
        match &mut self.link {
            Link::Unix(s) => s.set_read_timeout(t),
            Link::Shm(r) => {
                r.set_read_timeout(t);
                Ok(())
            }
        }
    }
}

impl crate::framing::Source for LinkReader {
    /// Into the frame buffer's uninitialized room, from the socket or the ring (what was
    /// received before the hand-over first, whole).
    fn read_into(&mut self, framer: &mut Framer) -> io::Result<usize> {
        if !self.ahead.is_empty() {
            let ahead = std::mem::take(&mut self.ahead);
            framer.buffer().extend_from_slice(&ahead);
            return Ok(ahead.len());
        }
        match &mut self.link {
            Link::Unix(s) => crate::framing::Source::read_into(s, framer),
            Link::Shm(r) => {
                let room = framer.read_room();
                r.read_buf(framer.buffer(), room)
            }
        }
    }
}

impl Read for LinkReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if !self.ahead.is_empty() {
            let n = buf.len().min(self.ahead.len());
            buf[..n].copy_from_slice(&self.ahead.split_to(n));
            return Ok(n);
        }
        match &mut self.link {
            Link::Unix(s) => s.read(buf),
            Link::Shm(r) => r.read(buf),
        }
    }
}

/// The sending half of a raw link to the forwarder ([`crate::Client::into_link`]).
#[derive(Debug)]
pub enum LinkWriter {
    /// The Unix socket.
    Unix(UnixStream),
    /// The shared-memory ring to the forwarder.
    Shm(ShmWriter),
}

impl Write for LinkWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            LinkWriter::Unix(s) => s.write(buf),
            LinkWriter::Shm(w) => w.write(buf),
        }
    }

    fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        match self {
            LinkWriter::Unix(s) => s.write_vectored(bufs),
            LinkWriter::Shm(w) => w.write_vectored(bufs),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
