//! TLV helpers shared by the management types: the [`Tlv`] trait, field writers, and the two
//! decoding disciplines NFD uses (lenient for ControlParameters, order-strict for datasets).

use bytes::Bytes;
use kite_packet::encode::{put_header, put_nonneg_tlv, put_tlv};
use kite_packet::tlv::{read_single_of, Element, Reader};
use kite_packet::{DecodeError, Name, Result};

/// A management element with its own TLV-TYPE: encodes to and decodes from one element.
pub trait Tlv: Sized {
    /// The element's TLV-TYPE.
    const TYPE: u64;

    /// Writes the TLV-VALUE.
    fn encode_value(&self, out: &mut Vec<u8>);

    /// Decodes the value of `el`, an element inside `buf` (names share `buf`).
    fn decode_value(buf: &Bytes, el: &Element<'_>) -> Result<Self>;

    /// Appends the whole element to `out`.
    fn write(&self, out: &mut Vec<u8>) {
        put_nested(out, Self::TYPE, |v| self.encode_value(v));
    }

    /// The whole element.
    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.write(&mut out);
        out
    }

    /// Decodes one element of this type that fills `wire`.
    fn decode(wire: &Bytes) -> Result<Self> {
        let el = read_single_of(wire, Self::TYPE)?;
        Self::decode_value(wire, &el)
    }
}

/// A dataset payload: the concatenation of `items`' elements.
pub fn encode_items<T: Tlv>(items: &[T]) -> Vec<u8> {
    let mut out = Vec::new();
    for item in items {
        item.write(&mut out);
    }
    out
}

/// Decodes a dataset payload made of elements of type `T::TYPE`.
pub fn decode_items<T: Tlv>(content: &Bytes) -> Result<Vec<T>> {
    let mut r = Reader::new(content);
    let mut items = Vec::new();
    while let Some(el) = r.next_element() {
        let el = el?.of_type(T::TYPE)?;
        items.push(T::decode_value(content, &el)?);
    }
    Ok(items)
}

/// Writes an element whose value `fill` writes.
pub(crate) fn put_nested(out: &mut Vec<u8>, typ: u64, fill: impl FnOnce(&mut Vec<u8>)) {
    let mut value = Vec::new();
    fill(&mut value);
    put_tlv(out, typ, &value);
}

/// Writes a NonNegativeInteger element.
pub(crate) fn put_nonneg(out: &mut Vec<u8>, typ: u64, n: u64) {
    put_nonneg_tlv(out, typ, n);
}

/// Writes a NonNegativeInteger element when `n` is present.
pub(crate) fn put_opt_nonneg(out: &mut Vec<u8>, typ: u64, n: Option<u64>) {
    if let Some(n) = n {
        put_nonneg(out, typ, n);
    }
}

/// Writes a string element.
pub(crate) fn put_str(out: &mut Vec<u8>, typ: u64, s: &str) {
    put_tlv(out, typ, s.as_bytes());
}

/// Writes a Name element.
pub(crate) fn put_name(out: &mut Vec<u8>, name: &Name) {
    put_header(out, kite_packet::tlv_type::NAME, name.value().len());
    out.extend_from_slice(name.value());
}

/// The value of `el` as UTF-8 text.
pub(crate) fn string(el: &Element<'_>) -> Result<String> {
    String::from_utf8(el.value.to_vec()).map_err(|_| DecodeError::InvalidValue {
        typ: el.typ,
        reason: "not UTF-8",
    })
}

/// The Name nested in `el` (Strategy { Name }).
pub(crate) fn nested_name(buf: &Bytes, el: &Element<'_>) -> Result<Name> {
    let mut r = el.children();
    let name = r.expect(kite_packet::tlv_type::NAME)?;
    while let Some(extra) = r.next_element() {
        extra?.skip_unknown()?;
    }
    Name::from_element(buf, &name)
}

/// Fails with `Missing` when a required field is absent.
pub(crate) fn required<T>(v: Option<T>, typ: u64) -> Result<T> {
    v.ok_or(DecodeError::Missing { typ })
}

/// Walks the elements `r` reads in the order NFD's order-strict decoders demand: recognized
/// types (listed in encoding order) must not go backwards; only `repeated` may appear more than
/// once; unknown non-critical elements are skipped and unknown critical ones are errors.
pub(crate) fn walk_strict<'a>(
    mut r: Reader<'a>,
    order: &[u64],
    repeated: Option<u64>,
    mut field: impl FnMut(&Element<'a>) -> Result<()>,
) -> Result<()> {
    let mut last = 0usize;
    while let Some(child) = r.next_element() {
        let child = child?;
        match order.iter().position(|&t| t == child.typ) {
            Some(i) => {
                let rank = i + 1;
                if rank < last {
                    return Err(DecodeError::OutOfOrder { typ: child.typ });
                }
                if rank == last && repeated != Some(child.typ) {
                    return Err(DecodeError::Duplicate { typ: child.typ });
                }
                last = rank;
                field(&child)?;
            }
            None => child.skip_unknown()?,
        }
    }
    Ok(())
}

/// Walks the children of `el` as ndn-cxx reads ControlParameters: any order, the first
/// occurrence of each type wins, unrecognized types are ignored.
pub(crate) fn walk_lenient<'a>(
    el: &Element<'a>,
    mut field: impl FnMut(&Element<'a>) -> Result<()>,
) -> Result<()> {
    let mut seen: Vec<u64> = Vec::new();
    let mut r = el.children();
    while let Some(child) = r.next_element() {
        let child = child?;
        if seen.contains(&child.typ) {
            continue;
        }
        seen.push(child.typ);
        field(&child)?;
    }
    Ok(())
}
