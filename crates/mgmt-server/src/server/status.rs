//! The status datasets, generated from the runtime's threads, the FIB writer and the RIB.

use kite_fw::face::FaceId;
use kite_runtime::{FaceStatus as RtFace, ThreadCounters};

use super::{unix_ms, Manager};
use kite_link::FaceCounters;
use kite_mgmt_proto::dataset::Dataset;
use kite_mgmt_proto::datasets::{
    AvailableStrategy, ChannelStatus, CsInfo, FaceStatus, FibEntry, ForwarderStatus, NextHopRecord,
    StrategyChoice, XdpVerdicts,
};
use kite_mgmt_proto::nfd::{self as t, FacePersistency};
use kite_mgmt_proto::{encode_items, Tlv};

/// The forwarder's version string in `status/general`.
pub const VERSION: &str = concat!("kite-", env!("CARGO_PKG_VERSION"));

/// A runtime face as NFD's FaceStatus.
pub(super) fn face_status(s: &RtFace) -> FaceStatus {
    FaceStatus {
        face_id: s.id.0,
        uri: s.remote.to_string(),
        local_uri: s.local.to_string(),
        expiration_period: None,
        face_scope: s.scope.into(),
        face_persistency: s.persistency.into(),
        link_type: s.link_type.into(),
        base_congestion_marking_interval: Some(s.marking.base_interval.as_nanos() as u64),
        default_congestion_threshold: Some(s.marking.threshold as u64),
        mtu: s.mtu.map(|m| m as u64),
        counters: s.counters,
        flags: u64::from(s.local_fields) << t::face_flag_bit::LOCAL_FIELDS_ENABLED
            | u64::from(s.lp_reliability) << t::face_flag_bit::LP_RELIABILITY_ENABLED
            | u64::from(s.marking.enabled) << t::face_flag_bit::CONGESTION_MARKING_ENABLED,
        state: Some(if s.up {
            t::FaceState::UP
        } else if s.reconnecting {
            t::FaceState::RECONNECTING
        } else {
            t::FaceState::DOWN
        }),
    }
}

/// The faces every NFD lists besides its sockets: internal (management), the Content Store's,
/// and the null face.
pub(super) fn builtin_faces() -> Vec<FaceStatus> {
    FaceId::RESERVED
        .into_iter()
        .map(|id| {
            let uri = id.reserved_uri().expect("a reserved face has a URI");
            FaceStatus {
                face_id: id.0,
                uri: uri.into(),
                local_uri: uri.into(),
                expiration_period: None,
                face_scope: t::FaceScope::LOCAL,
                face_persistency: FacePersistency::PERMANENT,
                link_type: t::LinkType::POINT_TO_POINT,
                base_congestion_marking_interval: None,
                default_congestion_threshold: None,
                mtu: None,
                counters: FaceCounters::default(),
                flags: 0,
                state: Some(t::FaceState::UP),
            }
        })
        .collect()
}

/// Every face, built-in ones first, in id order.
pub(super) fn all_faces(runtime: &kite_runtime::RuntimeHandle) -> Vec<FaceStatus> {
    let mut faces = builtin_faces();
    faces.extend(runtime.faces().iter().map(face_status));
    faces
}

/// CS totals over the threads (capacity and entries summed; flags from the first thread).
pub(super) fn cs_totals(threads: &[ThreadCounters]) -> CsInfo {
    let first = threads.first();
    let flags = first.map_or(0, |c| {
        u64::from(c.cs_admit) << t::cs_flag_bit::ENABLE_ADMIT
            | u64::from(c.cs_serve) << t::cs_flag_bit::ENABLE_SERVE
    });
    CsInfo {
        capacity: threads.iter().map(|c| c.cs_capacity as u64).sum(),
        flags,
        n_cs_entries: threads.iter().map(|c| c.cs_entries as u64).sum(),
        n_hits: threads.iter().map(|c| c.forwarder.cs_hits).sum(),
        n_misses: threads.iter().map(|c| c.forwarder.cs_misses).sum(),
    }
}

impl Manager {
    /// The payload of a dataset.
    pub(super) fn dataset(&self, ds: &Dataset) -> Vec<u8> {
        match ds {
            Dataset::StatusGeneral => self.general(&self.runtime.thread_counters()).encode(),
            Dataset::FacesList => encode_items(&all_faces(&self.runtime)),
            Dataset::FacesQuery(filter) => {
                let mut faces = all_faces(&self.runtime);
                faces.retain(|f| filter.matches(f));
                encode_items(&faces)
            }
            Dataset::FacesChannels => encode_items(&self.channels()),
            Dataset::FibList => encode_items(&self.fib_entries(usize::MAX)),
            Dataset::RibList => encode_items(&self.rib.list(self.now_ms())),
            Dataset::StrategyChoiceList => encode_items(&self.strategy_choices()),
            Dataset::CsInfo => cs_totals(&self.runtime.thread_counters()).encode(),
            Dataset::StrategyList => {
                let all: Vec<AvailableStrategy> = self
                    .strategies
                    .iter()
                    .map(|(_, s)| AvailableStrategy {
                        name: s.name().clone(),
                    })
                    .collect();
                encode_items(&all)
            }
        }
    }

    /// The listeners with their drop counters (`faces/channels`).
    pub(super) fn channels(&self) -> Vec<ChannelStatus> {
        self.runtime
            .channels()
            .iter()
            .map(|c| ChannelStatus {
                local_uri: c.local.to_string(),
                counters: c.counters,
                io_path: c.io_path.clone(),
                cert_sha256: c.cert_sha256.clone(),
                xdp: c.xdp.map(|x| XdpVerdicts {
                    ndn: x.ndn,
                    passed: x.passed,
                    runt: x.runt,
                    udp: x.udp,
                }),
            })
            .collect()
    }

    /// The first `limit` FIB entries (`fib/list`).
    pub(super) fn fib_entries(&self, limit: usize) -> Vec<FibEntry> {
        self.fib
            .routes()
            .take(limit)
            .map(|(name, hops)| FibEntry {
                name: name.clone(),
                next_hops: hops
                    .iter()
                    .map(|h| NextHopRecord {
                        face_id: h.face.0,
                        cost: u64::from(h.cost),
                    })
                    .collect(),
            })
            .collect()
    }

    /// Every strategy choice (`strategy-choice/list`).
    pub(super) fn strategy_choices(&self) -> Vec<StrategyChoice> {
        self.fib
            .strategy_choices()
            .filter_map(|(name, id)| {
                Some(StrategyChoice {
                    name: name.clone(),
                    strategy: self.strategies.get(id)?.name().clone(),
                })
            })
            .collect()
    }

    /// `status/general`, from the threads' counters.
    pub(super) fn general(&self, threads: &[ThreadCounters]) -> ForwarderStatus {
        let sum = |f: fn(&ThreadCounters) -> u64| threads.iter().map(f).sum::<u64>();
        ForwarderStatus {
            nfd_version: VERSION.into(),
            start_timestamp: self.start_unix_ms,
            current_timestamp: unix_ms(),
            n_name_tree_entries: 0,
            n_fib_entries: self.fib.routes().count() as u64,
            n_pit_entries: sum(|c| c.pit_entries as u64),
            n_measurements_entries: 0,
            n_cs_entries: sum(|c| c.cs_entries as u64),
            n_in_interests: sum(|c| c.forwarder.in_interests),
            n_in_data: sum(|c| c.forwarder.in_data),
            n_in_nacks: sum(|c| c.forwarder.in_nacks),
            n_out_interests: sum(|c| c.forwarder.out_interests),
            n_out_data: sum(|c| c.forwarder.out_data),
            n_out_nacks: sum(|c| c.forwarder.out_nacks),
            n_satisfied_interests: sum(|c| c.forwarder.satisfied),
            n_unsatisfied_interests: sum(|c| c.forwarder.unsatisfied),
        }
    }
}
