//! Reading TLV elements out of a buffer without copying.
//!
//! A [`Reader`] walks the elements inside one TLV-VALUE. Positions are absolute offsets into
//! the packet the reader was made for, so callers can slice the packet's `Bytes` for any
//! element without copying it.

use crate::error::{DecodeError, Result};
use crate::tlv_type;
use crate::varnum::{read_nonneg, read_varnum};

/// One element: its TLV-TYPE, its value, and where it sits in the packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Element<'a> {
    /// TLV-TYPE.
    pub typ: u64,
    /// TLV-VALUE.
    pub value: &'a [u8],
    /// Offset of the first octet of the TLV-TYPE.
    pub start: usize,
    /// Offset of the first octet of the TLV-VALUE.
    pub value_start: usize,
}

impl<'a> Element<'a> {
    /// Offset one past the last octet of the element.
    #[inline]
    pub fn end(&self) -> usize {
        self.value_start + self.value.len()
    }

    /// The range of the whole element (TLV-TYPE through TLV-VALUE).
    #[inline]
    pub fn range(&self) -> core::ops::Range<usize> {
        self.start..self.end()
    }

    /// The range of the TLV-VALUE.
    #[inline]
    pub fn value_range(&self) -> core::ops::Range<usize> {
        self.value_start..self.end()
    }

    /// The value as a NonNegativeInteger.
    #[inline]
    pub fn nonneg(&self) -> Result<u64> {
        read_nonneg(self.typ, self.value)
    }

    /// Fails unless the value is exactly `len` octets.
    #[inline]
    pub fn expect_len(&self, len: usize) -> Result<()> {
        if self.value.len() == len {
            Ok(())
        } else {
            Err(DecodeError::InvalidLength {
                typ: self.typ,
                len: self.value.len(),
            })
        }
    }

    /// A reader over the elements nested in this element's value.
    #[inline]
    pub fn children(&self) -> Reader<'a> {
        Reader::with_base(self.value, self.value_start)
    }

    /// This element, if its TLV-TYPE is `typ`; `UnexpectedType` otherwise.
    #[inline]
    pub fn of_type(self, typ: u64) -> Result<Self> {
        if self.typ == typ {
            Ok(self)
        } else {
            Err(DecodeError::UnexpectedType {
                expected: typ,
                actual: self.typ,
            })
        }
    }

    /// Fails with `UnknownCritical` when this unrecognized element is critical.
    #[inline]
    pub fn skip_unknown(&self) -> Result<()> {
        if tlv_type::is_critical(self.typ) {
            Err(DecodeError::UnknownCritical { typ: self.typ })
        } else {
            Ok(())
        }
    }
}

/// Iterates the elements in a TLV-VALUE (or a whole buffer of concatenated elements).
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    base: usize,
}

impl<'a> Reader<'a> {
    /// A reader over `buf`, whose first octet is at offset 0.
    #[inline]
    pub fn new(buf: &'a [u8]) -> Self {
        Self::with_base(buf, 0)
    }

    /// A reader over `buf`, whose first octet is at offset `base` of the packet.
    #[inline]
    pub fn with_base(buf: &'a [u8], base: usize) -> Self {
        Reader { buf, pos: 0, base }
    }

    /// Whether every element has been read.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.pos >= self.buf.len()
    }

    /// Absolute offset of the next element.
    #[inline]
    pub fn offset(&self) -> usize {
        self.base + self.pos
    }

    /// The TLV-TYPE of the next element, without reading it; `None` at the end of the buffer
    /// or when the TLV-TYPE itself is malformed (reading the element then reports why).
    #[inline]
    pub fn peek_type(&self) -> Option<u64> {
        match self.buf.get(self.pos..)? {
            [t @ 1..=252, ..] => Some(u64::from(*t)),
            rest => read_varnum(rest).ok().map(|(t, _)| t),
        }
    }

    /// Reads the next element; `None` at the end of the buffer.
    #[inline]
    pub fn next_element(&mut self) -> Option<Result<Element<'a>>> {
        if self.is_empty() {
            return None;
        }
        Some(self.read())
    }

    /// Reads the next element, which must exist.
    #[inline(always)]
    pub fn read(&mut self) -> Result<Element<'a>> {
        let rest = &self.buf[self.pos..];
        // Fast path: nearly every element has a one-octet TLV-TYPE and TLV-LENGTH.
        if let [typ @ 1..=252, len @ 0..=252, value @ ..] = rest {
            let len = usize::from(*len);
            if let Some(value) = value.get(..len) {
                let start = self.base + self.pos;
                self.pos += 2 + len;
                return Ok(Element {
                    typ: u64::from(*typ),
                    value,
                    start,
                    value_start: start + 2,
                });
            }
        }
        self.read_general()
    }

    /// Reads an element with multi-octet VAR-NUMBERs, or reports why the next one is invalid.
    #[inline(never)]
    fn read_general(&mut self) -> Result<Element<'a>> {
        let rest = &self.buf[self.pos..];
        let (typ, tlen) = read_varnum(rest)?;
        if typ == 0 {
            return Err(DecodeError::ZeroType);
        }
        let (len, llen) = read_varnum(&rest[tlen..])?;
        let header = tlen + llen;
        let available = rest.len() - header;
        if len > available as u64 {
            return Err(DecodeError::LengthExceedsBuffer {
                typ,
                len,
                available,
            });
        }
        let len = len as usize;
        let el = Element {
            typ,
            value: &rest[header..header + len],
            start: self.base + self.pos,
            value_start: self.base + self.pos + header,
        };
        self.pos += header + len;
        Ok(el)
    }

    /// Reads the next element and checks its type.
    #[inline]
    pub fn expect(&mut self, typ: u64) -> Result<Element<'a>> {
        if self.is_empty() {
            return Err(DecodeError::Missing { typ });
        }
        self.read()?.of_type(typ)
    }
}

/// Reads the single element that must fill `buf` exactly.
#[inline]
pub fn read_single(buf: &[u8]) -> Result<Element<'_>> {
    let mut r = Reader::new(buf);
    let el = r.next_element().ok_or(DecodeError::Truncated)??;
    if !r.is_empty() {
        return Err(DecodeError::TrailingBytes(buf.len() - el.end()));
    }
    Ok(el)
}

/// Reads the single element of type `typ` that must fill `buf` exactly.
#[inline]
pub fn read_single_of(buf: &[u8], typ: u64) -> Result<Element<'_>> {
    read_single(buf)?.of_type(typ)
}

/// Stores `v` in `slot`, failing with `Duplicate { typ }` when the field was already seen.
#[inline]
pub(crate) fn set_once<T>(slot: &mut Option<T>, v: T, typ: u64) -> Result<()> {
    if slot.is_some() {
        return Err(DecodeError::Duplicate { typ });
    }
    *slot = Some(v);
    Ok(())
}

/// Enforces the order and uniqueness of recognized elements as a decoder walks them.
///
/// Each recognized element has a rank in the grammar; ranks must strictly increase.
#[derive(Debug, Default, Clone, Copy)]
pub struct OrderGuard {
    last: u8,
}

impl OrderGuard {
    /// Records element `typ` at grammar position `rank` (1-based).
    #[inline]
    pub fn see(&mut self, typ: u64, rank: u8) -> Result<()> {
        if rank == self.last {
            return Err(DecodeError::Duplicate { typ });
        }
        if rank < self.last {
            return Err(DecodeError::OutOfOrder { typ });
        }
        self.last = rank;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_nested_elements_with_absolute_offsets() {
        let buf = [7, 6, 8, 1, b'a', 8, 1, b'b'];
        let outer = read_single(&buf).unwrap();
        assert_eq!(outer.typ, 7);
        let mut r = outer.children();
        let a = r.read().unwrap();
        assert_eq!(
            (a.typ, a.value, a.start, a.value_start),
            (8, &b"a"[..], 2, 4)
        );
        let b = r.read().unwrap();
        assert_eq!((b.start, b.end()), (5, 8));
        assert!(r.next_element().is_none());
    }

    #[test]
    fn length_beyond_buffer_is_typed() {
        assert_eq!(
            Reader::new(&[8, 5, 1, 2]).read(),
            Err(DecodeError::LengthExceedsBuffer {
                typ: 8,
                len: 5,
                available: 2
            })
        );
    }

    #[test]
    fn huge_length_does_not_overflow() {
        let buf = [8, 255, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF];
        assert!(matches!(
            Reader::new(&buf).read(),
            Err(DecodeError::LengthExceedsBuffer { .. })
        ));
    }

    #[test]
    fn truncated_header_and_zero_type() {
        assert_eq!(Reader::new(&[8]).read(), Err(DecodeError::Truncated));
        assert_eq!(Reader::new(&[253, 1]).read(), Err(DecodeError::Truncated));
        assert_eq!(Reader::new(&[0, 0]).read(), Err(DecodeError::ZeroType));
    }

    #[test]
    fn trailing_bytes_after_single_element() {
        assert_eq!(read_single(&[8, 0, 1]), Err(DecodeError::TrailingBytes(1)));
    }

    #[test]
    fn order_guard_flags_duplicates_and_disorder() {
        let mut g = OrderGuard::default();
        g.see(7, 1).unwrap();
        g.see(10, 5).unwrap();
        assert_eq!(g.see(10, 5), Err(DecodeError::Duplicate { typ: 10 }));
        assert_eq!(g.see(33, 2), Err(DecodeError::OutOfOrder { typ: 33 }));
    }

    #[test]
    fn criticality_rule() {
        assert!(tlv_type::is_critical(31));
        assert!(tlv_type::is_critical(33));
        assert!(!tlv_type::is_critical(32));
        assert!(!tlv_type::is_critical(36));
        assert!(tlv_type::lp_can_ignore(800 + 4 * 3));
        assert!(!tlv_type::lp_can_ignore(801));
        assert!(!tlv_type::lp_can_ignore(960));
        assert!(!tlv_type::lp_can_ignore(796));
    }
}
