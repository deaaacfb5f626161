//! The input stage's dispatch: a received packet, already decoded by the face's link service,
//! gets its name hashes and goes to the forwarding thread that owns it (papers/002 section 2):
//! Interests by the Name Dispatch Table, Data and Nacks by the thread inside Kite's PIT token,
//! or, without one, to each thread the NDT names for the Data name's prefixes 0..=k.

use std::sync::Arc;

use kite_face::{Received, RxPacket};
use kite_packet::{CachePolicy, PitToken};
use rtrb::{Consumer, Producer, RingBuffer};

use crate::forwarder::{InData, InInterest, InNack};
use crate::hash::NameHasher;
use crate::ndt::Ndt;
use crate::pcct::Pcct;
use crate::time::{Clock, MonotonicClock, Time};

use super::park::Waker;

/// A packet with the time it entered its ring (CoDel measures the wait).
pub(crate) struct Stamped<T> {
    pub at: Time,
    pub pkt: T,
}

/// The producing ends of one forwarding thread's three input rings.
pub(crate) struct Inputs {
    interests: Producer<Stamped<InInterest>>,
    data: Producer<Stamped<InData>>,
    nacks: Producer<Stamped<InNack>>,
}

/// The consuming ends, held by the forwarding thread.
pub(crate) struct InputRings {
    pub interests: Consumer<Stamped<InInterest>>,
    pub data: Consumer<Stamped<InData>>,
    pub nacks: Consumer<Stamped<InNack>>,
}

impl InputRings {
    /// Whether any ring holds a packet.
    pub fn has_work(&self) -> bool {
        !self.data.is_empty() || !self.nacks.is_empty() || !self.interests.is_empty()
    }
}

/// Three rings of `capacity` slots each.
pub(crate) fn rings(capacity: usize) -> (Inputs, InputRings) {
    let (ip, ic) = RingBuffer::new(capacity);
    let (dp, dc) = RingBuffer::new(capacity);
    let (np, nc) = RingBuffer::new(capacity);
    (
        Inputs {
            interests: ip,
            data: dp,
            nacks: np,
        },
        InputRings {
            interests: ic,
            data: dc,
            nacks: nc,
        },
    )
}

/// Dispatch counters of one I/O thread.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct DispatchCounters {
    /// Packets dropped because the destination ring was full.
    pub ring_full: u64,
    /// Data or Nacks whose Kite token named a thread that does not exist.
    pub bad_token: u64,
}

/// Routes received packets to forwarding threads.
pub(crate) struct Dispatcher {
    hasher: NameHasher,
    ndt: Arc<Ndt>,
    inputs: Vec<Inputs>,
    wakers: Vec<Waker>,
    /// Threads that got packets since the last `wake`.
    pending: u64,
    clock: MonotonicClock,
    pub counters: DispatchCounters,
}

impl Dispatcher {
    pub fn new(
        hasher: NameHasher,
        ndt: Arc<Ndt>,
        inputs: Vec<Inputs>,
        wakers: Vec<Waker>,
        clock: MonotonicClock,
    ) -> Self {
        Dispatcher {
            hasher,
            ndt,
            inputs,
            wakers,
            pending: 0,
            clock,
            counters: DispatchCounters::default(),
        }
    }

    /// The thread a Kite token names, if it is one and the thread exists.
    fn token_thread(&mut self, token: Option<&PitToken>) -> Option<usize> {
        let t = usize::from(Pcct::token_thread(token?)?);
        if t < self.inputs.len() {
            Some(t)
        } else {
            self.counters.bad_token += 1;
            None
        }
    }

    /// Queues a burst of received packets (`received` is left empty), stamped with one
    /// arrival time, and wakes the threads that got any.
    pub fn dispatch_burst(&mut self, received: &mut Vec<Received>) {
        if received.is_empty() {
            return;
        }
        let at = self.clock.now();
        for r in received.drain(..) {
            self.dispatch(r, at);
        }
        self.wake();
    }

    /// Queues one received packet for its thread(s).
    fn dispatch(&mut self, r: Received, at: Time) {
        match r.packet {
            RxPacket::Interest(interest) => {
                let hashes = self.hasher.prefix_hashes(&interest.name);
                let t = usize::from(self.ndt.thread_for(&hashes));
                let pkt = InInterest {
                    interest,
                    hashes,
                    face: r.face,
                    token: r.pit_token,
                    next_hop: r.next_hop_face_id.map(crate::face::FaceId),
                    congestion_mark: r.congestion_mark,
                };
                let ok = self.inputs[t].interests.push(Stamped { at, pkt }).is_ok();
                self.counted(t, ok);
            }
            RxPacket::Data(data) => {
                let no_cache = r.cache_policy == Some(CachePolicy::NO_CACHE);
                let mut pkt = InData {
                    data,
                    hashes: None,
                    face: r.face,
                    token: r.pit_token,
                    congestion_mark: r.congestion_mark,
                    no_cache,
                };
                if let Some(t) = self.token_thread(r.pit_token.as_ref()) {
                    let ok = self.inputs[t].data.push(Stamped { at, pkt }).is_ok();
                    self.counted(t, ok);
                    return;
                }
                let hashes = self.hasher.prefix_hashes(&pkt.data.name);
                let threads = self.ndt.threads_for_data(&hashes);
                pkt.hashes = Some(hashes);
                for &t in &threads {
                    let t = usize::from(t);
                    let ok = self.inputs[t]
                        .data
                        .push(Stamped {
                            at,
                            pkt: pkt.clone(),
                        })
                        .is_ok();
                    self.counted(t, ok);
                }
            }
            RxPacket::Nack(reason, interest) => {
                let hashes = self.hasher.prefix_hashes(&interest.name);
                let t = self
                    .token_thread(r.pit_token.as_ref())
                    .unwrap_or_else(|| usize::from(self.ndt.thread_for(&hashes)));
                let pkt = InNack {
                    interest,
                    hashes,
                    reason,
                    face: r.face,
                    token: r.pit_token,
                };
                let ok = self.inputs[t].nacks.push(Stamped { at, pkt }).is_ok();
                self.counted(t, ok);
            }
        }
    }

    fn counted(&mut self, thread: usize, ok: bool) {
        if ok {
            self.pending |= 1 << thread;
        } else {
            self.counters.ring_full += 1;
        }
    }

    /// Wakes the threads that got packets since the last call (once per burst).
    fn wake(&mut self) {
        let mut p = self.pending;
        while p != 0 {
            let t = p.trailing_zeros() as usize;
            self.wakers[t].wake();
            p &= p - 1;
        }
        self.pending = 0;
    }
}
