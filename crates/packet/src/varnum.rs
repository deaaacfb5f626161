//! VAR-NUMBER (TLV-TYPE and TLV-LENGTH) and NonNegativeInteger, both directions.
//!
//! Decoding is strict: a VAR-NUMBER must use its shortest form, so that every element has
//! exactly one encoding and names compare equal exactly when their octets do.

use bytes::BufMut;

use crate::error::{DecodeError, Result};

/// Reads a VAR-NUMBER at the start of `buf`; returns the number and the octets it took.
#[inline]
pub fn read_varnum(buf: &[u8]) -> Result<(u64, usize)> {
    let first = *buf.first().ok_or(DecodeError::Truncated)?;
    let (value, len, min) = match first {
        0..=252 => return Ok((u64::from(first), 1)),
        253 => {
            let b: [u8; 2] = take(buf)?;
            (u64::from(u16::from_be_bytes(b)), 3, 253)
        }
        254 => {
            let b: [u8; 4] = take(buf)?;
            (u64::from(u32::from_be_bytes(b)), 5, 1 << 16)
        }
        255 => {
            let b: [u8; 8] = take(buf)?;
            (u64::from_be_bytes(b), 9, 1 << 32)
        }
    };
    if value < min {
        return Err(DecodeError::NonMinimalVarNumber);
    }
    Ok((value, len))
}

/// The `N` octets after the marker octet of a multi-octet VAR-NUMBER.
#[inline]
fn take<const N: usize>(buf: &[u8]) -> Result<[u8; N]> {
    buf.get(1..=N)
        .and_then(|s| s.try_into().ok())
        .ok_or(DecodeError::Truncated)
}

/// Octets the shortest VAR-NUMBER encoding of `n` takes.
#[inline]
pub const fn varnum_len(n: u64) -> usize {
    if n < 253 {
        1
    } else if n <= 0xFFFF {
        3
    } else if n <= 0xFFFF_FFFF {
        5
    } else {
        9
    }
}

/// Writes the shortest VAR-NUMBER encoding of `n`. Always inlined: nearly every call writes
/// one octet, which inline is a store where a call is a dozen instructions.
#[inline(always)]
pub fn put_varnum(out: &mut impl BufMut, n: u64) {
    if n < 253 {
        out.put_u8(n as u8);
    } else if n <= 0xFFFF {
        out.put_u8(253);
        out.put_u16(n as u16);
    } else if n <= 0xFFFF_FFFF {
        out.put_u8(254);
        out.put_u32(n as u32);
    } else {
        out.put_u8(255);
        out.put_u64(n);
    }
}

/// Decodes a NonNegativeInteger value (1, 2, 4 or 8 octets, big-endian) of element `typ`.
#[inline]
pub fn read_nonneg(typ: u64, value: &[u8]) -> Result<u64> {
    Ok(match value.len() {
        1 => u64::from(value[0]),
        2 => u64::from(u16::from_be_bytes([value[0], value[1]])),
        4 => u64::from(u32::from_be_bytes([value[0], value[1], value[2], value[3]])),
        8 => u64::from_be_bytes([
            value[0], value[1], value[2], value[3], value[4], value[5], value[6], value[7],
        ]),
        len => return Err(DecodeError::InvalidNonNegInt { typ, len }),
    })
}

/// Octets the shortest NonNegativeInteger encoding of `n` takes.
#[inline]
pub const fn nonneg_len(n: u64) -> usize {
    if n <= 0xFF {
        1
    } else if n <= 0xFFFF {
        2
    } else if n <= 0xFFFF_FFFF {
        4
    } else {
        8
    }
}

/// Writes the shortest NonNegativeInteger encoding of `n` (value only, no TLV header).
#[inline]
pub fn put_nonneg(out: &mut impl BufMut, n: u64) {
    match nonneg_len(n) {
        1 => out.put_u8(n as u8),
        2 => out.put_u16(n as u16),
        4 => out.put_u32(n as u32),
        _ => out.put_u64(n),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(n: u64) -> Vec<u8> {
        let mut v = Vec::new();
        put_varnum(&mut v, n);
        v
    }

    #[test]
    fn varnum_boundaries_round_trip_in_shortest_form() {
        for (n, len) in [
            (0, 1),
            (252, 1),
            (253, 3),
            (0xFFFF, 3),
            (0x1_0000, 5),
            (0xFFFF_FFFF, 5),
            (0x1_0000_0000, 9),
            (u64::MAX, 9),
        ] {
            let e = enc(n);
            assert_eq!(e.len(), len, "{n}");
            assert_eq!(varnum_len(n), len);
            assert_eq!(read_varnum(&e), Ok((n, len)));
        }
    }

    #[test]
    fn varnum_rejects_non_minimal_forms() {
        assert_eq!(
            read_varnum(&[253, 0, 252]),
            Err(DecodeError::NonMinimalVarNumber)
        );
        assert_eq!(
            read_varnum(&[254, 0, 0, 0xFF, 0xFF]),
            Err(DecodeError::NonMinimalVarNumber)
        );
        assert_eq!(
            read_varnum(&[255, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF]),
            Err(DecodeError::NonMinimalVarNumber)
        );
    }

    #[test]
    fn varnum_truncated() {
        assert_eq!(read_varnum(&[]), Err(DecodeError::Truncated));
        assert_eq!(read_varnum(&[253, 1]), Err(DecodeError::Truncated));
        assert_eq!(read_varnum(&[254, 1, 0, 0]), Err(DecodeError::Truncated));
        assert_eq!(
            read_varnum(&[255, 1, 0, 0, 0, 0, 0, 0]),
            Err(DecodeError::Truncated)
        );
    }

    #[test]
    fn nonneg_round_trip_and_lengths() {
        for (n, len) in [
            (0u64, 1),
            (255, 1),
            (256, 2),
            (65535, 2),
            (65536, 4),
            (u32::MAX as u64, 4),
            (u32::MAX as u64 + 1, 8),
            (u64::MAX, 8),
        ] {
            let mut v = Vec::new();
            put_nonneg(&mut v, n);
            assert_eq!(v.len(), len);
            assert_eq!(nonneg_len(n), len);
            assert_eq!(read_nonneg(9, &v), Ok(n));
        }
    }

    #[test]
    fn nonneg_accepts_non_minimal_but_rejects_odd_lengths() {
        assert_eq!(read_nonneg(9, &[0, 5]), Ok(5));
        for len in [0usize, 3, 5, 6, 7, 9] {
            assert_eq!(
                read_nonneg(9, &vec![0; len]),
                Err(DecodeError::InvalidNonNegInt { typ: 9, len })
            );
        }
    }
}
