//! NDN peers written with kite-packet, so the tests that use them run under a plain
//! `cargo test`: a stream connection (unix or TCP) that writes raw octets and reads NDNLPv2
//! frames, registers a prefix on itself as an NFD app does, and answers Interests; and reads
//! of the forwarder's management datasets through kite-app.

use std::collections::VecDeque;
use std::io::{self, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::mpsc::{self, Receiver};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bytes::Bytes;
use kite_app::{nfd_name, Client};
use kite_link::framing::Framer;
use kite_mgmt_proto::datasets::{ChannelStatus, CsInfo, FaceStatus, ForwarderStatus};
use kite_mgmt_proto::{decode_items, ControlParameters, ControlResponse, Tlv};
use kite_packet::{
    Data, DigestSha256, Interest, LpHeader, LpPacket, Name, NetPacket, Nonce, PitToken,
    SignatureInfo, SignatureType,
};

/// How long a management read may take.
const MGMT: Duration = Duration::from_secs(10);

/// A Nonce no other Interest of this test process has used.
pub fn nonce() -> Nonce {
    static NEXT: AtomicU32 = AtomicU32::new(1);
    Nonce::from(NEXT.fetch_add(1, Ordering::Relaxed))
}

/// An encoded Interest for `name` with a fresh Nonce and `lifetime_ms`.
pub fn interest(name: &str, lifetime_ms: u64) -> Bytes {
    kite_testkit::packet::interest(name, nonce(), lifetime_ms)
}

/// An encoded Data named `name` carrying `content`, DigestSha256-signed.
pub fn data(name: &Name, content: impl Into<Bytes>) -> Bytes {
    Data::new(name.clone(), content)
        .sign(&DigestSha256)
        .expect("DigestSha256 signing cannot fail")
}

/// `packet` in an LpPacket that echoes `token` (bare when there is none).
pub fn with_token(token: Option<PitToken>, packet: Bytes) -> Bytes {
    if token.is_none() {
        return packet;
    }
    LpPacket {
        header: LpHeader {
            pit_token: token,
            ..LpHeader::default()
        },
        fragment: Some(packet),
    }
    .encode()
}

/// The socket under a [`Conn`].
enum Sock {
    Unix(UnixStream),
    Tcp(TcpStream),
}

impl Sock {
    fn set_read_timeout(&self, t: Duration) -> io::Result<()> {
        match self {
            Sock::Unix(s) => s.set_read_timeout(Some(t)),
            Sock::Tcp(s) => s.set_read_timeout(Some(t)),
        }
    }

    fn as_fd(&self) -> BorrowedFd<'_> {
        match self {
            Sock::Unix(s) => s.as_fd(),
            Sock::Tcp(s) => s.as_fd(),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            Sock::Unix(s) => s.write_all(buf),
            Sock::Tcp(s) => s.write_all(buf),
        }
    }
}

/// What a read on a [`Conn`] found.
#[derive(Debug)]
pub enum Got {
    /// One whole frame.
    Frame(Bytes),
    /// Nothing within the timeout.
    Nothing,
    /// The forwarder closed the connection (or reset it).
    Closed,
}

/// One stream connection to the forwarder, as an app holds it.
pub struct Conn {
    sock: Sock,
    framer: Framer,
    /// Frames that came while [`Conn::register`] waited for its answer, read before the rest:
    /// an Interest may overtake the answer (a routing daemon's readvertise command reaches it
    /// once the route exists, which is before management's reply).
    held: VecDeque<Bytes>,
}

impl Conn {
    /// Connects to the unix socket at `path`.
    pub fn unix(path: &str) -> Conn {
        let s = UnixStream::connect(path).expect("connect to the unix socket");
        Conn {
            sock: Sock::Unix(s),
            framer: Framer::new(),
            held: VecDeque::new(),
        }
    }

    /// Connects over TCP.
    pub fn tcp(addr: SocketAddr) -> Conn {
        let s = TcpStream::connect(addr).expect("connect over TCP");
        s.set_nodelay(true).expect("TCP_NODELAY");
        Conn {
            sock: Sock::Tcp(s),
            framer: Framer::new(),
            held: VecDeque::new(),
        }
    }

    /// A second handle on the same connection (e.g. one thread writes, another reads).
    pub fn try_clone(&self) -> Conn {
        let sock = match &self.sock {
            Sock::Unix(s) => Sock::Unix(s.try_clone().expect("clone the socket")),
            Sock::Tcp(s) => Sock::Tcp(s.try_clone().expect("clone the socket")),
        };
        Conn {
            sock,
            framer: Framer::new(),
            held: VecDeque::new(),
        }
    }

    /// Writes `octets` as they are.
    pub fn send(&mut self, octets: &[u8]) {
        self.sock.write_all(octets).expect("write to the forwarder");
    }

    /// Writes `octets`; the error when the forwarder has closed the connection.
    pub fn try_send(&mut self, octets: &[u8]) -> io::Result<()> {
        self.sock.write_all(octets)
    }

    /// A whole frame already received and buffered, without reading the socket.
    pub fn buffered(&mut self) -> Option<Bytes> {
        if let Some(f) = self.held.pop_front() {
            return Some(f);
        }
        self.framer.next_frame().expect("the forwarder frames")
    }

    /// The next frame the forwarder sends, waiting up to `timeout`.
    pub fn recv(&mut self, timeout: Duration) -> Got {
        let until = Instant::now() + timeout;
        loop {
            if let Some(f) = self.buffered() {
                return Got::Frame(f);
            }
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Got::Nothing;
            }
            self.sock.set_read_timeout(left).expect("read timeout");
            match self.framer.read_from(self.sock.as_fd()).map(|f| f.read) {
                Ok(0) => return Got::Closed,
                Ok(_) => {}
                // A read with a timeout is not restarted after a signal handler ran.
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock
                            | io::ErrorKind::TimedOut
                            | io::ErrorKind::Interrupted
                    ) => {}
                Err(e) => {
                    eprintln!("reading from the forwarder failed: {e}");
                    return Got::Closed;
                }
            }
        }
    }

    /// The next frame decoded as an LpPacket; panics on timeout or close.
    pub fn recv_lp(&mut self, timeout: Duration) -> LpPacket {
        match self.recv(timeout) {
            Got::Frame(f) => LpPacket::decode(f).expect("the forwarder sends valid LpPackets"),
            other => panic!("expected a packet within {timeout:?}, got {other:?}"),
        }
    }

    /// The next packet, decoded whole (Interest, Data or Nack), with its LP header.
    pub fn recv_packet(&mut self, timeout: Duration) -> (LpHeader, NetPacket) {
        match self.recv(timeout) {
            Got::Frame(f) => NetPacket::decode_frame(f).expect("a valid packet"),
            other => panic!("expected a packet within {timeout:?}, got {other:?}"),
        }
    }

    /// The next Interest (panics on anything else) and the PIT token to echo.
    pub fn recv_interest(&mut self, timeout: Duration) -> (Option<PitToken>, Interest) {
        match self.recv_packet(timeout) {
            (h, NetPacket::Interest(i)) => (h.pit_token, i),
            (_, other) => panic!("an Interest expected, got {other:?}"),
        }
    }

    /// Sends an Interest for `name` and returns the Data (or panics on a Nack or timeout).
    pub fn fetch(&mut self, name: &str, timeout: Duration) -> Data {
        self.send(&interest(name, timeout.as_millis() as u64));
        match self.recv_packet(timeout) {
            (_, NetPacket::Data(d)) => d,
            (_, other) => panic!("Data for {name} expected, got {other:?}"),
        }
    }

    /// Registers `prefix` toward this connection (`rib/register` without a FaceId, as apps
    /// do); returns the FaceId the forwarder gave the connection. Whatever else arrives first
    /// is kept for the next reads.
    pub fn register(&mut self, prefix: &str) -> u64 {
        self.send(&register_command(prefix));
        // What is held already stays first; what comes now goes behind it.
        let mut other = std::mem::take(&mut self.held);
        let face = loop {
            let Got::Frame(f) = self.recv(MGMT) else {
                panic!("no answer to rib/register {prefix} within {MGMT:?}");
            };
            if let Ok((_, NetPacket::Data(d))) = NetPacket::decode_frame(f.clone()) {
                if let Some(face) = registered_face(&d) {
                    break face;
                }
            }
            other.push_back(f);
        };
        self.held = other;
        face
    }
}

/// A `rib/register` command for `prefix` toward the face it arrives on.
pub fn register_command(prefix: &str) -> Bytes {
    let params = ControlParameters {
        name: Some(prefix.parse().expect("a valid prefix")),
        ..ControlParameters::default()
    };
    command("rib", "register", &params)
}

/// The FaceId a `rib/register` answer names (panics unless it succeeded); `None` when `d` is
/// another Data.
pub fn registered_face(d: &Data) -> Option<u64> {
    if !d
        .name
        .to_string()
        .starts_with("/localhost/nfd/rib/register")
    {
        return None;
    }
    let resp = ControlResponse::decode(d.content.as_ref()?).expect("a ControlResponse");
    assert_eq!(resp.status_code, 200, "rib/register: {resp:?}");
    resp.parameters()
        .expect("parameters in the response")
        .expect("valid parameters")
        .face_id
}

/// A signed control command Interest (v0.3 signed Interest, DigestSha256).
pub fn command(module: &str, verb: &str, params: &ControlParameters) -> Bytes {
    command_under("/localhost/nfd", module, verb, params)
}

/// [`command`] under another prefix (`/localhop/nfd`, `/localhost/nlsr`).
pub fn command_under(prefix: &str, module: &str, verb: &str, params: &ControlParameters) -> Bytes {
    let time = kite_app::mgmt::next_signature_time();
    command_signed_at(prefix, module, verb, params, time)
}

/// [`command_under`] with SignatureTime `time` (ms since the Unix epoch).
pub fn command_signed_at(
    prefix: &str,
    module: &str,
    verb: &str,
    params: &ControlParameters,
    time: u64,
) -> Bytes {
    let mut name: Name = prefix.parse().expect("a valid prefix");
    for part in [module.as_bytes(), verb.as_bytes(), &params.encode()] {
        name = name.append_generic(part);
    }
    let mut i = Interest::new(name);
    i.must_be_fresh = true;
    i.lifetime = Some(4000);
    i.nonce = Some(nonce());
    let mut info = SignatureInfo::new(SignatureType::DIGEST_SHA256);
    info.nonce = Some(Bytes::copy_from_slice(&nonce().0));
    info.time = Some(time);
    i.sig_info = Some(info);
    i.encode_signed(&DigestSha256)
        .expect("DigestSha256 signing cannot fail")
}

/// A management client on the daemon's unix socket.
pub fn mgmt(socket: &str) -> Client {
    Client::connect_unix(socket).expect("connect the management client")
}

/// `faces/list`. Datasets are fresh for a second, so a repeated read may be that old.
pub fn faces(socket: &str) -> Vec<FaceStatus> {
    let payload = mgmt(socket)
        .dataset(&nfd_name(&[b"faces", b"list"]), MGMT)
        .expect("faces/list");
    decode_items(&payload).expect("FaceStatus items")
}

/// `faces/channels`.
pub fn channels(socket: &str) -> Vec<ChannelStatus> {
    let payload = mgmt(socket)
        .dataset(&nfd_name(&[b"faces", b"channels"]), MGMT)
        .expect("faces/channels");
    decode_items(&payload).expect("ChannelStatus items")
}

/// The face with `id`, if it is listed.
pub fn face(socket: &str, id: u64) -> Option<FaceStatus> {
    faces(socket).into_iter().find(|f| f.face_id == id)
}

/// `status/general`.
pub fn general(socket: &str) -> ForwarderStatus {
    let payload = mgmt(socket)
        .dataset(&nfd_name(&[b"status", b"general"]), MGMT)
        .expect("status/general");
    ForwarderStatus::decode(&payload).expect("ForwarderStatus")
}

/// `cs/info`.
pub fn cs_info(socket: &str) -> CsInfo {
    let payload = mgmt(socket)
        .dataset(&nfd_name(&[b"cs", b"info"]), MGMT)
        .expect("cs/info");
    CsInfo::decode(&payload).expect("CsInfo")
}

/// Sends a control command from a fresh management client; panics unless it succeeds.
pub fn command_ok(
    socket: &str,
    module: &str,
    verb: &str,
    params: ControlParameters,
) -> ControlParameters {
    mgmt(socket)
        .command_ok(module, verb, &params, MGMT)
        .unwrap_or_else(|e| panic!("{module}/{verb}: {e}"))
}

/// What a [`Producer`] answers an Interest with: content for a Data of the Interest's name,
/// or nothing (the Interest stays pending).
pub type Answer = Box<dyn Fn(&Interest) -> Option<Bytes> + Send>;

/// A producer on its own connection and thread: registers a prefix, reports every Interest
/// it receives, answers those `answer` gives content for (echoing the PIT token).
pub struct Producer {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    asked: Receiver<Interest>,
    face_id: u64,
}

impl Producer {
    /// Connects to `socket`, registers `prefix` and starts answering.
    pub fn start(socket: &str, prefix: &str, answer: Answer) -> Producer {
        let mut conn = Conn::unix(socket);
        let face_id = conn.register(prefix);
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, asked) = mpsc::channel();
        let halt = stop.clone();
        let thread = std::thread::spawn(move || {
            // Answers go out in one write per batch of Interests already received.
            let mut batch = Vec::new();
            while !halt.load(Ordering::Relaxed) {
                let frame = match conn.buffered() {
                    Some(f) => f,
                    None => {
                        if !batch.is_empty() && conn.try_send(&batch).is_err() {
                            return;
                        }
                        batch.clear();
                        match conn.recv(Duration::from_millis(50)) {
                            Got::Frame(f) => f,
                            Got::Nothing => continue,
                            Got::Closed => return,
                        }
                    }
                };
                let Ok((h, NetPacket::Interest(i))) = NetPacket::decode_frame(frame) else {
                    continue;
                };
                if let Some(content) = answer(&i) {
                    batch.extend_from_slice(&with_token(h.pit_token, data(&i.name, content)));
                }
                if tx.send(i).is_err() {
                    return;
                }
            }
        });
        Producer {
            stop,
            thread: Some(thread),
            asked,
            face_id,
        }
    }

    /// The FaceId of the producer's connection.
    pub fn face_id(&self) -> u64 {
        self.face_id
    }

    /// The next `n` Interests it received, waiting up to `timeout` for all of them.
    pub fn interests(&self, n: usize, timeout: Duration) -> Vec<Interest> {
        let until = Instant::now() + timeout;
        let mut got = Vec::with_capacity(n);
        while got.len() < n {
            let left = until.saturating_duration_since(Instant::now());
            match self.asked.recv_timeout(left) {
                Ok(i) => got.push(i),
                Err(_) => panic!("{} of {n} Interests reached the producer", got.len()),
            }
        }
        got
    }

    /// Closes the producer's connection and stops its thread.
    pub fn kill(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Producer {
    fn drop(&mut self) {
        self.kill();
    }
}
