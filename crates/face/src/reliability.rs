//! NDNLPv2 link-layer reliability (the LpReliability feature of the NDNLPv2 specification, as
//! NFD's link service implements it), for one UDP unicast or Ethernet unicast face.
//!
//! Sender: every frame goes out with a TxSequence (fragments of one packet each their own) and
//! a Sequence, and a copy of it is kept until the peer acknowledges that TxSequence. A frame
//! is lost when a frame sent [`LOSS_THRESHOLD`] or more TxSequence numbers after it was
//! acknowledged (NFD counts three Acks of greater TxSequence), or when it waited a
//! retransmission timeout (RFC 6298's estimator over the Ack round trips: at least 200 ms,
//! 1 s before the first sample, at most 60 s); it is then sent again under a new TxSequence,
//! at most [`MAX_RETX`] times, after which its whole network packet (every fragment) is given
//! up and counted. Receiver: the TxSequence of every frame with a Fragment is acknowledged,
//! piggybacked on outgoing frames (Ack fields go before TxSequence) or, after
//! [`ACK_DELAY`], in LpPackets of Acks alone, which the specification allows; a frame whose
//! Sequence was already received (a retransmission whose Ack was lost) is acknowledged and
//! dropped.
//!
//! Bounds (a peer is hostile): the frames kept for retransmission are at most
//! [`ReliabilityLimits::max_frames`] TxSequence numbers in flight (acknowledged ones between
//! unacknowledged ones included) and [`ReliabilityLimits::max_bytes`] octets of copies; a
//! packet that does not fit gives up the oldest first. Acks waiting to be sent are at most
//! [`MAX_QUEUED_ACKS`] (the oldest is forgotten: its frame will be sent again and
//! acknowledged then). Duplicates are found in a window of the last [`SEQ_WINDOW`] Sequence
//! numbers (1 KiB). An Ack of a TxSequence that is not waiting is ignored, so junk Acks cost
//! a lookup each and cannot add retransmissions: every frame is sent at most 1 + [`MAX_RETX`]
//! times.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use bytes::Bytes;
use kite_link::rtt::{RttConfig, RttEstimator, Smoothing};
use kite_packet::encode::{put_header, put_nonneg_tlv, put_u64_tlv, tlv_len};
use kite_packet::pool::Kept;
use kite_packet::tlv_type;
use kite_packet::varnum::read_varnum;
use smallvec::SmallVec;

use crate::queue::{OutFrame, OutQueue, INLINE_HEAD};
use kite_link::FaceCounters;

/// Retransmissions of a frame before its packet is given up (NFD's default).
pub const MAX_RETX: u8 = 3;
/// How far past a frame's TxSequence an acknowledged one shows it lost (NFD's threshold of
/// three later Acks, without counting Acks per frame).
pub const LOSS_THRESHOLD: u64 = 3;
/// How long an Ack waits for an outgoing frame to ride on before it goes alone (NFD's idle
/// Ack timer).
pub const ACK_DELAY: Duration = Duration::from_millis(5);
/// Acks waiting to be sent, at most, per face.
pub const MAX_QUEUED_ACKS: usize = 1024;
/// Acks in one LpPacket of Acks alone, at most (≈3 KiB).
const ACKS_PER_FRAME: usize = 256;
/// Sequence numbers the duplicate check remembers.
pub const SEQ_WINDOW: u64 = 8192;
/// Octets of a Sequence field (1-octet TLV-TYPE, an 8-octet number).
const SEQ_FIELD: usize = 1 + 1 + 8;
/// Octets of a TxSequence or Ack field (3-octet TLV-TYPE, an 8-octet number).
const U64_FIELD: usize = 3 + 1 + 8;
/// Worst-case octets of the LpPacket, Sequence, FragIndex, FragCount, TxSequence and Fragment
/// headers around a fragment's payload (an MTU below 2^16).
const OVERHEAD: usize = 4 + SEQ_FIELD + 4 + 4 + U64_FIELD + 4;

/// Default [`ReliabilityLimits::max_frames`].
pub const DEFAULT_MAX_FRAMES: usize = 4096;
/// Default [`ReliabilityLimits::max_bytes`]: 4 MiB.
pub const DEFAULT_MAX_BYTES: usize = 4 << 20;

/// Bounds of one face's store of frames waiting for their Ack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReliabilityLimits {
    /// TxSequence numbers in flight, from the oldest unacknowledged to the newest sent.
    pub max_frames: usize,
    /// Octets of frame copies kept (headers and payloads).
    pub max_bytes: usize,
}

impl Default for ReliabilityLimits {
    fn default() -> Self {
        ReliabilityLimits {
            max_frames: DEFAULT_MAX_FRAMES,
            max_bytes: DEFAULT_MAX_BYTES,
        }
    }
}

/// A frame kept until its Ack arrives.
#[derive(Debug, Default)]
struct Slot {
    /// Which network packet it is (part of).
    packet: u64,
    /// Encoded header fields that go before the Acks: Sequence, FragIndex and FragCount, and
    /// the packet's own (PitToken, Nack, CongestionMark...) on its first fragment.
    fields: SmallVec<[u8; 48]>,
    /// The fragment (a slice of a copy of the packet).
    payload: Bytes,
    sent: Option<Instant>,
    retx: u8,
    live: bool,
}

impl Slot {
    fn octets(&self) -> usize {
        self.fields.len() + self.payload.len()
    }
}

/// The retransmission timeout: RFC 6298's, with NFD's bounds (1 s before a sample, within
/// [200 ms, 60 s]).
const RTT: RttConfig = RttConfig {
    initial: Duration::from_secs(1),
    min: Duration::from_millis(200),
    max: Duration::from_secs(60),
    granularity: Duration::ZERO,
    smoothing: Smoothing::Combined,
};

/// Which of the last [`SEQ_WINDOW`] Sequence numbers were received.
#[derive(Debug)]
struct SeqWindow {
    top: Option<u64>,
    bits: Box<[u64; (SEQ_WINDOW / 64) as usize]>,
}

impl SeqWindow {
    fn new() -> Self {
        SeqWindow {
            top: None,
            bits: Box::new([0; (SEQ_WINDOW / 64) as usize]),
        }
    }

    fn bit(seq: u64) -> (usize, u64) {
        let i = seq % SEQ_WINDOW;
        ((i / 64) as usize, 1 << (i % 64))
    }

    /// Clears `count` positions from `start` on, a word at a time.
    fn clear(&mut self, mut start: u64, mut count: u64) {
        while count > 0 {
            let i = start % SEQ_WINDOW;
            let (word, bit) = ((i / 64) as usize, i % 64);
            let n = (64 - bit).min(count);
            let mask = if n == 64 {
                !0
            } else {
                ((1u64 << n) - 1) << bit
            };
            self.bits[word] &= !mask;
            start = start.wrapping_add(n);
            count -= n;
        }
    }

    /// Records `seq`; `true` when it was already recorded. A number older than the window is
    /// let through (it cannot be told apart).
    fn duplicate(&mut self, seq: u64) -> bool {
        let Some(top) = self.top else {
            self.top = Some(seq);
            let (w, m) = Self::bit(seq);
            self.bits[w] |= m;
            return false;
        };
        let ahead = seq.wrapping_sub(top);
        if ahead != 0 && ahead < 1 << 63 {
            self.clear(top.wrapping_add(1), ahead.min(SEQ_WINDOW));
            self.top = Some(seq);
        } else if top.wrapping_sub(seq) >= SEQ_WINDOW {
            return false;
        }
        let (w, m) = Self::bit(seq);
        let seen = self.bits[w] & m != 0;
        self.bits[w] |= m;
        seen
    }
}

/// The reliability state of one face: its unacknowledged frames, its Acks to send and the
/// Sequence numbers it received.
#[derive(Debug)]
pub struct Reliability {
    limits: ReliabilityLimits,
    /// Frames by TxSequence from `front_tx` on; acknowledged ones stay as dead slots until
    /// every older one is gone.
    slots: VecDeque<Slot>,
    front_tx: u64,
    live_octets: usize,
    largest_acked: Option<u64>,
    /// An Ack arrived: look for frames it shows lost.
    check_losses: bool,
    rtt: RttEstimator,
    next_packet: u64,
    acks: VecDeque<u64>,
    ack_due: Option<Instant>,
    seen: SeqWindow,
    scratch: Vec<u8>,
}

impl Reliability {
    /// Empty state within `limits`.
    pub fn new(limits: ReliabilityLimits) -> Self {
        Reliability {
            limits,
            slots: VecDeque::new(),
            front_tx: 0,
            live_octets: 0,
            largest_acked: None,
            check_losses: false,
            rtt: RttEstimator::new(RTT),
            next_packet: 0,
            acks: VecDeque::new(),
            ack_due: None,
            seen: SeqWindow::new(),
            scratch: Vec::new(),
        }
    }

    /// Frames waiting for their Ack.
    pub fn unacked_frames(&self) -> usize {
        self.slots.iter().filter(|s| s.live).count()
    }

    /// Octets of frame copies kept.
    pub fn unacked_octets(&self) -> usize {
        self.live_octets
    }

    /// TxSequence numbers in flight (acknowledged ones behind an older unacknowledged one
    /// included): what [`ReliabilityLimits::max_frames`] bounds.
    pub fn in_flight(&self) -> usize {
        self.slots.len()
    }

    /// Acks waiting to be sent.
    pub fn queued_acks(&self) -> usize {
        self.acks.len()
    }

    /// The current retransmission timeout.
    pub fn rto(&self) -> Duration {
        self.rtt.rto()
    }

    /// When [`Reliability::step`] has work: an Ack to send, a frame's timeout, losses to
    /// look for.
    pub fn due(&self) -> Option<Instant> {
        let sent = self.slots.front().and_then(|s| s.sent);
        if let (true, Some(sent)) = (self.check_losses, sent) {
            return Some(sent); // in the past: now
        }
        match (sent.map(|t| t + self.rtt.rto()), self.ack_due) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Handles the reliability fields of a received frame: its Acks, and its TxSequence to
    /// acknowledge. `false`: the frame repeats a Sequence already received, drop it.
    pub fn on_receive(
        &mut self,
        sequence: Option<u64>,
        tx_sequence: Option<u64>,
        acks: &[u64],
        has_fragment: bool,
        now: Instant,
        c: &mut FaceCounters,
    ) -> bool {
        for &a in acks {
            c.n_lp_acks_received += 1;
            self.on_ack(a, now);
        }
        self.pop_dead();
        let (Some(tx), true) = (tx_sequence, has_fragment) else {
            return true;
        };
        if self.acks.len() >= MAX_QUEUED_ACKS {
            self.acks.pop_front();
        }
        self.acks.push_back(tx);
        let due = if self.acks.len() >= ACKS_PER_FRAME {
            now
        } else {
            now + ACK_DELAY
        };
        self.ack_due = Some(self.ack_due.map_or(due, |d| d.min(due)));
        match sequence {
            Some(seq) if self.seen.duplicate(seq) => {
                c.n_lp_duplicates += 1;
                false
            }
            _ => true,
        }
    }

    fn on_ack(&mut self, tx: u64, now: Instant) {
        let Some(i) = tx.checked_sub(self.front_tx) else {
            return;
        };
        let Some(slot) = usize::try_from(i).ok().and_then(|i| self.slots.get_mut(i)) else {
            return;
        };
        if !slot.live {
            return;
        }
        if let (0, Some(sent)) = (slot.retx, slot.sent) {
            self.rtt.add_sample(now.saturating_duration_since(sent));
        }
        self.live_octets -= slot.octets();
        *slot = Slot::default();
        self.largest_acked = Some(self.largest_acked.map_or(tx, |l| l.max(tx)));
        self.check_losses = true;
    }

    /// Drops the dead slots at the front.
    fn pop_dead(&mut self) {
        while self.slots.front().is_some_and(|s| !s.live) {
            self.slots.pop_front();
            self.front_tx += 1;
        }
    }

    fn next_tx(&self) -> u64 {
        self.front_tx + self.slots.len() as u64
    }

    /// Sends one network packet (`fields`: its encoded LP header fields, all of types below
    /// Ack; `payload`: the packet) reliably, cut to `mtu`, numbering its frames' Sequence
    /// from `next_seq`. All its frames are queued or none; `false`: dropped and counted.
    #[allow(clippy::too_many_arguments)]
    pub fn send(
        &mut self,
        fields: &[u8],
        payload: &[u8],
        mtu: usize,
        next_seq: &mut u64,
        now: Instant,
        c: &mut FaceCounters,
        q: &mut OutQueue,
    ) -> bool {
        let whole = lp_len(
            SEQ_FIELD + fields.len() + U64_FIELD + tlv_len(tlv_type::FRAGMENT, payload.len()),
        );
        let (count, first_room, room) = if whole <= mtu {
            (1, payload.len(), payload.len())
        } else {
            let first_room = mtu.saturating_sub(OVERHEAD + fields.len());
            let room = mtu.saturating_sub(OVERHEAD);
            if first_room == 0 {
                c.n_out_too_large += 1;
                return false;
            }
            let count = 1 + payload.len().saturating_sub(first_room).div_ceil(room);
            (count, first_room, room)
        };
        let octets = payload.len() + count * 48 + fields.len();
        if count > usize::from(u16::MAX)
            || octets > self.limits.max_bytes
            || count > self.limits.max_frames
        {
            c.n_out_too_large += 1;
            return false;
        }
        if count > q.room() {
            c.n_out_queue_full += 1;
            return false;
        }
        // Room in the store: the oldest packets are given up for this one.
        while self.slots.len() + count > self.limits.max_frames
            || self.live_octets + octets > self.limits.max_bytes
        {
            let Some(front) = self.slots.front() else {
                break;
            };
            let packet = front.packet;
            self.give_up(packet, c);
        }
        let copy = Kept::new(payload).into_bytes();
        let packet = self.next_packet;
        self.next_packet += 1;
        let mut start = 0;
        for index in 0..count {
            let end = payload
                .len()
                .min(start + if index == 0 { first_room } else { room });
            let f = &mut self.scratch;
            f.clear();
            put_u64_tlv(f, tlv_type::SEQUENCE, *next_seq);
            *next_seq = next_seq.wrapping_add(1);
            if count > 1 {
                put_nonneg_tlv(f, tlv_type::FRAG_INDEX, index as u64);
                put_nonneg_tlv(f, tlv_type::FRAG_COUNT, count as u64);
            }
            if index == 0 {
                f.extend_from_slice(fields);
            }
            let slot = Slot {
                packet,
                fields: SmallVec::from_slice(f),
                payload: copy.slice(start..end),
                sent: Some(now),
                retx: 0,
                live: true,
            };
            start = end;
            self.live_octets += slot.octets();
            self.slots.push_back(slot);
            let tx = self.next_tx() - 1;
            self.transmit(tx, mtu, c, q);
        }
        true
    }

    /// Queues the frame of TxSequence `tx` with as many Acks as fit.
    fn transmit(&mut self, tx: u64, mtu: usize, c: &mut FaceCounters, q: &mut OutQueue) {
        let slot = &self.slots[(tx - self.front_tx) as usize];
        let frag = tlv_len(tlv_type::FRAGMENT, slot.payload.len());
        let base = slot.fields.len() + U64_FIELD;
        // Acks ride along while the frame fits the MTU and its header stays inline (at most
        // 4 octets each of LpPacket and Fragment TLV-TYPE and TLV-LENGTH).
        let mut n = self
            .acks
            .len()
            .min(INLINE_HEAD.saturating_sub(8 + base) / U64_FIELD);
        while n > 0 && lp_len(base + n * U64_FIELD + frag) > mtu {
            n -= 1;
        }
        let head = &mut self.scratch;
        head.clear();
        put_header(head, tlv_type::LP_PACKET, base + n * U64_FIELD + frag);
        head.extend_from_slice(&slot.fields);
        for &a in self.acks.iter().take(n) {
            put_u64_tlv(head, tlv_type::ACK, a);
        }
        put_u64_tlv(head, tlv_type::TX_SEQUENCE, tx);
        put_header(head, tlv_type::FRAGMENT, slot.payload.len());
        let frame = OutFrame {
            head: SmallVec::from_slice(head),
            body: slot.payload.clone(),
        };
        if q.push(frame) {
            self.acks.drain(..n);
            c.n_lp_acks_sent += n as u64;
            if self.acks.is_empty() {
                self.ack_due = None;
            }
        } else {
            c.n_out_queue_full += 1;
        }
    }

    /// Gives up every frame of network packet `packet` (counted once).
    fn give_up(&mut self, packet: u64, c: &mut FaceCounters) {
        for s in self
            .slots
            .iter_mut()
            .filter(|s| s.live && s.packet == packet)
        {
            self.live_octets -= s.octets();
            *s = Slot::default();
        }
        c.n_lp_given_up += 1;
        self.pop_dead();
    }

    /// The front frame is lost: send it again under a new TxSequence, or give its packet up
    /// after [`MAX_RETX`] retransmissions.
    fn lose_front(&mut self, now: Instant, mtu: usize, c: &mut FaceCounters, q: &mut OutQueue) {
        let Some(front) = self.slots.front_mut() else {
            return;
        };
        if front.retx >= MAX_RETX {
            let packet = front.packet;
            self.give_up(packet, c);
            return;
        }
        let again = Slot {
            packet: front.packet,
            fields: core::mem::take(&mut front.fields),
            payload: core::mem::take(&mut front.payload),
            sent: Some(now),
            retx: front.retx + 1,
            live: true,
        };
        front.live = false;
        self.pop_dead();
        self.slots.push_back(again);
        c.n_lp_retransmitted += 1;
        let tx = self.next_tx() - 1;
        self.transmit(tx, mtu, c, q);
    }

    /// Does what is due at `now`: resends frames found lost (by later Acks or by their
    /// timeout) and sends the Acks that waited [`ACK_DELAY`] in LpPackets of their own.
    pub fn step(&mut self, now: Instant, mtu: usize, c: &mut FaceCounters, q: &mut OutQueue) {
        self.pop_dead();
        if core::mem::take(&mut self.check_losses) {
            if let Some(largest) = self.largest_acked {
                // Frames are in TxSequence order and a resent one goes behind the largest.
                while self.front_tx + LOSS_THRESHOLD <= largest && !self.slots.is_empty() {
                    self.lose_front(now, mtu, c, q);
                }
            }
        }
        let rto = self.rtt.rto();
        while self
            .slots
            .front()
            .and_then(|s| s.sent)
            .is_some_and(|t| t + rto <= now)
        {
            self.lose_front(now, mtu, c, q);
        }
        if self.ack_due.is_some_and(|d| d <= now) {
            self.send_acks(mtu, c, q);
        }
    }

    /// Queues LpPackets of Acks alone until no Ack waits (or the queue is full).
    fn send_acks(&mut self, mtu: usize, c: &mut FaceCounters, q: &mut OutQueue) {
        let per_frame = ACKS_PER_FRAME.min(mtu.saturating_sub(8) / U64_FIELD).max(1);
        while !self.acks.is_empty() {
            let n = self.acks.len().min(per_frame);
            self.scratch.clear();
            put_header(&mut self.scratch, tlv_type::LP_PACKET, n * U64_FIELD);
            for a in self.acks.drain(..n) {
                put_u64_tlv(&mut self.scratch, tlv_type::ACK, a);
            }
            let frame = OutFrame {
                head: SmallVec::from_slice(&self.scratch),
                body: Bytes::new(),
            };
            if !q.push(frame) {
                c.n_out_queue_full += 1;
                break;
            }
            c.n_lp_acks_sent += n as u64;
        }
        self.acks.clear();
        self.ack_due = None;
    }
}

/// Octets of an LpPacket whose value is `value_len` octets.
fn lp_len(value_len: usize) -> usize {
    tlv_len(tlv_type::LP_PACKET, value_len)
}

/// The LP header fields and the network packet of a frame given as link-header octets and
/// the packet's octets (as the forwarder hands them over: `head` is empty, or an LpPacket's
/// TLV-TYPE and TLV-LENGTH, its fields and the Fragment's TLV-TYPE and TLV-LENGTH), when its
/// fields are all ones that go before Ack (PitToken, Nack, IncomingFaceId, NextHopFaceId,
/// CachePolicy, CongestionMark) and it is not already a fragment. `None` otherwise.
pub fn split_frame<'a>(head: &'a [u8], body: &'a [u8]) -> Option<(&'a [u8], &'a [u8])> {
    let (frame, body_len) = if head.is_empty() {
        match body.first().map(|&t| u64::from(t)) {
            Some(tlv_type::INTEREST | tlv_type::DATA) => return Some((&[], body)),
            Some(tlv_type::LP_PACKET) => (body, 0),
            _ => return None,
        }
    } else {
        (head, body.len())
    };
    let (typ, n) = read_varnum(frame).ok()?;
    let (len, m) = read_varnum(&frame[n..]).ok()?;
    if typ != tlv_type::LP_PACKET || len != (frame.len() - n - m + body_len) as u64 {
        return None;
    }
    let value = &frame[n + m..];
    let mut at = 0;
    loop {
        let (typ, n) = read_varnum(value.get(at..)?).ok()?;
        let (len, m) = read_varnum(value.get(at + n..)?).ok()?;
        let len = usize::try_from(len).ok()?;
        let start = at + n + m;
        if typ == tlv_type::FRAGMENT {
            let fields = &value[..at];
            return if head.is_empty() {
                (start + len == value.len() && len > 0).then(|| (fields, &value[start..]))
            } else {
                (start == value.len() && len == body.len()).then_some((fields, body))
            };
        }
        if !matches!(
            typ,
            tlv_type::PIT_TOKEN
                | tlv_type::NACK
                | tlv_type::INCOMING_FACE_ID
                | tlv_type::NEXT_HOP_FACE_ID
                | tlv_type::CACHE_POLICY
                | tlv_type::CONGESTION_MARK
        ) {
            return None;
        }
        at = start.checked_add(len)?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_duplicate_window_follows_the_newest_sequence() {
        let mut w = SeqWindow::new();
        assert!(!w.duplicate(u64::MAX - 1));
        assert!(!w.duplicate(u64::MAX));
        assert!(!w.duplicate(0), "wraps");
        assert!(w.duplicate(u64::MAX));
        assert!(!w.duplicate(100_000));
        assert!(!w.duplicate(0), "older than the window: let through");
        assert!(!w.duplicate(100_000 - SEQ_WINDOW + 1));
        assert!(w.duplicate(100_000 - SEQ_WINDOW + 1));
        assert!(!w.duplicate(100_000 + 70));
        assert!(!w.duplicate(100_000 + 7), "cleared when the window moved");
    }
}
