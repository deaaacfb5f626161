//! PrefixAnnouncement: the signed Data `rib/announce` carries in ApplicationParameters.
//!
//! Its name is `/<announced prefix>/32=PA/<version>/<segment>`, its ContentType is
//! PrefixAnn (5), and its Content holds ExpirationPeriod (ms) and an optional ValidityPeriod.
//! The route it yields has origin prefixann, cost 2048 and CHILD_INHERIT (NFD `rib/route.cpp`).

use bytes::Bytes;
use kite_packet::signature::days_from_civil;
use kite_packet::tlv::Reader;
use kite_packet::{tlv_type, ContentType, Data, DecodeError, Name, ValidityPeriod};
use thiserror::Error;

use crate::nfd::{self as t};

/// Cost NFD gives routes made from a prefix announcement.
pub const PREFIX_ANNOUNCEMENT_ROUTE_COST: u64 = 2048;

/// Why a Data is not a valid PrefixAnnouncement.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum AnnounceError {
    /// The Data (or its Content) does not decode.
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// The name does not end in `32=PA/<version>/<segment>`.
    #[error("name is not /<prefix>/32=PA/<version>/<segment>")]
    BadName,
    /// ContentType is not PrefixAnn.
    #[error("ContentType is not PrefixAnn")]
    BadContentType,
}

/// A decoded prefix announcement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrefixAnnouncement {
    /// The announced prefix.
    pub announced_name: Name,
    /// ExpirationPeriod in ms.
    pub expiration_period: u64,
    /// ValidityPeriod, when present.
    pub validity: Option<ValidityPeriod>,
    /// The whole Data, for signature validation.
    pub data: Data,
}

impl PrefixAnnouncement {
    /// Decodes the Data element that fills `wire`.
    pub fn decode(wire: Bytes) -> Result<Self, AnnounceError> {
        let data = Data::decode(wire)?;
        let n = data.name.len();
        let named_right = n >= 3
            && data.name.get(n - 3).is_some_and(|c| {
                c.typ() == tlv_type::KEYWORD_NAME_COMPONENT
                    && c.value() == t::PREFIX_ANNOUNCEMENT_KEYWORD
            })
            && data
                .name
                .get(n - 2)
                .is_some_and(|c| c.as_version().is_some())
            && data
                .name
                .get(n - 1)
                .is_some_and(|c| c.as_segment().is_some());
        if !named_right {
            return Err(AnnounceError::BadName);
        }
        if data.meta.content_type != Some(ContentType::PREFIX_ANN) {
            return Err(AnnounceError::BadContentType);
        }
        let content = data.content.clone().unwrap_or_default();
        let mut r = Reader::new(&content);
        let expiration_period = r.expect(t::EXPIRATION_PERIOD)?.nonneg()?;
        let mut validity = None;
        while let Some(el) = r.next_element() {
            let el = el?;
            if el.typ == tlv_type::VALIDITY_PERIOD && validity.is_none() {
                validity = Some(ValidityPeriod::decode(&el)?);
            } else {
                el.skip_unknown()?;
            }
        }
        Ok(PrefixAnnouncement {
            announced_name: data.name.prefix(n - 3),
            expiration_period,
            validity,
            data,
        })
    }

    /// How long (ms) the route lives from `now_unix_ms`: ExpirationPeriod, cut at the end of
    /// ValidityPeriod, and 0 outside ValidityPeriod (as NFD computes a route's expiry).
    pub fn lifetime_ms(&self, now_unix_ms: u64) -> u64 {
        let Some(v) = self.validity else {
            return self.expiration_period;
        };
        let (start, end) = (unix_ms(&v.not_before), unix_ms(&v.not_after));
        if now_unix_ms < start || now_unix_ms > end {
            return 0;
        }
        self.expiration_period.min(end - now_unix_ms)
    }
}

/// Milliseconds since the Unix epoch of a `YYYYMMDDThhmmss` UTC timestamp (0 before 1970).
fn unix_ms(ts: &[u8; 15]) -> u64 {
    let num = |r: core::ops::Range<usize>| {
        ts[r]
            .iter()
            .fold(0i64, |acc, d| acc * 10 + i64::from(d - b'0'))
    };
    let (y, m, d) = (num(0..4), num(4..6), num(6..8));
    let secs_of_day = num(9..11) * 3600 + num(11..13) * 60 + num(13..15);
    let days = days_from_civil(y, m, d);
    u64::try_from((days * 86_400 + secs_of_day) * 1000).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kite_packet::{DigestSha256, MetaInfo, OwnedComponent};

    pub(crate) fn announcement(prefix: &str, content: Vec<u8>, ct: ContentType) -> Bytes {
        let name: Name = prefix.parse().unwrap();
        let kw = OwnedComponent::new(tlv_type::KEYWORD_NAME_COMPONENT, &b"PA"[..]).unwrap();
        let name = name
            .append(kw.as_ref())
            .append(OwnedComponent::version(1).as_ref())
            .append(OwnedComponent::segment(0).as_ref());
        let mut d = Data::new(name, content);
        d.meta = MetaInfo {
            content_type: Some(ct),
            ..Default::default()
        };
        d.sign(&DigestSha256).unwrap()
    }

    fn content(exp: u64, validity: Option<(&str, &str)>) -> Vec<u8> {
        let mut c = Vec::new();
        kite_packet::encode::put_nonneg_tlv(&mut c, t::EXPIRATION_PERIOD, exp);
        if let Some((nb, na)) = validity {
            let mut v = Vec::new();
            kite_packet::encode::put_tlv(&mut v, tlv_type::NOT_BEFORE, nb.as_bytes());
            kite_packet::encode::put_tlv(&mut v, tlv_type::NOT_AFTER, na.as_bytes());
            kite_packet::encode::put_tlv(&mut c, tlv_type::VALIDITY_PERIOD, &v);
        }
        c
    }

    #[test]
    fn decodes_prefix_expiration_and_validity() {
        let wire = announcement(
            "/app/x",
            content(3_600_000, Some(("20240101T000000", "20240101T000010"))),
            ContentType::PREFIX_ANN,
        );
        let pa = PrefixAnnouncement::decode(wire).unwrap();
        assert_eq!(pa.announced_name, "/app/x".parse().unwrap());
        assert_eq!(pa.expiration_period, 3_600_000);
        let start = 1_704_067_200_000; // 2024-01-01T00:00:00Z
        assert_eq!(unix_ms(&pa.validity.unwrap().not_before), start);
        assert_eq!(pa.lifetime_ms(start + 4_000), 6_000);
        assert_eq!(pa.lifetime_ms(start + 20_000), 0);
        assert_eq!(pa.lifetime_ms(start - 1), 0);
    }

    #[test]
    fn without_validity_the_expiration_period_rules() {
        let pa = PrefixAnnouncement::decode(announcement(
            "/a",
            content(5000, None),
            ContentType::PREFIX_ANN,
        ))
        .unwrap();
        assert_eq!(pa.lifetime_ms(0), 5000);
    }

    #[test]
    fn invalid_announcements_are_typed_errors() {
        let wrong_type = announcement("/a", content(1, None), ContentType::BLOB);
        assert_eq!(
            PrefixAnnouncement::decode(wrong_type),
            Err(AnnounceError::BadContentType)
        );
        let no_exp = announcement("/a", vec![], ContentType::PREFIX_ANN);
        assert!(matches!(
            PrefixAnnouncement::decode(no_exp),
            Err(AnnounceError::Decode(DecodeError::Missing { .. }))
        ));
        let mut d = Data::new("/a/b/c".parse().unwrap(), content(1, None));
        d.meta.content_type = Some(ContentType::PREFIX_ANN);
        assert_eq!(
            PrefixAnnouncement::decode(d.sign(&DigestSha256).unwrap()),
            Err(AnnounceError::BadName)
        );
        assert!(matches!(
            PrefixAnnouncement::decode(Bytes::from_static(&[6, 1, 0])),
            Err(AnnounceError::Decode(_))
        ));
    }
}
