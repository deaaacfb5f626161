//! NDNLPv2 link service and reassembly of one face, from a program of frames (see kite_fuzz::link).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| kite_fuzz::link::run(data));
