//! What a forwarding thread hands to the output stage: packets with their destination face,
//! the PIT token to attach, and the fields that change per hop. Encoding happens in the output
//! stage, so the forwarding thread never copies a packet.

use bytes::Bytes;
use kite_packet::{HopHeader, NackReason, OutgoingInterest, PitToken};

use crate::face::FaceId;
use crate::forwarder::{InData, InInterest};

/// One packet a forwarding thread sends: what it pushes on its output ring for the I/O thread
/// (or hands to management, for the internal face), with the face it goes out of.
#[derive(Debug, Clone)]
pub enum Out {
    /// An Interest forwarded upstream.
    Interest {
        /// Where to.
        face: FaceId,
        /// The face the Interest arrived on (what NFD reports as IncomingFaceId, and the
        /// requesting face management resolves FaceId 0 to).
        ingress: FaceId,
        /// The Interest as received (its octets are reused), with the Nonce to send (the
        /// received one, or a new one after a Nack~Duplicate) and its decremented HopLimit.
        interest: OutgoingInterest,
        /// This thread's token for the PIT entry.
        token: PitToken,
    },
    /// A Data sent downstream (or from the CS).
    Data {
        /// Where to.
        face: FaceId,
        /// The Data's octets.
        wire: Bytes,
        /// The downstream's own token, echoed.
        token: Option<PitToken>,
        /// The face the Data came from ([`FaceId::CONTENT_STORE`] for a CS hit), reported as
        /// IncomingFaceId to apps with local fields on.
        ingress: FaceId,
        /// The NDNLPv2 CongestionMark to attach (0: none).
        congestion_mark: u64,
        /// Whether it came from the Content Store (NFD reports IncomingFaceId 254 for those).
        from_cs: bool,
    },
    /// A Nack sent downstream.
    Nack {
        /// Where to.
        face: FaceId,
        /// Why.
        reason: NackReason,
        /// The Interest being refused, with the Nonce that downstream sent (a Nack carries the
        /// Interest as the downstream sent it).
        interest: OutgoingInterest,
        /// The downstream's own token, echoed.
        token: Option<PitToken>,
    },
    /// A packet for another forwarding thread, which the output stage queues on that
    /// thread's input rings (rare: boxed, so that every other packet stays small).
    Shard {
        /// The thread.
        shard: u8,
        /// The packet.
        packet: Box<ToShard>,
    },
}

/// What one forwarding thread hands another (`docs/forwarding.md`, "Shards").
#[derive(Debug, Clone)]
pub enum ToShard {
    /// A CanBePrefix Interest shorter than the dispatch prefix, on its way through the
    /// threads' CS to its own thread ([`InInterest::cs_probe`]).
    Interest(InInterest),
    /// A Data that answered a short name's Interest, for the thread of its own name to cache
    /// ([`InData::rehomed`]).
    Data(InData),
}

impl Out {
    /// Encodes the packet for its link: the NDNLPv2 header (PIT token, Nack, CongestionMark)
    /// is written into `header` (cleared first; left empty when no field is needed, so the
    /// packet travels bare), and the network-layer octets to send after it are returned. The
    /// packet itself is not copied unless a field inside it changed.
    /// With `local_fields` (a local face that enabled them), IncomingFaceId is attached to
    /// Interests and Data. `mark` (the face's own congestion) sets a CongestionMark on any
    /// packet, raising the one a Data already carries to at least 1.
    pub fn encode_frame(&self, header: &mut Vec<u8>, local_fields: bool, mark: bool) -> Bytes {
        header.clear();
        let face_mark = u64::from(mark);
        let (hop, packet) = match self {
            Out::Interest {
                interest,
                token,
                ingress,
                ..
            } => (
                HopHeader {
                    pit_token: Some(token),
                    incoming_face_id: local_fields.then_some(ingress.0),
                    congestion_mark: face_mark,
                    ..HopHeader::default()
                },
                interest.encode(),
            ),
            Out::Data {
                wire,
                token,
                congestion_mark,
                ingress,
                ..
            } => (
                HopHeader {
                    pit_token: token.as_ref(),
                    nack: None,
                    incoming_face_id: local_fields.then_some(ingress.0),
                    congestion_mark: (*congestion_mark).max(face_mark),
                },
                wire.clone(),
            ),
            Out::Nack {
                reason,
                interest,
                token,
                ..
            } => (
                HopHeader {
                    pit_token: token.as_ref(),
                    nack: Some(*reason),
                    incoming_face_id: None,
                    congestion_mark: face_mark,
                },
                interest.encode(),
            ),
            // Never sent on a link: the output stage hands it to its thread.
            Out::Shard { .. } => return Bytes::new(),
        };
        if !hop.is_empty() {
            hop.encode_header(packet.len(), header);
        }
        packet
    }

    /// The face the packet goes to; for a packet to another thread, the face it came from
    /// (whose I/O thread passes it on).
    pub fn face(&self) -> FaceId {
        match self {
            Out::Interest { face, .. } | Out::Data { face, .. } | Out::Nack { face, .. } => *face,
            Out::Shard { packet, .. } => match &**packet {
                ToShard::Interest(i) => i.face,
                ToShard::Data(d) => d.face,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kite_packet::{Interest, InterestView, LpPacket, Nack, NetPacket, Nonce};

    fn view(nonce: u32) -> InterestView {
        let mut i = Interest::new("/o".parse().unwrap());
        i.nonce = Some(Nonce::from(nonce));
        InterestView::decode(i.encode()).unwrap()
    }

    /// The Interest with nonce `nonce`, sent on unchanged.
    fn outgoing(nonce: u32) -> OutgoingInterest {
        view(nonce).outgoing(Nonce::from(nonce), None)
    }

    fn frame(out: &Out) -> Bytes {
        let mut header = Vec::new();
        let packet = out.encode_frame(&mut header, false, false);
        header.extend_from_slice(&packet);
        Bytes::from(header)
    }

    #[test]
    fn interests_carry_our_token_and_reuse_the_octets() {
        let v = view(1);
        let out = Out::Interest {
            face: FaceId(1),
            ingress: FaceId(300),
            interest: v.outgoing(Nonce::from(1), None),
            token: PitToken::from_u64(77),
        };
        let mut header = Vec::new();
        let packet = out.encode_frame(&mut header, false, false);
        assert_eq!(packet.as_ptr(), v.wire().as_ptr(), "not copied");
        let lp = LpPacket::decode(frame(&out)).unwrap();
        assert_eq!(lp.header.pit_token, Some(PitToken::from_u64(77)));
    }

    #[test]
    fn incoming_face_id_only_for_faces_with_local_fields() {
        let data = Out::Data {
            face: FaceId(300),
            wire: Bytes::from_static(&[6, 2, 7, 0]),
            token: None,
            ingress: FaceId::CONTENT_STORE,
            congestion_mark: 0,
            from_cs: true,
        };
        let interest = Out::Interest {
            face: FaceId(300),
            ingress: FaceId(256),
            interest: outgoing(1),
            token: PitToken::from_u64(1),
        };
        let incoming = |o: &Out, local: bool| {
            let mut header = Vec::new();
            let packet = o.encode_frame(&mut header, local, false);
            header.extend_from_slice(&packet);
            LpPacket::decode(Bytes::from(header))
                .unwrap()
                .header
                .incoming_face_id
        };
        assert_eq!(incoming(&data, true), Some(254));
        assert_eq!(incoming(&data, false), None);
        assert_eq!(incoming(&interest, true), Some(256));
        assert_eq!(incoming(&interest, false), None);
    }

    #[test]
    fn data_without_token_or_mark_travels_bare() {
        let wire = Bytes::from_static(&[6, 2, 7, 0]);
        let out = Out::Data {
            face: FaceId(1),
            wire: wire.clone(),
            token: None,
            ingress: FaceId(400),
            congestion_mark: 0,
            from_cs: false,
        };
        assert_eq!(frame(&out), wire);
        let marked = Out::Data {
            face: FaceId(1),
            wire,
            token: None,
            ingress: FaceId(400),
            congestion_mark: 1,
            from_cs: false,
        };
        assert_eq!(
            LpPacket::decode(frame(&marked))
                .unwrap()
                .header
                .congestion_mark,
            Some(1)
        );
    }

    #[test]
    fn a_congested_face_marks_every_kind_and_keeps_a_higher_mark() {
        let mark_of = |o: &Out, mark: bool| {
            let mut header = Vec::new();
            let packet = o.encode_frame(&mut header, false, mark);
            header.extend_from_slice(&packet);
            LpPacket::decode(Bytes::from(header))
                .unwrap()
                .header
                .congestion_mark
        };
        let interest = Out::Interest {
            face: FaceId(1),
            ingress: FaceId(2),
            interest: outgoing(1),
            token: PitToken::from_u64(1),
        };
        let data = |congestion_mark| Out::Data {
            face: FaceId(1),
            wire: Bytes::from_static(&[6, 2, 7, 0]),
            token: None,
            ingress: FaceId(2),
            congestion_mark,
            from_cs: false,
        };
        let nack = Out::Nack {
            face: FaceId(1),
            reason: NackReason::NO_ROUTE,
            interest: outgoing(1),
            token: None,
        };
        assert_eq!(mark_of(&interest, false), None);
        assert_eq!(mark_of(&interest, true), Some(1));
        assert_eq!(mark_of(&data(0), true), Some(1));
        assert_eq!(mark_of(&data(3), true), Some(3));
        assert_eq!(mark_of(&nack, false), None);
        assert_eq!(mark_of(&nack, true), Some(1));
    }

    #[test]
    fn nacks_carry_the_downstream_nonce_and_token() {
        let out = Out::Nack {
            face: FaceId(1),
            reason: NackReason::NO_ROUTE,
            interest: view(1).outgoing(Nonce::from(9), None),
            token: Some(PitToken::from_u64(5)),
        };
        let (h, p) = NetPacket::decode_frame(frame(&out)).unwrap();
        assert_eq!(h.pit_token, Some(PitToken::from_u64(5)));
        let NetPacket::Nack(Nack { reason, interest }) = p else {
            panic!("not a Nack")
        };
        assert_eq!(
            (reason, interest.nonce),
            (NackReason::NO_ROUTE, Some(Nonce::from(9)))
        );
    }
}
