//! Steering: which I/O thread's AF_XDP socket (its *lane*) the XDP program hands an NDN frame
//! to, so that each packet is read by the thread whose forwarding shard handles it and none
//! crosses threads on its way in. An Interest goes to the lane of its name's Name Dispatch
//! Table entry, a Data or Nack with a Kite PIT token to the lane of the shard the token names
//! (the input dispatch "NDN-DPDK: NDN Forwarding at 100 Gbps on Commodity Hardware" leaves to
//! future work, done here before the frame reaches user space). Fragments, link-reliability
//! frames, tokenless Data and anything the parser cannot read go to the channel's own thread
//! (home), which holds the face state they need.
//!
//! [`steer_by`] is the program's parser (`lane_of` in `xdp/kite_xdp.c`) in user space, bound
//! for bound, so the tests can hold the kernel to it on any input, and so a lane can check
//! that what it was handed is its to take.

use std::ops::Range;

/// Name components the program walks, LpPacket header fields it reads past, and octets of a
/// name it hashes (`STEER_COMPONENTS`, `STEER_FIELDS`, `STEER_HASHED`): a packet beyond them
/// goes home.
pub const STEER_COMPONENTS: usize = 16;
/// See [`STEER_COMPONENTS`].
pub const STEER_FIELDS: usize = 8;
/// See [`STEER_COMPONENTS`].
pub const STEER_HASHED: usize = 256;
/// Offsets and TLV lengths past this are past any frame's end (`OFF_MASK`).
const OFF_MAX: usize = 0x1fff;
/// Entries of the program's copy of the Name Dispatch Table (`NDT_SLOTS`).
pub const NDT_SLOTS: usize = 1 << 16;
/// The length of Kite's PIT tokens, whose first octet is the forwarding shard.
const KITE_TOKEN_LEN: usize = 6;

const TLV_INTEREST: u8 = 0x05;
const TLV_DATA: u8 = 0x06;
const TLV_NAME: u32 = 0x07;
const TLV_DIGEST: u32 = 0x01;
const LP_PACKET: u32 = 0x64;
const LP_FRAGMENT: u32 = 0x50;
const LP_SEQUENCE: u32 = 0x51;
const LP_FRAG_INDEX: u32 = 0x52;
const LP_FRAG_COUNT: u32 = 0x53;
const LP_PIT_TOKEN: u32 = 0x62;
const LP_NACK: u32 = 0x0320;
const LP_ACK: u32 = 0x0344;
const LP_TX_SEQUENCE: u32 = 0x0348;

/// How the program steers an interface's NDN frames.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Steering {
    /// The lane of every frame not steered: the I/O thread that owns the channel.
    pub home: u8,
    /// Steering by name and token; `None`: every NDN frame goes home.
    pub dispatch: Option<Dispatch>,
}

/// The forwarder's dispatch, as the program needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dispatch {
    /// The name hash's SipHash-1-3 key.
    pub key: (u64, u64),
    /// Components of an Interest's name the Name Dispatch Table hashes (`usize::MAX`: all).
    pub prefix_len: usize,
    /// The lane of each slot of the Name Dispatch Table: a power of two of them, at most
    /// [`NDT_SLOTS`].
    pub lanes: Vec<u8>,
    /// The lane of each forwarding shard, by a PIT token's first octet.
    pub token_lanes: [u8; 256],
}

/// What the program steers an NDN packet by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SteerBy {
    /// Nothing: it goes home.
    Home,
    /// The hash of these octets of the packet: the value of an Interest's name, from its
    /// start to the end of the components the Name Dispatch Table hashes.
    Name(Range<usize>),
    /// A Kite PIT token whose first octet is this shard.
    Token(u8),
}

impl Steering {
    /// The lane of the NDN packet `payload` (an NDN frame after its Ethernet header), with
    /// `hash` the forwarder's name hash of octets under [`Dispatch::key`].
    pub fn lane(&self, payload: &[u8], hash: impl FnOnce(&[u8]) -> u64) -> u8 {
        let Some(d) = &self.dispatch else {
            return self.home;
        };
        let lane = match steer_by(payload, d.prefix_len) {
            SteerBy::Home => self.home,
            SteerBy::Token(shard) => d.token_lanes[usize::from(shard)],
            SteerBy::Name(octets) => {
                let slot = hash(&payload[octets]) as usize & (d.lanes.len().max(1) - 1);
                d.lanes.get(slot).copied().unwrap_or(self.home)
            }
        };
        if u32::from(lane) < super::program::MAX_LANES {
            lane
        } else {
            self.home
        }
    }
}

/// A cursor over a packet as the program reads it.
struct Reader<'a> {
    p: &'a [u8],
}

impl Reader<'_> {
    /// The octet at `off`, if the packet holds it.
    fn octet(&self, off: usize) -> Option<u8> {
        (off <= OFF_MAX).then(|| self.p.get(off).copied()).flatten()
    }

    /// The TLV VAR-NUMBER at `*off`, advancing past it; not an 8-octet one.
    fn varnum(&self, off: &mut usize) -> Option<u32> {
        let first = self.octet(*off)?;
        let (n, len) = match first {
            0..=252 => (u32::from(first), 1),
            253 => (u32::from(u16::from_be_bytes(self.take::<2>(*off + 1)?)), 3),
            254 => (u32::from_be_bytes(self.take::<4>(*off + 1)?), 5),
            255 => return None,
        };
        *off += len;
        Some(n)
    }

    fn take<const N: usize>(&self, off: usize) -> Option<[u8; N]> {
        // The program checks the whole VAR-NUMBER against the end from its first octet.
        if off - 1 > OFF_MAX {
            return None;
        }
        self.p.get(off..off + N)?.try_into().ok()
    }

    /// A type and a length no longer than any frame.
    fn tl(&self, off: &mut usize) -> Option<(u32, usize)> {
        let t = self.varnum(off)?;
        let l = self.varnum(off)? as usize;
        (l <= OFF_MAX).then_some((t, l))
    }
}

/// What the program steers the NDN packet `payload` by, with the Name Dispatch Table hashing
/// `prefix_len` components: a bare Interest, or an LpPacket without fragmentation or
/// reliability fields (Sequence, FragIndex, FragCount, TxSequence, Ack) that carries an
/// Interest, goes by its name; a Data or a Nack with a 6-octet PIT token goes by the token; a
/// Nack without one by its Interest's name, as the forwarder dispatches it. Everything else
/// goes home.
pub fn steer_by(payload: &[u8], prefix_len: usize) -> SteerBy {
    let r = Reader { p: payload };
    match r.octet(0) {
        None => return SteerBy::Home,
        Some(TLV_INTEREST) => return interest(&r, 0, prefix_len),
        Some(_) => {}
    }
    let mut off = 0;
    match r.tl(&mut off) {
        Some((LP_PACKET, _)) => {}
        _ => return SteerBy::Home,
    }
    let (mut token, mut nack) = (None, false);
    for _ in 0..STEER_FIELDS {
        let Some((t, len)) = r.tl(&mut off) else {
            return SteerBy::Home;
        };
        match t {
            LP_FRAGMENT => {
                let Some(first) = r.octet(off) else {
                    return SteerBy::Home;
                };
                if let Some(at) = token {
                    if first == TLV_DATA || (first == TLV_INTEREST && nack) {
                        return r.octet(at).map_or(SteerBy::Home, SteerBy::Token);
                    }
                }
                return match first {
                    TLV_INTEREST => interest(&r, off, prefix_len),
                    _ => SteerBy::Home,
                };
            }
            LP_SEQUENCE | LP_FRAG_INDEX | LP_FRAG_COUNT | LP_TX_SEQUENCE | LP_ACK => {
                return SteerBy::Home
            }
            LP_PIT_TOKEN if len == KITE_TOKEN_LEN => token = Some(off),
            LP_NACK => nack = true,
            _ => {}
        }
        off += len;
    }
    SteerBy::Home
}

/// The octets the Name Dispatch Table hashes of the Interest at `off`: its name's first
/// `prefix_len` components, fewer when it is shorter, one fewer when a name that short ends in
/// an implicit digest (which its Data's name lacks).
fn interest(r: &Reader<'_>, mut off: usize, prefix_len: usize) -> SteerBy {
    if !matches!(r.tl(&mut off), Some((t, _)) if t == u32::from(TLV_INTEREST)) {
        return SteerBy::Home;
    }
    let Some((TLV_NAME, len)) = r.tl(&mut off) else {
        return SteerBy::Home;
    };
    let (name, name_end) = (off, off + len);
    let (mut at, mut before, mut last_type, mut n) = (off, off, 0, 0);
    for _ in 0..STEER_COMPONENTS {
        if n == prefix_len || at >= name_end {
            break;
        }
        let mut c = at;
        let Some((t, l)) = r.tl(&mut c) else {
            return SteerBy::Home;
        };
        before = at;
        at = c + l;
        last_type = t;
        n += 1;
    }
    if at > name_end || (at < name_end && n != prefix_len) {
        return SteerBy::Home;
    }
    let hashed = if at == name_end && n > 0 && last_type == TLV_DIGEST {
        before
    } else {
        at
    };
    if hashed - name >= STEER_HASHED || r.p.len() < hashed {
        return SteerBy::Home;
    }
    SteerBy::Name(name..hashed)
}

/// NDN packets as the steering parser meets them, for the tests that hold the program, its
/// twin and the forwarder's dispatch to one another.
#[cfg(test)]
pub(crate) mod testing {
    use proptest::prelude::*;

    /// A TLV VAR-NUMBER, in its shortest form unless `wide` (the 3-octet form for a number
    /// that fits one octet, which a decoder must read too).
    fn varnum(out: &mut Vec<u8>, n: u32, wide: bool) {
        match n {
            0..=252 if !wide => out.push(n as u8),
            0..=0xffff => {
                out.push(253);
                out.extend_from_slice(&(n as u16).to_be_bytes());
            }
            _ => {
                out.push(254);
                out.extend_from_slice(&n.to_be_bytes());
            }
        }
    }

    /// A TLV of type `t` and value `v`.
    pub fn tlv(t: u32, v: &[u8]) -> Vec<u8> {
        tlv_wide(t, v, false)
    }

    /// A TLV whose length is in the 3-octet form when `wide`.
    fn tlv_wide(t: u32, v: &[u8], wide: bool) -> Vec<u8> {
        let mut out = Vec::with_capacity(v.len() + 10);
        varnum(&mut out, t, false);
        varnum(&mut out, v.len() as u32, wide);
        out.extend_from_slice(v);
        out
    }

    /// A name component: generic, an implicit digest, a segment, a keyword, or of a type past
    /// one octet; short or long, its length now and then in a wider form than it needs.
    fn component() -> impl Strategy<Value = Vec<u8>> {
        (
            prop_oneof![4 => Just(8u32), 2 => Just(1), 1 => Just(0x32), 1 => Just(0x20), 1 => Just(300)],
            prop_oneof![6 => 0usize..12, 1 => Just(32), 1 => 200usize..300],
            any::<u8>(),
            proptest::bool::weighted(0.1),
        )
            .prop_map(|(t, len, fill, wide)| tlv_wide(t, &vec![fill; len], wide))
    }

    /// A name of 0 to 20 components, most of them of 4 or fewer (around the dispatch
    /// prefix, where the implicit-digest rule applies).
    pub fn name() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            3 => proptest::collection::vec(component(), 0..5),
            1 => proptest::collection::vec(component(), 5..20),
        ]
        .prop_map(|c| tlv(0x07, &c.concat()))
    }

    /// An Interest with a nonce.
    fn interest() -> impl Strategy<Value = Vec<u8>> {
        name().prop_map(|n| tlv(0x05, &[n, tlv(0x0a, &[1, 2, 3, 4])].concat()))
    }

    /// A Data with a content.
    fn data() -> impl Strategy<Value = Vec<u8>> {
        name().prop_map(|n| tlv(0x06, &[n, tlv(0x15, b"content")].concat()))
    }

    /// An LpPacket header field: a PIT token of Kite's length or another, a Nack, a
    /// fragmentation or reliability field, a congestion mark, or a field Kite does not know.
    fn field() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            4 => any::<[u8; 6]>().prop_map(|t| tlv(0x62, &t)),
            1 => prop_oneof![Just(4usize), Just(8)].prop_map(|n| tlv(0x62, &vec![7; n])),
            2 => Just(tlv(0x0320, &[])),
            1 => prop_oneof![Just(0x51u32), Just(0x52), Just(0x53), Just(0x0348), Just(0x0344)]
                .prop_map(|t| tlv(t, &[0; 8])),
            1 => Just(tlv(0x0340, &[1])),
            1 => Just(tlv(0x0354, &[0])),
        ]
    }

    /// An NDN frame's payload: a bare Interest, or an LpPacket of up to nine header fields and
    /// a fragment (an Interest, a Data, or a few random octets); now and then cut short, or
    /// with one octet changed.
    pub fn packet() -> impl Strategy<Value = Vec<u8>> {
        let fragment = prop_oneof![
            interest(),
            data(),
            proptest::collection::vec(any::<u8>(), 0..8),
        ];
        let lp = (proptest::collection::vec(field(), 0..10), fragment)
            .prop_map(|(f, frag)| tlv(0x64, &[f.concat(), tlv(0x50, &frag)].concat()));
        let bend = prop_oneof![
            8 => Just(None),
            1 => (any::<prop::sample::Index>(), Just(None)).prop_map(Some),
            1 => (any::<prop::sample::Index>(), any::<u8>().prop_map(Some)).prop_map(Some),
        ];
        (prop_oneof![interest(), lp], bend).prop_map(|(mut p, bend)| {
            match bend {
                Some((at, None)) if !p.is_empty() => p.truncate(at.index(p.len())),
                Some((at, Some(v))) if !p.is_empty() => {
                    let i = at.index(p.len());
                    p[i] = v;
                }
                _ => {}
            }
            p
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use kite_fw::hash::NameHasher;
    use kite_fw::ndt::Ndt;
    use kite_fw::pcct::Pcct;
    use kite_packet::packet::NetPacket;
    use proptest::prelude::*;

    /// The shard the forwarder's input stage gives a packet it decoded (as
    /// `kite_runtime`'s dispatcher does): a Data or Nack with a token of an existing shard
    /// goes there, an Interest or tokenless Nack to its name's home; `None` for a tokenless
    /// Data, which may go to several.
    fn forwarder_shard(frame: &[u8], hasher: &NameHasher, ndt: &Ndt) -> Option<Option<(u8, bool)>> {
        let (header, packet) = NetPacket::decode_frame(Bytes::copy_from_slice(frame)).ok()?;
        let token = header
            .pit_token
            .as_ref()
            .and_then(Pcct::token_thread)
            .filter(|&t| t < ndt.threads());
        let by_name = |name: &kite_packet::name::Name| {
            let hashes = hasher.prefix_hashes(name);
            ndt.interest_thread(&hashes, || name.ends_in_implicit_digest())
        };
        Some(match packet {
            NetPacket::Interest(i) => Some((by_name(&i.name), false)),
            NetPacket::Nack(n) => {
                Some(token.map_or_else(|| (by_name(&n.interest.name), false), |t| (t, true)))
            }
            NetPacket::Data(_) => token.map(|t| (t, true)),
        })
    }

    /// Interests whose last component is an implicit digest as the forwarder reads it (type
    /// 1, length 32, each in one octet) and near it: the same type with its length in three
    /// octets, and a digest that is not last.
    #[test]
    fn the_implicit_digest_rule_is_the_forwarders() {
        let digest = [&[1u8, 32][..], &[0xab; 32]].concat();
        let wide = [&[1u8, 253, 0, 32][..], &[0xab; 32]].concat();
        let generic = testing::tlv(8, b"a");
        let names = [
            digest.clone(),
            wide.clone(),
            [generic.clone(), digest.clone()].concat(),
            [generic.clone(), wide].concat(),
            [digest, generic].concat(),
        ];
        for (i, name) in names.iter().enumerate() {
            let interest = testing::tlv(
                0x05,
                &[testing::tlv(0x07, name), testing::tlv(0x0a, &[1, 2, 3, 4])].concat(),
            );
            for k in 0..64 {
                check(&interest, (k, !k), 2).unwrap_or_else(|e| panic!("name {i}: {e}"));
            }
        }
    }

    /// [`steering_agrees_with_the_forwarders_dispatch`] for one packet.
    fn check(frame: &[u8], key: (u64, u64), prefix_len: usize) -> Result<(), TestCaseError> {
        const SHARDS: u8 = 4;
        let hasher = NameHasher::with_key(key.0, key.1);
        let ndt = Ndt::new(6, SHARDS, prefix_len);
        let mut token_lanes = [0; 256];
        for (t, lane) in token_lanes.iter_mut().enumerate().take(usize::from(SHARDS)) {
            *lane = t as u8;
        }
        let steering = Steering {
            home: 0,
            dispatch: Some(Dispatch {
                key,
                prefix_len,
                lanes: (0..64).map(|slot| ndt.thread_of(slot)).collect(),
                token_lanes,
            }),
        };
        let hash = |octets: &[u8]| {
            use std::hash::Hasher;
            let mut h = siphasher::sip::SipHasher13::new_with_keys(key.0, key.1);
            h.write(octets);
            h.finish()
        };
        let by = steer_by(frame, prefix_len);
        let lane = steering.lane(frame, hash);
        match (forwarder_shard(frame, &hasher, &ndt), by) {
            // Home, also for a token of a shard that does not exist (home then dispatches it
            // by name or to several shards).
            (_, SteerBy::Home) => prop_assert_eq!(lane, 0),
            (_, SteerBy::Token(t)) if t >= SHARDS => prop_assert_eq!(lane, 0),
            // Steered, but the forwarder cannot decode it: the lane's thread drops it.
            (None, _) => {}
            (Some(Some((shard, by_token))), by) => {
                prop_assert_eq!(matches!(by, SteerBy::Token(_)), by_token);
                prop_assert_eq!(lane, shard, "{:?}", by);
            }
            (Some(None), by) => prop_assert!(false, "a tokenless Data steered by {:?}", by),
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

        /// Whatever the program steers by name or token lands on the lane of the shard the
        /// forwarder's dispatch picks for the packet (here each shard its own lane): the same
        /// hash, table, prefix length and implicit-digest rule, the same token octet. What
        /// it sends home, home dispatches as before.
        #[test]
        fn steering_agrees_with_the_forwarders_dispatch(
            frame in testing::packet(),
            key in any::<(u64, u64)>(),
            prefix_len in prop_oneof![Just(1usize), Just(2), Just(3), Just(usize::MAX)],
        ) {
            check(&frame, key, prefix_len)?;
        }
    }
}
