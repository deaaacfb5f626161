//! How management values read in text and JSON: enumeration names as nfdc prints them,
//! timestamps and durations.

use kite_mgmt_proto::nfd::{
    cs_flag_bit, face_flag_bit, route_flags, FacePersistency, FaceScope, FaceState, LinkType,
    RouteOrigin,
};

/// Route origins by name, as nfdc spells them.
const ORIGINS: [(RouteOrigin, &str); 7] = [
    (RouteOrigin::APP, "app"),
    (RouteOrigin::AUTOREG, "autoreg"),
    (RouteOrigin::CLIENT, "client"),
    (RouteOrigin::AUTOCONF, "autoconf"),
    (RouteOrigin::NLSR, "nlsr"),
    (RouteOrigin::PREFIXANN, "prefixann"),
    (RouteOrigin::STATIC, "static"),
];

/// An origin's name, or its number when it has none.
pub fn origin(o: RouteOrigin) -> String {
    ORIGINS
        .iter()
        .find(|(x, _)| *x == o)
        .map_or_else(|| o.0.to_string(), |(_, n)| (*n).to_owned())
}

/// Where a route of origin `o` comes from: `static` (the operator: `kite route add`, the
/// configuration file), `app` (an application on this host: origins app and client),
/// `learned` (a routing protocol or the network: nlsr, prefixann, autoreg, autoconf), or
/// `other` (an origin NFD does not name).
pub fn route_source(o: RouteOrigin) -> &'static str {
    match o {
        RouteOrigin::STATIC => "static",
        RouteOrigin::APP | RouteOrigin::CLIENT => "app",
        RouteOrigin::NLSR
        | RouteOrigin::PREFIXANN
        | RouteOrigin::AUTOREG
        | RouteOrigin::AUTOCONF => "learned",
        _ => "other",
    }
}

/// Parses an origin given as a number or a name (`static`, `nlsr`, …).
pub fn parse_origin(s: &str) -> Result<RouteOrigin, String> {
    if let Ok(n) = s.parse::<u64>() {
        return Ok(RouteOrigin(n));
    }
    ORIGINS
        .iter()
        .find(|(_, n)| *n == s)
        .map(|(o, _)| *o)
        .ok_or_else(|| format!("unknown origin {s:?} (a number or one of: app, autoreg, client, autoconf, nlsr, prefixann, static)"))
}

/// A face persistency's name.
pub fn persistency(p: FacePersistency) -> String {
    match p {
        FacePersistency::PERSISTENT => "persistent".into(),
        FacePersistency::ON_DEMAND => "on-demand".into(),
        FacePersistency::PERMANENT => "permanent".into(),
        FacePersistency(n) => n.to_string(),
    }
}

/// A face scope's name.
pub fn scope(s: FaceScope) -> String {
    match s {
        FaceScope::LOCAL => "local".into(),
        FaceScope::NON_LOCAL => "non-local".into(),
        FaceScope(n) => n.to_string(),
    }
}

/// A link type's name.
pub fn link_type(l: LinkType) -> String {
    match l {
        LinkType::POINT_TO_POINT => "point-to-point".into(),
        LinkType::MULTI_ACCESS => "multi-access".into(),
        LinkType::AD_HOC => "adhoc".into(),
        LinkType(n) => n.to_string(),
    }
}

/// A face's link state (Kite's FaceStatus extension).
pub fn face_state(s: FaceState) -> String {
    match s {
        FaceState::UP => "up".into(),
        FaceState::DOWN => "down".into(),
        FaceState::RECONNECTING => "reconnecting".into(),
        FaceState(n) => n.to_string(),
    }
}

/// Whether bit `bit` of `flags` is set.
pub fn bit(flags: u64, bit: u32) -> bool {
    flags >> bit & 1 == 1
}

/// Face flags as a comma-separated list (`-` when none).
pub fn face_flags(flags: u64) -> String {
    list(&[
        (
            bit(flags, face_flag_bit::LOCAL_FIELDS_ENABLED),
            "local-fields",
        ),
        (
            bit(flags, face_flag_bit::LP_RELIABILITY_ENABLED),
            "lp-reliability",
        ),
        (
            bit(flags, face_flag_bit::CONGESTION_MARKING_ENABLED),
            "congestion-marking",
        ),
    ])
}

/// Route flags as nfdc prints them (`child-inherit|capture`, `none`).
pub fn route_flags(flags: u64) -> String {
    let set = [
        (flags & route_flags::CHILD_INHERIT != 0, "child-inherit"),
        (flags & route_flags::CAPTURE != 0, "capture"),
    ];
    let names: Vec<&str> = set.iter().filter(|(s, _)| *s).map(|(_, n)| *n).collect();
    if names.is_empty() {
        "none".into()
    } else {
        names.join("|")
    }
}

/// CS flag `bit` as `on`/`off`.
pub fn cs_flag(flags: u64, which: u32) -> &'static str {
    on_off(bit(flags, which))
}

/// The CS flag bits, for callers naming them.
pub use cs_flag_bit::{ENABLE_ADMIT, ENABLE_SERVE};

/// `on` or `off`.
pub fn on_off(b: bool) -> &'static str {
    if b {
        "on"
    } else {
        "off"
    }
}

fn list(items: &[(bool, &str)]) -> String {
    let names: Vec<&str> = items.iter().filter(|(s, _)| *s).map(|(_, n)| *n).collect();
    if names.is_empty() {
        "-".into()
    } else {
        names.join(",")
    }
}

/// An optional number, `-` when absent.
pub fn opt(n: Option<u64>) -> String {
    n.map_or_else(|| "-".into(), |n| n.to_string())
}

/// An expiration period in ms, `never` when absent.
pub fn expires(ms: Option<u64>) -> String {
    ms.map_or_else(|| "never".into(), |ms| format!("{}s", ms / 1000))
}

/// Milliseconds since the Unix epoch as ISO 8601 UTC, e.g. `2026-11-22T10:56:11.523Z`.
pub fn timestamp(ms: u64) -> String {
    let (days, rem) = (ms / 86_400_000, ms % 86_400_000);
    let (y, m, d) = civil_from_days(days);
    let (h, min, s, milli) = (
        rem / 3_600_000,
        rem / 60_000 % 60,
        rem / 1000 % 60,
        rem % 1000,
    );
    format!("{y:04}-{m:02}-{d:02}T{h:02}:{min:02}:{s:02}.{milli:03}Z")
}

/// The proleptic Gregorian date `days` after 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + u64::from(m <= 2);
    (y, m, d)
}

/// A duration in ms as `1d 2h 3m 4s` (largest units first, zero units left out).
pub fn uptime(ms: u64) -> String {
    let s = ms / 1000;
    let parts = [
        (s / 86_400, "d"),
        (s / 3600 % 24, "h"),
        (s / 60 % 60, "m"),
        (s % 60, "s"),
    ];
    let text: Vec<String> = parts
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, u)| format!("{n}{u}"))
        .collect();
    if text.is_empty() {
        "0s".into()
    } else {
        text.join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_iso_utc() {
        assert_eq!(timestamp(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(timestamp(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(timestamp(1_795_345_271_538), "2026-11-22T11:01:11.538Z");
    }

    #[test]
    fn uptime_and_flags_read_like_nfdc() {
        assert_eq!(uptime(999), "0s");
        assert_eq!(uptime(93_784_000), "1d 2h 3m 4s");
        assert_eq!(uptime(3_600_000), "1h");
        assert_eq!(route_flags(3), "child-inherit|capture");
        assert_eq!(route_flags(0), "none");
        assert_eq!(face_flags(5), "local-fields,congestion-marking");
        assert_eq!(face_flags(0), "-");
    }

    #[test]
    fn origins_by_name_or_number() {
        assert_eq!(parse_origin("static"), Ok(RouteOrigin::STATIC));
        assert_eq!(parse_origin("128"), Ok(RouteOrigin::NLSR));
        assert_eq!(origin(RouteOrigin(7)), "7");
        assert_eq!(origin(RouteOrigin::CLIENT), "client");
        assert!(parse_origin("bogus").is_err());
    }
}
