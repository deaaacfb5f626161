//! Who may send which management command: NFD's authorization, one validator per module,
//! each with its own state.
//!
//! - `rib` commands under `/localhost/nfd` and under `/localhop/nfd` each have a validator
//!   (NFD's `rib.localhost_security` and `rib.localhop_security`: a trust schema in ndn-cxx's
//!   validator format, `trust-anchor any` unless configured), both requiring a signed command
//!   even when they trust any key, each with its own [`ReplayGuard`]. The prefix announcement
//!   a `rib/announce` carries is checked by a third (`prefix_announcement_validation`).
//! - The other modules (faces, fib, cs, strategy-choice, and Kite's kite-strategy) accept
//!   every command, signed or not, as NFD's default `authorize certfile any` does: that
//!   validator checks no signature, hence no timestamp either. Only scope keeps these
//!   commands to local applications.
//!
//! Keeping the records apart matters: a program with several command signers (NLSR has
//! three, each stamping its commands ahead of the clock on its own) sends a faces command
//! stamped earlier than its last rib command, and NFD accepts it.
//!
//! A validator may need a certificate it does not have: [`Authorizer::authorize`] then
//! answers [`Decision::Fetch`], and the caller fetches it and calls [`Authorizer::resume`].
//! A command's stamp is recorded only once it is accepted.

use bytes::Bytes;
use kite_mgmt::command::{Command, TopPrefix, Verb};
use kite_packet::{Component, Name};
use kite_security::validator::{Packet, Pending, Policy, Step, Validator};

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

/// The validators' state.
#[derive(Debug)]
pub struct Authorizer {
    rib_localhost: Validator,
    rib_localhop: Validator,
    announcements: Validator,
    replay_localhost: ReplayGuard,
    replay_localhop: ReplayGuard,
}

impl Default for Authorizer {
    fn default() -> Self {
        Authorizer {
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
        let v = |p: Option<Policy>| p.map_or_else(|| Ok(Validator::accept_all()), Validator::new);
        Ok(Authorizer {
            rib_localhost: v(security.localhost)?,
            rib_localhop: v(security.localhop)?,
            announcements: v(security.prefix_announcement)?,
            ..Authorizer::default()
        })
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
            return Decision::Accept;
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
