//! Ethernet frame demultiplexing and the link service of each Ethernet face (see kite_fuzz::ether).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| kite_fuzz::ether::run(data));
