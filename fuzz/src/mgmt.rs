//! NFD management wire types and command parsing: the first octet of the input says what the
//! rest is. Every decoder must return a value or a typed error; a decoded value must encode
//! to octets that decode to the same value; a command Interest goes through parsing (unsigned,
//! signed Interest v0.3, signed command Interest v0.2), validation with NFD's defaults, the
//! FaceId-0 substitution, replay protection, and dataset request recognition.

use bytes::Bytes;
use kite_mgmt_proto::datasets::{
    ChannelStatus, CsInfo, FaceQueryFilter, FaceStatus, FibEntry, ForwarderStatus, RibEntry,
    StrategyChoice,
};
use kite_mgmt_proto::{
    dataset, decode_items, encode_items, parse_command, ControlParameters, ControlResponse,
    FaceEventNotification, PrefixAnnouncement, Tlv,
};
use kite_mgmt_server::replay::Stamp;
use kite_mgmt_server::{ReplayGuard, RibRoute};
use kite_packet::Interest;

/// What the input after the first octet is (the first octet modulo [`KINDS`]).
pub mod kind {
    /// A ControlParameters element.
    pub const CONTROL_PARAMETERS: u8 = 0;
    /// A ControlResponse element.
    pub const CONTROL_RESPONSE: u8 = 1;
    /// A FaceEventNotification element.
    pub const FACE_EVENT: u8 = 2;
    /// A faces/list payload (FaceStatus items).
    pub const FACE_STATUS: u8 = 3;
    /// A faces/channels payload.
    pub const CHANNEL_STATUS: u8 = 4;
    /// A fib/list payload.
    pub const FIB: u8 = 5;
    /// A rib/list payload.
    pub const RIB: u8 = 6;
    /// A strategy-choice/list payload.
    pub const STRATEGY_CHOICE: u8 = 7;
    /// A cs/info payload.
    pub const CS_INFO: u8 = 8;
    /// A status/general payload.
    pub const FORWARDER_STATUS: u8 = 9;
    /// A FaceQueryFilter element.
    pub const FACE_QUERY_FILTER: u8 = 10;
    /// A PrefixAnnouncement (a Data).
    pub const PREFIX_ANNOUNCEMENT: u8 = 11;
    /// A command or dataset Interest.
    pub const INTEREST: u8 = 12;
}

/// Kinds of input.
pub const KINDS: u8 = 13;

fn round_trip<T: Tlv + PartialEq + std::fmt::Debug>(wire: &Bytes) {
    if let Ok(v) = T::decode(wire) {
        let again = T::decode(&Bytes::from(v.encode())).expect("a re-encoded element decodes");
        assert_eq!(again, v, "a re-encoded element decodes to the same value");
    }
}

fn items<T: Tlv + PartialEq + std::fmt::Debug>(wire: &Bytes) {
    if let Ok(v) = decode_items::<T>(wire) {
        let again = decode_items::<T>(&Bytes::from(encode_items(&v)))
            .expect("a re-encoded payload decodes");
        assert_eq!(again, v, "a re-encoded payload decodes to the same items");
    }
}

/// Runs one input.
pub fn run(data: &[u8]) {
    let Some((&k, rest)) = data.split_first() else {
        return;
    };
    let wire = Bytes::copy_from_slice(rest);
    match k % KINDS {
        kind::CONTROL_PARAMETERS => {
            round_trip::<ControlParameters>(&wire);
            let _ = ControlParameters::from_component_value(rest);
        }
        kind::CONTROL_RESPONSE => {
            round_trip::<ControlResponse>(&wire);
            if let Ok(r) = ControlResponse::decode(&wire) {
                let _ = r.parameters();
            }
        }
        kind::FACE_EVENT => round_trip::<FaceEventNotification>(&wire),
        kind::FACE_STATUS => items::<FaceStatus>(&wire),
        kind::CHANNEL_STATUS => items::<ChannelStatus>(&wire),
        kind::FIB => items::<FibEntry>(&wire),
        kind::RIB => items::<RibEntry>(&wire),
        kind::STRATEGY_CHOICE => items::<StrategyChoice>(&wire),
        kind::CS_INFO => items::<CsInfo>(&wire),
        kind::FORWARDER_STATUS => {
            if let Ok(v) = ForwarderStatus::decode(&wire) {
                let again = ForwarderStatus::decode(&Bytes::from(v.encode()))
                    .expect("a re-encoded status decodes");
                assert_eq!(again, v);
            }
        }
        kind::FACE_QUERY_FILTER => {
            round_trip::<FaceQueryFilter>(&wire);
            if let (Ok(f), Ok(faces)) = (
                FaceQueryFilter::decode(&wire),
                decode_items::<FaceStatus>(&wire),
            ) {
                for face in &faces {
                    let _ = f.matches(face);
                }
            }
        }
        kind::PREFIX_ANNOUNCEMENT => {
            if let Ok(pa) = PrefixAnnouncement::decode(wire) {
                let _ = pa.lifetime_ms(1_800_000_000_000);
                let _ = RibRoute::from_announcement(&pa, 300, 0, 1_800_000_000_000);
            }
        }
        _ => interest(wire),
    }
}

fn interest(wire: Bytes) {
    let Ok(i) = Interest::decode(wire) else {
        return;
    };
    let _ = dataset::parse_dataset_request(&i.name);
    let Ok(mut c) = parse_command(&i) else {
        return;
    };
    if let Some(Ok(stamp)) = Stamp::of(&c.signature) {
        let mut guard = ReplayGuard::new();
        let now = stamp.timestamp.unwrap_or(1_800_000_000_000);
        if guard.admit(&stamp, now).is_ok() {
            assert!(
                guard.admit(&stamp, now).is_err(),
                "a replayed command is refused"
            );
        }
    }
    match c.validate() {
        Ok(()) => {
            c.resolve_self_face(300);
            let again = ControlParameters::decode(&Bytes::from(c.params.encode()))
                .expect("validated parameters re-encode");
            assert_eq!(again, c.params);
        }
        Err(r) => {
            let _ = r.response();
        }
    }
}
