//! The URI form of names: `/a/b`, `%xx` escapes, `seg=3`, `v=7`, `32=meta`,
//! `sha256digest=…`, `params-sha256=…`, and `<type>=…` for any other type.

use core::fmt;

use bytes::BytesMut;
use thiserror::Error;

use super::{Component, Name, Offsets, MAX_NAME_VALUE_LEN};
use crate::tlv_type;
use crate::varnum::{nonneg_len, put_nonneg, read_nonneg};

/// Why a string is not a valid name URI.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum UriError {
    /// `//` inside a name: a component must have at least one character (`...` is the empty
    /// component).
    #[error("empty component in {0:?} (write the empty component as \"...\")")]
    EmptyComponent(String),
    /// `.` and `..` are not components (they would be ambiguous in URIs).
    #[error("component {0:?} is not allowed: add three periods, as in \"....\"")]
    DotComponent(String),
    /// A `%` not followed by two hexadecimal digits.
    #[error("bad percent-escape in {0:?}")]
    BadEscape(String),
    /// `<type>=` with a type outside 1..=65535.
    #[error("component type in {0:?} must be a number from 1 to 65535")]
    BadType(String),
    /// `seg=`, `v=`, … with something that is not a decimal number.
    #[error("{0:?} needs a decimal number")]
    BadNumber(String),
    /// The name would exceed [`MAX_NAME_VALUE_LEN`] octets.
    #[error("name of {0} octets is longer than the 65535 Kite accepts")]
    TooLong(usize),
    /// `sha256digest=` / `params-sha256=` without 64 hexadecimal digits.
    #[error("{0:?} needs 64 hexadecimal digits")]
    BadDigest(String),
}

/// URI prefixes of the naming conventions' number components.
const NUMBER_ALIASES: [(&str, u64); 5] = [
    ("seg", tlv_type::SEGMENT_NAME_COMPONENT),
    ("off", tlv_type::BYTE_OFFSET_NAME_COMPONENT),
    ("v", tlv_type::VERSION_NAME_COMPONENT),
    ("t", tlv_type::TIMESTAMP_NAME_COMPONENT),
    ("seq", tlv_type::SEQUENCE_NUM_NAME_COMPONENT),
];

/// URI prefixes of the digest components.
const DIGEST_ALIASES: [(&str, u64); 2] = [
    ("sha256digest", tlv_type::IMPLICIT_SHA256_DIGEST_COMPONENT),
    (
        "params-sha256",
        tlv_type::PARAMETERS_SHA256_DIGEST_COMPONENT,
    ),
];

/// Writes one component in URI form.
pub(super) fn write_component(f: &mut fmt::Formatter<'_>, c: Component<'_>) -> fmt::Result {
    let typ = c.typ();
    if let Some((alias, _)) = DIGEST_ALIASES.iter().find(|(_, t)| *t == typ) {
        f.write_str(alias)?;
        f.write_str("=")?;
        for b in c.value() {
            write!(f, "{b:02x}")?;
        }
        return Ok(());
    }
    if let Some((alias, _)) = NUMBER_ALIASES.iter().find(|(_, t)| *t == typ) {
        // Only the shortest encoding: `v=7` must parse back to the same octets.
        match read_nonneg(typ, c.value()) {
            Ok(n) if nonneg_len(n) == c.value().len() => return write!(f, "{alias}={n}"),
            _ => {}
        }
    }
    if typ != tlv_type::GENERIC_NAME_COMPONENT {
        write!(f, "{typ}=")?;
    }
    write_escaped(f, c.value())
}

/// Writes a value with every octet outside the URI unreserved set percent-escaped; a value of
/// periods only (including the empty value) gets three more periods. Runs of unreserved octets
/// are written at once.
fn write_escaped(f: &mut fmt::Formatter<'_>, v: &[u8]) -> fmt::Result {
    if v.iter().all(|&b| b == b'.') {
        f.write_str("...")?;
    }
    let unreserved = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~');
    let mut rest = v;
    while !rest.is_empty() {
        let run = rest
            .iter()
            .position(|&b| !unreserved(b))
            .unwrap_or(rest.len());
        if run > 0 {
            // Unreserved octets are ASCII.
            f.write_str(core::str::from_utf8(&rest[..run]).map_err(|_| fmt::Error)?)?;
            rest = &rest[run..];
            continue;
        }
        let b = rest[0];
        let e = [
            b'%',
            HEX_UPPER[usize::from(b >> 4)],
            HEX_UPPER[usize::from(b & 15)],
        ];
        f.write_str(core::str::from_utf8(&e).map_err(|_| fmt::Error)?)?;
        rest = &rest[1..];
    }
    Ok(())
}

/// Upper-case hexadecimal digits, for percent-escapes.
const HEX_UPPER: &[u8; 16] = b"0123456789ABCDEF";

/// Parses a name URI; an `ndn:` scheme and the leading `/` are optional.
///
/// One pass that writes each component's TLV into the name's buffer, through one scratch
/// value: no allocation per component, so a long hostile URI costs time linear in its length
/// with a small constant.
pub(super) fn parse_name(uri: &str) -> Result<Name, UriError> {
    let path = uri.strip_prefix("ndn:").unwrap_or(uri);
    let path = path.strip_prefix('/').unwrap_or(path);
    let path = path.strip_suffix('/').unwrap_or(path);
    if path.is_empty() {
        return Ok(Name::root());
    }
    // A component's TLV is at most its text plus a 3-octet type and a 3-octet length.
    let mut buf = BytesMut::with_capacity(path.len().min(MAX_NAME_VALUE_LEN) + 8);
    let mut starts = Offsets::new();
    let mut value = Vec::new();
    // Octets of the whole name; past MAX_NAME_VALUE_LEN the rest is parsed (a bad component
    // is still reported as such) but no longer written.
    let mut len = 0usize;
    for text in path.split('/') {
        value.clear();
        let typ = parse_component(text, &mut value)?;
        let c = Component::new(typ, &value).ok_or_else(|| UriError::BadType(typ.to_string()))?;
        let at = len;
        len += c.encoded_len();
        if len <= MAX_NAME_VALUE_LEN {
            starts.push(at as u16);
            c.encode(&mut buf);
        }
    }
    if len > MAX_NAME_VALUE_LEN {
        return Err(UriError::TooLong(len));
    }
    Ok(Name::from_parts(buf.freeze(), starts))
}

/// Parses one component's URI form: its value goes to `value` (empty on entry), its type is
/// returned.
fn parse_component(text: &str, value: &mut Vec<u8>) -> Result<u64, UriError> {
    if text.is_empty() {
        return Err(UriError::EmptyComponent(text.into()));
    }
    let Some((prefix, rest)) = text.split_once('=') else {
        unescape(text, value)?;
        return Ok(tlv_type::GENERIC_NAME_COMPONENT);
    };
    if let Some(&(_, typ)) = DIGEST_ALIASES.iter().find(|(a, _)| *a == prefix) {
        parse_digest(text, rest, value)?;
        return Ok(typ);
    }
    if let Some(&(_, typ)) = NUMBER_ALIASES.iter().find(|(a, _)| *a == prefix) {
        let n: u64 = parse_decimal(rest).ok_or_else(|| UriError::BadNumber(text.into()))?;
        put_nonneg(value, n);
        return Ok(typ);
    }
    if !prefix.is_empty() && prefix.bytes().all(|b| b.is_ascii_digit()) {
        let typ = parse_decimal(prefix)
            .filter(|t| (1..=0xFFFF).contains(t))
            .ok_or_else(|| UriError::BadType(text.into()))?;
        unescape(rest, value)?;
        let is_digest = DIGEST_ALIASES.iter().any(|(_, t)| *t == typ);
        if is_digest && value.len() != 32 {
            return Err(UriError::BadDigest(text.into()));
        }
        return Ok(typ);
    }
    // An '=' that does not introduce a type is part of a generic value.
    unescape(text, value)?;
    Ok(tlv_type::GENERIC_NAME_COMPONENT)
}

/// A decimal number of digits only (no sign, no spaces).
fn parse_decimal(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Decodes 64 hexadecimal digits into `out`.
fn parse_digest(text: &str, hex: &str, out: &mut Vec<u8>) -> Result<(), UriError> {
    let bad = || UriError::BadDigest(text.into());
    if hex.len() != 64 {
        return Err(bad());
    }
    for p in hex.as_bytes().chunks(2) {
        out.push(
            hex_val(p[0])
                .zip(hex_val(p[1]))
                .ok_or_else(bad)
                .map(|(h, l)| h << 4 | l)?,
        );
    }
    Ok(())
}

/// Undoes percent-escapes and the extra periods of period-only values, into `out`.
fn unescape(text: &str, out: &mut Vec<u8>) -> Result<(), UriError> {
    let bytes = text.as_bytes();
    if bytes.iter().all(|&b| b == b'.') {
        return match bytes.len() {
            0..=2 => Err(UriError::DotComponent(text.into())),
            n => {
                out.resize(n - 3, b'.');
                Ok(())
            }
        };
    }
    out.reserve(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hi = bytes.get(i + 1).copied().and_then(hex_val);
            let lo = bytes.get(i + 2).copied().and_then(hex_val);
            match (hi, lo) {
                (Some(h), Some(l)) => out.push(h << 4 | l),
                _ => return Err(UriError::BadEscape(text.into())),
            }
            i += 3;
        } else {
            // The run up to the next escape, copied at once.
            let run = bytes[i..]
                .iter()
                .position(|&b| b == b'%')
                .unwrap_or(bytes.len() - i);
            out.extend_from_slice(&bytes[i..i + run]);
            i += run;
        }
    }
    Ok(())
}

/// The value of one hexadecimal digit.
fn hex_val(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(uri: &str) -> String {
        Name::from_uri(uri).unwrap().to_uri()
    }

    #[test]
    fn typed_components_both_ways() {
        assert_eq!(round("/a/seg=3/v=7/32=meta"), "/a/seg=3/v=7/32=meta");
        assert_eq!(round("/off=1/t=2/seq=3"), "/off=1/t=2/seq=3");
        assert_eq!(round("ndn:/8=abc/9=x"), "/abc/9=x");
        let d = "a".repeat(64);
        assert_eq!(
            round(&format!(
                "/sha256digest={d}/params-sha256={}",
                "0".repeat(64)
            )),
            format!("/sha256digest={d}/params-sha256={}", "0".repeat(64))
        );
        let n = Name::from_uri("/seg=300").unwrap();
        assert_eq!(n.get(0).unwrap().value(), &[1, 44]);
    }

    #[test]
    fn escapes_and_periods() {
        assert_eq!(round("/%00%01/a%2Fb/~x_y-z.w"), "/%00%01/a%2Fb/~x_y-z.w");
        assert_eq!(round("/a b"), "/a%20b");
        assert_eq!(round("/..."), "/...");
        assert_eq!(round("/...."), "/....");
        assert_eq!(Name::from_uri("/...").unwrap().get(0).unwrap().value(), b"");
        assert_eq!(
            Name::from_uri("/.....").unwrap().get(0).unwrap().value(),
            b".."
        );
        assert_eq!(round("/9=..."), "/9=...");
        assert_eq!(round("/"), "/");
        assert_eq!(round("/a/"), "/a");
        assert_eq!(round("a/b"), "/a/b");
        assert_eq!(round("/x=y"), "/x%3Dy");
        // a number type whose value is not a NonNegativeInteger prints opaquely
        let odd = Name::from_components([Component::new(50, &[1, 2, 3]).unwrap()]);
        assert_eq!(odd.to_uri(), "/50=%01%02%03");
        assert_eq!(Name::from_uri(&odd.to_uri()).unwrap(), odd);
        // so does a number that is not in its shortest form (found by fuzzing)
        let long =
            Name::from_components([Component::new(54, &[0, 0, 0, 0, 0, 0, 0, 111]).unwrap()]);
        assert_eq!(long.to_uri(), "/54=%00%00%00%00%00%00%00o");
        assert_eq!(Name::from_uri(&long.to_uri()).unwrap(), long);
    }

    #[test]
    fn bad_uris_are_typed_errors() {
        assert!(matches!(
            Name::from_uri("/a//b"),
            Err(UriError::EmptyComponent(_))
        ));
        assert!(matches!(
            Name::from_uri("/a/./b"),
            Err(UriError::DotComponent(_))
        ));
        assert!(matches!(
            Name::from_uri("/a/.."),
            Err(UriError::DotComponent(_))
        ));
        assert!(matches!(Name::from_uri("/%4"), Err(UriError::BadEscape(_))));
        assert!(matches!(
            Name::from_uri("/%zz"),
            Err(UriError::BadEscape(_))
        ));
        assert!(matches!(Name::from_uri("/0=a"), Err(UriError::BadType(_))));
        assert!(matches!(
            Name::from_uri("/65536=a"),
            Err(UriError::BadType(_))
        ));
        assert!(matches!(
            Name::from_uri("/seg=x"),
            Err(UriError::BadNumber(_))
        ));
        assert!(matches!(
            Name::from_uri("/seg=-1"),
            Err(UriError::BadNumber(_))
        ));
        assert!(matches!(
            Name::from_uri("/v=99999999999999999999"),
            Err(UriError::BadNumber(_))
        ));
        assert!(matches!(
            Name::from_uri("/sha256digest=ab"),
            Err(UriError::BadDigest(_))
        ));
        assert!(matches!(
            Name::from_uri(&format!("/params-sha256={}", "g".repeat(64))),
            Err(UriError::BadDigest(_))
        ));
    }

    #[test]
    fn the_longest_name_parses_and_one_octet_more_is_too_long() {
        // 21845 components of 1 octet (3 octets each) fill 65535 octets exactly.
        let longest = "/a".repeat(MAX_NAME_VALUE_LEN / 3);
        let n = Name::from_uri(&longest).unwrap();
        assert_eq!((n.len(), n.value().len()), (21845, MAX_NAME_VALUE_LEN));
        assert_eq!(n.to_uri(), longest);
        assert_eq!(
            Name::from_uri(&format!("{longest}/b")),
            Err(UriError::TooLong(MAX_NAME_VALUE_LEN + 3))
        );
        // A bad component after the limit is still reported as such.
        assert!(matches!(
            Name::from_uri(&format!("{longest}/b/%zz")),
            Err(UriError::BadEscape(_))
        ));
    }

    #[test]
    fn escapes_between_runs_of_plain_octets_round_trip() {
        let v: Vec<u8> = (0..=255u8).chain(b"plain".iter().copied()).collect();
        let name = Name::from_components([Component::generic(&v)]);
        let uri = name.to_uri();
        assert!(uri.starts_with("/%00%01%02"), "{uri}");
        assert!(uri.contains("%2C-.%2F0123456789%3A"), "{uri}");
        assert!(uri.ends_with("%FE%FFplain"), "{uri}");
        assert_eq!(Name::from_uri(&uri).unwrap(), name);
    }
}
