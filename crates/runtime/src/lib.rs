//! `kite-runtime`: the daemon's threads: the I/O threads that own the faces' sockets and the
//! forwarding threads that own the tables (NDN-DPDK paper, sections 2–3; YaNFD paper, section
//! 3.2), joined by bounded single-producer rings, with zero CPU use when idle.
//!
//! - [`RuntimeConfig::io_threads`] I/O threads each own a disjoint set of faces: stream
//!   connections go to the thread with the fewest faces, each thread has its own UDP
//!   listener on the same address (`SO_REUSEPORT`: the kernel picks a remote's thread),
//!   Ethernet interface i belongs to thread i mod N. Each (I/O thread, forwarding thread)
//!   pair has rings of its own, so every ring keeps one producer and one consumer.
//! - An I/O thread reads its faces in bursts, runs the link service, decodes the forwarder view,
//!   hashes the name once and dispatches: Interests by the Name Dispatch Table, Data and Nacks
//!   by the thread id inside Kite's PIT token (or, without one, to every thread the NDT names
//!   for the Data name's short prefixes). It is also the output stage: it encodes what the
//!   forwarding threads send (LP header with token and congestion mark) and writes each face's
//!   queue with one `writev`/`sendmmsg` per burst.
//! - A forwarding thread takes Data and Nacks before Interests, runs CoDel on each input ring
//!   (marking, not dropping), runs the pipelines, and hands packets to the I/O thread that owns
//!   the destination face (the owner comes with the face's `AddFace`), or to management for
//!   the internal face.
//! - With [`RuntimeConfig::inline_forwarding`] the I/O threads run the forwarding shards
//!   themselves between their reads and writes (shard i on I/O thread i mod N): same rings and
//!   pipelines, no thread hand-off.
//! - Management (a layer above) reaches the threads through [`RuntimeHandle`]: control messages
//!   that create and destroy faces, read counters, and carry the internal face's packets.
//!
//! Every thread spins briefly on empty polls, then parks (a futex for forwarding threads,
//! `epoll_wait` for the I/O thread) after announcing it sleeps; producers wake a thread only when
//! it announced that. docs/architecture.md says why; docs/performance.md ("Inline forwarding,
//! parking and spinning") what it costs.

mod affinity;
mod busy;
pub mod codel;
mod command;
mod config;
mod dispatch;
mod fwdlog;
mod handle;
mod io;
mod iolog;
pub mod lograte;
pub mod park;
mod share;
mod shm;
mod spawn;
mod status;
mod worker;

pub use busy::{BusyTime, BusyTimes};
pub(crate) use command::{FwCommand, IoCommand};
pub use config::{RuntimeConfig, StartError, MAX_IO_THREADS};
pub use handle::RuntimeHandle;
pub use spawn::Runtime;
pub use status::{
    CreateReply, FaceCommandError, FaceEvent, FaceOptions, FaceStatus, InternalInterest,
    QueueDepths, RingDepth, ThreadCounters,
};
