use kite_packet::{Interest, InterestView, Nonce};

use super::*;
use crate::fib::StrategyId;
use crate::hash::NameHasher;

fn hasher() -> NameHasher {
    NameHasher::with_key(7, 9)
}

fn name(uri: &str) -> Name {
    uri.parse().unwrap()
}

fn hash(n: &Name) -> u64 {
    hasher().hash_name(n)
}

fn small() -> Pcct {
    Pcct::new(
        3,
        PcctConfig {
            capacity: 8,
            pit_capacity: 4,
            cs_capacity: 4,
            ..PcctConfig::default()
        },
    )
}

fn pit_for(n: &Name) -> InterestView {
    pit_with(n, PLAIN)
}

/// An Interest for `n` with these selectors.
fn pit_with(n: &Name, sel: Selectors) -> InterestView {
    let mut i = Interest::new(n.clone());
    i.nonce = Some(Nonce::from(1));
    i.can_be_prefix = sel.can_be_prefix();
    i.must_be_fresh = sel.must_be_fresh();
    InterestView::decode(i.encode()).unwrap()
}

const PLAIN: Selectors = Selectors::new(false, false);
const FRESH: Selectors = Selectors::new(false, true);

fn insert(t: &mut Pcct, uri: &str, hint: Option<&Name>) -> u32 {
    let n = name(uri);
    t.find_or_insert(&n, hash(&n), hint).unwrap()
}

#[test]
fn entries_are_keyed_by_name_and_hint() {
    let mut t = small();
    let hint = name("/isp");
    let a = insert(&mut t, "/a", None);
    let ah = insert(&mut t, "/a", Some(&hint));
    assert_ne!(a, ah);
    assert_eq!(insert(&mut t, "/a", None), a, "found, not created again");
    let n = name("/a");
    assert_eq!(t.find(&n, hash(&n), None), Some(a));
    assert_eq!(t.find(&n, hash(&n), Some(&hint)), Some(ah));
    assert_eq!(t.find(&n, hash(&n), Some(&name("/other"))), None);
    let mut parts: Vec<u32> = t.partitions(&n, hash(&n)).collect();
    parts.sort();
    assert_eq!(parts, {
        let mut v = vec![a, ah];
        v.sort();
        v
    });
    assert_eq!(t.len(), 2);
}

#[test]
fn unused_entries_are_removed_with_their_last_pit_entry() {
    let mut t = small();
    let n = name("/a");
    let s = insert(&mut t, "/a", None);
    t.pit_insert(s, 1, pit_for(&n), StrategyId(0)).unwrap();
    t.pit_insert(s, 1, pit_with(&n, FRESH), StrategyId(0))
        .unwrap();
    assert_eq!(t.pit_len(), 2);
    assert!(t.pit_discard(s, PLAIN));
    assert!(t.entry(s).is_some(), "the MustBeFresh PIT entry keeps it");
    assert!(t.pit_discard(s, FRESH));
    assert!(!t.pit_discard(s, FRESH), "already gone");
    assert!(t.entry(s).is_none());
    assert_eq!(t.find(&n, hash(&n), None), None);
    assert_eq!((t.len(), t.pit_len()), (0, 0));
}

#[test]
fn tokens_resolve_only_while_current_and_only_on_their_thread() {
    let mut t = small();
    let n = name("/a");
    let s = insert(&mut t, "/a", None);
    t.pit_insert(s, 1, pit_with(&n, FRESH), StrategyId(0))
        .unwrap();
    let tok = t.token(s, FRESH);
    // six octets: what NDNd v1.5.3 requires of a token it echoes
    assert_eq!(tok.as_slice().len(), 6);
    assert_eq!(Pcct::token_thread(&tok), Some(3));
    assert_eq!(t.resolve(&PitToken::from_u64(0x0300_0000_0000_0001)), None);
    assert_eq!(t.resolve(&tok), Some((s, FRESH)));
    assert_eq!(t.resolve(&t.token(s, PLAIN)), Some((s, PLAIN)));
    // another thread's table refuses it
    let other = Pcct::new(4, PcctConfig::default());
    assert_eq!(other.resolve(&tok), None);
    // non-Kite tokens are refused
    assert_eq!(t.resolve(&PitToken::new(&[1, 2, 3]).unwrap()), None);
    // once the entry is gone and the slot reused, the old token is stale
    t.pit_discard(s, FRESH);
    let s2 = insert(&mut t, "/b", None);
    assert_eq!(s2, s);
    assert_eq!(t.resolve(&tok), None);
}

#[test]
fn direct_cs_entries_and_freshness() {
    let mut t = small();
    let s = insert(&mut t, "/d", None);
    let wire = Bytes::from_static(b"data");
    t.cs_insert_direct(s, &wire, 0, Time::from_millis(100));
    assert_eq!(t.cs_len(), 1);
    let hit = t.cs_match(s, false, Time::from_millis(500)).unwrap();
    assert_eq!(hit, (s, wire.clone()));
    assert!(t.cs_match(s, true, Time::from_millis(99)).is_some());
    assert!(t.cs_match(s, true, Time::from_millis(100)).is_none());
    // replacing keeps one entry
    t.cs_insert_direct(s, &Bytes::from_static(b"newer"), 0, Time::ZERO);
    assert_eq!(t.cs_len(), 1);
}

/// Caches a Data of `len` octets, fresh until `fresh_ms`, under `uri` (in `hint`'s partition).
fn cache(t: &mut Pcct, uri: &str, hint: Option<&Name>, fresh_ms: u64) -> u32 {
    let s = insert(t, uri, hint);
    let wire = Bytes::from(uri.as_bytes().to_vec());
    t.cs_insert_direct(s, &wire, 0, Time::from_millis(fresh_ms));
    s
}

fn prefix_hit(
    t: &mut Pcct,
    uri: &str,
    hint: Option<&Name>,
    fresh: bool,
    now: u64,
) -> Option<String> {
    t.cs_match_prefix(&name(uri), hint, fresh, Time::from_millis(now))
        .map(|(_, wire)| String::from_utf8(wire.to_vec()).unwrap())
}

#[test]
fn a_prefix_lookup_takes_the_first_cached_data_under_the_name_in_canonical_order() {
    let mut t = Pcct::new(3, PcctConfig::default());
    cache(&mut t, "/p/b", None, 100);
    cache(&mut t, "/p/a/2", None, 300);
    cache(&mut t, "/p/a/1", None, 100);
    cache(&mut t, "/pq", None, 500);
    cache(&mut t, "/o", None, 500);
    assert_eq!(
        prefix_hit(&mut t, "/p", None, false, 0).as_deref(),
        Some("/p/a/1")
    );
    assert_eq!(
        prefix_hit(&mut t, "/p/a", None, false, 0).as_deref(),
        Some("/p/a/1")
    );
    assert_eq!(
        prefix_hit(&mut t, "/p/b", None, false, 0).as_deref(),
        Some("/p/b")
    );
    // MustBeFresh skips what is stale.
    assert_eq!(
        prefix_hit(&mut t, "/p", None, true, 200).as_deref(),
        Some("/p/a/2")
    );
    assert_eq!(prefix_hit(&mut t, "/p", None, true, 400), None);
    // Octet prefixes that are not name prefixes do not match.
    assert_eq!(prefix_hit(&mut t, "/p/a/1/x", None, false, 0), None);
    assert_eq!(
        prefix_hit(&mut t, "/", None, false, 0).as_deref(),
        Some("/o")
    );
    // A Data erased or evicted is no longer found.
    let first = t
        .cs_match_prefix(&name("/p"), None, false, Time::ZERO)
        .unwrap()
        .0;
    assert!(t.cs_erase(first));
    assert_eq!(
        prefix_hit(&mut t, "/p", None, false, 0).as_deref(),
        Some("/p/a/2")
    );
    assert_eq!(t.cs_under(&name("/p"), 10).len(), 2);
    assert_eq!(t.cs_under(&name("/"), 2).len(), 2);
}

#[test]
fn the_ordered_index_is_built_when_first_needed_and_may_be_dropped() {
    let mut t = Pcct::new(3, PcctConfig::default());
    cache(&mut t, "/p/1", None, 100);
    assert!(!t.has_order(), "exact lookups alone never build it");
    assert_eq!(t.cs_match(0, false, Time::ZERO).map(|h| h.0), Some(0));
    assert!(!t.has_order());
    assert_eq!(
        prefix_hit(&mut t, "/p", None, false, 0).as_deref(),
        Some("/p/1")
    );
    assert!(t.has_order());
    // Kept up to date once built.
    let zero = cache(&mut t, "/p/0", None, 100);
    assert_eq!(
        prefix_hit(&mut t, "/p", None, false, 0).as_deref(),
        Some("/p/0")
    );
    t.drop_order();
    assert!(!t.has_order());
    // Built again from what the CS holds by then.
    assert!(t.cs_erase(zero));
    cache(&mut t, "/p/2", None, 100);
    assert_eq!(
        prefix_hit(&mut t, "/p", None, false, 0).as_deref(),
        Some("/p/1")
    );
    assert_eq!(t.cs_under(&name("/p"), 10).len(), 2);
}

#[test]
fn a_prefix_lookup_stays_in_its_forwarding_hint_partition() {
    let mut t = small();
    let h = name("/hint");
    cache(&mut t, "/p/1", Some(&h), 100);
    cache(&mut t, "/p/2", None, 100);
    assert_eq!(
        prefix_hit(&mut t, "/p", None, false, 0).as_deref(),
        Some("/p/2")
    );
    assert_eq!(
        prefix_hit(&mut t, "/p", Some(&h), false, 0).as_deref(),
        Some("/p/1")
    );
    assert_eq!(
        prefix_hit(&mut t, "/p", Some(&name("/other")), false, 0),
        None
    );
}

#[test]
fn a_prefix_lookup_looks_at_a_bounded_number_of_candidates() {
    let mut t = Pcct::new(
        0,
        PcctConfig {
            capacity: 4 * PREFIX_MATCH_SCAN,
            pit_capacity: 16,
            cs_capacity: 4 * PREFIX_MATCH_SCAN,
            cs_bytes: 1 << 24,
        },
    );
    for i in 0..PREFIX_MATCH_SCAN {
        cache(&mut t, &format!("/s/a{i:04}"), None, 10);
    }
    // (Canonical order compares a component's length before its octets.)
    cache(&mut t, "/s/z0000", None, 1_000);
    // Every stale one before it is looked at: the fresh Data past the bound is not found.
    assert_eq!(prefix_hit(&mut t, "/s", None, true, 100), None);
    assert_eq!(
        prefix_hit(&mut t, "/s", None, false, 100).as_deref(),
        Some("/s/a0000")
    );
    assert_eq!(
        prefix_hit(&mut t, "/s/z0000", None, true, 100).as_deref(),
        Some("/s/z0000")
    );
}

#[test]
fn lru_eviction_keeps_the_recently_used() {
    let mut t = small();
    let slots: Vec<u32> = (0..4)
        .map(|i| {
            let s = insert(&mut t, &format!("/c/{i}"), None);
            t.cs_insert_direct(s, &Bytes::new(), 0, Time::ZERO);
            s
        })
        .collect();
    t.cs_touch(slots[0]);
    let s4 = insert(&mut t, "/c/4", None);
    t.cs_insert_direct(s4, &Bytes::new(), 0, Time::ZERO);
    assert_eq!(t.cs_len(), 4);
    // /c/1 was the least recently used
    assert!(t.entry(slots[1]).is_none());
    assert!(t.entry(slots[0]).is_some());
    let order: Vec<u32> = t.cs_slots().collect();
    assert_eq!(order, vec![s4, slots[0], slots[3], slots[2]]);
    t.set_cs_capacity(1);
    assert_eq!(t.cs_slots().collect::<Vec<_>>(), vec![s4]);
    assert_eq!(t.len(), 1);
}

#[test]
fn a_full_table_evicts_cache_then_refuses() {
    let mut t = small();
    for i in 0..4 {
        let s = insert(&mut t, &format!("/c/{i}"), None);
        t.cs_insert_direct(s, &Bytes::new(), 0, Time::ZERO);
    }
    let mut pit_slots = Vec::new();
    for i in 0..4 {
        let n = name(&format!("/p/{i}"));
        let s = t.find_or_insert(&n, hash(&n), None).unwrap();
        t.pit_insert(s, 1, pit_for(&n), StrategyId(0)).unwrap();
        pit_slots.push(s);
    }
    assert_eq!(t.len(), 8);
    // PIT entries exhausted
    let n = name("/p/4");
    let s = t.find_or_insert(&n, hash(&n), None).unwrap();
    assert!(t.pit_insert(s, 1, pit_for(&n), StrategyId(0)).is_err());
    t.remove_if_unused(s);
    // entries exhausted by PIT entries alone: CS entries are evicted to make room, then refused
    let mut t = small();
    for i in 0..8 {
        let n = name(&format!("/x/{i}"));
        let s = t.find_or_insert(&n, hash(&n), None).unwrap();
        if i < 4 {
            t.pit_insert(s, 1, pit_for(&n), StrategyId(0)).unwrap();
        } else {
            t.cs_insert_direct(s, &Bytes::new(), 0, Time::ZERO);
        }
    }
    let n = name("/y");
    assert!(
        t.find_or_insert(&n, hash(&n), None).is_ok(),
        "a CS entry made room"
    );
    assert_eq!(t.cs_len(), 3);
    let mut t2 = Pcct::new(
        0,
        PcctConfig {
            capacity: 2,
            pit_capacity: 2,
            cs_capacity: 2,
            ..PcctConfig::default()
        },
    );
    for i in 0..2 {
        let n = name(&format!("/z/{i}"));
        let s = t2.find_or_insert(&n, hash(&n), None).unwrap();
        t2.pit_insert(s, 1, pit_for(&n), StrategyId(0)).unwrap();
    }
    let n = name("/z/2");
    assert_eq!(t2.find_or_insert(&n, hash(&n), None), Err(Full));
}

#[test]
fn dispatch_hash_pitfall_is_avoided() {
    // Names a thread owns share the low 16 bits of their hash; lookups must stay fast and
    // correct when every key does.
    let same_low_bits = |n: &Name| (hash(n) & !0xFFFF) | 0xBEEF;
    let mut t = Pcct::new(0, PcctConfig::default());
    for i in 0..20_000u64 {
        let n = name(&format!("/n/{i}"));
        let s = t.find_or_insert(&n, same_low_bits(&n), None).unwrap();
        t.cs_insert_direct(s, &Bytes::new(), 0, Time::ZERO);
    }
    for i in (0..20_000u64).step_by(997) {
        let n = name(&format!("/n/{i}"));
        assert!(t.find(&n, same_low_bits(&n), None).is_some());
    }
}

#[test]
fn digest_named_pit_entries_are_counted() {
    let mut t = small();
    assert!(!t.has_digest_named_pits());
    let digest = format!("/d/sha256digest={}", "ab".repeat(32));
    let plain = insert(&mut t, "/d", None);
    t.pit_insert(plain, 1, pit_for(&name("/d")), StrategyId(0))
        .unwrap();
    assert!(!t.has_digest_named_pits());
    let named = insert(&mut t, &digest, None);
    t.pit_insert(named, 1, pit_for(&name(&digest)), StrategyId(0))
        .unwrap();
    t.pit_insert(named, 1, pit_with(&name(&digest), FRESH), StrategyId(0))
        .unwrap();
    assert!(t.has_digest_named_pits());
    t.pit_discard(named, PLAIN);
    assert!(t.has_digest_named_pits(), "one left");
    t.pit_discard(named, FRESH);
    assert!(!t.has_digest_named_pits());
}

#[test]
fn a_full_pit_keeps_room_for_localhost_interests() {
    let mut t = Pcct::new(
        3,
        PcctConfig {
            capacity: 8 + LOCALHOST_PIT_RESERVE,
            pit_capacity: 4,
            cs_capacity: 4,
            ..PcctConfig::default()
        },
    );
    for k in 0..4 {
        let uri = format!("/flood/{k}");
        let s = insert(&mut t, &uri, None);
        t.pit_insert(s, 1, pit_for(&name(&uri)), StrategyId(0))
            .unwrap();
    }
    let s = insert(&mut t, "/flood/4", None);
    assert!(t
        .pit_insert(s, 1, pit_for(&name("/flood/4")), StrategyId(0))
        .is_err());
    t.remove_if_unused(s);
    // /localhost (management) has its reserve; a name merely containing it does not
    for k in 0..LOCALHOST_PIT_RESERVE {
        let uri = format!("/localhost/nfd/status/general/{k}");
        let s = insert(&mut t, &uri, None);
        t.pit_insert(s, 1, pit_for(&name(&uri)), StrategyId(0))
            .unwrap();
    }
    let s = insert(&mut t, "/localhost/nfd/x", None);
    assert!(t
        .pit_insert(s, 1, pit_for(&name("/localhost/nfd/x")), StrategyId(0))
        .is_err());
    let s = insert(&mut t, "/a/localhost", None);
    assert!(t
        .pit_insert(s, 1, pit_for(&name("/a/localhost")), StrategyId(0))
        .is_err());
    assert_eq!(t.pit_len(), 4 + LOCALHOST_PIT_RESERVE);
}

/// A packet sliced out of a larger receive buffer, as the faces hand them on, and whether a
/// pointer lies inside that buffer.
fn in_burst(packet: &[u8]) -> (Bytes, impl Fn(*const u8) -> bool) {
    let mut burst = vec![0xee; 64 * 1024];
    burst[1000..1000 + packet.len()].copy_from_slice(packet);
    let burst = Bytes::from(burst);
    let range = burst.as_ptr_range();
    let inside = move |p: *const u8| range.contains(&p);
    (burst.slice(1000..1000 + packet.len()), inside)
}

#[test]
fn kept_interests_data_and_names_do_not_share_the_receive_buffer() {
    let mut t = small();
    let n = name("/kept/interest");
    let mut i = Interest::new(n.clone());
    i.nonce = Some(Nonce::from(1));
    let (wire, inside) = in_burst(&i.encode());
    let view = InterestView::decode(wire).unwrap();
    let s = t.find_or_insert(&view.name, hash(&n), None).unwrap();
    t.pit_insert(s, 1, view, StrategyId(0)).unwrap();
    let pit = t.pit(s, PLAIN).unwrap();
    assert!(
        !inside(pit.interest.wire().as_ptr()),
        "PIT copied its Interest"
    );
    assert_eq!(pit.interest.wire().len(), i.encode().len());
    let e = t.entry(s).unwrap();
    assert!(!inside(e.name.value().as_ptr()), "the name shares the copy");
    assert_eq!(e.name.held_len(), pit.interest.wire().len());

    // A Data cached under a name that came from a received packet.
    let (data, inside) = in_burst(b"some data");
    let (dname, inside_name) = in_burst(&name("/kept/data").to_wire());
    let dname = Name::decode(dname).unwrap();
    let d = t.find_or_insert(&dname, hash(&dname), None).unwrap();
    t.cs_insert_direct(d, &data, 0, Time::ZERO);
    let (_, kept) = t.cs_match(d, false, Time::ZERO).unwrap();
    assert!(!inside(kept.as_ptr()), "CS copied its Data");
    let e = t.entry(d).unwrap();
    assert!(!inside_name(e.name.value().as_ptr()), "the name was copied");
    assert_eq!(e.name.held_len(), e.name.value().len());
}

#[test]
fn a_data_received_alone_in_a_reusable_buffer_is_kept_as_is_and_its_buffer_goes_back() {
    use kite_packet::pool::{copy_reusable, give_back, take_reusable};
    // A frame (a 20-octet LP header, then the Data) read into a buffer of its own.
    give_back(copy_reusable(&[0u8; 3000]));
    let mut buf = take_reusable(3000).expect("the buffer just given back");
    let own_buffer = buf.capacity();
    buf.extend_from_slice(&[0x64; 20]);
    buf.extend_from_slice(&[0x06; 2980]);
    let data = buf.freeze().slice(20..);
    let at = data.as_ptr();
    let mut t = small();
    let n = name("/own/data");
    let d = t.find_or_insert(&n, hash(&n), None).unwrap();
    t.cs_insert_direct(d, &data, own_buffer, Time::ZERO);
    drop(data);
    let (_, kept) = t.cs_match(d, false, Time::ZERO).unwrap();
    assert_eq!(kept.as_ptr(), at, "kept as is, not copied");
    let name_charge = footprint(n.value().len()) + KEPT_OVERHEAD;
    assert_eq!(
        t.cs_bytes(),
        own_buffer + KEPT_OVERHEAD + name_charge,
        "charged the whole buffer it keeps alive"
    );
    drop(kept);
    assert!(t.cs_erase(d));
    let again = take_reusable(3000).expect("the entry gave the buffer back");
    assert_eq!(again.as_ptr(), at.wrapping_sub(20), "from its start");
    assert_eq!(again.capacity(), own_buffer);
}

#[test]
fn with_the_cs_off_a_data_is_not_copied() {
    let mut t = Pcct::new(
        0,
        PcctConfig {
            cs_capacity: 0,
            ..PcctConfig::default()
        },
    );
    let n = name("/off/data");
    let d = t.find_or_insert(&n, hash(&n), None).unwrap();
    t.cs_insert_direct(d, &Bytes::from(vec![5u8; 6000]), 0, Time::ZERO);
    assert_eq!(t.cs_len(), 0);
    let copied = kite_packet::pool::take_reusable(6000);
    assert!(copied.is_none(), "no copy was made and given back");
}

#[test]
fn a_cached_data_still_being_sent_is_not_given_back_when_evicted() {
    use kite_packet::pool::take_reusable;
    let mut t = small();
    let n = name("/sent/data");
    let d = t.find_or_insert(&n, hash(&n), None).unwrap();
    t.cs_insert_direct(d, &Bytes::from(vec![5u8; 2000]), 0, Time::ZERO);
    let (_, sending) = t.cs_match(d, false, Time::ZERO).unwrap();
    assert!(t.cs_erase(d));
    assert!(take_reusable(2000).is_none(), "a packet still holds it");
    assert_eq!(&sending[..], &[5u8; 2000][..]);
}

#[test]
fn the_cs_stays_within_its_octet_capacity_evicting_the_least_recently_used() {
    let per = footprint(100) + footprint(name("/c/0").value().len()) + 2 * KEPT_OVERHEAD;
    let mut t = Pcct::new(
        0,
        PcctConfig {
            capacity: 64,
            pit_capacity: 4,
            cs_capacity: 64,
            cs_bytes: 3 * per,
        },
    );
    let slots: Vec<u32> = (0..5)
        .map(|i| {
            let s = insert(&mut t, &format!("/c/{i}"), None);
            t.cs_insert_direct(s, &Bytes::from(vec![i as u8; 100]), 0, Time::ZERO);
            assert!(t.cs_bytes() <= 3 * per);
            s
        })
        .collect();
    assert_eq!(t.cs_len(), 3);
    assert_eq!(t.cs_bytes(), 3 * per, "name, packet and overhead charged");
    assert!(t.entry(slots[1]).is_none() && t.entry(slots[2]).is_some());
    // Larger than the whole capacity: not cached, nothing evicted for it, no entry left.
    let before = t.len();
    let big = insert(&mut t, "/big", None);
    t.cs_insert_direct(big, &Bytes::from(vec![0; 3 * per]), 0, Time::ZERO);
    assert_eq!((t.cs_len(), t.len()), (3, before));
    // Erasing gives the octets back.
    for s in slots[2..].iter() {
        assert!(t.cs_erase(*s));
    }
    assert_eq!((t.cs_len(), t.cs_bytes()), (0, 0));
}

#[test]
fn lowering_the_octet_capacity_evicts_the_least_recently_used_at_once() {
    let per = footprint(100) + footprint(name("/c/0").value().len()) + 2 * KEPT_OVERHEAD;
    let mut t = Pcct::new(
        0,
        PcctConfig {
            capacity: 64,
            pit_capacity: 4,
            cs_capacity: 64,
            cs_bytes: 4 * per,
        },
    );
    let slots: Vec<u32> = (0..4)
        .map(|i| {
            let s = insert(&mut t, &format!("/c/{i}"), None);
            t.cs_insert_direct(s, &Bytes::from(vec![i as u8; 100]), 0, Time::ZERO);
            s
        })
        .collect();
    assert_eq!(t.cs_len(), 4);
    t.set_cs_byte_capacity(2 * per);
    assert_eq!((t.cs_len(), t.cs_bytes()), (2, 2 * per));
    assert!(t.entry(slots[1]).is_none() && t.entry(slots[2]).is_some());
}

/// A receive buffer that says when its allocation is freed.
struct Burst {
    octets: Vec<u8>,
    freed: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl AsRef<[u8]> for Burst {
    fn as_ref(&self) -> &[u8] {
        &self.octets
    }
}

impl Drop for Burst {
    fn drop(&mut self) {
        self.freed.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

/// `packets` one after another in a 64 KiB receive buffer, as slices of it, and a flag set
/// when the buffer is freed.
fn tracked_burst(packets: &[&[u8]]) -> (Vec<Bytes>, std::sync::Arc<std::sync::atomic::AtomicBool>) {
    let freed = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut octets = vec![0xee; 64 * 1024];
    let mut at = 100;
    let mut ranges = Vec::new();
    for p in packets {
        octets[at..at + p.len()].copy_from_slice(p);
        ranges.push(at..at + p.len());
        at += p.len() + 100;
    }
    let burst = Bytes::from_owner(Burst {
        octets,
        freed: freed.clone(),
    });
    (ranges.into_iter().map(|r| burst.slice(r)).collect(), freed)
}

#[test]
fn pending_interests_and_cached_data_let_their_receive_buffer_go() {
    let mut t = small();
    let mut i = Interest::new(name("/live/interest"));
    i.nonce = Some(Nonce::from(1));
    let (interest_wire, data_wire) = (i.encode(), vec![0x06, 0x02, 0x07, 0x00]);
    let (mut packets, freed) = tracked_burst(&[&interest_wire, &data_wire]);
    let data = packets.pop().unwrap();
    let view = InterestView::decode(packets.pop().unwrap()).unwrap();
    let n = view.name.clone();
    let s = t.find_or_insert(&n, hash(&n), None).unwrap();
    t.pit_insert(s, 1, view, StrategyId(0)).unwrap();
    let d = insert(&mut t, "/live/data", None);
    t.cs_insert_direct(d, &data, 0, Time::ZERO);
    assert!(!freed.load(std::sync::atomic::Ordering::SeqCst));
    // The burst is over: what the caller held of the buffer goes, the tables' entries stay.
    drop((n, data));
    assert!(
        freed.load(std::sync::atomic::Ordering::SeqCst),
        "a pending Interest or a cached Data keeps the receive buffer alive"
    );
    assert_eq!(
        &t.pit(s, PLAIN).unwrap().interest.wire()[..],
        &interest_wire[..]
    );
    let (_, cached) = t.cs_match(d, false, Time::ZERO).unwrap();
    assert_eq!(&cached[..], &data_wire[..]);
}

#[test]
fn an_interest_copy_still_in_flight_outlives_its_entry_and_is_not_reused() {
    let mut t = small();
    let pending = |t: &mut Pcct, uri: &str, nonce: u32| {
        let mut i = Interest::new(name(uri));
        i.nonce = Some(Nonce::from(nonce));
        let wire = i.encode();
        let view = InterestView::decode(wire.clone()).unwrap();
        let n = view.name.clone();
        let s = t.find_or_insert(&n, hash(&n), None).unwrap();
        t.pit_insert(s, u64::from(nonce), view, StrategyId(0))
            .unwrap();
        (s, wire)
    };
    let (s, first) = pending(&mut t, "/flight/a", 1);
    // An outgoing packet still queued on a face when the entry goes.
    let in_flight = t.pit(s, PLAIN).unwrap().interest.wire().clone();
    assert!(t.pit_discard(s, PLAIN), "the entry goes with its PIT entry");
    let (s2, second) = pending(&mut t, "/flight/b", 2);
    let copy = t.pit(s2, PLAIN).unwrap().interest.wire().clone();
    assert_ne!(copy.as_ptr(), in_flight.as_ptr());
    assert_eq!((&in_flight[..], &copy[..]), (&first[..], &second[..]));
}
