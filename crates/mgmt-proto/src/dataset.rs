//! Publishing: status dataset replies, control responses and the face-event notification
//! stream, as NFD's dispatcher names and packs them (`ndn-cxx/mgmt/dispatcher.cpp`,
//! `status-dataset-context.cpp`).
//!
//! Every Data has FreshnessPeriod 1 s and a DigestSha256 signature (NFD without an identity).
//! NFD also marks dataset segments and notifications NoCache (an NDNLPv2 CachePolicy the
//! daemon adds when it sends them) and keeps them 1 s in an in-memory storage that answers
//! later segment Interests.

use bytes::Bytes;
use kite_packet::{tlv_type, ContentType, Data, DigestSha256, Name, OwnedComponent};

use crate::control_response::ControlResponse;
use crate::datasets::FaceQueryFilter;
use crate::nfd::status;
use crate::wire::Tlv;

/// Most Content octets per dataset segment (`MAX_NDN_PACKET_SIZE` 8800 − 800).
pub const MAX_SEGMENT_PAYLOAD: usize = 8000;
/// FreshnessPeriod of every management Data (ms).
pub const FRESHNESS_MS: u64 = 1000;

/// A status dataset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Dataset {
    /// `status/general`.
    StatusGeneral,
    /// `faces/list`.
    FacesList,
    /// `faces/channels`.
    FacesChannels,
    /// `faces/query/<FaceQueryFilter>`.
    FacesQuery(FaceQueryFilter),
    /// `fib/list`.
    FibList,
    /// `rib/list`.
    RibList,
    /// `strategy-choice/list`.
    StrategyChoiceList,
    /// `cs/info`.
    CsInfo,
    /// `kite-strategy/list` (Kite): the strategies that can be chosen, built in or loaded.
    StrategyList,
}

/// What to do with an Interest under `/localhost/nfd/<dataset>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DatasetRequest {
    /// Generate the dataset and answer with [`segments`].
    Generate(Dataset),
    /// Answer with [`nack_data`] carrying this response (e.g. 400 "Malformed filter").
    Reject(ControlResponse),
}

/// Recognizes a dataset request. `None` when the name is not a dataset, or when it ends in a
/// version or segment component: such Interests are answered only from the storage of
/// published segments, never by generating the dataset again. Names may carry more
/// components, such as the params-sha256 component of a signed query (python-ndn).
pub fn parse_dataset_request(name: &Name) -> Option<DatasetRequest> {
    let generic = |i: usize| {
        name.get(i)
            .filter(|c| c.typ() == tlv_type::GENERIC_NAME_COMPONENT)
            .map(|c| c.value())
    };
    if generic(0)? != b"localhost" || generic(1)? != b"nfd" {
        return None;
    }
    let last = name.last()?;
    if last.as_version().is_some() || last.as_segment().is_some() {
        return None;
    }
    let dataset = match (generic(2)?, generic(3)?) {
        (b"status", b"general") => Dataset::StatusGeneral,
        (b"faces", b"list") => Dataset::FacesList,
        (b"faces", b"channels") => Dataset::FacesChannels,
        (b"faces", b"query") => {
            let filter = name
                .get(4)
                .and_then(|c| FaceQueryFilter::decode(&Bytes::copy_from_slice(c.value())).ok());
            match filter {
                Some(f) => Dataset::FacesQuery(f),
                None => {
                    return Some(DatasetRequest::Reject(ControlResponse::new(
                        status::BAD_REQUEST,
                        "Malformed filter",
                    )))
                }
            }
        }
        (b"fib", b"list") => Dataset::FibList,
        (b"rib", b"list") => Dataset::RibList,
        (b"strategy-choice", b"list") => Dataset::StrategyChoiceList,
        (b"cs", b"info") => Dataset::CsInfo,
        (b"kite-strategy", b"list") => Dataset::StrategyList,
        _ => return None,
    };
    Some(DatasetRequest::Generate(dataset))
}

/// The signed segments answering a dataset Interest named `interest_name`: named
/// `<interest_name>/v=<version>/seg=<n>`, at most [`MAX_SEGMENT_PAYLOAD`] octets each, the
/// last one carrying FinalBlockId (an empty payload still yields segment 0). NFD's version is
/// the wall clock in ms. None when the Interest's name leaves no room for the version and
/// segment components (it came from a peer; no name may exceed the codec's longest).
pub fn segments(interest_name: &Name, version: u64, payload: &[u8]) -> Vec<Bytes> {
    // Version and segment components take at most 10 octets each.
    let room = OwnedComponent::version(u64::MAX).as_ref().encoded_len()
        + OwnedComponent::segment(u64::MAX).as_ref().encoded_len();
    if interest_name.value().len() + room > kite_packet::name::MAX_NAME_VALUE_LEN {
        return Vec::new();
    }
    let base = interest_name
        .clone()
        .append(OwnedComponent::version(version).as_ref());
    let chunks: Vec<&[u8]> = if payload.is_empty() {
        vec![&[]]
    } else {
        payload.chunks(MAX_SEGMENT_PAYLOAD).collect()
    };
    let last = chunks.len() - 1;
    chunks
        .into_iter()
        .enumerate()
        .map(|(i, chunk)| {
            let seg = OwnedComponent::segment(i as u64);
            let mut d = Data::new(
                base.clone().append(seg.as_ref()),
                Bytes::copy_from_slice(chunk),
            );
            d.meta.freshness_period = Some(FRESHNESS_MS);
            if i == last {
                d.meta.final_block_id = Some(seg);
            }
            sign(&d)
        })
        .collect()
}

/// The Data answering a command Interest named `name`.
pub fn response_data(name: &Name, resp: &ControlResponse) -> Bytes {
    let mut d = Data::new(name.clone(), resp.encode());
    d.meta.freshness_period = Some(FRESHNESS_MS);
    sign(&d)
}

/// The Data rejecting a dataset Interest: the ControlResponse with ContentType Nack.
pub fn nack_data(name: &Name, resp: &ControlResponse) -> Bytes {
    let mut d = Data::new(name.clone(), resp.encode());
    d.meta.freshness_period = Some(FRESHNESS_MS);
    d.meta.content_type = Some(ContentType::NACK);
    sign(&d)
}

fn sign(d: &Data) -> Bytes {
    d.sign(&DigestSha256)
        .expect("DigestSha256 signing cannot fail")
}

/// A notification stream: one Data per event, named `<prefix>/seq=<n>` with `n` counting
/// from 0 (NFD's `postNotification`).
#[derive(Debug, Clone)]
pub struct NotificationStream {
    prefix: Name,
    next_seq: u64,
}

impl NotificationStream {
    /// A stream under `prefix`.
    pub fn new(prefix: Name) -> Self {
        NotificationStream {
            prefix,
            next_seq: 0,
        }
    }

    /// The face event stream, `/localhost/nfd/faces/events`.
    pub fn face_events() -> Self {
        Self::new(
            Name::root()
                .append_generic(b"localhost")
                .append_generic(b"nfd")
                .append_generic(b"faces")
                .append_generic(b"events"),
        )
    }

    /// The stream's prefix.
    pub fn prefix(&self) -> &Name {
        &self.prefix
    }

    /// The sequence number the next notification gets.
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// The signed Data of the next notification, whose Content is `payload`.
    pub fn post(&mut self, payload: &[u8]) -> Bytes {
        let seq = OwnedComponent::number(tlv_type::SEQUENCE_NUM_NAME_COMPONENT, self.next_seq);
        self.next_seq += 1;
        let mut d = Data::new(
            self.prefix.clone().append(seq.as_ref()),
            Bytes::copy_from_slice(payload),
        );
        d.meta.freshness_period = Some(FRESHNESS_MS);
        sign(&d)
    }
}

#[cfg(test)]
mod tests;
