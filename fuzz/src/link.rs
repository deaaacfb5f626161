//! The NDNLPv2 link service of one face, driven by a program: raw frames, well-formed
//! fragments with chosen Sequence, FragIndex, FragCount and fields, packets the face's own
//! sender fragments, and clock advances, all from up to four senders.
//!
//! Checks after every step: reassembly holds at most `max_partials` packets and `max_bytes`
//! octets; no packet over the largest size (`max_packet`) is delivered; every packet delivered is counted once as an Interest, Data or Nack; a packet
//! the sender fragments comes out of a fresh receiver whole and the same, whatever order
//! its fragments arrive in; every fragment fits the MTU. With LpReliability on (setup flag
//! 16), whatever frames and Acks arrive, its store stays within its bounds in frames and
//! octets, and its timers (run as the clock moves on) never queue more than the face holds.

use std::time::{Duration, Instant};

use bytes::Bytes;
use kite_face::link_service::{LinkService, Received, RxPacket};
use kite_face::queue::{OutFrame, OutQueue};
use kite_face::reliability::ReliabilityLimits;
use kite_link::framing::MAX_NDN_PACKET_SIZE;
use kite_link::reassembly::{Endpoint, ReassemblyLimits};
use kite_link::FaceCounters;
use kite_link::{FaceId, MacAddr, PacketKind};
use kite_packet::{CachePolicy, Data, Interest, LpHeader, LpPacket, NackReason, Name, PitToken};

use crate::input::{Input, Writer};

/// Steps a program may run.
pub const MAX_STEPS: usize = 256;

/// The face's settings, read from a program's first octets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Setup {
    /// Datagram face (fragments and reassembles) at this MTU, else a stream face.
    pub mtu: Option<u16>,
    /// Local fields enabled.
    pub local_fields: bool,
    /// Reassembly bounds.
    pub limits: ReassemblyLimits,
    /// LpReliability on (datagram faces), with small bounds.
    pub reliability: bool,
}

/// The LpReliability bounds of a fuzzed face: small, so programs reach them.
pub const RELIABILITY: ReliabilityLimits = ReliabilityLimits {
    max_frames: 64,
    max_bytes: 65536,
};

impl Setup {
    /// Reads the settings.
    pub fn read(inp: &mut Input<'_>) -> Setup {
        let flags = inp.u8();
        let mtu = inp.u16();
        let max_fragments = if flags & 4 != 0 {
            400
        } else {
            1 + u64::from(inp.u8() % 32)
        };
        let max_partials = 1 + usize::from(inp.u8() % 8);
        let max_bytes = 64 + usize::from(inp.u16());
        let timeout = Duration::from_millis(1 + u64::from(inp.u16() % 2000));
        // Flag 8: a largest packet below NDN's, from 1024 octets up (no octet of its own, so
        // the committed seeds keep their meaning).
        let max_packet = if flags & 8 != 0 {
            1024 + max_bytes % (MAX_NDN_PACKET_SIZE - 1024)
        } else {
            MAX_NDN_PACKET_SIZE
        };
        Setup {
            mtu: (flags & 1 != 0).then_some(mtu.clamp(64, 9000)),
            local_fields: flags & 2 != 0,
            reliability: flags & 16 != 0 && flags & 1 != 0,
            limits: ReassemblyLimits {
                max_fragments,
                max_partials,
                max_bytes,
                timeout,
                max_packet,
            },
        }
    }

    /// Writes settings that read back as a datagram face (`mtu`) or a stream face (`None`).
    pub fn write(w: &mut Writer, mtu: Option<u16>, local_fields: bool, partials: u8, bytes: u16) {
        let flags = u8::from(mtu.is_some()) | u8::from(local_fields) << 1 | 4;
        w.u8(flags)
            .u16(mtu.unwrap_or(0))
            .u8(partials.saturating_sub(1))
            .u16(bytes.saturating_sub(64))
            .u16(499);
    }
}

/// LP fields a program may put on a frame: bit 0 PitToken, 1 Nack, 2 CongestionMark,
/// 3 NextHopFaceId, 4 CachePolicy, 5 IncomingFaceId.
pub fn header(fields: u8) -> LpHeader {
    LpHeader {
        pit_token: (fields & 1 != 0).then(|| PitToken::from_u64(0x0102_0304_0506)),
        nack: (fields & 2 != 0).then_some(NackReason::CONGESTION),
        congestion_mark: (fields & 4 != 0).then_some(1),
        next_hop_face_id: (fields & 8 != 0).then_some(301),
        cache_policy: (fields & 16 != 0).then_some(CachePolicy::NO_CACHE),
        incoming_face_id: (fields & 32 != 0).then_some(7),
        ..LpHeader::default()
    }
}

/// A packet of `size` content (or ApplicationParameters) octets: a Data, else an Interest.
pub fn packet(data: bool, size: u16) -> Bytes {
    let name: Name = "/fuzz/link".parse().expect("a name");
    if data {
        Data::new(name, vec![0xd0; usize::from(size)]).encode()
    } else {
        let mut i = Interest::new(name);
        if size > 0 {
            i.app_params = Some(Bytes::from(vec![0xa5; usize::from(size)]));
        }
        i.encode()
    }
}

/// Step kinds (the first octet of a step, modulo 5).
pub mod op {
    /// `[endpoint] [u16 length] [octets]`: a raw frame.
    pub const RAW: u8 = 0;
    /// `[endpoint] [u16 seq] [index] [count] [fields] [u16 length] [payload]`: a fragment.
    pub const FRAGMENT: u8 = 1;
    /// `[data?] [u16 size] [fields] [u16 mtu] [rotate]`: the face's sender fragments a packet;
    /// its frames arrive in rotated order.
    pub const SEND: u8 = 2;
    /// `[u16 ms]`: the clock moves on.
    pub const ADVANCE: u8 = 3;
    /// `[flags]`: bit 0 toggles local fields; bits 1.. set the MTU to 64 × (bits + 1).
    pub const SETTINGS: u8 = 4;
}

fn endpoint(b: u8) -> Endpoint {
    match b % 4 {
        0 => Endpoint::Peer,
        n => Endpoint::Mac(MacAddr([2, 0, 0, 0, 0, n])),
    }
}

struct Face {
    link: LinkService,
    c: FaceCounters,
    limits: ReassemblyLimits,
    out: Vec<Received>,
}

impl Face {
    fn receive(&mut self, from: Endpoint, frame: Bytes, now: Instant) {
        let before = self.out.len();
        let counted = |c: &FaceCounters| c.n_in_interests + c.n_in_data + c.n_in_nacks;
        let n0 = counted(&self.c);
        self.link
            .receive(FaceId(300), from, frame, 0, now, &mut self.c, &mut self.out);
        assert_eq!(
            counted(&self.c) - n0,
            (self.out.len() - before) as u64,
            "every packet delivered is counted once"
        );
        for r in &self.out[before..] {
            let len = match &r.packet {
                RxPacket::Interest(i) | RxPacket::Nack(_, i) => i.wire().len(),
                RxPacket::Data(d) => d.wire().len(),
            };
            assert!(
                len <= self.limits.max_packet,
                "a packet over the largest size"
            );
            if r.next_hop_face_id.is_some() {
                assert!(
                    self.link.local_fields() && matches!(r.packet, RxPacket::Interest(_)),
                    "NextHopFaceId only on Interests from a face with local fields"
                );
            }
            if r.cache_policy.is_some() {
                assert!(
                    matches!(r.packet, RxPacket::Data(_)),
                    "CachePolicy only on Data"
                );
            }
        }
        self.out.clear();
        self.check();
    }

    fn check(&self) {
        if let Some(r) = self.link.reassembler() {
            assert!(
                r.partials() <= self.limits.max_partials,
                "partials over the bound"
            );
            assert!(r.bytes() <= self.limits.max_bytes, "octets over the bound");
        }
        if let Some(r) = self.link.reliability() {
            assert!(
                r.in_flight() <= RELIABILITY.max_frames,
                "frames over the bound"
            );
            assert!(
                r.unacked_octets() <= RELIABILITY.max_bytes,
                "octets kept over the bound"
            );
        }
    }
}

/// Runs a program.
pub fn run(data: &[u8]) {
    let mut inp = Input::new(data);
    let setup = Setup::read(&mut inp);
    let mut link = LinkService::new(
        setup.mtu.map(usize::from),
        Some(setup.limits),
        setup.limits.max_packet,
    );
    link.set_local_fields(setup.local_fields);
    link.set_reliability(setup.reliability.then_some(RELIABILITY));
    let mut face = Face {
        link,
        c: FaceCounters::default(),
        limits: setup.limits,
        out: Vec::new(),
    };
    let mut sender = LinkService::new(Some(1500), Some(ReassemblyLimits::default()), usize::MAX);
    let mut queue = OutQueue::new(512);
    // What the fuzzed face sends (Acks, retransmissions), dropped after each step.
    let mut face_out = OutQueue::new(512);
    let origin = Instant::now();
    let mut now = origin;
    let mut steps = 0;
    while !inp.is_empty() && steps < MAX_STEPS {
        steps += 1;
        match inp.u8() % 5 {
            op::RAW => {
                let from = endpoint(inp.u8());
                let frame = Bytes::copy_from_slice(inp.blob(9000));
                face.receive(from, frame, now);
            }
            op::FRAGMENT => {
                let from = endpoint(inp.u8());
                let seq = u64::from(inp.u16());
                let index = u64::from(inp.u8());
                let count = u64::from(inp.u8());
                let mut h = header(inp.u8());
                h.sequence = Some(seq);
                h.frag_index = Some(index);
                h.frag_count = Some(count);
                let frame = LpPacket {
                    header: h,
                    fragment: Some(Bytes::copy_from_slice(inp.blob(4096))),
                }
                .encode();
                face.receive(from, frame, now);
            }
            op::SEND => {
                let data = inp.u8() & 1 != 0;
                let size = inp.u16() % 8192;
                let h = header(inp.u8() & !(8 | 32));
                let mtu = usize::from(inp.u16()).clamp(64, 9000);
                let rotate = usize::from(inp.u8());
                let wire = packet(data, size);
                sender.set_mtu(mtu);
                queue.clear();
                let kind = if data {
                    PacketKind::Data
                } else {
                    PacketKind::Interest
                };
                let mut head = Vec::new();
                if !h.is_empty() {
                    h.encode_header(Some(wire.len()), &mut head);
                }
                // The fuzzed face sends it too (kept for retransmission with reliability on).
                face.link
                    .send(kind, &head, wire.clone(), &mut face.c, &mut face_out);
                face_out.clear();
                face.check();
                let mut sc = FaceCounters::default();
                if !sender.send(kind, &head, wire.clone(), &mut sc, &mut queue) {
                    continue;
                }
                let (a, b) = queue.frames();
                let mut frames: Vec<Bytes> = a.iter().chain(b).map(OutFrame::to_bytes).collect();
                assert!(
                    frames.iter().all(|f| f.len() <= mtu),
                    "a fragment over the MTU"
                );
                let n = frames.len();
                frames.rotate_left(rotate % n);
                let mut fresh = Face {
                    link: LinkService::new(
                        Some(mtu),
                        Some(ReassemblyLimits::default()),
                        MAX_NDN_PACKET_SIZE,
                    ),
                    c: FaceCounters::default(),
                    limits: ReassemblyLimits::default(),
                    out: Vec::new(),
                };
                for f in &frames {
                    fresh.link.receive(
                        FaceId(1),
                        Endpoint::Peer,
                        f.clone(),
                        0,
                        now,
                        &mut fresh.c,
                        &mut fresh.out,
                    );
                }
                if h.nack.is_none() || !data {
                    assert_eq!(fresh.out.len(), 1, "a fragmented packet comes out once");
                    let got = match &fresh.out[0].packet {
                        RxPacket::Interest(i) | RxPacket::Nack(_, i) => i.wire(),
                        RxPacket::Data(d) => d.wire(),
                    };
                    assert_eq!(got, &wire, "a fragmented packet comes out the same");
                    assert_eq!(fresh.out[0].pit_token, h.pit_token, "its token travels");
                }
                let from = endpoint(rotate as u8);
                for f in frames {
                    face.receive(from, f, now);
                }
            }
            op::ADVANCE => {
                now += Duration::from_millis(u64::from(inp.u16()));
                face.link.expire(now, &mut face.c);
                face.link.step_reliability(now, &mut face.c, &mut face_out);
                face_out.clear();
                face.check();
            }
            _ => {
                let b = inp.u8();
                if b & 1 != 0 {
                    let on = face.link.local_fields();
                    face.link.set_local_fields(!on);
                }
                face.link.set_mtu(64 * (usize::from(b >> 1) + 1));
            }
        }
    }
}
