//! Proves the forwarder view allocates nothing per packet for names of up to 16 components:
//! a counting global allocator wraps the system one for this test binary only.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use bytes::Bytes;
use kite_packet::{
    Data, DataView, DigestSha256, Interest, InterestView, LpHeader, LpPacket, Name, NetPacketView,
    Nonce, PitToken,
};

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

struct Counting;

// SAFETY: every call is forwarded unchanged to `System`, which upholds the GlobalAlloc
// contract; the counter is a thread-local Cell, which never allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|a| a.set(a.get() + 1));
        // SAFETY: same layout the caller gave us, per the GlobalAlloc contract.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout (see `alloc`).
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.with(|a| a.set(a.get() + 1));
        // SAFETY: forwarded unchanged; `ptr` was allocated by `System` with `layout`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations_during(f: impl FnOnce()) -> usize {
    let before = ALLOCATIONS.with(Cell::get);
    f();
    ALLOCATIONS.with(Cell::get) - before
}

fn name(n: usize) -> Name {
    let mut name = Name::root();
    for i in 0..n {
        name = name.append_generic(format!("component{i}").as_bytes());
    }
    name
}

/// A received buffer: refcounted already, as a socket read buffer split into packets is.
fn received(b: Bytes) -> Bytes {
    let _promote = b.clone();
    b
}

#[test]
fn interest_view_decodes_without_allocating_up_to_16_components() {
    for n in [1, 4, 16] {
        let mut i = Interest::new(name(n));
        i.can_be_prefix = true;
        i.nonce = Some(Nonce::from(7));
        i.lifetime = Some(100);
        i.hop_limit = Some(3);
        i.forwarding_hint = vec![name(3)];
        let wire = received(i.encode());
        let count = allocations_during(|| {
            let v = InterestView::decode(wire.clone()).unwrap();
            assert_eq!(v.name.len(), n);
            assert_eq!(v.forwarding_hint().count(), 1);
        });
        assert_eq!(count, 0, "{n} components");
    }
}

#[test]
fn data_view_and_lp_frame_decode_without_allocating() {
    let mut d = Data::new(name(16), vec![1u8; 1000]);
    d.meta.freshness_period = Some(1000);
    let frame = received(
        LpPacket {
            header: LpHeader {
                pit_token: Some(PitToken::from_u64(9)),
                congestion_mark: Some(1),
                ..LpHeader::default()
            },
            fragment: Some(d.sign(&DigestSha256).unwrap()),
        }
        .encode(),
    );
    let count = allocations_during(|| {
        let lp = LpPacket::decode(frame.clone()).unwrap();
        match NetPacketView::decode(lp.fragment.unwrap()).unwrap() {
            NetPacketView::Data(v) => assert_eq!(v.freshness_ms(), 1000),
            NetPacketView::Interest(_) => panic!("expected Data"),
        }
    });
    assert_eq!(count, 0);
    let wire = received(d.sign(&DigestSha256).unwrap());
    assert_eq!(
        allocations_during(|| drop(DataView::decode(wire.clone()).unwrap())),
        0
    );
}

#[test]
fn interests_sent_on_with_a_lower_hop_limit_allocate_once_per_64_kib() {
    let mut i = Interest::new(name(4));
    i.nonce = Some(Nonce::from(7));
    i.hop_limit = Some(32);
    let view = InterestView::decode(received(i.encode())).unwrap();
    let out = view.outgoing(Nonce::from(7), Some(31));
    let (n, len) = (10_000, out.encode().len());
    let count = allocations_during(|| {
        for _ in 0..n {
            let wire = out.encode();
            assert_eq!(InterestView::decode(wire).unwrap().hop_limit, Some(31));
        }
    });
    // A fresh 64 KiB buffer and its shared reference count each time one runs out.
    assert!(
        count <= 2 * (n * len / (64 << 10) + 1),
        "{count} allocations"
    );
    // The received octets are untouched: the patch went into the copy.
    assert_eq!(view.hop_limit, Some(32));
}

#[test]
fn the_counter_does_count() {
    // A 17-component name spills its offsets to the heap: the test above would catch that.
    let wire = received(Interest::new(name(17)).encode());
    assert!(allocations_during(|| drop(InterestView::decode(wire.clone()).unwrap())) > 0);
}
