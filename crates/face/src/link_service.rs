//! The NDNLPv2 link service of one face (NFD's GenericLinkService).
//!
//! Receive: decode the LpPacket, reassemble fragments (datagram faces only), decode the
//! forwarder view of the packet, and apply NFD's rules on LP fields: NextHopFaceId only from a
//! face with local fields enabled and only on Interests (else the packet is dropped),
//! CachePolicy only on Data, IncomingFaceId ignored. Send: add or strip local fields, and cut
//! a frame larger than the MTU into fragments whose first one carries the header fields
//! (datagram faces; stream faces never fragment, since python-ndn cannot reassemble).
//! With LpReliability on (UDP and Ethernet unicast faces, [`crate::reliability`]), frames
//! carry TxSequence and Acks and are kept until acknowledged.

use std::time::Instant;

use bytes::Bytes;
use kite_packet::{
    CachePolicy, DataView, Fragments, InterestView, LpHeader, LpPacket, NackReason, NetPacketView,
    Peeled, PitToken,
};
use smallvec::SmallVec;

use crate::queue::{OutFrame, OutQueue};
use crate::reliability::{split_frame, Reliability, ReliabilityLimits};
use kite_link::reassembly::{Endpoint, Reassembler, ReassemblyError, ReassemblyLimits};
use kite_link::FaceCounters;
use kite_link::{FaceId, PacketKind};

/// A network packet received on a face, with the LP fields the forwarder reads.
#[derive(Debug, Clone)]
pub struct Received {
    /// The face it came from.
    pub face: FaceId,
    /// The packet (forwarder view).
    pub packet: RxPacket,
    /// PitToken, to echo on the answer.
    pub pit_token: Option<PitToken>,
    /// CongestionMark (0: none).
    pub congestion_mark: u64,
    /// NextHopFaceId (Interests from a local face with local fields enabled only).
    pub next_hop_face_id: Option<u64>,
    /// CachePolicy (Data only).
    pub cache_policy: Option<CachePolicy>,
    /// Octets of the buffer the packet's frame is alone in, which the CS may keep as is
    /// ([`kite_packet::pool::take_reusable`]); 0 when it shares one (or was reassembled).
    pub own_buffer: usize,
}

/// Where a link service puts the packets it completes: a `Vec` handed on as a burst, or a
/// consumer that takes each one at once (the I/O thread's dispatcher, so that a packet is not
/// moved into a `Vec` and out again on its way to a forwarding thread).
pub trait RxSink {
    /// Takes one received packet.
    fn take(&mut self, r: Received);
}

impl RxSink for Vec<Received> {
    #[inline]
    fn take(&mut self, r: Received) {
        self.push(r);
    }
}

/// The network packet inside a received frame.
#[derive(Debug, Clone)]
pub enum RxPacket {
    /// An Interest.
    Interest(InterestView),
    /// A Data.
    Data(DataView),
    /// A Nack of an Interest.
    Nack(NackReason, InterestView),
}

impl RxPacket {
    /// Which kind of packet this is.
    pub fn kind(&self) -> PacketKind {
        match self {
            RxPacket::Interest(_) => PacketKind::Interest,
            RxPacket::Data(_) => PacketKind::Data,
            RxPacket::Nack(..) => PacketKind::Nack,
        }
    }
}

/// Link service state of one face.
#[derive(Debug)]
pub struct LinkService {
    reassembler: Option<Reassembler>,
    mtu: Option<usize>,
    /// Largest network packet handed on; a larger one is dropped and counted.
    max_packet: usize,
    local_fields: bool,
    next_seq: u64,
    scratch: Vec<u8>,
    /// LpReliability state, when it is on (boxed: most faces have it off).
    reliability: Option<Box<Reliability>>,
}

impl LinkService {
    /// A link service that fragments to `mtu` and reassembles when `mtu` is set (datagram
    /// faces), and does neither when it is `None` (stream faces). `limits: None`: a face of a
    /// datagram channel, whose frames are reassembled by the channel's reassembler
    /// ([`LinkService::receive_in`]). It hands on no network packet longer than `max_packet`
    /// octets.
    pub fn new(mtu: Option<usize>, limits: Option<ReassemblyLimits>, max_packet: usize) -> Self {
        LinkService {
            reassembler: mtu.and(limits).map(|limits| {
                Reassembler::new(ReassemblyLimits {
                    max_packet,
                    ..limits
                })
            }),
            mtu,
            max_packet,
            local_fields: false,
            next_seq: 0,
            scratch: Vec::new(),
            reliability: None,
        }
    }

    /// Whether LpReliability is on.
    pub fn reliability(&self) -> Option<&Reliability> {
        self.reliability.as_deref()
    }

    /// Turns LpReliability on within `limits`, or off (`None`: frames waiting for their Ack
    /// are forgotten). Only for datagram faces (the caller checks): it needs an MTU.
    pub fn set_reliability(&mut self, limits: Option<ReliabilityLimits>) {
        match (limits, &self.reliability) {
            (None, _) => self.reliability = None,
            (Some(_), Some(_)) => {}
            (Some(l), None) => self.reliability = Some(Box::new(Reliability::new(l))),
        }
    }

    /// When LpReliability has work to do ([`LinkService::step_reliability`]).
    pub fn reliability_due(&self) -> Option<Instant> {
        self.reliability.as_ref().and_then(|r| r.due())
    }

    /// Resends the frames found lost and sends the Acks due at `now`.
    pub fn step_reliability(&mut self, now: Instant, c: &mut FaceCounters, q: &mut OutQueue) {
        if let (Some(r), Some(mtu)) = (&mut self.reliability, self.mtu) {
            r.step(now, mtu, c, q);
        }
    }

    /// The reassembly state (datagram faces only), to read its bounds.
    pub fn reassembler(&self) -> Option<&Reassembler> {
        self.reassembler.as_ref()
    }

    /// The MTU fragmentation cuts to (`None`: never fragment).
    pub fn mtu(&self) -> Option<usize> {
        self.mtu
    }

    /// Changes the MTU of a datagram face (ignored on a face that never fragments).
    pub fn set_mtu(&mut self, mtu: usize) {
        if self.mtu.is_some() {
            self.mtu = Some(mtu);
        }
    }

    /// Whether local fields (IncomingFaceId out, NextHopFaceId in) are enabled.
    pub fn local_fields(&self) -> bool {
        self.local_fields
    }

    /// Enables or disables local fields (the caller checks the face is local).
    pub fn set_local_fields(&mut self, on: bool) {
        self.local_fields = on;
    }

    /// Handles one received frame from `from` (alone in a buffer of `own_buffer` octets, or
    /// 0), pushing the packet it completes (if any). Fragments go to the face's own
    /// reassembler (none on a stream face: dropped).
    #[allow(clippy::too_many_arguments)]
    pub fn receive(
        &mut self,
        face: FaceId,
        from: Endpoint,
        frame: Bytes,
        own_buffer: usize,
        now: Instant,
        c: &mut FaceCounters,
        out: &mut impl RxSink,
    ) {
        // The reassembler is borrowed beside the rest rather than taken out of `self` and put
        // back: that moved the whole Option<Reassembler> twice per packet.
        let (rx, reassembler) = self.split();
        if let Some(r) = reassembler.as_mut() {
            r.expire(now);
        }
        rx.receive_in(
            face,
            from,
            frame,
            own_buffer,
            now,
            reassembler.as_mut(),
            c,
            out,
        );
        if let Some(r) = reassembler {
            c.n_reassembly_dropped += r.take_drops().map(|(_, n)| n).sum::<u64>();
        }
    }

    /// The receive state and the face's own reassembler, borrowed apart.
    fn split(&mut self) -> (Rx<'_>, &mut Option<Reassembler>) {
        let LinkService {
            reassembler,
            max_packet,
            local_fields,
            reliability,
            ..
        } = self;
        let rx = Rx {
            max_packet: *max_packet,
            local_fields: *local_fields,
            reliability,
        };
        (rx, reassembler)
    }

    /// Handles one received frame from `from` (alone in a buffer of `own_buffer` octets, or
    /// 0), reassembling fragments in `reassembler` (a channel's, shared by its faces; the
    /// caller takes its drops and counts them on their faces), pushing the packet it
    /// completes (if any).
    #[allow(clippy::too_many_arguments)]
    pub fn receive_in(
        &mut self,
        face: FaceId,
        from: Endpoint,
        frame: Bytes,
        own_buffer: usize,
        now: Instant,
        reassembler: Option<&mut Reassembler>,
        c: &mut FaceCounters,
        out: &mut impl RxSink,
    ) {
        let (rx, _) = self.split();
        rx.receive_in(face, from, frame, own_buffer, now, reassembler, c, out);
    }

    /// Drops partial packets that timed out; the caller runs this now and then so a face
    /// that stops receiving does not hold fragments forever.
    pub fn expire(&mut self, now: Instant, c: &mut FaceCounters) {
        if let Some(r) = &mut self.reassembler {
            r.expire(now);
            c.n_reassembly_dropped += r.take_drops().map(|(_, n)| n).sum::<u64>();
        }
    }

    /// Queues a packet given as its LP header fields and its encoded octets; IncomingFaceId is
    /// kept only when local fields are enabled. `false`: dropped (queue full or too large).
    pub fn send_packet(
        &mut self,
        mut header: LpHeader,
        packet: Bytes,
        c: &mut FaceCounters,
        q: &mut OutQueue,
    ) -> bool {
        if !self.local_fields {
            header.incoming_face_id = None;
        }
        let kind = if header.nack.is_some() {
            PacketKind::Nack
        } else if packet.first() == Some(&6) {
            PacketKind::Data
        } else {
            PacketKind::Interest
        };
        let mut head = std::mem::take(&mut self.scratch);
        head.clear();
        if !header.is_empty() {
            header.encode_header(Some(packet.len()), &mut head);
        }
        let ok = self.send(kind, &head, packet, c, q);
        self.scratch = head;
        ok
    }

    /// Queues a frame given as link-header octets and the packet's octets (the form
    /// `kite-fw` encodes), fragmenting it if it exceeds the MTU. `false`: dropped. With
    /// LpReliability on, it goes out with TxSequence (and Acks) and is kept until
    /// acknowledged; a frame whose header has fields Kite's forwarder never sends
    /// (NonDiscovery, PrefixAnnouncement, fragmentation fields) goes out without.
    pub fn send(
        &mut self,
        kind: PacketKind,
        head: &[u8],
        body: Bytes,
        c: &mut FaceCounters,
        q: &mut OutQueue,
    ) -> bool {
        // The clock is read only when reliability keeps the frame.
        let now = self.reliability.as_ref().map(|_| Instant::now());
        self.send_inner(kind, head, body, now, c, q)
    }

    /// [`LinkService::send`] at `now` (the time LpReliability's timeouts count from).
    pub fn send_at(
        &mut self,
        kind: PacketKind,
        head: &[u8],
        body: Bytes,
        now: Instant,
        c: &mut FaceCounters,
        q: &mut OutQueue,
    ) -> bool {
        self.send_inner(kind, head, body, Some(now), c, q)
    }

    fn send_inner(
        &mut self,
        kind: PacketKind,
        head: &[u8],
        body: Bytes,
        now: Option<Instant>,
        c: &mut FaceCounters,
        q: &mut OutQueue,
    ) -> bool {
        let len = head.len() + body.len();
        let reliable = match (&mut self.reliability, self.mtu) {
            (Some(r), Some(mtu)) => split_frame(head, &body).map(|(fields, packet)| {
                let now = now.unwrap_or_else(Instant::now);
                r.send(fields, packet, mtu, &mut self.next_seq, now, c, q)
            }),
            _ => None,
        };
        let queued = match self.mtu {
            _ if reliable.is_some() => reliable == Some(true),
            Some(mtu) if len > mtu => self.fragment(head, body, mtu, c, q),
            _ => {
                let ok = q.push(OutFrame {
                    head: SmallVec::from_slice(head),
                    body,
                });
                if !ok {
                    c.n_out_queue_full += 1;
                }
                ok
            }
        };
        if queued {
            match kind {
                PacketKind::Interest => c.n_out_interests += 1,
                PacketKind::Data => c.n_out_data += 1,
                PacketKind::Nack => c.n_out_nacks += 1,
            }
        }
        queued
    }

    /// Cuts a frame into fragments of at most `mtu` octets and queues them all, or none.
    fn fragment(
        &mut self,
        head: &[u8],
        body: Bytes,
        mtu: usize,
        c: &mut FaceCounters,
        q: &mut OutQueue,
    ) -> bool {
        let frame = if head.is_empty() {
            body
        } else {
            Bytes::from([head, &body[..]].concat())
        };
        let Ok(LpPacket {
            header,
            fragment: Some(payload),
        }) = LpPacket::decode(frame)
        else {
            c.n_out_too_large += 1;
            return false;
        };
        let Ok(pieces) = Fragments::new(header, payload, mtu, self.next_seq) else {
            c.n_out_too_large += 1;
            return false;
        };
        if pieces.len() > q.room() {
            c.n_out_queue_full += 1;
            return false;
        }
        self.next_seq = self.next_seq.wrapping_add(pieces.len() as u64);
        for piece in pieces {
            let body = piece.fragment.unwrap_or_default();
            self.scratch.clear();
            piece
                .header
                .encode_header(Some(body.len()), &mut self.scratch);
            q.push(OutFrame {
                head: SmallVec::from_slice(&self.scratch),
                body,
            });
        }
        true
    }
}

/// Receives a frame that needs nothing of its face's state, as [`LinkService::receive_in`]
/// would on a face without local fields and with at most `max_packet` octets per packet: a
/// bare packet, or an LpPacket with neither fragmentation (FragIndex, FragCount) nor
/// reliability fields (TxSequence, Ack). Another frame is handed back untouched and counted
/// nowhere, for the face's owner to receive; an LpPacket that does not decode is counted as
/// malformed. A thread that does not own the face receives with this
/// ([`crate::ether::lanes`]).
pub fn receive_whole(
    face: FaceId,
    frame: Bytes,
    own_buffer: usize,
    max_packet: usize,
    c: &mut FaceCounters,
    out: &mut impl RxSink,
) -> Result<(), Bytes> {
    let rx = Rx {
        max_packet,
        local_fields: false,
        reliability: &mut None,
    };
    let len = frame.len() as u64;
    let header = match LpPacket::peel(frame.clone()) {
        Ok(Peeled::Packet(pit_token, wire)) => {
            c.n_in_bytes += len;
            let fields = RxFields {
                pit_token,
                ..RxFields::default()
            };
            rx.receive_packet(face, fields, wire, own_buffer, c, out);
            return Ok(());
        }
        Ok(Peeled::Lp(lp)) => lp,
        Err(_) => {
            c.n_in_bytes += len;
            c.n_in_malformed += 1;
            return Ok(());
        }
    };
    let Ok(lp) = LpPacket::decode(header) else {
        c.n_in_bytes += len;
        c.n_in_malformed += 1;
        return Ok(());
    };
    let h = &lp.header;
    if lp.is_fragmented() || h.tx_sequence.is_some() || !h.acks.is_empty() {
        return Err(frame);
    }
    c.n_in_bytes += len;
    // An LP frame with no packet (idle) brings nothing.
    if let Some(wire) = lp.fragment {
        rx.receive_packet(face, RxFields::of(&lp.header), wire, own_buffer, c, out);
    }
    Ok(())
}

/// The LP header fields a received packet carries on, copied out of an [`LpHeader`] (or set
/// straight from a peeled frame) so the whole header is not moved along.
#[derive(Default)]
struct RxFields {
    pit_token: Option<PitToken>,
    nack: Option<NackReason>,
    next_hop_face_id: Option<u64>,
    cache_policy: Option<CachePolicy>,
    congestion_mark: Option<u64>,
}

impl RxFields {
    fn of(h: &LpHeader) -> Self {
        RxFields {
            pit_token: h.pit_token,
            nack: h.nack,
            next_hop_face_id: h.next_hop_face_id,
            cache_policy: h.cache_policy,
            congestion_mark: h.congestion_mark,
        }
    }
}

/// What receiving needs of a link service besides its reassembler (borrowed apart from it).
struct Rx<'a> {
    max_packet: usize,
    local_fields: bool,
    reliability: &'a mut Option<Box<Reliability>>,
}

impl Rx<'_> {
    #[allow(clippy::too_many_arguments)]
    fn receive_in(
        self,
        face: FaceId,
        from: Endpoint,
        frame: Bytes,
        own_buffer: usize,
        now: Instant,
        reassembler: Option<&mut Reassembler>,
        c: &mut FaceCounters,
        out: &mut impl RxSink,
    ) {
        c.n_in_bytes += frame.len() as u64;
        // Without LpReliability (which reads Sequence, TxSequence and Acks), the usual frames,
        // a bare packet or one with only a PIT token, skip building an LpHeader.
        let frame = match self.reliability {
            None => match LpPacket::peel(frame) {
                Ok(Peeled::Packet(pit_token, wire)) => {
                    let fields = RxFields {
                        pit_token,
                        ..RxFields::default()
                    };
                    return self.receive_packet(face, fields, wire, own_buffer, c, out);
                }
                Ok(Peeled::Lp(frame)) => frame,
                Err(_) => {
                    c.n_in_malformed += 1;
                    return;
                }
            },
            Some(_) => frame,
        };
        // A fragment is copied into its packet's buffer: a buffer of its own goes back then.
        let own_frame = (own_buffer > 0).then(|| frame.clone());
        let Ok(lp) = LpPacket::decode(frame) else {
            c.n_in_malformed += 1;
            return;
        };
        if let Some(r) = self.reliability.as_mut() {
            let h = &lp.header;
            let fresh = r.on_receive(
                h.sequence,
                h.tx_sequence,
                &h.acks,
                lp.fragment.is_some(),
                now,
                c,
            );
            if !fresh {
                return;
            }
        }
        let (header, wire, own_buffer) = if lp.is_fragmented() {
            let Some(r) = reassembler else {
                c.n_reassembly_dropped += 1;
                return;
            };
            let added = r.add(face, from, lp, now);
            if let Some(f) = own_frame {
                kite_packet::pool::give_back_slice(f);
            }
            match added {
                Ok(Some((header, wire))) => (header, wire, 0),
                Ok(None) => return,
                Err(ReassemblyError::TooLarge) => {
                    c.n_in_too_large += 1;
                    return;
                }
                Err(_) => {
                    c.n_reassembly_dropped += 1;
                    return;
                }
            }
        } else {
            match lp.fragment {
                Some(f) => (lp.header, f, own_buffer),
                None => return, // an LP frame with no packet (idle or Ack-only)
            }
        };
        self.receive_packet(face, RxFields::of(&header), wire, own_buffer, c, out);
    }

    /// Decodes a whole packet, applies the LP field rules and pushes it.
    fn receive_packet(
        &self,
        face: FaceId,
        h: RxFields,
        wire: Bytes,
        own_buffer: usize,
        c: &mut FaceCounters,
        out: &mut impl RxSink,
    ) {
        // Every face, stream or datagram, bare, LP-framed or reassembled, comes through here.
        if wire.len() > self.max_packet {
            c.n_in_too_large += 1;
            return;
        }
        let Ok(view) = NetPacketView::decode(wire) else {
            c.n_in_malformed += 1;
            return;
        };
        let packet = match (view, h.nack) {
            (NetPacketView::Interest(i), None) => RxPacket::Interest(i),
            (NetPacketView::Interest(i), Some(reason)) => RxPacket::Nack(reason, i),
            (NetPacketView::Data(d), None) => RxPacket::Data(d),
            (NetPacketView::Data(_), Some(_)) => {
                c.n_in_lp_dropped += 1;
                return;
            }
        };
        let next_hop_ok = matches!(packet, RxPacket::Interest(_)) && self.local_fields;
        if h.next_hop_face_id.is_some() && !next_hop_ok {
            c.n_in_lp_dropped += 1;
            return;
        }
        match packet {
            RxPacket::Interest(_) => c.n_in_interests += 1,
            RxPacket::Data(_) => c.n_in_data += 1,
            RxPacket::Nack(..) => c.n_in_nacks += 1,
        }
        let is_data = matches!(packet, RxPacket::Data(_));
        out.take(Received {
            face,
            packet,
            pit_token: h.pit_token,
            congestion_mark: h.congestion_mark.unwrap_or(0),
            next_hop_face_id: h.next_hop_face_id,
            cache_policy: h.cache_policy.filter(|_| is_data),
            own_buffer,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kite_link::framing::MAX_NDN_PACKET_SIZE;
    use kite_packet::{pool, Data, Interest, Name};

    fn interest(name: &str) -> Bytes {
        Interest::new(name.parse::<Name>().unwrap()).encode()
    }

    fn data(name: &str, size: usize) -> Bytes {
        Data::new(name.parse::<Name>().unwrap(), vec![7u8; size]).encode()
    }

    fn rx(link: &mut LinkService, frame: Bytes) -> (Vec<Received>, FaceCounters) {
        let mut c = FaceCounters::default();
        let mut out = Vec::new();
        link.receive(
            FaceId(300),
            Endpoint::Peer,
            frame,
            0,
            Instant::now(),
            &mut c,
            &mut out,
        );
        (out, c)
    }

    /// A link service fragmenting to `mtu`, with the default reassembly limits and largest
    /// packet.
    fn link_of(mtu: Option<usize>) -> LinkService {
        LinkService::new(mtu, Some(ReassemblyLimits::default()), MAX_NDN_PACKET_SIZE)
    }

    /// Receives `frame` from the peer on face 1 through `r`, alone in a buffer of `own`
    /// octets (0: shared).
    fn rx_in(
        link: &mut LinkService,
        r: &mut Reassembler,
        frame: Bytes,
        own: usize,
        now: Instant,
        c: &mut FaceCounters,
        out: &mut Vec<Received>,
    ) {
        link.receive_in(FaceId(1), Endpoint::Peer, frame, own, now, Some(r), c, out);
    }

    fn lp(header: LpHeader, packet: Bytes) -> Bytes {
        LpPacket {
            header,
            fragment: Some(packet),
        }
        .encode()
    }

    #[test]
    fn bare_and_lp_packets_carry_their_fields_to_the_forwarder() {
        let mut link = link_of(None);
        let (out, c) = rx(&mut link, interest("/a"));
        assert!(matches!(out[0].packet, RxPacket::Interest(_)));
        assert_eq!(c.n_in_interests, 1);
        let h = LpHeader {
            pit_token: PitToken::new(b"tok"),
            congestion_mark: Some(1),
            cache_policy: Some(CachePolicy::NO_CACHE),
            ..LpHeader::default()
        };
        let (out, c) = rx(&mut link, lp(h.clone(), data("/a", 10)));
        assert_eq!(out[0].pit_token, PitToken::new(b"tok"));
        assert_eq!(out[0].congestion_mark, 1);
        assert_eq!(out[0].cache_policy, Some(CachePolicy::NO_CACHE));
        assert_eq!(c.n_in_data, 1);
        let (out, _) = rx(&mut link, lp(h, interest("/a")));
        assert_eq!(
            out[0].cache_policy, None,
            "CachePolicy ignored on Interests"
        );
        let nack = LpHeader {
            nack: Some(NackReason::NO_ROUTE),
            ..LpHeader::default()
        };
        let (out, c) = rx(&mut link, lp(nack.clone(), interest("/a")));
        assert!(matches!(
            out[0].packet,
            RxPacket::Nack(NackReason::NO_ROUTE, _)
        ));
        assert_eq!(c.n_in_nacks, 1);
        let (out, c) = rx(&mut link, lp(nack, data("/a", 1)));
        assert!(out.is_empty());
        assert_eq!(c.n_in_lp_dropped, 1);
    }

    #[test]
    fn next_hop_face_id_needs_local_fields() {
        let mut link = link_of(None);
        let h = LpHeader {
            next_hop_face_id: Some(400),
            ..LpHeader::default()
        };
        let (out, c) = rx(&mut link, lp(h.clone(), interest("/a")));
        assert!(out.is_empty());
        assert_eq!(c.n_in_lp_dropped, 1);
        link.set_local_fields(true);
        let (out, _) = rx(&mut link, lp(h.clone(), interest("/a")));
        assert_eq!(out[0].next_hop_face_id, Some(400));
        let (out, _) = rx(&mut link, lp(h, data("/a", 1)));
        assert!(out.is_empty(), "NextHopFaceId on Data drops it");
    }

    #[test]
    fn garbage_is_counted_not_delivered() {
        let mut link = link_of(Some(1500));
        for bad in [&[0xffu8, 0][..], &[5, 0], &[100, 2, 80, 0], &[8, 1, 0]] {
            let (out, c) = rx(&mut link, Bytes::copy_from_slice(bad));
            assert!(out.is_empty());
            assert_eq!(c.n_in_malformed, 1, "{bad:?}");
        }
    }

    #[test]
    fn incoming_face_id_goes_out_only_with_local_fields() {
        let mut link = link_of(None);
        let mut c = FaceCounters::default();
        let mut q = OutQueue::new(8);
        let h = LpHeader {
            incoming_face_id: Some(300),
            ..LpHeader::default()
        };
        let d = data("/a", 3);
        assert!(link.send_packet(h.clone(), d.clone(), &mut c, &mut q));
        assert_eq!(q.frames().0[0].to_bytes(), d, "bare without local fields");
        link.set_local_fields(true);
        assert!(link.send_packet(h, d, &mut c, &mut q));
        let f = LpPacket::decode(q.frames().0[1].to_bytes()).unwrap();
        assert_eq!(f.header.incoming_face_id, Some(300));
        assert_eq!(c.n_out_data, 2);
    }

    #[test]
    fn fragments_fit_the_mtu_and_reassemble_in_any_order() {
        let mut tx = link_of(Some(1500));
        let mut c = FaceCounters::default();
        let mut q = OutQueue::new(64);
        let packet = data("/big", 8000);
        let h = LpHeader {
            pit_token: Some(PitToken::from_u64(9)),
            ..LpHeader::default()
        };
        assert!(tx.send_packet(h, packet.clone(), &mut c, &mut q));
        let frames: Vec<Bytes> = q.frames().0.iter().map(OutFrame::to_bytes).collect();
        assert_eq!(frames.len(), 6);
        assert!(frames.iter().all(|f| f.len() <= 1500));
        assert_eq!(c.n_out_data, 1);
        let mut rx_link = link_of(Some(1500));
        let mut rc = FaceCounters::default();
        let mut out = Vec::new();
        for i in [3, 5, 0, 4, 1, 2] {
            assert!(out.is_empty());
            let now = Instant::now();
            rx_link.receive(
                FaceId(1),
                Endpoint::Peer,
                frames[i].clone(),
                0,
                now,
                &mut rc,
                &mut out,
            );
        }
        let RxPacket::Data(d) = &out[0].packet else {
            panic!("not Data")
        };
        assert_eq!(d.wire(), &packet);
        assert_eq!(out[0].pit_token, Some(PitToken::from_u64(9)));
        assert_eq!(rc.n_in_data, 1);
    }

    #[test]
    fn a_packet_says_which_buffer_it_is_alone_in_unless_reassembled() {
        let mut link = link_of(Some(1500));
        let mut r = Reassembler::new(ReassemblyLimits::default());
        let (mut c, mut q, mut out) = (FaceCounters::default(), OutQueue::new(64), Vec::new());
        let now = Instant::now();
        let whole = data("/whole", 1200);
        rx_in(&mut link, &mut r, whole, 2048, now, &mut c, &mut out);
        let big = data("/big", 3000);
        assert!(link.send_packet(LpHeader::default(), big.clone(), &mut c, &mut q));
        let frames: Vec<Bytes> = q.frames().0.iter().map(OutFrame::to_bytes).collect();
        assert!(frames.len() > 1);
        for f in frames {
            rx_in(&mut link, &mut r, f, 2048, now, &mut c, &mut out);
        }
        let own: Vec<usize> = out.iter().map(|r| r.own_buffer).collect();
        assert_eq!(
            own,
            [2048, 0],
            "a reassembled packet is in no received buffer"
        );
        let RxPacket::Data(d) = &out[1].packet else {
            panic!("not Data")
        };
        assert_eq!(d.wire(), &big);
        // A fragment read alone into a reusable buffer gives it back once copied.
        assert!(link.send_packet(LpHeader::default(), big.clone(), &mut c, &mut q));
        let (frames, _) = q.frames();
        let fragment = frames[frames.len() - 2].to_bytes();
        pool::give_back(pool::copy_reusable(&vec![0u8; fragment.len()]));
        let mut buf = pool::take_reusable(fragment.len()).expect("just given back");
        buf.extend_from_slice(&fragment);
        let (at, held) = (buf.as_ptr(), buf.capacity());
        let frame = buf.freeze();
        rx_in(&mut link, &mut r, frame, held, now, &mut c, &mut out);
        let again = pool::take_reusable(fragment.len()).map(|b| b.as_ptr());
        assert_eq!(again, Some(at), "given back");
    }

    #[test]
    fn packets_over_the_limit_are_dropped_whole_or_reassembled() {
        let mut link = LinkService::new(Some(9000), Some(ReassemblyLimits::default()), 4000);
        let exactly = |len: usize| {
            let probe = data("/s", 3900).len();
            let d = data("/s", 3900 + len - probe);
            assert_eq!(d.len(), len);
            d
        };
        let (out, c) = rx(&mut link, exactly(4000));
        assert_eq!(
            (out.len(), c.n_in_too_large),
            (1, 0),
            "the limit itself passes"
        );
        let (out, c) = rx(&mut link, exactly(4001));
        assert_eq!((out.len(), c.n_in_too_large, c.n_in_data), (0, 1, 0));
        let (out, c) = rx(&mut link, lp(LpHeader::default(), exactly(4001)));
        assert_eq!((out.len(), c.n_in_too_large), (0, 1), "inside an LpPacket");

        let pieces = Fragments::new(LpHeader::default(), exactly(4001), 1500, 7).unwrap();
        let mut c = FaceCounters::default();
        let mut out = Vec::new();
        for piece in pieces {
            let now = Instant::now();
            link.receive(
                FaceId(1),
                Endpoint::Peer,
                piece.encode(),
                0,
                now,
                &mut c,
                &mut out,
            );
        }
        assert!(out.is_empty());
        assert_eq!((c.n_in_too_large, c.n_reassembly_dropped), (1, 0));
    }

    proptest::proptest! {
        /// Whatever the sizes, cuts and arrival order of two senders' fragments, no packet
        /// over the largest size comes out, every one within it whose fragments all arrived
        /// does, and each packet over it is counted once.
        #[test]
        fn no_packet_over_the_largest_size_comes_out_of_reassembly(
            sizes in proptest::collection::vec(1000usize..12_000, 1..6),
            mtu in 600usize..4000,
            order in proptest::collection::vec(proptest::num::usize::ANY, 0..64),
        ) {
            const MAX: usize = 6000;
            let mut link = LinkService::new(Some(9000), Some(ReassemblyLimits::default()), MAX);
            let mut frames = Vec::new();
            let mut lens = Vec::new();
            let mut seq = 0;
            for (k, &size) in sizes.iter().enumerate() {
                let wire = data(&format!("/p/{k}"), size);
                lens.push(wire.len());
                let from = Endpoint::Ip(std::net::SocketAddr::from(([192, 0, 2, 1 + (k % 2) as u8], 6363)));
                let pieces = Fragments::new(LpHeader::default(), wire, mtu, seq).unwrap();
                seq += pieces.len() as u64;
                frames.extend(pieces.map(|lp| (from, lp.encode())));
            }
            // Shuffle by the drawn indexes (fragments of one packet interleave with others').
            for (i, &j) in order.iter().enumerate() {
                let n = frames.len();
                frames.swap(i % n, j % n);
            }
            let mut c = FaceCounters::default();
            let mut out = Vec::new();
            let now = Instant::now();
            for (from, frame) in frames {
                link.receive(FaceId(1), from, frame, 0, now, &mut c, &mut out);
            }
            let mut delivered: Vec<usize> = out
                .iter()
                .map(|r| match &r.packet {
                    RxPacket::Data(d) => d.wire().len(),
                    other => panic!("{other:?}"),
                })
                .collect();
            delivered.sort_unstable();
            let mut fitting: Vec<usize> = lens.iter().copied().filter(|&len| len <= MAX).collect();
            fitting.sort_unstable();
            proptest::prop_assert_eq!(&delivered, &fitting);
            let over = lens.len() - fitting.len();
            proptest::prop_assert_eq!(c.n_in_too_large, over as u64);
        }
    }

    #[test]
    fn fragments_are_queued_all_or_none() {
        let mut tx = link_of(Some(1500));
        let mut c = FaceCounters::default();
        let mut q = OutQueue::new(3);
        assert!(!tx.send(PacketKind::Data, &[], data("/big", 8000), &mut c, &mut q));
        assert!(q.is_empty());
        assert_eq!(c.n_out_queue_full, 1);
        assert_eq!(c.n_out_data, 0);
    }

    #[test]
    fn stream_faces_never_fragment_or_reassemble() {
        let mut link = link_of(None);
        let mut c = FaceCounters::default();
        let mut q = OutQueue::new(8);
        assert!(link.send(PacketKind::Data, &[], data("/big", 8000), &mut c, &mut q));
        assert_eq!(q.len(), 1);
        let frag = LpPacket {
            header: LpHeader {
                sequence: Some(1),
                frag_index: Some(0),
                frag_count: Some(2),
                ..LpHeader::default()
            },
            fragment: Some(Bytes::from_static(b"xx")),
        };
        let (out, c) = rx(&mut link, frag.encode());
        assert!(out.is_empty());
        assert_eq!(c.n_reassembly_dropped, 1);
    }
}
