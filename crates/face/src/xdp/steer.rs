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
