//! The part of QPACK (RFC 9204) a WebTransport server reads: a request's field section
//! encoded with the static table only (Kite announces a dynamic table of 0), from which the
//! three fields a CONNECT is judged by are taken. Every integer and length is checked
//! (at most 62 bits, within the input), since any client writes it; a reference to the
//! dynamic table is an error.

/// The request fields Kite judges a CONNECT by.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Request {
    pub method: Option<String>,
    pub protocol: Option<String>,
    pub path: Option<String>,
}

/// Why a field section was refused.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Malformed;

/// The static table entries whose names Kite reads (RFC 9204, Appendix A): `:path /` and
/// the `:method` values; any other index below 99 names a field Kite ignores.
fn static_entry(index: u64) -> Result<Option<(&'static str, &'static str)>, Malformed> {
    const METHODS: [&str; 7] = ["CONNECT", "DELETE", "GET", "HEAD", "OPTIONS", "POST", "PUT"];
    Ok(match index {
        1 => Some((":path", "/")),
        15..=21 => Some((":method", METHODS[(index - 15) as usize])),
        0..=98 => None,
        _ => return Err(Malformed),
    })
}

/// Reads a prefixed integer (RFC 9204, 4.1.1, after RFC 7541, 5.1) whose prefix is the low
/// `bits` of the first octet.
fn integer(b: &mut &[u8], bits: u32) -> Result<u64, Malformed> {
    let (&first, rest) = b.split_first().ok_or(Malformed)?;
    *b = rest;
    let mask = (1u64 << bits) - 1;
    let mut value = u64::from(first) & mask;
    if value < mask {
        return Ok(value);
    }
    for shift in (0..63).step_by(7) {
        let (&octet, rest) = b.split_first().ok_or(Malformed)?;
        *b = rest;
        let add = u64::from(octet & 0x7f)
            .checked_shl(shift)
            .filter(|a| a >> shift == u64::from(octet & 0x7f))
            .ok_or(Malformed)?;
        value = value.checked_add(add).ok_or(Malformed)?;
        if octet & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err(Malformed)
}

/// Reads a string literal whose length has a `bits`-bit prefix, the Huffman flag the bit
/// above it.
fn string(b: &mut &[u8], bits: u32) -> Result<String, Malformed> {
    let huffman = b.first().ok_or(Malformed)? & (1 << bits) != 0;
    let len = usize::try_from(integer(b, bits)?).map_err(|_| Malformed)?;
    if len > b.len() {
        return Err(Malformed);
    }
    let (raw, rest) = b.split_at(len);
    *b = rest;
    let octets = match huffman {
        true => {
            let mut out = Vec::with_capacity(len * 2);
            httlib_huffman::decode(raw, &mut out, httlib_huffman::DecoderSpeed::OneBit)
                .map_err(|_| Malformed)?;
            out
        }
        false => raw.to_vec(),
    };
    String::from_utf8(octets).map_err(|_| Malformed)
}

/// The fields of a request's encoded field section `b`.
pub(crate) fn request(mut b: &[u8]) -> Result<Request, Malformed> {
    let b = &mut b;
    // Required Insert Count 0 (no dynamic table), then the Delta Base.
    if integer(b, 8)? != 0 {
        return Err(Malformed);
    }
    integer(b, 7)?;
    let mut r = Request::default();
    while let Some(&first) = b.first() {
        let (name, value) = if first & 0x80 != 0 {
            // Indexed field line; the static table only.
            if first & 0x40 == 0 {
                return Err(Malformed);
            }
            match static_entry(integer(b, 6)?)? {
                Some((n, v)) => (n.to_owned(), v.to_owned()),
                None => continue,
            }
        } else if first & 0x40 != 0 {
            // Literal field line with a name reference; the static table only.
            if first & 0x10 == 0 {
                return Err(Malformed);
            }
            let name = static_entry(integer(b, 4)?)?;
            let value = string(b, 7)?;
            match name {
                Some((n, _)) => (n.to_owned(), value),
                None => continue,
            }
        } else if first & 0x20 != 0 {
            // Literal field line with a literal name.
            let name = string(b, 3)?;
            (name, string(b, 7)?)
        } else {
            // Post-base references name the dynamic table.
            return Err(Malformed);
        };
        let slot = match name.as_str() {
            ":method" => &mut r.method,
            ":protocol" => &mut r.protocol,
            ":path" => &mut r.path,
            _ => continue,
        };
        *slot = Some(value);
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use wtransport_proto::headers::Headers;

    /// What wtransport-proto's encoder (static table, Huffman strings) writes for `fields`.
    fn encoded(fields: &[(&str, &str)]) -> Vec<u8> {
        let h: Headers = fields.iter().copied().collect();
        h.generate_frame().payload().to_vec()
    }

    #[test]
    fn a_connect_request_is_read_as_an_encoder_writes_it() {
        let b = encoded(&[
            (":method", "CONNECT"),
            (":protocol", "webtransport"),
            (":scheme", "https"),
            (":authority", "127.0.0.1:4433"),
            (":path", "/ndn"),
            ("origin", "https://example.net"),
        ]);
        let r = request(&b).unwrap();
        assert_eq!(r.method.as_deref(), Some("CONNECT"));
        assert_eq!(r.protocol.as_deref(), Some("webtransport"));
        assert_eq!(r.path.as_deref(), Some("/ndn"));
        let get = request(&encoded(&[(":method", "GET"), (":path", "/")])).unwrap();
        assert_eq!(
            (get.method.as_deref(), get.path.as_deref()),
            (Some("GET"), Some("/"))
        );
    }

    #[test]
    fn overlong_integers_dynamic_references_and_short_strings_are_refused() {
        // A Required Insert Count that never ends, and one past 62 bits.
        assert_eq!(request(&[0xff; 40]), Err(Malformed));
        assert_eq!(
            request(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]),
            Err(Malformed)
        );
        // A dynamic table reference, a post-base one, a string past the end.
        assert_eq!(request(&[0, 0, 0x81]), Err(Malformed));
        assert_eq!(request(&[0, 0, 0x10]), Err(Malformed));
        assert_eq!(request(&[0, 0, 0x27, 0x05, b'a']), Err(Malformed));
        // A static index past the table.
        assert_eq!(request(&[0, 0, 0xff, 0x30]), Err(Malformed));
        assert_eq!(request(&[0, 0]), Ok(Request::default()));
    }
}
