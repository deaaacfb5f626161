//! Ethernet frames as an interface's channel receives them: demultiplexed by
//! [`kite_face::ether::demultiplex`] (no socket), then through the link service of the face
//! they belong to (the multicast face reassembles per sender; each unicast sender has its own
//! face), as `EtherChannel::recv_burst` does.
//!
//! Checks: a frame shorter than a header or of another EtherType is malformed; a frame goes
//! to a face only when addressed to the group or to this host, from a unicast source other
//! than this host; the multicast face keys fragments by the sender's address, a unicast face
//! by its only peer; the frame handed on is the payload's first TLV element (padding cut)
//! and never reaches past the payload; every face's reassembly stays within its bounds.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use bytes::Bytes;
use hashbrown::HashMap;
use kite_face::ether::frame::{padding, EtherHeader, ETHERTYPE_NDN, HEADER_LEN, NDN_MULTICAST};
use kite_face::ether::{demultiplex, Arrival};
use kite_face::link_service::LinkService;
use kite_link::reassembly::{Endpoint, ReassemblyLimits};
use kite_link::FaceCounters;
use kite_link::{FaceId, MacAddr};
use kite_packet::{Interest, LpHeader, LpPacket, Name};

use crate::input::{Input, Writer};

/// Steps a program may run.
pub const MAX_STEPS: usize = 256;

/// This host's address.
pub const LOCAL: MacAddr = MacAddr([0x02, 0, 0, 0, 0, 0x01]);

/// Unicast faces the model channel makes (a real channel makes one per sender).
const MAX_FACES: usize = 8;

/// Ethernet MTU of the faces.
const MTU: usize = 1500;

/// Reassembly bounds of every face (small, so programs reach them).
pub const LIMITS: ReassemblyLimits = ReassemblyLimits {
    max_fragments: 8,
    max_partials: 3,
    max_bytes: 8192,
    timeout: Duration::from_millis(500),
    max_packet: kite_link::framing::MAX_NDN_PACKET_SIZE,
};

/// Destination choices of a built frame: the group, this host, broadcast, another group,
/// another host.
pub fn dst(b: u8) -> MacAddr {
    match b % 5 {
        0 => NDN_MULTICAST,
        1 => LOCAL,
        2 => MacAddr([0xff; 6]),
        3 => MacAddr([0x01, 0, 0x5e, 0, 0, 0x01]),
        _ => MacAddr([0x02, 0, 0, 0, 0, 0x99]),
    }
}

/// Source choices: four peers, this host, the group.
pub fn src(b: u8) -> MacAddr {
    match b % 6 {
        n @ 0..=3 => MacAddr([0x02, 0, 0, 0, 1, n]),
        4 => LOCAL,
        _ => NDN_MULTICAST,
    }
}

/// Step kinds (first octet, modulo 3).
pub mod op {
    /// `[u16 length] [octets]`: any frame.
    pub const RAW: u8 = 0;
    /// `[dst] [src] [flags] ...`: a built frame; flags bit 0 another EtherType (u16 follows),
    /// bit 1 no padding, bits 2–3 the payload: 0 raw (`[u16 length] [octets]`), 1 a fragment
    /// (`[u16 seq] [index] [count] [u16 length] [octets]`), 2 an Interest (`[component]`),
    /// 3 trailing garbage after an Interest.
    pub const BUILT: u8 = 1;
    /// `[u16 ms]`: the clock moves on.
    pub const ADVANCE: u8 = 2;
}

/// Writes a built frame step with an Interest for `/e/<c>`.
pub fn write_interest_frame(w: &mut Writer, dst: u8, src: u8, c: u8) {
    w.u8(op::BUILT).u8(dst).u8(src).u8(2 << 2).u8(c);
}

/// The Interest for `/e/<c>`, encoded once per `c` for the whole campaign (a frame step
/// copies it, so no input sees another's).
fn interest(c: u8) -> Bytes {
    static INTERESTS: OnceLock<Vec<Bytes>> = OnceLock::new();
    INTERESTS.get_or_init(|| {
        let name: Name = "/e".parse().expect("a name");
        (0..=u8::MAX)
            .map(|c| Interest::new(name.clone().append_generic(&[c])).encode())
            .collect()
    })[usize::from(c)]
    .clone()
}

fn built(inp: &mut Input<'_>) -> Vec<u8> {
    let dst = dst(inp.u8());
    let src = src(inp.u8());
    let flags = inp.u8();
    let mut h = EtherHeader::ndn(dst, src);
    if flags & 1 != 0 {
        h.ethertype = inp.u16();
    }
    let payload: Vec<u8> = match (flags >> 2) & 3 {
        0 => inp.blob(MTU).to_vec(),
        1 => {
            let seq = u64::from(inp.u16());
            let index = u64::from(inp.u8());
            let count = u64::from(inp.u8());
            LpPacket {
                header: LpHeader {
                    sequence: Some(seq),
                    frag_index: Some(index),
                    frag_count: Some(count),
                    ..LpHeader::default()
                },
                fragment: Some(Bytes::copy_from_slice(inp.blob(MTU))),
            }
            .encode()
            .to_vec()
        }
        2 => interest(inp.u8()).to_vec(),
        _ => {
            let mut p = interest(inp.u8()).to_vec();
            p.extend_from_slice(inp.blob(64));
            p
        }
    };
    let mut f = h.encode().to_vec();
    f.extend_from_slice(&payload);
    if flags & 2 == 0 {
        f.extend_from_slice(padding(payload.len()));
    }
    f
}

/// A model of one interface's channel: its faces by remote address.
struct Channel {
    faces: HashMap<MacAddr, (LinkService, FaceCounters)>,
}

impl Channel {
    fn face(&mut self, remote: MacAddr) -> Option<&mut (LinkService, FaceCounters)> {
        if !self.faces.contains_key(&remote) && self.faces.len() > MAX_FACES {
            return None;
        }
        Some(self.faces.entry(remote).or_insert_with(|| {
            (
                LinkService::new(Some(MTU), Some(LIMITS), LIMITS.max_packet),
                FaceCounters::default(),
            )
        }))
    }

    fn check(&self) {
        for (l, _) in self.faces.values() {
            let r = l.reassembler().expect("Ethernet faces reassemble");
            assert!(
                r.partials() <= LIMITS.max_partials,
                "partials over the bound"
            );
            assert!(r.bytes() <= LIMITS.max_bytes, "octets over the bound");
        }
    }
}

/// Checks what [`demultiplex`] made of `frame`, and returns it.
fn classify(frame: &[u8]) -> Arrival<'_> {
    let a = demultiplex(frame, LOCAL);
    let parsed = EtherHeader::parse(frame);
    match a {
        Arrival::Malformed => {
            assert!(
                frame.len() < HEADER_LEN || parsed.is_err(),
                "a well-formed NDN frame called malformed"
            );
        }
        Arrival::Foreign => {
            let (h, _) = parsed.expect("a foreign frame has a header");
            let mine = h.dst == NDN_MULTICAST || h.dst == LOCAL;
            assert!(
                !mine || h.src == LOCAL || h.src.is_multicast(),
                "a frame for this host called foreign"
            );
        }
        Arrival::Face {
            remote,
            from,
            frame: inner,
        } => {
            let (h, payload) = parsed.expect("a frame for a face has a header");
            assert_eq!(h.ethertype, ETHERTYPE_NDN);
            assert!(
                h.src != LOCAL && !h.src.is_multicast(),
                "a frame from us or a group"
            );
            assert_eq!(
                inner.as_ptr(),
                payload.as_ptr(),
                "the frame starts the payload"
            );
            assert!(
                inner.len() <= payload.len(),
                "the frame stays in the payload"
            );
            match from {
                Endpoint::Mac(m) => {
                    assert_eq!((remote, m, h.dst), (NDN_MULTICAST, h.src, NDN_MULTICAST));
                }
                Endpoint::Peer => assert_eq!((remote, h.dst), (h.src, LOCAL)),
                Endpoint::Ip(_) => panic!("an IP sender on Ethernet"),
            }
        }
    }
    a
}

/// Runs a program.
pub fn run(data: &[u8]) {
    let mut inp = Input::new(data);
    let mut ch = Channel {
        faces: HashMap::new(),
    };
    let origin = Instant::now();
    let mut now = origin;
    let mut steps = 0;
    let mut out = Vec::new();
    while !inp.is_empty() && steps < MAX_STEPS {
        steps += 1;
        let frame = match inp.u8() % 3 {
            op::RAW => inp.blob(HEADER_LEN + MTU).to_vec(),
            op::BUILT => built(&mut inp),
            _ => {
                now += Duration::from_millis(u64::from(inp.u16()));
                for (l, c) in ch.faces.values_mut() {
                    l.expire(now, c);
                }
                ch.check();
                continue;
            }
        };
        if let Arrival::Face {
            remote,
            from,
            frame: inner,
        } = classify(&frame)
        {
            let inner = Bytes::copy_from_slice(inner);
            if let Some((link, c)) = ch.face(remote) {
                link.receive(FaceId(600), from, inner, 0, now, c, &mut out);
                out.clear();
            }
        }
        ch.check();
    }
}
