//! `kite-fw`: Kite's forwarding plane, as a library independent of sockets.
//!
//! One [`Forwarder`](forwarder::Forwarder) is one forwarding thread (NDN-DPDK's forwarding
//! stage, sections 2, 4, 5 and 6 of "NDN-DPDK: NDN Forwarding at 100 Gbps on Commodity
//! Hardware"): it owns its PIT-CS composite table, Dead Nonce List and timers outright, shares
//! the FIB read-only through an RCU-style scheme, and runs NFD's forwarding pipelines (section
//! 3.1 of "YaNFD: Yet another Named Data Networking Forwarding Daemon") over packets the input
//! stage has decoded and hashed. Time comes from the caller, so tests drive a virtual clock.
//!
//! Modules: `face` and `time` (small shared types), `hash` (name hashes computed once per
//! packet), `index` (the prefetchable bucket index the FIB and PCCT find entries through), `timer` (O(1) timer wheel), `dnl` (Dead Nonce List), `fib` (2-stage LPM under
//! RCU, with strategy choice merged in), `pcct` (PIT and CS in one table with a token index),
//! `strategy` (the strategy API and built-ins), and `forwarder` (the pipelines).

pub mod dnl;
pub mod face;
mod fault;
pub mod fib;
pub mod forwarder;
pub mod hash;
mod index;
pub mod lograte;
pub mod ndt;
pub mod out;
pub mod pcct;
pub mod runtime;
mod slab;
pub mod strategy;
pub mod time;
pub mod timer;
pub mod workload;
