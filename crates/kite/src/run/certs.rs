//! Management's validators: the modules `[[authorize]]` grants (NFD's `authorizations`),
//! the `rib` validators' trust schemas (`rib.localhost_security`, `rib.localhop_security`,
//! `rib.prefix_announcement_validation`: files in ndn-cxx's validator format) and the
//! certificate fetcher they need: an application on the daemon's own unix socket, like the
//! readvertise client, that fetches the certificates management asks for, all at once, each
//! within its deadline, and reports what came. A neighbour's certificate is asked of
//! the neighbour's face first (NextHopFaceId, as NFD's direct fetch), so a gateway need not
//! route the neighbour's key names.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use bytes::Bytes;
use crossbeam_channel::{Receiver, Sender};
use kite_app::Client;
use kite_mgmt_proto::nfd::face_flag_bit;
use kite_mgmt_proto::ControlParameters;
use kite_mgmt_server::server::{CertificateRequest, CertificateResult, Manager, CERT_QUEUE};
use kite_mgmt_server::{Grant, RibSecurity};
use kite_packet::{Interest, LpHeader, NetPacket};
use kite_security::validator::Policy;
use kite_security::Certificate;

use crate::config;

/// Reads the trust schemas `rib` names and the certificates `authorize` grants modules to
/// (relative paths from `base`, the configuration file's directory), gives them to
/// management, and starts the fetcher when a schema may need certificates.
pub(super) fn start(
    manager: &mut Manager,
    socket: &Path,
    rib: &config::Rib,
    authorize: &[config::Authorize],
    base: &Path,
) -> Result<()> {
    let read = |key: &str, p: &Option<PathBuf>| -> Result<Option<Policy>> {
        p.as_ref()
            .map(|p| {
                let path = base.join(p);
                Policy::read(&path).with_context(|| format!("rib.{key}"))
            })
            .transpose()
    };
    let security = RibSecurity {
        localhost: read("localhost_security", &rib.localhost_security)?,
        localhop: read("localhop_security", &rib.localhop_security)?,
        prefix_announcement: read(
            "prefix_announcement_validation",
            &rib.prefix_announcement_validation,
        )?,
    };
    let needs_fetching = [
        &security.localhost,
        &security.localhop,
        &security.prefix_announcement,
    ]
    .iter()
    .any(|p| p.as_ref().is_some_and(|p| !p.any));
    manager
        .set_rib_security(security)
        .context("rib trust anchors")?;
    if !authorize.is_empty() {
        let grants = authorize
            .iter()
            .map(|a| {
                let certificate = if a.certfile == "any" {
                    None
                } else {
                    let path = base.join(&a.certfile);
                    Some(
                        Certificate::read(&path)
                            .with_context(|| format!("authorize certfile {}", path.display()))?,
                    )
                };
                Ok(Grant {
                    certificate,
                    privileges: a.privileges.clone(),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        manager
            .set_grants(grants)
            .map_err(|e| anyhow::anyhow!("authorize: {e}"))?;
    }
    if !needs_fetching {
        return Ok(());
    }
    let (tx, rx) = crossbeam_channel::bounded(CERT_QUEUE);
    let results = manager.certificate_results();
    let socket = socket.to_path_buf();
    std::thread::Builder::new()
        .name("kite-certs".into())
        .spawn(move || serve(socket, rx, results))?;
    manager.enable_certificate_fetching(tx);
    Ok(())
}

/// How often the fetcher looks for new requests while others are outstanding.
const TICK: Duration = Duration::from_millis(20);

/// A request sent, waiting for its Data.
struct Outstanding {
    req: CertificateRequest,
    deadline: Instant,
}

/// Fetches the requests, all outstanding at once (one slow or silent neighbour does not hold
/// the others back), and reports each, until management goes away.
fn serve(
    socket: PathBuf,
    requests: Receiver<CertificateRequest>,
    results: Sender<CertificateResult>,
) {
    let mut client: Option<Client> = None;
    let mut outstanding: Vec<Outstanding> = Vec::new();
    loop {
        // Block for work when there is none; otherwise take what came and go on.
        let new: Vec<CertificateRequest> = if outstanding.is_empty() {
            match requests.recv() {
                Ok(r) => std::iter::once(r).chain(requests.try_iter()).collect(),
                Err(_) => return,
            }
        } else {
            requests.try_iter().collect()
        };
        for req in new {
            let deadline = Instant::now() + Duration::from_millis(req.within_ms);
            if send(&mut client, &socket, &req) {
                outstanding.push(Outstanding { req, deadline });
            } else if report(&results, &req, None).is_err() {
                return;
            }
        }
        let now = Instant::now();
        let soonest = outstanding.iter().map(|o| o.deadline).min();
        let wait = soonest.map_or(TICK, |d| d.saturating_duration_since(now).min(TICK));
        let got = match client.as_mut() {
            Some(c) => c.recv_until(now + wait),
            None => Ok(None),
        };
        match got {
            Ok(Some((_, NetPacket::Data(d)))) => {
                let (done, rest): (Vec<_>, Vec<_>) = outstanding
                    .into_iter()
                    .partition(|o| o.req.name.is_prefix_of(&d.name));
                outstanding = rest;
                for o in done {
                    if report(&results, &o.req, d.wire().cloned()).is_err() {
                        return;
                    }
                }
            }
            Ok(Some((_, NetPacket::Nack(n)))) => {
                let (done, rest): (Vec<_>, Vec<_>) = outstanding
                    .into_iter()
                    .partition(|o| o.req.name == n.interest.name);
                outstanding = rest;
                for o in done {
                    if report(&results, &o.req, None).is_err() {
                        return;
                    }
                }
            }
            Ok(_) => {}
            Err(_) => client = None,
        }
        let now = Instant::now();
        let (late, rest): (Vec<_>, Vec<_>) = outstanding
            .into_iter()
            .partition(|o| o.deadline <= now || client.is_none());
        outstanding = rest;
        for o in late {
            if report(&results, &o.req, None).is_err() {
                return;
            }
        }
    }
}

fn report(
    results: &Sender<CertificateResult>,
    req: &CertificateRequest,
    data: Option<Bytes>,
) -> Result<(), crossbeam_channel::SendError<CertificateResult>> {
    if data.is_none() {
        tracing::info!(name = %req.name, face = ?req.face, "certificate not retrieved");
    }
    results.send(CertificateResult { id: req.id, data })
}

/// Sends the Interest for `req` (CanBePrefix, MustBeFresh, NextHopFaceId when it names a
/// face); false when there is no connection to send it on.
fn send(client: &mut Option<Client>, socket: &Path, req: &CertificateRequest) -> bool {
    if client.is_none() {
        *client = connect(socket);
    }
    let Some(c) = client.as_mut() else {
        return false;
    };
    let mut i = Interest::new(req.name.clone());
    i.can_be_prefix = true;
    i.must_be_fresh = true;
    i.lifetime = Some(req.within_ms);
    i.nonce = Some(kite_packet::Nonce(
        (kite_app::random::random_u64() as u32).to_be_bytes(),
    ));
    let header = LpHeader {
        next_hop_face_id: req.face,
        ..LpHeader::default()
    };
    let sent = c
        .queue_packet(&header, i.encode())
        .and_then(|_| c.flush_queued());
    if sent.is_err() {
        *client = None;
        return false;
    }
    true
}

/// A client whose face accepts NextHopFaceId (local fields enabled). Where `[[authorize]]`
/// grants `faces` to certificates only, enabling them is refused, and certificates are
/// fetched by ordinary forwarding alone.
fn connect(socket: &Path) -> Option<Client> {
    let mut c = Client::connect_unix(socket).ok()?;
    let mut p = ControlParameters::default();
    p.set_flag_bit(face_flag_bit::LOCAL_FIELDS_ENABLED, true);
    if let Err(e) = c.command_ok("faces", "update", &p, Duration::from_secs(4)) {
        tracing::warn!(error = %e, "certificate fetcher: no NextHopFaceId (faces/update refused); certificates are fetched by forwarding alone");
    }
    Some(c)
}
