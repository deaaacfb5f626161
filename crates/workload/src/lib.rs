//! The in-process forwarding benchmark behind `kite bench fwd` (the NDN-DPDK paper's section 7
//! method, on one forwarding thread, without sockets).
//!
//! A virtual consumer sends Interest frames (NDNLPv2 with its PIT token), the thread does the
//! whole per-packet work it does in the daemon — frame and forwarder-view decode, prefix
//! hashing, Name Dispatch Table lookup, the pipelines (PCCT, FIB, strategy, CS, timers), and
//! encoding every outgoing packet's LP header with its token — and a virtual producer answers
//! each Interest it receives with a Data frame echoing the token, built as a datagram receive
//! path puts it: alone in a reusable buffer when the thread has one idle (the CS's evictions
//! give them back), else into a receive arena. Names follow the paper: `/f<i>/c<k>/127=Y.../seg=<n>`, FIB entries
//! `/f<i>` spread over the whole table so every lookup lands on a different entry.

use core::time::Duration;
use std::time::Instant;

use bytes::{BufMut, Bytes, BytesMut};
use kite_packet::{
    tlv_type, Component, ContentType, Data, DataView, HopHeader, Interest, InterestView, LpHeader,
    LpPacket, Name, Nonce, PitToken, SignatureInfo, SignatureType,
};

use kite_fw::face::{FaceId, FaceScope, LinkType};
use kite_fw::fib::{FibConfig, FibWriter};
use kite_fw::forwarder::{Forwarder, ForwarderConfig, InData, InInterest};
use kite_fw::hash::NameHasher;
use kite_fw::ndt::Ndt;
use kite_fw::out::Out;
use kite_fw::pcct::{Pcct, PcctConfig};
use kite_fw::strategy::{FaceInfo, StrategyTable};
use kite_fw::time::{Clock, MonotonicClock};

const CONSUMER: FaceId = FaceId(300);
const PRODUCER: FaceId = FaceId(400);
const HOT_NAMES: usize = 1024;

/// What to measure.
#[derive(Debug, Clone)]
pub struct WorkloadConfig {
    /// Components per Interest name (at least 3).
    pub name_len: usize,
    /// FIB entries.
    pub fib_entries: usize,
    /// Percentage of Interests answered by the CS.
    pub cs_hit_percent: u8,
    /// CanBePrefix Interests answered by longer-named Data (prefix match) instead of exact.
    pub prefix_match: bool,
    /// With exact names (`prefix_match` off): every Interest whose segment number is a
    /// multiple of this (about one in N) is a CanBePrefix one answered by a longer Data, so
    /// the CS keeps its ordered index while the rest are exact (0: none).
    pub prefix_every: u8,
    /// Content octets per Data.
    pub payload: usize,
    /// Packets per burst.
    pub burst: usize,
    /// How long to measure.
    pub duration: Duration,
    /// Strategy name (e.g. `/localhost/nfd/strategy/best-route`).
    pub strategy: Name,
    /// The strategies `strategy` is looked up in (built-ins, plus any loaded program).
    pub strategies: StrategyTable,
    /// CS capacity of the thread (the paper's base configuration: 2^15).
    pub cs_capacity: usize,
    /// Skip the forwarding tables and pipelines: each Interest goes straight to the producer
    /// carrying the consumer's token, each Data straight back with the token it echoes. What
    /// is left (frame and view decodes, prefix hashes, dispatch, LP encoding, the virtual
    /// producer) is the floor an exchange costs whatever the tables do.
    pub passthrough: bool,
}

impl Default for WorkloadConfig {
    fn default() -> Self {
        WorkloadConfig {
            name_len: 4,
            fib_entries: 10_000,
            cs_hit_percent: 0,
            prefix_match: false,
            prefix_every: 0,
            payload: 1000,
            burst: 32,
            duration: Duration::from_secs(5),
            strategy: "/localhost/nfd/strategy/best-route"
                .parse()
                .expect("valid name"),
            strategies: StrategyTable::builtin(),
            cs_capacity: 1 << 15,
            passthrough: false,
        }
    }
}

/// What was measured.
#[derive(Debug, Clone, Default)]
pub struct WorkloadReport {
    /// Interest/Data exchanges completed (Data delivered to the consumer).
    pub exchanges: u64,
    /// Of which answered from the CS.
    pub cs_hits: u64,
    /// Nacks the consumer got (should be 0).
    pub nacks: u64,
    /// Measured time.
    pub elapsed: Duration,
    /// Exchanges per second.
    pub exchanges_per_sec: f64,
    /// Median time per exchange (a burst's time divided by its exchanges), ns.
    pub p50_ns: u64,
    /// 99th percentile of the same, ns.
    pub p99_ns: u64,
    /// Octets the thread handed to the output stage (headers and packets).
    pub bytes_out: u64,
    /// Resident memory the FIB took per entry (both RCU copies, index, names), octets.
    pub fib_bytes_per_entry: f64,
    /// Octets a pending Interest takes in the PCCT (entry, PIT entry, index), not counting the
    /// Interest's own octets, which it shares with the received packet.
    pub pit_bytes_per_entry: usize,
    /// Octets a cached Data takes in the PCCT (entry, index) plus the Data's own octets.
    pub cs_bytes_per_entry: usize,
}

/// Progress while measuring: elapsed time and exchanges per second so far.
pub type Progress<'a> = &'a mut dyn FnMut(Duration, f64);

/// Builds the scenario and measures it; `progress` is called about once a second.
pub fn run(config: &WorkloadConfig, progress: Progress<'_>) -> Result<WorkloadReport, String> {
    let mut w = Workload::new(config)?;
    let mut per_exchange = Vec::with_capacity(1 << 20);
    let start = Instant::now();
    let mut next_report = Duration::from_secs(1);
    while start.elapsed() < config.duration {
        let t0 = Instant::now();
        let done = w.burst()?;
        let ns = t0.elapsed().as_nanos() as u64;
        if done > 0 && per_exchange.len() < per_exchange.capacity() {
            per_exchange.push(ns / done);
        }
        if start.elapsed() >= next_report {
            let secs = start.elapsed().as_secs_f64();
            progress(start.elapsed(), w.runner.report.exchanges as f64 / secs);
            next_report += Duration::from_secs(1);
        }
    }
    let mut r = w.runner.report;
    r.elapsed = start.elapsed();
    r.exchanges_per_sec = r.exchanges as f64 / r.elapsed.as_secs_f64();
    per_exchange.sort_unstable();
    r.p50_ns = percentile(&per_exchange, 50);
    r.p99_ns = percentile(&per_exchange, 99);
    Ok(r)
}

/// A ready scenario: a forwarding thread with its FIB built and its CS warmed, driven one
/// burst at a time (what `run` loops over, and what the criterion benchmark times).
pub struct Workload<'a> {
    fwd: Forwarder,
    _fib: FibWriter,
    clock: MonotonicClock,
    runner: Runner<'a>,
}

impl<'a> Workload<'a> {
    /// Builds the FIB, the forwarder and the packets, and warms the CS.
    pub fn new(config: &'a WorkloadConfig) -> Result<Self, String> {
        if config.name_len < 3 {
            return Err("--name-len must be at least 3 (prefix, consumer, segment)".into());
        }
        if config.cs_hit_percent > 100 {
            return Err("--cs-hit is a percentage (0-100)".into());
        }
        if config.burst == 0 {
            return Err("--burst must be at least 1".into());
        }
        if config.passthrough && config.cs_hit_percent > 0 {
            return Err("--passthrough skips the Content Store: it takes no --cs-hit".into());
        }
        let hasher = NameHasher::with_key(0x6b69_7465, 0x6265_6e63);
        let strategies = config.strategies.clone();
        let strategy = strategies
            .find(&config.strategy)
            .map_err(|e| format!("unknown strategy {}", e.0))?;

        let rss_before = resident_bytes();
        let (mut fib, readers) = FibWriter::new(hasher, FibConfig::default(), strategy);
        for i in 0..config.fib_entries.max(1) {
            fib.add_nexthop(&prefix(i), PRODUCER, 10)
                .map_err(|e| e.to_string())?;
        }
        fib.publish();
        let fib_bytes_per_entry =
            resident_bytes().saturating_sub(rss_before) as f64 / config.fib_entries.max(1) as f64;

        let clock = MonotonicClock::new();
        let fwd_config = ForwarderConfig {
            pcct: PcctConfig {
                capacity: (config.cs_capacity * 2 + 4 * config.burst).max(1 << 12),
                pit_capacity: (4 * config.burst).max(1 << 10),
                cs_capacity: config.cs_capacity,
                ..PcctConfig::default()
            },
            ..ForwarderConfig::default()
        };
        let mut fwd = Forwarder::new(
            0,
            fwd_config,
            readers.reader(),
            strategies,
            hasher,
            clock.now(),
        );
        for face in [CONSUMER, PRODUCER] {
            let info = FaceInfo {
                scope: FaceScope::NonLocal,
                link_type: LinkType::PointToPoint,
            };
            fwd.add_face(face, info);
        }
        let mut runner = Runner {
            config,
            scenario: Scenario::new(config),
            hasher,
            ndt: Ndt::new(16, 1, 2),
            arena: BytesMut::with_capacity(ARENA),
            header: Vec::with_capacity(64),
            interests: Vec::with_capacity(config.burst),
            data: Vec::with_capacity(config.burst),
            out: Vec::with_capacity(config.burst * 2),
            report: WorkloadReport::default(),
            cursor: 0,
        };
        runner.warm(&mut fwd, &clock);
        let data_octets = runner.scenario.data_tail.len() + 2 * 3 + 8 * config.name_len;
        runner.report = WorkloadReport {
            fib_bytes_per_entry,
            pit_bytes_per_entry: Pcct::ENTRY_BYTES + Pcct::PIT_ENTRY_BYTES,
            cs_bytes_per_entry: Pcct::ENTRY_BYTES + data_octets,
            ..WorkloadReport::default()
        };
        Ok(Workload {
            fwd,
            _fib: fib,
            clock,
            runner,
        })
    }

    /// One burst of exchanges; returns how many completed.
    pub fn burst(&mut self) -> Result<u64, String> {
        self.runner.burst(&mut self.fwd, &self.clock)
    }

    /// Counts so far.
    pub fn report(&self) -> &WorkloadReport {
        &self.runner.report
    }
}

/// Receive-arena size: frames are carved out of it as a socket read fills a buffer.
const ARENA: usize = 4 << 20;

/// FIB prefix number `i`.
fn prefix(i: usize) -> Name {
    Name::root().append_generic(format!("f{i}").as_bytes())
}

/// Pre-encoded Interest frames and the parts the producer needs to answer them.
struct Scenario {
    /// Interest frames for cold names (CS misses), cycled.
    cold: Vec<Bytes>,
    /// Interest frames for hot names (cached at warm-up).
    hot: Vec<Bytes>,
    /// Everything of a Data after its Name: MetaInfo, Content, SignatureInfo, SignatureValue.
    data_tail: Bytes,
    /// The component prefix-match Data adds to the Interest name.
    suffix: Option<Name>,
    /// Every Interest is a CanBePrefix one.
    all_prefix: bool,
    /// [`WorkloadConfig::prefix_every`].
    prefix_every: u8,
}

impl Scenario {
    fn new(c: &WorkloadConfig) -> Self {
        // Enough distinct cold names that the CS (LRU) never still holds one when it recurs.
        let pool = (c.cs_capacity * 4).clamp(1 << 12, 1 << 17);
        let frame = |k: usize, hot: bool| {
            let i = (k.wrapping_mul(7919)) % c.fib_entries.max(1);
            let mut name =
                prefix(i).append_generic(format!("{}{k}", if hot { 'h' } else { 'c' }).as_bytes());
            for _ in 3..c.name_len {
                name = name.append(Component::new(127, b"Y").expect("valid type"));
            }
            name = name.append(
                Component::new(tlv_type::SEGMENT_NAME_COMPONENT, &[(k % 251) as u8])
                    .expect("valid type"),
            );
            let mut interest = Interest::new(name);
            interest.nonce = Some(Nonce::from(k as u32));
            interest.lifetime = Some(4000);
            interest.can_be_prefix = c.prefix_match || prefix_segment(c, (k % 251) as u8);
            LpPacket {
                header: LpHeader {
                    pit_token: Some(PitToken::from_u64(k as u64)),
                    ..LpHeader::default()
                },
                fragment: Some(interest.encode()),
            }
            .encode()
        };
        let mut data = Data::new(Name::root(), vec![0xA5u8; c.payload]);
        data.meta.content_type = Some(ContentType::BLOB);
        data.meta.freshness_period = Some(3_600_000);
        data.sig_info = SignatureInfo::new(SignatureType::DIGEST_SHA256);
        data.sig_value = Bytes::from(vec![0u8; 32]);
        Scenario {
            cold: in_one_buffer((0..pool).map(|k| frame(k, false))),
            hot: in_one_buffer((0..HOT_NAMES).map(|k| frame(k, true))),
            data_tail: data.encode_after_name(),
            suffix: (c.prefix_match || c.prefix_every > 0)
                .then(|| Name::from_components([Component::new(127, b"Z").expect("valid type")])),
            all_prefix: c.prefix_match,
            prefix_every: c.prefix_every,
        }
    }
}

/// Whether the Interest of segment number `segment` is a CanBePrefix one under
/// [`WorkloadConfig::prefix_every`].
fn prefix_segment(c: &WorkloadConfig, segment: u8) -> bool {
    c.prefix_every > 0 && segment.is_multiple_of(c.prefix_every)
}

/// Copies `frames` into one buffer and returns them as slices of it: frames a face reads share
/// their receive buffer's reference count, and separate buffers would make every clone and
/// drop of a frame touch a cold count of its own, a cost the daemon does not have.
fn in_one_buffer(frames: impl Iterator<Item = Bytes>) -> Vec<Bytes> {
    let frames: Vec<Bytes> = frames.collect();
    let mut buf = BytesMut::with_capacity(frames.iter().map(Bytes::len).sum());
    for f in &frames {
        buf.put_slice(f);
    }
    let buf = buf.freeze();
    let mut at = 0;
    frames
        .iter()
        .map(|f| {
            at += f.len();
            buf.slice(at - f.len()..at)
        })
        .collect()
}

struct Runner<'a> {
    config: &'a WorkloadConfig,
    scenario: Scenario,
    hasher: NameHasher,
    ndt: Ndt,
    arena: BytesMut,
    header: Vec<u8>,
    interests: Vec<InInterest>,
    data: Vec<InData>,
    out: Vec<Out>,
    report: WorkloadReport,
    cursor: usize,
}

impl Runner<'_> {
    /// Fetches every hot name once so the CS holds it.
    fn warm(&mut self, fwd: &mut Forwarder, clock: &MonotonicClock) {
        for chunk in 0..HOT_NAMES.div_ceil(self.config.burst) {
            let frames: Vec<Bytes> = self
                .scenario
                .hot
                .iter()
                .skip(chunk * self.config.burst)
                .take(self.config.burst)
                .cloned()
                .collect();
            let _ = self.exchange(fwd, clock, frames.into_iter());
        }
    }

    /// One burst of Interests and the Data that answer them; returns exchanges completed.
    fn burst(&mut self, fwd: &mut Forwarder, clock: &MonotonicClock) -> Result<u64, String> {
        let burst = self.config.burst;
        let hit = u64::from(self.config.cs_hit_percent);
        let start = self.cursor;
        self.cursor += burst;
        let cold = &self.scenario.cold;
        let hot = &self.scenario.hot;
        // A deterministic mix: exchange k hits the CS when k mod 100 < hit percent.
        let frames: smallvec::SmallVec<[Bytes; 64]> = (start..start + burst)
            .map(|k| {
                if (k as u64 % 100) < hit {
                    hot[k % hot.len()].clone()
                } else {
                    cold[k % cold.len()].clone()
                }
            })
            .collect();
        self.exchange(fwd, clock, frames.into_iter())
    }

    // Kept out of line so profilers can collect exactly the measured work.
    #[inline(never)]
    fn exchange(
        &mut self,
        fwd: &mut Forwarder,
        clock: &MonotonicClock,
        frames: impl Iterator<Item = Bytes>,
    ) -> Result<u64, String> {
        let before = self.report.exchanges;
        // Input stage: frame, view, hashes, dispatch.
        for frame in frames {
            let lp = LpPacket::decode(frame).map_err(|e| e.to_string())?;
            let fragment = lp.fragment.ok_or("Interest frame without fragment")?;
            let interest = InterestView::decode(fragment).map_err(|e| e.to_string())?;
            let hashes = self.hasher.prefix_hashes(&interest.name);
            let _thread = self.ndt.thread_for(&hashes);
            self.interests.push(InInterest {
                interest,
                hashes,
                face: CONSUMER,
                token: lp.header.pit_token,
                next_hop: None,
                congestion_mark: 0,
                cs_probe: None,
            });
        }
        if self.config.passthrough {
            pass_interests(&mut self.interests, &mut self.out);
        } else {
            fwd.process_burst(clock.now(), &[], &[], &mut self.interests, &mut self.out);
        }
        // Output stage; the producer answers what reaches it. (The vector is taken and put
        // back so its capacity is reused; packets are read in place.)
        let mut sent = core::mem::take(&mut self.out);
        for o in &sent {
            let packet = o.encode_frame(&mut self.header, false, false);
            self.report.bytes_out += (self.header.len() + packet.len()) as u64;
            match o {
                Out::Interest {
                    token, interest, ..
                } => {
                    let name = interest.name_octets().map_err(|e| e.to_string())?;
                    let (frame, own_buffer) = self.produce(*token, name);
                    input_data(frame, own_buffer, &mut self.data)?;
                }
                Out::Data { from_cs, .. } => {
                    self.report.exchanges += 1;
                    self.report.cs_hits += u64::from(*from_cs);
                }
                Out::Nack { .. } => self.report.nacks += 1,
                // One thread: nothing goes to another.
                Out::Shard { .. } => {}
            }
        }
        sent.clear();
        self.out = sent;
        if self.config.passthrough {
            pass_data(&self.data, &mut self.out);
        } else {
            fwd.process_burst(clock.now(), &self.data, &[], &mut Vec::new(), &mut self.out);
        }
        self.data.clear();
        for o in &self.out {
            let packet = o.encode_frame(&mut self.header, false, false);
            self.report.bytes_out += (self.header.len() + packet.len()) as u64;
            if matches!(o, Out::Data { .. }) {
                self.report.exchanges += 1;
            }
        }
        self.out.clear();
        Ok(self.report.exchanges - before)
    }

    /// The producer's Data frame for an Interest whose Name has the value `name`, echoing
    /// `token`, and the octets of the buffer it fills alone (0: written into the receive
    /// arena): as a datagram receive path does ([`kite_packet::pool::take_reusable`]).
    fn produce(&mut self, token: PitToken, name: &[u8]) -> (Bytes, usize) {
        // A prefix-match Data is longer than its Interest's name: with one in N, those whose
        // segment number (the name's last octet) marks them.
        let longer = self.scenario.all_prefix
            || (self.scenario.prefix_every > 0
                && name
                    .last()
                    .is_some_and(|s| s % self.scenario.prefix_every == 0));
        let suffix = match &self.scenario.suffix {
            Some(s) if longer => s.value(),
            _ => &[],
        };
        let name_value_len = name.len() + suffix.len();
        let name_tlv = kite_packet::encode::tlv_len(tlv_type::NAME, name_value_len);
        let data_len =
            kite_packet::encode::tlv_len(tlv_type::DATA, name_tlv + self.scenario.data_tail.len());
        let header = HopHeader {
            pit_token: Some(&token),
            ..HopHeader::default()
        };
        let total = header.header_len(data_len) + data_len;
        let own = kite_packet::pool::take_reusable(total);
        let own_buffer = own.as_ref().map_or(0, BytesMut::capacity);
        let mut buf = match own {
            Some(buf) => buf,
            None => {
                if self.arena.capacity() < total {
                    self.arena = BytesMut::with_capacity(ARENA.max(total));
                }
                core::mem::take(&mut self.arena)
            }
        };
        header.encode_header(data_len, &mut buf);
        kite_packet::encode::put_header(
            &mut buf,
            tlv_type::DATA,
            name_tlv + self.scenario.data_tail.len(),
        );
        kite_packet::encode::put_header(&mut buf, tlv_type::NAME, name_value_len);
        buf.put_slice(name);
        buf.put_slice(suffix);
        buf.put_slice(&self.scenario.data_tail);
        if own_buffer > 0 {
            return (buf.freeze(), own_buffer);
        }
        let frame = buf.split().freeze();
        self.arena = buf;
        (frame, 0)
    }
}

/// Input stage for a Data frame (alone in a buffer of `own_buffer` octets, or 0): frame,
/// view; dispatch by the token's thread; queued for the forwarding thread.
fn input_data(frame: Bytes, own_buffer: usize, queue: &mut Vec<InData>) -> Result<(), String> {
    let lp = LpPacket::decode(frame).map_err(|e| e.to_string())?;
    let fragment = lp.fragment.ok_or("Data frame without fragment")?;
    let data = DataView::decode(fragment).map_err(|e| e.to_string())?;
    let _thread = lp
        .header
        .pit_token
        .and_then(|t| kite_fw::pcct::Pcct::token_thread(&t));
    queue.push(InData {
        data,
        hashes: None,
        face: PRODUCER,
        token: lp.header.pit_token,
        congestion_mark: lp.header.congestion_mark.unwrap_or(0),
        no_cache: false,
        own_buffer,
        rehomed: false,
    });
    Ok(())
}

/// `passthrough`: every Interest to the producer as the forwarder would send it (Nonce
/// kept, HopLimit decremented), with the consumer's token standing in for a PIT entry's.
fn pass_interests(interests: &mut Vec<InInterest>, out: &mut Vec<Out>) {
    for i in interests.drain(..) {
        let Some(token) = i.token else { continue };
        let nonce = i.interest.nonce.unwrap_or(Nonce([0; 4]));
        let hop_limit = i.interest.hop_limit.map(|h| h.saturating_sub(1));
        out.push(Out::Interest {
            face: PRODUCER,
            ingress: i.face,
            interest: i.interest.outgoing(nonce, hop_limit),
            token,
        });
    }
}

/// `passthrough`: every Data back to the consumer, echoing the token it came with.
fn pass_data(data: &[InData], out: &mut Vec<Out>) {
    out.extend(data.iter().map(|d| Out::Data {
        face: CONSUMER,
        wire: d.data.wire().clone(),
        token: d.token,
        ingress: d.face,
        congestion_mark: d.congestion_mark,
        from_cs: false,
    }));
}

fn percentile(sorted: &[u64], p: usize) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    sorted[(sorted.len() - 1) * p / 100]
}

/// The process's resident memory, from /proc (0 where unavailable).
fn resident_bytes() -> usize {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<usize>().ok())
        .map_or(0, |pages| pages * 4096)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quick(c: WorkloadConfig) -> WorkloadReport {
        run(
            &WorkloadConfig {
                duration: Duration::from_millis(200),
                fib_entries: 1000,
                ..c
            },
            &mut |_, _| {},
        )
        .unwrap()
    }

    #[test]
    fn every_interest_gets_its_data() {
        let r = quick(WorkloadConfig::default());
        assert!(r.exchanges > 100, "{r:?}");
        assert_eq!((r.nacks, r.cs_hits), (0, 0));
    }

    #[test]
    fn hit_ratio_and_prefix_match_work() {
        let r = quick(WorkloadConfig {
            cs_hit_percent: 50,
            ..WorkloadConfig::default()
        });
        let ratio = r.cs_hits as f64 / r.exchanges as f64;
        assert!((0.45..=0.55).contains(&ratio), "{r:?}");
        let r = quick(WorkloadConfig {
            cs_hit_percent: 90,
            prefix_match: true,
            name_len: 8,
            ..WorkloadConfig::default()
        });
        assert!(r.cs_hits as f64 / r.exchanges as f64 > 0.85, "{r:?}");
        assert_eq!(r.nacks, 0);
    }

    #[test]
    fn one_interest_in_n_may_be_a_prefix_one() {
        // Hot names hit whether exact or CanBePrefix (their Data is longer): all of them hit.
        let r = quick(WorkloadConfig {
            cs_hit_percent: 100,
            prefix_every: 4,
            ..WorkloadConfig::default()
        });
        assert!(r.exchanges > 100 && r.cs_hits == r.exchanges, "{r:?}");
        assert_eq!(r.nacks, 0);
    }

    #[test]
    fn passthrough_sends_what_the_forwarder_sends_without_its_tables() {
        let per_exchange = |r: &WorkloadReport| r.bytes_out as f64 / r.exchanges as f64;
        let fwd = quick(WorkloadConfig::default());
        let floor = quick(WorkloadConfig {
            passthrough: true,
            ..WorkloadConfig::default()
        });
        assert!(floor.exchanges > 100, "{floor:?}");
        assert_eq!((floor.nacks, floor.cs_hits), (0, 0));
        // The same Interest and Data go out; only the upstream token differs (the consumer's
        // 8 octets instead of a PIT entry's 6).
        let extra = per_exchange(&floor) - per_exchange(&fwd);
        assert!((0.0..=4.0).contains(&extra), "{fwd:?} vs {floor:?}");
        assert!(run(
            &WorkloadConfig {
                passthrough: true,
                cs_hit_percent: 50,
                ..WorkloadConfig::default()
            },
            &mut |_, _| {}
        )
        .is_err());
    }

    #[test]
    fn bad_parameters_are_refused() {
        assert!(run(
            &WorkloadConfig {
                name_len: 2,
                ..WorkloadConfig::default()
            },
            &mut |_, _| {}
        )
        .is_err());
    }
}
