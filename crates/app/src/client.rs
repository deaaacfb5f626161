//! [`Client`]: one blocking connection to a forwarder (its Unix socket, or TCP, UDP or
//! WebSocket), sending one Interest at a time and waiting for its Data or Nack.

use std::collections::VecDeque;
use std::io::{self, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use kite_packet::{tlv_type, Data, Interest, LpHeader, NetPacket};

use crate::endpoint::Endpoint;
use crate::error::ClientError;
use crate::framing::FrameReader;
use crate::random::random_nonce;
use crate::shm::{LinkReader, LinkWriter};
use crate::transport::Transport;
use crate::write_queue::WriteQueue;

/// Interests a [`Client`] keeps while it waits for an answer (each at most a frame,
/// [`crate::framing::MAX_FRAME_LEN`]); later ones are dropped, as a full queue drops them.
pub const HELD_INTERESTS: usize = 1024;

/// A blocking connection to a forwarder (Kite or NFD).
#[derive(Debug)]
pub struct Client {
    stream: Transport,
    frames: FrameReader,
    /// Frames of the Interests that arrived while [`Client::express`] or a command waited
    /// for its answer (at most [`HELD_INTERESTS`]), read first: a producer's route exists
    /// before the answer to its `rib/register` comes back, so Interests may overtake that
    /// answer.
    held: VecDeque<Bytes>,
    /// Packets queued by [`Client::queue_packet`] for one write (stream transports only).
    queued: WriteQueue,
    /// Where a queued packet is framed before it goes alone (UDP, WebSocket).
    frame: Vec<u8>,
}

impl Client {
    /// Connects to the Unix socket at `path`.
    pub fn connect_unix(path: impl AsRef<Path>) -> Result<Client, ClientError> {
        Self::connect(&Endpoint::Unix(path.as_ref().to_owned()))
    }

    /// Connects to the Unix socket at `path` and keeps it, without asking for shared memory
    /// (for tools that need the socket itself: [`Client::into_unix_stream`]).
    pub fn connect_unix_socket(path: impl AsRef<Path>) -> Result<Client, ClientError> {
        let stream = UnixStream::connect(path.as_ref()).map_err(|e| ClientError::NotRunning {
            tried: vec![format!("{}: {e}", path.as_ref().display())],
        })?;
        Ok(Client::over(Transport::Unix(stream)))
    }

    fn over(stream: Transport) -> Client {
        Client {
            stream,
            frames: FrameReader::new(),
            held: VecDeque::new(),
            queued: WriteQueue::new(),
            frame: Vec::new(),
        }
    }

    /// Connects over TCP to `addr` (`host:port`).
    pub fn connect_tcp(addr: &str) -> Result<Client, ClientError> {
        Self::connect(&Endpoint::Tcp(addr.to_owned()))
    }

    /// Connects to the first endpoint of [`Endpoint::defaults`] that accepts; the error names
    /// every endpoint tried.
    pub fn connect_default() -> Result<Client, ClientError> {
        let list = Endpoint::defaults().map_err(|e| ClientError::NotRunning { tried: vec![e] })?;
        Self::connect_any(&list)
    }

    /// Connects to `endpoint`.
    pub fn connect(endpoint: &Endpoint) -> Result<Client, ClientError> {
        Self::connect_any(std::slice::from_ref(endpoint))
    }

    /// Connects to the first of `endpoints` that accepts.
    pub fn connect_any(endpoints: &[Endpoint]) -> Result<Client, ClientError> {
        let mut tried = Vec::new();
        for ep in endpoints {
            match Transport::connect(ep) {
                Ok(stream) => return Ok(Client::over(stream)),
                Err(e) => tried.push(format!("{ep}: {e}")),
            }
        }
        Err(ClientError::NotRunning { tried })
    }

    /// The connected Unix socket, for an application that registered a prefix through this
    /// connection (a command without FaceId means the requesting face) and now exchanges
    /// packets on it by itself. `None` over other transports (shared memory included: see
    /// [`Client::connect_unix_socket`] and [`Client::into_link`]), or when octets are buffered
    /// that the socket would no longer deliver.
    pub fn into_unix_stream(self) -> Option<UnixStream> {
        match self.stream {
            Transport::Unix(s) if !self.frames.has_buffered() && self.held.is_empty() => Some(s),
            _ => None,
        }
    }

    /// The connection's two directions as raw byte streams (the Unix socket, or shared
    /// memory), for tools that read and write on their own threads; the reader first gives
    /// what was received and not yet returned (held Interests, then buffered octets).
    /// `None` over other transports.
    pub fn into_link(mut self) -> Option<(LinkReader, LinkWriter)> {
        let mut ahead = BytesMut::new();
        for frame in self.held.drain(..) {
            ahead.extend_from_slice(&frame);
        }
        ahead.extend_from_slice(&self.frames.take_buffered());
        let ahead = ahead.freeze();
        match self.stream {
            Transport::Unix(s) => {
                let w = s.try_clone().ok()?;
                Some((LinkReader::unix(ahead, s), LinkWriter::Unix(w)))
            }
            Transport::Shm(s) => {
                let (r, w) = *s;
                Some((LinkReader::shm(ahead, r), LinkWriter::Shm(w)))
            }
            _ => None,
        }
    }

    /// Sends `interest` (with a random Nonce when it has none) and waits up to `timeout` for
    /// the Data that satisfies it or a Nack for it. Interests that arrive meanwhile are kept
    /// for the next reads (up to [`HELD_INTERESTS`]); other packets are discarded.
    pub fn express(&mut self, interest: &Interest, timeout: Duration) -> Result<Data, ClientError> {
        let wire = if interest.nonce.is_some() {
            interest.encode()
        } else {
            let mut i = interest.clone();
            i.nonce = Some(random_nonce());
            i.encode()
        };
        self.exchange(wire, timeout)
    }

    /// Sends an encoded Interest and waits for its answer (see [`Client::express`]).
    pub(crate) fn exchange(&mut self, wire: Bytes, timeout: Duration) -> Result<Data, ClientError> {
        // Decode what was encoded: the name now holds any ParametersSha256DigestComponent.
        let sent = Interest::decode(wire.clone())?;
        self.stream.write_all(&wire)?;
        let deadline = Instant::now() + timeout;
        loop {
            let Some(frame) = self.recv_frame_until(deadline)? else {
                return Err(timeout_error(&sent, timeout));
            };
            match NetPacket::decode_frame(frame.clone())? {
                (_, NetPacket::Data(d)) if satisfies(&sent, &d) => return Ok(d),
                (_, NetPacket::Nack(n))
                    if n.interest.name == sent.name && n.interest.nonce == sent.nonce =>
                {
                    return Err(ClientError::Nack {
                        reason: n.reason,
                        name: sent.name,
                    })
                }
                // Behind what is held already.
                (_, NetPacket::Interest(_)) if self.held.len() < HELD_INTERESTS => {
                    self.held.push_back(frame);
                }
                _ => {}
            }
        }
    }

    /// Writes one encoded packet or NDNLPv2 frame to the forwarder.
    pub fn send_wire(&mut self, wire: &[u8]) -> Result<(), ClientError> {
        Ok(self.stream.write_all(wire)?)
    }

    /// Sends `packet` (in an LpPacket with `header`'s fields, bare when it has none) with
    /// the next [`Client::flush_queued`] over a stream transport, so a burst of answers costs
    /// one write and the packets are not copied; over UDP and WebSocket, where a write is one
    /// packet, it is sent now. Returns the octets queued so far.
    pub fn queue_packet(&mut self, header: &LpHeader, packet: Bytes) -> Result<usize, ClientError> {
        if !self.stream.is_stream() {
            self.frame.clear();
            header.put_framed(&packet, &mut self.frame);
            self.stream.write_all(&self.frame)?;
            return Ok(0);
        }
        Ok(self.queued.push(header, packet))
    }

    /// Writes what [`Client::queue_packet`] queued, with as few `writev` calls as the socket
    /// takes.
    pub fn flush_queued(&mut self) -> Result<(), ClientError> {
        Ok(self.queued.write_to(&mut self.stream)?)
    }

    /// The next packet from the forwarder with its NDNLPv2 header fields, waiting in the
    /// kernel (no CPU used) until `deadline`; `None` when nothing came by then.
    pub fn recv_until(
        &mut self,
        deadline: Instant,
    ) -> Result<Option<(LpHeader, NetPacket)>, ClientError> {
        if let Some(p) = self.recv_buffered()? {
            return Ok(Some(p));
        }
        match self.recv_frame_until(deadline)? {
            Some(frame) => Ok(Some(NetPacket::decode_frame(frame)?)),
            None => Ok(None),
        }
    }

    /// The next frame from the connection (held Interests aside), waiting until `deadline`.
    fn recv_frame_until(&mut self, deadline: Instant) -> Result<Option<Bytes>, ClientError> {
        if let Some(frame) = self.frames.buffered_frame()? {
            return Ok(Some(frame));
        }
        let remaining = deadline.saturating_duration_since(Instant::now());
        if remaining.is_zero() {
            return Ok(None);
        }
        self.stream.set_read_timeout(remaining)?;
        match self.frames.next_frame(&mut self.stream) {
            Err(ClientError::Io(e))
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock
                        | io::ErrorKind::TimedOut
                        // A signal (e.g. the Ctrl-C a serving loop watches for) woke the read.
                        | io::ErrorKind::Interrupted
                ) =>
            {
                Ok(None)
            }
            Err(e) => Err(e),
            Ok(frame) => Ok(Some(frame)),
        }
    }

    /// The next packet already received, without a system call (a held Interest first, then
    /// what was read from the socket); `None` when no whole frame is buffered.
    pub fn recv_buffered(&mut self) -> Result<Option<(LpHeader, NetPacket)>, ClientError> {
        if let Some(p) = self.held.pop_front() {
            return Ok(Some(NetPacket::decode_frame(p)?));
        }
        match self.frames.buffered_frame()? {
            Some(frame) => Ok(Some(NetPacket::decode_frame(frame)?)),
            None => Ok(None),
        }
    }
}

fn timeout_error(sent: &Interest, after: Duration) -> ClientError {
    ClientError::Timeout {
        name: sent.name.clone(),
        after,
    }
}

/// Whether `data` satisfies `interest` by name (exact, prefix with CanBePrefix, or by implicit
/// digest).
pub(crate) fn satisfies(interest: &Interest, data: &Data) -> bool {
    let want = &interest.name;
    if *want == data.name || (interest.can_be_prefix && want.is_prefix_of(&data.name)) {
        return true;
    }
    match want.last() {
        Some(c) if c.typ() == tlv_type::IMPLICIT_SHA256_DIGEST_COMPONENT => {
            want.prefix(want.len() - 1) == data.name && c.value() == data.implicit_digest()
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kite_packet::name::Component;

    #[test]
    fn satisfaction_by_exact_prefix_and_digest() {
        let d = Data::decode(
            Data::new("/a/b".parse().unwrap(), &b"x"[..])
                .sign(&kite_packet::DigestSha256)
                .unwrap(),
        )
        .unwrap();
        let mut i = Interest::new("/a/b".parse().unwrap());
        assert!(satisfies(&i, &d));
        i.name = "/a".parse().unwrap();
        assert!(!satisfies(&i, &d));
        i.can_be_prefix = true;
        assert!(satisfies(&i, &d));
        let digest = d.implicit_digest();
        let with_digest = d
            .name
            .clone()
            .append(Component::new(tlv_type::IMPLICIT_SHA256_DIGEST_COMPONENT, &digest).unwrap());
        assert!(satisfies(&Interest::new(with_digest), &d));
        let wrong = d
            .name
            .clone()
            .append(Component::new(tlv_type::IMPLICIT_SHA256_DIGEST_COMPONENT, &[0; 32]).unwrap());
        assert!(!satisfies(&Interest::new(wrong), &d));
    }
}
