//! Names drawn from fuzz input: a small pool of components (so Interests, Data, routes and
//! PIT entries meet each other), one-octet and numbered components, digest components, and
//! components of 0 to 55 and of 256 to 8192 octets (so names reach the maximum name length,
//! to the octet).

use kite_packet::{tlv_type, Name, OwnedComponent};

use crate::input::{Input, Writer};

/// Generic components most names are made of.
const POOL: [&str; 8] = ["a", "b", "c", "d", "localhost", "nfd", "localhop", "x"];

/// Most components in a name read from input.
pub const MAX_COMPONENTS: u8 = 16;

/// Selector octets: `0x00..=0x3f` a pool component, `0x40..=0x7f` a one-octet generic
/// component, `0x80..=0xbf` a segment number, `0xc0` an implicit digest, `0xc1` a parameters
/// digest, `0xc2..=0xc7` a generic component of 2^(selector − 0xc2 + 8) octets (256 to 8192),
/// above that a generic component of selector − 0xc8 octets (0 to 55).
pub fn component(s: u8) -> OwnedComponent {
    match s {
        0x00..=0x3f => OwnedComponent::generic(POOL[usize::from(s % 8)].as_bytes().to_vec()),
        0x40..=0x7f => OwnedComponent::generic(vec![s & 0x3f]),
        0x80..=0xbf => OwnedComponent::segment(u64::from(s & 0x3f)),
        0xc0 => OwnedComponent::new(tlv_type::IMPLICIT_SHA256_DIGEST_COMPONENT, vec![0xc0; 32])
            .expect("32 octets make a digest"),
        0xc1 => OwnedComponent::new(tlv_type::PARAMETERS_SHA256_DIGEST_COMPONENT, vec![0xc1; 32])
            .expect("32 octets make a digest"),
        0xc2..=0xc7 => OwnedComponent::generic(vec![b'L'; 1 << (s - 0xc2 + 8)]),
        _ => OwnedComponent::generic(vec![b'S'; usize::from(s - 0xc8)]),
    }
}

/// Reads a name: a count octet (modulo [`MAX_COMPONENTS`] + 1), then a selector per
/// component. A name too long to encode stops growing.
pub fn read(inp: &mut Input<'_>) -> Name {
    let n = inp.u8() % (MAX_COMPONENTS + 1);
    let mut comps = Vec::with_capacity(usize::from(n));
    let mut octets = 0;
    for _ in 0..n {
        let c = component(inp.u8());
        let len = c.as_ref().value().len();
        // Component types are below 253: one octet of TLV-TYPE, one or three of TLV-LENGTH.
        let encoded = 1 + if len < 253 { 1 } else { 3 } + len;
        if octets + encoded > kite_packet::name::MAX_NAME_VALUE_LEN {
            continue;
        }
        octets += encoded;
        comps.push(c);
    }
    // Built at once: pushing component by component copies the name each time, which for
    // names of tens of kilobytes cost more than the forwarder's work on them.
    Name::from_components(comps.iter().map(OwnedComponent::as_ref))
}

/// Writes a name as [`read`] reads it, from its selectors.
pub fn write(w: &mut Writer, selectors: &[u8]) {
    let n = u8::try_from(selectors.len()).expect("a short name");
    assert!(n <= MAX_COMPONENTS, "at most {MAX_COMPONENTS} components");
    w.u8(n).bytes(selectors);
}

/// Selectors of the pool components `a`, `b`, `c`, `d`, `localhost`, `nfd`, `localhop`, `x`.
pub mod sel {
    /// `a`
    pub const A: u8 = 0;
    /// `b`
    pub const B: u8 = 1;
    /// `c`
    pub const C: u8 = 2;
    /// `d`
    pub const D: u8 = 3;
    /// `localhost`
    pub const LOCALHOST: u8 = 4;
    /// `nfd`
    pub const NFD: u8 = 5;
    /// `localhop`
    pub const LOCALHOP: u8 = 6;
    /// `x`
    pub const X: u8 = 7;
    /// Segment number `n` (below 64).
    pub const fn seg(n: u8) -> u8 {
        0x80 | (n & 0x3f)
    }
    /// A generic component of 2^(8 + k) octets (k ≤ 5).
    pub const fn long(k: u8) -> u8 {
        0xc2 + k
    }
    /// A generic component of `n` octets (n ≤ 55).
    pub const fn sized(n: u8) -> u8 {
        0xc8 + n
    }
}
