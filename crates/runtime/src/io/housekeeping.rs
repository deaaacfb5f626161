//! The housekeeping tick (once a second): listeners whose accept failed are tried again, the
//! affinity and move records expire, the logs report, the channels' drops are warned about,
//! partial packets time out, and idle and evicted faces close.

use std::time::Instant;

use kite_face::{EtherChannel, UdpChannel};

use super::input::count_reassembly_drops;
use super::IoThread;
use crate::iolog::CloseReason;

impl IoThread {
    /// Housekeeping at `now`.
    pub(super) fn housekeeping(&mut self, now: Instant) {
        for i in std::mem::take(&mut self.accept_retry) {
            self.accept_all(i, now);
        }
        self.dispatcher.affinity.expire(now);
        self.moved.expire(now);
        let restrained = self.dispatcher.restrained_faces();
        (self.log).housekeeping(now, self.table.map(), &self.udp, &self.ether, restrained);
        self.dispatcher.forget_restraints();
        for ch in &mut self.ether {
            let dropped = ch.take_socket_drops();
            if dropped > 0 {
                let total = ch.counters().n_socket_drops;
                // At most once a second per interface (the housekeeping tick).
                if matches!(ch.io_path(), kite_face::IoPath::Xdp { .. }) {
                    tracing::warn!(
                        interface = ch.name(),
                        dropped,
                        total,
                        "the kernel dropped frames Kite's sockets could not take: a full \
                         ring or UMEM (raise face_system.ether.xdp_umem) or a frame longer \
                         than a UMEM frame"
                    );
                } else {
                    tracing::warn!(
                        interface = ch.name(),
                        dropped,
                        total,
                        "the kernel dropped frames for a full receive buffer (raise \
                         face_system.ether.socket_buffer)"
                    );
                }
            }
        }
        for u in &self.udp {
            let shared = u.take_shared();
            if shared > 0 {
                // At most once a second per listener (the housekeeping tick).
                tracing::warn!(
                    listener = %u.local_addr(),
                    faces = shared,
                    "UDP faces made without a socket of their own share the listener's \
                     (raise the open files limit)"
                );
            }
            let bad = u.take_bad_checksums();
            if bad > 0 {
                // At most once a second per listener (the housekeeping tick).
                tracing::warn!(
                    listener = %u.local_addr(),
                    dropped = bad,
                    "UDP datagrams read through AF_XDP with a bad checksum (counted as \
                     malformed); a sender on a veth or another virtual device must compute \
                     its checksums (ethtool -K DEV tx off)"
                );
            }
        }
        let channels = self.udp.iter_mut().map(UdpChannel::reassembler);
        for r in channels.chain(self.ether.iter_mut().map(EtherChannel::reassembler)) {
            r.expire(now);
            count_reassembly_drops(r, self.table.map_mut());
        }
        let mut idle = Vec::new();
        let mut evicted = Vec::new();
        for (id, face) in self.table.map_mut() {
            face.expire(now);
            if face.idle_expired(now) {
                idle.push(*id);
            } else if face.evicted() {
                evicted.push(*id);
            }
        }
        for id in idle {
            self.close_face(id, CloseReason::Idle, now);
        }
        for id in evicted {
            self.close_face(id, CloseReason::Evicted, now);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use kite_link::Persistency;

    use crate::io::testing::{datagram, harness, interest, stream};
    use crate::io::HOUSEKEEPING;
    use crate::FaceEvent;

    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn an_on_demand_datagram_face_closes_once_idle_for_its_timeout() {
        let mut h = harness();
        let t0 = Instant::now();
        let idle = h.thread.config.idle_timeout;
        let (on_demand, peer) = h.memory(datagram(7000).persistency(Persistency::OnDemand), t0);
        let (kept, _) = h.memory(datagram(7001).persistency(Persistency::Persistent), t0);
        // What it receives starts its idle time over.
        let t1 = t0 + idle / 2;
        peer.arrive(interest("/a"));
        h.readable(on_demand, t1);
        h.thread.housekeeping(t1 + idle - MS);
        assert_eq!(h.list(t1), [on_demand, kept], "not idle for long enough");
        let _ = h.take_events();
        h.thread.housekeeping(t1 + idle);
        assert!(matches!(&h.take_events()[..], [FaceEvent::Destroyed(e)] if e.id == on_demand));
        assert_eq!(
            h.list(t1 + idle),
            [kept],
            "only on-demand faces close when idle"
        );
        assert_eq!(h.load(), 1);
    }

    #[test]
    fn a_stream_face_is_never_closed_for_idleness() {
        let mut h = harness();
        let t0 = Instant::now();
        let idle = h.thread.config.idle_timeout;
        let (id, _) = h.memory(stream(7000).persistency(Persistency::OnDemand), t0);
        h.thread.housekeeping(t0 + 10 * idle);
        assert_eq!(h.list(t0), [id], "a stream closes when its peer does");
    }

    #[test]
    fn an_idle_face_waits_for_the_next_tick_to_close() {
        let mut h = harness();
        let t0 = Instant::now();
        let idle = h.thread.config.idle_timeout;
        let (id, peer) = h.memory(datagram(7000).persistency(Persistency::OnDemand), t0);
        let t1 = t0 + idle;
        peer.arrive(interest("/a"));
        h.readable(id, t1);
        // The tick last ran half a second before the face's idle time is over.
        h.thread.last_housekeeping = t1 + idle - 500 * MS;
        h.thread.timers(t1 + idle);
        assert_eq!(h.list(t1), [id], "idle, but the tick is not due");
        let next = h.thread.next_timeout(t1 + idle, t1, false).unwrap();
        assert_eq!(next, 500 * MS, "the poll wakes for the tick");
        h.thread.timers(t1 + idle - 500 * MS + HOUSEKEEPING);
        assert!(h.list(t1).is_empty(), "closed at the tick");
    }
}
