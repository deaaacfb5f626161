//! Frames an AF_XDP interface hands Kite: the XDP program's verdict as its user-space twin
//! gives it ([`kite_face::xdp::filter::verdict_with`]) and the check of the IP and UDP headers
//! of what it takes ([`kite_face::xdp::udp::parse`]), as `EtherChannel::recv_burst` runs them.
//!
//! Checks: neither panics; the payload lies within the frame; a frame whose headers parse, to
//! a destination in the map, is one the program takes, and one the program takes whose
//! headers parse is to a destination in the map.

use kite_face::xdp::filter::{verdict_with, UdpDst, Verdict};
use kite_face::xdp::udp::parse;

/// The interface's index (the scope of link-local senders).
const IFINDEX: u32 = 2;

pub fn run(data: &[u8]) {
    let dsts = [
        UdpDst::of(([10, 0, 0, 1], 6363).into()),
        UdpDst::of("[2001:db8::1]:6363".parse().unwrap()),
        UdpDst::of("[fe80::1]:6363".parse().unwrap()),
    ];
    let verdict = verdict_with(data, &dsts);
    let Ok(d) = parse(data, IFINDEX) else {
        return;
    };
    let start = d.payload.as_ptr() as usize - data.as_ptr() as usize;
    assert!(
        start + d.payload.len() <= data.len(),
        "payload past the frame"
    );
    let mapped = dsts.contains(&UdpDst::of(d.dst));
    assert_eq!(verdict == Verdict::Udp, mapped, "{verdict:?} for {}", d.dst);
}
