//! One WebTransport session as a state machine that touches no socket: a QUIC connection
//! (quinn-proto's, with its own endpoint) and the part of HTTP/3 a WebTransport server needs
//! (RFC 9114, RFC 9297, "WebTransport over HTTP/3"): the server's control stream with its
//! SETTINGS, the client's extended CONNECT answered on its request stream, and the session's
//! datagrams, each prefixed with the session's quarter stream id. Everything else a client
//! opens (WebTransport streams, further requests) is refused; what the client's own control
//! and QPACK streams carry is read and dropped (the dynamic table is announced as empty).
//!
//! The caller feeds it UDP payloads and the time, and takes what it must send
//! ([`Session::poll_transmit`]), when to call again ([`Session::timeout`]) and the NDN
//! frames the session's datagrams carried.

use std::borrow::Cow;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use bytes::{Bytes, BytesMut};
use quinn_proto::{
    ConnectionHandle, DatagramEvent, Dir, EndpointConfig, Event, SendDatagramError, ServerConfig,
    StreamEvent, StreamId, Transmit, VarInt,
};
use smallvec::SmallVec;
use wtransport_proto::frame::{Frame, FrameKind};
use wtransport_proto::headers::Headers;

/// HTTP/3 stream type of a control stream (RFC 9114, 6.2.1).
const CONTROL_STREAM: u8 = 0x00;
/// H3_NO_ERROR (RFC 9114, 8.1).
const H3_NO_ERROR: u32 = 0x100;
/// H3_REQUEST_REJECTED: a stream Kite does not serve.
const H3_REQUEST_REJECTED: u32 = 0x10b;
/// H3_EXCESSIVE_LOAD: a request larger than Kite reads.
const H3_EXCESSIVE_LOAD: u32 = 0x107;
/// Octets of a request stream read before its HEADERS frame is whole: a CONNECT request is a
/// few hundred octets; a larger one is refused.
const MAX_REQUEST: usize = 8 << 10;
/// Request streams one session reads at once (the transport parameter allows no more).
pub(crate) const MAX_BIDI_STREAMS: u32 = 4;
/// Unidirectional streams a client may hold open: its control and two QPACK streams, and a
/// few it may open besides (refused).
pub(crate) const MAX_UNI_STREAMS: u32 = 8;

/// The server's SETTINGS (RFC 9114, 7.2.4): extended CONNECT (RFC 9220, 0x08), HTTP
/// datagrams (RFC 9297, 0x33, and 0xffd277 that older Chromium looks for), WebTransport
/// (0x2b603742 for older Chromium) and one WebTransport session per connection
/// (0xc671706a). The QPACK dynamic table is left at its default, 0.
const SETTINGS: [(u64, u64); 5] = [
    (0x08, 1),
    (0x33, 1),
    (0xffd277, 1),
    (0x2b60_3742, 1),
    (0xc671_706a, 1),
];

/// What sessions of one listener share: the QUIC server configuration, the path served, and
/// the count of handshakes under way.
#[derive(Debug)]
pub(crate) struct Shared {
    pub endpoint: Arc<EndpointConfig>,
    pub server: Arc<ServerConfig>,
    pub path: String,
    pub handshakes: AtomicUsize,
}

/// A place among a listener's handshakes under way, given back when the handshake ends
/// (the session connected or went).
#[derive(Debug)]
struct Handshaking(Arc<Shared>);

impl Drop for Handshaking {
    fn drop(&mut self) {
        self.0.handshakes.fetch_sub(1, Ordering::Relaxed);
    }
}

/// What one session dropped, for its face's counters.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Dropped {
    /// Datagrams not for the session (another quarter stream id, none yet, or no id at all).
    pub datagrams: u64,
    /// Frames larger than the session's datagrams.
    pub too_large: u64,
}

/// What became of a frame given to [`Session::send`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sent {
    /// Queued as a datagram.
    Queued,
    /// The datagram send buffer is full: the frame waits (in the face's output queue) until
    /// QUIC sent what the buffer holds.
    Full,
    /// It cannot go: no session yet, or larger than a datagram (counted).
    Refused,
}

/// The stage of the WebTransport session on a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// No CONNECT answered with 200 yet.
    Waiting,
    /// Open on this request stream.
    Open(StreamId),
    /// The session's request stream ended, or the connection closed.
    Ended,
}

/// One session (see the module's documentation).
pub(crate) struct Session {
    endpoint: quinn_proto::Endpoint,
    handle: ConnectionHandle,
    conn: quinn_proto::Connection,
    shared: Arc<Shared>,
    handshaking: Option<Handshaking>,
    stage: Stage,
    /// The session's quarter stream id as a QUIC varint, which starts each datagram.
    prefix: SmallVec<[u8; 8]>,
    /// Request streams whose HEADERS frame is not whole yet, with what they sent so far.
    requests: SmallVec<[(StreamId, Vec<u8>); 2]>,
    /// Octets datagrams are built in (split off, so one allocation serves many).
    out: BytesMut,
    dropped: Dropped,
    /// Scratch for the endpoint's answers.
    scratch: Vec<u8>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("remote", &self.conn.remote_address())
            .field("stage", &self.stage)
            .finish()
    }
}

/// Why no session was made of a datagram.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Refused {
    /// Not a QUIC Initial that opens a connection (or one the endpoint turned down).
    NotInitial,
    /// As many handshakes as allowed are under way.
    Busy,
}

/// Whether `d` looks like a client's first datagram: a QUIC long-header Initial packet
/// (RFC 9000, 17.2.2) of version 1 in a datagram of at least 1200 octets (14.1).
pub(crate) fn is_initial(d: &[u8]) -> bool {
    d.len() >= 1200 && d[0] & 0xf0 == 0xc0 && d[1..5] == [0, 0, 0, 1]
}

impl Session {
    /// A session for the client at `remote` whose first datagram `d` reached `local_ip`, at
    /// `now`, if it opens a QUIC connection and fewer than `max_handshakes` handshakes are
    /// under way.
    pub fn accept(
        shared: &Arc<Shared>,
        max_handshakes: usize,
        now: Instant,
        remote: SocketAddr,
        local_ip: Option<IpAddr>,
        d: &[u8],
    ) -> Result<Session, Refused> {
        if !is_initial(d) {
            return Err(Refused::NotInitial);
        }
        let taken = shared
            .handshakes
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                (n < max_handshakes).then_some(n + 1)
            });
        if taken.is_err() {
            return Err(Refused::Busy);
        }
        let handshaking = Handshaking(shared.clone());
        let mut endpoint = quinn_proto::Endpoint::new(
            shared.endpoint.clone(),
            Some(shared.server.clone()),
            true,
            None,
        );
        let mut scratch = Vec::new();
        let incoming = match endpoint.handle(now, remote, local_ip, None, d.into(), &mut scratch) {
            Some(DatagramEvent::NewConnection(incoming)) => incoming,
            _ => return Err(Refused::NotInitial),
        };
        let (handle, conn) = endpoint
            .accept(incoming, now, &mut scratch, None)
            .map_err(|_| Refused::NotInitial)?;
        let mut s = Session {
            endpoint,
            handle,
            conn,
            shared: shared.clone(),
            handshaking: Some(handshaking),
            stage: Stage::Waiting,
            prefix: SmallVec::new(),
            requests: SmallVec::new(),
            out: BytesMut::new(),
            dropped: Dropped::default(),
            scratch,
        };
        s.drive(now, &mut |_| {});
        Ok(s)
    }

    /// The client's address.
    pub fn remote(&self) -> SocketAddr {
        self.conn.remote_address()
    }

    /// Whether the WebTransport session is open (its CONNECT answered with 200).
    pub fn is_open(&self) -> bool {
        matches!(self.stage, Stage::Open(_))
    }

    /// Whether the connection is gone for good: the caller drops the session.
    pub fn is_closed(&self) -> bool {
        self.conn.is_drained() || (self.stage == Stage::Ended && self.conn.is_closed())
    }

    /// Whether the handshake still holds a place among the listener's handshakes.
    #[cfg(test)]
    pub fn handshaking(&self) -> bool {
        self.handshaking.is_some()
    }

    /// What the session dropped so far, taken (counted from zero again).
    pub fn take_dropped(&mut self) -> Dropped {
        core::mem::take(&mut self.dropped)
    }

    /// The largest NDN frame one datagram carries now (`None` before the client's transport
    /// parameters are known, or when it takes no datagrams).
    pub fn max_frame(&mut self) -> Option<usize> {
        let max = self.conn.datagrams().max_size()?;
        // Before the session opens, its prefix is assumed one octet (quarter ids below 64).
        max.checked_sub(self.prefix.len().max(1))
    }

    /// Takes one UDP payload `d` from the client at `now`; the NDN frames of the session's
    /// datagrams go to `deliver`.
    pub fn receive(&mut self, now: Instant, d: BytesMut, deliver: &mut dyn FnMut(Bytes)) {
        let remote = self.conn.remote_address();
        match self
            .endpoint
            .handle(now, remote, None, None, d, &mut self.scratch)
        {
            Some(DatagramEvent::ConnectionEvent(_, event)) => self.conn.handle_event(event),
            // Another connection from the same address (its client started over): not this
            // session's; the client's handshake times out and it tries again.
            Some(DatagramEvent::NewConnection(incoming)) => self.endpoint.ignore(incoming),
            // A stateless reset or version negotiation for a stranger: not sent.
            Some(DatagramEvent::Response(_)) | None => {}
        }
        self.drive(now, deliver);
    }

    /// When the session must be called again ([`Session::on_timeout`]) if nothing arrives.
    pub fn timeout(&mut self) -> Option<Instant> {
        self.conn.poll_timeout()
    }

    /// Lets the connection's timers run at `now` (loss detection, acknowledgements, idle).
    pub fn on_timeout(&mut self, now: Instant, deliver: &mut dyn FnMut(Bytes)) {
        self.conn.handle_timeout(now);
        self.drive(now, deliver);
    }

    /// The next UDP datagrams to send at `now` (at most `max` of equal length, back to back
    /// in `buf`, which is cleared first).
    pub fn poll_transmit(
        &mut self,
        now: Instant,
        max: usize,
        buf: &mut Vec<u8>,
    ) -> Option<Transmit> {
        buf.clear();
        self.conn.poll_transmit(now, max, buf)
    }

    /// Queues NDN frame `head` + `body` as one datagram of the session, within quinn-proto's
    /// datagram send buffer (the frames QUIC's congestion control holds back).
    pub fn send(&mut self, head: &[u8], body: &[u8]) -> Sent {
        if !self.is_open() {
            return Sent::Refused;
        }
        let len = self.prefix.len() + head.len() + body.len();
        if self.out.capacity() - self.out.len() < len {
            self.out.reserve(len.max(64 << 10));
        }
        self.out.extend_from_slice(&self.prefix);
        self.out.extend_from_slice(head);
        self.out.extend_from_slice(body);
        let d = self.out.split().freeze();
        // quinn-proto tells a frame too large for a datagram (or for the whole buffer) from
        // one the buffer has no room for now, in that order.
        match self.conn.datagrams().send(d, false) {
            Ok(()) => Sent::Queued,
            Err(SendDatagramError::Blocked(_)) => Sent::Full,
            Err(SendDatagramError::TooLarge) => {
                self.dropped.too_large += 1;
                Sent::Refused
            }
            Err(_) => Sent::Refused,
        }
    }

    /// Closes the connection (the face is going: given up for another session, or
    /// destroyed), telling the client.
    pub fn close(&mut self, now: Instant) {
        self.conn
            .close(now, VarInt::from_u32(H3_NO_ERROR), Bytes::new());
    }

    /// Handles what the connection has for the endpoint and for the application.
    fn drive(&mut self, now: Instant, deliver: &mut dyn FnMut(Bytes)) {
        while let Some(e) = self.conn.poll_endpoint_events() {
            if let Some(back) = self.endpoint.handle_event(self.handle, e) {
                self.conn.handle_event(back);
            }
        }
        while let Some(event) = self.conn.poll() {
            match event {
                Event::Connected => {
                    self.handshaking = None;
                    self.open_control();
                }
                Event::ConnectionLost { .. } => {
                    self.handshaking = None;
                    self.stage = Stage::Ended;
                }
                Event::Stream(StreamEvent::Opened { .. }) => self.accept_streams(now),
                Event::Stream(StreamEvent::Readable { id }) => self.read_stream(now, id),
                Event::DatagramReceived => self.read_datagrams(deliver),
                _ => {}
            }
        }
        if self.conn.is_drained() {
            self.handshaking = None;
        }
    }

    /// Opens the server's control stream and sends its SETTINGS.
    fn open_control(&mut self) {
        let Some(id) = self.conn.streams().open(Dir::Uni) else {
            return;
        };
        let mut payload = Vec::with_capacity(32);
        for (k, v) in SETTINGS {
            put_varint(&mut payload, k);
            put_varint(&mut payload, v);
        }
        let mut stream = vec![CONTROL_STREAM];
        let frame = Frame::new_settings(Cow::Owned(payload));
        // A few dozen octets, within any stream's first credit.
        let _ = frame.write(&mut stream);
        let _ = self.conn.send_stream(id).write(&stream);
    }

    /// Takes the streams the client opened: request streams are read, unidirectional ones
    /// read and dropped.
    fn accept_streams(&mut self, now: Instant) {
        while let Some(id) = self.conn.streams().accept(Dir::Bi) {
            self.read_stream(now, id);
        }
        while let Some(id) = self.conn.streams().accept(Dir::Uni) {
            self.read_stream(now, id);
        }
    }

    /// Reads what stream `id` holds.
    fn read_stream(&mut self, now: Instant, id: StreamId) {
        let mut data: SmallVec<[Bytes; 4]> = SmallVec::new();
        let mut fin = false;
        {
            let mut recv = self.conn.recv_stream(id);
            let Ok(mut chunks) = recv.read(true) else {
                return;
            };
            loop {
                match chunks.next(usize::MAX) {
                    Ok(Some(c)) => data.push(c.bytes),
                    Ok(None) => {
                        fin = true;
                        break;
                    }
                    Err(quinn_proto::ReadError::Blocked) => break,
                    Err(quinn_proto::ReadError::Reset(_)) => {
                        fin = true;
                        break;
                    }
                }
            }
            let _ = chunks.finalize();
        }
        if id.dir() == Dir::Uni {
            // The client's control and QPACK streams: nothing Kite needs is in them.
            return;
        }
        if self.stage == Stage::Open(id) {
            // The session's own stream carries capsules until it ends: its end ends the
            // session (a CLOSE_WEBTRANSPORT_SESSION capsule is followed by it).
            if fin {
                self.stage = Stage::Ended;
                let _ = self.conn.send_stream(id).finish();
                self.conn
                    .close(now, VarInt::from_u32(H3_NO_ERROR), Bytes::new());
            }
            return;
        }
        let i = match self.requests.iter().position(|(s, _)| *s == id) {
            Some(i) => i,
            None => {
                self.requests.push((id, Vec::new()));
                self.requests.len() - 1
            }
        };
        for d in &data {
            self.requests[i].1.extend_from_slice(d);
        }
        match request(&self.requests[i].1) {
            Parsed::More if fin || self.requests[i].1.len() > MAX_REQUEST => {
                self.requests.swap_remove(i);
                self.reject(id, H3_EXCESSIVE_LOAD);
            }
            Parsed::More => {}
            Parsed::Refused => {
                self.requests.swap_remove(i);
                self.reject(id, H3_REQUEST_REJECTED);
            }
            Parsed::Connect(path) => {
                self.requests.swap_remove(i);
                let ok = path == self.shared.path && self.stage == Stage::Waiting;
                let status = if ok { 200 } else { 404 };
                self.answer(id, status, !ok);
                if ok {
                    self.stage = Stage::Open(id);
                    self.prefix.clear();
                    // The quarter stream id ("HTTP Datagrams", RFC 9297, 2.1).
                    put_varint_small(&mut self.prefix, u64::from(id) / 4);
                }
            }
        }
    }

    /// Answers request stream `id` with `status`, and ends the stream when `end`.
    fn answer(&mut self, id: StreamId, status: u16, end: bool) {
        let mut h: Headers = [(":status", status.to_string())].into_iter().collect();
        if status == 200 {
            // Chromium's drafts before 07 check for this answer.
            h.insert("sec-webtransport-http3-draft", "draft02");
        }
        let mut out = Vec::with_capacity(64);
        let _ = h.generate_frame().write(&mut out);
        let mut send = self.conn.send_stream(id);
        let _ = send.write(&out);
        if end {
            let _ = send.finish();
        }
    }

    /// Refuses stream `id` with `code` both ways.
    fn reject(&mut self, id: StreamId, code: u32) {
        let _ = self.conn.recv_stream(id).stop(VarInt::from_u32(code));
        let _ = self.conn.send_stream(id).reset(VarInt::from_u32(code));
    }

    /// Hands on the NDN frames of the session's datagrams; drops and counts the others.
    fn read_datagrams(&mut self, deliver: &mut dyn FnMut(Bytes)) {
        while let Some(d) = self.conn.datagrams().recv() {
            match (self.stage, d.strip_prefix(&self.prefix[..])) {
                (Stage::Open(_), Some(_)) => deliver(d.slice(self.prefix.len()..)),
                _ => self.dropped.datagrams += 1,
            }
        }
    }
}

/// What a request stream's octets so far make.
#[derive(Debug, PartialEq, Eq)]
enum Parsed {
    /// Not a whole HEADERS frame yet.
    More,
    /// A request Kite does not serve (not an extended CONNECT for WebTransport, a
    /// WebTransport stream, a frame out of place, headers that do not decode).
    Refused,
    /// A WebTransport CONNECT for this path.
    Connect(String),
}

/// Parses the start of a request stream: frames of reserved types are skipped, the first
/// other one must be HEADERS holding `:method CONNECT` and `:protocol webtransport`
/// (decoded by [`super::qpack`], not by wtransport-proto's decoder, which a crafted integer
/// made panic).
fn request(mut b: &[u8]) -> Parsed {
    loop {
        let frame = match Frame::read(&mut b) {
            Ok(Some(f)) => f,
            Ok(None) => return Parsed::More,
            Err(_) => return Parsed::Refused,
        };
        match frame.kind() {
            FrameKind::Exercise(_) => continue,
            FrameKind::Headers => {}
            _ => return Parsed::Refused,
        }
        let Ok(h) = super::qpack::request(frame.payload()) else {
            return Parsed::Refused;
        };
        let connect =
            h.method.as_deref() == Some("CONNECT") && h.protocol.as_deref() == Some("webtransport");
        return match (connect, h.path) {
            (true, Some(path)) => Parsed::Connect(path),
            _ => Parsed::Refused,
        };
    }
}

/// Appends `v` as a QUIC variable-length integer (RFC 9000, 16); `v` < 2^62.
pub(crate) fn put_varint(out: &mut Vec<u8>, v: u64) {
    let mut b = SmallVec::<[u8; 8]>::new();
    put_varint_small(&mut b, v);
    out.extend_from_slice(&b);
}

fn put_varint_small(out: &mut SmallVec<[u8; 8]>, v: u64) {
    match v {
        0..=0x3f => out.push(v as u8),
        0x40..=0x3fff => out.extend_from_slice(&(v as u16 | 0x4000).to_be_bytes()),
        0x4000..=0x3fff_ffff => out.extend_from_slice(&(v as u32 | 0x8000_0000).to_be_bytes()),
        _ => out.extend_from_slice(&(v | 0xc000_0000_0000_0000).to_be_bytes()),
    }
}

/// Parses a request stream's octets (for the fuzz target): whether they make a CONNECT, and
/// its path.
#[cfg(any(test, feature = "testing"))]
pub(crate) fn parse_request(b: &[u8]) -> Option<String> {
    match request(b) {
        Parsed::Connect(p) => Some(p),
        _ => None,
    }
}
