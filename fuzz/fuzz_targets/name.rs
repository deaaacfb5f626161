//! Name decoding: any octets either decode to a name that re-encodes identically and survives
//! its URI form, or fail with a typed error.
#![no_main]

use bytes::Bytes;
use kite_packet::Name;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let wire = Bytes::copy_from_slice(data);
    if let Ok(name) = Name::decode(wire.clone()) {
        assert_eq!(name.to_wire(), wire);
        assert_eq!(Name::from_uri(&name.to_uri()).unwrap(), name);
        for n in 0..=name.len() {
            assert!(name.prefix(n).is_prefix_of(&name));
        }
    }
});
