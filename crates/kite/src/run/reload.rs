//! SIGHUP: `kite run` reads its configuration file again and applies what changed, as a diff
//! against what runs: faces created and destroyed, routes registered and unregistered,
//! strategy choices set and unset, the Content Store's settings (`[tables.cs]`), the log
//! filter, and the WebTransport certificate (read again, or made again when self-signed) for
//! new sessions.
//! A file that does not parse or check is refused with the same file:line:col message as at
//! start, logged, and everything stays as it was. Settings fixed at start (listeners, threads,
//! packet and reassembly budgets) are logged as needing a restart and keep their running values.

use std::path::PathBuf;
use std::time::Duration;

use kite_mgmt_proto::nfd::cs_flag_bit;
use kite_mgmt_proto::{ControlParameters, Verb};
use kite_mgmt_server::server::{Job, Manager};
use kite_runtime::RuntimeHandle;
use tracing_subscriber::{reload, EnvFilter, Registry};

use super::startup::{self, FaceIds};
use super::{options, RunArgs};
use crate::config::{Config, Http3, RouteEntry};

/// How long a reload waits for the management thread to apply it.
const APPLY_TIMEOUT: Duration = Duration::from_secs(30);

/// What a reload compares the file with, and how it reaches the running daemon.
pub(super) struct Reloader {
    /// The file (none: `kite run` without `--config`, nothing to reload).
    path: Option<PathBuf>,
    /// The configuration in effect (file, flags and defaults merged).
    running: Config,
    /// The FaceIds of the running configuration's `[[face]]`s.
    faces: FaceIds,
    /// Management's job queue.
    jobs: crossbeam_channel::Sender<Job>,
    /// The log filter's handle.
    log: reload::Handle<EnvFilter, Registry>,
    /// The forwarder's threads (the faces that exist).
    runtime: RuntimeHandle,
    /// The certificate the WebTransport listeners serve new sessions with, if any listen.
    certificate: Option<kite_face::h3::CertSlot>,
}

/// The result of applying a diff in the management thread: the `[[face]]` ids afterwards and
/// what could not be done.
type Applied = (FaceIds, Vec<String>);

impl Reloader {
    pub(super) fn new(
        path: Option<PathBuf>,
        running: Config,
        faces: FaceIds,
        jobs: crossbeam_channel::Sender<Job>,
        log: reload::Handle<EnvFilter, Registry>,
        runtime: RuntimeHandle,
        certificate: Option<kite_face::h3::CertSlot>,
    ) -> Self {
        Reloader {
            path,
            running,
            faces,
            jobs,
            log,
            runtime,
            certificate,
        }
    }

    /// Reads the file again and applies the difference; every outcome is logged.
    pub(super) fn reload(&mut self, args: &RunArgs) {
        let Some(path) = &self.path else {
            tracing::warn!("SIGHUP: kite run has no --config file to read again; nothing changes");
            return;
        };
        tracing::info!(file = %path.display(), "SIGHUP: reading the configuration again");
        let mut new = match Config::load(path) {
            Ok(c) => c,
            Err(e) => {
                tracing::error!("configuration refused, the running one stays: {e}");
                return;
            }
        };
        if let Err(e) = options::apply_flags(&mut new, args) {
            tracing::error!("configuration refused, the running one stays: {e}");
            return;
        }
        options::resolve(&mut new);
        for key in restart_only(&self.running, &new) {
            tracing::warn!(
                key,
                "changed in the file, but takes effect only when kite run restarts"
            );
        }
        if let Some(slot) = &self.certificate {
            // Read again (or, self-signed, made again: 13 more days) for new sessions.
            let base = path.parent().unwrap_or(std::path::Path::new("."));
            match super::webtransport_certificate(&new.face_system.http3, base) {
                Ok(cert) => {
                    slot.replace(cert);
                    tracing::info!("WebTransport certificate replaced for new sessions");
                    let h3 = &mut self.running.face_system.http3;
                    (h3.cert, h3.key) = (
                        new.face_system.http3.cert.clone(),
                        new.face_system.http3.key.clone(),
                    );
                }
                Err(e) => tracing::error!("WebTransport certificate kept: {e:#}"),
            }
        }
        if new.log.filter != self.running.log.filter {
            let filter = new.log.filter.as_ref().map_or("info", |f| f.0.as_str());
            match self.log.modify(|f| *f = EnvFilter::new(filter)) {
                Ok(()) => tracing::info!(filter, "log filter changed"),
                Err(e) => tracing::error!(error = %e, "cannot change the log filter"),
            }
        }
        let (tx, rx) = crossbeam_channel::bounded::<Applied>(1);
        let (old, next, faces) = (self.running.clone(), new.clone(), self.faces.clone());
        let runtime = self.runtime.clone();
        let job: Job = Box::new(move |m: &mut Manager| {
            let _ = tx.send(apply(m, &runtime, &old, &next, faces));
        });
        match self.jobs.send_timeout(job, APPLY_TIMEOUT) {
            Ok(()) => {}
            Err(crossbeam_channel::SendTimeoutError::Timeout(_)) => {
                tracing::error!(
                    "management did not take the configuration within {APPLY_TIMEOUT:?}"
                );
                return;
            }
            Err(crossbeam_channel::SendTimeoutError::Disconnected(_)) => {
                tracing::error!("management has stopped; the configuration is not applied");
                return;
            }
        }
        let Ok((faces, failures)) = rx.recv_timeout(APPLY_TIMEOUT) else {
            tracing::error!("management did not apply the configuration within {APPLY_TIMEOUT:?}");
            return;
        };
        for f in &failures {
            tracing::error!("reload: {f}");
        }
        self.faces = faces;
        // Settings fixed at start keep their running values, so that a later reload still
        // reports them.
        new.forwarder = self.running.forwarder.clone();
        new.face_system = self.running.face_system.clone();
        new.tables.network_region = self.running.tables.network_region.clone();
        new.rib = self.running.rib.clone();
        new.authorize = self.running.authorize.clone();
        self.running = new;
        tracing::info!(failures = failures.len(), "configuration reloaded");
    }
}

/// The keys that differ between `old` and `new` but are fixed at start.
fn restart_only(old: &Config, new: &Config) -> Vec<&'static str> {
    let (f, g) = (&old.face_system, &new.face_system);
    let (a, b) = (&old.forwarder, &new.forwarder);
    let (c, d) = (&old.tables, &new.tables);
    let (r, s) = (&old.rib, &new.rib);
    [
        ("forwarder.threads", a.threads != b.threads),
        ("forwarder.inline", a.inline != b.inline),
        (
            "forwarder.dispatch_prefix",
            a.dispatch_prefix != b.dispatch_prefix,
        ),
        (
            "forwarder.default_hop_limit",
            a.default_hop_limit != b.default_hop_limit,
        ),
        (
            "forwarder.max_interest_lifetime",
            a.max_interest_lifetime != b.max_interest_lifetime,
        ),
        ("face_system.local_only", f.local_only != g.local_only),
        (
            "face_system.max_packet_size",
            f.max_packet_size != g.max_packet_size,
        ),
        (
            "face_system.reassembly_bytes",
            f.reassembly_bytes != g.reassembly_bytes,
        ),
        ("face_system.unix", f.unix != g.unix),
        ("face_system.udp", f.udp != g.udp),
        ("face_system.tcp", f.tcp != g.tcp),
        ("face_system.websocket", f.websocket != g.websocket),
        (
            "face_system.http3",
            Http3 {
                cert: None,
                key: None,
                ..f.http3.clone()
            } != Http3 {
                cert: None,
                key: None,
                ..g.http3.clone()
            },
        ),
        ("face_system.ether", f.ether != g.ether),
        (
            "tables.network_region",
            c.network_region != d.network_region,
        ),
        ("authorize", old.authorize != new.authorize),
        (
            "rib.readvertise_nlsr",
            r.readvertise_nlsr != s.readvertise_nlsr,
        ),
        (
            "rib.auto_prefix_propagate",
            r.auto_prefix_propagate != s.auto_prefix_propagate,
        ),
        (
            "rib.propagate_prefixes",
            r.propagate_prefixes != s.propagate_prefixes,
        ),
        ("rib.propagate_key", r.propagate_key != s.propagate_key),
        (
            "rib.propagate_key_password_file",
            r.propagate_key_password_file != s.propagate_key_password_file,
        ),
        (
            "rib.propagate_certificate",
            r.propagate_certificate != s.propagate_certificate,
        ),
        (
            "rib.propagate_chain",
            r.propagate_chain != s.propagate_chain,
        ),
        (
            "rib.localhop_registration",
            r.localhop_registration != s.localhop_registration,
        ),
        (
            "rib.localhost_security",
            r.localhost_security != s.localhost_security,
        ),
        (
            "rib.localhop_security",
            r.localhop_security != s.localhop_security,
        ),
        (
            "rib.prefix_announcement_validation",
            r.prefix_announcement_validation != s.prefix_announcement_validation,
        ),
    ]
    .into_iter()
    .filter_map(|(k, changed)| changed.then_some(k))
    .collect()
}

/// Applies the difference from `old` to `new` in the management thread: strategies, then
/// faces (a `[[face]]` whose entry changed is destroyed and made again), then routes, then the
/// CS. Each failure is reported and the rest goes on.
fn apply(
    m: &mut Manager,
    runtime: &RuntimeHandle,
    old: &Config,
    new: &Config,
    mut faces: FaceIds,
) -> Applied {
    // A `[[face]]` destroyed meanwhile (a persistent face whose peer was down, or by a
    // command) counts as absent: it is made again, with its routes.
    let alive: Vec<u64> = runtime.faces().iter().map(|f| f.id.0).collect();
    faces.retain(|_, id| alive.contains(id));
    let old_faces = faces.clone();
    let mut failures = Vec::new();
    let mut fail = |r: anyhow::Result<()>| {
        if let Err(e) = r {
            failures.push(format!("{e:#}"));
        }
    };
    let (os, ns) = (&old.tables.strategy_choice, &new.tables.strategy_choice);
    for prefix in os.keys().filter(|p| !ns.contains_key(*p)) {
        let params = ControlParameters {
            name: Some(prefix.0.clone()),
            ..Default::default()
        };
        let resp = m.execute_trusted(Verb::StrategyChoiceUnset, params);
        let what = format!("strategy for {}", prefix.0);
        fail(startup::check(Verb::StrategyChoiceUnset, &what, resp).map(|_| ()));
    }
    for (prefix, s) in ns.iter().filter(|(p, s)| os.get(*p) != Some(*s)) {
        fail(startup::set_strategy(m, prefix, s));
    }

    // Faces whose entry went or changed are destroyed (their routes go with them).
    let mut remade = Vec::new();
    for face in &old.faces {
        if new.faces.contains(face) {
            continue;
        }
        let uri = face.uri.get_ref().to_string();
        let Some(id) = faces.remove(&uri) else {
            continue;
        };
        remade.push(id);
        let params = ControlParameters {
            face_id: Some(id),
            ..Default::default()
        };
        let resp = m.execute_trusted(Verb::FacesDestroy, params);
        fail(startup::check(Verb::FacesDestroy, &format!("face {uri}"), resp).map(|_| ()));
        tracing::info!(face = id, uri, "configured face destroyed");
    }
    for face in &new.faces {
        if old.faces.contains(face) && faces.contains_key(&face.uri.get_ref().to_string()) {
            continue;
        }
        match startup::create_face(m, face) {
            Ok(id) => {
                faces.insert(face.uri.get_ref().to_string(), id);
            }
            Err(e) => fail(Err(e)),
        }
    }

    // A route is kept when the new file has the same entry through the same FaceId; any
    // other old one is unregistered (unless its face was destroyed, which took it along),
    // then any other new one registered.
    let existing: Vec<u64> = runtime.faces().iter().map(|f| f.id.0).collect();
    let with_ids = |routes: &'_ [RouteEntry], ids: &FaceIds| -> Vec<(RouteEntry, Option<u64>)> {
        routes
            .iter()
            .map(|r| (r.clone(), startup::route_face(r, &existing, ids).ok()))
            .collect()
    };
    let before = with_ids(&old.routes, &old_faces);
    let after = with_ids(&new.routes, &faces);
    for (route, id) in &before {
        let Some(id) = *id else { continue };
        if after.contains(&(route.clone(), Some(id))) || remade.contains(&id) {
            continue;
        }
        let params = ControlParameters {
            name: Some(route.prefix.0.clone()),
            face_id: Some(id),
            origin: Some(route.origin.0),
            ..Default::default()
        };
        let resp = m.execute_trusted(Verb::RibUnregister, params);
        let what = format!("route {} via {}", route.prefix.0, route.face.get_ref());
        fail(startup::check(Verb::RibUnregister, &what, resp).map(|_| ()));
        tracing::info!(prefix = %route.prefix.0, face = id, "configured route removed");
    }
    for (route, id) in &after {
        if id.is_some() && before.contains(&(route.clone(), *id)) {
            continue;
        }
        match id {
            Some(id) => fail(startup::add_route(m, route, *id)),
            None => fail(startup::route_face(route, &existing, &faces).map(|_| ())),
        }
    }

    let (oc, nc) = (&old.tables.cs, &new.tables.cs);
    if (oc.capacity, oc.admit, oc.serve) != (nc.capacity, nc.admit, nc.serve) {
        let mut params = ControlParameters {
            capacity: Some(nc.capacity as u64),
            ..Default::default()
        };
        params.set_flag_bit(cs_flag_bit::ENABLE_ADMIT, nc.admit);
        params.set_flag_bit(cs_flag_bit::ENABLE_SERVE, nc.serve);
        let resp = m.execute_trusted(Verb::CsConfig, params);
        fail(startup::check(Verb::CsConfig, "the Content Store's settings", resp).map(|_| ()));
        tracing::info!(
            capacity = nc.capacity,
            admit = nc.admit,
            serve = nc.serve,
            "Content Store settings changed"
        );
    }
    if (oc.capacity_bytes, oc.unsolicited_policy) != (nc.capacity_bytes, nc.unsolicited_policy) {
        runtime.set_cs_policy(Some(nc.capacity_bytes), Some(nc.unsolicited_policy.into()));
        tracing::info!(
            capacity_bytes = nc.capacity_bytes,
            unsolicited_policy = ?nc.unsolicited_policy,
            "Content Store limits changed"
        );
    }
    (faces, failures)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rib_keys_are_fixed_at_start_and_a_change_is_named() {
        let old = Config::default();
        let mut new = old.clone();
        new.rib.auto_prefix_propagate = true;
        new.rib.propagate_key = Some("host.safebag".into());
        new.rib.propagate_chain = vec!["site.ndncert".into()];
        assert_eq!(
            restart_only(&old, &new),
            [
                "rib.auto_prefix_propagate",
                "rib.propagate_key",
                "rib.propagate_chain"
            ]
        );
        assert!(restart_only(&old, &old).is_empty());
    }

    #[test]
    fn a_webtransport_certificate_is_read_again_and_its_listeners_are_fixed() {
        let old = Config::default();
        let mut new = old.clone();
        new.face_system.http3.cert = Some("cert.pem".into());
        new.face_system.http3.key = Some("key.pem".into());
        assert!(restart_only(&old, &new).is_empty(), "applied by the reload");
        new.face_system.http3.max_sessions = 3;
        assert_eq!(restart_only(&old, &new), ["face_system.http3"]);
    }
}
