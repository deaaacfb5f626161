//! `kite-runtime`: the daemon's threads: the I/O threads that own the faces' sockets and the
//! forwarding threads that own the tables (NDN-DPDK paper, sections 2–3; YaNFD paper, section
//! 3.2), joined by bounded single-producer rings, with zero CPU use when idle.
//!
//! - [`RuntimeConfig::io_threads`] I/O threads each own a disjoint set of faces: stream
//!   connections go to the thread with the fewest faces, each thread has its own UDP
//!   listener on the same address (`SO_REUSEPORT`: the kernel picks a remote's thread),
//!   Ethernet interface i belongs to thread i mod N. Each (I/O thread, forwarding thread)
//!   pair has rings of its own, so every ring keeps one producer and one consumer.
//! - An I/O thread reads its faces in bursts, runs the link service, decodes the forwarder view,
//!   hashes the name once and dispatches: Interests by the Name Dispatch Table, Data and Nacks
//!   by the thread id inside Kite's PIT token (or, without one, to every thread the NDT names
//!   for the Data name's short prefixes). It is also the output stage: it encodes what the
//!   forwarding threads send (LP header with token and congestion mark) and writes each face's
//!   queue with one `writev`/`sendmmsg` per burst.
//! - A forwarding thread takes Data and Nacks before Interests, runs CoDel on each input ring
//!   (marking, not dropping), runs the pipelines, and hands packets to the I/O thread that owns
//!   the destination face (the owner comes with the face's `AddFace`), or to management for
//!   the internal face.
//! - With [`RuntimeConfig::inline_forwarding`] the I/O threads run the forwarding shards
//!   themselves between their reads and writes (shard i on I/O thread i mod N): same rings and
//!   pipelines, no thread hand-off.
//! - Management (a layer above) reaches the threads through [`RuntimeHandle`]: control messages
//!   that create and destroy faces, read counters, and carry the internal face's packets.
//!
//! Every thread spins briefly on empty polls, then parks (a futex for forwarding threads,
//! `epoll_wait` for the I/O thread) after announcing it sleeps; producers wake a thread only when
//! it announced that. See docs/architecture.md for the measurements behind these choices.

mod affinity;
mod busy;
pub mod codel;
mod dispatch;
mod fwdlog;
mod io;
mod iolog;
pub mod lograte;
pub mod park;
mod share;
mod shm;
mod worker;

use std::path::PathBuf;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use bytes::Bytes;
use crossbeam_channel::{Receiver, Sender};
use kite_face::{FaceConfig, FaceUri, MarkingConfig};
use kite_link::{FaceCounters, Persistency};
use kite_packet::{DataView, PitToken};

pub use busy::{BusyTime, BusyTimes};
use codel::CoDelConfig;
use kite_fw::face::{FaceId, FaceScope, LinkType};
use kite_fw::fib::FibReaderFactory;
use kite_fw::forwarder::{Counters, ForwarderConfig};
use kite_fw::hash::NameHasher;
use kite_fw::ndt::Ndt;
use kite_fw::strategy::StrategyTable;
use kite_fw::time::{MonotonicClock, Time};

/// Everything the threads are started with.
#[derive(Debug, Clone)]
pub struct RuntimeConfig {
    /// Forwarding threads (each owns a PCCT, DNL and timers).
    pub forwarding_threads: u8,
    /// I/O threads (each owns a disjoint set of faces and their sockets), 1 to
    /// [`MAX_IO_THREADS`].
    pub io_threads: u8,
    /// Components of the name prefix the NDT hashes (`usize::MAX`: the whole name).
    pub dispatch_prefix_len: usize,
    /// Slots of each input ring of a forwarding thread (Interest, Data, Nack).
    pub queue_capacity: usize,
    /// CoDel on each input ring.
    pub codel: CoDelConfig,
    /// Packets a forwarding thread takes from its rings per burst.
    pub burst: usize,
    /// Each forwarding thread's tables.
    pub forwarder: ForwarderConfig,
    /// Face settings (queue sizes, UDP MTU, idle timeout).
    pub face: FaceConfig,
    /// Unix stream listener path (NFD's default is `/run/nfd/nfd.sock`).
    pub unix_socket: Option<PathBuf>,
    /// UDP listeners (on-demand faces per remote endpoint).
    pub udp: Vec<std::net::SocketAddr>,
    /// TCP listeners.
    pub tcp: Vec<std::net::SocketAddr>,
    /// WebSocket listeners.
    pub ws: Vec<std::net::SocketAddr>,
    /// Network interfaces with an Ethernet channel (on-demand unicast faces per sender) and a
    /// multicast face on NDN's group.
    pub ether: Vec<String>,
    /// UDP multicast faces: the group, and each interface's name and IPv4 address (a
    /// permanent multi-access face each, as NFD's `face_system.udp.mcast`).
    pub udp_multicast: Vec<(std::net::SocketAddrV4, String, std::net::Ipv4Addr)>,
    /// Never park: threads poll without sleeping (for measuring what parking costs).
    pub spin_when_idle: bool,
    /// The I/O thread runs the forwarding shards itself (run to completion) instead of
    /// handing packets to forwarding threads: no thread hand-off, no wake-up between the
    /// stages. Pays off where cores are fewer than the threads that would be busy (the
    /// forwarder's and its applications'); see docs/architecture.md.
    pub inline_forwarding: bool,
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        RuntimeConfig {
            forwarding_threads: 1,
            io_threads: 1,
            dispatch_prefix_len: 2,
            queue_capacity: 4096,
            codel: CoDelConfig::default(),
            burst: 64,
            forwarder: ForwarderConfig::default(),
            face: FaceConfig::default(),
            unix_socket: None,
            udp: Vec::new(),
            tcp: Vec::new(),
            ws: Vec::new(),
            ether: Vec::new(),
            udp_multicast: Vec::new(),
            spin_when_idle: false,
            inline_forwarding: false,
        }
    }
}

/// Face properties a command may set (NFD `faces/create` and `faces/update`); `None` leaves
/// one as it is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FaceOptions {
    /// Local fields on or off (local faces only).
    pub local_fields: Option<bool>,
    /// MTU of a datagram face.
    pub mtu: Option<usize>,
    /// Congestion marking on or off.
    pub congestion_marking: Option<bool>,
    /// Base congestion marking interval.
    pub base_marking_interval: Option<Duration>,
    /// Congestion threshold, in octets.
    pub congestion_threshold: Option<usize>,
    /// NDNLPv2 LpReliability on or off (UDP and Ethernet unicast faces only).
    pub lp_reliability: Option<bool>,
}

/// What management learns about a face (NFD's FaceStatus without the counters' types).
#[derive(Debug, Clone)]
pub struct FaceStatus {
    /// Id.
    pub id: FaceId,
    /// Remote URI.
    pub remote: FaceUri,
    /// Local URI.
    pub local: FaceUri,
    /// Scope.
    pub scope: FaceScope,
    /// Persistency.
    pub persistency: Persistency,
    /// Link type.
    pub link_type: LinkType,
    /// MTU for datagram faces.
    pub mtu: Option<usize>,
    /// Whether local fields (NextHopFaceId, IncomingFaceId, CachePolicy) are on.
    pub local_fields: bool,
    /// Congestion marking of its output.
    pub marking: MarkingConfig,
    /// Whether NDNLPv2 LpReliability is on.
    pub lp_reliability: bool,
    /// Whether its link is up (false for an Ethernet face whose interface is down, and for a
    /// TCP face whose connection is lost).
    pub up: bool,
    /// Whether it is dialing its peer again (a lost TCP face, permanent or configured).
    pub reconnecting: bool,
    /// Frames waiting in its output queue (what the socket has not taken yet).
    pub out_queue: usize,
    /// Counters.
    pub counters: FaceCounters,
}

/// A face came or went (NFD's face event notifications).
#[derive(Debug, Clone)]
pub enum FaceEvent {
    /// A face was created (by a listener or a command).
    Created(FaceStatus),
    /// A face was destroyed (closed by the peer, an error, idleness or a command).
    Destroyed(FaceStatus),
    /// A face's link came back up (an Ethernet interface up and running again).
    Up(FaceStatus),
    /// A face's link went down (its Ethernet interface went down or lost its carrier).
    Down(FaceStatus),
}

/// Why a face command failed, in NFD's terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FaceCommandError {
    /// No such face (404 / 410).
    NotFound,
    /// A face for this remote exists (409), with its id.
    Exists(FaceId),
    /// The URI scheme or options are not supported (406).
    Unsupported(String),
    /// Connecting failed (504).
    ConnectFailed(String),
}

/// Where the I/O thread answers a face creation, with the tag the request carried: at once,
/// or once an outgoing connection completes, fails or times out (the I/O thread never waits
/// on the network).
pub type CreateReply = Sender<(u64, Result<FaceStatus, FaceCommandError>)>;

/// A command for the I/O thread.
#[derive(Debug)]
pub(crate) enum IoCommand {
    /// A face another I/O thread accepted (a stream connection) for this one to own: the
    /// accepting thread counted it in this thread's load already.
    Adopt(Box<kite_face::Face>),
    /// A face another I/O thread hands over because the shards its packets go to run here
    /// (see `affinity`): counted in this thread's load already, known to management.
    Migrate(Box<kite_face::Face>),
    /// A shard's output for a face that moved here, sent to its former owner before the
    /// shard learnt of the move.
    Output(kite_fw::out::Out),
    Create {
        remote: FaceUri,
        local: Option<FaceUri>,
        persistency: Persistency,
        options: FaceOptions,
        /// Made at once, its connection (TCP) dialed in the background and redialed while
        /// the face is permanent: for the configuration file's faces.
        background: bool,
        tag: u64,
        reply: CreateReply,
    },
    Update {
        id: FaceId,
        persistency: Option<Persistency>,
        options: FaceOptions,
        reply: Sender<Result<FaceStatus, FaceCommandError>>,
    },
    Destroy {
        id: FaceId,
        reply: Sender<Option<FaceStatus>>,
    },
    /// A face its listener (on another I/O thread) gave up for a new connection: closed by
    /// the thread that owns it, ignored by the others.
    Evict(FaceId),
    List {
        reply: Sender<Vec<FaceStatus>>,
    },
    Channels {
        reply: Sender<Vec<kite_face::ChannelStatus>>,
    },
    Shutdown,
}

/// A command for a forwarding thread.
pub(crate) enum FwCommand {
    /// A face, and the I/O thread that owns it (where its output goes).
    AddFace(FaceId, kite_fw::strategy::FaceInfo, u8),
    RemoveFace(FaceId),
    /// A Data management sends out of the internal face, with the token it echoes.
    InternalData(DataView, Option<PitToken>),
    SetCs {
        capacity: Option<usize>,
        admit: Option<bool>,
        serve: Option<bool>,
    },
    /// A configuration reload's CS settings that `cs/config` does not carry.
    SetCsPolicy {
        bytes: Option<usize>,
        unsolicited: Option<kite_fw::forwarder::UnsolicitedPolicy>,
    },
    Counters(Sender<ThreadCounters>),
    CsErase(kite_packet::Name, usize, Sender<usize>),
    Shutdown,
}

/// An Interest forwarded to management through the internal face, with the token to echo on
/// the answer and the face it came from (for FaceId 0 in commands).
#[derive(Debug, Clone)]
pub struct InternalInterest {
    /// The Interest's octets as forwarded, decoded once, by management, off the forwarding
    /// threads.
    pub wire: Bytes,
    /// The token to echo on the answer.
    pub token: PitToken,
    /// The face it arrived on.
    pub ingress: FaceId,
}

/// What one forwarding thread reports.
#[derive(Debug, Clone, Default)]
pub struct ThreadCounters {
    /// The pipelines' counters.
    pub forwarder: Counters,
    /// PIT entries.
    pub pit_entries: usize,
    /// CS entries.
    pub cs_entries: usize,
    /// CS capacity.
    pub cs_capacity: usize,
    /// Whether the CS admits and serves.
    pub cs_admit: bool,
    /// Whether the CS serves.
    pub cs_serve: bool,
    /// Packets CoDel marked.
    pub codel_marked: u64,
    /// Packets dropped on the way out: the I/O thread's ring was full or the face was gone.
    pub queue_dropped: u64,
    /// Packets waiting in each of its rings now.
    pub queues: QueueDepths,
}

/// Packets waiting in a forwarding thread's rings, and each ring's slots.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QueueDepths {
    /// `/localhost` Interests from local faces (management's ring).
    pub local: RingDepth,
    /// Interests.
    pub interests: RingDepth,
    /// Data.
    pub data: RingDepth,
    /// Nacks.
    pub nacks: RingDepth,
    /// Packets this thread sent toward the I/O thread's output stage.
    pub output: RingDepth,
}

/// One ring's occupancy.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RingDepth {
    /// Packets waiting.
    pub len: usize,
    /// Slots.
    pub capacity: usize,
}

/// The most I/O threads: a forwarding thread marks the I/O threads to wake in one u64.
pub const MAX_IO_THREADS: u8 = 64;

/// Management's grip on the running threads.
#[derive(Clone)]
pub struct RuntimeHandle {
    /// Each I/O thread's commands and waker, in thread order.
    io: Vec<(Sender<IoCommand>, Arc<mio::Waker>)>,
    /// Faces each I/O thread owns (management creates a face on the least loaded one).
    loads: Arc<[std::sync::atomic::AtomicUsize]>,
    /// The Ethernet interfaces, in configuration order (interface i is I/O thread i mod N's).
    ether: Vec<String>,
    fwd: Vec<(Sender<FwCommand>, park::Waker)>,
    internal_rx: Receiver<InternalInterest>,
    events: Receiver<FaceEvent>,
    hasher: NameHasher,
    ndt: Arc<Ndt>,
    clock: MonotonicClock,
    /// Each I/O thread's busy time, then each shard's.
    io_busy: Vec<Arc<BusyTime>>,
    shard_busy: Vec<Arc<BusyTime>>,
    inline: bool,
}

/// The running forwarder.
pub struct Runtime {
    handle: RuntimeHandle,
    threads: Vec<JoinHandle<()>>,
}

/// Why the forwarder could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// A listener could not be opened.
    #[error(transparent)]
    Listen(#[from] kite_face::ListenError),
    /// An Ethernet interface could not be opened.
    #[error(transparent)]
    Ether(#[from] kite_face::EtherError),
    /// A socket or thread could not be created.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The configuration is inconsistent.
    #[error("{0}")]
    Config(String),
}

impl Runtime {
    /// Opens the listeners and starts the threads.
    pub fn start(
        config: RuntimeConfig,
        fib: FibReaderFactory,
        strategies: StrategyTable,
        hasher: NameHasher,
    ) -> Result<Runtime, StartError> {
        if config.forwarding_threads == 0 || config.forwarding_threads > 64 {
            // 64: the dispatcher tracks the threads to wake in one u64.
            return Err(StartError::Config(
                "between 1 and 64 forwarding threads".into(),
            ));
        }
        if config.queue_capacity == 0 || config.burst == 0 {
            return Err(StartError::Config(
                "queue capacity and burst must be at least 1".into(),
            ));
        }
        if config.io_threads == 0 || config.io_threads > MAX_IO_THREADS {
            return Err(StartError::Config(format!(
                "between 1 and {MAX_IO_THREADS} I/O threads"
            )));
        }
        let clock = MonotonicClock::new();
        let n = usize::from(config.forwarding_threads);
        let m = usize::from(config.io_threads);
        let ndt = Arc::new(Ndt::new(
            16,
            config.forwarding_threads,
            config.dispatch_prefix_len,
        ));
        // With several shards, each needs the table to tell which of them a Data belongs to.
        let mut config = config;
        if n > 1 {
            config.forwarder.shards = Some(Arc::new(kite_fw::ndt::ShardSet::new(ndt.clone())));
        }
        let (internal_tx, internal_rx) = crossbeam_channel::unbounded();
        let (event_tx, event_rx) = crossbeam_channel::unbounded();
        // Listeners first: a port in use fails the start before any thread runs.
        let mut owned = io::open_listeners(&config, m)?;

        // Per I/O thread: its poll, waker, sleep flag and commands.
        let mut polls = Vec::with_capacity(m);
        let mut io = Vec::with_capacity(m);
        let mut io_rx = Vec::with_capacity(m);
        let mut io_sleep = Vec::with_capacity(m);
        for _ in 0..m {
            let poll = mio::Poll::new()?;
            let waker = Arc::new(mio::Waker::new(poll.registry(), io::WAKE_TOKEN)?);
            let (tx, rx) = crossbeam_channel::unbounded();
            polls.push(poll);
            io.push((tx, waker));
            io_rx.push(rx);
            io_sleep.push(Arc::new(park::SleepFlag::default()));
        }

        // Rings: each (I/O thread k, forwarding thread t) pair has its own input rings
        // (k produces, t consumes) and its own output ring (t produces, k consumes).
        let mut to_fwd: Vec<Vec<dispatch::Inputs>> = (0..m).map(|_| Vec::new()).collect();
        let mut from_fwd: Vec<Vec<rtrb::Consumer<kite_fw::out::Out>>> =
            (0..m).map(|_| Vec::new()).collect();
        let mut fwd_inputs = Vec::with_capacity(n);
        let mut fwd_outputs = Vec::with_capacity(n);
        for _ in 0..n {
            let mut inputs = Vec::with_capacity(m);
            let mut outputs = Vec::with_capacity(m);
            for k in 0..m {
                let (p, c) = dispatch::rings(config.queue_capacity);
                to_fwd[k].push(p);
                inputs.push(c);
                let (p, c) = rtrb::RingBuffer::new(config.queue_capacity * 2);
                let wake = worker::IoWake {
                    waker: io[k].1.clone(),
                    sleep: io_sleep[k].clone(),
                };
                outputs.push((p, wake));
                from_fwd[k].push(c);
            }
            fwd_inputs.push(inputs);
            fwd_outputs.push(outputs);
        }

        let mut threads = Vec::new();
        let mut fwd = Vec::with_capacity(n);
        // Inline forwarding: shard i runs on I/O thread i mod m.
        let mut shards: Vec<Vec<worker::Worker>> = (0..m).map(|_| Vec::new()).collect();
        let mut shard_busy = Vec::with_capacity(n);
        let (ready_tx, ready_rx) = crossbeam_channel::bounded(n);
        for (i, (inputs, outs)) in fwd_inputs.into_iter().zip(fwd_outputs).enumerate() {
            let (cmd_tx, cmd_rx) = crossbeam_channel::unbounded();
            let busy = Arc::new(BusyTime::default());
            shard_busy.push(busy.clone());
            let worker = worker::Worker::new(
                i as u8,
                &config,
                fib.reader(),
                strategies.clone(),
                hasher,
                clock,
                inputs,
                outs,
                cmd_rx,
                internal_tx.clone(),
                busy,
            );
            if config.inline_forwarding {
                // Run by an I/O thread: whoever feeds the shard wakes that thread.
                let k = i % m;
                let _ = ready_tx.send((
                    i as u8,
                    park::Waker::for_poll(io_sleep[k].clone(), io[k].1.clone()),
                ));
                shards[k].push(worker);
            } else {
                let ready = ready_tx.clone();
                threads.push(
                    std::thread::Builder::new()
                        .name(format!("kite-fwd{i}"))
                        .spawn(move || worker.run(ready))?,
                );
            }
            fwd.push(cmd_tx);
        }
        let mut wakers = Vec::with_capacity(n);
        for _ in 0..n {
            wakers.push(
                ready_rx.recv().map_err(|_| {
                    StartError::Config("a forwarding thread exited at start".into())
                })?,
            );
        }
        // `ready` carries (thread index, waker): put them in thread order.
        wakers.sort_by_key(|(i, _)| *i);
        let fwd: Vec<_> = fwd
            .into_iter()
            .zip(wakers)
            .map(|(tx, (_, w))| (tx, w))
            .collect();

        let inline = config.inline_forwarding;
        let loads: Arc<[std::sync::atomic::AtomicUsize]> = (0..m)
            .map(|_| std::sync::atomic::AtomicUsize::new(0))
            .collect();
        let ids = kite_link::FaceIds::new();
        let mut io_busy = Vec::with_capacity(m);
        let mut io_threads = Vec::with_capacity(m);
        let parts = polls
            .into_iter()
            .zip(io_rx)
            .zip(io_sleep)
            .zip(to_fwd.into_iter().zip(from_fwd))
            .zip(shards);
        for (k, ((((poll, rx), sleep), (to_fwd, from_fwd)), shards)) in parts.enumerate() {
            let busy = Arc::new(BusyTime::default());
            io_busy.push(busy.clone());
            let dispatcher = dispatch::Dispatcher::new(
                hasher,
                ndt.clone(),
                to_fwd,
                fwd.iter().map(|(_, w)| w.clone()).collect(),
                clock,
                affinity::Affinity::new(k, m, inline),
            );
            io_threads.push(io::IoThread::new(
                &config,
                io::Place {
                    index: k,
                    peers: io.clone(),
                    loads: loads.clone(),
                    ids: ids.clone(),
                },
                owned.remove(0),
                poll,
                sleep,
                rx,
                dispatcher,
                from_fwd,
                fwd.iter().map(|(tx, w)| (tx.clone(), w.clone())).collect(),
                shards,
                event_tx.clone(),
                busy,
            )?);
        }
        for (k, t) in io_threads.into_iter().enumerate() {
            // One thread keeps the name it always had; more are numbered.
            let name = match m {
                1 => "kite-io".to_string(),
                _ => format!("kite-io{k}"),
            };
            threads.push(
                std::thread::Builder::new()
                    .name(name)
                    .spawn(move || t.run())?,
            );
        }
        Ok(Runtime {
            handle: RuntimeHandle {
                io,
                loads,
                ether: config.ether.clone(),
                fwd,
                internal_rx,
                events: event_rx,
                hasher,
                ndt,
                clock,
                io_busy,
                shard_busy,
                inline,
            },
            threads,
        })
    }

    /// Management's handle.
    pub fn handle(&self) -> RuntimeHandle {
        self.handle.clone()
    }

    /// Stops every thread and waits for them.
    pub fn shutdown(self) {
        for (tx, w) in &self.handle.fwd {
            let _ = tx.send(FwCommand::Shutdown);
            w.wake();
        }
        for (tx, waker) in &self.handle.io {
            let _ = tx.send(IoCommand::Shutdown);
            let _ = waker.wake();
        }
        for t in self.threads {
            let _ = t.join();
        }
    }
}

/// How long management waits for a thread to answer a command.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(10);

impl RuntimeHandle {
    /// Asks I/O thread `k` and waits for its answer.
    fn io_request<T>(&self, k: usize, make: impl FnOnce(Sender<T>) -> IoCommand) -> Option<T> {
        let (tx, rx) = crossbeam_channel::bounded(1);
        let (io, waker) = &self.io[k];
        io.send(make(tx)).ok()?;
        let _ = waker.wake();
        rx.recv_timeout(COMMAND_TIMEOUT).ok()
    }

    /// Sends a command to I/O thread `k`; false when the thread is gone.
    fn io_send(&self, k: usize, cmd: IoCommand) -> bool {
        let (io, waker) = &self.io[k];
        let sent = io.send(cmd).is_ok();
        let _ = waker.wake();
        sent
    }

    /// The I/O thread a new face to `remote` (from `local`) goes to: an Ethernet face to
    /// the thread of its interface, any other to the thread with the fewest faces.
    fn io_for(&self, remote: &FaceUri, local: Option<&FaceUri>) -> usize {
        let m = self.io.len();
        if m == 1 {
            return 0;
        }
        if let (FaceUri::Ether(_), Some(FaceUri::Dev(iface))) = (remote, local) {
            if let Some(i) = self.ether.iter().position(|e| e == iface) {
                return i % m;
            }
        }
        io::least_loaded(&self.loads)
    }

    /// With several I/O threads, the face to `remote` that one of them owns already (each
    /// thread knows its own faces only); `None` with one thread, which checks by itself.
    fn existing(&self, remote: &FaceUri) -> Option<FaceId> {
        if self.io.len() == 1 || matches!(remote, FaceUri::Ether(_)) {
            return None;
        }
        self.faces()
            .into_iter()
            .find(|f| f.remote == *remote)
            .map(|f| f.id)
    }

    /// Creates a face to `remote`, from `local` when given (NFD `faces/create`; Ethernet faces
    /// name their interface as `dev://ifname`), and waits for the outcome (an outgoing TCP
    /// connection may take up to `kite_face::tcp::CONNECT_TIMEOUT`).
    pub fn create_face(
        &self,
        remote: FaceUri,
        local: Option<FaceUri>,
        persistency: Persistency,
        options: FaceOptions,
    ) -> Result<FaceStatus, FaceCommandError> {
        let (tx, rx) = crossbeam_channel::bounded(1);
        self.start_create_face(remote, local, persistency, options, 0, &tx);
        rx.recv_timeout(COMMAND_TIMEOUT)
            .map(|(_, r)| r)
            .unwrap_or_else(|_| Err(FaceCommandError::ConnectFailed("forwarder stopping".into())))
    }

    /// Creates a face as [`RuntimeHandle::create_face`] does, but answers at once: a TCP face
    /// starts down and dials its peer in the background (a permanent one dials again, with
    /// backoff, whenever its connection is lost; a persistent one is destroyed when its first
    /// dial fails). The configuration file's faces are made so, so that a peer that is down
    /// neither fails nor delays the daemon's start or reload.
    pub fn create_face_in_background(
        &self,
        remote: FaceUri,
        local: Option<FaceUri>,
        persistency: Persistency,
        options: FaceOptions,
    ) -> Result<FaceStatus, FaceCommandError> {
        if let Some(id) = self.existing(&remote) {
            return Err(FaceCommandError::Exists(id));
        }
        let (tx, rx) = crossbeam_channel::bounded(1);
        let k = self.io_for(&remote, local.as_ref());
        let cmd = IoCommand::Create {
            remote,
            local,
            persistency,
            options,
            background: true,
            tag: 0,
            reply: tx,
        };
        let stopping = || Err(FaceCommandError::ConnectFailed("forwarder stopping".into()));
        if !self.io_send(k, cmd) {
            return stopping();
        }
        rx.recv_timeout(COMMAND_TIMEOUT)
            .map(|(_, r)| r)
            .unwrap_or_else(|_| stopping())
    }

    /// Asks for a face as [`RuntimeHandle::create_face`] does, without waiting: the outcome
    /// comes on `reply` with `tag`.
    pub fn start_create_face(
        &self,
        remote: FaceUri,
        local: Option<FaceUri>,
        persistency: Persistency,
        options: FaceOptions,
        tag: u64,
        reply: &CreateReply,
    ) {
        if let Some(id) = self.existing(&remote) {
            let _ = reply.send((tag, Err(FaceCommandError::Exists(id))));
            return;
        }
        let k = self.io_for(&remote, local.as_ref());
        let cmd = IoCommand::Create {
            remote,
            local,
            persistency,
            options,
            background: false,
            tag,
            reply: reply.clone(),
        };
        if !self.io_send(k, cmd) {
            let stopping = FaceCommandError::ConnectFailed("forwarder stopping".into());
            let _ = reply.send((tag, Err(stopping)));
        }
    }

    /// Changes a face's properties (NFD `faces/update`), asking each I/O thread in turn
    /// until the one that owns the face answers.
    pub fn update_face(
        &self,
        id: FaceId,
        persistency: Option<Persistency>,
        options: FaceOptions,
    ) -> Result<FaceStatus, FaceCommandError> {
        for k in 0..self.io.len() {
            let r = self.io_request(k, |reply| IoCommand::Update {
                id,
                persistency,
                options,
                reply,
            });
            match r {
                Some(Err(FaceCommandError::NotFound)) | None => continue,
                Some(r) => return r,
            }
        }
        Err(FaceCommandError::NotFound)
    }

    /// Destroys a face; `None` when there was none with that id.
    pub fn destroy_face(&self, id: FaceId) -> Option<FaceStatus> {
        (0..self.io.len())
            .find_map(|k| self.io_request(k, |reply| IoCommand::Destroy { id, reply })?)
    }

    /// Every face with its counters (NFD `faces/list`), gathered from every I/O thread.
    pub fn faces(&self) -> Vec<FaceStatus> {
        let mut all: Vec<FaceStatus> = (0..self.io.len())
            .filter_map(|k| self.io_request(k, |reply| IoCommand::List { reply }))
            .flatten()
            .collect();
        all.sort_by_key(|s| s.id);
        all
    }

    /// The listeners' local URIs and drop counters (NFD `faces/channels`). A UDP listener
    /// each I/O thread has on the same address is one channel, its counters summed.
    pub fn channels(&self) -> Vec<kite_face::ChannelStatus> {
        let mut all: Vec<kite_face::ChannelStatus> = Vec::new();
        let each = (0..self.io.len())
            .filter_map(|k| self.io_request(k, |reply| IoCommand::Channels { reply }))
            .flatten();
        for c in each {
            match all.iter_mut().find(|a| a.local == c.local) {
                Some(a) => {
                    for &t in kite_link::ChannelCounters::TYPES {
                        if let (Some(x), Some(y)) = (a.counters.get_mut(t), c.counters.get(t)) {
                            *x += y;
                        }
                    }
                }
                None => all.push(c),
            }
        }
        all
    }

    /// Each forwarding thread's counters.
    pub fn thread_counters(&self) -> Vec<ThreadCounters> {
        self.fwd
            .iter()
            .filter_map(|(tx, w)| {
                let (reply, rx) = crossbeam_channel::bounded(1);
                tx.send(FwCommand::Counters(reply)).ok()?;
                w.wake();
                rx.recv_timeout(COMMAND_TIMEOUT).ok()
            })
            .collect()
    }

    /// Sets the CS capacity (split evenly over the threads) and flags (NFD `cs/config`).
    pub fn set_cs(&self, capacity: Option<usize>, admit: Option<bool>, serve: Option<bool>) {
        let n = self.fwd.len();
        for (tx, w) in &self.fwd {
            let _ = tx.send(FwCommand::SetCs {
                capacity: capacity.map(|c| c.div_ceil(n)),
                admit,
                serve,
            });
            w.wake();
        }
    }

    /// Sets the CS capacity in octets (split evenly over the threads) and the unsolicited-Data
    /// policy, which NFD's `cs/config` does not carry (a configuration reload).
    pub fn set_cs_policy(
        &self,
        bytes: Option<usize>,
        unsolicited: Option<kite_fw::forwarder::UnsolicitedPolicy>,
    ) {
        let n = self.fwd.len();
        for (tx, w) in &self.fwd {
            let _ = tx.send(FwCommand::SetCsPolicy {
                bytes: bytes.map(|b| b.div_ceil(n)),
                unsolicited,
            });
            w.wake();
        }
    }

    /// Erases up to `limit` cached Data under `prefix` across the threads; returns how many.
    pub fn cs_erase(&self, prefix: &kite_packet::Name, limit: usize) -> usize {
        let mut erased = 0;
        for (tx, w) in &self.fwd {
            if erased == limit {
                break;
            }
            let (reply, rx) = crossbeam_channel::bounded(1);
            if tx
                .send(FwCommand::CsErase(prefix.clone(), limit - erased, reply))
                .is_err()
            {
                continue;
            }
            w.wake();
            erased += rx.recv_timeout(COMMAND_TIMEOUT).unwrap_or(0);
        }
        erased
    }

    /// Interests forwarded to the internal face (management's requests).
    pub fn internal_packets(&self) -> &Receiver<InternalInterest> {
        &self.internal_rx
    }

    /// Face events, in order.
    pub fn face_events(&self) -> &Receiver<FaceEvent> {
        &self.events
    }

    /// Sends a Data out of the internal face (management's answer) by the rule the I/O thread
    /// dispatches Data by (`dispatch::token_thread`).
    pub fn send_internal_data(&self, data: DataView, token: Option<PitToken>) {
        let threads: Vec<usize> = match dispatch::token_thread(token.as_ref(), self.fwd.len()) {
            Some(t) => vec![t],
            None => {
                let hashes = self.hasher.prefix_hashes(&data.name);
                self.ndt
                    .threads_for_data(&hashes)
                    .into_iter()
                    .map(usize::from)
                    .collect()
            }
        };
        for t in threads {
            let (tx, w) = &self.fwd[t];
            let _ = tx.send(FwCommand::InternalData(data.clone(), token));
            w.wake();
        }
    }

    /// How long the I/O threads and each forwarding shard have spent working, and the faces
    /// each I/O thread owns: read from their counters directly, without asking the threads.
    pub fn busy_times(&self) -> BusyTimes {
        let io_threads: Vec<Duration> = self.io_busy.iter().map(|b| b.get()).collect();
        BusyTimes {
            io: io_threads.iter().sum(),
            io_threads,
            io_faces: (self.loads.iter())
                .map(|l| l.load(std::sync::atomic::Ordering::Relaxed))
                .collect(),
            shards: self.shard_busy.iter().map(|b| b.get()).collect(),
            inline: self.inline,
        }
    }

    /// The forwarder's clock (for management's timestamps and expiry).
    pub fn now(&self) -> Time {
        use kite_fw::time::Clock;
        self.clock.now()
    }
}
