//! Values of the configuration file that are more than a number or a string: each checks
//! itself while it is read, so a bad value is reported at its line.

use std::fmt;

use kite_face::FaceUri;
use kite_fw::forwarder::UnsolicitedPolicy;
use kite_fw::strategy::StrategyTable;
use kite_mgmt_proto::nfd::{FacePersistency, RouteOrigin};
use kite_packet::Name;
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use crate::ctl::format;

/// Where strategy names live; a short name (`multicast`) is completed with it.
const STRATEGY_PREFIX: &str = "/localhost/nfd/strategy/";

/// Deserializes `T` from a string through `parse`, which names what is wrong.
fn from_str<'de, D, T>(d: D, parse: impl FnOnce(&str) -> Result<T, String>) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
{
    let s = String::deserialize(d)?;
    parse(&s).map_err(de::Error::custom)
}

/// An NDN name prefix, written in its URI form (`/ndn/edu`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Prefix(pub Name);

impl<'de> Deserialize<'de> for Prefix {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        from_str(d, |s| {
            s.parse()
                .map(Prefix)
                .map_err(|e| format!("{s:?} is not an NDN name: {e}"))
        })
    }
}

impl Serialize for Prefix {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0.to_uri())
    }
}

/// A built-in forwarding strategy, by its full name or its last component (`best-route`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Strategy(pub Name);

impl Strategy {
    fn parse(s: &str) -> Result<Strategy, String> {
        let full = if s.starts_with('/') {
            s.to_owned()
        } else {
            format!("{STRATEGY_PREFIX}{s}")
        };
        let name: Name = full
            .parse()
            .map_err(|e| format!("{s:?} is not a strategy name: {e}"))?;
        let table = StrategyTable::builtin();
        if table.find(&name).is_err() {
            let known: Vec<String> = table.iter().map(|(_, s)| s.name().to_uri()).collect();
            return Err(format!(
                "unknown strategy {s:?} (built in: {})",
                known.join(", ")
            ));
        }
        Ok(Strategy(name))
    }
}

impl<'de> Deserialize<'de> for Strategy {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        from_str(d, Strategy::parse)
    }
}

impl Serialize for Strategy {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0.to_uri())
    }
}

/// A face URI, canonized as `kite face create` does (`udp://host` picks the family and the
/// default port).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Uri(pub FaceUri);

impl Uri {
    fn parse(s: &str) -> Result<Uri, String> {
        FaceUri::canonize(s)
            .map(Uri)
            .map_err(|e| format!("{s:?} is not a usable face URI: {e}"))
    }
}

impl<'de> Deserialize<'de> for Uri {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        from_str(d, Uri::parse)
    }
}

impl Serialize for Uri {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0.to_string())
    }
}

impl fmt::Display for Uri {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A log filter: comma-separated directives, each a level (`info`) or `TARGET=LEVEL`
/// (`kite_runtime=debug`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct LogFilter(pub String);

/// The levels a directive may name, quietest first.
const LOG_LEVELS: [&str; 6] = ["off", "error", "warn", "info", "debug", "trace"];

impl LogFilter {
    /// Checks the directives strictly. `tracing`'s own parser takes a word it does not know
    /// as a target (`inf`, `verbose`) and so silently logs nothing; here a level must be one
    /// of off, error, warn, info, debug, trace (any case), and a target a module path under
    /// Kite's crates (`kite`, `kite_*`).
    pub fn parse(s: &str) -> Result<LogFilter, String> {
        let bad = |why: String| format!("{s:?} is not a log filter: {why}");
        if s.trim().is_empty() {
            return Err(bad(
                "it is empty (levels: off, error, warn, info, debug, trace)".into(),
            ));
        }
        let mut directives = Vec::new();
        for directive in s.split(',') {
            let directive = match directive.split_once('=') {
                None => check_level(directive.trim()).map(|()| directive.trim().to_owned()),
                Some((target, level)) => {
                    let (target, level) = (target.trim(), level.trim());
                    check_target(target)
                        .and_then(|()| check_level(level))
                        .map(|()| format!("{target}={level}"))
                }
            };
            directives.push(directive.map_err(bad)?);
        }
        // Spaces around the directives are dropped, as `tracing` takes none.
        let filter = directives.join(",");
        tracing_subscriber::EnvFilter::try_new(&filter)
            .map(|_| LogFilter(filter))
            .map_err(|e| bad(e.to_string()))
    }
}

fn check_level(level: &str) -> Result<(), String> {
    if LOG_LEVELS.iter().any(|l| l.eq_ignore_ascii_case(level)) {
        return Ok(());
    }
    let what = if level.is_empty() {
        "a directive has no level".to_owned()
    } else {
        format!("unknown level {level:?}")
    };
    Err(format!(
        "{what} (levels: {}; or TARGET=LEVEL, e.g. kite_fw=debug)",
        LOG_LEVELS.join(", ")
    ))
}

fn check_target(target: &str) -> Result<(), String> {
    let ident = |p: &str| {
        let mut c = p.chars();
        c.next()
            .is_some_and(|f| f.is_ascii_alphabetic() || f == '_')
            && c.all(|x| x.is_ascii_alphanumeric() || x == '_')
    };
    let root = target.split("::").next().unwrap_or_default();
    if target.split("::").all(ident) && (root == "kite" || root.starts_with("kite_")) {
        return Ok(());
    }
    Err(format!(
        "unknown target {target:?} (a module path under kite, kite_fw, kite_face, \
         kite_mgmt_proto, ...: e.g. kite_runtime=debug)"
    ))
}

impl<'de> Deserialize<'de> for LogFilter {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        from_str(d, LogFilter::parse)
    }
}

/// A route origin: a number or a name as nfdc spells it (`static`, `nlsr`, …).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Origin(pub RouteOrigin);

impl Default for Origin {
    fn default() -> Self {
        Origin(RouteOrigin::STATIC)
    }
}

impl<'de> Deserialize<'de> for Origin {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NumberOrText(
            "a route origin (a number or a name)",
            |v: Result<u64, &str>| {
                Ok(match v {
                    Ok(n) => Origin(RouteOrigin(n)),
                    Err(s) => Origin(format::parse_origin(s)?),
                })
            },
        ))
    }
}

impl Serialize for Origin {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let name = format::origin(self.0);
        if name == self.0 .0.to_string() {
            s.serialize_u64(self.0 .0)
        } else {
            s.serialize_str(&name)
        }
    }
}

/// The face a route goes to: a FaceId, or the URI of a face the file declares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FaceRef {
    /// A FaceId.
    Id(u64),
    /// A remote face URI.
    Uri(Uri),
}

impl<'de> Deserialize<'de> for FaceRef {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NumberOrText(
            "a FaceId or a face URI",
            |v: Result<u64, &str>| match v {
                Ok(id) => Ok(FaceRef::Id(id)),
                Err(s) => Uri::parse(s).map(FaceRef::Uri),
            },
        ))
    }
}

impl Serialize for FaceRef {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            FaceRef::Id(id) => s.serialize_u64(*id),
            FaceRef::Uri(u) => u.serialize(s),
        }
    }
}

impl fmt::Display for FaceRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FaceRef::Id(id) => write!(f, "face {id}"),
            FaceRef::Uri(u) => write!(f, "face {u}"),
        }
    }
}

/// Reads a value written either as a non-negative integer or as a string.
struct NumberOrText<F>(&'static str, F);

impl<T, F> Visitor<'_> for NumberOrText<F>
where
    F: FnOnce(Result<u64, &str>) -> Result<T, String>,
{
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<T, E> {
        (self.1)(Ok(v)).map_err(E::custom)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<T, E> {
        match u64::try_from(v) {
            Ok(v) => self.visit_u64(v),
            Err(_) => Err(E::custom(format!("{v} is negative; expected {}", self.0))),
        }
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        (self.1)(Err(v)).map_err(E::custom)
    }
}

/// How a face an operator makes survives failures: the persistencies `faces/create` accepts,
/// as the configuration file's `persistency` and `kite face create --persistency` name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum Persistency {
    /// Closed on the first failure.
    #[default]
    Persistent,
    /// Kept up: a TCP face dials its peer again after failures.
    Permanent,
}

impl From<Persistency> for FacePersistency {
    fn from(p: Persistency) -> Self {
        match p {
            Persistency::Persistent => FacePersistency::PERSISTENT,
            Persistency::Permanent => FacePersistency::PERMANENT,
        }
    }
}

/// What to do with Data nobody asked for (NFD's `cs_unsolicited_policy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Unsolicited {
    /// Drop it.
    #[default]
    DropAll,
    /// Cache it when it comes from a local face.
    AdmitLocal,
    /// Cache it when it comes from a non-local face.
    AdmitNetwork,
    /// Cache it.
    AdmitAll,
}

impl From<Unsolicited> for UnsolicitedPolicy {
    fn from(u: Unsolicited) -> Self {
        match u {
            Unsolicited::DropAll => UnsolicitedPolicy::DropAll,
            Unsolicited::AdmitLocal => UnsolicitedPolicy::AdmitLocal,
            Unsolicited::AdmitNetwork => UnsolicitedPolicy::AdmitNetwork,
            Unsolicited::AdmitAll => UnsolicitedPolicy::AdmitAll,
        }
    }
}
