//! Data decoding, view and full: never a panic; what the full decoder accepts re-encodes to a
//! Data that decodes to the same fields.
#![no_main]

use bytes::Bytes;
use kite_packet::{Data, DataView};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let wire = Bytes::copy_from_slice(data);
    let Ok(view) = DataView::decode(wire) else {
        return;
    };
    let _ = view.implicit_digest();
    if let Ok(full) = Data::from_view(view) {
        let _ = full.signed_portion();
        let again = Data::decode(full.encode()).expect("re-encoded Data decodes");
        assert_eq!(again, full);
    }
});
