//! Segmented publishing: an object cut into signed, versioned segments held in memory, and
//! the answer to each Interest for them.
//!
//! Version discovery is answered two ways, so both kinds of fetcher find the object: a
//! CanBePrefix Interest for the prefix (python-ndn's `segment_fetcher`, `kite get`) gets
//! segment 0, whose name carries the version; an Interest for `<prefix>/32=metadata`
//! (ndncatchunks' RDR discovery) gets a metadata Data whose Content is the versioned name.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use kite_packet::{Data, Interest, Name, OwnedComponent, SignError, Signer};

use super::naming::{ends_in_version, metadata_name, segment_name};

/// Octets of content per segment by default (ndnputchunks' default).
pub const DEFAULT_CHUNK_SIZE: usize = 8000;

/// FreshnessPeriod of segments by default (ndnputchunks' default).
pub const DEFAULT_FRESHNESS: Duration = Duration::from_secs(10);

/// FreshnessPeriod of the RDR metadata (ndnputchunks' value): a consumer asks for it with
/// MustBeFresh, so a cache answers it only this long and a newer version published under the
/// same prefix is found at once.
pub const METADATA_FRESHNESS: Duration = Duration::from_millis(10);

/// How an object is cut and labelled.
#[derive(Debug, Clone)]
pub struct PublishOptions {
    /// Content octets per segment.
    pub chunk_size: usize,
    /// FreshnessPeriod of every segment.
    pub freshness: Duration,
    /// The version; `None`: the current time in milliseconds since the Unix epoch.
    pub version: Option<u64>,
}

impl Default for PublishOptions {
    fn default() -> Self {
        PublishOptions {
            chunk_size: DEFAULT_CHUNK_SIZE,
            freshness: DEFAULT_FRESHNESS,
            version: None,
        }
    }
}

/// An object published as signed segments, ready to serve.
#[derive(Debug, Clone)]
pub struct Published {
    prefix: Name,
    versioned: Name,
    segments: Vec<Bytes>,
    metadata: Bytes,
}

impl Published {
    /// Cuts `content` into segments `<prefix>/v=<version>/seg=<n>` (one empty segment when
    /// `content` is empty), each with FinalBlockId and FreshnessPeriod, signed by `signer`.
    /// A `prefix` that already ends in a version is used as the versioned name.
    pub fn new(
        prefix: &Name,
        content: &Bytes,
        opts: &PublishOptions,
        signer: &dyn Signer,
    ) -> Result<Published, SignError> {
        let chunk = opts.chunk_size.max(1);
        let version = opts.version.unwrap_or_else(now_ms);
        let (prefix, versioned) = if ends_in_version(prefix) {
            (prefix.prefix(prefix.len() - 1), prefix.clone())
        } else {
            (
                prefix.clone(),
                prefix
                    .clone()
                    .append(OwnedComponent::version(version).as_ref()),
            )
        };
        let count = content.len().div_ceil(chunk).max(1);
        let last = OwnedComponent::segment(count as u64 - 1);
        let freshness = opts.freshness.as_millis() as u64;
        let segments = (0..count)
            .map(|i| {
                let part = content
                    .slice((i * chunk).min(content.len())..((i + 1) * chunk).min(content.len()));
                let mut d = Data::new(segment_name(&versioned, i as u64), part);
                d.meta.final_block_id = Some(last.clone());
                d.meta.freshness_period = Some(freshness);
                d.sign(signer)
            })
            .collect::<Result<Vec<_>, _>>()?;
        let meta_name = segment_name(
            &metadata_name(&prefix).append(OwnedComponent::version(now_ms()).as_ref()),
            0,
        );
        let mut meta = Data::new(meta_name, versioned.to_wire());
        meta.meta.final_block_id = Some(OwnedComponent::segment(0));
        meta.meta.freshness_period = Some(METADATA_FRESHNESS.as_millis() as u64);
        let metadata = meta.sign(signer)?;
        Ok(Published {
            prefix,
            versioned,
            segments,
            metadata,
        })
    }

    /// The name the fetchers discover: `<prefix>/v=<version>`.
    pub fn versioned_name(&self) -> &Name {
        &self.versioned
    }

    /// The prefix to register: the name without its version.
    pub fn prefix(&self) -> &Name {
        &self.prefix
    }

    /// The encoded segments, in order.
    pub fn segments(&self) -> &[Bytes] {
        &self.segments
    }

    /// The encoded Data answering `interest`, if any: a segment by exact name, segment 0 for
    /// a CanBePrefix Interest above the segments, the metadata for `<prefix>/32=metadata`.
    pub fn answer(&self, interest: &Interest) -> Option<&Bytes> {
        let name = &interest.name;
        if name.len() == self.versioned.len() + 1 && self.versioned.is_prefix_of(name) {
            let n = name.last()?.as_segment()?;
            return self.segments.get(usize::try_from(n).ok()?);
        }
        if !interest.can_be_prefix {
            return None;
        }
        if name.is_prefix_of(&self.versioned) {
            return self.segments.first();
        }
        (*name == metadata_name(&self.prefix)).then_some(&self.metadata)
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kite_packet::DigestSha256;

    fn name(s: &str) -> Name {
        s.parse().unwrap()
    }

    fn publish(content: &[u8], chunk: usize) -> Published {
        let opts = PublishOptions {
            chunk_size: chunk,
            version: Some(42),
            ..PublishOptions::default()
        };
        Published::new(
            &name("/obj"),
            &Bytes::copy_from_slice(content),
            &opts,
            &DigestSha256,
        )
        .unwrap()
    }

    fn decode(b: &Bytes) -> Data {
        Data::decode(b.clone()).unwrap()
    }

    #[test]
    fn segments_carry_version_final_block_and_freshness_and_rejoin() {
        let content: Vec<u8> = (0..2500u32).map(|i| i as u8).collect();
        let p = publish(&content, 1000);
        assert_eq!(p.versioned_name(), &name("/obj/v=42"));
        assert_eq!(p.segments().len(), 3);
        let mut joined = Vec::new();
        for (i, s) in p.segments().iter().enumerate() {
            let d = decode(s);
            assert_eq!(d.name, name(&format!("/obj/v=42/seg={i}")));
            assert_eq!(
                d.meta
                    .final_block_id
                    .as_ref()
                    .unwrap()
                    .as_ref()
                    .as_segment(),
                Some(2)
            );
            assert_eq!(d.meta.freshness_period, Some(10_000));
            joined.extend_from_slice(&d.content.unwrap());
        }
        assert_eq!(joined, content);
        assert_eq!(
            publish(b"", 1000).segments().len(),
            1,
            "empty: one empty segment"
        );
        assert_eq!(
            publish(&[0; 2000], 1000).segments().len(),
            2,
            "exact multiple"
        );
    }

    #[test]
    fn answers_segments_discovery_and_metadata() {
        let p = publish(&[7; 2500], 1000);
        let ask = |s: &str, cbp: bool| {
            let mut i = Interest::new(name(s));
            i.can_be_prefix = cbp;
            p.answer(&i).map(|b| decode(b).name)
        };
        assert_eq!(ask("/obj/v=42/seg=1", false), Some(name("/obj/v=42/seg=1")));
        assert_eq!(ask("/obj/v=42/seg=3", false), None, "past the end");
        assert_eq!(ask("/obj", true), Some(name("/obj/v=42/seg=0")));
        assert_eq!(ask("/obj/v=42", true), Some(name("/obj/v=42/seg=0")));
        assert_eq!(ask("/obj", false), None, "discovery needs CanBePrefix");
        assert_eq!(ask("/obj/v=41", true), None, "another version");
        // What ndncatchunks accepts: <prefix>/32=metadata/<version>/<segment 0>, a BLOB whose
        // Content is the versioned Name, fresh only briefly.
        let meta = ask("/obj/32=metadata", true).unwrap();
        assert_eq!(meta.len(), 4);
        assert!(metadata_name(&name("/obj")).is_prefix_of(&meta));
        assert!(meta.get(2).unwrap().as_version().is_some());
        assert_eq!(meta.get(3).unwrap().as_segment(), Some(0));
        let mut i = Interest::new(name("/obj/32=metadata"));
        i.can_be_prefix = true;
        i.must_be_fresh = true;
        let d = decode(p.answer(&i).unwrap());
        assert_eq!(d.meta.freshness_period, Some(10));
        assert_eq!(d.meta.content_type, None);
        assert_eq!(Name::decode(d.content.unwrap()).unwrap(), name("/obj/v=42"));
    }
}
