//! Encoded packets the tests of several crates send.

use bytes::Bytes;
use kite_packet::{Interest, Name, Nonce};

/// An encoded Interest for `name` with `nonce` and an InterestLifetime of `lifetime_ms`.
///
/// # Panics
///
/// When `name` is not a valid NDN URI.
pub fn interest(name: &str, nonce: impl Into<Nonce>, lifetime_ms: u64) -> Bytes {
    let mut i = Interest::new(name.parse::<Name>().expect("a valid name"));
    i.nonce = Some(nonce.into());
    i.lifetime = Some(lifetime_ms);
    i.encode()
}

/// An encoded Interest named under `prefix` (with its ParametersSha256DigestComponent), with
/// `nonce` and a lifetime of 4 s, whose ApplicationParameters make it exactly `len` octets long.
///
/// # Panics
///
/// When `prefix` is not a valid NDN URI or `len` is under 300 octets.
pub fn interest_of_len(prefix: &str, nonce: impl Into<Nonce>, len: usize) -> Bytes {
    let nonce = nonce.into();
    let make = |params: usize| {
        let mut i = Interest::new(prefix.parse::<Name>().expect("a valid name"));
        i.nonce = Some(nonce);
        i.lifetime = Some(4000);
        i.app_params = Some(Bytes::from(vec![0x5A; params]));
        i.encode()
    };
    // 200 octets short, then the difference: no TLV-LENGTH changes size class in between.
    let probe = make(len - 200).len();
    let wire = make(len - 200 + len - probe);
    assert_eq!(wire.len(), len);
    wire
}

#[cfg(test)]
mod tests {
    use super::*;
    use kite_packet::InterestView;

    #[test]
    fn an_interest_carries_its_name_nonce_and_lifetime() {
        let i = InterestView::decode(interest("/a/b", 7u32, 4000)).unwrap();
        assert_eq!(i.name, "/a/b".parse::<Name>().unwrap());
        assert_eq!(i.nonce, Some(Nonce::from(7)));
        assert_eq!(i.lifetime, Some(4000));
    }

    #[test]
    fn interests_of_a_length_are_that_long_across_size_classes() {
        for len in [500, 9000, 70_000] {
            let wire = interest_of_len("/big", 3u32, len);
            assert_eq!(wire.len(), len);
            let i = InterestView::decode(wire).unwrap();
            assert_eq!(i.nonce, Some(Nonce::from(3)));
            assert!(i.has_params());
        }
    }
}
