//! Segmented fetch, as ndncatchunks does it: discover the version, keep a congestion window
//! of segment Interests outstanding, retransmit on RTO, learn the end from FinalBlockId, and
//! write the content in order.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::io::Write;
use std::time::{Duration, Instant};

use bytes::Bytes;
use kite_packet::{Data, Interest, NackReason, Name};
use thiserror::Error;

use super::cc::{CcOptions, Window};
use super::naming::{ends_in_version, parse_segment_reply, segment_name};
use super::rto::RttEstimator;
use crate::consumer::{Event, InterestId, Pipeline};
use crate::error::{nack_reason_text, ClientError};

/// How a fetch behaves.
#[derive(Debug, Clone)]
pub struct FetchOptions {
    /// The congestion window.
    pub cc: CcOptions,
    /// InterestLifetime of every Interest.
    pub lifetime: Duration,
    /// Retransmissions of one segment before the fetch fails.
    pub max_retries: u32,
    /// The smallest RTO.
    pub min_rto: Duration,
    /// The largest RTO (after backoff).
    pub max_rto: Duration,
}

impl Default for FetchOptions {
    fn default() -> Self {
        FetchOptions {
            cc: CcOptions::default(),
            lifetime: Duration::from_secs(4),
            max_retries: 15,
            min_rto: Duration::from_millis(200),
            max_rto: Duration::from_secs(60),
        }
    }
}

/// What a fetch counted.
#[derive(Debug, Clone, Default)]
pub struct FetchStats {
    /// The versioned name fetched, once known.
    pub versioned: Option<Name>,
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
    Write(#[source] std::io::Error),
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
}

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
    window: Window,
    rtt: RttEstimator,
    /// When the RTO was last backed off.
    last_backoff: Option<Instant>,
    versioned: Name,
    in_flight: HashMap<InterestId, InFlight>,
    /// Segments to send again, with their retry counts.
    retx: VecDeque<(u64, u32)>,
    next_new: u64,
    final_seg: Option<u64>,
    /// Received segments not yet written.
    ready: BTreeMap<u64, Bytes>,
    next_write: u64,
    stats: FetchStats,
}

/// Fetches the segmented object `name` (a prefix whose version is discovered with a
/// CanBePrefix + MustBeFresh Interest, or a name ending in a version) and writes its content
/// to `out` in order. `progress` sees the counters after each batch of events.
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
        window: Window::new(opts.cc),
        rtt: RttEstimator::new(Duration::from_secs(1), opts.min_rto, opts.max_rto),
        last_backoff: None,
        versioned: name.clone(),
        in_flight: HashMap::new(),
        retx: VecDeque::new(),
        next_new: 0,
        final_seg: None,
        ready: BTreeMap::new(),
        next_write: 0,
        stats: FetchStats::default(),
    };
    let first = f.discover(name)?;
    f.accept(first, out)?;
    while f.final_seg.is_none_or(|last| f.next_write <= last) {
        f.fill_window()?;
        let events = f.pipe.poll(Instant::now() + Duration::from_secs(1))?;
        for ev in events {
            f.on_event(ev, out)?;
        }
        f.stats.cwnd = f.window.cwnd();
        f.stats.elapsed = started.elapsed();
        progress(&f.stats);
    }
    out.flush().map_err(FetchError::Write)?;
    f.stats.elapsed = started.elapsed();
    Ok(f.stats)
}

impl Fetcher<'_> {
    /// Sends the discovery Interest (retried on timeout) and returns the first Data, after
    /// setting the versioned name from it.
    fn discover(&mut self, name: &Name) -> Result<Data, FetchError> {
        let mut interest = Interest::new(name.clone());
        interest.can_be_prefix = true;
        interest.must_be_fresh = !ends_in_version(name);
        interest.lifetime = Some(self.opts.lifetime.as_millis() as u64);
        let mut retries = 0;
        loop {
            self.pipe.express(interest.clone(), self.rtt.rto())?;
            let ev = loop {
                if let Some(ev) = self.pipe.poll(Instant::now() + self.rtt.rto())?.pop() {
                    break ev;
                }
            };
            match ev {
                Event::Data { data, rtt, .. } => {
                    self.rtt.add_sample(rtt);
                    self.stats.add_rtt(rtt);
                    let (versioned, _) = parse_segment_reply(name, &data.name)
                        .ok_or_else(|| FetchError::NotSegmented(data.name.clone()))?;
                    self.versioned = versioned.clone();
                    self.stats.versioned = Some(versioned);
                    return Ok(*data);
                }
                Event::Nack { reason, .. } => {
                    self.stats.nacks += 1;
                    if !retryable(reason) {
                        return Err(FetchError::Nack {
                            reason,
                            name: name.clone(),
                        });
                    }
                }
                Event::Timeout { .. } => {
                    self.stats.timeouts += 1;
                    self.rtt.backoff();
                }
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

    /// Sends Interests while the window allows: retransmissions first, then new segments up
    /// to the last one when known.
    fn fill_window(&mut self) -> Result<(), FetchError> {
        while self.in_flight.len() < self.window.allowed() {
            let (seg, retries) = if let Some(r) = self.retx.pop_front() {
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
            let id = self.pipe.express(i, self.rtt.rto())?;
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
                if sent.retries == 0 {
                    self.rtt.add_sample(rtt);
                }
                self.stats.add_rtt(rtt);
                if congestion_mark {
                    self.stats.congestion_marks += 1;
                    self.cut(sent.sent_at, now);
                }
                self.window.on_data(now, self.rtt.srtt());
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
                // Back the RTO off once per loss event, however many Interests of its round
                // trip time out.
                if self.last_backoff.is_none_or(|b| sent.sent_at > b) {
                    self.rtt.backoff();
                    self.last_backoff = Some(now);
                }
                self.cut(sent.sent_at, now);
                self.retransmit(sent)
            }
        }
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
        self.retx.push_back((sent.seg, sent.retries + 1));
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
        self.retx.retain(|&(seg, _)| seg <= last);
    }
}

/// Whether retransmitting can help after a Nack with `reason`.
fn retryable(reason: NackReason) -> bool {
    reason == NackReason::CONGESTION || reason == NackReason::DUPLICATE
}
