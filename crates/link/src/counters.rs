//! The counters a face and a datagram channel keep, defined once: the faces update these very
//! structs and `kite-mgmt-proto`'s FaceStatus and ChannelStatus carry them, so a new counter
//! is one line here (with its TLV-TYPE in [`crate::tlv`]) and nowhere else.
//!
//! Plain integers: a face or channel is owned by one thread, which alone updates them; a
//! management reader gets a copy from that thread.

use crate::tlv;

/// Defines a set of `u64` counters: the struct and, from the same list, each counter's
/// TLV-TYPE in its dataset (in the order the list gives), so that encoding and decoding walk
/// the fields the struct has.
macro_rules! counter_set {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $( $(#[$fmeta:meta])* $field:ident = $typ:path, )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
        pub struct $name {
            $( $(#[$fmeta])* pub $field: u64, )*
        }

        impl $name {
            /// Each counter's TLV-TYPE, in the order the fields are declared.
            pub const TYPES: &'static [u64] = &[$($typ),*];

            /// The counter carried under TLV-TYPE `typ`, if it is one of these.
            pub fn get(&self, typ: u64) -> Option<u64> {
                match typ {
                    $(x if x == $typ => Some(self.$field),)*
                    _ => None,
                }
            }

            /// The counter carried under TLV-TYPE `typ`, to set while decoding.
            pub fn get_mut(&mut self, typ: u64) -> Option<&mut u64> {
                match typ {
                    $(x if x == $typ => Some(&mut self.$field),)*
                    _ => None,
                }
            }
        }
    };
}

counter_set! {
    /// Counters of one face: NFD's FaceStatus counters (NFD's order), then Kite's drop
    /// reasons and LpReliability counters (ascending TLV-TYPE; zero when absent, as from NFD).
    pub struct FaceCounters {
        /// Interests received (NFD NInInterests).
        n_in_interests = tlv::N_IN_INTERESTS,
        /// Data received (NInData).
        n_in_data = tlv::N_IN_DATA,
        /// Nacks received (NInNacks).
        n_in_nacks = tlv::N_IN_NACKS,
        /// Interests sent (NOutInterests).
        n_out_interests = tlv::N_OUT_INTERESTS,
        /// Data sent (NOutData).
        n_out_data = tlv::N_OUT_DATA,
        /// Nacks sent (NOutNacks).
        n_out_nacks = tlv::N_OUT_NACKS,
        /// Link-layer octets received (NInBytes).
        n_in_bytes = tlv::N_IN_BYTES,
        /// Link-layer octets written to the socket (NOutBytes).
        n_out_bytes = tlv::N_OUT_BYTES,
        /// Frames dropped because the LpPacket or the packet in it did not decode.
        n_in_malformed = tlv::KITE_N_IN_MALFORMED,
        /// Packets dropped for carrying an LP field they may not (NextHopFaceId without local
        /// fields, NextHopFaceId on Data or Nack, Nack on a Data).
        n_in_lp_dropped = tlv::KITE_N_IN_LP_DROPPED,
        /// Fragments dropped by reassembly (bounds, duplicates, inconsistent FragCount,
        /// timeout).
        n_reassembly_dropped = tlv::KITE_N_REASSEMBLY_DROPPED,
        /// Stream elements that broke framing (too long or malformed TLV header): each closes
        /// the face.
        n_framing_errors = tlv::KITE_N_FRAMING_ERRORS,
        /// Frames dropped because the output queue was full, or the frames waiting in all
        /// output queues held their octet budget.
        n_out_queue_full = tlv::KITE_N_OUT_QUEUE_FULL,
        /// Frames dropped because they could not be fragmented to the MTU.
        n_out_too_large = tlv::KITE_N_OUT_TOO_LARGE,
        /// Packets received whole but dropped because the forwarding thread's input ring was
        /// full (the forwarder is overloaded; counted against the face they came from).
        n_in_queue_full = tlv::KITE_N_IN_QUEUE_FULL,
        /// Frames dropped unsent because the face's link was down (an Ethernet interface that
        /// is down or has no carrier).
        n_out_link_down = tlv::KITE_N_OUT_LINK_DOWN,
        /// Packets received whole (in one frame or reassembled) but dropped because they
        /// exceed the largest packet the face accepts (its configured max_packet_size).
        n_in_too_large = tlv::KITE_N_IN_TOO_LARGE,
        /// Frames sent again because no NDNLPv2 Ack came for them in time (LpReliability).
        n_lp_retransmitted = tlv::KITE_N_LP_RETRANSMITTED,
        /// Network packets given up after their frames' retransmissions ran out, or to make
        /// room in the store of unacknowledged frames (LpReliability).
        n_lp_given_up = tlv::KITE_N_LP_GIVEN_UP,
        /// Ack fields sent (piggybacked or in LpPackets of Acks alone).
        n_lp_acks_sent = tlv::KITE_N_LP_ACKS_SENT,
        /// Ack fields received on a face with LpReliability on (junk ones included).
        n_lp_acks_received = tlv::KITE_N_LP_ACKS_RECEIVED,
        /// Frames dropped because their Sequence was already received (a retransmission
        /// whose Ack was lost).
        n_lp_duplicates = tlv::KITE_N_LP_DUPLICATES,
        /// Frames dropped because the socket refused them for a reason that may pass (an
        /// nftables or iptables output rule: EPERM; no buffer space: ENOBUFS; an unreachable
        /// destination): the face stays and sends the next frame.
        n_out_send_failed = tlv::KITE_N_OUT_SEND_FAILED,
        /// Nacks not sent because the face had been sent its rate of Nacks already (1,024 at
        /// once, 1,024 a second after that): each is the answer to an Interest the forwarder
        /// refused, and a face that floods refused Interests is not answered each time.
        n_out_nack_limited = tlv::KITE_N_OUT_NACK_LIMITED,
    }
}

/// One of a face's drop counters, as everything that shows it names it.
#[derive(Debug, Clone, Copy)]
pub struct FaceDrop {
    /// Its one name: the `reason` of `kite face show`, of the `kite_face_drops_total` metric
    /// and of the I/O thread's drop log lines; with `_` for `-`, its key in `kite face list
    /// --json`.
    pub name: &'static str,
    /// What it counts (the drop log line's message).
    pub what: &'static str,
    /// Whether its log lines are warnings: something for an operator to act on (overload,
    /// a socket refusing frames) rather than a broken or hostile peer.
    pub warns: bool,
    /// Its value in a face's counters.
    pub count: fn(&FaceCounters) -> u64,
}

/// Every drop counter of a face, in the order [`FaceCounters::drops_by_reason`] gives them.
pub const FACE_DROPS: [FaceDrop; 11] = [
    FaceDrop {
        name: "in-queue-full",
        what: "packets dropped: a forwarding thread's input queue was full or their face is restrained",
        warns: true,
        count: |c| c.n_in_queue_full,
    },
    FaceDrop {
        name: "out-queue-full",
        what: "frames dropped: a face's output queue was full (or all queues' octet budget)",
        warns: true,
        count: |c| c.n_out_queue_full,
    },
    FaceDrop {
        name: "in-malformed",
        what: "frames dropped: they did not decode",
        warns: false,
        count: |c| c.n_in_malformed,
    },
    FaceDrop {
        name: "in-lp-dropped",
        what: "packets dropped: an NDNLPv2 field they may not carry",
        warns: false,
        count: |c| c.n_in_lp_dropped,
    },
    FaceDrop {
        name: "reassembly-dropped",
        what: "fragments dropped by reassembly (bounds, duplicates, timeout)",
        warns: false,
        count: |c| c.n_reassembly_dropped,
    },
    FaceDrop {
        name: "framing-errors",
        what: "stream faces closed: an element broke the TLV framing",
        warns: false,
        count: |c| c.n_framing_errors,
    },
    FaceDrop {
        name: "in-too-large",
        what: "packets dropped: larger than max_packet_size",
        warns: false,
        count: |c| c.n_in_too_large,
    },
    FaceDrop {
        name: "out-too-large",
        what: "frames dropped: could not be fragmented to the MTU",
        warns: false,
        count: |c| c.n_out_too_large,
    },
    FaceDrop {
        name: "out-link-down",
        what: "frames dropped: the face's link is down",
        warns: false,
        count: |c| c.n_out_link_down,
    },
    FaceDrop {
        name: "out-send-failed",
        what: "frames dropped: the socket refused them (a firewall rule, no buffer space, an unreachable destination)",
        warns: true,
        count: |c| c.n_out_send_failed,
    },
    FaceDrop {
        name: "out-nack-limited",
        what: "Nacks not sent: the face had its rate of Nacks (its Interests keep being refused)",
        warns: true,
        count: |c| c.n_out_nack_limited,
    },
];

impl FaceCounters {
    /// Each drop counter with its name ([`FACE_DROPS`]).
    pub fn drops_by_reason(&self) -> [(&'static str, u64); 11] {
        FACE_DROPS.map(|d| (d.name, (d.count)(self)))
    }
}

counter_set! {
    /// Counters of a datagram channel (UDP, Ethernet): what it read but could hand to no face,
    /// and what waited in its socket (Kite's extension of ChannelStatus; zero when absent, as
    /// from NFD). A drop it can pin on an existing face is counted on that face too.
    pub struct ChannelCounters {
        /// Datagrams longer than a receive slot (the largest frame, or the interface MTU).
        n_truncated = tlv::KITE_N_CHANNEL_TRUNCATED,
        /// Frames that did not parse: a link-layer envelope (a short Ethernet header, a sender
        /// address of an unknown family), or, from a sender with no face, the NDN packet (an
        /// LpPacket, Interest or Data that does not decode makes no face).
        n_malformed = tlv::KITE_N_CHANNEL_MALFORMED,
        /// Frames for no face here: another host's, another group's, this host's own.
        n_foreign = tlv::KITE_N_CHANNEL_FOREIGN,
        /// Frames whose face does not exist and is not made on demand (a frame to NDN's group
        /// when the multicast face is gone).
        n_no_face = tlv::KITE_N_CHANNEL_NO_FACE,
        /// Frames the kernel dropped because the socket's receive buffer was full (Ethernet
        /// channels, from PACKET_STATISTICS, and XDP_STATISTICS on AF_XDP; read once a
        /// second), and frames another I/O thread read for the channel that found its ring
        /// to the channel's own thread full (AF_XDP steering).
        n_socket_drops = tlv::KITE_N_CHANNEL_SOCKET_DROPS,
        /// Frames read after waiting at least 5 ms (CoDel's target delay) in the socket's
        /// receive queue (Ethernet channels, from the kernel's receive times): a backlog the
        /// I/O thread did not keep up with, which lengthens every round trip through it. Not
        /// a drop: the frames were read, and their wait counted for CoDel.
        n_delayed = tlv::KITE_N_CHANNEL_DELAYED,
    }
}

impl ChannelCounters {
    /// Each drop counter with a short name (as `kite channel list --json` names them; every
    /// counter but [`ChannelCounters::n_delayed`], which counts no drop).
    pub fn by_reason(&self) -> [(&'static str, u64); 5] {
        [
            ("truncated", self.n_truncated),
            ("malformed", self.n_malformed),
            ("foreign", self.n_foreign),
            ("no_face", self.n_no_face),
            ("socket", self.n_socket_drops),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_counter_has_its_own_type_and_field() {
        for types in [FaceCounters::TYPES, ChannelCounters::TYPES] {
            for (i, a) in types.iter().enumerate() {
                assert!(!types[i + 1..].contains(a), "type {a:#x} listed twice");
            }
        }
        let mut c = FaceCounters::default();
        for (i, &typ) in FaceCounters::TYPES.iter().enumerate() {
            *c.get_mut(typ).unwrap() = i as u64 + 1;
        }
        let values: Vec<u64> = FaceCounters::TYPES
            .iter()
            .map(|&x| c.get(x).unwrap())
            .collect();
        assert_eq!(
            values,
            (1..=FaceCounters::TYPES.len() as u64).collect::<Vec<_>>()
        );
        assert_eq!(c.n_in_interests, 1);
        assert_eq!(c.n_out_nack_limited, FaceCounters::TYPES.len() as u64);
        assert_eq!(c.get(108), None, "FaceStatus Flags is no counter");
    }

    #[test]
    fn every_drop_reads_its_own_counter_under_its_own_name() {
        let mut c = FaceCounters::default();
        for (i, &typ) in FaceCounters::TYPES.iter().enumerate() {
            *c.get_mut(typ).unwrap() = 1 << i;
        }
        let drops = c.drops_by_reason();
        for (i, (name, n)) in drops.iter().enumerate() {
            assert_eq!(n.count_ones(), 1, "{name}");
            assert!(
                drops[i + 1..]
                    .iter()
                    .all(|(other, m)| other != name && m != n),
                "{name} shares a name or a counter"
            );
        }
        assert_eq!(
            drops.iter().map(|(_, n)| n).sum::<u64>(),
            c.n_in_malformed
                + c.n_in_lp_dropped
                + c.n_reassembly_dropped
                + c.n_framing_errors
                + c.n_out_queue_full
                + c.n_out_too_large
                + c.n_in_queue_full
                + c.n_out_link_down
                + c.n_in_too_large
                + c.n_out_send_failed
                + c.n_out_nack_limited,
            "every drop counter, once"
        );
    }
}
