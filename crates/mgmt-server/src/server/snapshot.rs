//! Everything the status datasets report, gathered at once for a reader outside NFD's
//! protocol (`kite run --metrics`: the metrics endpoint and the status page). The management
//! thread builds it with the functions that build the datasets, so both report the same
//! counters; the reader asks over a channel and never touches the forwarding threads itself.

use std::time::Duration;

use crossbeam_channel::Sender;
use kite_runtime::{BusyTimes, ThreadCounters};

use super::status::{builtin_faces, cs_totals, face_status};
use super::{unix_ms, Job, Manager};
use kite_mgmt_proto::datasets::{
    ChannelStatus, CsInfo, FaceStatus, FibEntry, ForwarderStatus, RibEntry, StrategyChoice,
};

/// The forwarder's state at one moment.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// When it was taken, in ms since the Unix epoch.
    pub unix_ms: u64,
    /// `status/general`.
    pub general: ForwarderStatus,
    /// `cs/info`.
    pub cs: CsInfo,
    /// `faces/list` (built-in faces first), each with the frames waiting in its output queue.
    pub faces: Vec<(FaceStatus, usize)>,
    /// `faces/channels`.
    pub channels: Vec<ChannelStatus>,
    /// Each forwarding shard's counters (CoDel marks, ring depths, drops by reason).
    pub threads: Vec<ThreadCounters>,
    /// Time the I/O thread and each shard spent working.
    pub busy: BusyTimes,
    /// The tables, when asked for.
    pub tables: Option<Tables>,
}

/// The routing tables, each cut to the number of entries asked for.
#[derive(Debug, Clone)]
pub struct Tables {
    /// `fib/list`, its first entries (the total is `general.n_fib_entries`).
    pub fib: Vec<FibEntry>,
    /// `rib/list`, its first entries.
    pub rib: Vec<RibEntry>,
    /// RIB entries in all.
    pub rib_total: usize,
    /// `strategy-choice/list`, its first entries.
    pub strategies: Vec<StrategyChoice>,
    /// Strategy choices in all.
    pub strategies_total: usize,
}

/// Where a reader asks the management thread for snapshots.
#[derive(Clone)]
pub struct StatusSource {
    jobs: Sender<Job>,
}

impl StatusSource {
    /// Asks for a snapshot (with each table cut to `tables` entries, or no tables) and waits
    /// up to `timeout` for it. `None` when management did not answer in time or its job
    /// queue is full (a reader never waits to queue work on management).
    pub fn snapshot(&self, tables: Option<usize>, timeout: Duration) -> Option<Snapshot> {
        let (reply, rx) = crossbeam_channel::bounded(1);
        let job: Job = Box::new(move |m: &mut Manager| {
            let _ = reply.send(m.snapshot(tables));
        });
        self.jobs.try_send(job).ok()?;
        rx.recv_timeout(timeout).ok()
    }
}

impl Manager {
    /// Where another thread asks this one for snapshots.
    pub fn status_source(&self) -> StatusSource {
        StatusSource {
            jobs: self.jobs_tx.clone(),
        }
    }

    fn snapshot(&self, tables: Option<usize>) -> Snapshot {
        let threads = self.runtime.thread_counters();
        let mut faces: Vec<(FaceStatus, usize)> =
            builtin_faces().into_iter().map(|f| (f, 0)).collect();
        faces.extend(
            self.runtime
                .faces()
                .iter()
                .map(|f| (face_status(f), f.out_queue)),
        );
        let tables = tables.map(|limit| {
            let mut rib = self.rib.list(self.now_ms());
            let rib_total = rib.len();
            rib.truncate(limit);
            let mut strategies = self.strategy_choices();
            let strategies_total = strategies.len();
            strategies.truncate(limit);
            Tables {
                fib: self.fib_entries(limit),
                rib,
                rib_total,
                strategies,
                strategies_total,
            }
        });
        Snapshot {
            unix_ms: unix_ms(),
            general: self.general(&threads),
            cs: cs_totals(&threads),
            faces,
            channels: self.channels(),
            busy: self.runtime.busy_times(),
            threads,
            tables,
        }
    }
}
