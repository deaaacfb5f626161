//! The structured forwarder fuzzer: one `kite_fw` [`Forwarder`] with six faces (local and
//! non-local, stream and datagram, point-to-point and multi-access, and one the forwarder does
//! not know), each behind its own NDNLPv2 [`LinkService`], driven by a program read from fuzz
//! input: Interests, Data, Nacks, raw frames, NDNLPv2 fragments, answers to what the
//! forwarder sent upstream, route, strategy, face and CS changes, bursts, and clock advances.
//! Time is virtual: only the program moves it.
//!
//! After every step the [`Driver`] checks:
//! - every table within its configured capacity (PCCT entries, PIT entries with the
//!   `/localhost` reserve, CS entries, Dead Nonce List, timers, each face's reassembly
//!   partials and octets);
//! - every Data sent from the network (not the CS) goes to a face that, before the step, had
//!   an in-record of a PIT entry the Data satisfies; every Data from the CS answers an Interest
//!   of this step from that face that the Data satisfies;
//! - every Nack goes to a face that had an in-record before the step or sent an Interest in
//!   it; every packet goes to a face the forwarder knows;
//! - every outgoing packet encodes, and its fragments fit the face's MTU;
//! - nothing panics.

use std::time::{Duration, Instant};

use bytes::Bytes;
use kite_face::link_service::{LinkService, Received, RxPacket};
use kite_face::queue::OutQueue;
use kite_fw::dnl::DnlConfig;
use kite_fw::face::{FaceId, FaceScope, LinkType};
use kite_fw::fib::{FibConfig, FibWriter, StrategyId};
use kite_fw::forwarder::{
    Forwarder, ForwarderConfig, InData, InInterest, InNack, UnsolicitedPolicy,
};
use kite_fw::hash::NameHasher;
use kite_fw::out::Out;
use kite_fw::pcct::{PcctConfig, LOCALHOST_PIT_RESERVE};
use kite_fw::strategy::{FaceInfo, StrategyTable};
use kite_fw::time::Time;
use kite_link::reassembly::{Endpoint, ReassemblyLimits};
use kite_link::FaceCounters;
use kite_link::{MacAddr, PacketKind};
use kite_packet::{
    tlv_type, CachePolicy, Data, DataView, DigestSha256, Fragments, Interest, InterestView,
    LpHeader, LpPacket, NackReason, Name, Nonce, OwnedComponent, PitToken,
};

use crate::input::{Input, Writer};
use crate::names;

/// Steps a program may run (a bound on the work one input costs).
pub const MAX_STEPS: usize = 256;

/// The faces, by the index a program names them with (`face % FACES`).
pub const FACES: usize = 6;

/// Index of each face.
pub mod face {
    /// A local application on a stream face with local fields on.
    pub const APP: u8 = 0;
    /// A local application on a datagram face.
    pub const APP2: u8 = 1;
    /// A non-local datagram neighbour.
    pub const UP1: u8 = 2;
    /// A non-local stream neighbour.
    pub const UP2: u8 = 3;
    /// A multi-access datagram link (fragments keyed by sender).
    pub const MCAST: u8 = 4;
    /// A face the forwarder was never told of.
    pub const UNKNOWN: u8 = 5;
}

struct FaceSpec {
    id: FaceId,
    scope: FaceScope,
    link_type: LinkType,
    mtu: Option<usize>,
    local_fields: bool,
    known: bool,
}

const SPECS: [FaceSpec; FACES] = [
    FaceSpec {
        id: FaceId(300),
        scope: FaceScope::Local,
        link_type: LinkType::PointToPoint,
        mtu: None,
        local_fields: true,
        known: true,
    },
    FaceSpec {
        id: FaceId(301),
        scope: FaceScope::Local,
        link_type: LinkType::PointToPoint,
        mtu: Some(1500),
        local_fields: false,
        known: true,
    },
    FaceSpec {
        id: FaceId(400),
        scope: FaceScope::NonLocal,
        link_type: LinkType::PointToPoint,
        mtu: Some(1500),
        local_fields: false,
        known: true,
    },
    FaceSpec {
        id: FaceId(401),
        scope: FaceScope::NonLocal,
        link_type: LinkType::PointToPoint,
        mtu: None,
        local_fields: false,
        known: true,
    },
    FaceSpec {
        id: FaceId(500),
        scope: FaceScope::NonLocal,
        link_type: LinkType::MultiAccess,
        mtu: Some(1500),
        local_fields: false,
        known: true,
    },
    FaceSpec {
        id: FaceId(999),
        scope: FaceScope::NonLocal,
        link_type: LinkType::PointToPoint,
        mtu: Some(1500),
        local_fields: false,
        known: false,
    },
];

/// Small tables, so programs of a few hundred steps fill them and reach eviction, refusal and
/// expiry.
pub fn config(flags: u8) -> ForwarderConfig {
    ForwarderConfig {
        pcct: PcctConfig {
            capacity: 48,
            pit_capacity: 24,
            cs_capacity: 16,
            ..PcctConfig::default()
        },
        dnl: DnlConfig {
            lifetime: Duration::from_millis(200),
            initial_capacity: 32,
            min_capacity: 16,
            max_capacity: 128,
            adaptive: flags & 0x10 != 0,
        },
        timer_capacity: 96,
        unsolicited: match flags & 3 {
            0 => UnsolicitedPolicy::DropAll,
            1 => UnsolicitedPolicy::AdmitLocal,
            2 => UnsolicitedPolicy::AdmitNetwork,
            _ => UnsolicitedPolicy::AdmitAll,
        },
        network_region: if flags & 4 != 0 {
            vec![name_of(&[names::sel::D])]
        } else {
            Vec::new()
        },
        default_hop_limit: if flags & 8 != 0 { 4 } else { 0 },
        cs_admit: flags & 0x20 == 0,
        cs_serve: flags & 0x40 == 0,
        ..ForwarderConfig::default()
    }
}

fn name_of(selectors: &[u8]) -> Name {
    let mut w = Writer::default();
    names::write(&mut w, selectors);
    names::read(&mut Input::new(&w.0))
}

/// Reassembly bounds of the datagram faces (small, so programs reach them).
pub const LIMITS: ReassemblyLimits = ReassemblyLimits {
    max_fragments: 16,
    max_partials: 4,
    max_bytes: 24 * 1024,
    timeout: Duration::from_millis(500),
    max_packet: kite_link::framing::MAX_NDN_PACKET_SIZE,
};

/// How a packet's PIT token is chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Token {
    /// No token.
    None,
    /// The token of the `n`-th most recent Interest the forwarder sent (a real echo).
    Echo(u8),
    /// These octets (1 to 32 make a token; others mean none).
    Raw(Vec<u8>),
}

/// LP header fields of a packet sent to the forwarder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lp {
    /// PitToken.
    pub token: Token,
    /// CongestionMark.
    pub mark: u8,
    /// NextHopFaceId: the face index (6 and above: an unknown id).
    pub next_hop: Option<u8>,
    /// CachePolicy NoCache.
    pub no_cache: bool,
}

impl Lp {
    /// No LP field.
    pub const NONE: Lp = Lp {
        token: Token::None,
        mark: 0,
        next_hop: None,
        no_cache: false,
    };

    /// Only a token.
    pub fn token(token: Token) -> Lp {
        Lp { token, ..Lp::NONE }
    }
}

/// An Interest, as fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InterestSpec {
    /// Name selectors (see [`names`]).
    pub name: Vec<u8>,
    /// CanBePrefix.
    pub can_be_prefix: bool,
    /// MustBeFresh.
    pub must_be_fresh: bool,
    /// Nonce.
    pub nonce: Option<u32>,
    /// InterestLifetime in ms.
    pub lifetime: Option<u16>,
    /// HopLimit.
    pub hop_limit: Option<u8>,
    /// ForwardingHint: one delegation.
    pub hint: Option<Vec<u8>>,
    /// ApplicationParameters of this many octets.
    pub params: Option<u8>,
}

impl InterestSpec {
    /// An Interest for `name` with `nonce`, lifetime 100 ms.
    pub fn new(name: &[u8], nonce: u32) -> Self {
        InterestSpec {
            name: name.to_vec(),
            can_be_prefix: false,
            must_be_fresh: false,
            nonce: Some(nonce),
            lifetime: Some(100),
            hop_limit: None,
            hint: None,
            params: None,
        }
    }

    fn read(inp: &mut Input<'_>) -> (Self, Name, Option<Name>) {
        let flags = inp.u8();
        let mut w = Writer::default();
        let name = read_selectors(inp, &mut w);
        let nonce = (flags & 4 != 0).then(|| inp.u32());
        let lifetime = (flags & 8 != 0).then(|| inp.u16());
        let hop_limit = (flags & 0x10 != 0).then(|| inp.u8());
        let (hint, hint_name) = if flags & 0x20 != 0 {
            let mut hw = Writer::default();
            let n = read_selectors(inp, &mut hw);
            (Some(hw.0[1..].to_vec()), Some(n))
        } else {
            (None, None)
        };
        let params = (flags & 0x40 != 0).then(|| inp.u8());
        (
            InterestSpec {
                name: w.0[1..].to_vec(),
                can_be_prefix: flags & 1 != 0,
                must_be_fresh: flags & 2 != 0,
                nonce,
                lifetime,
                hop_limit,
                hint,
                params,
            },
            name,
            hint_name,
        )
    }

    fn write(&self, w: &mut Writer) {
        let flags = u8::from(self.can_be_prefix)
            | u8::from(self.must_be_fresh) << 1
            | u8::from(self.nonce.is_some()) << 2
            | u8::from(self.lifetime.is_some()) << 3
            | u8::from(self.hop_limit.is_some()) << 4
            | u8::from(self.hint.is_some()) << 5
            | u8::from(self.params.is_some()) << 6;
        w.u8(flags);
        names::write(w, &self.name);
        if let Some(n) = self.nonce {
            w.u32(n);
        }
        if let Some(l) = self.lifetime {
            w.u16(l);
        }
        if let Some(h) = self.hop_limit {
            w.u8(h);
        }
        if let Some(h) = &self.hint {
            names::write(w, h);
        }
        if let Some(p) = self.params {
            w.u8(p);
        }
    }
}

/// Reads a name, also writing its count and selectors to `w` (so a spec keeps what was read).
fn read_selectors(inp: &mut Input<'_>, w: &mut Writer) -> Name {
    let before = inp.clone();
    let name = names::read(inp);
    let n = before.clone().u8() % (names::MAX_COMPONENTS + 1);
    let mut b = before;
    b.u8();
    let mut sel = Vec::with_capacity(usize::from(n));
    for _ in 0..n {
        sel.push(b.u8());
    }
    names::write(w, &sel);
    name
}

fn build_interest(spec: &InterestSpec, name: Name, hint: Option<Name>) -> Interest {
    let mut i = Interest::new(name);
    i.can_be_prefix = spec.can_be_prefix;
    i.must_be_fresh = spec.must_be_fresh;
    i.nonce = spec.nonce.map(Nonce::from);
    i.lifetime = spec.lifetime.map(u64::from);
    i.hop_limit = spec.hop_limit;
    i.forwarding_hint = hint.into_iter().collect();
    i.app_params = spec.params.map(|n| Bytes::from(vec![0xa5; usize::from(n)]));
    i
}

/// What answers an Interest the forwarder sent upstream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// A Data under the Interest's name, `extra` components longer (a CanBePrefix match when
    /// above 0), fresh for `freshness` ms.
    Data {
        /// Components appended.
        extra: u8,
        /// FreshnessPeriod.
        freshness: u16,
    },
    /// A Nack with this reason code.
    Nack(u8),
}

/// One step of a program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// An Interest arrives on a face.
    Interest {
        /// Face index.
        face: u8,
        /// The Interest.
        spec: InterestSpec,
        /// Its LP fields.
        lp: Lp,
    },
    /// A Data arrives on a face.
    Data {
        /// Face index.
        face: u8,
        /// Name selectors.
        name: Vec<u8>,
        /// FreshnessPeriod.
        freshness: Option<u16>,
        /// Content octets.
        content: u8,
        /// Its LP fields.
        lp: Lp,
    },
    /// A Nack arrives on a face.
    Nack {
        /// Face index.
        face: u8,
        /// The Interest it refuses.
        spec: InterestSpec,
        /// Reason code.
        reason: u8,
        /// Its LP fields.
        lp: Lp,
    },
    /// The face an Interest the forwarder sent went to answers it, echoing its token when
    /// `echo` (else by name only).
    Answer {
        /// Which recent Interest (0: the latest).
        which: u8,
        /// Data or Nack.
        reply: Reply,
        /// Whether the token is echoed.
        echo: bool,
    },
    /// Any octets arrive as one frame on a face.
    Raw {
        /// Face index.
        face: u8,
        /// The frame.
        frame: Vec<u8>,
    },
    /// The frame of the next packet step is cut into NDNLPv2 fragments of at most `mtu`
    /// octets, which arrive rotated by `rotate`, reversed when `reverse`, without the one at
    /// `drop` (if any), and with the one at `dup` twice (if any).
    Fragment {
        /// Fragment size.
        mtu: u16,
        /// First Sequence.
        seq: u16,
        /// Rotation of the arrival order.
        rotate: u8,
        /// Reversed arrival.
        reverse: bool,
        /// A fragment that never arrives.
        drop: Option<u8>,
        /// A fragment that arrives twice.
        dup: Option<u8>,
        /// Sender address on the multi-access face.
        sender: u8,
        /// The packet step.
        inner: Box<Op>,
    },
    /// The clock moves `ms` milliseconds on.
    Advance(u16),
    /// Adds (cost `Some`) or removes a nexthop.
    Route {
        /// Prefix selectors.
        prefix: Vec<u8>,
        /// Face index.
        face: u8,
        /// Cost, or removal.
        cost: Option<u8>,
    },
    /// Chooses a built-in strategy (0..=3) for a prefix, or unsets it (4 and above).
    Strategy {
        /// Prefix selectors.
        prefix: Vec<u8>,
        /// Which.
        which: u8,
    },
    /// Removes a face from the forwarder and the FIB, or adds it back.
    Face {
        /// Face index.
        face: u8,
        /// Add (else remove).
        add: bool,
    },
    /// Sets the CS capacity.
    CsCapacity(u8),
    /// Erases up to `limit` cached Data under a prefix.
    CsErase {
        /// Prefix selectors.
        prefix: Vec<u8>,
        /// Limit.
        limit: u8,
    },
    /// Sets the CS admit and serve flags.
    CsFlags {
        /// Admit.
        admit: bool,
        /// Serve.
        serve: bool,
    },
    /// The next `n` packet steps form one burst.
    Burst(u8),
}

const OP_KINDS: u8 = 15;

impl Lp {
    fn read(inp: &mut Input<'_>) -> Lp {
        let flags = inp.u8();
        let token = match flags & 3 {
            0 | 3 => Token::None,
            1 => Token::Echo(inp.u8()),
            _ => {
                let n = usize::from(inp.u8() % 34);
                Token::Raw(inp.bytes(n).to_vec())
            }
        };
        Lp {
            token,
            mark: if flags & 4 != 0 { inp.u8() } else { 0 },
            next_hop: (flags & 8 != 0).then(|| inp.u8()),
            no_cache: flags & 0x10 != 0,
        }
    }

    fn write(&self, w: &mut Writer) {
        let t = match self.token {
            Token::None => 0,
            Token::Echo(_) => 1,
            Token::Raw(_) => 2,
        };
        let flags = t
            | u8::from(self.mark != 0) << 2
            | u8::from(self.next_hop.is_some()) << 3
            | u8::from(self.no_cache) << 4;
        w.u8(flags);
        match &self.token {
            Token::None => {}
            Token::Echo(n) => {
                w.u8(*n);
            }
            Token::Raw(b) => {
                w.u8(u8::try_from(b.len()).expect("a short token")).bytes(b);
            }
        }
        if self.mark != 0 {
            w.u8(self.mark);
        }
        if let Some(n) = self.next_hop {
            w.u8(n);
        }
    }
}

fn opt_u8(inp: &mut Input<'_>) -> Option<u8> {
    let b = inp.u8();
    (b != 0xff).then_some(b)
}

fn selectors(inp: &mut Input<'_>) -> Vec<u8> {
    let mut w = Writer::default();
    read_selectors(inp, &mut w);
    w.0[1..].to_vec()
}

impl Op {
    /// Reads one step (`depth` bounds nested fragment steps).
    pub fn read(inp: &mut Input<'_>, depth: u8) -> Op {
        let kind = inp.u8() % OP_KINDS;
        match kind {
            0 => {
                let face = inp.u8();
                let (spec, _, _) = InterestSpec::read(inp);
                Op::Interest {
                    face,
                    spec,
                    lp: Lp::read(inp),
                }
            }
            1 => {
                let face = inp.u8();
                let name = selectors(inp);
                let flags = inp.u8();
                let freshness = (flags & 1 != 0).then(|| inp.u16());
                Op::Data {
                    face,
                    name,
                    freshness,
                    content: inp.u8(),
                    lp: Lp::read(inp),
                }
            }
            2 => {
                let face = inp.u8();
                let (spec, _, _) = InterestSpec::read(inp);
                Op::Nack {
                    face,
                    spec,
                    reason: inp.u8(),
                    lp: Lp::read(inp),
                }
            }
            3 => {
                let which = inp.u8();
                let r = inp.u8();
                let reply = if r & 0x80 == 0 {
                    Reply::Data {
                        extra: r & 3,
                        freshness: inp.u16(),
                    }
                } else {
                    Reply::Nack(inp.u8())
                };
                Op::Answer {
                    which,
                    reply,
                    echo: r & 0x40 == 0,
                }
            }
            4 => Op::Raw {
                face: inp.u8(),
                frame: inp.blob(9000).to_vec(),
            },
            5 if depth == 0 => {
                let mtu = inp.u16();
                let seq = inp.u16();
                let rotate = inp.u8();
                let flags = inp.u8();
                let drop = opt_u8(inp);
                let dup = opt_u8(inp);
                let sender = inp.u8();
                Op::Fragment {
                    mtu,
                    seq,
                    rotate,
                    reverse: flags & 1 != 0,
                    drop,
                    dup,
                    sender,
                    inner: Box::new(Op::read(inp, depth + 1)),
                }
            }
            6 | 7 => Op::Advance(inp.u16()),
            8 => {
                let prefix = selectors(inp);
                let face = inp.u8();
                let c = inp.u8();
                Op::Route {
                    prefix,
                    face,
                    cost: (c != 0xff).then_some(c),
                }
            }
            9 => Op::Strategy {
                prefix: selectors(inp),
                which: inp.u8(),
            },
            10 => {
                let b = inp.u8();
                Op::Face {
                    face: b & 0x7f,
                    add: b & 0x80 != 0,
                }
            }
            11 => Op::CsCapacity(inp.u8()),
            12 => Op::CsErase {
                prefix: selectors(inp),
                limit: inp.u8(),
            },
            13 => {
                let b = inp.u8();
                Op::CsFlags {
                    admit: b & 1 != 0,
                    serve: b & 2 != 0,
                }
            }
            _ => Op::Burst(inp.u8()),
        }
    }

    /// Writes the step as [`Op::read`] reads it.
    pub fn write(&self, w: &mut Writer) {
        match self {
            Op::Interest { face, spec, lp } => {
                w.u8(0).u8(*face);
                spec.write(w);
                lp.write(w);
            }
            Op::Data {
                face,
                name,
                freshness,
                content,
                lp,
            } => {
                w.u8(1).u8(*face);
                names::write(w, name);
                w.u8(u8::from(freshness.is_some()));
                if let Some(f) = freshness {
                    w.u16(*f);
                }
                w.u8(*content);
                lp.write(w);
            }
            Op::Nack {
                face,
                spec,
                reason,
                lp,
            } => {
                w.u8(2).u8(*face);
                spec.write(w);
                w.u8(*reason);
                lp.write(w);
            }
            Op::Answer { which, reply, echo } => {
                w.u8(3).u8(*which);
                let no_echo = if *echo { 0 } else { 0x40 };
                match reply {
                    Reply::Data { extra, freshness } => {
                        w.u8(no_echo | (extra & 3)).u16(*freshness);
                    }
                    Reply::Nack(reason) => {
                        w.u8(0x80 | no_echo).u8(*reason);
                    }
                }
            }
            Op::Raw { face, frame } => {
                w.u8(4).u8(*face).blob(frame);
            }
            Op::Fragment {
                mtu,
                seq,
                rotate,
                reverse,
                drop,
                dup,
                sender,
                inner,
            } => {
                w.u8(5)
                    .u16(*mtu)
                    .u16(*seq)
                    .u8(*rotate)
                    .u8(u8::from(*reverse))
                    .u8(drop.unwrap_or(0xff))
                    .u8(dup.unwrap_or(0xff))
                    .u8(*sender);
                inner.write(w);
            }
            Op::Advance(ms) => {
                w.u8(6).u16(*ms);
            }
            Op::Route { prefix, face, cost } => {
                w.u8(8);
                names::write(w, prefix);
                w.u8(*face).u8(cost.unwrap_or(0xff));
            }
            Op::Strategy { prefix, which } => {
                w.u8(9);
                names::write(w, prefix);
                w.u8(*which);
            }
            Op::Face { face, add } => {
                w.u8(10).u8(face & 0x7f | if *add { 0x80 } else { 0 });
            }
            Op::CsCapacity(n) => {
                w.u8(11).u8(*n);
            }
            Op::CsErase { prefix, limit } => {
                w.u8(12);
                names::write(w, prefix);
                w.u8(*limit);
            }
            Op::CsFlags { admit, serve } => {
                w.u8(13).u8(u8::from(*admit) | u8::from(*serve) << 1);
            }
            Op::Burst(n) => {
                w.u8(14).u8(*n);
            }
        }
    }
}

/// A whole program: a flags octet (see [`config`]) and its steps.
pub fn encode_program(flags: u8, ops: &[Op]) -> Vec<u8> {
    let mut w = Writer::default();
    w.u8(flags);
    for op in ops {
        op.write(&mut w);
    }
    w.0
}

/// An Interest the forwarder sent, kept so later steps can answer it.
#[derive(Debug, Clone)]
struct Sent {
    face: usize,
    interest: InterestView,
    token: PitToken,
}

/// Interests sent that a program can answer.
const SENT_KEPT: usize = 16;

/// A PIT in-record as it stood before a step.
#[derive(Debug)]
struct InRecord {
    face: FaceId,
    name: Name,
    can_be_prefix: bool,
}

/// The forwarder, its faces and FIB, and what the checks need.
pub struct Driver {
    fwd: Forwarder,
    fib: FibWriter,
    config: ForwarderConfig,
    links: Vec<LinkService>,
    counters: Vec<FaceCounters>,
    queue: OutQueue,
    known: [bool; FACES],
    hasher: NameHasher,
    origin: Instant,
    now: Time,
    sent: Vec<Sent>,
    // Per step:
    in_records: Vec<InRecord>,
    step_interests: Vec<(FaceId, Name)>,
    interests: Vec<InInterest>,
    data: Vec<InData>,
    nacks: Vec<InNack>,
    out: Vec<Out>,
    received: Vec<Received>,
    header: Vec<u8>,
}

fn hasher() -> NameHasher {
    NameHasher::with_key(0x6b69_7465, 0x6675_7a7a)
}

impl Driver {
    /// A forwarder configured by `flags` ([`config`]) with routes under `/a`, `/b`, `/c`,
    /// `/m` and `/` and the multicast strategy under `/m`.
    pub fn new(flags: u8) -> Self {
        let config = config(flags);
        let strategies = StrategyTable::builtin();
        let (mut fib, readers) =
            FibWriter::new(hasher(), FibConfig::default(), StrategyTable::DEFAULT);
        let start = Time::from_millis(1_000);
        let mut fwd = Forwarder::new(
            1,
            config.clone(),
            readers.reader(),
            strategies,
            hasher(),
            start,
        );
        let mut known = [false; FACES];
        for (i, s) in SPECS.iter().enumerate() {
            if s.known {
                fwd.add_face(
                    s.id,
                    FaceInfo {
                        scope: s.scope,
                        link_type: s.link_type,
                    },
                );
                known[i] = true;
            }
        }
        use names::sel::*;
        let routes: [(&[u8], u8, u32); 6] = [
            (&[A], face::UP1, 10),
            (&[A, B], face::UP2, 5),
            (&[B], face::UP2, 10),
            (&[C], face::APP, 1),
            (&[X], face::MCAST, 1),
            (&[], face::UP1, 100),
        ];
        for (prefix, f, cost) in routes {
            fib.add_nexthop(&name_of(prefix), SPECS[usize::from(f)].id, cost)
                .expect("a valid route");
        }
        fib.add_nexthop(&name_of(&[X]), SPECS[usize::from(face::UP2)].id, 1)
            .expect("a valid route");
        fib.set_strategy(&name_of(&[X]), StrategyId(1))
            .expect("a built-in strategy");
        fib.publish();
        let links = SPECS
            .iter()
            .map(|s| {
                let mut l = LinkService::new(s.mtu, Some(LIMITS), usize::MAX);
                l.set_local_fields(s.local_fields);
                l
            })
            .collect();
        Driver {
            fwd,
            fib,
            config,
            links,
            counters: vec![FaceCounters::default(); FACES],
            queue: OutQueue::new(1024),
            known,
            hasher: hasher(),
            origin: Instant::now(),
            now: start,
            sent: Vec::with_capacity(SENT_KEPT),
            in_records: Vec::new(),
            step_interests: Vec::new(),
            interests: Vec::new(),
            data: Vec::new(),
            nacks: Vec::new(),
            out: Vec::new(),
            received: Vec::new(),
            header: Vec::new(),
        }
    }

    /// Runs a whole program from fuzz input.
    pub fn run(data: &[u8]) {
        let mut inp = Input::new(data);
        let mut d = Driver::new(inp.u8());
        let mut steps = 0;
        while !inp.is_empty() && steps < MAX_STEPS {
            let op = Op::read(&mut inp, 0);
            d.step(op, &mut inp, &mut steps);
        }
    }

    /// Runs one step (a burst reads its packet steps from `inp`), then the checks.
    fn step(&mut self, op: Op, inp: &mut Input<'_>, steps: &mut usize) {
        *steps += 1;
        self.snapshot();
        match op {
            Op::Burst(n) => {
                for _ in 0..(n % 16) {
                    if inp.is_empty() || *steps >= MAX_STEPS {
                        break;
                    }
                    *steps += 1;
                    let op = Op::read(inp, 0);
                    self.packet(op);
                }
            }
            other => {
                if !self.control(&other) {
                    self.packet(other);
                }
            }
        }
        self.forward();
        self.check_bounds();
    }

    /// Table and face changes; `false` for a packet step.
    fn control(&mut self, op: &Op) -> bool {
        match op {
            Op::Advance(ms) => {
                self.now = self.now + Duration::from_millis(u64::from(*ms));
                let now = self.instant();
                for (l, c) in self.links.iter_mut().zip(&mut self.counters) {
                    l.expire(now, c);
                }
            }
            Op::Route { prefix, face, cost } => {
                let p = name_of(prefix);
                let id = SPECS[usize::from(face % FACES as u8)].id;
                match cost {
                    Some(c) => {
                        let _ = self.fib.add_nexthop(&p, id, u32::from(*c));
                    }
                    None => {
                        self.fib.remove_nexthop(&p, id);
                    }
                }
                self.fib.publish();
            }
            Op::Strategy { prefix, which } => {
                let p = name_of(prefix);
                if *which < 4 {
                    let _ = self.fib.set_strategy(&p, StrategyId(u16::from(*which)));
                } else {
                    self.fib.unset_strategy(&p);
                }
                self.fib.publish();
            }
            Op::Face { face, add } => {
                let i = usize::from(face % FACES as u8);
                let s = &SPECS[i];
                if *add {
                    self.fwd.add_face(
                        s.id,
                        FaceInfo {
                            scope: s.scope,
                            link_type: s.link_type,
                        },
                    );
                    self.known[i] = true;
                } else {
                    self.fwd.remove_face(s.id);
                    self.fib.remove_face(s.id);
                    self.fib.publish();
                    self.known[i] = false;
                }
            }
            Op::CsCapacity(n) => self.fwd.set_cs_capacity(usize::from(*n)),
            Op::CsErase { prefix, limit } => {
                self.fwd.cs_erase(&name_of(prefix), usize::from(*limit));
            }
            Op::CsFlags { admit, serve } => self.fwd.set_cs_flags(*admit, *serve),
            _ => return false,
        }
        true
    }

    fn instant(&self) -> Instant {
        self.origin + Duration::from_nanos(self.now.0)
    }

    /// Encodes a packet step's frame and the face it arrives on.
    fn frame(&self, op: &Op) -> Option<(usize, Bytes)> {
        let (face, header, packet) = match op {
            Op::Interest { face, spec, lp } => {
                let (name, hint) = spec_names(spec);
                let i = build_interest(spec, name, hint);
                (face_index(*face), self.lp_header(lp), i.encode())
            }
            Op::Data {
                face,
                name,
                freshness,
                content,
                lp,
            } => {
                let mut d = Data::new(name_of(name), vec![0xd0; usize::from(*content)]);
                d.meta.freshness_period = freshness.map(u64::from);
                let mut h = self.lp_header(lp);
                if lp.no_cache {
                    h.cache_policy = Some(CachePolicy::NO_CACHE);
                }
                (face_index(*face), h, d.sign(&DigestSha256).ok()?)
            }
            Op::Nack {
                face,
                spec,
                reason,
                lp,
            } => {
                let (name, hint) = spec_names(spec);
                let i = build_interest(spec, name, hint);
                let mut h = self.lp_header(lp);
                h.nack = Some(NackReason(u64::from(*reason)));
                (face_index(*face), h, i.encode())
            }
            Op::Answer { which, reply, echo } => {
                let n = self.sent.len();
                if n == 0 {
                    return None;
                }
                let s = &self.sent[n - 1 - usize::from(*which) % n];
                let mut h = LpHeader::default();
                if *echo {
                    h.pit_token = Some(s.token);
                }
                let wire = match reply {
                    Reply::Data { extra, freshness } => {
                        let mut name = s.interest.name.clone();
                        if name.ends_in_implicit_digest() {
                            name = name.prefix(name.len() - 1);
                        }
                        for k in 0..*extra {
                            // A name of the longest length takes no more components: its
                            // producer could not have made a longer one.
                            let c = names::component(names::sel::seg(k));
                            if name.value().len() + c.as_ref().encoded_len()
                                > kite_packet::name::MAX_NAME_VALUE_LEN
                            {
                                break;
                            }
                            name.push(c.as_ref());
                        }
                        let mut d = Data::new(name, &b"answer"[..]);
                        d.meta.freshness_period = Some(u64::from(*freshness));
                        d.sign(&DigestSha256).ok()?
                    }
                    Reply::Nack(reason) => {
                        h.nack = Some(NackReason(u64::from(*reason)));
                        s.interest.wire().clone()
                    }
                };
                (s.face, h, wire)
            }
            Op::Raw { face, frame } => {
                return Some((face_index(*face), Bytes::copy_from_slice(frame)));
            }
            _ => return None,
        };
        let frame = if header.is_empty() {
            packet
        } else {
            LpPacket {
                header,
                fragment: Some(packet),
            }
            .encode()
        };
        Some((face, frame))
    }

    fn lp_header(&self, lp: &Lp) -> LpHeader {
        let pit_token = match &lp.token {
            Token::None => None,
            Token::Echo(n) => {
                let len = self.sent.len();
                (len > 0).then(|| self.sent[len - 1 - usize::from(*n) % len].token)
            }
            Token::Raw(b) => PitToken::new(b),
        };
        LpHeader {
            pit_token,
            congestion_mark: (lp.mark != 0).then_some(u64::from(lp.mark)),
            next_hop_face_id: lp.next_hop.map(|n| {
                SPECS
                    .get(usize::from(n))
                    .map_or(u64::from(n) + 1000, |s| s.id.0)
            }),
            ..LpHeader::default()
        }
    }

    /// Delivers a packet step's frame(s) through its face's link service.
    fn packet(&mut self, op: Op) {
        if let Op::Fragment {
            mtu,
            seq,
            rotate,
            reverse,
            drop,
            dup,
            sender,
            inner,
        } = op
        {
            let Some((face, frame)) = self.frame(&inner) else {
                return;
            };
            let Ok(LpPacket {
                header,
                fragment: Some(payload),
            }) = LpPacket::decode(frame)
            else {
                return;
            };
            let mtu = usize::from(mtu).clamp(64, 9000);
            let Ok(pieces) = Fragments::new(header, payload, mtu, u64::from(seq)) else {
                return;
            };
            let mut frames: Vec<Bytes> = pieces.map(|p| p.encode()).collect();
            assert!(
                frames.iter().all(|f| f.len() <= mtu),
                "a fragment exceeds the MTU"
            );
            let n = frames.len();
            frames.rotate_left(usize::from(rotate) % n);
            if reverse {
                frames.reverse();
            }
            if let Some(d) = dup {
                let f = frames[usize::from(d) % n].clone();
                frames.push(f);
            }
            if let Some(d) = drop {
                frames.remove(usize::from(d) % n);
            }
            let from = endpoint(face, sender);
            for f in frames {
                self.receive(face, from, f);
            }
            return;
        }
        if let Some((face, frame)) = self.frame(&op) {
            self.receive(face, endpoint(face, 0), frame);
        }
    }

    /// One frame through face `i`'s link service, into the step's input.
    fn receive(&mut self, i: usize, from: Endpoint, frame: Bytes) {
        let now = self.instant();
        let id = SPECS[i].id;
        self.links[i].receive(
            id,
            from,
            frame,
            0,
            now,
            &mut self.counters[i],
            &mut self.received,
        );
        for r in self.received.drain(..) {
            match r.packet {
                RxPacket::Interest(interest) => {
                    self.step_interests.push((id, interest.name.clone()));
                    self.interests.push(InInterest {
                        hashes: self.hasher.prefix_hashes(&interest.name),
                        interest,
                        face: r.face,
                        token: r.pit_token,
                        next_hop: r.next_hop_face_id.map(FaceId),
                        congestion_mark: r.congestion_mark,
                        cs_probe: None,
                    });
                }
                RxPacket::Data(data) => {
                    // As the input stage does for Data it dispatches by name: hashes given
                    // only without a token.
                    let hashes = r
                        .pit_token
                        .is_none()
                        .then(|| self.hasher.prefix_hashes(&data.name));
                    self.data.push(InData {
                        data,
                        hashes,
                        face: r.face,
                        token: r.pit_token,
                        congestion_mark: r.congestion_mark,
                        no_cache: r.cache_policy == Some(CachePolicy::NO_CACHE),
                        own_buffer: r.own_buffer,
                        rehomed: false,
                    });
                }
                RxPacket::Nack(reason, interest) => {
                    self.nacks.push(InNack {
                        hashes: self.hasher.prefix_hashes(&interest.name),
                        interest,
                        reason,
                        face: r.face,
                        token: r.pit_token,
                    });
                }
            }
        }
    }

    /// Records the PIT in-records before a step.
    fn snapshot(&mut self) {
        self.in_records.clear();
        self.step_interests.clear();
        let pcct = self.fwd.pcct();
        for (slot, mbf) in pcct.pit_slots() {
            let Some(pit) = pcct.pit(slot, mbf) else {
                continue;
            };
            for d in &pit.downstreams {
                self.in_records.push(InRecord {
                    face: d.face,
                    name: pit.interest.name.clone(),
                    can_be_prefix: pit.can_be_prefix(),
                });
            }
        }
    }

    /// Runs the step's burst through the forwarder, checks and sends what comes out.
    fn forward(&mut self) {
        self.out.clear();
        self.fwd.process_burst(
            self.now,
            &self.data,
            &self.nacks,
            &mut self.interests,
            &mut self.out,
        );
        self.data.clear();
        self.nacks.clear();
        let out = std::mem::take(&mut self.out);
        for o in &out {
            self.check_out(o);
            self.send(o);
        }
        self.out = out;
    }

    fn check_out(&mut self, o: &Out) {
        let face = o.face();
        let i = SPECS
            .iter()
            .position(|s| s.id == face)
            .unwrap_or_else(|| panic!("a packet to face {face:?}, which does not exist"));
        assert!(
            self.known[i],
            "a packet to face {face:?}, which was removed"
        );
        match o {
            Out::Data { wire, from_cs, .. } => {
                let d = DataView::decode(wire.clone()).expect("the Data sent decodes");
                if *from_cs {
                    assert!(
                        self.step_interests
                            .iter()
                            .any(|(f, n)| *f == face && satisfies(&d, n, true)),
                        "a cached Data {} to {face:?}, which sent no Interest for it in this step",
                        d.name
                    );
                } else {
                    assert!(
                        self.in_records
                            .iter()
                            .any(|r| r.face == face && satisfies(&d, &r.name, r.can_be_prefix)),
                        "a Data {} to {face:?}, which had no in-record for it",
                        d.name
                    );
                }
            }
            Out::Nack { .. } => {
                assert!(
                    self.in_records.iter().any(|r| r.face == face)
                        || self.step_interests.iter().any(|(f, _)| *f == face),
                    "a Nack to {face:?}, which had no in-record and sent no Interest"
                );
            }
            Out::Shard { .. } => panic!("a forwarder with one shard handed a packet to another"),
            Out::Interest {
                interest, token, ..
            } => {
                let wire = interest.encode();
                let view = InterestView::decode(wire).expect("the Interest sent decodes");
                if self.sent.len() == SENT_KEPT {
                    self.sent.remove(0);
                }
                self.sent.push(Sent {
                    face: i,
                    interest: view,
                    token: *token,
                });
            }
        }
    }

    /// Encodes a packet for its face and queues it through the face's link service, as the
    /// output stage does; its fragments must fit the MTU.
    fn send(&mut self, o: &Out) {
        let i = SPECS
            .iter()
            .position(|s| s.id == o.face())
            .expect("checked");
        let body = o.encode_frame(&mut self.header, SPECS[i].local_fields, false);
        let kind = match o {
            Out::Interest { .. } => PacketKind::Interest,
            Out::Data { .. } => PacketKind::Data,
            Out::Nack { .. } => PacketKind::Nack,
            Out::Shard { .. } => unreachable!("refused by check_out"),
        };
        self.queue.clear();
        let sent = self.links[i].send(
            kind,
            &self.header,
            body,
            &mut self.counters[i],
            &mut self.queue,
        );
        if let (true, Some(mtu)) = (sent, self.links[i].mtu()) {
            let (a, b) = self.queue.frames();
            for f in a.iter().chain(b) {
                assert!(f.to_bytes().len() <= mtu, "a frame longer than the MTU");
            }
        }
        self.queue.clear();
    }

    fn check_bounds(&self) {
        let p = self.fwd.pcct();
        let c = &self.config;
        assert!(p.len() <= c.pcct.capacity, "PCCT over capacity");
        assert!(
            p.pit_len() <= c.pcct.pit_capacity + LOCALHOST_PIT_RESERVE,
            "PIT over capacity"
        );
        assert!(p.cs_len() <= p.cs_capacity(), "CS over capacity");
        let dnl = self.fwd.dnl();
        assert!(dnl.len() <= dnl.capacity(), "DNL over capacity");
        assert!(
            dnl.capacity() <= c.dnl.max_capacity,
            "DNL capacity over its maximum"
        );
        assert!(
            self.fwd.timers_pending() <= c.timer_capacity,
            "timers over capacity"
        );
        for l in &self.links {
            if let Some(r) = l.reassembler() {
                assert!(r.partials() <= LIMITS.max_partials, "reassembly partials");
                assert!(r.bytes() <= LIMITS.max_bytes, "reassembly octets");
            }
        }
    }
}

fn face_index(f: u8) -> usize {
    usize::from(f) % FACES
}

/// The sender of a frame: a MAC address on the multi-access face, else the only peer.
fn endpoint(face: usize, sender: u8) -> Endpoint {
    if SPECS[face].link_type == LinkType::MultiAccess {
        Endpoint::Mac(MacAddr([2, 0, 0, 0, 0, sender % 4]))
    } else {
        Endpoint::Peer
    }
}

fn spec_names(spec: &InterestSpec) -> (Name, Option<Name>) {
    (name_of(&spec.name), spec.hint.as_deref().map(name_of))
}

/// Whether Data `d` satisfies an Interest for `name` (CanBePrefix `cbp`): the same name, a
/// longer one under CanBePrefix, or its full name with the implicit digest.
fn satisfies(d: &DataView, name: &Name, cbp: bool) -> bool {
    if *name == d.name || (cbp && name.is_prefix_of(&d.name)) {
        return true;
    }
    if name.len() == d.name.len() + 1
        && name.ends_in_implicit_digest()
        && name.prefix(d.name.len()) == d.name
    {
        let digest = d.implicit_digest();
        let full = d.name.clone().append(
            OwnedComponent::new(tlv_type::IMPLICIT_SHA256_DIGEST_COMPONENT, digest.to_vec())
                .expect("a digest component")
                .as_ref(),
        );
        return full == *name;
    }
    false
}
