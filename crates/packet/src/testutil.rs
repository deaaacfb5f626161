//! Hand-built TLVs for tests of malformed input.

use crate::encode::put_tlv;

/// One element of type `typ` holding `value`.
pub fn tlv(typ: u64, value: &[u8]) -> Vec<u8> {
    let mut v = Vec::new();
    put_tlv(&mut v, typ, value);
    v
}

/// The concatenation of `parts`.
pub fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}
