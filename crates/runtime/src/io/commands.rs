//! Management's commands to an I/O thread (create, update, destroy, list faces and
//! channels; faces handed over by other threads), and the outgoing connections
//! `faces/create` starts.

use std::time::Instant;

use kite_face::{EtherChannel, Face, FaceUri, MarkingConfig, UdpChannel};
use kite_fw::face::FaceId;
use kite_link::Persistency;
use mio::Token;

use super::connector::Refused;
use super::IoThread;
use crate::command::CreateRequest;
use crate::iolog::CloseReason;
use crate::{FaceCommandError, FaceOptions, FaceStatus, IoCommand};

/// An outgoing TCP connection on its way (in [`Connects`](super::connector::Connects)), and
/// the request it answers.
pub(super) struct Connect {
    conn: kite_face::tcp::Connecting,
    request: CreateRequest,
}

/// A face made at once, or a connection started for it.
enum NewFace {
    Ready(Box<Face>),
    Connecting(FaceId, kite_face::tcp::Connecting),
}

/// What management learns about `face`.
pub(super) fn status(face: &Face) -> FaceStatus {
    FaceStatus {
        id: face.id(),
        remote: face.remote_uri().clone(),
        local: face.local_uri().clone(),
        scope: face.scope(),
        persistency: face.persistency(),
        link_type: face.link_type(),
        mtu: face.mtu(),
        local_fields: face.local_fields(),
        marking: face.congestion_marking(),
        lp_reliability: face.lp_reliability(),
        up: face.is_up(),
        reconnecting: face.is_redialing(),
        out_queue: face.pending_output(),
        counters: face.all_counters(),
    }
}

impl IoThread {
    /// Applies management's commands; `false` when told to stop.
    pub(super) fn handle_commands(&mut self, now: Instant) -> bool {
        while let Ok(cmd) = self.commands.try_recv() {
            match cmd {
                IoCommand::Adopt(face) => self.adopt_accepted(*face, now),
                IoCommand::Migrate(face) => self.adopt_moved(*face),
                IoCommand::Output(o) => self.output_passed_on(o, now),
                IoCommand::Create {
                    remote,
                    local,
                    background,
                    request,
                } => match (background, &remote, &local) {
                    (true, FaceUri::Tcp(addr), None)
                        if request.persistency != Persistency::OnDemand =>
                    {
                        let addr = *addr;
                        self.create_unconnected(addr, request, now);
                    }
                    _ => self.create(remote, local, request, now),
                },
                IoCommand::Update {
                    id,
                    persistency,
                    options,
                    reply,
                } => {
                    let r = match self.table.get_mut(id) {
                        None => Err(FaceCommandError::NotFound),
                        Some(face) => configure(face, persistency, options).map(|()| status(face)),
                    };
                    self.follow_persistency(id);
                    self.table.follow_reliability(id);
                    let _ = reply.send(r);
                }
                IoCommand::Destroy { id, reply } => {
                    let _ = reply.send(self.close_face(id, CloseReason::Command, now));
                }
                IoCommand::Evict(id) => {
                    self.close_face(id, CloseReason::Evicted, now);
                }
                IoCommand::List { reply } => {
                    let mut all: Vec<FaceStatus> = self.table.values().map(status).collect();
                    all.sort_by_key(|s| s.id);
                    let _ = reply.send(all);
                }
                IoCommand::Channels { reply } => {
                    let mut all: Vec<_> = self.channels.iter().map(|l| l.status()).collect();
                    all.extend(self.udp.iter().map(UdpChannel::status));
                    all.extend(self.ether.iter().map(EtherChannel::status));
                    let _ = reply.send(all);
                }
                IoCommand::Shutdown => return false,
            }
        }
        true
    }

    /// Carries out `faces/create`: answers at once, or, for an outgoing TCP connection, once
    /// it completes, fails or times out (see [`IoThread::connect_progress`]).
    fn create(
        &mut self,
        remote: FaceUri,
        local: Option<FaceUri>,
        request: CreateRequest,
        now: Instant,
    ) {
        match self.new_face(&remote, local, request.persistency) {
            Ok(NewFace::Ready(face)) => {
                let r = self.finish_create(*face, request.options, now);
                request.answer(r);
            }
            Ok(NewFace::Connecting(id, mut conn)) => {
                if let Err(e) = conn.register(self.poll.registry(), Token(id.0 as usize)) {
                    return request.answer(Err(FaceCommandError::ConnectFailed(e.to_string())));
                }
                self.connects
                    .start(id, remote, Connect { conn, request }, now);
            }
            Err(e) => request.answer(Err(e)),
        }
    }

    /// Makes a TCP face at once, without its connection, and dials its peer in the background
    /// (now, then as the [`Redials`](super::connector::Redials) schedule).
    fn create_unconnected(
        &mut self,
        addr: std::net::SocketAddr,
        request: CreateRequest,
        now: Instant,
    ) {
        if let Some(existing) = self.table.find_remote(&FaceUri::Tcp(addr)) {
            return request.answer(Err(FaceCommandError::Exists(existing)));
        }
        let id = self.ids.next_id();
        let face = kite_face::tcp::unconnected_face(id, addr, request.persistency, &self.config);
        let r = self.add_unconnected(face, request.options, now);
        request.answer(r);
    }

    /// Configures and adds a face that has yet to connect, and dials its peer now (then as
    /// the [`Redials`](super::connector::Redials) schedule).
    pub(super) fn add_unconnected(
        &mut self,
        face: Face,
        options: FaceOptions,
        now: Instant,
    ) -> Result<FaceStatus, FaceCommandError> {
        let id = face.id();
        let r = self.finish_create(face, options, now);
        if r.is_ok() {
            self.redials.schedule(id, now);
        }
        r
    }

    /// Configures a face `faces/create` made and adds it.
    fn finish_create(
        &mut self,
        mut face: Face,
        options: FaceOptions,
        now: Instant,
    ) -> Result<FaceStatus, FaceCommandError> {
        if let Err(e) = configure(&mut face, None, options) {
            self.forget_in_channel(&face);
            return Err(e);
        }
        Ok(self.add_face(face, now))
    }

    /// After an event on an outgoing connection: once it completed, its face is made and
    /// `faces/create` answered; once it failed, the failure is the answer (NFD's 504).
    pub(super) fn connect_progress(&mut self, id: FaceId, now: Instant) {
        let Some(c) = self.connects.get_mut(id) else {
            return;
        };
        let done = match c.conn.progress() {
            Ok(false) => return,
            Ok(true) => Ok(()),
            Err(e) => Err(e),
        };
        let Some((remote, mut c)) = self.connects.finish(id) else {
            return;
        };
        let _ = c.conn.deregister(self.poll.registry());
        let r = match done {
            Ok(()) => {
                let (persistency, options) = (c.request.persistency, c.request.options);
                match c.conn.into_face(id, persistency, &self.config) {
                    Ok(face) => self.finish_create(face, options, now),
                    Err(e) => Err(FaceCommandError::ConnectFailed(e.to_string())),
                }
            }
            Err(e) => {
                tracing::info!(%remote, error = %e, "connect failed");
                Err(FaceCommandError::ConnectFailed(e.to_string()))
            }
        };
        c.request.answer(r);
    }

    /// Gives up the outgoing connections whose time ran out, answering their `faces/create`.
    pub(super) fn expire_connects(&mut self, now: Instant) {
        let registry = self.poll.registry();
        self.connects.expire(now, |remote, mut c| {
            let _ = c.conn.deregister(registry);
            let t = kite_face::tcp::CONNECT_TIMEOUT;
            tracing::info!(%remote, "connect timed out after {t:?}");
            let why = format!("no answer from {remote} within {t:?}");
            c.request.answer(Err(FaceCommandError::ConnectFailed(why)));
        });
    }

    /// The face `faces/create` asks for, or the connection started for it.
    fn new_face(
        &mut self,
        remote: &FaceUri,
        local: Option<FaceUri>,
        persistency: Persistency,
    ) -> Result<NewFace, FaceCommandError> {
        let exists = |e| match e {
            kite_face::FaceError::Exists(id) => FaceCommandError::Exists(id),
            e => FaceCommandError::ConnectFailed(e.to_string()),
        };
        if !matches!(remote, FaceUri::Ether(_)) {
            if let Some(existing) = self.table.find_remote(remote) {
                return Err(FaceCommandError::Exists(existing));
            }
        }
        let face = match (remote, &local) {
            (FaceUri::Udp(addr), None) => {
                let channel = self
                    .udp
                    .iter_mut()
                    .find(|u| u.local_addr().is_ipv4() == addr.is_ipv4())
                    .ok_or_else(|| {
                        FaceCommandError::Unsupported(
                            "no UDP channel for this address family".into(),
                        )
                    })?;
                channel
                    .connect(self.ids.next_id(), *addr, persistency)
                    .map_err(exists)?
            }
            (FaceUri::Tcp(addr), None) => {
                let why = match self.connects.admit(remote) {
                    Ok(()) => None,
                    Err(Refused::OnItsWay) => {
                        Some(format!("a connection to {remote} is already on its way"))
                    }
                    Err(Refused::TooMany(n)) => {
                        Some(format!("{n} connections are already on their way"))
                    }
                };
                if let Some(why) = why {
                    return Err(FaceCommandError::ConnectFailed(why));
                }
                let conn = kite_face::tcp::Connecting::start(*addr)
                    .map_err(|e| FaceCommandError::ConnectFailed(e.to_string()))?;
                return Ok(NewFace::Connecting(self.ids.next_id(), conn));
            }
            (FaceUri::Ether(mac), Some(FaceUri::Dev(iface))) if !mac.is_multicast() => {
                let channel = self
                    .ether
                    .iter_mut()
                    .find(|c| c.name() == iface)
                    .ok_or_else(|| {
                        FaceCommandError::ConnectFailed(format!(
                            "no Ethernet channel on {iface} (kite run --ether {iface} opens one)"
                        ))
                    })?;
                channel
                    .connect(self.ids.next_id(), *mac, persistency)
                    .map_err(exists)?
            }
            // Management refuses what NFD refuses before asking (`faces/create`'s policy);
            // anything else is beyond what the channels can make.
            (other, local) => {
                return Err(FaceCommandError::Unsupported(match local {
                    Some(l) => format!("cannot create a face to {other} from {l}"),
                    None => format!("cannot create a face to {other}"),
                }))
            }
        };
        Ok(NewFace::Ready(Box::new(face)))
    }
}

/// Applies optional face properties (NFD `faces/create` and `faces/update`).
fn configure(
    face: &mut Face,
    persistency: Option<Persistency>,
    options: FaceOptions,
) -> Result<(), FaceCommandError> {
    if let Some(on) = options.local_fields {
        face.set_local_fields(on)
            .map_err(|e| FaceCommandError::Unsupported(e.to_string()))?;
    }
    if let Some(on) = options.lp_reliability {
        face.set_lp_reliability(on)
            .map_err(|e| FaceCommandError::Unsupported(e.to_string()))?;
    }
    if let Some(p) = persistency {
        face.set_persistency(p);
    }
    if let Some(m) = options.mtu {
        face.set_mtu(m);
    }

    let old = face.congestion_marking();
    let marking = MarkingConfig {
        enabled: options.congestion_marking.unwrap_or(old.enabled),
        base_interval: options.base_marking_interval.unwrap_or(old.base_interval),
        threshold: options.congestion_threshold.unwrap_or(old.threshold),
    };
    if marking != old {
        face.set_congestion_marking(marking);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::io::testing::{harness, PEER};
    use crate::FaceEvent;
    use crate::FwCommand;

    #[test]
    fn a_face_created_is_announced_listed_counted_and_dialed_at_once() {
        let mut h = harness();
        let t0 = Instant::now();
        let s = h.create(Persistency::Permanent, t0).expect("made at once");
        assert_eq!(s.remote, FaceUri::Tcp(PEER.parse().unwrap()));
        assert!(
            !s.up && !s.reconnecting,
            "down until its first dial connects"
        );
        assert!(matches!(h.events.try_recv(), Ok(FaceEvent::Created(e)) if e.id == s.id));
        assert!(matches!(h.fwd.try_recv(), Ok(FwCommand::AddFace(id, _, 0)) if id == s.id));
        assert_eq!(h.list(t0), [s.id]);
        assert_eq!(h.load(), 1);
        assert!(h.thread.redials.contains(s.id));
        assert_eq!(
            h.thread.redials.next_deadline(),
            Some(t0),
            "its first dial is due now"
        );
    }

    #[test]
    fn a_second_face_to_the_same_peer_is_refused() {
        let mut h = harness();
        let t0 = Instant::now();
        let s = h.create(Persistency::Permanent, t0).unwrap();
        let again = h.create(Persistency::Persistent, t0);
        assert_eq!(again.unwrap_err(), FaceCommandError::Exists(s.id));
        assert_eq!(h.list(t0), [s.id]);
        assert_eq!(h.load(), 1);
    }

    #[test]
    fn a_destroyed_face_is_gone_everywhere_and_dials_no_more() {
        let mut h = harness();
        let t0 = Instant::now();
        let s = h.create(Persistency::Permanent, t0).unwrap();
        let _ = (h.events.try_recv(), h.fwd.try_recv());
        let gone = h.destroy(s.id, t0).expect("it was there");
        assert_eq!(gone.id, s.id);
        assert!(matches!(h.events.try_recv(), Ok(FaceEvent::Destroyed(e)) if e.id == s.id));
        assert!(matches!(h.fwd.try_recv(), Ok(FwCommand::RemoveFace(id)) if id == s.id));
        assert!(h.list(t0).is_empty());
        assert_eq!(h.load(), 0);
        assert!(h.thread.redials.is_empty());
        assert!(h.destroy(s.id, t0).is_none(), "destroyed once");
    }

    #[test]
    fn update_sets_what_a_face_accepts_and_refuses_the_rest() {
        let mut h = harness();
        let t0 = Instant::now();
        let s = h.create(Persistency::Persistent, t0).unwrap();
        assert!(s.marking.enabled);
        let update = |id, persistency, options| {
            let (reply, rx) = crossbeam_channel::bounded(1);
            let cmd = IoCommand::Update {
                id,
                persistency,
                options,
                reply,
            };
            (cmd, rx)
        };
        let off = FaceOptions {
            congestion_marking: Some(false),
            base_marking_interval: Some(Duration::from_millis(50)),
            ..FaceOptions::default()
        };
        let (cmd, rx) = update(s.id, Some(Persistency::Permanent), off);
        h.run(cmd, t0);
        let u = rx.try_recv().unwrap().expect("updated");
        assert!(!u.marking.enabled);
        assert_eq!(u.marking.base_interval, Duration::from_millis(50));
        assert_eq!(u.persistency, Persistency::Permanent);
        // Local fields only on a local face: refused, and nothing else changed with them.
        let local = FaceOptions {
            local_fields: Some(true),
            congestion_marking: Some(true),
            ..FaceOptions::default()
        };
        let (cmd, rx) = update(s.id, None, local);
        h.run(cmd, t0);
        assert!(matches!(
            rx.try_recv(),
            Ok(Err(FaceCommandError::Unsupported(_)))
        ));
        let face = h.thread.table.get(s.id).unwrap();
        assert!(!face.congestion_marking().enabled);
        let (cmd, rx) = update(FaceId(9999), None, FaceOptions::default());
        h.run(cmd, t0);
        assert_eq!(
            rx.try_recv().unwrap().unwrap_err(),
            FaceCommandError::NotFound
        );
    }

    #[test]
    fn shutdown_stops_the_commands() {
        let mut h = harness();
        h.commands.send(IoCommand::Shutdown).unwrap();
        assert!(!h.thread.handle_commands(Instant::now()));
    }
}
