//! The XDP program's verdict on a frame, in user space: the same rules as `kite_xdp` in
//! `xdp/kite_xdp.c`, written twice so the tests can hold the program to them on any input.

use crate::ether::frame::{ETHERTYPE_NDN, HEADER_LEN};

/// What the XDP program does with a frame; each verdict has its own counter in `kite_counts`,
/// at the index [`Verdict::index`] gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// An NDN frame (EtherType 0x8624): redirected to the AF_XDP socket of its receive queue,
    /// or passed to the kernel when that queue has none.
    Ndn,
    /// A whole Ethernet header of another EtherType: passed to the kernel.
    Passed,
    /// Shorter than an Ethernet header: passed to the kernel.
    Runt,
}

impl Verdict {
    /// The verdict's index in the program's `kite_counts` map.
    pub const fn index(self) -> u32 {
        match self {
            Verdict::Ndn => 0,
            Verdict::Passed => 1,
            Verdict::Runt => 2,
        }
    }
}

/// The program's verdict on `frame` (an Ethernet frame from its destination address on).
pub fn verdict(frame: &[u8]) -> Verdict {
    match frame.get(12..HEADER_LEN) {
        None => Verdict::Runt,
        Some(t) if t == ETHERTYPE_NDN.to_be_bytes() => Verdict::Ndn,
        Some(_) => Verdict::Passed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn frame(len: usize, ethertype: [u8; 2]) -> Vec<u8> {
        let mut f = vec![0xaa; len];
        if len >= HEADER_LEN {
            f[12..14].copy_from_slice(&ethertype);
        }
        f
    }

    #[test]
    fn frames_shorter_than_a_header_are_runts() {
        for len in 0..HEADER_LEN {
            assert_eq!(verdict(&frame(len, [0x86, 0x24])), Verdict::Runt, "{len}");
        }
        // 13 octets that would be NDN's if the header were whole.
        let mut short = frame(13, [0, 0]);
        short[12] = 0x86;
        assert_eq!(verdict(&short), Verdict::Runt);
    }

    #[test]
    fn the_ndn_ethertype_is_ndn_from_a_bare_header_on() {
        for len in [HEADER_LEN, HEADER_LEN + 1, 60, 1514, 9000] {
            assert_eq!(verdict(&frame(len, [0x86, 0x24])), Verdict::Ndn, "{len}");
        }
    }

    #[test]
    fn other_ethertypes_pass() {
        // IPv4, ARP, IPv6, a VLAN tag (a tagged NDN frame is not taken), NDN's octets swapped,
        // and one octet off either way.
        for t in [
            [0x08, 0x00],
            [0x08, 0x06],
            [0x86, 0xdd],
            [0x81, 0x00],
            [0x24, 0x86],
            [0x86, 0x23],
            [0x86, 0x25],
        ] {
            assert_eq!(verdict(&frame(HEADER_LEN, t)), Verdict::Passed, "{t:x?}");
        }
    }

    #[test]
    fn indexes_are_the_programs_counters() {
        // COUNT_NDN, COUNT_PASSED and COUNT_RUNT in xdp/kite_xdp.c.
        assert_eq!(Verdict::Ndn.index(), 0);
        assert_eq!(Verdict::Passed.index(), 1);
        assert_eq!(Verdict::Runt.index(), 2);
    }

    proptest! {
        /// Only the length and octets 12 and 13 decide.
        #[test]
        fn only_the_length_and_the_ethertype_decide(
            f in proptest::collection::vec(any::<u8>(), 0..100),
        ) {
            let want = if f.len() < HEADER_LEN {
                Verdict::Runt
            } else if f[12] == 0x86 && f[13] == 0x24 {
                Verdict::Ndn
            } else {
                Verdict::Passed
            };
            prop_assert_eq!(verdict(&f), want);
            let mut other = vec![0x55; f.len()];
            if f.len() >= HEADER_LEN {
                other[12..14].copy_from_slice(&f[12..14]);
            }
            prop_assert_eq!(verdict(&other), want);
        }
    }
}
