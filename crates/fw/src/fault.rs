//! Fault injection for the end-to-end tests of `kite run`'s panic policy (a panic in any
//! thread ends the process), compiled into debug builds only: with `KITE_FAULT_PANIC=io` in
//! its environment the I/O thread panics when it dispatches an Interest whose first name
//! component is `kite-fault-panic`; with `KITE_FAULT_PANIC=fwd` the forwarding shard that
//! receives that Interest does. Release builds compile it to nothing.

use kite_packet::Name;

/// The environment variable naming the stage that panics.
#[cfg(debug_assertions)]
const VAR: &str = "KITE_FAULT_PANIC";

/// The first name component that triggers the fault.
#[cfg(debug_assertions)]
const TRIGGER: &[u8] = b"kite-fault-panic";

/// Panics when `name` is the trigger and `stage` is the one the environment names.
#[cfg(debug_assertions)]
pub fn panic_if_asked(stage: &str, name: &Name) {
    let triggered = name.get(0).is_some_and(|c| c.value() == TRIGGER);
    if triggered && std::env::var(VAR).is_ok_and(|v| v == stage) {
        panic!("fault injected in the {stage} stage ({VAR})");
    }
}

/// Release builds: nothing.
#[cfg(not(debug_assertions))]
#[inline(always)]
pub fn panic_if_asked(_stage: &str, _name: &Name) {}
