//! The helpers a program calls. The VM calls them as plain functions of five numbers, so the
//! state of the running invocation lives in a thread-local [`Call`]: what the program may see
//! through helpers (eligible nexthops, the name) and what it asked for (actions, applied to
//! the strategy context after the program returns, in order). A program that asks for more
//! than a trigger allows faults.

use std::cell::RefCell;

use kite_packet::Name;

use kite_fw::strategy::RTT_SLOTS;

use crate::abi::{helper, MAX_NEXTHOPS};

/// What a program may ask for in one trigger.
pub const MAX_ACTIONS: usize = 16;

/// Something a program asked the forwarder to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Send the Interest to this face.
    Forward(u64),
    /// Nack every downstream with this reason.
    Nack(u64),
    /// Call the program again after `ms`, with `data`.
    Timer {
        /// Delay, ms.
        ms: u64,
        /// Passed back as `timer_data`.
        data: u64,
    },
}

/// The running invocation, per thread.
#[derive(Debug, Default)]
pub struct Call {
    /// Faces the Interest may go to.
    pub eligible: [u64; MAX_NEXTHOPS],
    /// How many of `eligible` are set.
    pub eligible_len: usize,
    /// Requested actions.
    pub actions: [Option<Action>; MAX_ACTIONS],
    /// How many of `actions` are set.
    pub action_len: usize,
    /// Set when the program broke a rule at run time.
    pub fault: Option<&'static str>,
    /// The thread's random state.
    pub rng: u64,
    /// The current time, ns.
    pub now_ns: u64,
    /// The Interest's name, when the program reads it.
    pub name: Option<Name>,
    /// (face, smoothed RTT in µs) of the FIB entry's nexthops in this thread, when the
    /// program asks for RTTs.
    pub rtts: [(u64, u32); RTT_SLOTS],
}

thread_local! {
    /// The invocation running on this thread.
    pub static CALL: RefCell<Call> = RefCell::new(Call::default());
}

const REFUSED: u64 = u64::MAX;

fn push(action: Action) -> u64 {
    CALL.with_borrow_mut(|c| {
        if c.action_len == MAX_ACTIONS {
            c.fault = Some("more than 16 actions in one trigger");
            return REFUSED;
        }
        c.actions[c.action_len] = Some(action);
        c.action_len += 1;
        0
    })
}

fn forward_interest(face: u64, _: u64, _: u64, _: u64, _: u64) -> u64 {
    let eligible = CALL.with_borrow(|c| c.eligible[..c.eligible_len].contains(&face));
    if eligible {
        push(Action::Forward(face))
    } else {
        REFUSED
    }
}

fn return_nacks(reason: u64, _: u64, _: u64, _: u64, _: u64) -> u64 {
    push(Action::Nack(reason))
}

fn set_timer(ms: u64, data: u64, _: u64, _: u64, _: u64) -> u64 {
    push(Action::Timer { ms, data })
}

fn random(_: u64, _: u64, _: u64, _: u64, _: u64) -> u64 {
    CALL.with_borrow_mut(|c| {
        let mut x = c.rng;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        c.rng = x;
        x
    })
}

fn now(_: u64, _: u64, _: u64, _: u64, _: u64) -> u64 {
    CALL.with_borrow(|c| c.now_ns)
}

fn name_component_len(i: u64, _: u64, _: u64, _: u64, _: u64) -> u64 {
    CALL.with_borrow(|c| {
        let comp = c
            .name
            .as_ref()
            .and_then(|n| n.get(usize::try_from(i).ok()?));
        comp.map_or(REFUSED, |comp| comp.value().len() as u64)
    })
}

fn name_component_byte(i: u64, off: u64, _: u64, _: u64, _: u64) -> u64 {
    CALL.with_borrow(|c| {
        let comp = c
            .name
            .as_ref()
            .and_then(|n| n.get(usize::try_from(i).ok()?));
        comp.and_then(|comp| comp.value().get(usize::try_from(off).ok()?).copied())
            .map_or(REFUSED, u64::from)
    })
}

fn nexthop_srtt_us(face: u64, _: u64, _: u64, _: u64, _: u64) -> u64 {
    CALL.with_borrow(|c| {
        c.rtts
            .iter()
            .find(|r| r.0 == face && face != 0)
            .map_or(0, |r| u64::from(r.1))
    })
}

/// Every helper by id, as the VM registers them.
pub const TABLE: [(u32, rbpf::ebpf::Helper); 8] = [
    (helper::FORWARD_INTEREST, forward_interest),
    (helper::RETURN_NACKS, return_nacks),
    (helper::SET_TIMER, set_timer),
    (helper::RANDOM, random),
    (helper::NOW, now),
    (helper::NAME_COMPONENT_LEN, name_component_len),
    (helper::NAME_COMPONENT_BYTE, name_component_byte),
    (helper::NEXTHOP_SRTT_US, nexthop_srtt_us),
];
