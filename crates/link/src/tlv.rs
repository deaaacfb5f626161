//! The TLV-TYPEs the face and channel [counters](crate::counters) are carried under in
//! FaceStatus and ChannelStatus (and NFD's traffic counters in ForwarderStatus), defined once
//! here and used by `kite-mgmt-proto`'s encoders and decoders.
//!
//! Kite's own numbers are even (non-critical) TLV-TYPEs outside NFD's, so NFD's clients skip
//! them: ndn-cxx stops reading after Flags, python-ndn and NDNd ignore unknown non-critical
//! elements. 0x4B10 is FaceStatus's link state (`kite-mgmt-proto`), between the two runs of
//! face counters.

// ---- NFD's counters (ndn-cxx tlv-nfd.hpp) ----

/// NInInterests.
pub const N_IN_INTERESTS: u64 = 144;
/// NInData.
pub const N_IN_DATA: u64 = 145;
/// NOutInterests.
pub const N_OUT_INTERESTS: u64 = 146;
/// NOutData.
pub const N_OUT_DATA: u64 = 147;
/// NInBytes.
pub const N_IN_BYTES: u64 = 148;
/// NOutBytes.
pub const N_OUT_BYTES: u64 = 149;
/// NInNacks.
pub const N_IN_NACKS: u64 = 151;
/// NOutNacks.
pub const N_OUT_NACKS: u64 = 152;

// ---- Kite's face counters (after FaceStatus Flags) ----

/// Frames dropped because the LpPacket or the packet in it did not decode.
pub const KITE_N_IN_MALFORMED: u64 = 0x4B00;
/// Packets dropped for an LP field they may not carry.
pub const KITE_N_IN_LP_DROPPED: u64 = 0x4B02;
/// Fragments dropped by reassembly.
pub const KITE_N_REASSEMBLY_DROPPED: u64 = 0x4B04;
/// Stream framing errors (each closes the face).
pub const KITE_N_FRAMING_ERRORS: u64 = 0x4B06;
/// Frames dropped because the output queue was full (or all queues held their octet budget).
pub const KITE_N_OUT_QUEUE_FULL: u64 = 0x4B08;
/// Frames dropped because they could not be fragmented to the MTU.
pub const KITE_N_OUT_TOO_LARGE: u64 = 0x4B0A;
/// Packets dropped because the forwarding thread's input ring was full.
pub const KITE_N_IN_QUEUE_FULL: u64 = 0x4B0C;
/// Frames dropped unsent because the face's link was down.
pub const KITE_N_OUT_LINK_DOWN: u64 = 0x4B0E;
/// Packets dropped because they exceed the largest packet accepted (whole or reassembled).
/// After the link state, so older readers that stop at the state still decode the rest.
pub const KITE_N_IN_TOO_LARGE: u64 = 0x4B20;
/// NDNLPv2 LpReliability: frames sent again for want of an Ack.
pub const KITE_N_LP_RETRANSMITTED: u64 = 0x4B22;
/// NDNLPv2 LpReliability: network packets given up (retransmissions exhausted, or no room
/// left to keep them).
pub const KITE_N_LP_GIVEN_UP: u64 = 0x4B24;
/// NDNLPv2 LpReliability: Ack fields sent.
pub const KITE_N_LP_ACKS_SENT: u64 = 0x4B26;
/// NDNLPv2 LpReliability: Ack fields received.
pub const KITE_N_LP_ACKS_RECEIVED: u64 = 0x4B28;
/// NDNLPv2 LpReliability: frames dropped as duplicates of a Sequence already received.
pub const KITE_N_LP_DUPLICATES: u64 = 0x4B2A;
/// Frames dropped because the socket refused them for a reason that may pass (a firewall
/// rule, no buffer space, an unreachable destination). After the LpReliability counters.
pub const KITE_N_OUT_SEND_FAILED: u64 = 0x4B2C;
/// Nacks not sent because the face was sent its rate of Nacks already.
pub const KITE_N_OUT_NACK_LIMITED: u64 = 0x4B2E;

// ---- Kite's channel counters (after ChannelStatus LocalUri) ----

/// Datagrams longer than a receive slot (the largest frame, or the interface MTU).
pub const KITE_N_CHANNEL_TRUNCATED: u64 = 0x4B12;
/// Frames that did not parse: the link-layer envelope, or the NDN packet of a sender with no
/// face.
pub const KITE_N_CHANNEL_MALFORMED: u64 = 0x4B14;
/// Frames for no face here (another host's or group's, this host's own).
pub const KITE_N_CHANNEL_FOREIGN: u64 = 0x4B16;
/// Frames whose face does not exist and is not made on demand.
pub const KITE_N_CHANNEL_NO_FACE: u64 = 0x4B18;
/// Frames the kernel dropped for a full socket receive buffer.
pub const KITE_N_CHANNEL_SOCKET_DROPS: u64 = 0x4B1A;
/// Frames read after waiting at least CoDel's target in the socket's receive queue.
pub const KITE_N_CHANNEL_DELAYED: u64 = 0x4B1C;

// ---- Kite's channel I/O path (after the channel counters) ----

/// How an Ethernet channel reads its interface, as text (`af_packet`, `af_xdp (…)`).
pub const KITE_CHANNEL_IO_PATH: u64 = 0x4B30;
/// Frames Kite's XDP program took as NDN's (redirected to an AF_XDP socket).
pub const KITE_N_XDP_NDN: u64 = 0x4B32;
/// Frames Kite's XDP program passed to the kernel (another EtherType).
pub const KITE_N_XDP_PASSED: u64 = 0x4B34;
/// Frames Kite's XDP program passed to the kernel as shorter than an Ethernet header.
pub const KITE_N_XDP_RUNT: u64 = 0x4B36;
/// UDP datagrams to Kite's listeners that Kite's XDP program redirected to an AF_XDP socket.
pub const KITE_N_XDP_UDP: u64 = 0x4B38;
/// The SHA-256 hash of a WebTransport channel's certificate, in hexadecimal (what a browser
/// pins with `serverCertificateHashes`).
pub const KITE_CHANNEL_CERT_SHA256: u64 = 0x4B3A;
