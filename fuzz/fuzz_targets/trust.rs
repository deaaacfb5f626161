//! Trust schemas, certificates and name regexes (see kite_fuzz::trust).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| kite_fuzz::trust::run(data));
