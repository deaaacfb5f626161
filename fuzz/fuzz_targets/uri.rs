//! Name URI parsing: any string either parses to a name whose URI parses back to it, or fails
//! with a typed error.
#![no_main]

use kite_packet::Name;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(s) = std::str::from_utf8(data) {
        if let Ok(name) = Name::from_uri(s) {
            assert_eq!(Name::from_uri(&name.to_uri()).unwrap(), name);
            assert_eq!(Name::decode(name.to_wire()).unwrap(), name);
        }
    }
});
