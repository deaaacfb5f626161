//! Encoding helpers: exact-size TLV writing.
//!
//! Every encodable type knows its encoded length before it writes, so a packet is written
//! into one buffer of exactly the right size, with no reallocation.

use bytes::BufMut;

use crate::varnum::{nonneg_len, put_nonneg, put_varnum, varnum_len};

/// Octets of a TLV element whose value is `value_len` octets long.
#[inline]
pub const fn tlv_len(typ: u64, value_len: usize) -> usize {
    varnum_len(typ) + varnum_len(value_len as u64) + value_len
}

/// Writes a TLV-TYPE and TLV-LENGTH.
#[inline]
pub fn put_header(out: &mut impl BufMut, typ: u64, value_len: usize) {
    put_varnum(out, typ);
    put_varnum(out, value_len as u64);
}

/// Writes a whole element whose value is `value`.
#[inline]
pub fn put_tlv(out: &mut impl BufMut, typ: u64, value: &[u8]) {
    put_header(out, typ, value.len());
    out.put_slice(value);
}

/// Octets of an element holding the NonNegativeInteger `n`.
#[inline]
pub const fn nonneg_tlv_len(typ: u64, n: u64) -> usize {
    tlv_len(typ, nonneg_len(n))
}

/// Writes an element holding the NonNegativeInteger `n`.
#[inline]
pub fn put_nonneg_tlv(out: &mut impl BufMut, typ: u64, n: u64) {
    put_header(out, typ, nonneg_len(n));
    put_nonneg(out, n);
}

/// Writes an element whose value is `n` as a fixed-width 8-octet big-endian integer.
#[inline]
pub fn put_u64_tlv(out: &mut impl BufMut, typ: u64, n: u64) {
    put_header(out, typ, 8);
    out.put_u64(n);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_match_what_is_written() {
        for (typ, n) in [(8u64, 0u64), (300, 70000), (70000, u64::MAX)] {
            let mut v = Vec::new();
            put_nonneg_tlv(&mut v, typ, n);
            assert_eq!(v.len(), nonneg_tlv_len(typ, n));
        }
        let mut v = Vec::new();
        put_tlv(&mut v, 21, &[0; 300]);
        assert_eq!(v.len(), tlv_len(21, 300));
        assert_eq!(&v[..4], &[21, 253, 1, 44]);
    }
}
