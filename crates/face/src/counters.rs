//! Per-face counters (NFD's FaceStatus counters and the link service's drop reasons) and
//! per-channel drop counters.
//!
//! Plain integers: a face is owned by one thread, which alone updates them; a management
//! reader gets a copy from that thread.

/// Counters of one face.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FaceCounters {
    /// Interests received (NFD NInInterests).
    pub n_in_interests: u64,
    /// Data received (NInData).
    pub n_in_data: u64,
    /// Nacks received (NInNacks).
    pub n_in_nacks: u64,
    /// Interests sent (NOutInterests).
    pub n_out_interests: u64,
    /// Data sent (NOutData).
    pub n_out_data: u64,
    /// Nacks sent (NOutNacks).
    pub n_out_nacks: u64,
    /// Link-layer octets received (NInBytes).
    pub n_in_bytes: u64,
    /// Link-layer octets written to the socket (NOutBytes).
    pub n_out_bytes: u64,
    /// Frames dropped because the LpPacket or the packet in it did not decode.
    pub n_in_malformed: u64,
    /// Packets dropped for carrying an LP field they may not (NextHopFaceId without local
    /// fields, NextHopFaceId on Data or Nack, Nack on a Data).
    pub n_in_lp_dropped: u64,
    /// Fragments dropped by reassembly (bounds, duplicates, inconsistent FragCount, timeout).
    pub n_reassembly_dropped: u64,
    /// Stream elements that broke framing (too long or malformed TLV header): each closes the
    /// face.
    pub n_framing_errors: u64,
    /// Frames dropped because the output queue was full.
    pub n_out_queue_full: u64,
    /// Frames dropped because they could not be fragmented to the MTU.
    pub n_out_too_large: u64,
    /// Packets received whole but dropped because the forwarding thread's input ring was
    /// full (the forwarder is overloaded; counted against the face they came from).
    pub n_in_queue_full: u64,
    /// Frames dropped unsent because the face's link was down (an Ethernet interface that is
    /// down or has no carrier).
    pub n_out_link_down: u64,
    /// Frames dropped because the socket refused them for a reason that may pass (an
    /// nftables or iptables output rule: EPERM; no buffer space: ENOBUFS; an unreachable
    /// destination): the face stays and sends the next frame.
    pub n_out_send_failed: u64,
    /// Packets received whole (in one frame or reassembled) but dropped because they exceed
    /// the largest packet accepted ([`crate::FaceConfig::max_packet_size`]).
    pub n_in_too_large: u64,
    /// Frames sent again because no NDNLPv2 Ack came for them in time (LpReliability).
    pub n_lp_retransmitted: u64,
    /// Network packets given up after their frames' retransmissions ran out, or to make
    /// room in the store of unacknowledged frames (LpReliability).
    pub n_lp_given_up: u64,
    /// Ack fields sent (piggybacked or in LpPackets of Acks alone).
    pub n_lp_acks_sent: u64,
    /// Ack fields received on a face with LpReliability on (junk ones included).
    pub n_lp_acks_received: u64,
    /// Frames dropped because their Sequence was already received (a retransmission whose
    /// Ack was lost).
    pub n_lp_duplicates: u64,
}

/// Counters of a datagram channel (UDP, Ethernet): what it read but could hand to no face.
/// A drop it can pin on an existing face is counted on that face too.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ChannelCounters {
    /// Datagrams longer than a receive slot (the largest frame, or the interface MTU).
    pub n_truncated: u64,
    /// Frames that did not parse: a link-layer envelope (a short Ethernet header, a sender
    /// address of an unknown family), or, from a sender with no face, the NDN packet (an
    /// LpPacket, Interest or Data that does not decode makes no face).
    pub n_malformed: u64,
    /// Frames for no face here: another host's, another group's, this host's own.
    pub n_foreign: u64,
    /// Frames whose face does not exist and is not made on demand (a frame to NDN's group
    /// when the multicast face is gone).
    pub n_no_face: u64,
    /// Frames the kernel dropped because the socket's receive buffer was full (Ethernet
    /// channels, from PACKET_STATISTICS; read once a second).
    pub n_socket_drops: u64,
}
