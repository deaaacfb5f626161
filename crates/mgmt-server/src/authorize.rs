//! Who may send which management command: NFD's authorization, one validator per module,
//! each with its own state.
//!
//! - `rib` commands under `/localhost/nfd` and under `/localhop/nfd` each have a validator
//!   (NFD's `rib.localhost_security` and `rib.localhop_security`: a trust schema in ndn-cxx's
//!   validator format, `trust-anchor any` unless configured), both requiring a signed command
//!   even when they trust any key, each with its own [`ReplayGuard`]. The prefix announcement
//!   a `rib/announce` carries is checked by a third (`prefix_announcement_validation`).
//! - The other modules (faces, fib, cs, strategy-choice, and Kite's kite-strategy) each have
//!   their own validator, granted by NFD's `authorizations` ([`Authorizer::set_grants`]). By
//!   default they accept every command, signed or not, as NFD's default `authorize certfile
//!   any` does: that validator checks no signature, hence no timestamp either, and only
//!   scope keeps these commands to local applications. A module granted to certificates
//!   accepts commands their keys sign, with its own replay records.
//!
//! Keeping the records apart matters: a program with several command signers (NLSR has
//! three, each stamping its commands ahead of the clock on its own) sends a faces command
//! stamped earlier than its last rib command, and NFD accepts it.
//!
//! A validator may need a certificate it does not have: [`Authorizer::authorize`] then
//! answers [`Decision::Fetch`], and the caller fetches it and calls [`Authorizer::resume`].
//! A command's stamp is recorded only once it is accepted.

use bytes::Bytes;
use kite_mgmt_proto::command::{Command, TopPrefix, Verb};
use kite_packet::{Component, Name};
use kite_security::validator::{Packet, Pending, Policy, Step, Validator};
use kite_security::Certificate;

use crate::replay::{ReplayGuard, Stamp};

/// The trust schemas of the three `rib` validators (NFD's `rib` section); `None`: trust any.
#[derive(Debug, Default)]
pub struct RibSecurity {
    /// `localhost_security`.
    pub localhost: Option<Policy>,
    /// `localhop_security`.
    pub localhop: Option<Policy>,
    /// `prefix_announcement_validation`.
    pub prefix_announcement: Option<Policy>,
}

/// Which validator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Which {
    Localhost,
    Localhop,
    Announcement,
}

/// A command validation waiting for a certificate.
#[derive(Debug)]
pub struct Waiting {
    which: Which,
    /// The command's stamp, recorded once it is accepted, and by which validator.
    stamp: Stamp,
    stamp_of: Which,
    pending: Box<Pending>,
    /// A `rib/announce`'s announcement, checked once the command is.
    announcement: Option<Packet>,
}

impl Waiting {
    /// The certificate (or key) name to fetch.
    pub fn want(&self) -> &Name {
        self.pending.want()
    }

    /// The signer the command names.
    pub fn signer(&self) -> Option<&Name> {
        self.pending.signer()
    }

    /// Whether the certificate should be asked for on the command's own face first (a
    /// neighbour's command or announcement: NFD's direct fetch).
    pub fn direct(&self) -> bool {
        self.which != Which::Localhost
    }
}

/// What authorization came to.
#[derive(Debug)]
pub enum Decision {
    /// Authorized.
    Accept,
    /// Refused (403), and why, for the log.
    Reject(String),
    /// A certificate must be fetched first.
    Fetch(Box<Waiting>),
}

/// The modules NFD's `authorizations` section grants (and Kite's `kite-strategy`).
pub const MODULES: [&str; 5] = ["faces", "fib", "cs", "strategy-choice", "kite-strategy"];

/// One module's validator in NFD's `authorizations`.
#[derive(Debug)]
enum ModuleAuth {
    /// `certfile any`: every command, signed or not, no timestamp check.
    Any,
    /// Commands signed by one of these certificates' keys (NFD's offline validator: the
    /// KeyLocator must name one of them), with a command-Interest timestamp check.
    Keys(Vec<Certificate>, ReplayGuard),
    /// Granted to nobody: every command refused.
    Nobody,
}

/// One `authorize` entry: a certificate whose key may sign (`None`: any signer, NFD's
/// `certfile any`) and the modules it may command.
#[derive(Debug, Clone)]
pub struct Grant {
    /// The certificate, or any signer.
    pub certificate: Option<Certificate>,
    /// Module names, of [`MODULES`].
    pub privileges: Vec<String>,
}

/// The validators' state.
#[derive(Debug)]
pub struct Authorizer {
    modules: Vec<(&'static str, ModuleAuth)>,
    rib_localhost: Validator,
    rib_localhop: Validator,
    announcements: Validator,
    replay_localhost: ReplayGuard,
    replay_localhop: ReplayGuard,
}

impl Default for Authorizer {
    fn default() -> Self {
        Authorizer {
            modules: MODULES.iter().map(|m| (*m, ModuleAuth::Any)).collect(),
            rib_localhost: Validator::accept_all(),
            rib_localhop: Validator::accept_all(),
            announcements: Validator::accept_all(),
            replay_localhost: ReplayGuard::new(),
            replay_localhop: ReplayGuard::new(),
        }
    }
}

impl Authorizer {
    /// NFD's default authorization, with empty replay records.
    pub fn new() -> Self {
        Self::default()
    }

    /// Authorization with the `rib` validators `security` configures; reads their trust
    /// anchors now.
    pub fn with_rib_security(
        security: RibSecurity,
    ) -> Result<Self, kite_security::validator::ConfigError> {
        let mut a = Authorizer::default();
        a.set_rib_security(security)?;
        Ok(a)
    }

    /// Sets the `rib` validators' trust schemas; reads their anchors now.
    pub fn set_rib_security(
        &mut self,
        security: RibSecurity,
    ) -> Result<(), kite_security::validator::ConfigError> {
        let v = |p: Option<Policy>| p.map_or_else(|| Ok(Validator::accept_all()), Validator::new);
        self.rib_localhost = v(security.localhost)?;
        self.rib_localhop = v(security.localhop)?;
        self.announcements = v(security.prefix_announcement)?;
        Ok(())
    }

    /// Grants modules as NFD's `authorizations` section does: a module no grant names is
    /// refused to everyone; `certfile any` for a module accepts everything; certificates
    /// accept commands their keys sign. An unknown module name is an error.
    pub fn set_grants(&mut self, grants: Vec<Grant>) -> Result<(), String> {
        let mut modules: Vec<(&'static str, ModuleAuth)> =
            MODULES.iter().map(|m| (*m, ModuleAuth::Nobody)).collect();
        for g in grants {
            for p in &g.privileges {
                let Some((_, auth)) = modules.iter_mut().find(|(m, _)| m == p) else {
                    return Err(format!(
                        "unknown module {p:?} in an authorize entry (one of {})",
                        MODULES.join(", ")
                    ));
                };
                match (&g.certificate, &mut *auth) {
                    (None, _) => *auth = ModuleAuth::Any,
                    (Some(_), ModuleAuth::Any) => {}
                    (Some(c), ModuleAuth::Keys(certs, _)) => certs.push(c.clone()),
                    (Some(c), ModuleAuth::Nobody) => {
                        *auth = ModuleAuth::Keys(vec![c.clone()], ReplayGuard::new());
                    }
                }
            }
        }
        self.modules = modules;
        Ok(())
    }

    /// A module's validator: `certfile any`, or the signer must be one of its certificates'
    /// keys, checked with the certificate, and its timestamp must not be older than the
    /// key's last (NFD's command-Interest policy; no nonce required).
    fn authorize_module(&mut self, cmd: &Command, wire: &Bytes, now_ms: u64) -> Decision {
        let module = cmd.verb.module();
        let Some((_, auth)) = self.modules.iter_mut().find(|(m, _)| *m == module) else {
            return Decision::Reject(format!(
                "unauthorized: module {module} is granted to nobody"
            ));
        };
        let (certs, replay) = match auth {
            ModuleAuth::Any => return Decision::Accept,
            ModuleAuth::Nobody => {
                return Decision::Reject(format!(
                    "unauthorized: module {module} is granted to nobody"
                ))
            }
            ModuleAuth::Keys(certs, replay) => (certs, replay),
        };
        let mut stamp = match Stamp::of(&cmd.signature) {
            None => return Decision::Reject(format!("unsigned: {module} commands must be signed")),
            Some(Err(e)) => return Decision::Reject(format!("unauthorized: {e}")),
            Some(Ok(s)) => s,
        };
        stamp.v03 = false;
        let Some(cert) = certs.iter().find(|c| stamp.key.is_prefix_of(c.name())) else {
            return Decision::Reject(format!(
                "unauthorized: {} is not a key {module} is granted to",
                stamp.key
            ));
        };
        if let Err(e) = replay.check(&stamp, now_ms) {
            return Decision::Reject(format!("unauthorized: {e}"));
        }
        let verified = Packet::interest(wire).ok().is_some_and(|p| {
            cert.verifier()
                .is_ok_and(|v| v.verify_parts(p.sig_type, &p.signed, &p.value).is_ok())
        });
        if !verified {
            return Decision::Reject(format!(
                "unauthorized: signature does not verify with {}",
                cert.name()
            ));
        }
        replay.record(&stamp, now_ms);
        Decision::Accept
    }

    /// Whether `cmd`, which came on face `ingress` as the Interest `wire` at wall-clock
    /// `now_ms` (ms since the Unix epoch), is authorized; if so its stamp is recorded. A
    /// rejection says why, for the log; the command is answered 403.
    pub fn authorize(
        &mut self,
        cmd: &Command,
        wire: &Bytes,
        ingress: u64,
        now_ms: u64,
    ) -> Decision {
        if cmd.verb.module() != "rib" {
            return self.authorize_module(cmd, wire, now_ms);
        }
        let Some(stamp) = Stamp::of(&cmd.signature) else {
            return Decision::Reject("unsigned: rib commands must be signed".into());
        };
        let mut stamp = match stamp {
            Ok(s) => s,
            Err(e) => return Decision::Reject(format!("unauthorized: {e}")),
        };
        let which = match cmd.top {
            TopPrefix::Localhost => Which::Localhost,
            TopPrefix::Localhop => {
                if self.rib_localhop.accepts_all() {
                    // Nothing verifies the key a neighbour names: its records are kept per
                    // face, so that one neighbour's future timestamps cannot lock another
                    // out. A verified key has one record, as in NFD.
                    let face = format!("face-{ingress}");
                    let scope = Component::generic(face.as_bytes());
                    stamp.key =
                        Name::from_components(std::iter::once(scope).chain(stamp.key.iter()));
                }
                Which::Localhop
            }
        };
        if let Err(e) = self.guard(which).check(&stamp, now_ms) {
            return Decision::Reject(format!("unauthorized: {e}"));
        }
        let announcement = match (&cmd.verb, &cmd.announcement) {
            (Verb::RibAnnounce, Some(a)) => match Packet::data(&a.data) {
                Ok(p) => Some(p),
                Err(e) => return Decision::Reject(format!("announcement: {e}")),
            },
            _ => None,
        };
        let step = if self.validator(which).accepts_all() {
            Step::Accept(None)
        } else {
            match Packet::interest(wire) {
                Ok(p) => self.validator(which).validate(p, now_ms / 1000),
                Err(e) => Step::Reject(format!("malformed signature: {e}")),
            }
        };
        self.after(which, which, stamp, announcement, step, now_ms)
    }

    /// Goes on with `waiting` once its certificate came (`None`: not in time).
    pub fn resume(&mut self, waiting: Waiting, fetched: Option<Bytes>, now_ms: u64) -> Decision {
        let Waiting {
            which,
            stamp,
            stamp_of,
            pending,
            announcement,
        } = waiting;
        let step = self
            .validator(which)
            .resume(pending, fetched, now_ms / 1000);
        self.after(which, stamp_of, stamp, announcement, step, now_ms)
    }

    fn after(
        &mut self,
        which: Which,
        stamp_of: Which,
        stamp: Stamp,
        announcement: Option<Packet>,
        step: Step,
        now_ms: u64,
    ) -> Decision {
        match step {
            // The log names the command's signer; say when the announcement's signature is
            // the one refused (its KeyLocator is in `why`).
            Step::Reject(why) if which == Which::Announcement => {
                Decision::Reject(format!("prefix announcement unauthorized: {why}"))
            }
            Step::Reject(why) => Decision::Reject(format!("unauthorized: {why}")),
            Step::Fetch(pending) => Decision::Fetch(Box::new(Waiting {
                which,
                stamp,
                stamp_of,
                pending,
                announcement,
            })),
            Step::Accept(_) => {
                if let Some(pa) = announcement.filter(|_| which != Which::Announcement) {
                    let step = self.announcements.validate(pa, now_ms / 1000);
                    return self.after(Which::Announcement, stamp_of, stamp, None, step, now_ms);
                }
                self.guard(stamp_of).record(&stamp, now_ms);
                Decision::Accept
            }
        }
    }

    fn validator(&mut self, which: Which) -> &mut Validator {
        match which {
            Which::Localhost => &mut self.rib_localhost,
            Which::Localhop => &mut self.rib_localhop,
            Which::Announcement => &mut self.announcements,
        }
    }

    fn guard(&mut self, which: Which) -> &mut ReplayGuard {
        match which {
            Which::Localhop => &mut self.replay_localhop,
            Which::Localhost | Which::Announcement => &mut self.replay_localhost,
        }
    }
}

#[cfg(test)]
mod tests;
