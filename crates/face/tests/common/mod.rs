//! Helpers for the face integration tests: packets and a small poll loop.
#![allow(dead_code)]

use std::time::{Duration, Instant};

use bytes::Bytes;
use kite_face::{Face, Flushed, Progress, Received};
use kite_packet::{Data, Interest, Name};
use mio::{Events, Poll, Token};

/// An encoded Interest for `name`.
pub fn interest(name: &str) -> Bytes {
    Interest::new(name.parse::<Name>().unwrap()).encode()
}

/// An encoded Data named `name` with `size` octets of content.
pub fn data(name: &str, size: usize) -> Bytes {
    Data::new(name.parse::<Name>().unwrap(), vec![0x5a; size]).encode()
}

/// The name of a received packet, as a URI.
pub fn name_of(r: &Received) -> String {
    match &r.packet {
        kite_face::RxPacket::Interest(i) | kite_face::RxPacket::Nack(_, i) => i.name.to_string(),
        kite_face::RxPacket::Data(d) => d.name.to_string(),
    }
}

/// A poll loop over faces registered under their index as token.
pub struct Driver {
    pub poll: Poll,
    pub faces: Vec<Face>,
    events: Events,
    inbox: Vec<(usize, Received)>,
}

impl Driver {
    pub fn new() -> Self {
        Driver {
            poll: Poll::new().unwrap(),
            faces: Vec::new(),
            events: Events::with_capacity(64),
            inbox: Vec::new(),
        }
    }

    /// Registers `face` and returns its index.
    pub fn add(&mut self, face: Face) -> usize {
        let i = self.faces.len();
        face.register(self.poll.registry(), Token(i)).unwrap();
        self.faces.push(face);
        i
    }

    /// Waits for events (at most `timeout`); on each, receives until drained and flushes.
    /// What arrives waits in the inbox, per face index.
    pub fn step(&mut self, timeout: Duration) {
        self.poll.poll(&mut self.events, Some(timeout)).unwrap();
        for ev in &self.events {
            let i = ev.token().0;
            let mut out = Vec::new();
            let face = &mut self.faces[i];
            let hangup = ev.is_read_closed();
            while let Ok(Progress::More) =
                face.recv_burst(Instant::now(), hangup, usize::MAX, &mut out)
            {}
            face.flush().unwrap();
            self.inbox.extend(out.into_iter().map(|r| (i, r)));
        }
    }

    /// Steps until `n` packets arrived (or 5 s pass) and takes them.
    pub fn receive(&mut self, n: usize) -> Vec<(usize, Received)> {
        let deadline = Instant::now() + Duration::from_secs(5);
        while self.inbox.len() < n && Instant::now() < deadline {
            self.step(Duration::from_millis(50));
        }
        std::mem::take(&mut self.inbox)
    }

    /// Flushes face `i` until done (stepping the loop while blocked).
    pub fn flush(&mut self, i: usize) {
        let deadline = Instant::now() + Duration::from_secs(5);
        while self.faces[i].flush().unwrap() == Flushed::Blocked {
            assert!(Instant::now() < deadline, "flush never completed");
            self.step(Duration::from_millis(20));
        }
    }
}
