//! WebTransport faces (HTTP/3): what browsers reach Kite with. A [`H3Listener`] owns a UDP
//! socket; each client whose first datagram is a QUIC Initial, admitted within the bound
//! on handshakes under way, gets a session of its own (quinn-proto's QUIC state machine
//! with its own endpoint, and the HTTP/3 part in `session.rs`) and a UDP socket of its own,
//! bound to the listener's address and connected to the client, so that the kernel hands
//! that client's later datagrams to the face's socket. The face then owns all it needs and
//! may live on any I/O thread. One face per session: on-demand, non-local, point-to-point,
//! URI `quic://addr:port`; NDN packets and NDNLPv2 fragments travel as the session's
//! datagrams (the link service fragments to the session's datagram size, which follows
//! QUIC's path MTU discovery, and reassembles what the client fragments).
//!
//! Datagrams the listener read for a client before its face's socket existed are fed to
//! the session before the face is handed out; later ones (read in another burst) are
//! dropped and counted (QUIC sends them again). A listener keeps at most
//! [`H3Config::max_sessions`] sessions, giving up the idlest for a new one (as TCP listeners do, [`crate::tenancy`]);
//! a session whose client goes silent ends at the QUIC idle timeout.

// The client and the pair in memory serve the tests and the fuzz target only.
#[cfg(any(test, feature = "testing"))]
mod client;
#[cfg(any(test, feature = "testing"))]
mod memory;
mod qpack;
pub(crate) mod session;
mod transport;

use std::fs;
use std::io;
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use base64::Engine;
use mio::net::UdpSocket;
use mio::{Interest, Registry, Token};
use quinn_proto::crypto::rustls::QuicServerConfig;
use quinn_proto::{EndpointConfig, IdleTimeout, ServerConfig, TransportConfig, VarInt};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use sha2::{Digest, Sha256};
use socket2::{Domain, Protocol, Socket, Type};

#[cfg(any(test, feature = "testing"))]
pub use client::Client;

use crate::config::FaceConfig;
use crate::face::{Face, FaceParts};
use crate::listener::{admit, Accepted, ChannelStatus, ListenError, Listener, OpenListener};
use crate::sys::RecvBatch;
use crate::tenancy::Tenants;
use crate::udp::connected_socket;
use crate::uri::FaceUri;
use kite_link::ChannelCounters;
use kite_link::{FaceIds, FaceScope, LinkType, Persistency};
use session::{Refused, Session, Shared};
use transport::{H3Transport, SLOT};

/// The path served by default, as NDNd serves it.
pub const DEFAULT_PATH: &str = "/ndn";
/// Sessions a listener keeps by default.
pub const DEFAULT_MAX_SESSIONS: usize = 1024;
/// QUIC handshakes a listener lets run at once by default.
pub const DEFAULT_MAX_HANDSHAKES: usize = 64;
/// How long a silent session lives by default (the QUIC idle timeout).
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// Octets of datagrams a session holds for sending by default.
pub const DEFAULT_DATAGRAM_QUEUE: usize = 256 << 10;
/// The longest validity browsers accept for a certificate given by its hash
/// (`serverCertificateHashes`: at most 14 days); Kite's own certificates get a day less.
pub const SELF_SIGNED_VALIDITY: Duration = Duration::from_secs(13 * 24 * 3600);
/// How long the listener takes a known client's datagrams for strays of a session it made,
/// not for a new session's first.
const STRAY_WINDOW: Duration = Duration::from_secs(2);
/// Octets a session's QUIC streams may hold unread (its request and the client's control
/// and QPACK streams carry a few hundred).
const STREAM_WINDOW: u32 = 64 << 10;

/// The settings of a WebTransport listener.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct H3Config {
    /// The path of the CONNECT requests answered (others get 404).
    pub path: String,
    /// Sessions kept at most; a new one beyond them takes the place of the idlest.
    pub max_sessions: usize,
    /// QUIC handshakes under way at most; a new client beyond them is dropped (it tries
    /// again).
    pub max_handshakes: usize,
    /// How long a session lives without hearing from its client.
    pub idle_timeout: Duration,
    /// Octets of datagrams a session holds while QUIC's congestion control holds them back;
    /// frames beyond it wait in the face's output queue.
    pub datagram_queue: usize,
}

impl Default for H3Config {
    fn default() -> Self {
        H3Config {
            path: DEFAULT_PATH.to_owned(),
            max_sessions: DEFAULT_MAX_SESSIONS,
            max_handshakes: DEFAULT_MAX_HANDSHAKES,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            datagram_queue: DEFAULT_DATAGRAM_QUEUE,
        }
    }
}

/// A TLS certificate chain and its key, with the SHA-256 hash of the first certificate.
#[derive(Debug)]
pub struct Certificate {
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
    sha256: [u8; 32],
}

impl Clone for Certificate {
    fn clone(&self) -> Self {
        Certificate {
            chain: self.chain.clone(),
            key: self.key.clone_key(),
            sha256: self.sha256,
        }
    }
}

impl Certificate {
    /// A new self-signed ECDSA P-256 certificate for `localhost` and `names`, valid from
    /// now on for `validity` (browsers take at most 14 days for a certificate given by its
    /// hash).
    pub fn self_signed(names: &[String], validity: Duration) -> Result<Self, String> {
        let mut sans = vec!["localhost".to_owned()];
        sans.extend(names.iter().cloned());
        let mut params = rcgen::CertificateParams::new(sans).map_err(|e| e.to_string())?;
        let now = std::time::SystemTime::now();
        // A minute back, for clocks a little behind.
        params.not_before = (now - Duration::from_secs(60)).into();
        params.not_after = (now + validity).into();
        let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256)
            .map_err(|e| e.to_string())?;
        let cert = params.self_signed(&key).map_err(|e| e.to_string())?;
        let der = cert.der().clone();
        let key = PrivateKeyDer::try_from(key.serialize_der())?;
        Ok(Self::of(vec![der], key))
    }

    /// The chain and key of PEM files `cert` and `key`.
    pub fn from_pem_files(cert: &Path, key: &Path) -> Result<Self, String> {
        let read = |p: &Path| fs::read(p).map_err(|e| format!("{}: {e}", p.display()));
        let pem = read(cert)?;
        let chain = CertificateDer::pem_slice_iter(&pem)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("{}: {e}", cert.display()))?;
        if chain.is_empty() {
            return Err(format!("{}: no certificate", cert.display()));
        }
        let key = PrivateKeyDer::from_pem_slice(&read(key)?)
            .map_err(|e| format!("{}: {e}", key.display()))?;
        Ok(Self::of(chain, key))
    }

    fn of(chain: Vec<CertificateDer<'static>>, key: PrivateKeyDer<'static>) -> Self {
        let sha256 = Sha256::digest(chain[0].as_ref()).into();
        Certificate { chain, key, sha256 }
    }

    /// The SHA-256 hash of the certificate, which a browser pins with
    /// `serverCertificateHashes`.
    pub fn sha256(&self) -> [u8; 32] {
        self.sha256
    }

    /// The hash in hexadecimal.
    pub fn sha256_hex(&self) -> String {
        hex::encode(self.sha256)
    }

    /// The hash in base64.
    pub fn sha256_base64(&self) -> String {
        base64::engine::general_purpose::STANDARD.encode(self.sha256)
    }
}

/// The certificate WebTransport listeners serve new sessions with, shared with whoever
/// replaces it (a reload): the listeners look at its generation for each new client and
/// take the certificate only when it changed.
#[derive(Debug, Clone)]
pub struct CertSlot(Arc<(Mutex<Arc<Certificate>>, AtomicU64)>);

impl CertSlot {
    /// A slot holding `cert`.
    pub fn new(cert: Certificate) -> Self {
        CertSlot(Arc::new((Mutex::new(Arc::new(cert)), AtomicU64::new(0))))
    }

    /// Serves `cert` to new sessions from now on (open sessions keep theirs).
    pub fn replace(&self, cert: Certificate) {
        let (slot, generation) = &*self.0;
        *slot.lock().unwrap_or_else(PoisonError::into_inner) = Arc::new(cert);
        generation.fetch_add(1, Ordering::Release);
    }

    /// How many times it was replaced.
    fn generation(&self) -> u64 {
        self.0 .1.load(Ordering::Acquire)
    }

    /// The certificate, with the generation it is of.
    fn current(&self) -> (u64, Arc<Certificate>) {
        let (slot, _) = &*self.0;
        let cert = slot.lock().unwrap_or_else(PoisonError::into_inner);
        (self.generation(), cert.clone())
    }
}

/// A WebTransport listener as configured: its address, settings and certificate.
#[derive(Debug)]
pub struct Listen {
    /// The UDP address (port 0 picks one).
    pub addr: SocketAddr,
    /// Its settings.
    pub config: H3Config,
    /// The certificate it serves.
    pub cert: CertSlot,
}

impl OpenListener for Listen {
    fn uri(&self) -> FaceUri {
        FaceUri::Quic(self.addr)
    }

    fn open(&self, faces: &FaceConfig) -> Result<Box<dyn Listener>, ListenError> {
        let l = H3Listener::bind(self.addr, &self.cert, self.config.clone(), *faces).map_err(
            |error| ListenError::Bind {
                addr: self.addr,
                error,
            },
        )?;
        Ok(Box::new(l))
    }
}

/// The QUIC configuration of sessions: TLS 1.3 with ALPN `h3` on `cert`, datagrams on,
/// connection migration off, the streams and windows a WebTransport server needs.
fn server_config(cert: &Certificate, config: &H3Config) -> Result<ServerConfig, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut tls = rustls::ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(|e| e.to_string())?
        .with_no_client_auth()
        .with_single_cert(cert.chain.clone(), cert.key.clone_key())
        .map_err(|e| e.to_string())?;
    tls.alpn_protocols = vec![b"h3".to_vec()];
    let crypto = QuicServerConfig::try_from(tls).map_err(|e| e.to_string())?;
    let mut t = TransportConfig::default();
    let idle = IdleTimeout::try_from(config.idle_timeout).map_err(|e| e.to_string())?;
    t.max_idle_timeout(Some(idle))
        .max_concurrent_bidi_streams(VarInt::from_u32(session::MAX_BIDI_STREAMS))
        .max_concurrent_uni_streams(VarInt::from_u32(session::MAX_UNI_STREAMS))
        .stream_receive_window(VarInt::from_u32(STREAM_WINDOW))
        .receive_window(VarInt::from_u32(4 * STREAM_WINDOW))
        .datagram_receive_buffer_size(Some(config.datagram_queue))
        .datagram_send_buffer_size(config.datagram_queue);
    let mut server = ServerConfig::with_crypto(Arc::new(crypto));
    server.transport_config(Arc::new(t)).migration(false);
    Ok(server)
}

/// What a listener's sessions share, from its certificate and settings.
fn shared(cert: &Certificate, config: &H3Config) -> Result<Arc<Shared>, String> {
    let mut endpoint = EndpointConfig::default();
    endpoint
        .max_udp_payload_size(SLOT as u16)
        .map_err(|e| e.to_string())?;
    Ok(Arc::new(Shared {
        endpoint: Arc::new(endpoint),
        server: Arc::new(server_config(cert, config)?),
        path: config.path.clone(),
        handshakes: AtomicUsize::new(0),
    }))
}

/// A WebTransport listener (see the module's documentation).
pub struct H3Listener {
    socket: UdpSocket,
    local: SocketAddr,
    uri: FaceUri,
    cert: CertSlot,
    /// The generation of `cert` that `shared` was made of.
    generation: u64,
    config: H3Config,
    faces: FaceConfig,
    shared: Arc<Shared>,
    sha256: [u8; 32],
    tenants: Tenants,
    batch: RecvBatch,
    /// Datagrams of the last burst, and the next to look at.
    burst: (usize, usize),
    /// Datagrams of the burst already given to a session.
    taken: [bool; crate::sys::BATCH],
    /// Clients given a session lately, and when.
    recent: Vec<(SocketAddr, Instant)>,
    counters: ChannelCounters,
}

impl std::fmt::Debug for H3Listener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("H3Listener")
            .field("local", &self.local)
            .finish()
    }
}

impl H3Listener {
    /// Binds `addr` (port 0 picks one), serving the certificate `cert` holds.
    pub fn bind(
        addr: SocketAddr,
        cert: &CertSlot,
        config: H3Config,
        faces: FaceConfig,
    ) -> io::Result<Self> {
        let (generation, current) = cert.current();
        let shared = shared(&current, &config).map_err(io::Error::other)?;
        let s = Socket::new(Domain::for_address(addr), Type::DGRAM, Some(Protocol::UDP))?;
        if addr.is_ipv6() {
            s.set_only_v6(true)?;
        }
        s.set_nonblocking(true)?;
        crate::udp::grow_buffers(&s);
        s.bind(&addr.into())?;
        // Once bound, so that each session's socket can bind the same address.
        s.set_reuse_address(true)?;
        let socket = UdpSocket::from_std(s.into());
        let local = socket.local_addr()?;
        Ok(H3Listener {
            socket,
            local,
            uri: FaceUri::Quic(local),
            cert: cert.clone(),
            generation,
            tenants: Tenants::new(config.max_sessions),
            config,
            faces,
            shared,
            sha256: current.sha256,
            batch: RecvBatch::new(SLOT),
            burst: (0, 0),
            taken: [false; crate::sys::BATCH],
            recent: Vec::new(),
            counters: ChannelCounters::default(),
        })
    }

    /// Takes the slot's certificate for new sessions if it was replaced (a configuration
    /// that cannot be made of it keeps the one before, and is not tried again).
    fn follow_certificate(&mut self) {
        if self.cert.generation() == self.generation {
            return;
        }
        let (generation, cert) = self.cert.current();
        self.generation = generation;
        if let Ok(s) = shared(&cert, &self.config) {
            self.shared = s;
            self.sha256 = cert.sha256;
        }
    }
}

impl Listener for H3Listener {
    fn local_uri(&self) -> &FaceUri {
        &self.uri
    }

    fn status(&self) -> ChannelStatus {
        ChannelStatus {
            local: self.uri.clone(),
            counters: self.counters,
            io_path: None,
            xdp: None,
            cert_sha256: Some(hex::encode(self.sha256)),
        }
    }

    fn register(&mut self, registry: &Registry, token: Token) -> io::Result<()> {
        registry.register(&mut self.socket, token, Interest::READABLE)
    }

    /// The next session a datagram opened, as a face; `Ok(None)` once the socket is drained.
    fn accept(&mut self, ids: &mut FaceIds, now: Instant) -> io::Result<Option<Accepted>> {
        loop {
            let (n, i) = self.burst;
            if i == n {
                let Some(n) = self.batch.recv_ready(self.socket.as_raw_fd())? else {
                    return Ok(None);
                };
                self.burst = (n, 0);
                self.taken = [false; crate::sys::BATCH];
                continue;
            }
            self.burst.1 += 1;
            if self.taken[i] {
                continue;
            }
            if let Some(a) = self.datagram(i, ids, now) {
                return Ok(Some(a));
            }
        }
    }
}

impl H3Listener {
    /// Datagram `i` of the burst: a new session's face, or `None` (dropped and counted).
    fn datagram(&mut self, i: usize, ids: &mut FaceIds, now: Instant) -> Option<Accepted> {
        let Some(remote) = self.batch.source(i) else {
            self.counters.n_malformed += 1;
            return None;
        };
        if self.batch.truncated(i) {
            self.counters.n_truncated += 1;
            return None;
        }
        self.recent
            .retain(|&(_, t)| now.saturating_duration_since(t) < STRAY_WINDOW);
        if self.recent.iter().any(|&(r, _)| r == remote) {
            // A stray of a session made lately, read before its socket took over.
            self.counters.n_no_face += 1;
            return None;
        }
        self.follow_certificate();
        let d = self.batch.datagram(i);
        let local_ip = Some(self.local.ip()).filter(|ip| !ip.is_unspecified());
        let max = self.config.max_handshakes;
        let session = match Session::accept(&self.shared, max, now, remote, local_ip, d) {
            Ok(s) => s,
            Err(Refused::NotInitial) => {
                self.counters.n_malformed += 1;
                return None;
            }
            Err(Refused::Busy) => {
                self.counters.n_no_face += 1;
                return None;
            }
        };
        self.recent.push((remote, now));
        // The session's own socket, as a UDP face's: bound to the listener's address and
        // connected to its client, so the kernel hands the client's datagrams to it.
        let socket = match connected_socket(self.local, remote, self.faces.udp_socket_buffer, false)
        {
            Ok(s) => s,
            Err(e) => return Some(Accepted::Broken(e)),
        };
        let mut session = session;
        let mtu = session.max_frame().unwrap_or(FALLBACK_MTU);
        let mut t = H3Transport::new(socket, self.local, session, mtu);
        // The rest of this client's datagrams in the burst (a ClientHello in two Initials).
        for k in i + 1..self.burst.0 {
            if self.batch.source(k) == Some(remote) && !self.batch.truncated(k) {
                self.taken[k] = true;
                t.receive_early(now, self.batch.datagram(k));
            }
        }
        let id = ids.next_id();
        let parts = FaceParts {
            scope: FaceScope::NonLocal,
            persistency: Persistency::OnDemand,
            link_type: LinkType::PointToPoint,
            redial: None,
        };
        // The handshake's answer goes at once, wherever the face is placed.
        let _ = t.transmit(now);
        let face = Face::new(id, parts, Box::new(t), &self.faces);
        Some(admit(&mut self.tenants, face, now))
    }
}

/// Drives a session with what a client's input holds, for the fuzz target: the request
/// parser reads the whole input; then, after a handshake, each record of it (a kind octet, a
/// length octet, that many octets) is sent by the client as a datagram of the session, a
/// datagram without its prefix, a request stream or a unidirectional stream. Panics only
/// where the server would.
#[cfg(any(test, feature = "testing"))]
pub fn exercise(input: &[u8]) {
    let _ = session::parse_request(input);
    static SERVER: std::sync::OnceLock<(Certificate, Arc<Shared>)> = std::sync::OnceLock::new();
    let (cert, shared) = SERVER.get_or_init(|| {
        let c = Certificate::self_signed(&[], SELF_SIGNED_VALIDITY).expect("a certificate");
        let s = shared(&c, &H3Config::default()).expect("a configuration");
        (c, s)
    });
    let mut p = memory::Pair::open(DEFAULT_PATH, shared, cert);
    let mut rest = input;
    while let [kind, len, tail @ ..] = rest {
        let (body, next) = tail.split_at(usize::from(*len).min(tail.len()));
        match kind % 4 {
            0 => drop(p.client.send(body)),
            1 => drop(p.client.send_raw(bytes::Bytes::copy_from_slice(body))),
            2 => p.client.open_stream(true, body),
            _ => p.client.open_stream(false, body),
        }
        rest = next;
    }
    p.pump();
    let dropped = p.server.take_dropped();
    assert!(dropped.datagrams as usize <= input.len());
}

/// The MTU of a session's face while its datagram size is not known yet: what a datagram
/// carries in a QUIC packet of 1200 octets (the smallest path QUIC allows), less its
/// headers. Once known, the face's MTU follows the session's datagram size.
const FALLBACK_MTU: usize = 1100;

#[cfg(test)]
mod tests;
