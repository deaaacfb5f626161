//! A client and a server session in memory, the UDP payloads passed between them by hand
//! and the time supplied: what the session's tests and its fuzz target drive.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use bytes::{Bytes, BytesMut};

use super::client::Client;
use super::session::{Session, Shared};
use super::Certificate;

/// The client's address.
pub(crate) const CLIENT: &str = "192.0.2.7:50000";
/// The server's address.
pub(crate) const SERVER: &str = "192.0.2.1:443";

/// `s` as an address.
pub(crate) fn addr(s: &str) -> SocketAddr {
    s.parse().expect("an address")
}

/// A client and the server's session, with what the session handed on.
pub(crate) struct Pair {
    pub client: Client,
    pub server: Session,
    pub now: Instant,
    pub frames: Vec<Bytes>,
}

/// The client's first datagram.
pub(crate) fn first(client: &mut Client, now: Instant) -> Vec<u8> {
    let mut buf = Vec::new();
    let t = client.poll_transmit(now, &mut buf).expect("an Initial");
    buf.truncate(t.size);
    buf
}

impl Pair {
    /// A client that opened a session on `path` with a server of `shared`'s settings.
    pub fn open(path: &str, shared: &Arc<Shared>, cert: &Certificate) -> Pair {
        Self::pinning(path, shared, cert.sha256())
    }

    /// A client pinning the certificate hash `hash` that tried to open a session on `path`
    /// with a server of `shared`'s settings.
    pub fn pinning(path: &str, shared: &Arc<Shared>, hash: [u8; 32]) -> Pair {
        let now = Instant::now();
        let mut client = Client::connect(now, addr(SERVER), path, hash).unwrap();
        let d = first(&mut client, now);
        let server = Session::accept(shared, 64, now, addr(CLIENT), None, &d).unwrap();
        let mut p = Pair {
            client,
            server,
            now,
            frames: Vec::new(),
        };
        p.pump();
        p
    }

    /// Passes datagrams both ways until neither side has any.
    pub fn pump(&mut self) {
        let mut buf = Vec::new();
        for _ in 0..100 {
            let mut moved = false;
            while let Some(t) = self.server.poll_transmit(self.now, 8, &mut buf) {
                let seg = t.segment_size.unwrap_or(t.size);
                for d in buf[..t.size].chunks(seg) {
                    self.client.receive(self.now, addr(SERVER), d);
                }
                moved = true;
            }
            while let Some(t) = self.client.poll_transmit(self.now, &mut buf) {
                let frames = &mut self.frames;
                let d = BytesMut::from(&buf[..t.size]);
                self.server.receive(self.now, d, &mut |f| frames.push(f));
                moved = true;
            }
            if !moved {
                return;
            }
        }
        panic!("the two sides never went quiet");
    }
}
