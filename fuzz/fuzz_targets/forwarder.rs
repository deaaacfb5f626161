//! A whole forwarding thread behind its faces' link services, driven by a program (see kite_fuzz::forwarder).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| kite_fuzz::forwarder::Driver::run(data));
