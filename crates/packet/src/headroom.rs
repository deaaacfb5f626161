//! Prepend-style outer headers: a packet's value is written after a reserved headroom and its
//! TLV-TYPE/TLV-LENGTH are written into the headroom once the value's length is known (after
//! signing), so a signed packet is built in one buffer with no copy and no reallocation.

use bytes::{Bytes, BytesMut};

use crate::encode::put_header;
use crate::varnum::varnum_len;

/// Room for the largest TLV-TYPE plus TLV-LENGTH (two 9-octet VAR-NUMBERs would be 18; packet
/// types are 1 octet, so 1 + 9 suffices).
pub(crate) const HEADROOM: usize = 10;

/// A buffer of `capacity` value octets after the headroom.
pub(crate) fn buffer(capacity: usize) -> BytesMut {
    let mut buf = BytesMut::with_capacity(HEADROOM + capacity);
    buf.resize(HEADROOM, 0);
    buf
}

/// Writes the outer header of element `typ` just before the value and returns the element.
pub(crate) fn finish(mut buf: BytesMut, typ: u64) -> Bytes {
    let value_len = buf.len() - HEADROOM;
    let header_len = varnum_len(typ) + varnum_len(value_len as u64);
    let start = HEADROOM - header_len;
    let mut header = &mut buf[start..HEADROOM];
    put_header(&mut header, typ, value_len);
    buf.freeze().slice(start..)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::BufMut;

    #[test]
    fn header_lands_right_before_the_value() {
        for len in [0usize, 252, 253, 70_000] {
            let mut b = buffer(len);
            b.put_bytes(7, len);
            let out = finish(b, 6);
            let mut expect = Vec::new();
            put_header(&mut expect, 6, len);
            assert_eq!(&out[..expect.len()], &expect[..]);
            assert_eq!(out.len(), expect.len() + len);
        }
    }
}
