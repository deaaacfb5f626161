//! Copies of packets that are kept past the burst they arrived in (a PIT entry's Interest, a
//! cached Data), in buffers of their own so they never keep a receive buffer alive.
//!
//! A copy goes into a buffer of a size class just above its length (less than 64 octets or a
//! quarter larger), taken from a free list of the current thread and given back to the free list
//! of whichever thread drops the last reference. A table's turnover (a PIT entry satisfied,
//! a CS entry evicted for the next) then reuses the same buffers instead of going through the
//! allocator twice per exchange (`kite bench fwd` measured glibc's malloc and free of the
//! copies at ≈1,000 instructions per exchange). A [`Kept`] shared with [`Kept::into_bytes`]
//! allocates the small header `Bytes::from_owner` makes for its reference count (glibc's
//! malloc and free, ≈250 instructions per exchange); a copy made by [`copy_reusable`] does
//! not: its buffer is a `BytesMut` whose reference count lives as long as the buffer, and the
//! copy's last owner in a table hands it back with [`give_back`]. The PIT's copy of an
//! Interest is one (the PCCT entry's name is its last owner); a cached Data is one too, or
//! the reusable buffer a receive path put its frame in alone ([`take_reusable`]), kept as is
//! and handed back with [`give_back_slice`]: the CS's evictions feed the receive path of the
//! same thread, and copies leave it a reserve of idle buffers ([`RESERVE`]).
//!
//! Bounded: each of a thread's two free lists holds at most [`IDLE_BYTES_PER_CLASS`] octets of each
//! class, and the reusable one at least twice [`RESERVE`] buffers (13 MiB in all); beyond it
//! a returned buffer is freed. Packets longer than the largest class are copied into
//! exact-size allocations.

use std::cell::RefCell;
use std::thread::LocalKey;

use bytes::{Bytes, BytesMut};

/// Octets a thread keeps idle per size class, at most.
pub const IDLE_BYTES_PER_CLASS: usize = 128 << 10;

/// The largest size class: a largest packet (8800 octets) with room to spare.
const MAX_CLASS: usize = 9216;

/// Number of size classes: 64-octet steps to 512, 128 to 2048, 256 to 4096, 512 to 9216.
const CLASSES: usize = 8 + 12 + 8 + 10;

/// The size of each class, by the index [`class`] gives.
const SIZES: [usize; CLASSES] = {
    let mut sizes = [0; CLASSES];
    let mut i = 0;
    while i < CLASSES {
        sizes[i] = match i {
            0..=7 => (i + 1) * 64,
            8..=19 => 512 + (i - 7) * 128,
            20..=27 => 2048 + (i - 19) * 256,
            _ => 4096 + (i - 27) * 512,
        };
        i += 1;
    }
    sizes
};

/// Buffers a thread keeps idle per class: [`IDLE_BYTES_PER_CLASS`] over the class size
/// (computed once, so giving a buffer back divides nothing).
const ROOM: [usize; CLASSES] = {
    let mut room = [0; CLASSES];
    let mut i = 0;
    while i < CLASSES {
        room[i] = IDLE_BYTES_PER_CLASS / SIZES[i];
        i += 1;
    }
    room
};

/// Idle reusable buffers a copy ([`copy_reusable`]) leaves in its class's list for receive
/// paths ([`take_reusable`]): a burst of packets. Below it a copy allocates instead, so the
/// buffers the tables give back add up to what a burst of received packets takes.
pub const RESERVE: usize = 32;

/// Reusable buffers a thread keeps idle per class: as [`ROOM`], but at least twice
/// [`RESERVE`], so copies still reuse buffers once the reserve is full.
const REUSABLE_ROOM: [usize; CLASSES] = {
    let mut room = ROOM;
    let mut i = 0;
    while i < CLASSES {
        if room[i] < 2 * RESERVE {
            room[i] = 2 * RESERVE;
        }
        i += 1;
    }
    room
};

/// The class index for a copy of `len` octets (`None`: larger than every class).
#[inline]
fn class(len: usize) -> Option<usize> {
    match len {
        0..=512 => Some(len.max(1).div_ceil(64) - 1),
        513..=2048 => Some(7 + (len - 512).div_ceil(128)),
        2049..=4096 => Some(19 + (len - 2048).div_ceil(256)),
        4097..=MAX_CLASS => Some(27 + (len - 4096).div_ceil(512)),
        _ => None,
    }
}

/// Octets a copy of `len` octets occupies: its size class (or `len` beyond the classes).
#[inline]
pub fn footprint(len: usize) -> usize {
    class(len).map_or(len, |c| SIZES[c])
}

thread_local! {
    /// Idle buffers of this thread, by class, most recently given back last.
    static FREE: RefCell<[Vec<Box<[u8]>>; CLASSES]> =
        const { RefCell::new([const { Vec::new() }; CLASSES]) };
    /// Idle buffers of reusable copies ([`copy_reusable`]), by class, most recently given
    /// back last; a buffer still shared when taken is let go (freed by its last reference).
    static REUSABLE: RefCell<[Vec<BytesMut>; CLASSES]> =
        const { RefCell::new([const { Vec::new() }; CLASSES]) };
}

/// One thread's free lists of idle buffers, by class.
type FreeLists<T> = LocalKey<RefCell<[Vec<T>; CLASSES]>>;

/// The idle buffer of `class` given back last, if the list holds more than `leave`.
#[inline]
fn take_idle<T>(lists: &'static FreeLists<T>, class: usize, leave: usize) -> Option<T> {
    lists
        .try_with(|free| {
            let list = &mut free.borrow_mut()[class];
            if list.len() > leave {
                list.pop()
            } else {
                None
            }
        })
        .ok()
        .flatten()
}

/// Keeps `buf` idle in its class's list while that holds fewer than `room[class]` buffers;
/// otherwise `buf` is freed (so it is too during thread exit, when the lists may be gone).
#[inline]
fn keep_idle<T>(lists: &'static FreeLists<T>, room: &[usize; CLASSES], class: usize, buf: T) {
    let _ = lists.try_with(|free| {
        let list = &mut free.borrow_mut()[class];
        if list.len() < room[class] {
            list.push(buf);
        }
    });
}

/// A copy of a packet in a pooled buffer, owned by one holder; back to a free list when
/// dropped, without touching its octets (a table evicting a cold entry reads no more of it).
/// [`Kept::into_bytes`] shares it.
#[derive(Debug)]
pub struct Kept {
    buf: Box<[u8]>,
    len: usize,
    /// Its size class; `CLASSES` for an exact-size buffer beyond them, which is just freed.
    class: usize,
}

impl Kept {
    /// A copy of `packet` (see the module documentation).
    #[inline]
    pub fn new(packet: &[u8]) -> Kept {
        let Some(class) = class(packet.len()) else {
            return Kept {
                buf: packet.into(),
                len: packet.len(),
                class: CLASSES,
            };
        };
        let mut buf =
            take_idle(&FREE, class, 0).unwrap_or_else(|| vec![0; SIZES[class]].into_boxed_slice());
        buf[..packet.len()].copy_from_slice(packet);
        Kept {
            buf,
            len: packet.len(),
            class,
        }
    }

    /// The copy as a shareable `Bytes` (which allocates its reference count).
    pub fn into_bytes(self) -> Bytes {
        Bytes::from_owner(self)
    }
}

impl core::ops::Deref for Kept {
    type Target = [u8];
    #[inline]
    fn deref(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

impl AsRef<[u8]> for Kept {
    #[inline]
    fn as_ref(&self) -> &[u8] {
        self
    }
}

impl Drop for Kept {
    fn drop(&mut self) {
        // An exact-size buffer beyond the classes is just freed.
        if self.class < CLASSES {
            keep_idle(&FREE, &ROOM, self.class, core::mem::take(&mut self.buf));
        }
    }
}

/// A shareable copy of `packet` in a buffer of its own (see the module documentation).
pub fn copy(packet: &[u8]) -> Bytes {
    Kept::new(packet).into_bytes()
}

/// A shareable copy of `packet` in a buffer of its own, like [`copy`], but with no allocation
/// when a buffer of its class is idle on this thread: the buffer is a `BytesMut` carrying its
/// own reference count, frozen as is. Its last owner in a table hands it back with
/// [`give_back`] (otherwise it is simply freed with its last `Bytes`).
pub fn copy_reusable(packet: &[u8]) -> Bytes {
    let Some(class) = class(packet.len()) else {
        return Bytes::copy_from_slice(packet);
    };
    let mut buf = take_idle(&REUSABLE, class, RESERVE).unwrap_or_else(|| {
        let mut buf = BytesMut::with_capacity(SIZES[class]);
        // Sharing a new buffer once gives it its reference count for good (a buffer frozen
        // with none would allocate one per copy).
        drop(buf.split_to(0));
        buf
    });
    buf.extend_from_slice(packet);
    buf.freeze()
}

/// Frames shorter than this are not read into buffers of their own ([`take_reusable`]):
/// mostly Interests and small Data, cheap to copy, and an Interest is not kept as received.
pub const OWN_MIN: usize = 1024;

/// An idle reusable buffer (empty) of the class of a `len`-octet frame, if this thread has
/// one and `len` is at least [`OWN_MIN`]: for a receive path to put a frame in a buffer of
/// its own, which the CS can then keep as is ([`copy_reusable`]'s buffers, handed back the
/// same way). Never allocates: `None` when the list is empty or `len` is out of range.
#[inline]
pub fn take_reusable(len: usize) -> Option<BytesMut> {
    if len < OWN_MIN {
        return None;
    }
    take_idle(&REUSABLE, class(len)?, 0)
}

/// Gives the buffer of a copy made by [`copy_reusable`] (the whole copy, as returned) back to
/// this thread's free list if `copy` is its last `Bytes`; otherwise only drops `copy`, and
/// the buffer goes with its last clone. Only the buffer's reference count is read.
pub fn give_back(copy: Bytes) {
    let Ok(mut buf) = copy.try_into_mut() else {
        return;
    };
    if let Some(class) = whole_class(&buf) {
        buf.clear();
        keep_idle(&REUSABLE, &REUSABLE_ROOM, class, buf);
    }
}

/// [`give_back`] for any slice of a reusable buffer ([`copy_reusable`], [`take_reusable`]):
/// a packet inside the frame that was read into it.
pub fn give_back_slice(slice: Bytes) {
    let Ok(mut buf) = slice.try_into_mut() else {
        return;
    };
    buf.clear();
    // A slice past the buffer's start sees only the capacity after it: asking for one octet
    // more takes the (unique, now empty) buffer back from its start, copying nothing; at the
    // start already it is refused, and nothing changes.
    let _ = buf.try_reclaim(buf.capacity() + 1);
    if let Some(class) = whole_class(&buf) {
        keep_idle(&REUSABLE, &REUSABLE_ROOM, class, buf);
    }
}

/// The class of `buf` if its capacity is exactly a class size.
#[inline]
fn whole_class(buf: &BytesMut) -> Option<usize> {
    class(buf.capacity()).filter(|&c| SIZES[c] == buf.capacity())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_cover_every_length_tightly_and_in_order() {
        let mut last = (class(1).unwrap(), SIZES[0]);
        for len in 1..=MAX_CLASS {
            let i = class(len).unwrap();
            let size = SIZES[i];
            assert!(i < CLASSES && size >= len, "{len}");
            assert!(
                size - len < 64 || (size - len) * 4 <= len,
                "{len} in {size}"
            );
            assert!(i >= last.0 && (i > last.0 || size == last.1), "{len}");
            last = (i, size);
        }
        assert_eq!(last.0, CLASSES - 1);
        assert_eq!(class(MAX_CLASS + 1), None);
        assert_eq!(footprint(100), 128);
        assert_eq!(footprint(20_000), 20_000);
    }

    #[test]
    fn copies_hold_their_octets_and_reuse_buffers_freed_on_this_thread() {
        let burst = vec![9u8; 64 * 1024];
        let a = copy(&burst[100..200]);
        assert_eq!(&a[..], &burst[100..200]);
        assert!(!burst.as_ptr_range().contains(&a.as_ptr()));
        let at = a.as_ptr();
        let shared = a.clone();
        drop(a);
        assert_eq!(shared.len(), 100, "a clone keeps the copy");
        drop(shared);
        let b = copy(&burst[..120]);
        assert_eq!(
            b.as_ptr(),
            at,
            "the freed buffer of the same class is reused"
        );
        assert_eq!(&b[..], &burst[..120]);
        let big = copy(&vec![1u8; 20_000]);
        assert_eq!(big.len(), 20_000);
    }

    #[test]
    fn an_owned_copy_goes_back_when_dropped_and_can_be_shared_later() {
        let k = Kept::new(b"owned data");
        assert_eq!(&k[..], b"owned data");
        let at = k.as_ptr();
        drop(k);
        let k = Kept::new(b"reused");
        assert_eq!(k.as_ptr(), at);
        let b = k.into_bytes();
        assert_eq!((&b[..], b.as_ptr()), (&b"reused"[..], at));
        let big = Kept::new(&[3u8; MAX_CLASS + 1]);
        assert_eq!(big.len(), MAX_CLASS + 1);
    }

    #[test]
    fn idle_buffers_per_class_are_bounded() {
        let copies: Vec<Bytes> = (0..3000).map(|_| copy(&[0u8; 100])).collect();
        drop(copies);
        let idle = FREE.with(|f| f.borrow()[class(100).unwrap()].len());
        assert_eq!(idle, IDLE_BYTES_PER_CLASS / 128);
    }

    #[test]
    fn reusable_copies_are_reused_only_once_no_clone_is_left() {
        let idle = |len| REUSABLE.with(|f| f.borrow()[class(len).unwrap()].len());
        // Copies reuse only what is idle beyond the receive paths' reserve.
        let reserve: Vec<_> = (0..RESERVE).map(|_| copy_reusable(&[0u8; 100])).collect();
        reserve.into_iter().for_each(give_back);
        assert_eq!(idle(100), RESERVE);
        let burst = vec![7u8; 64 * 1024];
        let a = copy_reusable(&burst[10..110]);
        assert_eq!(&a[..], &burst[10..110]);
        assert!(!burst.as_ptr_range().contains(&a.as_ptr()));
        assert_eq!(idle(100), RESERVE, "the reserve is left alone");
        let at = a.as_ptr();
        let clone = a.clone();
        give_back(a);
        let b = copy_reusable(&[5u8; 120]);
        assert_ne!(b.as_ptr(), at, "a buffer still shared is not reused");
        assert_eq!((&clone[..], &b[..]), (&burst[10..110], &[5u8; 120][..]));
        let at = b.as_ptr();
        give_back(b);
        assert_eq!(
            idle(120),
            RESERVE + 1,
            "the last copy of a buffer gives it back"
        );
        let c = copy_reusable(&[6u8; 90]);
        assert_eq!(
            c.as_ptr(),
            at,
            "a buffer no copy holds is reused, from its start"
        );
        assert_eq!(&c[..], &[6u8; 90][..]);
        let shared = c.clone();
        give_back(c);
        assert_eq!(
            idle(90),
            RESERVE,
            "a buffer with a clone left is not given back"
        );
        assert_eq!(&shared[..], &[6u8; 90][..], "a clone keeps its octets");
        let big = copy_reusable(&vec![1u8; MAX_CLASS + 1]);
        assert_eq!(big.len(), MAX_CLASS + 1);
        give_back(big);
        give_back(Bytes::from(vec![0u8; 4000]));
        let others = REUSABLE.with(|f| f.borrow().iter().map(Vec::len).sum::<usize>());
        assert_eq!(others, RESERVE, "neither is kept");
    }

    #[test]
    fn a_receive_path_takes_only_idle_reusable_buffers_and_slices_of_them_go_back() {
        assert!(take_reusable(5000).is_none(), "nothing idle: no allocation");
        give_back(copy_reusable(&[1u8; 5000]));
        let mut frame = take_reusable(4900).expect("the buffer given back, same class");
        assert!(frame.is_empty());
        let at = frame.as_ptr();
        frame.extend_from_slice(&[2u8; 4900]);
        let frame = frame.freeze();
        let packet = frame.slice(100..);
        give_back_slice(packet.clone());
        assert!(take_reusable(4900).is_none(), "the frame still holds it");
        drop(frame);
        give_back_slice(packet);
        let again = take_reusable(4900).expect("its last slice gave it back");
        assert_eq!((again.as_ptr(), again.capacity()), (at, footprint(4900)));
        assert!(take_reusable(MAX_CLASS + 1).is_none());
        give_back_slice(Bytes::from(vec![0u8; 4600]).slice(10..));
        give_back_slice(Bytes::from(vec![0u8; 9000]));
        assert!(
            take_reusable(4600).is_none(),
            "only reusable buffers are kept"
        );
    }

    #[test]
    fn idle_reusable_buffers_per_class_are_bounded() {
        let copies: Vec<_> = (0..3000).map(|_| copy_reusable(&[0u8; 100])).collect();
        copies.into_iter().for_each(give_back);
        let idle = REUSABLE.with(|f| f.borrow()[class(100).unwrap()].len());
        assert_eq!(idle, IDLE_BYTES_PER_CLASS / 128);
    }

    #[test]
    fn a_buffer_given_back_is_the_next_one_taken_in_every_class() {
        // Last in, first out: the buffer taken is the one given back last, the likeliest
        // still in cache, and a table's turnover keeps reusing the same few buffers.
        for len in [1, 64, 65, 100, 512, 513, 1000, 2048, 4097, 8800, MAX_CLASS] {
            let (older, last) = (Kept::new(&vec![1u8; len]), Kept::new(&vec![1u8; len]));
            let at = last.as_ptr();
            drop(older);
            drop(last);
            let next = Kept::new(&vec![2u8; len]);
            assert_eq!(next.as_ptr(), at, "{len}");
            assert_eq!(&next[..], &vec![2u8; len][..]);
        }
    }
}
