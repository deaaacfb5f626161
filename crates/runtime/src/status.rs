//! What management learns from the threads and may ask of a face.

use std::time::Duration;

use bytes::Bytes;
use crossbeam_channel::Sender;
use kite_face::{FaceUri, MarkingConfig};
use kite_fw::face::{FaceId, FaceScope, LinkType};
use kite_fw::forwarder::Counters;
use kite_link::{FaceCounters, Persistency};
use kite_packet::PitToken;

/// Face properties a command may set (NFD `faces/create` and `faces/update`); `None` leaves
/// one as it is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FaceOptions {
    /// Local fields on or off (local faces only).
    pub local_fields: Option<bool>,
    /// MTU of a datagram face.
    pub mtu: Option<usize>,
    /// Congestion marking on or off.
    pub congestion_marking: Option<bool>,
    /// Base congestion marking interval.
    pub base_marking_interval: Option<Duration>,
    /// Congestion threshold, in octets.
    pub congestion_threshold: Option<usize>,
    /// NDNLPv2 LpReliability on or off (UDP and Ethernet unicast faces only).
    pub lp_reliability: Option<bool>,
}

/// What management learns about a face (NFD's FaceStatus without the counters' types).
#[derive(Debug, Clone)]
pub struct FaceStatus {
    /// Id.
    pub id: FaceId,
    /// Remote URI.
    pub remote: FaceUri,
    /// Local URI.
    pub local: FaceUri,
    /// Scope.
    pub scope: FaceScope,
    /// Persistency.
    pub persistency: Persistency,
    /// Link type.
    pub link_type: LinkType,
    /// MTU for datagram faces.
    pub mtu: Option<usize>,
    /// Whether local fields (NextHopFaceId, IncomingFaceId, CachePolicy) are on.
    pub local_fields: bool,
    /// Congestion marking of its output.
    pub marking: MarkingConfig,
    /// Whether NDNLPv2 LpReliability is on.
    pub lp_reliability: bool,
    /// Whether its link is up (false for an Ethernet face whose interface is down, and for a
    /// TCP face whose connection is lost).
    pub up: bool,
    /// Whether it is dialing its peer again (a lost TCP face, permanent or configured).
    pub reconnecting: bool,
    /// Frames waiting in its output queue (what the socket has not taken yet).
    pub out_queue: usize,
    /// Counters.
    pub counters: FaceCounters,
}

/// A face came or went (NFD's face event notifications).
#[derive(Debug, Clone)]
pub enum FaceEvent {
    /// A face was created (by a listener or a command).
    Created(FaceStatus),
    /// A face was destroyed (closed by the peer, an error, idleness or a command).
    Destroyed(FaceStatus),
    /// A face's link came back up (an Ethernet interface up and running again).
    Up(FaceStatus),
    /// A face's link went down (its Ethernet interface went down or lost its carrier).
    Down(FaceStatus),
}

/// Why a face command failed, in NFD's terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FaceCommandError {
    /// No such face (404 / 410).
    NotFound,
    /// A face for this remote exists (409), with its id.
    Exists(FaceId),
    /// The URI scheme or options are not supported (406).
    Unsupported(String),
    /// Connecting failed (504).
    ConnectFailed(String),
}

/// Where the I/O thread answers a face creation, with the tag the request carried: at once,
/// or once an outgoing connection completes, fails or times out (the I/O thread never waits
/// on the network).
pub type CreateReply = Sender<(u64, Result<FaceStatus, FaceCommandError>)>;

/// An Interest forwarded to management through the internal face, with the token to echo on
/// the answer and the face it came from (for FaceId 0 in commands).
#[derive(Debug, Clone)]
pub struct InternalInterest {
    /// The Interest's octets as forwarded, decoded once, by management, off the forwarding
    /// threads.
    pub wire: Bytes,
    /// The token to echo on the answer.
    pub token: PitToken,
    /// The face it arrived on.
    pub ingress: FaceId,
}

/// What one forwarding thread reports.
#[derive(Debug, Clone, Default)]
pub struct ThreadCounters {
    /// The pipelines' counters.
    pub forwarder: Counters,
    /// PIT entries.
    pub pit_entries: usize,
    /// CS entries.
    pub cs_entries: usize,
    /// CS capacity.
    pub cs_capacity: usize,
    /// Whether the CS admits and serves.
    pub cs_admit: bool,
    /// Whether the CS serves.
    pub cs_serve: bool,
    /// Packets CoDel marked.
    pub codel_marked: u64,
    /// Packets dropped on the way out: the I/O thread's ring was full or the face was gone.
    pub queue_dropped: u64,
    /// Packets waiting in each of its rings now.
    pub queues: QueueDepths,
}

/// Packets waiting in a forwarding thread's rings, and each ring's slots.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QueueDepths {
    /// `/localhost` Interests from local faces (management's ring).
    pub local: RingDepth,
    /// Interests.
    pub interests: RingDepth,
    /// Data.
    pub data: RingDepth,
    /// Nacks.
    pub nacks: RingDepth,
    /// Packets this thread sent toward the I/O thread's output stage.
    pub output: RingDepth,
}

/// One ring's occupancy.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RingDepth {
    /// Packets waiting.
    pub len: usize,
    /// Slots.
    pub capacity: usize,
}
