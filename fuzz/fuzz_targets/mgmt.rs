//! NFD management wire types, datasets and command Interests (see kite_fuzz::mgmt).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| kite_fuzz::mgmt::run(data));
