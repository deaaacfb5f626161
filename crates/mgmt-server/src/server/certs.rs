//! Commands waiting for a certificate: when a validator needs a certificate it does not
//! have, the command waits here (at most [`MAX_WAITING`], each at most [`CERT_WAIT_MS`]) while
//! the daemon's certificate fetcher (an application on the unix socket, like the readvertise
//! client) fetches it over NDN, so that management never waits on the network and the
//! forwarding threads never see validation.

use bytes::Bytes;
use crossbeam_channel::{Sender, TrySendError};
use kite_fw::face::FaceId;
use kite_mgmt_proto::nfd::status as code;
use kite_mgmt_proto::{dataset, Command};
use kite_packet::{Name, PitToken};

use super::commands::response;
use super::{log, unix_ms, Manager};
use crate::authorize::{Decision, Waiting};

/// Most commands waiting for certificates at once; beyond, a command that needs one is
/// refused (403).
pub const MAX_WAITING: usize = 64;
/// Most of them from one face: a neighbour naming keys whose certificates never come holds
/// no more of the queue than this.
pub const MAX_WAITING_PER_FACE: usize = 4;
/// How long a command waits for its certificate (ms): a command Interest's lifetime.
pub const CERT_WAIT_MS: u64 = 4000;
/// Requests that may wait for the fetcher.
pub const CERT_QUEUE: usize = 16;

/// A certificate for the fetcher to get: an Interest for `name` (CanBePrefix,
/// MustBeFresh), sent toward `face` first when given (NFD's direct fetch), answered with a
/// [`CertificateResult`] carrying `id`.
#[derive(Debug, Clone)]
pub struct CertificateRequest {
    /// The request's id.
    pub id: u64,
    /// A key or certificate name.
    pub name: Name,
    /// The face the command came on, to ask first.
    pub face: Option<u64>,
    /// How long to try (ms).
    pub within_ms: u64,
}

/// What the fetcher got: the certificate Data's encoding, or nothing in time.
#[derive(Debug, Clone)]
pub struct CertificateResult {
    /// As in the request.
    pub id: u64,
    /// The Data, as received.
    pub data: Option<Bytes>,
}

pub(super) struct WaitingCommand {
    cmd: Command,
    name: Name,
    token: PitToken,
    ingress: FaceId,
    waiting: Box<Waiting>,
    deadline: u64,
}

impl Manager {
    /// Lets validators fetch certificates through `requests` (the daemon's fetcher), which
    /// answers on [`Manager::certificate_results`].
    pub fn enable_certificate_fetching(&mut self, requests: Sender<CertificateRequest>) {
        self.cert_requests = Some(requests);
    }

    /// Where the fetcher reports.
    pub fn certificate_results(&self) -> Sender<CertificateResult> {
        self.cert_results.0.clone()
    }

    /// Carries on with a command authorization came to `decision` for.
    pub(super) fn decided(
        &mut self,
        decision: Decision,
        cmd: Command,
        name: Name,
        token: PitToken,
        ingress: FaceId,
        now: u64,
    ) {
        match decision {
            Decision::Accept => self.execute_and_reply(cmd, name, token, ingress, now),
            Decision::Reject(why) => self.refuse(&cmd, &name, token, ingress, &why),
            Decision::Fetch(waiting) => {
                let Some(requests) = &self.cert_requests else {
                    let why = "unauthorized: certificate not available (no fetcher)";
                    return self.refuse(&cmd, &name, token, ingress, why);
                };
                let from_face = self
                    .cert_waiting
                    .values()
                    .filter(|w| w.ingress == ingress)
                    .count();
                if self.cert_waiting.len() >= MAX_WAITING || from_face >= MAX_WAITING_PER_FACE {
                    let why = "unauthorized: too many commands waiting for certificates";
                    return self.refuse(&cmd, &name, token, ingress, why);
                }
                let id = self.next_tag;
                self.next_tag += 1;
                let request = CertificateRequest {
                    id,
                    name: waiting.want().clone(),
                    face: waiting.direct().then_some(ingress.0),
                    within_ms: CERT_WAIT_MS,
                };
                match requests.try_send(request) {
                    Ok(()) => {}
                    Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                        let why = "unauthorized: certificate fetcher busy";
                        return self.refuse(&cmd, &name, token, ingress, why);
                    }
                }
                tracing::debug!(want = %waiting.want(), signer = ?waiting.signer(), "command waits for a certificate");
                self.cert_waiting.insert(
                    id,
                    WaitingCommand {
                        cmd,
                        name,
                        token,
                        ingress,
                        waiting,
                        deadline: unix_ms() + CERT_WAIT_MS,
                    },
                );
            }
        }
    }

    fn refuse(&mut self, cmd: &Command, name: &Name, token: PitToken, ingress: FaceId, why: &str) {
        log::refused(&mut self.log, cmd, ingress.0, code::FORBIDDEN, why);
        let resp = response(code::FORBIDDEN, "authorization rejected");
        self.reply(dataset::response_data(name, &resp), token);
    }

    /// The fetcher's answer for one waiting command.
    pub(super) fn on_certificate(&mut self, r: CertificateResult) {
        if let Some(w) = self.cert_waiting.remove(&r.id) {
            self.resume_waiting(w, r.data);
        }
    }

    fn resume_waiting(&mut self, w: WaitingCommand, data: Option<Bytes>) {
        let decision = self.authorizer.resume(*w.waiting, data, unix_ms());
        let now = self.now_ms();
        self.decided(decision, w.cmd, w.name, w.token, w.ingress, now);
    }

    /// Refuses the commands whose certificate did not come in time.
    pub(super) fn expire_waiting(&mut self) {
        let now = unix_ms();
        let late: Vec<u64> = self
            .cert_waiting
            .iter()
            .filter(|(_, w)| w.deadline <= now)
            .map(|(id, _)| *id)
            .collect();
        for id in late {
            if let Some(w) = self.cert_waiting.remove(&id) {
                self.resume_waiting(w, None);
            }
        }
    }

    /// When the next waiting command times out, in the manager's clock.
    pub(super) fn next_waiting_deadline(&self) -> Option<u64> {
        let first = self.cert_waiting.values().map(|w| w.deadline).min()?;
        Some(self.now_ms() + first.saturating_sub(unix_ms()))
    }
}
