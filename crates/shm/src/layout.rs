//! Where the fields of a region lie: the header's, then the two rings' control blocks, each
//! with the producer's cache line (`tail`, `waiting`) before the consumer's (`head`,
//! `sleeping`). Offsets in octets from the region's start (header fields, control blocks) or
//! from a control block's start (its fields).

/// The magic number ([`crate::MAGIC`]), a u64.
pub const OFF_MAGIC: usize = 0;
/// The layout version ([`crate::VERSION`]), a u32.
pub const OFF_VERSION: usize = 8;
/// Octets of each ring, a u32.
pub const OFF_RING_SIZE: usize = 12;
/// Control block of the ring the application writes.
pub const UP: usize = 64;
/// Control block of the ring the forwarder writes.
pub const DOWN: usize = 192;
/// The producer's tail: octets published so far, a u64.
pub const TAIL: usize = 0;
/// The producer's flag, a u32: it waits for room.
pub const WAITING: usize = 8;
/// The consumer's head: octets freed so far, a u64.
pub const HEAD: usize = 64;
/// The consumer's flag, a u32: it sleeps until woken.
pub const SLEEPING: usize = 72;
