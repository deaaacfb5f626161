//! Ethernet addresses, as reassembly keys a sender by them and face URIs write them, and the
//! two facts of Ethernet II framing that both the Ethernet faces and the XDP program's parser
//! need: NDN's EtherType and the header's length.

use core::fmt;
use core::str::FromStr;

use thiserror::Error;

/// NDN's EtherType.
pub const ETHERTYPE_NDN: u16 = 0x8624;

/// Octets of the Ethernet II header (destination, source, EtherType).
pub const ETHER_HEADER_LEN: usize = 14;

/// A 48-bit Ethernet address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MacAddr(pub [u8; 6]);

impl MacAddr {
    /// Whether this is a group (multicast or broadcast) address: the I/G bit of the first
    /// octet is set.
    pub fn is_multicast(&self) -> bool {
        self.0[0] & 1 == 1
    }
}

impl fmt::Display for MacAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [a, b, c, d, e, g] = self.0;
        write!(f, "{a:02x}:{b:02x}:{c:02x}:{d:02x}:{e:02x}:{g:02x}")
    }
}

impl FromStr for MacAddr {
    type Err = InvalidMac;

    /// Six hex octets separated by `:` or `-` (either case).
    fn from_str(s: &str) -> Result<Self, InvalidMac> {
        let sep = if s.contains('-') { '-' } else { ':' };
        let mut out = [0u8; 6];
        let mut parts = s.split(sep);
        for o in &mut out {
            let p = parts.next().ok_or(InvalidMac)?;
            if p.len() != 2 {
                return Err(InvalidMac);
            }
            *o = u8::from_str_radix(p, 16).map_err(|_| InvalidMac)?;
        }
        if parts.next().is_some() {
            return Err(InvalidMac);
        }
        Ok(MacAddr(out))
    }
}

/// A string that is not six hex octets separated by `:` or `-`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[error("invalid Ethernet address")]
pub struct InvalidMac;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn six_hex_octets_by_either_separator_and_nothing_else() {
        let mac = MacAddr([0x01, 0x00, 0x5e, 0x00, 0x17, 0xaa]);
        assert_eq!("01:00:5e:00:17:aa".parse(), Ok(mac));
        assert_eq!("01-00-5E-00-17-AA".parse(), Ok(mac));
        assert_eq!(mac.to_string(), "01:00:5e:00:17:aa");
        assert!(mac.is_multicast());
        assert!(!MacAddr([2, 0, 0, 0, 0, 1]).is_multicast());
        for bad in [
            "01:00:5e:00:17",
            "01:00:5e:00:17:aa:bb",
            "1:00:5e:00:17:aa",
            "zz:00:5e:00:17:aa",
        ] {
            assert_eq!(bad.parse::<MacAddr>(), Err(InvalidMac), "{bad}");
        }
    }
}
