//! Segmented fetch, as ndncatchunks does it: discover the version, keep a congestion window
//! of segment Interests outstanding, retransmit on RTO, learn the end from FinalBlockId, and
//! write the content in order.
//!
//! Version discovery ([`Discovery`]): RDR asks `<prefix>/32=metadata` (CanBePrefix +
//! MustBeFresh) and reads the versioned name from the metadata Data's Content, as ndncatchunks
//! does; the older way asks for the prefix itself with CanBePrefix + MustBeFresh and takes the
//! version from the name of the first segment that answers (python-ndn's producers answer only
//! this). By default RDR is tried once with a short timeout, then the older way.

use std::collections::BTreeMap;
use std::io::Write;
use std::time::{Duration, Instant};

use std::fmt;

use bytes::Bytes;
use kite_packet::tlv::Reader;
use kite_packet::{tlv_type, Data, Interest, NackReason, Name};
use thiserror::Error;

use super::cc::{CcOptions, Window};
use super::loss::{suppression_wait, LossDetector, Lost};
use super::naming::{
    ends_in_version, metadata_name, parse_segment_reply, segment_name, METADATA_KEYWORD,
};
use super::rto::{self, RttEstimator};
use crate::consumer::{Event, InterestId, Pipeline};
use crate::error::{nack_reason_text, ClientError};

/// How the version of an object named by a prefix is found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Discovery {
    /// RDR once, with [`FetchOptions::rdr_timeout`]; when the metadata times out, is Nacked
    /// or is malformed, [`Discovery::Iterative`].
    Auto,
    /// RDR only: `<prefix>/32=metadata`, retried like a segment.
    Rdr,
    /// A CanBePrefix + MustBeFresh Interest for the prefix; the first segment's name carries
    /// the version.
    Iterative,
}

impl fmt::Display for Discovery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Discovery::Auto => "auto",
            Discovery::Rdr => "rdr",
            Discovery::Iterative => "iterative",
        })
    }
}

/// Why RDR found no version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RdrFailure {
    /// No metadata came in time.
    Timeout,
    /// The metadata Interest was Nacked.
    Nack(NackReason),
    /// The answer is not a metadata packet naming a version.
    Malformed,
}

impl fmt::Display for RdrFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RdrFailure::Timeout => f.write_str("timeout"),
            RdrFailure::Nack(r) => write!(f, "Nack {}", nack_reason_text(*r)),
            RdrFailure::Malformed => f.write_str("malformed metadata"),
        }
    }
}

/// How a fetch behaves.
#[derive(Debug, Clone)]
pub struct FetchOptions {
    /// How the version is found when the name does not end in one.
    pub discovery: Discovery,
    /// How long [`Discovery::Auto`] waits for the metadata before falling back.
    pub rdr_timeout: Duration,
    /// The congestion window.
    pub cc: CcOptions,
    /// InterestLifetime of every Interest.
    pub lifetime: Duration,
    /// Retransmissions of one segment before the fetch fails.
    pub max_retries: u32,
    /// The smallest RTO: 100 ms by default, half of TCP's and ndncatchunks' 200 ms (at
    /// 50 ms, queueing delay fired it at no loss in `bench/lossy.sh`). Most losses are found
    /// before it ([`super::loss`]); it is for a whole window lost, or a path gone.
    pub min_rto: Duration,
    /// The largest RTO (after backoff); the RTO never exceeds [`FetchOptions::lifetime`]
    /// either, as in ndncatchunks: an Interest not answered within its lifetime is gone from
    /// every PIT on the path, so waiting longer for it only idles.
    pub max_rto: Duration,
    /// How long the fetch goes on with no Data, no discovery answer and nothing written
    /// before it fails with [`FetchError::NoProgress`]; `None`:
    /// [`FetchOptions::default_no_progress`].
    pub no_progress: Option<Duration>,
}

/// The longest [`FetchOptions::no_progress`] chosen by default.
pub const MAX_DEFAULT_NO_PROGRESS: Duration = Duration::from_secs(30);

/// [`FetchOptions::rdr_timeout`] by default: a metadata answer comes from the producer (it
/// is MustBeFresh), so a round trip or two; one that does not answer costs only this.
pub const DEFAULT_RDR_TIMEOUT: Duration = Duration::from_millis(500);

impl Default for FetchOptions {
    fn default() -> Self {
        FetchOptions {
            discovery: Discovery::Auto,
            rdr_timeout: DEFAULT_RDR_TIMEOUT,
            cc: CcOptions::default(),
            lifetime: Duration::from_secs(4),
            max_retries: 15,
            min_rto: Duration::from_millis(100),
            max_rto: Duration::from_secs(60),
            no_progress: None,
        }
    }
}

impl FetchOptions {
    /// The largest RTO in force: [`FetchOptions::max_rto`], at most the Interest lifetime.
    pub fn effective_max_rto(&self) -> Duration {
        self.max_rto.min(self.lifetime).max(self.min_rto)
    }

    /// The no-progress limit by default: three of the largest RTO (a segment sent three
    /// times at the longest timer, none answered), at most [`MAX_DEFAULT_NO_PROGRESS`].
    pub fn default_no_progress(&self) -> Duration {
        (self.effective_max_rto() * 3).min(MAX_DEFAULT_NO_PROGRESS)
    }

    /// The no-progress limit in force.
    pub fn no_progress_limit(&self) -> Duration {
        self.no_progress
            .unwrap_or_else(|| self.default_no_progress())
    }
}

/// What a fetch counted.
#[derive(Debug, Clone, Default)]
pub struct FetchStats {
    /// The versioned name fetched, once known.
    pub versioned: Option<Name>,
    /// How the version was found ([`Discovery::Rdr`] or [`Discovery::Iterative`]).
    pub discovered_by: Option<Discovery>,
    /// Why RDR was tried and found nothing, when it was.
    pub rdr_failure: Option<RdrFailure>,
    /// Segments received (each counted once).
    pub segments: u64,
    /// The last segment number, once FinalBlockId was seen.
    pub final_segment: Option<u64>,
    /// Content octets written.
    pub octets: u64,
    /// Interests sent again after a timeout or Nack.
    pub retransmissions: u64,
    /// Interests that timed out.
    pub timeouts: u64,
    /// Interests found lost before their timer: overtaken by a later one answered, or
    /// probed in the tail of the fetch ([`super::loss`]).
    pub lost_early: u64,
    /// Data that carried a CongestionMark.
    pub congestion_marks: u64,
    /// Nacks received.
    pub nacks: u64,
    /// Times the window was cut.
    pub window_decreases: u64,
    /// Smallest RTT sample.
    pub rtt_min: Option<Duration>,
    /// Largest RTT sample.
    pub rtt_max: Option<Duration>,
    /// Sum of the RTT samples, for the mean.
    rtt_sum: Duration,
    /// Number of RTT samples.
    rtt_samples: u64,
    /// The congestion window now.
    pub cwnd: f64,
    /// Time since the fetch started.
    pub elapsed: Duration,
    /// Time since the last progress (a segment or discovery answer received).
    pub stalled_for: Duration,
    /// What the fetch waits for longest: the name of the oldest unanswered Interest, and
    /// how often it was retransmitted.
    pub waiting_for: Option<(Name, u32)>,
}

impl FetchStats {
    /// The mean RTT sample.
    pub fn rtt_avg(&self) -> Option<Duration> {
        (self.rtt_samples > 0).then(|| self.rtt_sum / self.rtt_samples as u32)
    }

    fn add_rtt(&mut self, rtt: Duration) {
        self.rtt_min = Some(self.rtt_min.map_or(rtt, |m| m.min(rtt)));
        self.rtt_max = Some(self.rtt_max.map_or(rtt, |m| m.max(rtt)));
        self.rtt_sum += rtt;
        self.rtt_samples += 1;
    }
}

/// Why a fetch failed.
#[derive(Debug, Error)]
pub enum FetchError {
    /// The connection failed.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// Writing the content failed.
    #[error("writing the content: {0}")]
    Write(std::io::Error),
    /// Nothing arrived for [`FetchOptions::no_progress`]: the path is gone.
    #[error("no progress for {:.1} s, giving up (waiting for {name} after {retries} retransmissions)", .waited.as_secs_f64())]
    NoProgress {
        /// How long nothing arrived.
        waited: Duration,
        /// The oldest Interest unanswered.
        name: Name,
        /// Its retransmissions.
        retries: u32,
    },
    /// A segment was retransmitted too often.
    #[error("{name}: no answer after {retries} retransmissions")]
    TooManyRetries {
        /// The Interest's name.
        name: Name,
        /// Retransmissions made.
        retries: u32,
    },
    /// The network refused an Interest for a reason retransmitting does not fix.
    #[error("Nack ({}) for {name}", nack_reason_text(*.reason))]
    Nack {
        /// The NackReason.
        reason: NackReason,
        /// The Interest's name.
        name: Name,
    },
    /// The discovery answer is not a segment of a versioned object.
    #[error("{0} is not a segment of a versioned object under the name asked (expected <name>/v=<version>/seg=<n>)")]
    NotSegmented(Name),
    /// RDR (asked alone) found no version.
    #[error("RDR discovery of {name}: {failure}")]
    Rdr {
        /// The metadata name asked.
        name: Name,
        /// What went wrong.
        failure: RdrFailure,
    },
}

/// How often [`fetch`] shows its counters to its progress callback, at most: finding what the
/// fetch waits for looks through the window, too much to do for every batch of segments.
pub const REPORT_EVERY: Duration = Duration::from_millis(10);

/// One outstanding segment Interest.
#[derive(Debug, Clone, Copy)]
struct InFlight {
    seg: u64,
    sent_at: Instant,
    retries: u32,
}

/// The state of one fetch.
struct Fetcher<'a> {
    pipe: Pipeline,
    opts: &'a FetchOptions,
    progress: &'a mut dyn FnMut(&FetchStats),
    started: Instant,
    /// When a segment or discovery answer last arrived (or the fetch started).
    last_progress: Instant,
    /// When the counters are next shown to `progress`.
    next_report: Instant,
    /// What discovery waits for, while it does.
    discovering: Option<(Name, u32)>,
    window: Window,
    rtt: RttEstimator,
    loss: LossDetector,
    /// When the RTO was last backed off, and to what.
    last_backoff: Option<(Instant, Duration)>,
    versioned: Name,
    /// Outstanding Interests by identifier, which the pipeline hands out in the order they
    /// are sent: oldest first.
    in_flight: BTreeMap<InterestId, InFlight>,
    /// Segments to send again, with their retry counts.
    /// Lowest segment first: the output waits for the oldest, so it is resent first
    /// (a queue would let a shrunken window cycle through later losses before it).
    retx: BTreeMap<u64, u32>,
    next_new: u64,
    final_seg: Option<u64>,
    /// Received segments not yet written.
    ready: BTreeMap<u64, Bytes>,
    next_write: u64,
    stats: FetchStats,
}

/// Fetches the segmented object `name` (a prefix whose version is discovered as
/// [`FetchOptions::discovery`] says, or a name ending in a version) and writes its content to
/// `out` in order. `progress` sees the counters after a batch of events, at most every
/// [`REPORT_EVERY`], and once more when the fetch gives up for lack of progress.
pub fn fetch(
    pipe: Pipeline,
    name: &Name,
    opts: &FetchOptions,
    out: &mut dyn Write,
    progress: &mut dyn FnMut(&FetchStats),
) -> Result<FetchStats, FetchError> {
    let started = Instant::now();
    let mut f = Fetcher {
        pipe,
        opts,
        progress,
        started,
        last_progress: started,
        next_report: started,
        discovering: None,
        window: Window::new(opts.cc),
        rtt: rto::estimator(
            Duration::from_secs(1),
            opts.min_rto,
            opts.effective_max_rto(),
        ),
        loss: LossDetector::default(),
        last_backoff: None,
        versioned: name.clone(),
        in_flight: BTreeMap::new(),
        retx: BTreeMap::new(),
        next_new: 0,
        final_seg: None,
        ready: BTreeMap::new(),
        next_write: 0,
        stats: FetchStats::default(),
    };
    if let Some(first) = f.find_version(name)? {
        f.accept(first, out)?;
    }
    while f.final_seg.is_none_or(|last| f.next_write <= last) {
        let now = Instant::now();
        let next_loss = f.detect_losses(now)?;
        f.fill_window()?;
        let until = next_loss.map_or(now + Duration::from_secs(1), |t| {
            t.min(now + Duration::from_secs(1))
        });
        for ev in f.pipe.poll(until)? {
            f.on_event(ev, out)?;
        }
        f.report()?;
    }
    out.flush().map_err(FetchError::Write)?;
    f.stats.elapsed = started.elapsed();
    Ok(f.stats)
}

impl Fetcher<'_> {
    /// Updates the counters, shows them to the progress callback, and fails when nothing
    /// arrived for the no-progress limit.
    fn report(&mut self) -> Result<(), FetchError> {
        let now = Instant::now();
        if now < self.next_report && now - self.last_progress < self.opts.no_progress_limit() {
            return Ok(());
        }
        self.next_report = now + REPORT_EVERY;
        self.stats.cwnd = self.window.cwnd();
        self.stats.elapsed = now - self.started;
        self.stats.stalled_for = now - self.last_progress;
        // The oldest segment not received is what the output waits for.
        let oldest = self.next_write;
        self.stats.waiting_for = self.discovering.clone().or_else(|| {
            let retries = self
                .in_flight
                .values()
                .filter(|s| s.seg == oldest)
                .map(|s| s.retries)
                .chain(self.retx.get(&oldest).copied())
                .max()?;
            Some((segment_name(&self.versioned, oldest), retries))
        });
        (self.progress)(&self.stats);
        if self.stats.stalled_for >= self.opts.no_progress_limit() {
            let (name, retries) = self
                .stats
                .waiting_for
                .clone()
                .unwrap_or_else(|| (self.versioned.clone(), 0));
            return Err(FetchError::NoProgress {
                waited: self.stats.stalled_for,
                name,
                retries,
            });
        }
        Ok(())
    }

    /// Sets the versioned name: `name` itself when it ends in a version, else by discovery.
    /// Returns the first Data when discovery brought one (a segment).
    fn find_version(&mut self, name: &Name) -> Result<Option<Data>, FetchError> {
        let rdr_first = match self.opts.discovery {
            _ if ends_in_version(name) => return self.discover_iterative(name),
            Discovery::Iterative => return self.discover_iterative(name),
            Discovery::Rdr => self.discover_rdr(name, self.opts.max_retries)?,
            Discovery::Auto => self.discover_rdr(name, 0)?,
        };
        match rdr_first {
            Ok(versioned) => {
                self.found(versioned, Discovery::Rdr);
                Ok(None)
            }
            Err(failure) if self.opts.discovery == Discovery::Auto => {
                self.stats.rdr_failure = Some(failure);
                self.discover_iterative(name)
            }
            Err(failure) => Err(FetchError::Rdr {
                name: metadata_name(name),
                failure,
            }),
        }
    }

    /// Asks `<name>/32=metadata` (retried `retries` times after a timeout or a retryable
    /// Nack) and returns the versioned name its Content holds.
    fn discover_rdr(
        &mut self,
        name: &Name,
        retries: u32,
    ) -> Result<Result<Name, RdrFailure>, FetchError> {
        let mut interest = Interest::new(metadata_name(name));
        interest.can_be_prefix = true;
        interest.must_be_fresh = true;
        let quick = retries == 0;
        let lifetime = if quick {
            self.opts.rdr_timeout
        } else {
            self.opts.lifetime
        };
        interest.lifetime = Some(lifetime.as_millis().max(1) as u64);
        let mut failure = RdrFailure::Timeout;
        for attempt in 0..=retries {
            if attempt > 0 {
                self.stats.retransmissions += 1;
            }
            self.discovering = Some((interest.name.clone(), attempt));
            let timeout = if quick {
                self.opts.rdr_timeout
            } else {
                self.rtt.rto()
            };
            match self.ask(interest.clone(), timeout)? {
                Event::Data { data, .. } => {
                    self.discovering = None;
                    return Ok(versioned_name_of_metadata(&interest.name, &data)
                        .ok_or(RdrFailure::Malformed));
                }
                Event::Nack { reason, .. } => {
                    failure = RdrFailure::Nack(reason);
                    if !retryable(reason) {
                        break;
                    }
                }
                Event::Timeout { .. } => failure = RdrFailure::Timeout,
            }
        }
        self.discovering = None;
        Ok(Err(failure))
    }

    /// The versioned name is `versioned`, found by `how`.
    fn found(&mut self, versioned: Name, how: Discovery) {
        self.versioned = versioned.clone();
        self.stats.versioned = Some(versioned);
        self.stats.discovered_by = Some(how);
    }

    /// Sends a CanBePrefix Interest for `name` (retried on timeout) and returns the first
    /// Data, after setting the versioned name from it; `None` when the answer was the RDR
    /// metadata packet of `name` instead: a cache on the way may hold the one an RDR
    /// Interest that timed out brought late, and it names the version as well.
    fn discover_iterative(&mut self, name: &Name) -> Result<Option<Data>, FetchError> {
        let mut interest = Interest::new(name.clone());
        interest.can_be_prefix = true;
        interest.must_be_fresh = !ends_in_version(name);
        interest.lifetime = Some(self.opts.lifetime.as_millis() as u64);
        let mut retries = 0;
        loop {
            self.discovering = Some((interest.name.clone(), retries));
            match self.ask(interest.clone(), self.rtt.rto())? {
                Event::Data { data, .. } => {
                    self.discovering = None;
                    if let Some(versioned) = versioned_name_of_metadata(&metadata_name(name), &data)
                    {
                        self.found(versioned, Discovery::Rdr);
                        return Ok(None);
                    }
                    let (versioned, _) = parse_segment_reply(name, &data.name)
                        .ok_or_else(|| FetchError::NotSegmented(data.name.clone()))?;
                    self.versioned = versioned.clone();
                    self.stats.versioned = Some(versioned);
                    if !ends_in_version(name) {
                        self.stats.discovered_by = Some(Discovery::Iterative);
                    }
                    return Ok(Some(*data));
                }
                Event::Nack { reason, .. } => {
                    if !retryable(reason) {
                        return Err(FetchError::Nack {
                            reason,
                            name: name.clone(),
                        });
                    }
                }
                Event::Timeout { .. } => {}
            }
            retries += 1;
            self.stats.retransmissions += 1;
            if retries > self.opts.max_retries {
                return Err(FetchError::TooManyRetries {
                    name: name.clone(),
                    retries: self.opts.max_retries,
                });
            }
        }
    }

    /// Sends one Interest and waits for what happens to it, counting RTT, Nacks and timeouts
    /// (a timeout backs the RTO off), reporting progress at least every second.
    fn ask(&mut self, interest: Interest, timeout: Duration) -> Result<Event, FetchError> {
        self.pipe.express(interest, timeout)?;
        let ev = loop {
            let wait = timeout.min(Duration::from_secs(1));
            if let Some(ev) = self.pipe.poll(Instant::now() + wait)?.pop() {
                break ev;
            }
            self.report()?;
        };
        match &ev {
            Event::Data { rtt, .. } => {
                self.last_progress = Instant::now();
                self.rtt.add_sample(*rtt);
                self.stats.add_rtt(*rtt);
            }
            Event::Nack { .. } => self.stats.nacks += 1,
            Event::Timeout { .. } => {
                self.stats.timeouts += 1;
                self.rtt.backoff();
            }
        }
        Ok(ev)
    }

    /// Sends Interests while the window allows: retransmissions first, then new segments up
    /// to the last one when known.
    fn fill_window(&mut self) -> Result<(), FetchError> {
        while self.in_flight.len() < self.window.allowed() {
            let (seg, retries) = if let Some(r) = self.retx.pop_first() {
                r
            } else if self.final_seg.is_none_or(|last| self.next_new <= last) {
                self.next_new += 1;
                (self.next_new - 1, 0)
            } else {
                break;
            };
            if self.ready.contains_key(&seg) || seg < self.next_write {
                continue;
            }
            let mut i = Interest::new(segment_name(&self.versioned, seg));
            i.lifetime = Some(self.opts.lifetime.as_millis() as u64);
            // A retransmission's timer never fires before the next one would get past the
            // forwarders' retransmission suppression (a retry sent sooner is held back there,
            // and spends one of the segment's retries for nothing).
            let timer = self.rtt.rto().max(suppression_wait(retries));
            let id = self.pipe.express(i, timer)?;
            self.in_flight.insert(
                id,
                InFlight {
                    seg,
                    sent_at: Instant::now(),
                    retries,
                },
            );
            if retries > 0 {
                self.stats.retransmissions += 1;
            }
        }
        Ok(())
    }

    fn on_event(&mut self, ev: Event, out: &mut dyn Write) -> Result<(), FetchError> {
        let now = Instant::now();
        match ev {
            Event::Data {
                id,
                data,
                rtt,
                congestion_mark,
            } => {
                let Some(sent) = self.in_flight.remove(&id) else {
                    return Ok(());
                };
                self.last_progress = now;
                if sent.retries == 0 {
                    self.rtt.add_sample(rtt);
                }
                self.loss.on_answer(sent.sent_at, rtt, sent.retries > 0);
                self.stats.add_rtt(rtt);
                if congestion_mark {
                    self.stats.congestion_marks += 1;
                    self.cut(sent.sent_at, now);
                }
                self.window.on_data(now, rto::srtt(&self.rtt));
                self.accept(*data, out)
            }
            Event::Nack { id, reason } => {
                let Some(sent) = self.in_flight.remove(&id) else {
                    return Ok(());
                };
                self.stats.nacks += 1;
                if !retryable(reason) {
                    return Err(FetchError::Nack {
                        reason,
                        name: segment_name(&self.versioned, sent.seg),
                    });
                }
                if reason == NackReason::CONGESTION {
                    self.cut(sent.sent_at, now);
                }
                self.retransmit(sent)
            }
            Event::Timeout { id } => {
                let Some(sent) = self.in_flight.remove(&id) else {
                    return Ok(());
                };
                self.stats.timeouts += 1;
                // Back the RTO off once per expiry of the timer, as TCP does with its one
                // timer, and give every Interest still out the backed-off timeout from when
                // it was sent (each Interest's timer is set when it is sent): a queue that
                // held the whole window past the RTO then costs a retransmission per expiry,
                // not the window. A timeout reported with the one that backed off (sent
                // before it, not yet waiting the backed-off RTO) is the same expiry.
                let expired = self
                    .last_backoff
                    .is_none_or(|(b, rto)| sent.sent_at > b || now >= sent.sent_at + rto);
                if expired {
                    self.rtt.backoff();
                    self.last_backoff = Some((now, self.rtt.rto()));
                    for (&id, s) in &self.in_flight {
                        let wait = self.rtt.rto().max(suppression_wait(s.retries));
                        self.pipe.postpone(id, s.sent_at + wait);
                    }
                }
                self.cut(sent.sent_at, now);
                self.retransmit(sent)
            }
        }
    }

    /// Declares lost, and queues again, the outstanding Interests [`LossDetector`] says are
    /// (a loss overtaken by later answers cuts the window as a timeout does; a tail probe
    /// does not). Returns when the next one will be, if any.
    fn detect_losses(&mut self, now: Instant) -> Result<Option<Instant>, FetchError> {
        let tail = self.retx.is_empty() && self.final_seg.is_some_and(|last| self.next_new > last);
        let scan = self.loss.scan(tail, &self.rtt);
        let mut next: Option<Instant> = None;
        let mut lost = Vec::new();
        // Oldest first (identifiers follow the order of sending): past the first one that
        // cannot be lost early, none can, so a pass looks at the few overtaken Interests and
        // not at the whole window.
        for (&id, s) in &self.in_flight {
            if !scan.may_lose(s.sent_at) {
                break;
            }
            match scan.lost_at(s.sent_at, s.retries) {
                Some((at, why)) if at <= now => lost.push((id, why)),
                Some((at, _)) => next = Some(next.map_or(at, |n| n.min(at))),
                None => {}
            }
        }
        for (id, why) in lost {
            let sent = self.in_flight.remove(&id).expect("found above");
            self.pipe.cancel(id);
            self.stats.lost_early += 1;
            if why == Lost::Overtaken {
                self.cut(sent.sent_at, now);
            }
            self.retransmit(sent)?;
        }
        Ok(next)
    }

    /// Cuts the window for a congestion signal about an Interest sent at `sent_at` (unless it
    /// was already cut in this round trip).
    fn cut(&mut self, sent_at: Instant, now: Instant) {
        if self.window.on_congestion(sent_at, now) {
            self.stats.window_decreases += 1;
        }
    }

    /// Queues `sent`'s segment again, or fails when it was retried too often.
    fn retransmit(&mut self, sent: InFlight) -> Result<(), FetchError> {
        if self.final_seg.is_some_and(|last| sent.seg > last) {
            return Ok(());
        }
        if sent.retries >= self.opts.max_retries {
            return Err(FetchError::TooManyRetries {
                name: segment_name(&self.versioned, sent.seg),
                retries: sent.retries,
            });
        }
        self.retx.insert(sent.seg, sent.retries + 1);
        Ok(())
    }

    /// Stores a received segment, learns the end from its FinalBlockId, forgets Interests past
    /// the end, and writes what is now in order.
    fn accept(&mut self, data: Data, out: &mut dyn Write) -> Result<(), FetchError> {
        let Some(seg) = data.name.last().and_then(|c| c.as_segment()) else {
            return Ok(());
        };
        if self.final_seg.is_none() {
            if let Some(last) = data
                .meta
                .final_block_id
                .as_ref()
                .and_then(|c| c.as_ref().as_segment())
            {
                self.set_final(last);
            }
        }
        if seg < self.next_write || self.final_seg.is_some_and(|last| seg > last) {
            return Ok(());
        }
        if self
            .ready
            .insert(seg, data.content.unwrap_or_default())
            .is_none()
        {
            self.stats.segments += 1;
        }
        while let Some(part) = self.ready.remove(&self.next_write) {
            out.write_all(&part).map_err(FetchError::Write)?;
            self.stats.octets += part.len() as u64;
            self.next_write += 1;
        }
        Ok(())
    }

    fn set_final(&mut self, last: u64) {
        self.final_seg = Some(last);
        self.stats.final_segment = Some(last);
        let beyond: Vec<InterestId> = self
            .in_flight
            .iter()
            .filter(|(_, s)| s.seg > last)
            .map(|(&id, _)| id)
            .collect();
        for id in beyond {
            self.in_flight.remove(&id);
            self.pipe.cancel(id);
        }
        self.retx.retain(|&seg, _| seg <= last);
    }
}

/// The versioned name in a metadata Data answering `asked` (`<prefix>/32=metadata`): named
/// `<asked>/<version>/<segment>`, its Content holding a Name (elements before it skipped).
fn versioned_name_of_metadata(asked: &Name, data: &Data) -> Option<Name> {
    let n = data.name.len();
    let well_named = n == asked.len() + 2
        && asked.is_prefix_of(&data.name)
        && asked.last()?.typ() == tlv_type::KEYWORD_NAME_COMPONENT
        && asked.last()?.value() == METADATA_KEYWORD
        && data.name.get(n - 2)?.as_version().is_some()
        && data.name.get(n - 1)?.as_segment().is_some();
    if !well_named || data.meta.content_type.is_some_and(|t| t.0 != 0) {
        return None;
    }
    let content = data.content.as_ref()?;
    let mut r = Reader::new(content);
    while let Some(e) = r.next_element() {
        let e = e.ok()?;
        if e.typ == tlv_type::NAME {
            return Name::decode(content.slice(e.range()))
                .ok()
                .filter(|v| !v.is_empty());
        }
    }
    None
}

/// Whether retransmitting can help after a Nack with `reason`.
fn retryable(reason: NackReason) -> bool {
    reason == NackReason::CONGESTION || reason == NackReason::DUPLICATE
}

#[cfg(test)]
mod tests {
    use super::*;
    use kite_packet::DigestSha256;

    fn name(s: &str) -> Name {
        s.parse().unwrap()
    }

    fn metadata(data_name: &str, content: Vec<u8>) -> Data {
        Data::decode(
            Data::new(name(data_name), content)
                .sign(&DigestSha256)
                .unwrap(),
        )
        .unwrap()
    }

    #[test]
    fn metadata_must_be_well_named_and_hold_a_name() {
        let asked = metadata_name(&name("/a"));
        let versioned = name("/a/v=5").to_wire();
        let good = format!("{}/v=1/seg=0", asked.to_uri());
        // An element before the Name is skipped, as ndn-cxx skips it.
        let mut content = vec![0x80, 1, 9];
        content.extend_from_slice(&versioned);
        assert_eq!(
            versioned_name_of_metadata(&asked, &metadata(&good, content)),
            Some(name("/a/v=5"))
        );
        for bad in [
            format!("{}/v=1", asked.to_uri()),
            format!("{}/1/seg=0", asked.to_uri()),
            "/b/32=metadata/v=1/seg=0".to_owned(),
        ] {
            let d = metadata(&bad, versioned.to_vec());
            assert_eq!(versioned_name_of_metadata(&asked, &d), None, "{bad}");
        }
        let d = metadata(&good, b"no name here".to_vec());
        assert_eq!(versioned_name_of_metadata(&asked, &d), None);
        let mut d = metadata(&good, versioned.to_vec());
        d.meta.content_type = Some(kite_packet::ContentType::NACK);
        assert_eq!(versioned_name_of_metadata(&asked, &d), None);
    }
}
