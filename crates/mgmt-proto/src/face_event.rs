//! FaceEventNotification (TLV-TYPE 192): the payload of each `/localhost/nfd/faces/events`
//! notification.

use bytes::Bytes;
use kite_packet::tlv::Element;
use kite_packet::Result;

use crate::datasets::FaceStatus;
use crate::nfd::{self as t, FaceEventKind, FacePersistency, FaceScope, LinkType};
use crate::wire::{put_nonneg, put_str, required, string, walk_strict, Tlv};

/// Field order of FaceEventNotification.
const ORDER: [u64; 8] = [
    t::FACE_EVENT_KIND,
    t::FACE_ID,
    t::URI,
    t::LOCAL_URI,
    t::FACE_SCOPE,
    t::FACE_PERSISTENCY,
    t::LINK_TYPE,
    t::FLAGS,
];

/// A face was created, destroyed, went up or down.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FaceEventNotification {
    /// FaceEventKind.
    pub kind: FaceEventKind,
    /// FaceId.
    pub face_id: u64,
    /// Uri (remote).
    pub uri: String,
    /// LocalUri.
    pub local_uri: String,
    /// FaceScope.
    pub face_scope: FaceScope,
    /// FacePersistency.
    pub face_persistency: FacePersistency,
    /// LinkType.
    pub link_type: LinkType,
    /// Flags (face flag bits).
    pub flags: u64,
}

impl FaceEventNotification {
    /// The notification of `kind` for the face `status` describes.
    pub fn for_face(kind: FaceEventKind, status: &FaceStatus) -> Self {
        FaceEventNotification {
            kind,
            face_id: status.face_id,
            uri: status.uri.clone(),
            local_uri: status.local_uri.clone(),
            face_scope: status.face_scope,
            face_persistency: status.face_persistency,
            link_type: status.link_type,
            flags: status.flags,
        }
    }
}

impl Tlv for FaceEventNotification {
    const TYPE: u64 = t::FACE_EVENT_NOTIFICATION;

    fn encode_value(&self, out: &mut Vec<u8>) {
        put_nonneg(out, t::FACE_EVENT_KIND, self.kind.0);
        put_nonneg(out, t::FACE_ID, self.face_id);
        put_str(out, t::URI, &self.uri);
        put_str(out, t::LOCAL_URI, &self.local_uri);
        put_nonneg(out, t::FACE_SCOPE, self.face_scope.0);
        put_nonneg(out, t::FACE_PERSISTENCY, self.face_persistency.0);
        put_nonneg(out, t::LINK_TYPE, self.link_type.0);
        put_nonneg(out, t::FLAGS, self.flags);
    }

    fn decode_value(_buf: &Bytes, el: &Element<'_>) -> Result<Self> {
        let (mut uri, mut local_uri) = (None, None);
        let mut n: [Option<u64>; 8] = [None; 8];
        walk_strict(el.children(), &ORDER, None, |f| {
            match f.typ {
                t::URI => uri = Some(string(f)?),
                t::LOCAL_URI => local_uri = Some(string(f)?),
                typ => {
                    let i = ORDER.iter().position(|&x| x == typ).expect("walked");
                    n[i] = Some(f.nonneg()?);
                }
            }
            Ok(())
        })?;
        let need = |i: usize| required(n[i], ORDER[i]);
        Ok(FaceEventNotification {
            kind: FaceEventKind(need(0)?),
            face_id: need(1)?,
            uri: required(uri, t::URI)?,
            local_uri: required(local_uri, t::LOCAL_URI)?,
            face_scope: FaceScope(need(4)?),
            face_persistency: FacePersistency(need(5)?),
            link_type: LinkType(need(6)?),
            flags: need(7)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kite_packet::DecodeError;

    #[test]
    fn the_live_nfd_example_round_trips_with_exact_bytes() {
        // Seen from a live NFD: seq=45 = CREATED, FaceId 280, fd://20, local, on-demand, p2p,
        // Flags 4.
        let e = FaceEventNotification {
            kind: FaceEventKind::CREATED,
            face_id: 280,
            uri: "fd://20".into(),
            local_uri: "unix:///run/nfd/nfd.sock".into(),
            face_scope: FaceScope::LOCAL,
            face_persistency: FacePersistency::ON_DEMAND,
            link_type: LinkType::POINT_TO_POINT,
            flags: 4,
        };
        let wire = e.encode();
        let mut want = vec![192, 54, 193, 1, 1, 105, 2, 1, 24, 114, 7];
        want.extend_from_slice(b"fd://20");
        want.extend_from_slice(&[129, 24]);
        want.extend_from_slice(b"unix:///run/nfd/nfd.sock");
        want.extend_from_slice(&[132, 1, 1, 133, 1, 1, 134, 1, 0, 108, 1, 4]);
        assert_eq!(wire, want);
        assert_eq!(
            FaceEventNotification::decode(&Bytes::from(wire)).unwrap(),
            e
        );
    }

    #[test]
    fn kind_is_required() {
        let bad = Bytes::from_static(&[192, 3, 105, 1, 1]);
        assert_eq!(
            FaceEventNotification::decode(&bad),
            Err(DecodeError::Missing {
                typ: t::FACE_EVENT_KIND
            })
        );
    }
}
