//! A blocking WebTransport client for the tests: kite-face's sans-I/O client (quinn-proto)
//! over a std UDP socket, driven until what the test waits for happens.

use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use bytes::Bytes;
use kite_face::h3::Client;

/// A session's client end and its socket.
pub struct WtClient {
    pub socket: UdpSocket,
    server: SocketAddr,
    pub client: Client,
}

/// The certificate hash `kite run` logged last (`sha256_hex="…"`).
pub fn logged_hash(log: &str) -> [u8; 32] {
    let hex = log
        .rsplit("sha256_hex=\"")
        .next()
        .filter(|_| log.contains("sha256_hex="))
        .and_then(|r| r.get(..64))
        .unwrap_or_else(|| panic!("no certificate hash in the log: {log}"));
    let mut h = [0u8; 32];
    for (i, b) in h.iter_mut().enumerate() {
        *b = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap();
    }
    h
}

impl WtClient {
    /// Opens a session to `server` on `path`, pinning `hash`; waits up to 5 s for the
    /// CONNECT's answer (`status()` stays `None` if none came).
    pub fn open(server: SocketAddr, path: &str, hash: [u8; 32]) -> WtClient {
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        let client = Client::connect(Instant::now(), server, path, hash).unwrap();
        let mut c = WtClient {
            socket,
            server,
            client,
        };
        c.drive(Duration::from_secs(5), |c| c.status().is_some());
        c
    }

    /// The client's local address (the face's remote).
    pub fn addr(&self) -> SocketAddr {
        self.socket.local_addr().unwrap()
    }

    /// The CONNECT's answer.
    pub fn status(&self) -> Option<u16> {
        self.client.status()
    }

    /// Sends what the client has, reads what comes, runs its timers, until `done` or
    /// `limit` passed; whether `done` was met.
    pub fn drive(&mut self, limit: Duration, mut done: impl FnMut(&mut Client) -> bool) -> bool {
        let until = Instant::now() + limit;
        let mut buf = Vec::new();
        let mut rx = vec![0u8; 65536];
        loop {
            let now = Instant::now();
            while let Some(t) = self.client.poll_transmit(now, &mut buf) {
                let _ = self.socket.send_to(&buf[..t.size], self.server);
            }
            if done(&mut self.client) {
                return true;
            }
            if now >= until {
                return false;
            }
            let wake = self.client.timeout().unwrap_or(until).min(until);
            let wait = wake
                .saturating_duration_since(now)
                .clamp(Duration::from_millis(1), Duration::from_millis(50));
            self.socket.set_read_timeout(Some(wait)).unwrap();
            match self.socket.recv_from(&mut rx) {
                Ok((n, from)) => self.client.receive(Instant::now(), from, &rx[..n]),
                Err(_) => {
                    let now = Instant::now();
                    if self.client.timeout().is_some_and(|t| t <= now) {
                        self.client.on_timeout(now);
                    }
                }
            }
        }
    }

    /// Sends `packet` as a datagram of the session and waits up to `limit` for a datagram
    /// back.
    pub fn express(&mut self, packet: &[u8], limit: Duration) -> Option<Bytes> {
        self.client.send(packet).unwrap();
        let mut got = None;
        self.drive(limit, |c| {
            got = c.recv();
            got.is_some()
        });
        got
    }
}
