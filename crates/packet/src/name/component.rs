//! Name components: a TLV-TYPE (1..=65535) and an opaque value, with the typed components of
//! the packet format and the naming conventions.

use core::cmp::Ordering;
use core::fmt;

use bytes::{BufMut, Bytes, BytesMut};

use crate::encode::{put_header, tlv_len};
use crate::tlv_type;
use crate::varnum::{nonneg_len, put_nonneg, read_nonneg};

/// A borrowed name component: its type and value, pointing into a [`Name`](crate::Name)'s buffer.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Component<'a> {
    typ: u16,
    value: &'a [u8],
}

impl<'a> Component<'a> {
    /// A component of type `typ`; `None` when the type is outside 1..=65535.
    pub fn new(typ: u64, value: &'a [u8]) -> Option<Self> {
        match u16::try_from(typ) {
            Ok(t) if t != 0 => Some(Component { typ: t, value }),
            _ => None,
        }
    }

    /// A GenericNameComponent.
    pub const fn generic(value: &'a [u8]) -> Self {
        Component {
            typ: tlv_type::GENERIC_NAME_COMPONENT as u16,
            value,
        }
    }

    /// TLV-TYPE.
    #[inline]
    pub const fn typ(&self) -> u64 {
        self.typ as u64
    }

    /// TLV-VALUE.
    #[inline]
    pub const fn value(&self) -> &'a [u8] {
        self.value
    }

    /// Octets of the encoded component (TLV-TYPE, TLV-LENGTH, value).
    #[inline]
    pub const fn encoded_len(&self) -> usize {
        tlv_len(self.typ as u64, self.value.len())
    }

    /// Writes the encoded component.
    #[inline]
    pub fn encode(&self, out: &mut impl BufMut) {
        put_header(out, self.typ(), self.value.len());
        out.put_slice(self.value);
    }

    /// The value as a NonNegativeInteger, when it is one (1, 2, 4 or 8 octets).
    pub fn as_number(&self) -> Option<u64> {
        read_nonneg(self.typ(), self.value).ok()
    }

    /// The segment number, if this is a SegmentNameComponent.
    pub fn as_segment(&self) -> Option<u64> {
        self.number_of(tlv_type::SEGMENT_NAME_COMPONENT)
    }

    /// The version, if this is a VersionNameComponent.
    pub fn as_version(&self) -> Option<u64> {
        self.number_of(tlv_type::VERSION_NAME_COMPONENT)
    }

    /// The number inside a component of type `typ`.
    fn number_of(&self, typ: u64) -> Option<u64> {
        if self.typ() == typ {
            self.as_number()
        } else {
            None
        }
    }

    /// An owned copy.
    pub fn to_owned(&self) -> OwnedComponent {
        OwnedComponent {
            typ: self.typ,
            value: Bytes::copy_from_slice(self.value),
        }
    }
}

impl Ord for Component<'_> {
    /// NDN canonical order: by TLV-TYPE, then TLV-LENGTH, then value octets.
    fn cmp(&self, other: &Self) -> Ordering {
        self.typ
            .cmp(&other.typ)
            .then(self.value.len().cmp(&other.value.len()))
            .then_with(|| self.value.cmp(other.value))
    }
}

impl PartialOrd for Component<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Component<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        super::uri::write_component(f, *self)
    }
}

impl fmt::Debug for Component<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// An owned name component, for building names and holding FinalBlockId.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct OwnedComponent {
    typ: u16,
    value: Bytes,
}

impl OwnedComponent {
    /// A component of type `typ`; `None` when the type is outside 1..=65535.
    pub fn new(typ: u64, value: impl Into<Bytes>) -> Option<Self> {
        match u16::try_from(typ) {
            Ok(t) if t != 0 => Some(OwnedComponent {
                typ: t,
                value: value.into(),
            }),
            _ => None,
        }
    }

    /// A GenericNameComponent.
    pub fn generic(value: impl Into<Bytes>) -> Self {
        OwnedComponent {
            typ: tlv_type::GENERIC_NAME_COMPONENT as u16,
            value: value.into(),
        }
    }

    /// A component of a number type (Segment, Version, …) holding `n` in shortest form.
    ///
    /// # Panics
    /// When `typ` is outside 1..=65535 (a programming error, not input).
    pub fn number(typ: u64, n: u64) -> Self {
        let mut v = BytesMut::with_capacity(nonneg_len(n));
        put_nonneg(&mut v, n);
        Self::new(typ, v.freeze()).expect("component type must be within 1..=65535")
    }

    /// A SegmentNameComponent.
    pub fn segment(n: u64) -> Self {
        Self::number(tlv_type::SEGMENT_NAME_COMPONENT, n)
    }

    /// A VersionNameComponent.
    pub fn version(n: u64) -> Self {
        Self::number(tlv_type::VERSION_NAME_COMPONENT, n)
    }

    /// The borrowed form.
    #[inline]
    pub fn as_ref(&self) -> Component<'_> {
        Component {
            typ: self.typ,
            value: &self.value,
        }
    }
}

impl fmt::Display for OwnedComponent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.as_ref(), f)
    }
}

impl fmt::Debug for OwnedComponent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.as_ref(), f)
    }
}

impl<'a> From<Component<'a>> for OwnedComponent {
    fn from(c: Component<'a>) -> Self {
        c.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_order_is_type_then_length_then_octets() {
        let a = Component::generic(b"zz");
        let b = Component::generic(b"aaa");
        let c = Component::new(9, b"").unwrap();
        let d = Component::new(1, &[0xFF; 32]).unwrap();
        let mut v = vec![c, b, a, d];
        v.sort();
        assert_eq!(v, vec![d, a, b, c]);
    }

    #[test]
    fn type_range_is_enforced() {
        assert!(Component::new(0, b"").is_none());
        assert!(Component::new(65536, b"").is_none());
        assert!(Component::new(65535, b"").is_some());
        assert!(OwnedComponent::new(0, Bytes::new()).is_none());
    }

    #[test]
    fn number_components() {
        let s = OwnedComponent::segment(300);
        assert_eq!(s.as_ref().value(), &[1, 44]);
        assert_eq!(s.as_ref().as_segment(), Some(300));
        assert_eq!(s.as_ref().as_version(), None);
        assert_eq!(OwnedComponent::version(0).as_ref().as_version(), Some(0));
    }
}
