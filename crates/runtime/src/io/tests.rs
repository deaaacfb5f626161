//! The loop's own parts: how long a poll may sleep, from the deadlines of every part, and
//! what a lost face leaves the loop waiting for.

use kite_link::Persistency;

use super::testing::{data, datagram, harness, harness_with, interest, stream};
use super::*;
use crate::FaceOptions;

const MS: Duration = Duration::from_millis(1);

#[test]
fn an_idle_thread_sleeps_until_its_next_housekeeping_tick() {
    let mut h = harness();
    let t0 = h.thread.last_housekeeping;
    assert_eq!(h.thread.next_timeout(t0, t0, false).unwrap(), HOUSEKEEPING);
    assert_eq!(
        h.thread.next_timeout(t0 + 300 * MS, t0, false).unwrap(),
        700 * MS,
        "a second after the last tick, not after now"
    );
}

#[test]
fn a_thread_that_just_worked_polls_without_sleeping() {
    let mut h = harness();
    let t0 = Instant::now();
    assert_eq!(
        h.thread.next_timeout(t0, t0 + SPIN_TIME, true).unwrap(),
        Duration::ZERO
    );
}

#[test]
fn the_timers_run_housekeeping_once_its_second_is_over() {
    let mut h = harness();
    let t0 = h.thread.last_housekeeping;
    let t = t0 + HOUSEKEEPING;
    h.thread.timers(t - MS);
    assert_eq!(h.thread.last_housekeeping, t0, "not due yet");
    assert_eq!(h.thread.next_timeout(t - MS, t0, false).unwrap(), MS);
    h.thread.timers(t);
    assert_eq!(h.thread.last_housekeeping, t, "ran");
    assert_eq!(
        h.thread.next_timeout(t + 300 * MS, t0, false).unwrap(),
        700 * MS
    );
}

#[test]
fn the_poll_sleeps_until_the_earliest_deadline_of_any_part() {
    let mut config = RuntimeConfig::default();
    config.face.redial_initial = 250 * MS;
    let mut h = harness_with(config);
    let t0 = Instant::now();
    // A reliable face that sent a frame: its retransmission timer (a second, before any
    // round trip is measured) runs from the send.
    let (r, r_peer) = h.memory(datagram(7000), t0);
    let reliable = FaceOptions {
        lp_reliability: Some(true),
        ..FaceOptions::default()
    };
    assert!(h.update(r, reliable, t0).lp_reliability);
    h.output.push(data(r)).unwrap();
    h.thread.drain_output();
    assert_eq!(r_peer.sent().len(), 1);
    let due = (h.thread.table.reliability_due()).expect("a retransmission timer");
    let t = Instant::now();
    h.thread.last_housekeeping = t;
    let retx = due.saturating_duration_since(t);
    assert!(retx < HOUSEKEEPING);
    assert_eq!(h.thread.next_timeout(t, t, false).unwrap(), retx);
    // A permanent face whose peer closed dials again in 250 ms.
    let lost = stream(7001).persistency(Persistency::Permanent).redialing();
    let (lost, peer) = h.memory(lost, t);
    peer.close();
    h.readable(lost, t);
    assert_eq!(h.thread.redials.next_deadline(), Some(t + 250 * MS));
    assert_eq!(
        h.thread.next_timeout(t, t, false).unwrap(),
        retx.min(250 * MS)
    );
    // A restrained stream face is parked, unread, until its restraint ends (in 100 ms).
    let (parked, peer) = h.memory(stream(7002), t);
    h.thread.dispatcher.restrain(parked);
    peer.arrive(interest("/a"));
    h.readable(parked, t);
    assert_eq!(peer.bursts(), 0, "not read while restrained");
    let left = h.thread.dispatcher.restraint_left(parked);
    assert!(left < 250 * MS);
    assert!(h.thread.next_timeout(t, t, false).unwrap() <= left);
    // When the retransmission is due, the timers send the frame again.
    h.thread.timers(due);
    assert_eq!(r_peer.sent().len(), 1, "sent again");
    assert!(h.thread.table.reliability_due() > Some(due));
}

#[test]
fn output_waiting_when_the_thread_announces_its_sleep_keeps_it_awake() {
    let mut h = harness();
    let t = h.thread.last_housekeeping;
    h.output.push(data(FaceId(400))).unwrap();
    assert_eq!(h.thread.next_timeout(t, t, false).unwrap(), Duration::ZERO);
}

#[test]
fn a_face_left_with_frames_unread_keeps_the_thread_polling() {
    let mut h = harness();
    let t = Instant::now();
    let (id, peer) = h.memory(stream(7000), t);
    for _ in 0..=STREAM_QUANTUM {
        peer.arrive(interest("/a"));
    }
    h.readable(id, t);
    assert_eq!(peer.unread(), 1);
    h.thread.last_housekeeping = t;
    assert_eq!(h.thread.next_timeout(t, t, false).unwrap(), Duration::ZERO);
    h.thread.read(t);
    assert_eq!(peer.unread(), 0);
    assert_eq!(h.thread.next_timeout(t, t, false).unwrap(), HOUSEKEEPING);
}

#[test]
fn a_lost_permanent_face_is_kept_and_the_poll_wakes_for_its_redial() {
    let mut config = RuntimeConfig::default();
    config.face.redial_initial = 250 * MS;
    let mut h = harness_with(config);
    let t0 = Instant::now();
    let s = h.create(Persistency::Permanent, t0).unwrap();
    h.thread.redials.connected(s.id);
    let _ = h.events.try_recv();
    h.thread.transport_failed(s.id, CloseReason::PeerClosed, t0);
    assert!(matches!(h.events.try_recv(), Ok(FaceEvent::Down(e)) if e.id == s.id));
    assert_eq!(h.list(t0), [s.id], "kept, with its id and routes");
    assert_eq!(h.thread.redials.next_deadline(), Some(t0 + 250 * MS));
    assert_eq!(
        h.thread.next_timeout(t0 + 50 * MS, t0, false).unwrap(),
        200 * MS
    );
}

#[test]
fn a_lost_face_that_is_not_permanent_is_closed() {
    let mut h = harness();
    let t0 = Instant::now();
    let s = h.create(Persistency::Persistent, t0).unwrap();
    let _ = h.events.try_recv();
    h.thread.transport_failed(s.id, CloseReason::PeerClosed, t0);
    assert!(matches!(h.events.try_recv(), Ok(FaceEvent::Destroyed(e)) if e.id == s.id));
    assert!(h.list(t0).is_empty());
    assert!(h.thread.redials.is_empty(), "its redial went with it");
    assert_eq!(h.load(), 0);
}

#[test]
fn a_transport_timer_bounds_the_poll_and_runs_once_due_without_a_read() {
    let mut h = harness();
    let t0 = h.thread.last_housekeeping;
    let (id, peer) = h.memory(datagram(7000).timed(), t0);
    let (_, untimed) = h.memory(datagram(7001), t0);
    untimed.set_deadline(Some(t0 + MS));
    peer.set_deadline(Some(t0 + 30 * MS));
    assert_eq!(
        h.thread.next_timeout(t0, t0, false),
        Some(30 * MS),
        "the timed face's deadline, not the untimed one's"
    );
    h.thread.timers(t0 + 29 * MS);
    assert_eq!(peer.timer_runs(), 0, "not due yet");
    h.thread.timers(t0 + 30 * MS);
    assert_eq!((peer.timer_runs(), peer.bursts()), (1, 0));
    assert_eq!(
        h.thread.next_timeout(t0 + 30 * MS, t0, false),
        Some(970 * MS)
    );
    // A face that leaves the table leaves the timed faces.
    peer.set_deadline(Some(t0 + 40 * MS));
    h.destroy(id, t0 + 31 * MS);
    assert_eq!(h.thread.table.transport_due(), None);
}

#[test]
fn a_face_whose_transport_timers_end_its_connection_is_closed() {
    let mut h = harness();
    let t0 = Instant::now();
    let (id, peer) = h.memory(datagram(7000).timed(), t0);
    peer.set_deadline(Some(t0 + MS));
    peer.fail_at_deadline();
    h.thread.timers(t0 + MS);
    assert!(h.list(t0 + MS).is_empty());
    let events = h.take_events();
    assert!(matches!(&events[..], [FaceEvent::Created(_), FaceEvent::Destroyed(e)] if e.id == id));
}
