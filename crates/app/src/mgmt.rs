//! The NFD management protocol from the client side: signed control commands and segmented
//! status datasets, as `nfdc` speaks them.

use std::collections::btree_map::Entry;
use std::collections::BTreeMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::{Bytes, BytesMut};
use kite_mgmt::tlv_types::status;
use kite_mgmt::{ControlParameters, ControlResponse, Tlv};
use kite_packet::name::Component;
use kite_packet::{
    ContentType, Data, DigestSha256, Interest, Name, OwnedComponent, SignatureInfo, SignatureType,
};

use crate::client::{random_nonce, Client};
use crate::error::ClientError;
use crate::random::random_u64;

/// InterestLifetime of a command Interest (ndn-cxx's `Controller` default).
pub const COMMAND_LIFETIME_MS: u64 = 4000;

/// Most segments a dataset may have before the fetch gives up (8000 octets each: 800 MB).
const MAX_SEGMENTS: u64 = 100_000;

/// The name `/localhost/nfd/<parts…>`, each part one generic component.
pub fn nfd_name(parts: &[&[u8]]) -> Name {
    let prefix: [&[u8]; 2] = [b"localhost", b"nfd"];
    Name::from_components(prefix.iter().chain(parts).map(|p| Component::generic(p)))
}

impl Client {
    /// Sends the control command `/localhost/nfd/<module>/<verb>/<params>` as a v0.3 signed
    /// Interest (DigestSha256, SignatureNonce, strictly increasing SignatureTime; MustBeFresh,
    /// 4 s lifetime) and decodes the ControlResponse, whatever its status code.
    pub fn command(
        &mut self,
        module: &str,
        verb: &str,
        params: &ControlParameters,
        timeout: Duration,
    ) -> Result<ControlResponse, ClientError> {
        let encoded = params.encode();
        let name = nfd_name(&[module.as_bytes(), verb.as_bytes(), &encoded]);
        let mut interest = Interest::new(name);
        interest.must_be_fresh = true;
        interest.lifetime = Some(COMMAND_LIFETIME_MS);
        interest.nonce = Some(random_nonce());
        let mut info = SignatureInfo::new(SignatureType::DIGEST_SHA256);
        info.nonce = Some(Bytes::copy_from_slice(&random_u64().to_be_bytes()));
        info.time = Some(self.next_signature_time());
        interest.sig_info = Some(info);
        let wire = interest
            .encode_signed(&DigestSha256)
            .expect("DigestSha256 signing cannot fail");
        let data = self.exchange(wire, timeout)?;
        Ok(ControlResponse::decode(&data.content.unwrap_or_default())?)
    }

    /// [`Client::command`], turning any status but 200 into [`ClientError::Status`]; returns
    /// the response's ControlParameters (empty when it has none).
    pub fn command_ok(
        &mut self,
        module: &str,
        verb: &str,
        params: &ControlParameters,
        timeout: Duration,
    ) -> Result<ControlParameters, ClientError> {
        let resp = self.command(module, verb, params, timeout)?;
        if resp.status_code != status::OK {
            return Err(ClientError::Status {
                code: resp.status_code,
                text: resp.status_text,
            });
        }
        Ok(resp.parameters().transpose()?.unwrap_or_default())
    }

    /// Fetches the status dataset published under `name` (e.g. `/localhost/nfd/faces/list`):
    /// the first segment by CanBePrefix + MustBeFresh, the others by the version it carries,
    /// until FinalBlockId; returns the concatenated payload. `timeout` applies to each segment.
    pub fn dataset(&mut self, name: &Name, timeout: Duration) -> Result<Bytes, ClientError> {
        let mut first = Interest::new(name.clone());
        first.can_be_prefix = true;
        first.must_be_fresh = true;
        first.lifetime = Some(lifetime_ms(timeout));
        let data = self.express(&first, timeout)?;
        let (version_name, seg) = segment_of(name, &data)?;
        let mut parts = BTreeMap::new();
        let mut last = final_segment(&data);
        parts.insert(seg, data.content.unwrap_or_default());
        let mut next = 0;
        while last.is_none_or(|l| next <= l) {
            if next >= MAX_SEGMENTS {
                return Err(ClientError::Dataset(
                    "no FinalBlockId within the segment limit",
                ));
            }
            if let Entry::Vacant(slot) = parts.entry(next) {
                let d = self.fetch_segment(&version_name, next, timeout)?;
                last = last.or(final_segment(&d));
                slot.insert(d.content.unwrap_or_default());
            }
            next += 1;
        }
        let mut out = BytesMut::new();
        for (_, p) in parts.range(..next) {
            out.extend_from_slice(p);
        }
        Ok(out.freeze())
    }

    /// Segment `n` of the dataset version `version_name`.
    fn fetch_segment(
        &mut self,
        version_name: &Name,
        n: u64,
        timeout: Duration,
    ) -> Result<Data, ClientError> {
        let mut i = Interest::new(
            version_name
                .clone()
                .append(OwnedComponent::segment(n).as_ref()),
        );
        i.lifetime = Some(lifetime_ms(timeout));
        let d = self.express(&i, timeout)?;
        refused(&d)?;
        Ok(d)
    }

    /// A SignatureTime later than every one this client used (the forwarder rejects a command
    /// whose timestamp does not increase).
    fn next_signature_time(&mut self) -> u64 {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        self.last_signature_time = now.max(self.last_signature_time + 1);
        self.last_signature_time
    }
}

fn lifetime_ms(timeout: Duration) -> u64 {
    timeout.as_millis().clamp(1, u128::from(u32::MAX)) as u64
}

/// Fails with the forwarder's status when `data` is a dataset refusal (ContentType Nack
/// carrying a ControlResponse).
fn refused(data: &Data) -> Result<(), ClientError> {
    if data.meta.content_type != Some(ContentType::NACK) {
        return Ok(());
    }
    let resp = ControlResponse::decode(&data.content.clone().unwrap_or_default())?;
    Err(ClientError::Status {
        code: resp.status_code,
        text: resp.status_text,
    })
}

/// The `<dataset>/<version>` name and the segment number of a dataset's first Data.
fn segment_of(dataset: &Name, data: &Data) -> Result<(Name, u64), ClientError> {
    refused(data)?;
    let n = data.name.len();
    let seg = data.name.last().and_then(|c| c.as_segment());
    let version = n
        .checked_sub(2)
        .and_then(|i| data.name.get(i)?.as_version());
    match (seg, version) {
        (Some(seg), Some(_)) if n >= dataset.len() + 2 => Ok((data.name.prefix(n - 1), seg)),
        _ => Err(ClientError::Dataset(
            "the reply does not end in a version and a segment number",
        )),
    }
}

/// The last segment number, when `data` carries FinalBlockId.
fn final_segment(data: &Data) -> Option<u64> {
    data.meta.final_block_id.as_ref()?.as_ref().as_segment()
}
