//! An Ethernet channel's lanes: the AF_XDP sockets on its interface's queues that belong to
//! I/O threads other than the channel's own (its *home*), to which the XDP program steers
//! the NDN frames whose forwarding shard those threads run ([`crate::xdp::steer`]). A lane
//! reads its frames and dispatches their packets on its own thread, so nothing crosses
//! threads on its way in; the faces stay the home's.
//!
//! What a lane may do without the face: find the face by the sender's address in the
//! channel's [`LaneView`] (a snapshot the home publishes whenever its faces change, read
//! without a lock), decode a whole packet ([`receive_whole`]) and count it in the face's
//! [`LaneStats`]. Everything else goes home through a bounded ring, as its octets: a frame
//! of a sender with no face yet (the home makes the on-demand face), a frame longer than
//! the MTU, one with fragmentation or reliability fields, anything not of NDN's EtherType.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use arc_swap::ArcSwap;
use bytes::Bytes;
use hashbrown::HashMap;
use mio::unix::SourceFd;
use mio::{Interest, Registry, Token};

use super::frame::{ETHERTYPE_NDN, HEADER_LEN};
use super::{demultiplex, Arrival};
use crate::datagram::Arena;
use crate::lanes::LaneStats;
use crate::link_service::{receive_whole, RxSink};
use crate::sys::BATCH;
use crate::transport::Progress;
use crate::xdp::socket::XskLane;
use kite_link::{ChannelCounters, FaceCounters, FaceId, MacAddr};

/// Frames one lane may have waiting for its home at once ([`EtherLane`]'s ring to it): at
/// most this many times the MTU (plus a receive arena's chunk) of memory per lane. A lane
/// hands home only what steering did not expect it to take (new senders, oversized frames),
/// so a full ring means a flood, whose frames beyond it are dropped and counted.
pub const HOME_RING: usize = 1024;

/// What a lane needs of the channel's faces: the snapshot the home publishes.
#[derive(Debug)]
pub struct LaneView {
    /// The interface's address (what [`demultiplex`] takes as local).
    pub mac: MacAddr,
    /// The longest frame a face takes (the Ethernet header and the MTU): longer ones go home.
    pub longest: usize,
    /// The largest network packet a face hands on.
    pub max_packet: usize,
    /// The faces whose frames a lane may take.
    pub faces: LaneFaces,
}

/// Faces by remote address ([`super::frame::NDN_MULTICAST`] for the group face), each with
/// what the lanes count for it.
pub type LaneFaces = HashMap<MacAddr, (FaceId, Arc<LaneStats>)>;

/// The channel's counters a lane moves: each lane's a cache line of its own.
#[repr(align(64))]
#[derive(Debug, Default)]
struct ChannelSlot {
    malformed: AtomicU64,
    foreign: AtomicU64,
    /// Frames for the home that found the ring to it full.
    dropped: AtomicU64,
}

impl ChannelSlot {
    fn bump(n: &AtomicU64) {
        n.store(n.load(Ordering::Relaxed).wrapping_add(1), Ordering::Relaxed);
    }
}

/// What the home and its lanes share: the view, and the lanes' channel counters.
#[derive(Debug)]
pub(crate) struct Shared {
    pub view: ArcSwap<LaneView>,
    counts: Box<[ChannelSlot]>,
}

impl Shared {
    pub fn new(lanes: usize, view: LaneView) -> Self {
        Shared {
            view: ArcSwap::from_pointee(view),
            counts: (0..lanes).map(|_| ChannelSlot::default()).collect(),
        }
    }

    /// Adds the lanes' counts to the channel's: a frame a lane could not hand home counts as
    /// a socket drop (lost before the channel could read it).
    pub fn add_to(&self, c: &mut ChannelCounters) {
        for s in self.counts.iter() {
            c.n_malformed += s.malformed.load(Ordering::Relaxed);
            c.n_foreign += s.foreign.load(Ordering::Relaxed);
            c.n_socket_drops += s.dropped.load(Ordering::Relaxed);
        }
    }
}

/// A frame a lane hands its home: its octets, and whether it was longer than the MTU.
pub(crate) type ToHome = (Bytes, bool);

/// One lane of a channel: its socket on each of the interface's receive queues, owned by an
/// I/O thread other than the channel's.
pub struct EtherLane {
    sockets: Vec<XskLane>,
    shared: Arc<Shared>,
    /// This lane's index among the channel's (its slot in every [`LaneStats`]).
    lane: usize,
    to_home: rtrb::Producer<ToHome>,
    arena: Arena,
    /// The frames a socket's return ring holds from which the home is asked to put them back
    /// into its fill ring ([`LaneBurst::wake_home`]).
    wake_at: usize,
    iface: String,
}

impl std::fmt::Debug for EtherLane {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EtherLane")
            .field("iface", &self.iface)
            .field("lane", &self.lane)
            .field("queues", &self.sockets.len())
            .finish()
    }
}

/// What a lane's burst did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaneBurst {
    /// A socket had more than a burst.
    pub progress: Progress,
    /// The home must run soon (wake it if it sleeps): it has frames from this lane to
    /// receive, or enough of the lane's read frames to put back into its fill ring that the
    /// kernel may soon run short.
    pub wake_home: bool,
}

impl EtherLane {
    pub(crate) fn new(
        sockets: Vec<XskLane>,
        shared: Arc<Shared>,
        lane: usize,
        to_home: rtrb::Producer<ToHome>,
        iface: String,
    ) -> Self {
        // The home is woken once a lane holds back a quarter of its share of the receive
        // frames: all lanes together never keep more than a quarter from the fill ring.
        let lanes = shared.counts.len().max(1);
        let frames = sockets.first().map_or(0, XskLane::capacity);
        EtherLane {
            sockets,
            shared,
            lane,
            to_home,
            arena: Arena::default(),
            wake_at: (frames / (4 * lanes)).max(1),
            iface,
        }
    }

    /// The interface's name.
    pub fn iface(&self) -> &str {
        &self.iface
    }

    /// Registers the lane's sockets under `token` for edge-triggered read readiness.
    pub fn register(&self, registry: &Registry, token: Token) -> std::io::Result<()> {
        for s in &self.sockets {
            use std::os::fd::AsRawFd;
            registry.register(
                &mut SourceFd(&s.fd().as_raw_fd()),
                token,
                Interest::READABLE,
            )?;
        }
        Ok(())
    }

    /// Whether a socket's RX ring holds frames (no system call).
    pub fn has_frames(&mut self) -> bool {
        self.sockets.iter_mut().any(XskLane::has_frames)
    }

    /// Reads a burst from each socket at `now`, handing each whole packet of a known face to
    /// `out` and every other frame home.
    pub fn recv_burst(&mut self, now: Instant, out: &mut impl RxSink) -> LaneBurst {
        let view = self.shared.view.load();
        let mut take = Take {
            view: &view,
            counts: &self.shared.counts[self.lane],
            lane: self.lane,
            to_home: &mut self.to_home,
            arena: &mut self.arena,
            handed: false,
            now,
        };
        let mut progress = Progress::Drained;
        let mut returned = 0;
        for s in &mut self.sockets {
            if s.recv(BATCH as u32, |f| take.frame(f, out)) == BATCH as u32 {
                progress = Progress::More;
            }
            returned = returned.max(s.returned());
        }
        LaneBurst {
            progress,
            wake_home: take.handed || returned >= self.wake_at,
        }
    }
}

/// One burst's view of a lane.
struct Take<'a> {
    view: &'a LaneView,
    counts: &'a ChannelSlot,
    lane: usize,
    to_home: &'a mut rtrb::Producer<ToHome>,
    arena: &'a mut Arena,
    /// Whether the burst handed a frame home.
    handed: bool,
    now: Instant,
}

impl Take<'_> {
    fn frame(&mut self, f: &[u8], out: &mut impl RxSink) {
        let Some(ethertype) = f.get(12..HEADER_LEN) else {
            return ChannelSlot::bump(&self.counts.malformed);
        };
        let truncated = f.len() > self.view.longest;
        if truncated || ethertype != ETHERTYPE_NDN.to_be_bytes() {
            return self.home(f, truncated);
        }
        let (remote, payload) = match demultiplex(f, self.view.mac) {
            Arrival::Malformed => return ChannelSlot::bump(&self.counts.malformed),
            Arrival::Foreign => return ChannelSlot::bump(&self.counts.foreign),
            Arrival::Face { remote, frame, .. } => (remote, frame),
        };
        let Some((face, stats)) = self.view.faces.get(&remote) else {
            return self.home(f, false);
        };
        let (frame, own) = self.arena.receive(payload);
        let mut c = FaceCounters::default();
        match receive_whole(*face, frame, own, self.view.max_packet, &mut c, out) {
            Ok(()) => stats.record(self.lane, &mut c, self.now),
            Err(_) => self.home(f, false),
        }
    }

    /// Hands `f` to the home (counted as a drop when its ring is full).
    fn home(&mut self, f: &[u8], truncated: bool) {
        if self.to_home.is_full() {
            return ChannelSlot::bump(&self.counts.dropped);
        }
        let _ = self.to_home.push((self.arena.copy(f), truncated));
        self.handed = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ether::frame::{self, EtherHeader, NDN_MULTICAST};
    use crate::link_service::{LinkService, Received};
    use crate::xdp::steer::testing;
    use kite_link::framing::MAX_NDN_PACKET_SIZE;
    use kite_link::reassembly::{Endpoint, Reassembler, ReassemblyLimits};
    use proptest::prelude::*;

    const LOCAL: MacAddr = MacAddr([2, 0, 0, 0, 0, 1]);
    const PEER: MacAddr = MacAddr([2, 0, 0, 0, 0, 2]);
    const MTU: usize = 1500;

    /// A lane's state over no socket: the view with `PEER`'s face 300 and the group's face
    /// 301, and the ring to the home (`ring` frames).
    struct Bench {
        view: LaneView,
        counts: ChannelSlot,
        to_home: rtrb::Producer<ToHome>,
        home: rtrb::Consumer<ToHome>,
        arena: Arena,
        epoch: Instant,
    }

    impl Bench {
        fn new(ring: usize) -> Self {
            let epoch = Instant::now();
            let mut faces = LaneFaces::new();
            faces.insert(PEER, (FaceId(300), Arc::new(LaneStats::new(2, epoch))));
            faces.insert(
                NDN_MULTICAST,
                (FaceId(301), Arc::new(LaneStats::new(2, epoch))),
            );
            let (to_home, home) = rtrb::RingBuffer::new(ring);
            Bench {
                view: LaneView {
                    mac: LOCAL,
                    longest: HEADER_LEN + MTU,
                    max_packet: MAX_NDN_PACKET_SIZE,
                    faces,
                },
                counts: ChannelSlot::default(),
                to_home,
                home,
                arena: Arena::default(),
                epoch,
            }
        }

        /// Lane 1 takes `f`: what it handed on, and whether it handed `f` home.
        fn take(&mut self, f: &[u8]) -> (Vec<Received>, bool) {
            let mut out = Vec::new();
            let mut t = Take {
                view: &self.view,
                counts: &self.counts,
                lane: 1,
                to_home: &mut self.to_home,
                arena: &mut self.arena,
                handed: false,
                now: self.epoch,
            };
            t.frame(f, &mut out);
            let handed = t.handed;
            (out, handed)
        }

        fn counters_of(&self, mac: MacAddr) -> FaceCounters {
            let mut c = FaceCounters::default();
            self.view.faces[&mac].1.add_to(&mut c);
            c
        }
    }

    fn frame(dst: MacAddr, src: MacAddr, payload: &[u8]) -> Vec<u8> {
        [&EtherHeader::ndn(dst, src).encode()[..], payload].concat()
    }

    fn interest() -> Vec<u8> {
        testing::tlv(
            0x05,
            &[
                testing::tlv(0x07, &testing::tlv(8, b"a")),
                testing::tlv(0x0a, &[1, 2, 3, 4]),
            ]
            .concat(),
        )
    }

    #[test]
    fn a_known_peers_packet_is_handed_on_and_counted_for_its_face() {
        let mut b = Bench::new(4);
        let (out, handed) = b.take(&frame(LOCAL, PEER, &interest()));
        assert!(!handed);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].face, FaceId(300));
        let c = b.counters_of(PEER);
        assert_eq!(
            (c.n_in_interests, c.n_in_bytes),
            (1, interest().len() as u64)
        );
        // To the group, from any sender: the group face's.
        let (out, _) = b.take(&frame(
            NDN_MULTICAST,
            MacAddr([2, 9, 9, 9, 9, 9]),
            &interest(),
        ));
        assert_eq!(out[0].face, FaceId(301));
        assert_eq!(b.view.faces[&PEER].1.last_rx(), Some(b.epoch));
    }

    #[test]
    fn what_needs_the_home_goes_home_as_it_came() {
        let mut b = Bench::new(8);
        let stranger = frame(LOCAL, MacAddr([2, 7, 7, 7, 7, 7]), &interest());
        let fragment = testing::tlv(
            0x64,
            &[
                testing::tlv(0x52, &[0]),
                testing::tlv(0x53, &[2]),
                testing::tlv(0x50, &interest()[..5]),
            ]
            .concat(),
        );
        let reliable = testing::tlv(
            0x64,
            &[
                testing::tlv(0x0348, &[0; 8]),
                testing::tlv(0x50, &interest()),
            ]
            .concat(),
        );
        let oversized = frame(LOCAL, PEER, &vec![0x05; MTU + 1]);
        let mut udp = frame(LOCAL, PEER, &interest());
        udp[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
        let cases = [
            (stranger, false),
            (frame(LOCAL, PEER, &fragment), false),
            (frame(LOCAL, PEER, &reliable), false),
            (oversized, true),
            (udp, false),
        ];
        for (f, truncated) in &cases {
            let (out, handed) = b.take(f);
            assert!(handed && out.is_empty());
            let (octets, t) = b.home.pop().expect("handed home");
            assert_eq!((&octets[..], t), (&f[..], *truncated));
        }
        assert_eq!(b.counters_of(PEER), FaceCounters::default());
    }

    #[test]
    fn the_lane_counts_what_no_face_takes_and_what_the_home_had_no_room_for() {
        let mut b = Bench::new(1);
        let nothing = |(out, handed): (Vec<Received>, bool)| out.is_empty() && !handed;
        assert!(nothing(b.take(&[1, 2, 3])));
        let other_host = frame(MacAddr([2, 5, 5, 5, 5, 5]), PEER, &interest());
        assert!(nothing(b.take(&other_host)));
        let stranger = frame(LOCAL, MacAddr([2, 7, 7, 7, 7, 7]), &interest());
        assert!(b.take(&stranger).1);
        assert!(!b.take(&stranger).1, "the ring to the home is full");
        let shared = Shared {
            view: ArcSwap::from_pointee(Bench::new(1).view),
            counts: vec![b.counts].into_boxed_slice(),
        };
        let mut c = ChannelCounters::default();
        shared.add_to(&mut c);
        assert_eq!((c.n_malformed, c.n_foreign, c.n_socket_drops), (1, 1, 1));
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

        /// A lane takes any NDN frame from a known peer exactly as the face's own link
        /// service would (the same packets, fields and counters), or hands it home untouched
        /// when only the face could take it (fragments, reliability).
        #[test]
        fn a_lane_receives_as_the_face_would(payload in testing::packet()) {
            let mut b = Bench::new(4);
            let f = frame(LOCAL, PEER, &payload);
            let (out, handed) = b.take(&f);
            let cut = Bytes::copy_from_slice(&payload[..frame::packet_len(&payload)]);
            let mut link = LinkService::new(Some(MTU), None, MAX_NDN_PACKET_SIZE);
            let mut r = Reassembler::new(ReassemblyLimits::default());
            let (mut c, mut expected) = (FaceCounters::default(), Vec::new());
            let (face, now) = (FaceId(300), b.epoch);
            link.receive_in(face, Endpoint::Peer, cut.clone(), 0, now, Some(&mut r), &mut c, &mut expected);
            if f.len() > HEADER_LEN + MTU {
                prop_assert!(handed);
                prop_assert_eq!(b.home.pop().unwrap(), (Bytes::from(f), true));
            } else if handed {
                let lp = kite_packet::lp::LpPacket::decode(cut).expect("only LpPackets go home");
                let h = &lp.header;
                prop_assert!(lp.is_fragmented() || h.tx_sequence.is_some() || !h.acks.is_empty());
                prop_assert_eq!(&b.home.pop().unwrap().0[..], &f[..]);
                prop_assert_eq!(b.counters_of(PEER), FaceCounters::default());
            } else {
                prop_assert_eq!(format!("{out:?}"), format!("{expected:?}"));
                prop_assert_eq!(b.counters_of(PEER), c);
            }
        }
    }
}
