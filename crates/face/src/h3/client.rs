//! A WebTransport client as a state machine that touches no socket, as a browser opens a
//! session: QUIC with the server's certificate pinned by its SHA-256 hash (what
//! `serverCertificateHashes` does), the client's SETTINGS, an extended CONNECT to a path,
//! then datagrams prefixed with the session's quarter stream id. The face's tests and the
//! end-to-end tests drive it; it can also misbehave on purpose (raw datagrams, junk streams).

use std::borrow::Cow;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use bytes::{Bytes, BytesMut};
use quinn_proto::crypto::rustls::QuicClientConfig;
use quinn_proto::{
    ClientConfig, ConnectionHandle, DatagramEvent, Dir, EndpointConfig, Event, StreamEvent,
    StreamId, Transmit, TransportConfig, VarInt,
};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};
use sha2::{Digest, Sha256};
use wtransport_proto::frame::{Frame, FrameKind};
use wtransport_proto::headers::Headers;

use super::session::put_varint;

/// Accepts the one certificate whose SHA-256 hash is pinned, as a browser given
/// `serverCertificateHashes` does.
#[derive(Debug)]
struct Pinned {
    hash: [u8; 32],
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for Pinned {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match Sha256::digest(end_entity.as_ref())[..] == self.hash {
            true => Ok(ServerCertVerified::assertion()),
            false => Err(rustls::Error::General("certificate hash mismatch".into())),
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algs = &self.provider.signature_verification_algorithms;
        verify_tls12_signature(message, cert, dss, algs)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algs = &self.provider.signature_verification_algorithms;
        verify_tls13_signature(message, cert, dss, algs)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        (self.provider.signature_verification_algorithms).supported_schemes()
    }
}

/// A client's WebTransport session (see the module's documentation).
pub struct Client {
    endpoint: quinn_proto::Endpoint,
    handle: ConnectionHandle,
    conn: quinn_proto::Connection,
    path: String,
    authority: String,
    request: Option<StreamId>,
    response: Vec<u8>,
    status: Option<u16>,
    prefix: Vec<u8>,
    received: std::collections::VecDeque<Bytes>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("path", &self.path)
            .field("status", &self.status)
            .finish()
    }
}

impl Client {
    /// Starts a session with `server` for `path`, accepting only the certificate whose
    /// SHA-256 hash is `cert_sha256`.
    pub fn connect(
        now: Instant,
        server: SocketAddr,
        path: &str,
        cert_sha256: [u8; 32],
    ) -> Result<Client, String> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let verifier = Arc::new(Pinned {
            hash: cert_sha256,
            provider: provider.clone(),
        });
        let mut tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_protocol_versions(&[&rustls::version::TLS13])
            .map_err(|e| e.to_string())?
            .dangerous()
            .with_custom_certificate_verifier(verifier)
            .with_no_client_auth();
        tls.alpn_protocols = vec![b"h3".to_vec()];
        let crypto = QuicClientConfig::try_from(tls).map_err(|e| e.to_string())?;
        let mut config = ClientConfig::new(Arc::new(crypto));
        let mut transport = TransportConfig::default();
        // The server's idle timeout governs.
        transport
            .datagram_receive_buffer_size(Some(1 << 20))
            .max_idle_timeout(None);
        config.transport_config(Arc::new(transport));
        let mut endpoint =
            quinn_proto::Endpoint::new(Arc::new(EndpointConfig::default()), None, true, None);
        let (handle, conn) = endpoint
            .connect(now, config, server, "localhost")
            .map_err(|e| e.to_string())?;
        Ok(Client {
            endpoint,
            handle,
            conn,
            path: path.to_owned(),
            authority: server.to_string(),
            request: None,
            response: Vec::new(),
            status: None,
            prefix: Vec::new(),
            received: Default::default(),
        })
    }

    /// Takes a UDP payload from the server at `now`.
    pub fn receive(&mut self, now: Instant, from: SocketAddr, d: &[u8]) {
        let mut buf = Vec::new();
        if let Some(DatagramEvent::ConnectionEvent(_, e)) =
            (self.endpoint).handle(now, from, None, None, BytesMut::from(d), &mut buf)
        {
            self.conn.handle_event(e);
        }
        self.drive(now);
    }

    /// The next UDP datagram to send (in `buf`, cleared first).
    pub fn poll_transmit(&mut self, now: Instant, buf: &mut Vec<u8>) -> Option<Transmit> {
        buf.clear();
        self.conn.poll_transmit(now, 1, buf)
    }

    /// When to call [`Client::on_timeout`] if nothing arrives.
    pub fn timeout(&mut self) -> Option<Instant> {
        self.conn.poll_timeout()
    }

    /// Lets the connection's timers run.
    pub fn on_timeout(&mut self, now: Instant) {
        self.conn.handle_timeout(now);
        self.drive(now);
    }

    /// The status the server answered the CONNECT with, once it did.
    pub fn status(&self) -> Option<u16> {
        self.status
    }

    /// Whether the connection is closed.
    pub fn is_closed(&self) -> bool {
        self.conn.is_closed()
    }

    /// The largest datagram payload the server takes, less the session's prefix.
    pub fn max_payload(&mut self) -> Option<usize> {
        let max = self.conn.datagrams().max_size()?;
        max.checked_sub(self.prefix.len().max(1))
    }

    /// Sends `payload` (an NDN packet or NDNLPv2 frame) as a datagram of the session.
    pub fn send(&mut self, payload: &[u8]) -> Result<(), String> {
        let mut d = self.prefix.clone();
        d.extend_from_slice(payload);
        self.send_raw(Bytes::from(d))
    }

    /// Sends `d` as a QUIC datagram as it is (no session prefix added).
    pub fn send_raw(&mut self, d: Bytes) -> Result<(), String> {
        self.conn
            .datagrams()
            .send(d, false)
            .map_err(|e| e.to_string())
    }

    /// Opens a stream (bidirectional or not) and writes `junk` on it.
    pub fn open_stream(&mut self, bidi: bool, junk: &[u8]) {
        let dir = if bidi { Dir::Bi } else { Dir::Uni };
        if let Some(id) = self.conn.streams().open(dir) {
            let _ = self.conn.send_stream(id).write(junk);
            let _ = self.conn.send_stream(id).finish();
        }
    }

    /// The next payload of the session's datagrams that arrived.
    pub fn recv(&mut self) -> Option<Bytes> {
        self.received.pop_front()
    }

    fn drive(&mut self, now: Instant) {
        let _ = now;
        while let Some(e) = self.conn.poll_endpoint_events() {
            if let Some(back) = self.endpoint.handle_event(self.handle, e) {
                self.conn.handle_event(back);
            }
        }
        while let Some(event) = self.conn.poll() {
            match event {
                Event::Connected => self.open_session(),
                Event::Stream(StreamEvent::Readable { id }) if Some(id) == self.request => {
                    self.read_response(id)
                }
                Event::Stream(StreamEvent::Opened { dir: Dir::Uni }) => {
                    while let Some(id) = self.conn.streams().accept(Dir::Uni) {
                        self.drain(id);
                    }
                }
                Event::Stream(StreamEvent::Readable { id }) => self.drain(id),
                Event::DatagramReceived => {
                    while let Some(d) = self.conn.datagrams().recv() {
                        if !self.prefix.is_empty() && d.starts_with(&self.prefix) {
                            self.received.push_back(d.slice(self.prefix.len()..));
                        }
                    }
                }
                _ => {}
            }
        }
    }

    /// Sends the client's SETTINGS and the CONNECT request.
    fn open_session(&mut self) {
        if let Some(id) = self.conn.streams().open(Dir::Uni) {
            let mut payload = Vec::new();
            for (k, v) in [(0x08, 1), (0x33, 1), (0x2b60_3742, 1)] {
                put_varint(&mut payload, k);
                put_varint(&mut payload, v);
            }
            let mut s = vec![0u8];
            let _ = Frame::new_settings(Cow::Owned(payload)).write(&mut s);
            let _ = self.conn.send_stream(id).write(&s);
        }
        let Some(id) = self.conn.streams().open(Dir::Bi) else {
            return;
        };
        let h: Headers = [
            (":method", "CONNECT"),
            (":protocol", "webtransport"),
            (":scheme", "https"),
            (":authority", self.authority.as_str()),
            (":path", self.path.as_str()),
            ("origin", "https://localhost"),
        ]
        .into_iter()
        .collect();
        let mut out = Vec::new();
        let _ = h.generate_frame().write(&mut out);
        let _ = self.conn.send_stream(id).write(&out);
        self.request = Some(id);
        self.prefix.clear();
        put_varint(&mut self.prefix, u64::from(id) / 4);
    }

    /// Reads the server's answer to the CONNECT.
    fn read_response(&mut self, id: StreamId) {
        let mut recv = self.conn.recv_stream(id);
        if let Ok(mut chunks) = recv.read(true) {
            while let Ok(Some(c)) = chunks.next(usize::MAX) {
                self.response.extend_from_slice(&c.bytes);
            }
            let _ = chunks.finalize();
        };
        if self.status.is_some() {
            return;
        }
        let mut b = &self.response[..];
        if let Ok(Some(f)) = Frame::read(&mut b) {
            if matches!(f.kind(), FrameKind::Headers) {
                if let Ok(h) = Headers::with_frame(&f) {
                    self.status = h.get(":status").and_then(|s| s.parse().ok());
                }
            }
        }
    }

    /// Reads and drops what stream `id` holds.
    fn drain(&mut self, id: StreamId) {
        let mut recv = self.conn.recv_stream(id);
        if let Ok(mut chunks) = recv.read(true) {
            while let Ok(Some(_)) = chunks.next(usize::MAX) {}
            let _ = chunks.finalize();
        };
    }

    /// Closes the connection.
    pub fn close(&mut self, now: Instant) {
        self.conn.close(now, VarInt::from_u32(0x100), Bytes::new());
    }
}
