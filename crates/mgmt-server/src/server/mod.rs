//! The management thread of `kite run`: NFD's management protocol served on the forwarder's
//! internal face (FaceId 1, route `/localhost/nfd`). It owns the FIB writer and the RIB, turns
//! commands into face, FIB, strategy and CS changes, answers status datasets, and posts face
//! events. Commands reach it only through the forwarder, whose scope rule keeps
//! `/localhost/nfd` to local faces (unix sockets, loopback); each is then authorized by its
//! module's validator ([`crate::authorize`]), a command waiting while a certificate it
//! needs is fetched.

mod certs;
mod commands;
mod log;
mod readvertise;
mod snapshot;
mod status;
mod strategy_load;

pub use certs::{
    CertificateRequest, CertificateResult, CERT_QUEUE, CERT_WAIT_MS, MAX_WAITING,
    MAX_WAITING_PER_FACE,
};
pub use commands::MAX_LOCALHOP_ROUTES;
pub use readvertise::{
    ReadvertiseDestination, ReadvertiseRequest, ReadvertiseResult, REQUEST_QUEUE,
};
pub use snapshot::{Snapshot, StatusSource, Tables};
pub use strategy_load::StrategyLoader;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crossbeam_channel::{select, Receiver, Sender};
use kite_fw::face::FaceId;
use kite_fw::fib::FibWriter;
use kite_fw::strategy::StrategyTable;
use kite_packet::{DataView, Interest, Name, OwnedComponent, PitToken};
use kite_runtime::{
    CreateReply, FaceCommandError, FaceEvent, FaceStatus, InternalInterest, RuntimeHandle,
};

use crate::authorize::Authorizer;
use crate::rib::Rib;
use crate::storage::Storage;
use commands::Outcome;
use kite_mgmt_proto::dataset::{self, DatasetRequest, NotificationStream};
use kite_mgmt_proto::nfd::FaceEventKind;
use kite_mgmt_proto::{parse_command, FaceEventNotification, Tlv};

/// Work another thread hands the management thread, run between two commands with the
/// manager itself: the daemon's configuration reload (which changes faces, routes and
/// strategies as commands would) and the metrics endpoint's snapshots. A job that must answer
/// carries its own reply channel.
pub type Job = Box<dyn FnOnce(&mut Manager) + Send>;

/// Jobs that may wait for the management thread at once: what other threads can queue on it.
/// A sender that must not wait (the metrics endpoint) gives up when the queue is full.
pub const JOB_QUEUE: usize = 4;

/// The management thread's state.
pub struct Manager {
    runtime: RuntimeHandle,
    fib: FibWriter,
    strategies: StrategyTable,
    /// Turns a program file into a strategy (`kite-strategy/load`); none: not supported.
    loader: Option<StrategyLoader>,
    rib: Rib,
    /// Who may send which command.
    authorizer: Authorizer,
    storage: Storage,
    events: NotificationStream,
    /// Faces known from face events, with their last status.
    faces: std::collections::HashMap<FaceId, kite_runtime::FaceStatus>,
    /// Where the I/O thread answers `faces/create`, tagged.
    created_tx: CreateReply,
    created_rx: Receiver<(u64, Result<FaceStatus, FaceCommandError>)>,
    /// The `faces/create` commands waiting for the I/O thread, by tag: the command's name
    /// and the token to answer with. At most the I/O thread's connections in progress wait
    /// (it answers every other request at once), and each for a bounded time.
    creating: std::collections::HashMap<u64, Creating>,
    next_tag: u64,
    /// Work handed over by [`Manager::jobs`]'s senders and [`StatusSource`]s, at most
    /// [`JOB_QUEUE`] waiting; the sender is kept to hand out.
    jobs_tx: crossbeam_channel::Sender<Job>,
    jobs_rx: Receiver<Job>,
    /// The last dataset version published.
    last_version: u64,
    start_unix_ms: u64,
    /// Where RIB routes are readvertised (none unless enabled).
    readvertise: Vec<readvertise::Destination>,
    /// The readvertise client's requests, once one destination is enabled.
    readvertise_requests: Option<Sender<ReadvertiseRequest>>,
    /// Where the readvertise client reports back, and where management reads it.
    readvertise_results: (Sender<ReadvertiseResult>, Receiver<ReadvertiseResult>),
    /// The budget of command log lines (a local application may send commands at will).
    log: kite_runtime::lograte::LineBudget,
    /// Where certificates are asked for (none: a command needing one is refused).
    cert_requests: Option<Sender<CertificateRequest>>,
    /// Where the fetcher reports, and where management reads it.
    cert_results: (Sender<CertificateResult>, Receiver<CertificateResult>),
    /// Commands waiting for a certificate, by request id (at most [`MAX_WAITING`]).
    cert_waiting: std::collections::HashMap<u64, certs::WaitingCommand>,
    /// The certificates this daemon serves (its propagation key's and their issuers').
    served: Vec<certs::Served>,
}

/// A `faces/create` waiting for the I/O thread: what to answer and what to log.
struct Creating {
    name: Name,
    token: PitToken,
    /// The command's parameters, for its log line.
    params: String,
    /// The face it came from.
    ingress: FaceId,
}

/// Whether `name` is under `/localhost/nfd` or `/localhop/nfd`, the prefixes management
/// answers.
fn under_management(name: &Name) -> bool {
    let generic = |i: usize| {
        name.get(i)
            .filter(|c| c.typ() == kite_packet::tlv_type::GENERIC_NAME_COMPONENT)
            .map(|c| c.value())
    };
    matches!(generic(0), Some(b"localhost" | b"localhop")) && generic(1) == Some(b"nfd")
}

/// Milliseconds since the Unix epoch (NFD's timestamps and command-Interest times).
fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

impl Manager {
    /// Routes `/localhost/nfd` to the internal face and publishes it. Call it before the
    /// runtime opens its listeners, so that an application connecting at once finds
    /// management (not a Nack~NoRoute).
    pub fn route_internal_face(fib: &mut FibWriter) {
        let prefix: Name = "/localhost/nfd".parse().expect("valid name");
        fib.add_nexthop(&prefix, FaceId::INTERNAL, 0)
            .expect("a two-component prefix fits the FIB");
        fib.publish();
    }

    /// Routes `/localhop/nfd` to the internal face too: neighbours may then register routes
    /// toward themselves (`rib/register` and `rib/unregister` only, at most
    /// [`commands::MAX_LOCALHOP_ROUTES`] per face), as NFD's `localhop_security` allows a
    /// host's prefix propagation. Off unless the daemon enables it.
    pub fn route_localhop(fib: &mut FibWriter) {
        let prefix: Name = "/localhop/nfd".parse().expect("valid name");
        fib.add_nexthop(&prefix, FaceId::INTERNAL, 0)
            .expect("a two-component prefix fits the FIB");
        fib.publish();
    }

    /// Takes over the FIB writer, which [`Manager::route_internal_face`] has prepared.
    pub fn new(runtime: RuntimeHandle, fib: FibWriter, strategies: StrategyTable) -> Self {
        let (created_tx, created_rx) = crossbeam_channel::unbounded();
        let (jobs_tx, jobs_rx) = crossbeam_channel::bounded(JOB_QUEUE);
        Manager {
            runtime,
            fib,
            strategies,
            loader: None,
            rib: Rib::new(),
            authorizer: Authorizer::new(),
            storage: Storage::new(),
            events: NotificationStream::face_events(),
            faces: std::collections::HashMap::new(),
            created_tx,
            created_rx,
            creating: std::collections::HashMap::new(),
            next_tag: 0,
            jobs_tx,
            jobs_rx,
            last_version: 0,
            start_unix_ms: unix_ms(),
            log: log::budget(),
            readvertise: Vec::new(),
            readvertise_requests: None,
            readvertise_results: crossbeam_channel::unbounded(),
            cert_requests: None,
            cert_results: crossbeam_channel::unbounded(),
            cert_waiting: std::collections::HashMap::new(),
            served: Vec::new(),
        }
    }

    /// Grants modules as NFD's `authorizations` section does ([`Authorizer::set_grants`]).
    pub fn set_grants(&mut self, grants: Vec<crate::authorize::Grant>) -> Result<(), String> {
        self.authorizer.set_grants(grants)
    }

    /// Sets the `rib` validators' trust schemas (NFD's `localhost_security`,
    /// `localhop_security`, `prefix_announcement_validation`); reads their anchors now.
    pub fn set_rib_security(
        &mut self,
        security: crate::authorize::RibSecurity,
    ) -> Result<(), kite_security::validator::ConfigError> {
        self.authorizer.set_rib_security(security)
    }

    /// Enables `kite-strategy/load` with `loader` (the daemon passes the eBPF loader; the
    /// management crate does not depend on a VM).
    pub fn set_strategy_loader(&mut self, loader: StrategyLoader) {
        self.loader = Some(loader);
    }

    /// Where other threads hand the management thread work ([`Job`]) once it runs.
    pub fn jobs(&self) -> crossbeam_channel::Sender<Job> {
        self.jobs_tx.clone()
    }

    /// Serves until the runtime's channels close (the forwarder stopped).
    pub fn run(mut self) {
        let internal = self.runtime.internal_packets().clone();
        let events = self.runtime.face_events().clone();
        let created = self.created_rx.clone();
        let jobs = self.jobs_rx.clone();
        let readvertised = self.readvertise_results.1.clone();
        let certificates = self.cert_results.1.clone();
        loop {
            let next = [
                self.rib.next_expiry(),
                self.readvertise_next_due(),
                self.next_waiting_deadline(),
            ]
            .into_iter()
            .flatten()
            .min();
            let timeout = next.map_or(Duration::from_secs(3600), |t| {
                Duration::from_millis(t.saturating_sub(self.now_ms()).max(1))
            });
            select! {
                recv(internal) -> i => match i {
                    Ok(i) => self.on_interest(i),
                    Err(_) => return,
                },
                recv(events) -> e => match e {
                    Ok(e) => self.on_face_event(e),
                    Err(_) => return,
                },
                recv(jobs) -> j => {
                    if let Ok(job) = j {
                        job(&mut self);
                    }
                },
                recv(created) -> c => {
                    if let Ok((tag, r)) = c {
                        self.on_face_created(tag, r);
                    }
                },
                recv(readvertised) -> r => {
                    if let Ok(r) = r {
                        self.readvertise_finished(r);
                    }
                },
                recv(certificates) -> r => {
                    if let Ok(r) = r {
                        self.on_certificate(r);
                    }
                },
                default(timeout) => {}
            }
            self.expire_waiting();
            let now = self.now_ms();
            let expired = self.rib.expire(now);
            for (prefix, r) in &expired.routes {
                tracing::info!(%prefix, face = r.face_id, origin = r.origin.0, "route expired");
                self.readvertise_removed(prefix, r.face_id, r.origin, now);
            }
            self.apply(expired.changes);
            self.readvertise_sync(now);
            log::summary(&mut self.log);
        }
    }

    /// Milliseconds on the forwarder's clock (RIB expiry).
    fn now_ms(&self) -> u64 {
        self.runtime.now().as_millis()
    }

    fn on_interest(&mut self, request: InternalInterest) {
        let InternalInterest {
            wire,
            token,
            ingress,
        } = request;
        let Ok(interest) = Interest::decode(wire.clone()) else {
            return;
        };
        if let Some(certificate) = self.served_certificate(&interest) {
            return self.reply(certificate, token);
        }
        let name = interest.name.clone();
        let now = self.now_ms();
        if let Some(request) = dataset::parse_dataset_request(&name) {
            match request {
                DatasetRequest::Generate(ds) => {
                    let payload = self.dataset(&ds);
                    // NFD's version is the wall clock in ms; two versions never share one.
                    let version = unix_ms().max(self.last_version + 1);
                    self.last_version = version;
                    let segments = dataset::segments(&name, version, &payload);
                    let first = segments.first().cloned();
                    // Named as `segments` names them: no need to decode each again.
                    let base = name
                        .clone()
                        .append(OwnedComponent::version(version).as_ref());
                    let named = segments
                        .into_iter()
                        .enumerate()
                        .map(|(i, s)| {
                            let seg = OwnedComponent::segment(i as u64);
                            (base.clone().append(seg.as_ref()), s)
                        })
                        .collect();
                    self.storage.insert_version(named, now);
                    tracing::debug!(%name, version, octets = payload.len(), "dataset published");
                    if let Some(first) = first {
                        self.reply(first, token);
                    }
                }
                DatasetRequest::Reject(resp) => {
                    let (status, text) = (resp.status_code, resp.status_text.as_str());
                    tracing::debug!(%name, status, %text, "dataset request refused");
                    self.reply(dataset::nack_data(&name, &resp), token)
                }
            }
            return;
        }
        // Versioned segments of a published dataset, and posted notifications.
        if let Some(wire) = self.storage.find(&name, interest.can_be_prefix, now) {
            return self.reply(wire, token);
        }
        if self.events.prefix().is_prefix_of(&name) {
            // Served when the next event is posted (the Interest waits in the PIT).
            return;
        }
        if name
            .last()
            .is_some_and(|c| c.as_version().is_some() || c.as_segment().is_some())
        {
            tracing::debug!(%name, "dataset segment not found (expired or never published)");
            return;
        }
        if !under_management(&name) {
            // A route toward the internal face brought it: NFD's management has no handler
            // for it and drops it, unanswered.
            tracing::debug!(%name, ingress = ingress.0, "Interest for the internal face dropped: not management's");
            return;
        }
        let cmd = match parse_command(&interest) {
            Ok(cmd) => cmd,
            Err(e) => return log::malformed(&mut self.log, &name, ingress.0, &e.to_string()),
        };
        let decision = self.authorizer.authorize(&cmd, &wire, ingress.0, unix_ms());
        self.decided(decision, cmd, name, token, ingress, now);
    }

    /// Executes an authorized command and answers it (a `faces/create` once the I/O thread
    /// made the face).
    fn execute_and_reply(
        &mut self,
        cmd: kite_mgmt_proto::Command,
        name: Name,
        token: PitToken,
        ingress: FaceId,
        now: u64,
    ) {
        let params = log::parameters(&cmd.params);
        self.take_face_events();
        match self.execute(cmd, ingress, now) {
            Outcome::Done(resp) => self.reply(dataset::response_data(&name, &resp), token),
            Outcome::CreateFace(f) => {
                let tag = self.next_tag;
                self.next_tag += 1;
                let creating = Creating {
                    name,
                    token,
                    params,
                    ingress,
                };
                self.creating.insert(tag, creating);
                self.runtime.start_create_face(
                    f.remote,
                    f.local,
                    f.persistency,
                    f.options,
                    tag,
                    &self.created_tx,
                );
            }
        }
    }

    /// Answers the `faces/create` tagged `tag` now that the I/O thread reported back.
    fn on_face_created(&mut self, tag: u64, r: Result<FaceStatus, FaceCommandError>) {
        let resp = self.face_created(r);
        if let Some(c) = self.creating.remove(&tag) {
            log::executed(&mut self.log, "faces/create", &c.params, c.ingress.0, &resp);
            self.reply(dataset::response_data(&c.name, &resp), c.token);
        }
    }

    fn reply(&self, wire: bytes::Bytes, token: PitToken) {
        if let Ok(d) = DataView::decode(wire) {
            self.runtime.send_internal_data(d, Some(token));
        }
    }

    /// Handles the face events already queued. The I/O thread reports a face before it
    /// reads the face's first packet, so after this every face a command can name is known
    /// (the select in [`Manager::run`] may otherwise take the command first).
    fn take_face_events(&mut self) {
        while let Ok(e) = self.runtime.face_events().try_recv() {
            self.on_face_event(e);
        }
    }

    fn on_face_event(&mut self, e: FaceEvent) {
        let (kind, status) = match e {
            FaceEvent::Created(s) => {
                self.faces.insert(s.id, s.clone());
                (FaceEventKind::CREATED, s)
            }
            FaceEvent::Destroyed(s) => {
                self.faces.remove(&s.id);
                let now = self.now_ms();
                let gone: Vec<(Name, kite_mgmt_proto::nfd::RouteOrigin)> = self
                    .rib
                    .routes()
                    .flat_map(|(p, rs)| {
                        rs.iter()
                            .filter(|r| r.face_id == s.id.0)
                            .map(move |r| (p.clone(), r.origin))
                    })
                    .collect();
                let changes = self.rib.remove_face(s.id.0);
                if !changes.is_empty() {
                    let prefixes = changes.len();
                    tracing::info!(face = s.id.0, prefixes, "routes of a closed face removed");
                }
                for (prefix, origin) in &gone {
                    self.readvertise_removed(prefix, s.id.0, *origin, now);
                }
                self.apply(changes);
                self.readvertise_sync(now);
                if self.fib.remove_face(s.id) > 0 {
                    self.fib.publish();
                }
                (FaceEventKind::DESTROYED, s)
            }
            FaceEvent::Up(s) => {
                self.faces.insert(s.id, s.clone());
                (FaceEventKind::UP, s)
            }
            FaceEvent::Down(s) => {
                self.faces.insert(s.id, s.clone());
                (FaceEventKind::DOWN, s)
            }
        };
        let n = FaceEventNotification::for_face(kind, &status::face_status(&status));
        let wire = self.events.post(&n.encode());
        if let Ok(d) = DataView::decode(wire.clone()) {
            self.storage
                .insert_notification(d.name.clone(), wire, self.now_ms());
            self.runtime.send_internal_data(d, None);
        }
    }
}
