//! WebSocket faces (NFD's `ws://` listener): each binary message carries one NDN packet.
//! The handshake runs non-blocking inside the face, driven by its readiness events.

use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, RawFd};

use bytes::Bytes;
use mio::net::TcpStream;
use tungstenite::handshake::server::{NoCallback, ServerHandshake};
use tungstenite::handshake::{HandshakeError, MidHandshake};
use tungstenite::protocol::WebSocketConfig;
use tungstenite::{Error as WsError, Message, WebSocket};

use crate::config::FaceConfig;
use crate::face::{Face, FaceParts};
use crate::listener::{ListenError, Listener, OpenListener};
use crate::queue::OutQueue;
use crate::tcp::{self, TcpChannel};
use crate::transport::{FaceError, Flushed, Progress, RxFrame, Source, Transport};
use crate::uri::FaceUri;
use kite_link::framing::MAX_FRAME_LEN;
use kite_link::reassembly::Endpoint;
use kite_link::FaceCounters;
use kite_link::{FaceId, LinkType, Persistency};

/// Messages read per receive burst.
const MESSAGES_PER_BURST: usize = 64;

/// Octets the WebSocket reader asks of the socket at once, and so holds per connection: the
/// reader fills (and zeroes) that much before each read, and a connection that sent a
/// message's first octet keeps it. tungstenite's default of 128 KiB made 2,000 idle
/// connections hold 264 MB; a larger message makes room for itself.
const READ_BUFFER: usize = 16 << 10;

/// Octets of messages the WebSocket writer gathers before it writes to the socket
/// (tungstenite's default).
const WRITE_BUFFER: usize = 128 << 10;

/// The most the writer holds while the socket is full: its buffer and one largest message
/// (with its header) beyond. A larger message waits in the face's own output queue, which
/// is bounded; tungstenite's own limit is none, so a peer that stopped reading made it grow
/// without end.
const MAX_WRITE_BUFFER: usize = WRITE_BUFFER + MAX_FRAME_LEN + 16;

type Handshake = MidHandshake<ServerHandshake<TcpStream, NoCallback>>;

enum WsState {
    Handshaking(Handshake),
    Open(WebSocket<TcpStream>),
    Failed,
}

/// A WebSocket connection, during or after its handshake.
pub(crate) struct WsIo {
    fd: RawFd,
    state: WsState,
    remote: SocketAddr,
    local: SocketAddr,
    /// The writer holds messages it took from the face's queue that the socket had no room
    /// for: the next flush writes them, even with the queue empty.
    unwritten: bool,
}

impl std::fmt::Debug for WsIo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = match self.state {
            WsState::Handshaking(_) => "handshaking",
            WsState::Open(_) => "open",
            WsState::Failed => "failed",
        };
        f.debug_struct("WsIo").field("state", &state).finish()
    }
}

fn ws_error(e: WsError) -> FaceError {
    match e {
        WsError::ConnectionClosed | WsError::AlreadyClosed => FaceError::Closed,
        WsError::Io(e) => FaceError::Io(e),
        e => FaceError::WebSocket(e.to_string()),
    }
}

fn would_block(e: &WsError) -> bool {
    matches!(e, WsError::Io(e) if e.kind() == io::ErrorKind::WouldBlock)
}

impl WsIo {
    /// Finishes the handshake if it is still running; `Ok(false)` while it waits.
    fn open(&mut self) -> Result<bool, FaceError> {
        match std::mem::replace(&mut self.state, WsState::Failed) {
            WsState::Handshaking(mid) => match mid.handshake() {
                Ok(ws) => self.state = WsState::Open(ws),
                Err(HandshakeError::Interrupted(mid)) => {
                    self.state = WsState::Handshaking(mid);
                    return Ok(false);
                }
                Err(HandshakeError::Failure(e)) => return Err(ws_error(e)),
            },
            WsState::Open(ws) => self.state = WsState::Open(ws),
            WsState::Failed => return Err(FaceError::Closed),
        }
        Ok(true)
    }

    /// Reads up to [`MESSAGES_PER_BURST`] messages, and no more than `budget`: a message
    /// not read stays in the socket (or in the WebSocket reader's buffer), so a face the
    /// forwarder has no room for pushes back on its sender.
    pub fn recv_burst(
        &mut self,
        budget: usize,
        mut deliver: impl FnMut(Bytes),
    ) -> Result<Progress, FaceError> {
        if !self.open()? {
            return Ok(Progress::Drained);
        }
        let WsState::Open(ws) = &mut self.state else {
            return Err(FaceError::Closed);
        };
        for _ in 0..MESSAGES_PER_BURST.min(budget) {
            match ws.read() {
                Ok(Message::Binary(b)) => deliver(b),
                Ok(_) => {} // text, ping, pong, close: tungstenite answers control frames
                Err(e) if would_block(&e) => return Ok(Progress::Drained),
                Err(e) => return Err(ws_error(e)),
            }
        }
        Ok(Progress::More)
    }

    pub fn flush(&mut self, q: &mut OutQueue, c: &mut FaceCounters) -> Result<Flushed, FaceError> {
        if !self.open()? {
            return Ok(Flushed::Blocked);
        }
        let WsState::Open(ws) = &mut self.state else {
            return Err(FaceError::Closed);
        };
        loop {
            let mut queued = 0;
            let (a, b) = q.frames();
            for f in a.iter().chain(b) {
                match ws.write(Message::Binary(f.to_bytes())) {
                    Ok(()) => queued += 1,
                    Err(WsError::WriteBufferFull(_)) => break,
                    // The writer took the message into its buffer, then found the socket
                    // full: it is queued there, not to be given again.
                    Err(e) if would_block(&e) => {
                        queued += 1;
                        break;
                    }
                    Err(e) => return Err(ws_error(e)),
                }
            }
            c.n_out_bytes += q.pop_frames(queued) as u64;
            match ws.flush() {
                Ok(()) => {
                    self.unwritten = false;
                    if q.is_empty() {
                        return Ok(Flushed::Done);
                    }
                }
                Err(e) if would_block(&e) => {
                    self.unwritten = true;
                    return Ok(Flushed::Blocked);
                }
                Err(e) => return Err(ws_error(e)),
            }
        }
    }
}

impl WsIo {
    /// Starts the server handshake on an accepted connection. Packets sent before the
    /// handshake completes wait in the face's output queue.
    pub fn accept(stream: TcpStream) -> io::Result<WsIo> {
        stream.set_nodelay(true)?;
        let local: SocketAddr = stream.local_addr()?;
        let remote: SocketAddr = stream.peer_addr()?;
        let fd = stream.as_raw_fd();
        let ws_config = WebSocketConfig::default()
            .max_message_size(Some(MAX_FRAME_LEN))
            .max_frame_size(Some(MAX_FRAME_LEN))
            .read_buffer_size(READ_BUFFER)
            .write_buffer_size(WRITE_BUFFER)
            .max_write_buffer_size(MAX_WRITE_BUFFER);
        let state = match tungstenite::accept_with_config(stream, Some(ws_config)) {
            Ok(ws) => WsState::Open(ws),
            Err(HandshakeError::Interrupted(mid)) => WsState::Handshaking(mid),
            Err(HandshakeError::Failure(e)) => return Err(io::Error::other(e)),
        };
        Ok(WsIo {
            fd,
            state,
            remote,
            local,
            unwritten: false,
        })
    }

    /// The connection's ends.
    pub fn addrs(&self) -> (SocketAddr, SocketAddr) {
        (self.local, self.remote)
    }
}

impl Transport for WsIo {
    fn remote_uri(&self) -> FaceUri {
        FaceUri::WsClient(self.remote)
    }

    fn local_uri(&self) -> FaceUri {
        FaceUri::Ws(self.local)
    }

    fn mtu(&self) -> Option<usize> {
        None
    }

    fn sources(&self) -> [Option<Source>; 2] {
        let rw = mio::Interest::READABLE | mio::Interest::WRITABLE;
        [Some((self.fd, rw)), None]
    }

    fn recv_burst(
        &mut self,
        _hangup: bool,
        budget: usize,
        rx: &mut Vec<RxFrame>,
    ) -> Result<Progress, FaceError> {
        WsIo::recv_burst(self, budget, |frame| {
            rx.push(RxFrame {
                from: Endpoint::Peer,
                frame,
                own_buffer: 0,
            })
        })
    }

    fn flush(&mut self, q: &mut OutQueue, c: &mut FaceCounters) -> Result<Flushed, FaceError> {
        WsIo::flush(self, q, c)
    }

    fn holds_output(&self) -> bool {
        self.unwritten
    }

    fn pushes_back(&self) -> bool {
        true
    }

    fn flush_after_recv(&self) -> bool {
        true
    }
}

/// A WebSocket listener on an address (NFD's default port is 9696), keeping at most
/// [`FaceConfig::ws_on_demand_limit`] connections.
#[derive(Debug, Clone, Copy)]
pub struct Listen(pub SocketAddr);

impl OpenListener for Listen {
    fn uri(&self) -> FaceUri {
        FaceUri::Ws(self.0)
    }

    fn open(&self, config: &FaceConfig) -> Result<Box<dyn Listener>, ListenError> {
        Ok(Box::new(listen(self.0, config)?))
    }
}

/// Listens for WebSocket connections on `addr` ([`Listen`]).
pub fn listen(addr: SocketAddr, config: &FaceConfig) -> Result<TcpChannel, ListenError> {
    TcpChannel::bind(addr, FaceUri::Ws, config.ws_on_demand_limit, face, config)
}

/// The face of an accepted WebSocket connection, its handshake started (on-demand; local
/// only when both ends are loopback).
fn face(id: FaceId, stream: TcpStream, config: &FaceConfig) -> io::Result<Face> {
    let ws = WsIo::accept(stream)?;
    let (local, remote) = ws.addrs();
    let parts = FaceParts {
        scope: tcp::scope_of(local, remote),
        persistency: Persistency::OnDemand,
        link_type: LinkType::PointToPoint,
        redial: None,
    };
    Ok(Face::new(id, parts, Box::new(ws), config))
}
