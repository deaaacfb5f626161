//! A WebTransport session fed what a hostile client sends once connected: datagrams with
//! and without the session's prefix, request streams and unidirectional streams of any
//! octets; and the request parser (QPACK, frames) on the raw input (see kite_face::h3).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| kite_face::h3::exercise(data));
