//! What management logs: each command with its status code (info; warn when refused as
//! unsigned, unauthorized or invalid), datasets (debug), and route changes it makes on its
//! own (expiry, a face's routes going with it). Command lines go through a budget of
//! [`COMMAND_LINES`] a second: any local application may send commands as fast as it likes.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use kite_runtime::lograte::LineBudget;

use kite_mgmt_proto::command::{Command, CommandSignature};
use kite_mgmt_proto::{ControlParameters, ControlResponse};

/// Command lines written per second at most; the next line says how many were not.
pub(super) const COMMAND_LINES: u32 = 50;

/// The budget of command lines.
pub(super) fn budget() -> LineBudget {
    LineBudget::new(COMMAND_LINES, Duration::from_secs(1))
}

/// The parameters a command carried, as `key=value` pairs for grep.
pub(super) fn parameters(p: &ControlParameters) -> String {
    let mut s = String::new();
    let mut put = |k: &str, v: &dyn std::fmt::Display| {
        let sep = if s.is_empty() { "" } else { " " };
        let _ = write!(s, "{sep}{k}={v}");
    };
    if let Some(v) = &p.name {
        put("name", v);
    }
    if let Some(v) = p.face_id {
        put("face", &v);
    }
    if let Some(v) = &p.uri {
        put("uri", v);
    }
    if let Some(v) = &p.local_uri {
        put("local", v);
    }
    if let Some(v) = &p.strategy {
        put("strategy", v);
    }
    if let Some(v) = p.origin {
        put("origin", &v.0);
    }
    if let Some(v) = p.cost {
        put("cost", &v);
    }
    if let Some(v) = p.face_persistency {
        put("persistency", &v.0);
    }
    if let Some(v) = p.capacity {
        put("capacity", &v);
    }
    if let Some(v) = p.count {
        put("count", &v);
    }
    if let Some(v) = p.flags {
        put("flags", &v);
    }
    if let Some(v) = p.mask {
        put("mask", &v);
    }
    if let Some(v) = p.expiration_period {
        put("expires_ms", &v);
    }
    if let Some(v) = p.mtu {
        put("mtu", &v);
    }
    s
}

/// Who signed a command: the key its replay record is kept for (the KeyLocator name, or
/// ndn-cxx's `/localhost/identity/digest-sha256` for DigestSha256), `no-key-name` for a
/// keyed signature without a KeyLocator name, or `unsigned`.
pub(super) fn signer(c: &CommandSignature) -> String {
    match crate::replay::Stamp::of(c) {
        None => "unsigned".into(),
        Some(Ok(stamp)) => stamp.key.to_string(),
        Some(Err(_)) => "no-key-name".into(),
    }
}

/// A command carried out (or failed while being carried out), with its answer.
pub(super) fn executed(
    budget: &mut LineBudget,
    command: &str,
    params: &str,
    ingress: u64,
    resp: &ControlResponse,
) {
    let Some(suppressed) = budget.allow(Instant::now()) else {
        return;
    };
    let (status, text) = (resp.status_code, resp.status_text.as_str());
    if status == 200 {
        tracing::info!(%command, status, ?params, ingress, suppressed, "command executed");
    } else {
        tracing::info!(%command, status, ?text, ?params, ingress, suppressed, "command failed");
    }
}

/// A command refused before it was carried out: unsigned, unauthorized or invalid.
pub(super) fn refused(
    budget: &mut LineBudget,
    cmd: &Command,
    ingress: u64,
    status: u64,
    why: &str,
) {
    let Some(suppressed) = budget.allow(Instant::now()) else {
        return;
    };
    let command = format!("{}/{}", cmd.verb.module(), cmd.verb.verb());
    let mut params = parameters(&cmd.params);
    if let Some(a) = &cmd.announcement {
        // rib/announce names its prefix in the announcement, not in ControlParameters.
        let sep = if params.is_empty() { "" } else { " " };
        let _ = write!(params, "{sep}announced={}", a.announced_name);
    }
    let signer = signer(&cmd.signature);
    tracing::warn!(
        %command,
        status,
        ?why,
        ?params,
        %signer,
        ingress,
        suppressed,
        "command refused"
    );
}

/// A command Interest that is no command (NFD drops it without an answer).
pub(super) fn malformed(
    budget: &mut LineBudget,
    name: &kite_packet::Name,
    ingress: u64,
    why: &str,
) {
    let Some(suppressed) = budget.allow(Instant::now()) else {
        return;
    };
    tracing::warn!(%name, ingress, ?why, suppressed, "command refused: not a valid command, not answered");
}

/// Lines the budget refused in a window that ended, when no later line carried the count.
pub(super) fn summary(budget: &mut LineBudget) {
    let n = budget.take_suppressed(Instant::now());
    if n > 0 {
        tracing::info!(
            count = n,
            "command lines not written (more than {COMMAND_LINES} a second)"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kite_mgmt_proto::nfd::RouteOrigin;

    #[test]
    fn parameters_read_as_key_value_pairs() {
        let p = ControlParameters {
            name: Some("/a/b".parse().unwrap()),
            face_id: Some(257),
            origin: Some(RouteOrigin::STATIC),
            cost: Some(10),
            ..ControlParameters::default()
        };
        assert_eq!(parameters(&p), "name=/a/b face=257 origin=255 cost=10");
        assert_eq!(parameters(&ControlParameters::default()), "");
    }
}
