//! Commands waiting for a certificate: when a validator needs a certificate it does not
//! have, the command waits here (at most [`MAX_WAITING`], each at most [`CERT_WAIT_MS`]) while
//! the daemon's certificate fetcher (an application on the unix socket, like the readvertise
//! client) fetches it over NDN, so that management never waits on the network and the
//! forwarding threads never see validation.
//!
//! And the other way round: the certificates this daemon serves
//! ([`Manager::serve_certificates`]), those of the key its prefix propagation signs with, so
//! that a gateway checking the propagation finds them on this host's face.

use bytes::Bytes;
use crossbeam_channel::{Sender, TrySendError};
use kite_fw::face::FaceId;
use kite_fw::fib::FibError;
use kite_mgmt_proto::nfd::status as code;
use kite_mgmt_proto::{dataset, Command};
use kite_packet::{DataView, Interest, Name, PitToken};
use kite_security::Certificate;

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

/// A certificate this daemon answers Interests for.
pub(super) struct Served {
    name: Name,
    wire: Bytes,
    /// The implicit digest of its Data, for an Interest naming its full name.
    digest: [u8; 32],
}

impl Served {
    /// Whether the certificate satisfies `i`: its name, a prefix of it with CanBePrefix, or
    /// its full name (with the implicit digest).
    fn satisfies(&self, i: &Interest) -> bool {
        let n = self.name.len();
        if i.name.ends_in_implicit_digest() {
            return i.name.len() == n + 1
                && i.name.prefix(n) == self.name
                && i.name.last().is_some_and(|c| c.value() == self.digest);
        }
        i.name == self.name || (i.can_be_prefix && i.name.is_prefix_of(&self.name))
    }
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

    /// Answers Interests for `certificates` from now on: each one's key name
    /// (`/<identity>/KEY/<key-id>`, what a KeyLocator names and a certificate fetcher asks
    /// for) is routed to the internal face in the FIB, as `/localhost/nfd` is, so the
    /// Interests reach management from any face. Only the key name: Interests for the
    /// identity's other keys still go where the RIB sends them. No RIB route, so nothing is
    /// readvertised for it.
    pub fn serve_certificates(&mut self, certificates: &[Certificate]) -> Result<(), FibError> {
        for c in certificates {
            // A certificate is a Data that decoded once already.
            let Ok(view) = DataView::decode(c.wire().clone()) else {
                continue;
            };
            self.fib.add_nexthop(&c.key_name(), FaceId::INTERNAL, 0)?;
            self.served.push(Served {
                name: c.name().clone(),
                wire: c.wire().clone(),
                digest: view.implicit_digest(),
            });
        }
        self.fib.publish();
        Ok(())
    }

    /// The served certificate that satisfies `i`, if any.
    pub(super) fn served_certificate(&self, i: &Interest) -> Option<Bytes> {
        self.served
            .iter()
            .find(|s| s.satisfies(i))
            .map(|s| s.wire.clone())
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

#[cfg(test)]
mod tests {
    use kite_packet::{OwnedComponent, ValidityPeriod};
    use kite_security::{KeySigner, SignatureKind};

    use super::*;

    fn served() -> Served {
        let k =
            KeySigner::generate(SignatureKind::EcdsaP256, &"/site/host".parse().unwrap()).unwrap();
        let validity = ValidityPeriod::new("20200101T000000", "20401231T235959").unwrap();
        let public = k.key().public_der().unwrap();
        let c =
            Certificate::issue(k.key_name().unwrap(), &public, &k, b"self", 1, validity).unwrap();
        let view = DataView::decode(c.wire().clone()).unwrap();
        Served {
            name: c.name().clone(),
            wire: c.wire().clone(),
            digest: view.implicit_digest(),
        }
    }

    fn digest_component(d: [u8; 32]) -> OwnedComponent {
        let t = kite_packet::tlv_type::IMPLICIT_SHA256_DIGEST_COMPONENT;
        OwnedComponent::new(t, d.to_vec()).unwrap()
    }

    fn interest(name: &Name, can_be_prefix: bool) -> Interest {
        let mut i = Interest::new(name.clone());
        i.can_be_prefix = can_be_prefix;
        i
    }

    #[test]
    fn a_served_certificate_answers_its_key_name_its_name_and_its_full_name() {
        let s = served();
        let key_name = s.name.prefix(s.name.len() - 2);
        assert!(
            s.satisfies(&interest(&key_name, true)),
            "what a fetcher asks"
        );
        assert!(
            !s.satisfies(&interest(&key_name, false)),
            "exact names only"
        );
        assert!(s.satisfies(&interest(&s.name, false)));
        let full = s.name.clone().append(digest_component(s.digest).as_ref());
        assert!(s.satisfies(&interest(&full, false)));
        let mut wrong = s.digest;
        wrong[0] ^= 1;
        let other = s.name.clone().append(digest_component(wrong).as_ref());
        assert!(!s.satisfies(&interest(&other, false)));
        let longer = s.name.clone().append_generic(b"more");
        assert!(!s.satisfies(&interest(&longer, true)));
        let other_key: Name = "/site/host/KEY".parse().unwrap();
        assert!(s.satisfies(&interest(&other_key, true)));
        assert!(!s.satisfies(&interest(&"/site/other".parse().unwrap(), true)));
    }
}
