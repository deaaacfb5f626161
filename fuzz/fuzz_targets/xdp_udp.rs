//! The XDP program's verdict and the IP and UDP header checks of AF_XDP frames (see
//! kite_fuzz::xdp_udp).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| kite_fuzz::xdp_udp::run(data));
