//! Interest decoding, view and full: never a panic; what the full decoder accepts re-encodes
//! to an Interest that decodes, and encoding is then stable (the first re-encoding may drop
//! unknown non-critical elements, which changes the parameters digest).
#![no_main]

use bytes::Bytes;
use kite_packet::{Interest, InterestView};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let wire = Bytes::copy_from_slice(data);
    let Ok(view) = InterestView::decode(wire.clone()) else {
        return;
    };
    let _ = view.forwarding_hint().count();
    let _ = Interest::signed_parts(&wire);
    if let Ok(full) = Interest::from_view(view) {
        let again = Interest::decode(full.encode()).expect("re-encoded Interest decodes");
        assert_eq!(Interest::decode(again.encode()).unwrap(), again);
    }
});
