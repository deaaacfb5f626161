//! Names: a sequence of components held as the octets of the Name's TLV-VALUE plus the offset
//! of each component.
//!
//! A decoded name keeps the packet buffer it came from (`Bytes`) and where its value sits in it,
//! so decoding copies nothing; a forwarder view moves the received buffer into its name, so
//! decoding does not even touch the buffer's refcount. The offsets sit inline for up to 16
//! components, so decoding allocates nothing for such names. Because VAR-NUMBERs are decoded in
//! shortest form only, two names are equal exactly when
//! their octets are, and a name is a prefix of another exactly when its octets are a prefix.

mod component;
mod uri;

use core::cmp::Ordering;
use core::fmt;
use core::hash::{Hash, Hasher};
use core::str::FromStr;

use bytes::{BufMut, Bytes, BytesMut};
use smallvec::SmallVec;

pub use component::{Component, OwnedComponent};
pub use uri::UriError;

use crate::encode::{put_header, tlv_len};
use crate::error::{DecodeError, Result};
use crate::tlv::{read_single_of, Element, Reader};
use crate::tlv_type;

/// Offsets of components inside a name's value; inline up to 16 components.
type Offsets = SmallVec<[u16; 16]>;

/// Longest name value (concatenated components) Kite accepts: component offsets are 16-bit.
/// NDN packets are limited to 8800 octets in practice, so no real name comes near it.
pub const MAX_NAME_VALUE_LEN: usize = u16::MAX as usize;

/// An NDN name.
#[derive(Default)]
pub struct Name {
    /// The buffer holding the value: the whole packet for a decoded name.
    buf: Bytes,
    /// Where the value starts in `buf`.
    start: u32,
    /// Octets of the value (at most [`MAX_NAME_VALUE_LEN`]).
    len: u16,
    /// Offset of each component in the value.
    starts: Offsets,
}

impl Clone for Name {
    /// Shares the buffer; the offsets are copied in one block (the derived clone copied them one
    /// by one: ~100 instructions per clone, a few clones per forwarded packet).
    #[inline]
    fn clone(&self) -> Self {
        Name {
            buf: self.buf.clone(),
            start: self.start,
            len: self.len,
            starts: Offsets::from_slice(&self.starts),
        }
    }
}

impl Name {
    /// The empty name `/`.
    pub fn root() -> Self {
        Name::default()
    }

    /// Decodes a whole Name element (TLV-TYPE 7) that fills `wire`.
    pub fn decode(wire: Bytes) -> Result<Self> {
        let el = read_single_of(&wire, tlv_type::NAME)?;
        Self::from_element(&wire, &el)
    }

    /// The name held by `el`, an element of `packet`; shares `packet`'s buffer.
    #[inline]
    pub fn from_element(packet: &Bytes, el: &Element<'_>) -> Result<Self> {
        let (starts, _) = scan_components(el.value)?;
        Ok(Self::at(packet.clone(), el, starts))
    }

    /// A name whose value is `el`'s value inside `buf`; `el` was scanned already.
    #[inline(always)]
    fn at(buf: Bytes, el: &Element<'_>, starts: Offsets) -> Self {
        Name {
            buf,
            start: el.value_start as u32,
            len: el.value.len() as u16,
            starts,
        }
    }

    /// Decodes the TLV-VALUE of a Name (concatenated components).
    pub fn from_value(value: Bytes) -> Result<Self> {
        let (starts, _) = scan_components(&value)?;
        Ok(Name {
            len: value.len() as u16,
            buf: value,
            start: 0,
            starts,
        })
    }

    /// A name over the whole of `value`, whose components start at `starts`.
    ///
    /// # Panics
    /// When `value` is longer than [`MAX_NAME_VALUE_LEN`] (names are built that long only by
    /// mistake; decoding such a name is a typed error).
    fn from_parts(value: Bytes, starts: Offsets) -> Self {
        Name {
            len: offset16(value.len()),
            buf: value,
            start: 0,
            starts,
        }
    }

    /// A name made of `components`.
    pub fn from_components<'a>(components: impl IntoIterator<Item = Component<'a>>) -> Self {
        let comps: SmallVec<[Component<'a>; 16]> = components.into_iter().collect();
        let len: usize = comps.iter().map(Component::encoded_len).sum();
        let mut buf = BytesMut::with_capacity(len);
        let mut starts = Offsets::new();
        for c in &comps {
            starts.push(offset16(buf.len()));
            c.encode(&mut buf);
        }
        Name::from_parts(buf.freeze(), starts)
    }

    /// Number of components.
    #[inline]
    pub fn len(&self) -> usize {
        self.starts.len()
    }

    /// Whether this is the empty name `/`.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }

    /// Component `i`, counting from 0; negative-style access is [`Name::last`].
    #[inline]
    pub fn get(&self, i: usize) -> Option<Component<'_>> {
        let start = usize::from(*self.starts.get(i)?);
        let end = self.end_of(i);
        Some(parse_component(&self.value()[start..end]))
    }

    /// The last component.
    #[inline]
    pub fn last(&self) -> Option<Component<'_>> {
        self.len().checked_sub(1).and_then(|i| self.get(i))
    }

    /// Whether the last component is an ImplicitSha256DigestComponent, read from its first
    /// two octets (type 1, length 32) rather than by parsing the component: the tables ask
    /// this of every name they insert and remove.
    #[inline]
    pub fn ends_in_implicit_digest(&self) -> bool {
        let value = self.value();
        self.starts.last().is_some_and(|&start| {
            let start = usize::from(start);
            value.len() - start == 34 && value[start..start + 2] == [1, 32]
        })
    }

    /// The components in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = Component<'_>> + '_ {
        (0..self.len()).map(move |i| self.get(i).expect("index is in range"))
    }

    /// The first `n` components (all of them when `n` exceeds the length), sharing this name's
    /// buffer.
    pub fn prefix(&self, n: usize) -> Name {
        let n = n.min(self.len());
        Name {
            buf: self.buf.clone(),
            start: self.start,
            len: self.offset_of(n) as u16,
            starts: Offsets::from_slice(&self.starts[..n]),
        }
    }

    /// The octets of the first `n` components' encodings (all when `n` exceeds the length):
    /// what a dispatch or FIB hash covers for a prefix of length `n`.
    #[inline]
    pub fn prefix_octets(&self, n: usize) -> &[u8] {
        &self.value()[..self.offset_of(n.min(self.len()))]
    }

    /// Octets of the first `n` components' encodings: `prefix_octets(n).len()` without
    /// slicing the value (a loop over every prefix reads one offset each).
    #[inline]
    pub fn prefix_len(&self, n: usize) -> usize {
        self.offset_of(n.min(self.len()))
    }

    /// Whether this name is a prefix of (or equal to) `other`.
    #[inline]
    pub fn is_prefix_of(&self, other: &Name) -> bool {
        other.value().starts_with(self.value())
    }

    /// The TLV-VALUE: the concatenated encodings of the components.
    #[inline]
    pub fn value(&self) -> &[u8] {
        let start = self.start as usize;
        &self.buf[start..start + usize::from(self.len)]
    }

    /// The TLV-VALUE as a buffer sharing this name's.
    pub fn value_bytes(&self) -> Bytes {
        let start = self.start as usize;
        self.buf.slice(start..start + usize::from(self.len))
    }

    /// Makes the name hold only its own value, copied into a buffer of its own, so keeping
    /// it no longer keeps the (possibly much larger) buffer it was decoded from.
    pub fn detach(&mut self) {
        self.buf = crate::pool::copy(self.value());
        self.start = 0;
    }

    /// Copies the whole buffer the name lives in (for a name a forwarder view decoded, its
    /// packet) into a buffer of its own ([`crate::kept`]), keeping offsets: a view kept past
    /// the burst it was read in (in a table, a queue) must not keep the receive buffer its
    /// octets were sliced from, which may be 64 KiB shared with packets long gone.
    pub(crate) fn detach_backing(&mut self) {
        self.buf = crate::pool::copy(&self.buf);
    }

    /// [`Name::detach_backing`] into a reusable buffer ([`crate::pool::copy_reusable`]),
    /// for a holder that hands it back with [`Name::give_back_backing`].
    pub(crate) fn detach_backing_reusable(&mut self) {
        self.buf = crate::pool::copy_reusable(&self.buf);
    }

    /// Drops the name, handing its buffer to [`crate::pool::give_back`]: only for a name
    /// detached with [`crate::InterestView::detach_reusable`] (or sharing such a copy).
    pub fn give_back_backing(self) {
        crate::pool::give_back(self.buf);
    }

    /// Octets of the buffer the name keeps alive (the view of it this name holds: its value,
    /// or the whole packet for a decoded name).
    #[inline]
    pub fn held_len(&self) -> usize {
        self.buf.len()
    }

    /// The buffer the name lives in: for a name decoded by a forwarder view, the whole packet.
    #[inline]
    pub(crate) fn backing(&self) -> &Bytes {
        &self.buf
    }

    /// Octets of the encoded Name element.
    #[inline]
    pub fn encoded_len(&self) -> usize {
        tlv_len(tlv_type::NAME, usize::from(self.len))
    }

    /// Writes the Name element.
    #[inline]
    pub fn encode(&self, out: &mut impl BufMut) {
        put_header(out, tlv_type::NAME, usize::from(self.len));
        out.put_slice(self.value());
    }

    /// The encoded Name element in a new buffer.
    pub fn to_wire(&self) -> Bytes {
        let mut b = BytesMut::with_capacity(self.encoded_len());
        self.encode(&mut b);
        b.freeze()
    }

    /// Appends a component.
    ///
    /// # Panics
    /// When the name would exceed [`MAX_NAME_VALUE_LEN`] octets: for names built locally. A
    /// name that grows from a peer's packet uses [`Name::checked_append`].
    pub fn push(&mut self, c: Component<'_>) {
        let mut buf = BytesMut::with_capacity(usize::from(self.len) + c.encoded_len());
        buf.put_slice(self.value());
        let mut starts = core::mem::take(&mut self.starts);
        starts.push(offset16(buf.len()));
        c.encode(&mut buf);
        *self = Name::from_parts(buf.freeze(), starts);
    }

    /// This name with `c` appended.
    pub fn append(mut self, c: Component<'_>) -> Name {
        self.push(c);
        self
    }

    /// This name with `c` appended, or `None` when the result would exceed
    /// [`MAX_NAME_VALUE_LEN`] octets (so no such name can match anything Kite holds).
    pub fn checked_append(self, c: Component<'_>) -> Option<Name> {
        let fits = usize::from(self.len) + c.encoded_len() <= MAX_NAME_VALUE_LEN;
        fits.then(|| self.append(c))
    }

    /// This name with a GenericNameComponent appended.
    pub fn append_generic(self, value: &[u8]) -> Name {
        self.append(Component::generic(value))
    }

    /// Parses the URI form, e.g. `/a/seg=3/v=7/32=meta/%00%01`.
    pub fn from_uri(uri: &str) -> core::result::Result<Name, UriError> {
        uri::parse_name(uri)
    }

    /// The URI form, e.g. `/a/seg=3`.
    pub fn to_uri(&self) -> String {
        self.to_string()
    }

    /// Where the ParametersSha256DigestComponent is.
    pub(crate) fn params_digest(&self) -> ParamsDigest {
        let mut found = ParamsDigest::Absent;
        for (i, &start) in self.starts.iter().enumerate() {
            found = found.see(self.value()[usize::from(start)], i);
        }
        found
    }

    /// Offset in `value` where component `i` starts (`value.len()` for `i == len`).
    #[inline]
    fn offset_of(&self, i: usize) -> usize {
        self.starts
            .get(i)
            .map_or(usize::from(self.len), |&s| usize::from(s))
    }

    /// Offset in `value` one past component `i`.
    #[inline]
    fn end_of(&self, i: usize) -> usize {
        self.offset_of(i + 1)
    }
}

/// A Name element checked while its packet is borrowed, to become a [`Name`] that takes over
/// the packet buffer once the borrow ends (so a forwarder view never touches the refcount).
#[derive(Debug)]
pub(crate) struct ScannedName {
    start: u32,
    len: u16,
    starts: Offsets,
    /// Where the ParametersSha256DigestComponent is.
    pub(crate) params_digest: ParamsDigest,
}

impl ScannedName {
    /// Checks the Name element `el`.
    #[inline(always)]
    pub(crate) fn scan(el: &Element<'_>) -> Result<Self> {
        let (starts, params_digest) = scan_components(el.value)?;
        Ok(ScannedName {
            start: el.value_start as u32,
            len: el.value.len() as u16,
            starts,
            params_digest,
        })
    }

    /// Whether the name has no component.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }

    /// The name, living in `packet`, the buffer that was scanned.
    #[inline(always)]
    pub(crate) fn into_name(self, packet: Bytes) -> Name {
        Name {
            buf: packet,
            start: self.start,
            len: self.len,
            starts: self.starts,
        }
    }
}

/// Where a name's ParametersSha256DigestComponent is, found while scanning it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ParamsDigest {
    /// The name has none.
    Absent,
    /// The name has exactly one, at this index.
    At(u16),
    /// The name has more than one (never valid).
    Several,
}

impl ParamsDigest {
    /// The index of the only digest component; `Err` when there are several.
    pub(crate) fn index(self) -> Result<Option<usize>> {
        match self {
            ParamsDigest::Absent => Ok(None),
            ParamsDigest::At(i) => Ok(Some(usize::from(i))),
            ParamsDigest::Several => Err(DecodeError::ParamsDigestPlacement),
        }
    }

    /// Accounts for component `i`, whose encoding starts with `first_octet`. Type 2 is below
    /// 253, so its VAR-NUMBER is that single octet.
    #[inline(always)]
    fn see(self, first_octet: u8, i: usize) -> Self {
        if u64::from(first_octet) != tlv_type::PARAMETERS_SHA256_DIGEST_COMPONENT {
            return self;
        }
        // A name value of at most 65535 octets has fewer than 65536 components.
        let i = i as u16;
        match self {
            ParamsDigest::Absent => ParamsDigest::At(i),
            _ => ParamsDigest::Several,
        }
    }
}

/// A component offset, which fits: names are checked against [`MAX_NAME_VALUE_LEN`].
///
/// # Panics
/// When a name being built grows past [`MAX_NAME_VALUE_LEN`] octets.
fn offset16(at: usize) -> u16 {
    u16::try_from(at).expect("name longer than MAX_NAME_VALUE_LEN octets")
}

/// Validates the components of a Name value and returns where each starts.
#[inline(always)]
fn scan_components(value: &[u8]) -> Result<(Offsets, ParamsDigest)> {
    if value.len() > MAX_NAME_VALUE_LEN {
        return Err(DecodeError::InvalidValue {
            typ: tlv_type::NAME,
            reason: "name longer than 65535 octets",
        });
    }
    let mut starts = Offsets::new();
    let mut digest = ParamsDigest::Absent;
    let mut r = Reader::new(value);
    while !r.is_empty() {
        let el = r.read()?;
        let checked = el.typ == tlv_type::IMPLICIT_SHA256_DIGEST_COMPONENT
            || el.typ == tlv_type::PARAMETERS_SHA256_DIGEST_COMPONENT
            || el.typ > 0xFFFF;
        if checked {
            check_component(&el)?;
        }
        digest = digest.see(value[el.start], starts.len());
        starts.push(el.start as u16);
    }
    Ok((starts, digest))
}

/// The rules for the component types that have any: digests are 32 octets; types fit 16 bits.
#[cold]
fn check_component(el: &Element<'_>) -> Result<()> {
    if el.typ > 0xFFFF {
        return Err(DecodeError::InvalidValue {
            typ: el.typ,
            reason: "name component type above 65535",
        });
    }
    if el.value.len() != 32 {
        return Err(DecodeError::InvalidLength {
            typ: el.typ,
            len: el.value.len(),
        });
    }
    Ok(())
}

/// Checks the components of a Name value without keeping their offsets.
pub(crate) fn validate_components(value: &[u8]) -> Result<()> {
    scan_components(value).map(drop)
}

/// Splits a component encoding already validated by [`scan_components`].
#[inline]
fn parse_component(enc: &[u8]) -> Component<'_> {
    let el = Reader::new(enc)
        .read()
        .expect("component was validated when the name was built");
    Component::new(el.typ, el.value).expect("component type was validated")
}

impl PartialEq for Name {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        self.value() == other.value()
    }
}

impl Eq for Name {}

impl Hash for Name {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.value().hash(state);
    }
}

impl Ord for Name {
    /// NDN canonical order: component by component; a proper prefix sorts first.
    fn cmp(&self, other: &Self) -> Ordering {
        self.iter().cmp(other.iter())
    }
}

impl PartialOrd for Name {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return f.write_str("/");
        }
        for c in self.iter() {
            f.write_str("/")?;
            uri::write_component(f, c)?;
        }
        Ok(())
    }
}

impl fmt::Debug for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Name({self})")
    }
}

impl FromStr for Name {
    type Err = UriError;
    fn from_str(s: &str) -> core::result::Result<Self, UriError> {
        Name::from_uri(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> Name {
        s.parse().unwrap()
    }

    #[test]
    fn decode_shares_the_buffer_and_indexes_components() {
        let wire = Bytes::from_static(&[7, 8, 8, 1, b'a', 50, 1, 3, 32, 0]);
        let name = Name::decode(wire.clone()).unwrap();
        assert_eq!(name.len(), 3);
        assert_eq!(name.get(0).unwrap().value(), b"a");
        assert_eq!(name.get(1).unwrap().as_segment(), Some(3));
        assert_eq!(name.get(2).unwrap().typ(), tlv_type::KEYWORD_NAME_COMPONENT);
        assert!(name.get(3).is_none());
        assert_eq!(name.to_wire(), wire);
        assert_eq!(name.value().as_ptr(), wire[2..].as_ptr());
    }

    #[test]
    fn prefix_len_is_the_length_of_the_prefix_octets() {
        let decoded = Name::decode(Bytes::from_static(&[7, 6, 8, 1, b'a', 8, 1, b'b'])).unwrap();
        for name in [
            n("/"),
            n("/a"),
            n("/a/bb/seg=3"),
            n("/x/%00%01%02/y"),
            decoded,
        ] {
            for i in 0..=name.len() + 1 {
                assert_eq!(
                    name.prefix_len(i),
                    name.prefix_octets(i).len(),
                    "{name} {i}"
                );
            }
        }
    }

    #[test]
    fn ends_in_implicit_digest_agrees_with_the_parsed_component() {
        let digest = format!("sha256digest={}", "ab".repeat(32));
        let generic_lookalike = format!("/a/%01%20{}", "%AB".repeat(32));
        for (uri, expected) in [
            (format!("/a/{digest}"), true),
            (format!("/{digest}"), true),
            (format!("/{digest}/b"), false),
            ("/a/b".to_string(), false),
            ("/".to_string(), false),
            (generic_lookalike, false),
        ] {
            let name = n(&uri);
            assert_eq!(name.ends_in_implicit_digest(), expected, "{uri}");
            let parsed = name
                .last()
                .is_some_and(|c| c.typ() == tlv_type::IMPLICIT_SHA256_DIGEST_COMPONENT);
            assert_eq!(parsed, expected, "{uri}");
        }
    }

    #[test]
    fn prefix_is_cheap_and_correct() {
        let name = n("/a/b/c/d");
        let p = name.prefix(2);
        assert_eq!(p, n("/a/b"));
        assert_eq!(p.value().as_ptr(), name.value().as_ptr());
        assert_eq!(name.prefix(0), Name::root());
        assert_eq!(name.prefix(10), name);
        assert_eq!(name.prefix_octets(1), &[8, 1, b'a']);
        assert!(p.is_prefix_of(&name));
        assert!(name.is_prefix_of(&name));
        assert!(!name.is_prefix_of(&p));
        assert!(!n("/a/bb").is_prefix_of(&n("/a/b")));
        assert!(!n("/a/b").is_prefix_of(&n("/a/bb")));
        assert!(Name::root().is_prefix_of(&name));
    }

    #[test]
    fn canonical_ordering() {
        let mut v = [n("/a/c"), n("/b"), n("/a"), n("/a/b"), n("/"), n("/aa")];
        v.sort();
        let s: Vec<String> = v.iter().map(Name::to_uri).collect();
        assert_eq!(s, ["/", "/a", "/a/b", "/a/c", "/b", "/aa"]);
    }

    #[test]
    fn push_and_from_components_agree() {
        let a = Name::root()
            .append_generic(b"x")
            .append(Component::new(tlv_type::VERSION_NAME_COMPONENT, &[7]).unwrap());
        let b = Name::from_components([
            Component::generic(b"x"),
            Component::new(tlv_type::VERSION_NAME_COMPONENT, &[7]).unwrap(),
        ]);
        assert_eq!(a, b);
        assert_eq!(a.to_uri(), "/x/v=7");
    }

    #[test]
    fn malformed_names_are_typed_errors() {
        // digest component of 31 octets
        let mut w = vec![7, 33, 1, 31];
        w.extend([0; 31]);
        assert_eq!(
            Name::decode(Bytes::from(w)),
            Err(DecodeError::InvalidLength { typ: 1, len: 31 })
        );
        // component type above 65535
        assert!(matches!(
            Name::decode(Bytes::from_static(&[7, 6, 254, 0, 1, 0, 0, 0])),
            Err(DecodeError::InvalidValue { .. })
        ));
        // truncated component
        assert!(matches!(
            Name::decode(Bytes::from_static(&[7, 3, 8, 5, b'a'])),
            Err(DecodeError::LengthExceedsBuffer { .. })
        ));
        // not a name
        assert_eq!(
            Name::decode(Bytes::from_static(&[8, 0])),
            Err(DecodeError::UnexpectedType {
                expected: 7,
                actual: 8
            })
        );
    }

    /// A name of one GenericNameComponent whose value (the name's) is `len` octets.
    fn name_of_value_len(len: usize) -> Name {
        let header = if len - 2 < 253 { 2 } else { 4 };
        let name = Name::from_components([Component::generic(&vec![b'n'; len - header][..])]);
        assert_eq!(name.value().len(), len);
        name
    }

    fn digest() -> OwnedComponent {
        OwnedComponent::new(tlv_type::IMPLICIT_SHA256_DIGEST_COMPONENT, vec![0xAB; 32]).unwrap()
    }

    #[test]
    fn checked_append_stops_at_the_longest_name() {
        let fits = name_of_value_len(MAX_NAME_VALUE_LEN - 34);
        let full = fits.checked_append(digest().as_ref()).unwrap();
        assert_eq!(full.value().len(), MAX_NAME_VALUE_LEN);
        assert!(full.ends_in_implicit_digest());
        assert_eq!(Name::decode(full.to_wire()).unwrap(), full);
        let over = name_of_value_len(MAX_NAME_VALUE_LEN - 33);
        assert!(over.checked_append(digest().as_ref()).is_none());
    }

    #[test]
    #[should_panic(expected = "MAX_NAME_VALUE_LEN")]
    fn push_past_the_longest_name_panics() {
        name_of_value_len(MAX_NAME_VALUE_LEN - 33).push(digest().as_ref());
    }

    #[test]
    fn decoding_refuses_a_name_longer_than_the_longest() {
        let longest = name_of_value_len(MAX_NAME_VALUE_LEN);
        assert_eq!(Name::decode(longest.to_wire()).unwrap(), longest);
        // TLV-LENGTH 65536 (5-octet form): one component of 65532 octets and its header.
        let mut long = vec![7, 0xFE, 0x00, 0x01, 0x00, 0x00, 8, 0xFD, 0xFF, 0xFC];
        long.extend(core::iter::repeat_n(b'n', 0xFFFC));
        assert_eq!(long.len() - 6, MAX_NAME_VALUE_LEN + 1);
        assert!(matches!(
            Name::decode(Bytes::from(long)),
            Err(DecodeError::InvalidValue { .. })
        ));
    }

    proptest::proptest! {
        /// Whatever is appended, a name never exceeds the longest value: `checked_append`
        /// refuses exactly the components that would make it longer, and every name it
        /// returns encodes and decodes to itself.
        #[test]
        fn checked_append_keeps_the_length_invariant(
            start in 60_000usize..=MAX_NAME_VALUE_LEN,
            extra in proptest::collection::vec(0usize..3000, 1..6),
        ) {
            let mut name = name_of_value_len(start);
            for n in extra {
                let value = vec![b'x'; n];
                let c = Component::generic(&value);
                let want = name.value().len() + c.encoded_len();
                match name.clone().checked_append(c) {
                    Some(longer) => {
                        proptest::prop_assert!(want <= MAX_NAME_VALUE_LEN);
                        proptest::prop_assert_eq!(longer.value().len(), want);
                        proptest::prop_assert_eq!(&Name::decode(longer.to_wire()).unwrap(), &longer);
                        name = longer;
                    }
                    None => proptest::prop_assert!(want > MAX_NAME_VALUE_LEN),
                }
            }
        }
    }

    #[test]
    fn long_names_spill_to_heap_and_still_work() {
        let mut name = Name::root();
        for i in 0..40u8 {
            name.push(Component::generic(&[i]));
        }
        let back = Name::decode(name.to_wire()).unwrap();
        assert_eq!(back.len(), 40);
        assert_eq!(back.get(39).unwrap().value(), &[39]);
    }
}
