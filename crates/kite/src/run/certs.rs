//! Management's validators: the modules `[[authorize]]` grants (NFD's `authorizations`),
//! the `rib` validators' trust schemas (`rib.localhost_security`, `rib.localhop_security`,
//! `rib.prefix_announcement_validation`: files in ndn-cxx's validator format) and the
//! certificate fetcher they need: an application on the daemon's own unix socket, like the
//! readvertise client, that fetches the certificates management asks for, one at a time,
//! each within its deadline, and reports what came. A neighbour's certificate is asked of
//! the neighbour's face first (NextHopFaceId, as NFD's direct fetch), so a gateway need not
//! route the neighbour's key names.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use bytes::Bytes;
use crossbeam_channel::{Receiver, Sender};
use kite_app::Client;
use kite_manager::server::{CertificateRequest, CertificateResult, Manager, CERT_QUEUE};
use kite_manager::{Grant, RibSecurity};
use kite_mgmt::nfd::face_flag_bit;
use kite_mgmt::ControlParameters;
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

/// Fetches each request and reports it, until management goes away.
fn serve(
    socket: PathBuf,
    requests: Receiver<CertificateRequest>,
    results: Sender<CertificateResult>,
) {
    let mut client: Option<Client> = None;
    while let Ok(req) = requests.recv() {
        let data = fetch(&mut client, &socket, &req);
        if data.is_none() {
            tracing::info!(name = %req.name, face = ?req.face, "certificate not retrieved");
        }
        let result = CertificateResult { id: req.id, data };
        if results.send(result).is_err() {
            return;
        }
    }
}

fn fetch(client: &mut Option<Client>, socket: &Path, req: &CertificateRequest) -> Option<Bytes> {
    let deadline = Instant::now() + Duration::from_millis(req.within_ms);
    if client.is_none() {
        *client = connect(socket);
    }
    let c = client.as_mut()?;
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
        return None;
    }
    loop {
        match c.recv_until(deadline) {
            Ok(Some((_, NetPacket::Data(d)))) if req.name.is_prefix_of(&d.name) => {
                return d.wire().cloned();
            }
            Ok(Some((_, NetPacket::Nack(n)))) if n.interest.name == req.name => return None,
            Ok(Some(_)) => {}
            Ok(None) => return None,
            Err(_) => {
                *client = None;
                return None;
            }
        }
    }
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
