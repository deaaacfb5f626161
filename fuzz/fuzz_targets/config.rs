//! The kite run configuration file parser and validator (see kite_fuzz::config).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| kite_fuzz::config::run(data));
