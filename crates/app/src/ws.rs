//! A WebSocket to the forwarder (NFD's port 9696), one packet per binary message, read as a
//! byte stream of whole TLV elements (the `websocket` feature).

use std::io;
use std::net::TcpStream;
use std::time::Duration;

use tungstenite::{Message, WebSocket};

/// A WebSocket with the part of the last message a read did not take yet.
#[derive(Debug)]
pub(crate) struct WsStream {
    ws: WebSocket<TcpStream>,
    pending: Vec<u8>,
    at: usize,
}

impl WsStream {
    /// Connects to `host_port` and opens the WebSocket at `path`.
    pub fn connect(host_port: &str, path: &str) -> io::Result<WsStream> {
        let tcp = TcpStream::connect(host_port)?;
        let url = format!("ws://{host_port}{path}");
        let (ws, _) = tungstenite::client(url.as_str(), tcp).map_err(|e| {
            io::Error::new(
                io::ErrorKind::ConnectionRefused,
                format!("WebSocket handshake: {e}"),
            )
        })?;
        Ok(WsStream {
            ws,
            pending: Vec::new(),
            at: 0,
        })
    }

    /// How long a read may block.
    pub fn set_read_timeout(&self, t: Duration) -> io::Result<()> {
        self.ws.get_ref().set_read_timeout(Some(t))
    }

    /// Reads from the current message, receiving the next binary one when it is used up
    /// (0 when the forwarder closes the WebSocket).
    pub fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.at == self.pending.len() {
            match self.ws.read().map_err(ws_io_error)? {
                Message::Binary(b) => {
                    self.pending.clear();
                    self.pending.extend_from_slice(&b);
                    self.at = 0;
                }
                Message::Close(_) => return Ok(0),
                _ => {}
            }
        }
        let n = buf.len().min(self.pending.len() - self.at);
        buf[..n].copy_from_slice(&self.pending[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }

    /// Sends `packet` as one binary message.
    pub fn send(&mut self, packet: &[u8]) -> io::Result<()> {
        self.ws
            .send(Message::binary(packet.to_vec()))
            .map_err(ws_io_error)
    }

    /// Writes out what the WebSocket buffered.
    pub fn flush(&mut self) -> io::Result<()> {
        self.ws.flush().map_err(ws_io_error)
    }
}

/// A WebSocket error as the I/O error the client reports (timeouts stay timeouts).
fn ws_io_error(e: tungstenite::Error) -> io::Error {
    match e {
        tungstenite::Error::Io(e) => e,
        tungstenite::Error::ConnectionClosed | tungstenite::Error::AlreadyClosed => io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "the forwarder closed the WebSocket",
        ),
        e => io::Error::other(e.to_string()),
    }
}
