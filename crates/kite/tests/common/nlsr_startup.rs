//! The recording of NLSR's start-up commands, `tests/fixtures/nlsr-startup.txt`: its line
//! format, written by the recording test in `e2e_nlsr.rs` and read by `e2e_nlsr_startup.rs`,
//! which replays it. One line per signed management command, fields separated by spaces:
//!
//! ```text
//! <send_ms> <signer> <controller> <sig_ms> <format> <module>/<verb> <status> [<Field>=<value>...]
//! ```
//!
//! - `send_ms`: when the command left NLSR, ms after the first command did;
//! - `signer`: the identity of the signing key, relative to the router: `router` (the router's
//!   own key, ndn-cxx's default identity) or `router/nlsr` (the NLSR instance key NLSR makes at
//!   start, `<router>/nlsr`);
//! - `controller`: which of NLSR's command signers made it, each with its own last-timestamp
//!   state (ndn-cxx gives every `nfd::Controller` its own `InterestSigner`): `face` (the
//!   controller inside `ndn::Face`, behind `registerPrefix` and `setInterestFilter`: rib/register
//!   without FaceId), `fib` (NLSR's routing table: strategy-choice, and rib commands with Origin
//!   nlsr and a FaceId), `nlsr` (faces/update); inferred from the command, as the wire does
//!   not show it;
//! - `sig_ms`: SignatureTime minus the first command's SignatureTime, in ms;
//! - `format`: `v0.3` (InterestSignatureInfo with SignatureTime and SignatureNonce) or `v0.2`
//!   (the older four name components);
//! - `status`: the StatusCode the forwarder that was recorded answered;
//! - the ControlParameters: `Name`, `FaceId` (`neighbour`: the face to the configured
//!   neighbour, whatever its number), `Origin`, `Cost`, `Flags`, `Mask`, `ExpirationPeriod`
//!   (ms), `Strategy`, in that order, each only when present.
//!
//! Lines starting with `#` are comments.

use kite_mgmt_proto::nfd::RouteOrigin;
use kite_mgmt_proto::ControlParameters;

/// One recorded command.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    pub send_ms: u64,
    pub signer: String,
    pub controller: String,
    pub sig_ms: i64,
    pub format: String,
    /// `module/verb`.
    pub command: String,
    pub status: u64,
    /// The parameters; FaceId is left out when it is the neighbour's ([`Recorded::neighbour`]).
    pub params: ControlParameters,
    /// Whether FaceId named the face to the neighbour.
    pub neighbour: bool,
}

/// Which controller sent a command (see the module documentation), from its module/verb and
/// whether it names a FaceId.
pub fn controller(command: &str, names_face: bool) -> &'static str {
    match command {
        "faces/update" => "nlsr",
        "rib/register" | "rib/unregister" if !names_face => "face",
        _ => "fib",
    }
}

impl Recorded {
    /// The line for the fixture.
    pub fn to_line(&self) -> String {
        let p = &self.params;
        let mut fields = vec![
            self.send_ms.to_string(),
            self.signer.clone(),
            self.controller.clone(),
            self.sig_ms.to_string(),
            self.format.clone(),
            self.command.clone(),
            self.status.to_string(),
        ];
        if let Some(n) = &p.name {
            fields.push(format!("Name={n}"));
        }
        if self.neighbour {
            fields.push("FaceId=neighbour".into());
        } else if let Some(f) = p.face_id {
            fields.push(format!("FaceId={f}"));
        }
        let numbers = [
            ("Origin", p.origin.map(|o| o.0)),
            ("Cost", p.cost),
            ("Flags", p.flags),
            ("Mask", p.mask),
            ("ExpirationPeriod", p.expiration_period),
        ];
        for (k, v) in numbers {
            if let Some(v) = v {
                fields.push(format!("{k}={v}"));
            }
        }
        if let Some(s) = &p.strategy {
            fields.push(format!("Strategy={s}"));
        }
        fields.join(" ")
    }

    /// Parses a line written by [`Recorded::to_line`].
    pub fn parse(line: &str) -> Result<Recorded, String> {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 7 {
            return Err(format!("fewer than 7 fields: {line}"));
        }
        let num = |s: &str| s.parse::<u64>().map_err(|e| format!("{s}: {e} in {line}"));
        let mut r = Recorded {
            send_ms: num(f[0])?,
            signer: f[1].to_string(),
            controller: f[2].to_string(),
            sig_ms: f[3].parse().map_err(|e| format!("{}: {e}", f[3]))?,
            format: f[4].to_string(),
            command: f[5].to_string(),
            status: num(f[6])?,
            params: ControlParameters::default(),
            neighbour: false,
        };
        for kv in &f[7..] {
            let (k, v) = kv
                .split_once('=')
                .ok_or_else(|| format!("{kv} is not Field=value"))?;
            let name = || v.parse().map_err(|_| format!("bad name {v}"));
            let p = &mut r.params;
            match k {
                "Name" => p.name = Some(name()?),
                "FaceId" if v == "neighbour" => r.neighbour = true,
                "FaceId" => p.face_id = Some(num(v)?),
                "Origin" => p.origin = Some(RouteOrigin(num(v)?)),
                "Cost" => p.cost = Some(num(v)?),
                "Flags" => p.flags = Some(num(v)?),
                "Mask" => p.mask = Some(num(v)?),
                "ExpirationPeriod" => p.expiration_period = Some(num(v)?),
                "Strategy" => p.strategy = Some(name()?),
                _ => return Err(format!("unknown field {k}")),
            }
        }
        Ok(r)
    }
}

/// The commands of a fixture, in order.
pub fn parse(text: &str) -> Vec<Recorded> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| Recorded::parse(l).unwrap_or_else(|e| panic!("fixture: {e}")))
        .collect()
}

/// Where the fixture lives.
pub fn fixture_path() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/nlsr-startup.txt")
}
