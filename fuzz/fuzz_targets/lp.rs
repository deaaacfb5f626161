//! NDNLPv2 frame decoding: never a panic; an accepted frame re-encodes to one that decodes to
//! the same fields, and the packet inside decodes (or fails) with a typed error.
#![no_main]

use bytes::Bytes;
use kite_packet::{LpPacket, NetPacket, NetPacketView};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let frame = Bytes::copy_from_slice(data);
    let _ = NetPacket::decode_frame(frame.clone());
    let Ok(lp) = LpPacket::decode(frame) else {
        return;
    };
    assert_eq!(
        LpPacket::decode(lp.encode()).expect("re-encoded frame decodes"),
        lp
    );
    if let Some(fragment) = lp.fragment {
        let _ = NetPacketView::decode(fragment);
    }
});
