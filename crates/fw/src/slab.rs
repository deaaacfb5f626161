//! A fixed-capacity slab: values in a preallocated vector, addressed by index, with a free
//! list and a generation per slot so stale references are detected instead of followed.

/// A slab of at most `capacity` values. Inserting never reallocates: the storage is reserved
/// up front, and a full slab refuses the value.
#[derive(Debug)]
pub struct Slab<T> {
    slots: Vec<Slot<T>>,
    free: Vec<u32>,
    len: usize,
    capacity: usize,
}

#[derive(Debug)]
struct Slot<T> {
    gen: u32,
    value: Option<T>,
}

impl<T> Slab<T> {
    /// An empty slab for up to `capacity` values (at most 2^32).
    pub fn with_capacity(capacity: usize) -> Self {
        let capacity = capacity.min(u32::MAX as usize);
        Slab {
            slots: Vec::with_capacity(capacity),
            free: Vec::with_capacity(capacity),
            len: 0,
            capacity,
        }
    }

    /// Stores the value `make` builds, written straight into its slot (an entry is large:
    /// building it first and moving it in costs a copy); its index and the slot's generation,
    /// or `None` when full (`make` is not called).
    #[inline]
    pub fn insert_with(&mut self, make: impl FnOnce() -> T) -> Option<(u32, u32)> {
        let index = match self.free.pop() {
            Some(i) => i,
            None if self.slots.len() < self.capacity => {
                self.slots.push(Slot {
                    gen: 0,
                    value: None,
                });
                (self.slots.len() - 1) as u32
            }
            None => return None,
        };
        let slot = &mut self.slots[index as usize];
        slot.value = Some(make());
        self.len += 1;
        Some((index, slot.gen))
    }

    /// Drops the value at `index` in place; the slot's generation moves on.
    #[inline]
    pub fn discard(&mut self, index: u32) -> bool {
        let Some(slot) = self.slots.get_mut(index as usize) else {
            return false;
        };
        if slot.value.is_none() {
            return false;
        }
        slot.value = None;
        slot.gen = slot.gen.wrapping_add(1);
        self.free.push(index);
        self.len -= 1;
        true
    }

    /// The value at `index`.
    #[inline]
    pub fn get(&self, index: u32) -> Option<&T> {
        self.slots.get(index as usize)?.value.as_ref()
    }

    /// The value at `index`, mutably.
    #[inline]
    pub fn get_mut(&mut self, index: u32) -> Option<&mut T> {
        self.slots.get_mut(index as usize)?.value.as_mut()
    }

    /// Starts loading slot `index` into cache without reading it (nothing when out of range).
    #[inline]
    pub fn prefetch(&self, index: u32) {
        if let Some(slot) = self.slots.get(index as usize) {
            crate::index::prefetch_all(slot);
        }
    }

    /// The current generation of slot `index` (0 for a slot never used).
    #[inline]
    pub fn gen(&self, index: u32) -> u32 {
        self.slots.get(index as usize).map_or(0, |s| s.gen)
    }

    /// Values stored.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no value is stored.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether no more values fit.
    #[inline]
    pub fn is_full(&self) -> bool {
        self.len >= self.capacity
    }

    /// The most values it holds.
    #[inline]
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Indices and values stored, in index order.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &T)> {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.value.as_ref().map(|v| (i as u32, v)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_remove_reuse_and_generations() {
        let mut s = Slab::with_capacity(2);
        let (a, ga) = s.insert_with(|| 'a').unwrap();
        let (b, _) = s.insert_with(|| 'b').unwrap();
        assert_eq!(s.insert_with(|| unreachable!("full")), None);
        assert!(s.is_full());
        assert_eq!(s.get(a), Some(&'a'));
        assert!(s.discard(a));
        assert!(!s.discard(a));
        assert_eq!(s.get(a), None);
        let (c, gc) = s.insert_with(|| 'c').unwrap();
        assert_eq!(c, a);
        assert_ne!(gc, ga);
        assert_eq!((s.get(c), s.gen(c)), (Some(&'c'), gc));
        assert_eq!(s.get(b), Some(&'b'));
        assert_eq!(s.len(), 2);
        assert_eq!(s.iter().map(|(_, v)| *v).collect::<String>(), "cb");
        assert_eq!(s.get(99), None);
    }

    #[test]
    fn prefetch_reads_nothing_and_ignores_slots_out_of_range() {
        let mut s = Slab::with_capacity(4);
        let (a, _) = s.insert_with(|| 7u64).unwrap();
        s.prefetch(a);
        s.prefetch(3);
        s.prefetch(u32::MAX);
        assert_eq!((s.get(a), s.len()), (Some(&7), 1));
    }

    #[test]
    fn storage_is_reserved_up_front() {
        let mut s = Slab::with_capacity(1000);
        let ptr = s.slots.as_ptr();
        for i in 0..1000 {
            s.insert_with(|| i).unwrap();
        }
        assert_eq!(s.slots.as_ptr(), ptr, "no reallocation");
    }
}
