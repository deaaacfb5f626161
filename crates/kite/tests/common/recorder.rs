//! A recording proxy on a unix socket: an application connects to it instead of the
//! forwarder, every frame passes through unchanged in both directions, and each Interest the
//! application sends and each Data the forwarder answers is kept with the time it passed.

use std::collections::HashMap;
use std::os::fd::AsFd;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use bytes::Bytes;
use kite_link::framing::Framer;
use kite_packet::{Interest, NetPacket};

#[derive(Default)]
struct Seen {
    interests: Vec<(Instant, Interest)>,
    answers: HashMap<String, Bytes>,
}

/// The proxy; its threads end when their connections close.
pub struct Recorder {
    socket: String,
    seen: Arc<Mutex<Seen>>,
}

impl Recorder {
    /// Listens at `path` and relays each connection to the forwarder at `upstream`.
    pub fn start(path: &Path, upstream: &str) -> Recorder {
        let listener = UnixListener::bind(path).expect("bind the recorder's socket");
        let seen = Arc::new(Mutex::new(Seen::default()));
        let upstream = upstream.to_string();
        let shared = seen.clone();
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { return };
                let Ok(server) = UnixStream::connect(&upstream) else {
                    return;
                };
                relay(client.try_clone().unwrap(), server.try_clone().unwrap(), {
                    let seen = shared.clone();
                    move |frame| {
                        if let Ok((_, NetPacket::Interest(i))) = NetPacket::decode_frame(frame) {
                            seen.lock().unwrap().interests.push((Instant::now(), i));
                        }
                    }
                });
                relay(server, client, {
                    let seen = shared.clone();
                    move |frame| {
                        if let Ok((_, NetPacket::Data(d))) = NetPacket::decode_frame(frame) {
                            let content = d.content.clone().unwrap_or_default();
                            seen.lock()
                                .unwrap()
                                .answers
                                .insert(d.name.to_string(), content);
                        }
                    }
                });
            }
        });
        Recorder {
            socket: path.display().to_string(),
            seen,
        }
    }

    /// The socket the application connects to.
    pub fn socket(&self) -> &str {
        &self.socket
    }

    /// Every Interest sent through so far, with the time it passed.
    pub fn interests(&self) -> Vec<(Instant, Interest)> {
        self.seen.lock().unwrap().interests.clone()
    }

    /// The content of the Data named `name` that came back, if one did.
    pub fn answer(&self, name: &str) -> Option<Bytes> {
        self.seen.lock().unwrap().answers.get(name).cloned()
    }
}

/// Copies whole frames from `from` to `to` in a thread, showing each to `see` first; when
/// `from` closes, `to` is shut down for writing.
fn relay(from: UnixStream, mut to: UnixStream, mut see: impl FnMut(Bytes) + Send + 'static) {
    std::thread::spawn(move || {
        use std::io::Write;
        let mut framer = Framer::new();
        loop {
            match framer.read_from(from.as_fd()) {
                Ok(c) if c.read == 0 => break,
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            }
            while let Ok(Some(frame)) = framer.next_frame() {
                see(frame.clone());
                if to.write_all(&frame).is_err() {
                    return;
                }
            }
        }
        let _ = to.shutdown(std::net::Shutdown::Write);
    });
}
