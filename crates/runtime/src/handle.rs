//! [`RuntimeHandle`]: management's grip on the running threads.

use std::sync::Arc;
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender};
use kite_face::FaceUri;
use kite_fw::face::FaceId;
use kite_fw::hash::NameHasher;
use kite_fw::ndt::Ndt;
use kite_fw::time::{MonotonicClock, Time};
use kite_link::Persistency;
use kite_packet::{DataView, PitToken};

use crate::command::CreateRequest;
use crate::{
    dispatch, io, park, BusyTime, BusyTimes, CreateReply, FaceCommandError, FaceEvent, FaceOptions,
    FaceStatus, FwCommand, InternalInterest, IoCommand, ThreadCounters,
};

/// Management's grip on the running threads.
#[derive(Clone)]
pub struct RuntimeHandle {
    /// Each I/O thread's commands and waker, in thread order.
    pub(crate) io: Vec<(Sender<IoCommand>, Arc<mio::Waker>)>,
    /// Faces each I/O thread owns (management creates a face on the least loaded one).
    pub(crate) loads: Arc<[std::sync::atomic::AtomicUsize]>,
    /// The Ethernet interfaces, in configuration order, each with its I/O thread.
    pub(crate) ether: Vec<(String, usize)>,
    /// The I/O thread that holds every UDP listener, when one does (with AF_XDP).
    pub(crate) udp_thread: Option<usize>,
    pub(crate) fwd: Vec<(Sender<FwCommand>, park::Waker)>,
    pub(crate) internal_rx: Receiver<InternalInterest>,
    pub(crate) events: Receiver<FaceEvent>,
    pub(crate) hasher: NameHasher,
    pub(crate) ndt: Arc<Ndt>,
    pub(crate) clock: MonotonicClock,
    /// Each I/O thread's busy time, then each shard's.
    pub(crate) io_busy: Vec<Arc<BusyTime>>,
    /// Each I/O thread's packets for shards other I/O threads run.
    pub(crate) io_crossed: Vec<Arc<dispatch::Crossed>>,
    pub(crate) shard_busy: Vec<Arc<BusyTime>>,
    pub(crate) inline: bool,
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
    /// the thread of its interface, a UDP face to the thread of the UDP listeners when one
    /// holds them all, any other to the thread with the fewest faces.
    fn io_for(&self, remote: &FaceUri, local: Option<&FaceUri>) -> usize {
        let m = self.io.len();
        if m == 1 {
            return 0;
        }
        if let (FaceUri::Ether(_), Some(FaceUri::Dev(iface))) = (remote, local) {
            if let Some((_, k)) = self.ether.iter().find(|(e, _)| e == iface) {
                return *k;
            }
        }
        if let (FaceUri::Udp(_), Some(k)) = (remote, self.udp_thread) {
            return k;
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
        self.create_and_wait(remote, local, persistency, options, false)
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
        self.create_and_wait(remote, local, persistency, options, true)
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
        let request = CreateRequest {
            persistency,
            options,
            tag,
            reply: reply.clone(),
        };
        self.send_create(remote, local, false, request);
    }

    /// Asks for a face and waits for the outcome.
    fn create_and_wait(
        &self,
        remote: FaceUri,
        local: Option<FaceUri>,
        persistency: Persistency,
        options: FaceOptions,
        background: bool,
    ) -> Result<FaceStatus, FaceCommandError> {
        let (reply, rx) = crossbeam_channel::bounded(1);
        let request = CreateRequest {
            persistency,
            options,
            tag: 0,
            reply,
        };
        self.send_create(remote, local, background, request);
        rx.recv_timeout(COMMAND_TIMEOUT)
            .map(|(_, r)| r)
            .unwrap_or_else(|_| Err(stopping()))
    }

    /// Sends the I/O thread that is to own the face the command to create it, or answers
    /// `request` at once when the face exists or the thread is gone.
    fn send_create(
        &self,
        remote: FaceUri,
        local: Option<FaceUri>,
        background: bool,
        request: CreateRequest,
    ) {
        if let Some(id) = self.existing(&remote) {
            return request.answer(Err(FaceCommandError::Exists(id)));
        }
        let k = self.io_for(&remote, local.as_ref());
        let (tag, reply) = (request.tag, request.reply.clone());
        let cmd = IoCommand::Create {
            remote,
            local,
            background,
            request,
        };
        if !self.io_send(k, cmd) {
            let _ = reply.send((tag, Err(stopping())));
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
                    if let (Some(x), Some(y)) = (&mut a.xdp, c.xdp) {
                        x.ndn += y.ndn;
                        x.passed += y.passed;
                        x.runt += y.runt;
                        x.udp += y.udp;
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
            io_crossed: self.io_crossed.iter().map(|c| c.get()).collect(),
            inline: self.inline,
        }
    }

    /// The forwarder's clock (for management's timestamps and expiry).
    pub fn now(&self) -> Time {
        use kite_fw::time::Clock;
        self.clock.now()
    }
}

/// What a face command gets when the thread that was to carry it out is gone.
fn stopping() -> FaceCommandError {
    FaceCommandError::ConnectFailed("forwarder stopping".into())
}
