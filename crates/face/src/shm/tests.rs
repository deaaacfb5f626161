use std::io::{Read, Write};
use std::sync::atomic::AtomicBool;

use proptest::prelude::*;
use smallvec::SmallVec;

use std::os::fd::{OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use kite_packet::pool;
use kite_shm::layout::{DOWN, HEAD, TAIL, UP};
use kite_shm::RING_SIZE_RANGE;
use kite_shm::{attach, offer_data, recv_with_fds, Region, ShmReader, ShmWriter, HEADER_LEN};

use super::*;
use crate::queue::OutFrame;

const RING: usize = RING_SIZE_RANGE.0;

/// The forwarder's side and the application's halves of one offer over a socket pair, and
/// the region's descriptor (to map it a third time, as a scribbler).
fn pair() -> (ShmIo, ShmReader, ShmWriter, OwnedFd) {
    let (fwd, app) = UnixStream::pair().unwrap();
    fwd.set_nonblocking(true).unwrap();
    let fd = FaceUri::Fd(0);
    let io = ShmIo::offer(mio::net::UnixStream::from_std(fwd), RING, fd.clone(), fd).unwrap();
    let mut buf = [0u8; 4096];
    let mut fds = Vec::new();
    let n = recv_with_fds(&app, &mut buf, &mut fds).unwrap();
    assert_eq!(&buf[..n], &offer_data()[..], "the offer is the Data");
    let memfd = fds[0].try_clone().unwrap();
    let (r, w) = attach(app, fds).unwrap();
    (io, r, w, memfd)
}

fn element(len: usize, fill: u8) -> Vec<u8> {
    let mut v = Vec::new();
    kite_packet::varnum::put_varnum(&mut v, 6);
    kite_packet::varnum::put_varnum(&mut v, len as u64);
    v.resize(v.len() + len, fill);
    v
}

fn queue_of(frames: &[Vec<u8>]) -> OutQueue {
    let mut q = OutQueue::new(1024);
    for f in frames {
        assert!(q.push(OutFrame {
            head: SmallVec::new(),
            body: Bytes::from(f.clone()),
        }));
    }
    q
}

/// A complete large element at the head of the up ring is read alone into an idle reusable
/// buffer of its own, which the CS then keeps without copying it again. A short element at
/// the head is read with what follows it into the framer's buffer, as from a socket, and so
/// are large ones while the thread has no idle buffer. Either way they arrive whole and in
/// order.
#[test]
fn large_elements_are_read_alone_into_reusable_buffers() {
    let (mut io, _r, mut w, _) = pair();
    let (big, small) = (element(8000, 7), element(100, 1));
    let mut got = Vec::new();
    let burst = |io: &mut ShmIo, got: &mut Vec<(Bytes, usize)>| {
        io.recv_burst(false, usize::MAX, |b, own| got.push((b, own)))
            .unwrap()
    };
    w.write_all(&big).unwrap();
    burst(&mut io, &mut got);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].1, 0, "no idle buffer yet: the framer's");
    // What the CS's evictions do: idle buffers of the class of an 8000-octet element.
    let idle: Vec<Bytes> = (0..3).map(|_| pool::copy_reusable(&big)).collect();
    idle.into_iter().for_each(pool::give_back);
    got.clear();
    let sent = [&big, &big, &small, &big, &big, &big];
    for f in &sent[..4] {
        w.write_all(f).unwrap();
    }
    burst(&mut io, &mut got);
    for f in &sent[4..] {
        w.write_all(f).unwrap();
        burst(&mut io, &mut got);
    }
    let alone: Vec<bool> = got.iter().map(|(_, own)| *own >= big.len()).collect();
    assert_eq!(alone, [true, true, false, false, true, false]);
    assert!(got.iter().all(|(_, own)| *own == 0 || *own >= big.len()));
    let wire: Vec<&[u8]> = got.iter().map(|(b, _)| &b[..]).collect();
    assert_eq!(wire, sent.map(|f| &f[..]));
}

/// Packets cross both rings whole and in order, past the rings' end (they wrap), and a full
/// down ring blocks the forwarder instead of overwriting what the application did not read.
#[test]
fn packets_cross_both_rings_in_order_and_wrap() {
    let (mut io, mut r, mut w, _) = pair();
    r.set_read_timeout(Some(Duration::from_secs(2)));
    let frames: Vec<Vec<u8>> = (0..40).map(|i| element(8000, i as u8)).collect();
    // Up: 40 × 8 KB through a 64 KiB ring, read as the application writes.
    let mut got = Vec::new();
    for f in &frames {
        w.write_all(f).unwrap();
        io.recv_burst(false, usize::MAX, |b, _| got.push(b))
            .unwrap();
    }
    assert_eq!(got.len(), 40);
    assert!(got.iter().zip(&frames).all(|(a, b)| a[..] == b[..]));
    // Down: the queue fills the ring, blocks, and goes on as the application reads.
    let mut q = queue_of(&frames);
    let mut c = FaceCounters::default();
    assert_eq!(io.flush(&mut q, &mut c).unwrap(), Flushed::Blocked);
    let mut all = Vec::new();
    let want: usize = frames.iter().map(Vec::len).sum();
    let mut buf = vec![0u8; 10_000];
    while all.len() < want {
        let n = r.read(&mut buf).unwrap();
        all.extend_from_slice(&buf[..n]);
        io.flush(&mut q, &mut c).unwrap();
    }
    assert_eq!(all, frames.concat());
    assert!(q.is_empty());
    assert_eq!(c.n_out_bytes, want as u64);
}

/// A sleeping side is woken through its eventfd, and only then: the forwarder's eventfd is
/// written when it announced sleep, not while it is awake.
#[test]
fn the_eventfd_is_written_only_for_a_sleeper() {
    let (io, _r, mut w, _) = pair();
    let readable = |fd: RawFd| {
        let mut p = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one live pollfd, no wait.
        unsafe { libc::poll(&mut p, 1, 0) == 1 }
    };
    let wake = io.raw_fds()[1];
    w.write_all(&element(10, 1)).unwrap();
    assert!(!readable(wake), "awake: no system call to wake it");
    assert!(io.announce_sleep(), "data already there: do not sleep");
    let (mut io, _r2, mut w2, _) = pair();
    assert!(!io.announce_sleep(), "nothing there: sleep");
    w2.write_all(&element(10, 1)).unwrap();
    assert!(readable(io.raw_fds()[1]), "asleep: woken");
    let mut got = 0;
    io.recv_burst(false, 10, |_, _| got += 1).unwrap();
    assert_eq!(got, 1);
}

/// Positions the application writes are checked: a tail beyond the ring or behind the head,
/// or a head ahead of what was written, ends the face with an error (no panic, no read or
/// write outside the ring).
#[test]
fn impossible_positions_are_errors() {
    let (mut io, _r, _w, memfd) = pair();
    let scribbler = Region::attach(&memfd).unwrap();
    scribbler.scribble(UP + TAIL, RING as u64 + 1);
    assert!(io.has_input(), "reported, so that the read sees it");
    assert!(io.recv_burst(false, 10, |_, _| ()).is_err());
    scribbler.scribble(UP + TAIL, u64::MAX);
    assert!(io.recv_burst(false, 10, |_, _| ()).is_err());
    scribbler.scribble(DOWN + HEAD, 5);
    let mut q = queue_of(&[element(10, 0)]);
    assert!(io.flush(&mut q, &mut FaceCounters::default()).is_err());
}

/// When the application's connection ends, the face ends, after what its ring still held.
#[test]
fn the_face_ends_with_the_connection() {
    let (mut io, r, mut w, _) = pair();
    w.write_all(&element(10, 7)).unwrap();
    drop((r, w));
    let mut got = 0;
    let end = io.recv_burst(true, 10, |_, _| got += 1);
    assert_eq!(got, 1);
    assert!(matches!(end, Err(FaceError::Closed)));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Whatever the application writes anywhere in the region (positions, flags, data),
    /// interleaved with the forwarder's reads and writes, the forwarder's side never panics
    /// and hands on only frames the framer accepted (each within its bounds).
    #[test]
    fn scribbling_on_the_region_only_hurts_the_face(
        writes in prop::collection::vec((0usize..HEADER_LEN + 2 * RING, any::<u64>(), 0u8..4), 1..200),
    ) {
        let (mut io, _r, _w, memfd) = pair();
        let s = Region::attach(&memfd).unwrap();
        let mut q = queue_of(&[element(3000, 1), element(100, 2)]);
        let mut c = FaceCounters::default();
        for (off, value, op) in writes {
            let off = off & !7;
            s.scribble(off, value);
            match op {
                0 => {
                    let _ = io.recv_burst(false, 64, |f, _| {
                        assert!(f.len() <= kite_link::framing::MAX_FRAME_LEN);
                    });
                }
                1 => {
                    let _ = io.flush(&mut q, &mut c);
                }
                2 => {
                    let _ = io.has_input();
                }
                _ => {
                    let _ = io.announce_sleep();
                }
            }
        }
    }
}

/// Another process's thread scribbling on the region while the forwarder's side reads and
/// writes it: no panic, no fault, and every call returns.
#[test]
fn a_concurrent_scribbler_cannot_crash_or_wedge_the_forwarder() {
    let (mut io, _r, _w, memfd) = pair();
    let s = Arc::new(Region::attach(&memfd).unwrap());
    let stop = Arc::new(AtomicBool::new(false));
    let t = {
        let (s, stop) = (s.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut x = 0x9e37_79b9_7f4a_7c15u64;
            while !stop.load(Ordering::Relaxed) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let off = (x as usize % (HEADER_LEN + 2 * RING)) & !7;
                let value = if x & 1 == 0 { x >> 40 } else { x };
                s.scribble(off, value);
            }
        })
    };
    let mut c = FaceCounters::default();
    let start = Instant::now();
    while start.elapsed() < Duration::from_millis(300) {
        let mut q = queue_of(&[element(5000, 3)]);
        let _ = io.recv_burst(false, 64, |_, _| ());
        let _ = io.flush(&mut q, &mut c);
        let _ = io.announce_sleep();
    }
    stop.store(true, Ordering::Relaxed);
    t.join().unwrap();
}
