//! The NFD management protocol from the client side: signed control commands and segmented
//! status datasets, as `nfdc` speaks them.

use std::collections::btree_map::Entry;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::{Bytes, BytesMut};
use kite_mgmt_proto::nfd::status;
use kite_mgmt_proto::{ControlParameters, ControlResponse, Tlv};
use kite_packet::name::Component;
use kite_packet::{
    ContentType, Data, DigestSha256, Interest, Name, OwnedComponent, SignatureInfo, Signer,
};

use crate::client::Client;
use crate::error::ClientError;
use crate::random::random_nonce;
use crate::random::random_u64;

/// InterestLifetime of a command Interest (ndn-cxx's `Controller` default).
pub const COMMAND_LIFETIME_MS: u64 = 4000;

/// Most segments a dataset may have before the fetch gives up (8000 octets each: 800 MB).
const MAX_SEGMENTS: u64 = 100_000;

/// Times one Interest of a dataset fetch is sent before the fetch gives up. Generating a
/// large dataset (`faces/list` of 100,000 faces) can take longer than an Interest lifetime on
/// a slow machine; the answer to the first Interest then satisfies the one sent again, as
/// ndn-cxx's SegmentFetcher also retransmits on timeout.
const DATASET_TRIES: u32 = 3;

/// How long to wait before sending a command again after a 403, at least (a random part
/// up to the same again is added, so two refused tools do not collide a second time).
const RETRY_WAIT: Duration = Duration::from_millis(20);

/// The last SignatureTime any command of this process carried.
static LAST_SIGNATURE_TIME: AtomicU64 = AtomicU64::new(0);

/// The name `/localhost/nfd/<parts…>`, each part one generic component.
pub fn nfd_name(parts: &[&[u8]]) -> Name {
    let prefix: [&[u8]; 2] = [b"localhost", b"nfd"];
    Name::from_components(prefix.iter().chain(parts).map(|p| Component::generic(p)))
}

impl Client {
    /// Sends the control command `/localhost/nfd/<module>/<verb>/<params>` as a v0.3 signed
    /// Interest (DigestSha256, SignatureNonce, SignatureTime strictly increasing within the
    /// process; MustBeFresh, 4 s lifetime) and decodes the ControlResponse, whatever its
    /// status code.
    ///
    /// NFD refuses (403) a `rib` command whose timestamp is not newer than the last one it
    /// accepted from the same key, which another process signing in the same millisecond
    /// causes (Kite only refuses an older one, or a repeated nonce). The 403 does not say why,
    /// so after any 403 the command is sent once more, with a fresh timestamp, after a short
    /// random wait.
    pub fn command(
        &mut self,
        module: &str,
        verb: &str,
        params: &ControlParameters,
        timeout: Duration,
    ) -> Result<ControlResponse, ClientError> {
        let resp = self.command_once(module, verb, params, timeout)?;
        if resp.status_code != status::FORBIDDEN {
            return Ok(resp);
        }
        let jitter = RETRY_WAIT.mul_f64((random_u64() % 1000) as f64 / 1000.0);
        std::thread::sleep(RETRY_WAIT + jitter);
        self.command_once(module, verb, params, timeout)
    }

    /// Sends the command once (see [`Client::command`]).
    fn command_once(
        &mut self,
        module: &str,
        verb: &str,
        params: &ControlParameters,
        timeout: Duration,
    ) -> Result<ControlResponse, ClientError> {
        let prefix = nfd_name(&[]);
        self.command_under(&prefix, module, verb, params, timeout)
    }

    /// Sends `<prefix>/<module>/<verb>/<params>` once, signed as [`Client::command`] signs,
    /// and decodes the ControlResponse: a command to another manager than the forwarder's,
    /// such as a routing daemon's `/localhost/nlsr` or a gateway's `/localhop/nfd`.
    pub fn command_under(
        &mut self,
        prefix: &Name,
        module: &str,
        verb: &str,
        params: &ControlParameters,
        timeout: Duration,
    ) -> Result<ControlResponse, ClientError> {
        let wire = CommandSigner::digest().sign(prefix, module, verb, params)?;
        self.command_wire(wire, timeout)
    }

    /// Sends `<prefix>/<module>/<verb>/<params>` once, signed by `signer`, and decodes the
    /// ControlResponse.
    pub fn command_signed(
        &mut self,
        signer: &mut CommandSigner,
        prefix: &Name,
        module: &str,
        verb: &str,
        params: &ControlParameters,
        timeout: Duration,
    ) -> Result<ControlResponse, ClientError> {
        let wire = signer.sign(prefix, module, verb, params)?;
        self.command_wire(wire, timeout)
    }

    fn command_wire(
        &mut self,
        wire: Bytes,
        timeout: Duration,
    ) -> Result<ControlResponse, ClientError> {
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
    /// until FinalBlockId; returns the concatenated payload. `timeout` applies to each
    /// Interest, and one that times out is sent again (three tries in all).
    pub fn dataset(&mut self, name: &Name, timeout: Duration) -> Result<Bytes, ClientError> {
        let mut first = Interest::new(name.clone());
        first.can_be_prefix = true;
        first.must_be_fresh = true;
        first.lifetime = Some(lifetime_ms(timeout));
        let data = self.express_retried(&first, timeout)?;
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
        let d = self.express_retried(&i, timeout)?;
        refused(&d)?;
        Ok(d)
    }

    /// [`Client::express`] (`i` has no Nonce: each try gets its own), sent again on timeout
    /// until [`DATASET_TRIES`] tries.
    fn express_retried(&mut self, i: &Interest, timeout: Duration) -> Result<Data, ClientError> {
        for _ in 1..DATASET_TRIES {
            match self.express(i, timeout) {
                Err(ClientError::Timeout { .. }) => {}
                answered => return answered,
            }
        }
        self.express(i, timeout).map_err(|e| match e {
            ClientError::Timeout { name, .. } => ClientError::Timeout {
                name,
                after: timeout * DATASET_TRIES,
            },
            other => other,
        })
    }
}

/// Signs control command Interests as ndn-cxx's `InterestSigner` does: v0.3 signed
/// Interests (SignatureNonce, SignatureTime; MustBeFresh, 4 s lifetime). The time is now, or
/// one millisecond after the last one the signer's clock gave when now is not later: a signer
/// sending commands faster than one a millisecond runs ahead of the clock.
pub struct CommandSigner {
    key: Box<dyn Signer + Send>,
    /// The last time this signer used; none: the process-wide clock
    /// ([`next_signature_time`]).
    last: Option<u64>,
}

impl CommandSigner {
    /// DigestSha256 on the process-wide clock: what [`Client::command`] signs with, so that
    /// no two commands of the process share a millisecond.
    pub fn digest() -> Self {
        CommandSigner {
            key: Box::new(DigestSha256),
            last: None,
        }
    }

    /// A signer with `key` and a clock of its own, as each of ndn-cxx's `nfd::Controller`s
    /// has: two of them sharing one key hand out times independently.
    pub fn new(key: impl Signer + Send + 'static) -> Self {
        CommandSigner {
            key: Box::new(key),
            last: Some(0),
        }
    }

    /// The next SignatureTime (ms since the Unix epoch).
    fn next_time(&mut self) -> u64 {
        match &mut self.last {
            None => next_signature_time(),
            Some(last) => {
                *last = unix_ms().max(*last + 1);
                *last
            }
        }
    }

    /// The command Interest `<prefix>/<module>/<verb>/<params>`, signed.
    pub fn sign(
        &mut self,
        prefix: &Name,
        module: &str,
        verb: &str,
        params: &ControlParameters,
    ) -> Result<Bytes, ClientError> {
        let encoded = params.encode();
        let mut name = prefix.clone();
        for part in [module.as_bytes(), verb.as_bytes(), &encoded] {
            name = name.append(Component::generic(part));
        }
        let mut interest = Interest::new(name);
        interest.must_be_fresh = true;
        interest.lifetime = Some(COMMAND_LIFETIME_MS);
        interest.nonce = Some(random_nonce());
        let mut info = SignatureInfo::new(self.key.signature_type());
        info.nonce = Some(Bytes::copy_from_slice(&random_u64().to_be_bytes()));
        info.time = Some(self.next_time());
        interest.sig_info = Some(info);
        interest
            .encode_signed(self.key.as_ref())
            .map_err(ClientError::Sign)
    }
}

fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// A SignatureTime (now, in ms since the Unix epoch) later than every one this process used
/// before, whatever the connection or thread: the forwarder rejects a command whose
/// timestamp is older than the last one of its key. Code that signs its own command
/// Interests next to a [`Client`] takes its timestamps here too: two counters in one process
/// would hand out the same millisecond twice.
pub fn next_signature_time() -> u64 {
    let now = unix_ms();
    let prev = LAST_SIGNATURE_TIME
        .fetch_update(Ordering::AcqRel, Ordering::Acquire, |last| {
            Some(now.max(last + 1))
        })
        .expect("the update always succeeds");
    now.max(prev + 1)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signature_times_strictly_increase_across_threads() {
        let per_thread: Vec<Vec<u64>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..4)
                .map(|_| s.spawn(|| (0..500).map(|_| next_signature_time()).collect()))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for times in &per_thread {
            assert!(
                times.windows(2).all(|w| w[0] < w[1]),
                "increasing per thread"
            );
        }
        let mut all: Vec<u64> = per_thread.concat();
        let n = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(
            all.len(),
            n,
            "no two commands of the process share a timestamp"
        );
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64;
        assert!(next_signature_time() >= now, "never behind the clock");
    }
}
