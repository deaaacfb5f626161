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
                // At most once a second per interface (the housekeeping tick).
                tracing::warn!(
                    interface = ch.name(),
                    dropped,
                    total = ch.counters().n_socket_drops,
                    "the kernel dropped frames for a full receive buffer (raise \
                     face_system.ether.socket_buffer)"
                );
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
