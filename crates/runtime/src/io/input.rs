//! The input stage: reading faces and datagram channels in bursts and dispatching what they
//! bring to the forwarding shards.

use std::net::SocketAddr;
use std::os::fd::RawFd;
use std::time::{Duration, Instant};

use hashbrown::HashMap;
use kite_face::{Face, FaceError, Progress, UdpChannels};
use kite_fw::face::{FaceId, FaceScope};
use kite_packet::tlv_type;
use mio::Token;

use super::listeners::DatagramChannel;
use super::{IoThread, STREAM_QUANTUM};
use crate::iolog::CloseReason;

impl IoThread {
    /// Reads one burst (one `recvmmsg`) from the datagram channel of `token` and dispatches
    /// it; a channel with more to read is read again next turn, after every other face and
    /// channel had its burst, so one sender's stream of datagrams cannot fill the forwarding
    /// threads' rings ahead of the others.
    pub(super) fn read_channel(&mut self, token: Token, now: Instant) {
        let Some(channel) = self.datagram_channel(token) else {
            return;
        };
        let progress = self.recv_datagrams(channel, now);
        self.deliver_datagrams(channel, now);
        self.deliver_xdp_udp(now);
        // What waited in an Ethernet socket counts as waiting for CoDel: the kernel's queue
        // is where a bottleneck I/O thread's backlog stands, unseen by the rings.
        let waited = match channel {
            DatagramChannel::Udp(_) => Duration::ZERO,
            DatagramChannel::Ether(e) => self.ether[e].waited(),
        };
        self.dispatch_waited(waited);
        let token = self.channel_token(channel);
        if matches!(progress, Ok(Progress::More)) && !self.unread_channels.contains(&token) {
            self.unread_channels.push(token);
        }
    }

    /// Reads one burst from a datagram channel into `self.datagrams` (new on-demand faces
    /// into `self.created`, those given up for them into `self.evicted`).
    fn recv_datagrams(
        &mut self,
        channel: DatagramChannel,
        now: Instant,
    ) -> std::io::Result<Progress> {
        let (ids, datagrams, created, evicted) = (
            &mut self.ids,
            &mut self.datagrams,
            &mut self.created,
            &mut self.evicted,
        );
        match channel {
            DatagramChannel::Udp(u) => {
                self.udp[u].recv_burst(now, ids, datagrams, created, evicted)
            }
            DatagramChannel::Ether(e) => {
                let mut udp = UdpChannels {
                    channels: &mut self.udp,
                    datagrams: &mut self.xdp_udp,
                };
                self.ether[e].recv_burst(now, ids, datagrams, created, evicted, &mut udp)
            }
        }
    }

    /// Hands the UDP datagrams an Ethernet channel's AF_XDP path read to their faces, each
    /// UDP channel's with its own reassembler, as if its socket had read them. The faces
    /// they created were added with the Ethernet channel's.
    fn deliver_xdp_udp(&mut self, now: Instant) {
        while let Some(&(u, _)) = self.xdp_udp.first() {
            // Channel u's datagrams, in their order, and the others kept for the next pass
            // (two vectors swapped, so nothing is allocated once they have grown).
            let mut rest = core::mem::take(&mut self.xdp_udp_rest);
            for (k, d) in self.xdp_udp.drain(..) {
                match k == u {
                    true => self.datagrams.push(d),
                    false => rest.push((k, d)),
                }
            }
            self.xdp_udp_rest = core::mem::replace(&mut self.xdp_udp, rest);
            self.deliver_datagrams(DatagramChannel::Udp(u), now);
        }
    }

    /// Closes the on-demand faces a datagram channel gave up (their channel forgot them
    /// already), adds the faces it just created, then hands each datagram it read to its
    /// face (fragments to the channel's reassembler, whose drops count on their faces). A
    /// face created and given up within the same burst is never added: the channel forgot
    /// it, so added it would outlive the channel's on-demand limit until its idle timeout.
    fn deliver_datagrams(&mut self, channel: DatagramChannel, now: Instant) {
        let mut evicted = core::mem::take(&mut self.evicted);
        for face in kept(core::mem::take(&mut self.created), &mut evicted) {
            self.add_face(face, now);
        }
        while let Some(id) = evicted.pop() {
            self.close_face(id, CloseReason::Evicted, now);
        }
        self.evicted = evicted;
        let reassembler = match channel {
            DatagramChannel::Udp(u) => self.udp[u].reassembler(),
            DatagramChannel::Ether(e) => self.ether[e].reassembler(),
        };
        for d in self.datagrams.drain(..) {
            let Some(face) = self.table.get_mut(d.face) else {
                continue;
            };
            // A restrained face's bare Interests beyond its room are dropped before they are
            // decoded: a datagram flooder cannot be slowed, only made cheap.
            if d.frame.first() == Some(&(tlv_type::INTEREST as u8))
                && self.dispatcher.is_restrained(d.face)
            {
                let i = match self.restrained_room.iter().position(|(f, _)| *f == d.face) {
                    Some(i) => i,
                    None => {
                        let room = self.dispatcher.room(d.face, false);
                        self.restrained_room.push((d.face, room));
                        self.restrained_room.len() - 1
                    }
                };
                let room = &mut self.restrained_room[i].1;
                if *room == 0 {
                    face.count_in_queue_full();
                    continue;
                }
                *room -= 1;
            }
            face.receive_frame(
                d.from,
                d.frame,
                d.own_buffer,
                now,
                reassembler,
                &mut self.received,
            );
        }
        count_reassembly_drops(reassembler, self.table.map_mut());
        self.restrained_room.clear();
    }

    /// Reads a burst from each lane (the sockets of other threads' steered Ethernet channels,
    /// which carry the packets of this thread's shards) and dispatches it, as the lane's
    /// channel would; wakes a lane's home when the lane left it work. Ethernet faces are
    /// never local.
    pub(super) fn read_lanes(&mut self, now: Instant) {
        for (lane, home) in &mut self.lanes {
            let mut sink = self.dispatcher.direct(false);
            let burst = lane.recv_burst(now, &mut sink);
            sink.finish();
            if burst.wake_home {
                home.wake();
            }
        }
    }

    /// Reads one burst from a face's own socket and dispatches it. A face that can push back
    /// (a stream) reads only as many packets as the forwarding threads have room for from
    /// it; with none, it is not read (its sender's socket fills and the kernel slows it)
    /// until the rings drain. A face with more to read is read again next turn. A restrained
    /// stream or UDP face is not read at all until its restraint ends (it is parked).
    pub(super) fn read_face(&mut self, id: FaceId, now: Instant, hangup: bool) {
        let Some(face) = self.table.get(id) else {
            return;
        };
        let udp = face.udp_remote().zip(face.raw_fd());
        let pushes_back = face.pushes_back();
        if (pushes_back || udp.is_some()) && self.dispatcher.is_restrained(id) {
            self.table.park(id, hangup);
            return;
        }
        if let Some((remote, fd)) = udp {
            self.read_udp_face(id, remote, fd, now);
            return;
        }
        let budget = match pushes_back {
            true => STREAM_QUANTUM.min(self.dispatcher.room(id, face.scope() == FaceScope::Local)),
            false => usize::MAX,
        };
        let result = match budget {
            0 => Ok(Progress::More),
            _ => {
                let face = self.table.get_mut(id).expect("looked up above");
                // Every packet of the burst comes from this face, so its scope answers for all.
                let mut sink = self.dispatcher.direct(face.scope() == FaceScope::Local);
                let r = face.recv_burst(now, hangup, budget, &mut sink);
                sink.finish();
                if face.upgrade_requested() {
                    let token = Token(id.0 as usize);
                    match face.upgrade(self.poll.registry(), token, &mut self.received) {
                        Ok(()) => {
                            tracing::info!(face = id.0, "switched to shared memory");
                            self.shm.add(id);
                        }
                        Err(e) => {
                            tracing::info!(face = id.0, error = %e, "shared memory not offered")
                        }
                    }
                }
                self.dispatch();
                r
            }
        };
        let why = match result {
            Ok(Progress::More) => {
                self.table.read_again(id, hangup);
                return;
            }
            Ok(Progress::Drained) => return,
            Err(FaceError::Closed) => CloseReason::PeerClosed,
            Err(e) => CloseReason::Error(format!("receive failed: {e}")),
        };
        self.transport_failed(id, why, now);
    }

    /// Reads one burst from the own socket `fd` of UDP face `id` (toward `remote`), at most
    /// its credit of datagrams ([`DatagramShare`](crate::share::DatagramShare)) and as many
    /// as the forwarding threads have room for from it (the rest wait in its socket, and
    /// beyond its receive buffer the kernel drops them), and dispatches it.
    fn read_udp_face(&mut self, id: FaceId, remote: SocketAddr, fd: RawFd, now: Instant) {
        let Some(u) = (self.table.get(id)).and_then(|f| {
            self.udp
                .iter()
                .position(|c| c.local_uri() == *f.local_uri())
        }) else {
            return;
        };
        let share = self.table.share(id);
        let Some(credit) = share.credit(STREAM_QUANTUM) else {
            // Still repaying what a coalesced read brought beyond its share: next turn.
            self.table.read_again(id, false);
            return;
        };
        let budget = credit.min(self.dispatcher.room(id, false));
        let progress = match budget {
            0 => Ok(Progress::More),
            _ => {
                let messages = share.messages(budget);
                let before = self.datagrams.len();
                let r = self.udp[u].recv_face(id, remote, fd, messages, now, &mut self.datagrams);
                let read = self.datagrams.len() - before;
                share.charge(r.as_ref().map_or(0, |&(_, m)| m), read);
                self.deliver_datagrams(DatagramChannel::Udp(u), now);
                self.dispatch();
                r.map(|(p, _)| p)
            }
        };
        match progress {
            Ok(Progress::More) => self.table.read_again(id, false),
            Ok(Progress::Drained) => {}
            Err(e) => {
                self.transport_failed(id, CloseReason::Error(format!("receive failed: {e}")), now)
            }
        }
    }

    /// Reads the parked faces whose restraint ended.
    pub(super) fn unpark(&mut self, now: Instant) {
        let dispatcher = &self.dispatcher;
        let unparked = self.table.take_unparked(|id| dispatcher.is_restrained(id));
        for &(id, hangup) in &unparked {
            self.read_face(id, now, hangup);
        }
        self.table.unparked(unparked);
    }

    /// Hands the packets read this round to the forwarding threads and counts those that
    /// found their ring full against the faces they came from.
    pub(super) fn dispatch(&mut self) {
        self.dispatch_waited(Duration::ZERO);
    }

    /// [`IoThread::dispatch`] of packets that waited `waited` in their socket before they
    /// were read.
    fn dispatch_waited(&mut self, waited: Duration) {
        let faces = self.table.map();
        self.dispatcher
            .dispatch_burst(&mut self.received, waited, |id| {
                faces
                    .get(&id)
                    .is_some_and(|f| f.scope() == FaceScope::Local)
            });
        for id in self.dispatcher.take_dropped() {
            if let Some(face) = self.table.get_mut(id) {
                face.count_in_queue_full();
            }
        }
    }
}

/// Counts the partial packets a channel's reassembler dropped on the faces they were for.
pub(super) fn count_reassembly_drops(
    r: &mut kite_link::reassembly::Reassembler,
    faces: &mut HashMap<FaceId, Face>,
) {
    for (id, n) in r.take_drops() {
        if let Some(face) = faces.get_mut(&id) {
            face.count_reassembly_drops(n);
        }
    }
}

/// Of the faces a channel created in one burst, those it did not give up in the same burst;
/// those it did are dropped and struck from `evicted`, leaving there the faces to close.
fn kept(created: Vec<Face>, evicted: &mut Vec<FaceId>) -> impl Iterator<Item = Face> + '_ {
    created.into_iter().filter(
        move |face| match evicted.iter().position(|&id| id == face.id()) {
            Some(i) => {
                evicted.swap_remove(i);
                false
            }
            None => true,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::testing::{datagram, harness, interest, stream};
    use crate::{FaceEvent, FwCommand};
    use kite_face::FaceConfig;
    use kite_link::Persistency;

    fn face(id: u64) -> Face {
        let remote = ([192, 0, 2, 1], id as u16).into();
        let config = FaceConfig::default();
        kite_face::tcp::unconnected_face(FaceId(id), remote, Persistency::OnDemand, &config)
    }

    #[test]
    fn a_face_created_and_given_up_in_one_burst_is_never_added() {
        let created = vec![face(300), face(301), face(302)];
        let mut evicted = vec![FaceId(301), FaceId(250)];
        let added: Vec<FaceId> = kept(created, &mut evicted).map(|f| f.id()).collect();
        assert_eq!(added, [FaceId(300), FaceId(302)]);
        assert_eq!(
            evicted,
            [FaceId(250)],
            "only the older face is left to close"
        );
    }

    #[test]
    fn a_burst_that_arrives_reaches_the_forwarding_thread_in_order() {
        let mut h = harness();
        let t0 = Instant::now();
        let (id, peer) = h.memory(stream(7000), t0);
        for n in 0..3 {
            peer.arrive(interest(&format!("/a/{n}")));
        }
        h.readable(id, t0);
        assert_eq!(h.dispatched_interests(), ["/a/0", "/a/1", "/a/2"]);
        assert_eq!(peer.unread(), 0);
        let face = h.thread.table.get(id).unwrap();
        assert_eq!(face.counters().n_in_interests, 3);
        assert!(
            !h.thread.table.has_unread(),
            "drained: nothing to read again"
        );
    }

    #[test]
    fn a_stream_face_hands_over_a_quantum_per_turn_and_the_rest_on_the_next() {
        let mut h = harness();
        let t0 = Instant::now();
        let (id, peer) = h.memory(stream(7000), t0);
        for _ in 0..100 {
            peer.arrive(interest("/a"));
        }
        h.readable(id, t0);
        assert_eq!(h.dispatched_interests().len(), STREAM_QUANTUM);
        assert_eq!(peer.unread(), 100 - STREAM_QUANTUM, "left in its socket");
        assert!(h.thread.table.has_unread());
        // The next turn reads it again without an event.
        h.thread.read(t0);
        assert_eq!(h.dispatched_interests().len(), 100 - STREAM_QUANTUM);
        assert!(!h.thread.table.has_unread());
    }

    #[test]
    fn a_restrained_stream_face_is_parked_unread() {
        let mut h = harness();
        let t0 = Instant::now();
        let (id, peer) = h.memory(stream(7000), t0);
        h.thread.dispatcher.restrain(id);
        peer.arrive(interest("/a"));
        h.readable(id, t0);
        assert_eq!((peer.bursts(), peer.unread()), (0, 1));
        assert!(h.thread.table.has_parked());
        assert!(h.dispatched_interests().is_empty());
    }

    #[test]
    fn what_arrived_before_the_peer_closed_is_forwarded_then_a_persistent_face_is_destroyed() {
        let mut h = harness();
        let t0 = Instant::now();
        let (id, peer) = h.memory(stream(7000), t0);
        peer.arrive(interest("/a/0"));
        peer.arrive(interest("/a/1"));
        peer.close();
        h.readable(id, t0);
        assert_eq!(h.dispatched_interests(), ["/a/0", "/a/1"]);
        let events = h.take_events();
        assert!(
            matches!(&events[..], [FaceEvent::Created(_), FaceEvent::Destroyed(e)] if e.id == id)
        );
        let fwd: Vec<_> = h.fwd.try_iter().collect();
        assert!(matches!(fwd[..], [FwCommand::AddFace(..), FwCommand::RemoveFace(f)] if f == id));
        assert!(h.list(t0).is_empty());
        assert_eq!(h.load(), 0);
    }

    #[test]
    fn a_permanent_face_whose_connection_resets_goes_down_and_dials_again() {
        let mut h = harness();
        let t0 = Instant::now();
        let t = stream(7000).persistency(Persistency::Permanent).redialing();
        let (id, peer) = h.memory(t, t0);
        peer.reset();
        h.readable(id, t0);
        let events = h.take_events();
        assert!(matches!(&events[..], [FaceEvent::Created(_), FaceEvent::Down(e)] if e.id == id));
        assert_eq!(h.list(t0), [id], "kept, with its id and routes");
        let face = h.thread.table.get(id).unwrap();
        assert!(face.is_lost() && !face.is_up());
        let initial = h.thread.config.redial_initial;
        assert_eq!(h.thread.redials.next_deadline(), Some(t0 + initial));
    }

    #[test]
    fn a_permanent_face_that_cannot_dial_again_stays_as_it_is() {
        let mut h = harness();
        let t0 = Instant::now();
        let (id, peer) = h.memory(datagram(7000).persistency(Persistency::Permanent), t0);
        peer.close();
        h.readable(id, t0);
        assert_eq!(h.take_events().len(), 1, "created, and nothing since");
        assert_eq!(h.list(t0), [id]);
        assert!(h.thread.table.get(id).unwrap().is_up());
        assert!(h.thread.redials.is_empty());
    }
}
