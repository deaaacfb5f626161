//! An in-process fake forwarder for tests: a Unix socket in a temporary directory that answers
//! the management names it was told about, the way NFD's dispatcher answers them, and records
//! every Interest it receives.
//!
//! Enabled by the `fake-forwarder` feature (and in this crate's own tests).

use std::io::Write;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use bytes::Bytes;
use kite_mgmt_proto::dataset::{nack_data, response_data, segments};
use kite_mgmt_proto::{parse_command, ControlParameters, ControlResponse};
use kite_packet::{Interest, LpHeader, LpPacket, Name, NetPacket, PitToken};

use crate::framing::FrameReader;

/// The dataset version the fake publishes.
const VERSION: u64 = 1_795_345_271_538;

type CommandFn = dyn Fn(&ControlParameters) -> ControlResponse + Send + Sync;
type RawFn = dyn Fn(&Interest) -> Vec<Bytes> + Send + Sync;

/// What the fake answers.
#[derive(Default)]
struct Routes {
    datasets: Vec<(Name, Result<Bytes, ControlResponse>)>,
    commands: Vec<(String, String, Box<CommandFn>)>,
    raw: Vec<Box<RawFn>>,
    pit_tokens: bool,
}

impl Routes {
    fn answer(&self, interest: &Interest) -> Vec<Bytes> {
        if let Ok(cmd) = parse_command(interest) {
            let handler = self
                .commands
                .iter()
                .find(|(m, v, _)| m == cmd.verb.module() && v == cmd.verb.verb());
            if let Some((_, _, f)) = handler {
                return vec![response_data(&interest.name, &f(&cmd.params))];
            }
        }
        for (prefix, reply) in &self.datasets {
            if let Some(answer) = dataset_answer(prefix, reply, &interest.name) {
                return answer;
            }
        }
        self.raw
            .iter()
            .map(|f| f(interest))
            .find(|r| !r.is_empty())
            .unwrap_or_default()
    }
}

/// The answer to `name` from a dataset published under `prefix`, if `name` asks for it.
fn dataset_answer(
    prefix: &Name,
    reply: &Result<Bytes, ControlResponse>,
    name: &Name,
) -> Option<Vec<Bytes>> {
    let payload = match reply {
        Ok(p) => p,
        Err(resp) if name == prefix => return Some(vec![nack_data(name, resp)]),
        Err(_) => return None,
    };
    let segs = segments(prefix, VERSION, payload);
    if name == prefix {
        return Some(vec![segs[0].clone()]);
    }
    let versioned = name.len() == prefix.len() + 2
        && prefix.is_prefix_of(name)
        && name.get(prefix.len())?.as_version() == Some(VERSION);
    let seg = name.last()?.as_segment()?;
    (versioned && seg < segs.len() as u64).then(|| vec![segs[seg as usize].clone()])
}

/// Configures a [`FakeForwarder`].
#[derive(Default)]
pub struct FakeBuilder {
    routes: Routes,
}

impl FakeBuilder {
    /// Publishes `payload` as the status dataset under `prefix` (a URI such as
    /// `/localhost/nfd/faces/list`), segmented as NFD segments it.
    pub fn dataset(mut self, prefix: &str, payload: impl Into<Bytes>) -> Self {
        self.routes
            .datasets
            .push((parse(prefix), Ok(payload.into())));
        self
    }

    /// Refuses the dataset under `prefix` with `resp` (a ContentType-Nack Data).
    pub fn dataset_error(mut self, prefix: &str, resp: ControlResponse) -> Self {
        self.routes.datasets.push((parse(prefix), Err(resp)));
        self
    }

    /// Answers the command `module`/`verb` with what `f` returns for its parameters.
    pub fn command(
        mut self,
        module: &str,
        verb: &str,
        f: impl Fn(&ControlParameters) -> ControlResponse + Send + Sync + 'static,
    ) -> Self {
        self.routes
            .commands
            .push((module.into(), verb.into(), Box::new(f)));
        self
    }

    /// For any other Interest, sends the frames `f` returns (the first handler returning
    /// some wins; none means no answer).
    pub fn raw(mut self, f: impl Fn(&Interest) -> Vec<Bytes> + Send + Sync + 'static) -> Self {
        self.routes.raw.push(Box::new(f));
        self
    }

    /// Wraps every reply in an LpPacket with a PitToken, as a forwarder may.
    pub fn with_pit_tokens(mut self) -> Self {
        self.routes.pit_tokens = true;
        self
    }

    /// Starts listening.
    pub fn start(self) -> FakeForwarder {
        let dir = tempfile::tempdir().expect("temporary directory");
        let path = dir.path().join("nfd.sock");
        let listener = UnixListener::bind(&path).expect("bind the fake forwarder's socket");
        let stop = Arc::new(AtomicBool::new(false));
        let received = Arc::new(Mutex::new(Vec::new()));
        let routes = Arc::new(self.routes);
        let thread = {
            let (stop, received) = (stop.clone(), received.clone());
            std::thread::spawn(move || {
                for conn in listener.incoming() {
                    if stop.load(Ordering::Acquire) {
                        break;
                    }
                    let Ok(conn) = conn else { continue };
                    let (routes, received) = (routes.clone(), received.clone());
                    std::thread::spawn(move || serve(conn, &routes, &received));
                }
            })
        };
        FakeForwarder {
            _dir: dir,
            path,
            stop,
            received,
            thread: Some(thread),
        }
    }
}

/// Answers one connection until it closes.
fn serve(mut conn: UnixStream, routes: &Routes, received: &Mutex<Vec<Interest>>) {
    let mut frames = FrameReader::new();
    let mut reader = conn.try_clone().expect("clone the connection");
    while let Ok(frame) = frames.next_frame(&mut reader) {
        let Ok((_, NetPacket::Interest(interest))) = NetPacket::decode_frame(frame.clone()) else {
            continue;
        };
        if interest.name == kite_shm::OFFER_NAME.parse::<Name>().expect("a valid name") {
            // Like a forwarder without shared memory: no route for the request.
            let nack = kite_packet::Nack::encode_for(kite_packet::NackReason::NO_ROUTE, frame);
            if conn.write_all(&nack).is_err() {
                return;
            }
            continue;
        }
        received.lock().expect("lock").push(interest.clone());
        for reply in routes.answer(&interest) {
            let reply = if routes.pit_tokens {
                LpPacket {
                    header: LpHeader {
                        pit_token: Some(PitToken::from_u64(0x5eed)),
                        ..LpHeader::default()
                    },
                    fragment: Some(reply),
                }
                .encode()
            } else {
                reply
            };
            if conn.write_all(&reply).is_err() {
                return;
            }
        }
    }
}

fn parse(uri: &str) -> Name {
    uri.parse().expect("a valid name URI")
}

/// A running fake forwarder; stops when dropped.
pub struct FakeForwarder {
    _dir: tempfile::TempDir,
    path: PathBuf,
    stop: Arc<AtomicBool>,
    received: Arc<Mutex<Vec<Interest>>>,
    thread: Option<JoinHandle<()>>,
}

impl FakeForwarder {
    /// Starts configuring a fake forwarder.
    pub fn builder() -> FakeBuilder {
        FakeBuilder::default()
    }

    /// The Unix socket it listens on.
    pub fn socket_path(&self) -> &Path {
        &self.path
    }

    /// Every Interest received so far, in arrival order.
    pub fn received(&self) -> Vec<Interest> {
        self.received.lock().expect("lock").clone()
    }
}

impl Drop for FakeForwarder {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        // Wake the accept loop so it sees the flag.
        let _ = UnixStream::connect(&self.path);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
