//! Parking an idle thread without missing a wake-up, and waking it only when it sleeps.
//!
//! Waking a parked thread costs ≈48 µs of round trip and an unpark call a syscall, while
//! reading a flag costs ≈2 ns (both measured on a 2-vCPU x86-64 VM): a producer checks the consumer's
//! `sleeping` flag after each burst it hands over and calls `unpark` only when it is set. The
//! consumer spins over empty polls for a while before it parks, so a busy thread never sleeps
//! between bursts.

use std::sync::atomic::{fence, AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::Thread;
use std::time::Duration;

/// Empty polls a forwarding thread makes before it parks (a few microseconds of spinning).
pub const SPIN_POLLS: u32 = 256;

/// How long the I/O thread keeps polling without blocking (yielding its core between empty
/// polls) after its last work: about what a wake-up costs here (≈48 µs measured), the
/// spin-then-block rule that wastes at most as much CPU as sleeping at once would have cost
/// in latency. Measured (docs/performance.md, "Inline forwarding"): sleeping at once lost a
/// fifth of the throughput to spinning forever.
pub const SPIN_TIME: Duration = Duration::from_micros(50);

/// A consumer thread's "about to sleep" flag, and the ordering that makes it safe: the
/// consumer announces, then re-checks for work, then sleeps; a producer publishes work, then
/// checks the flag. The two SeqCst fences guarantee that either the consumer sees the work or
/// the producer sees the flag, so no wake-up is lost. Shared by futex parking ([`Waker`]) and
/// the I/O thread's `epoll_wait`.
#[derive(Debug, Default)]
pub struct SleepFlag {
    sleeping: AtomicBool,
}

impl SleepFlag {
    /// Consumer: announces it is about to sleep (re-check for work after this).
    #[inline]
    pub fn announce(&self) {
        self.sleeping.store(true, Ordering::Relaxed);
        fence(Ordering::SeqCst);
    }

    /// Consumer: awake again.
    #[inline]
    pub fn clear(&self) {
        self.sleeping.store(false, Ordering::Relaxed);
    }

    /// Producer, after making work visible: whether the consumer must be woken.
    #[inline]
    pub fn needs_wake(&self) -> bool {
        fence(Ordering::SeqCst);
        self.sleeping.load(Ordering::Relaxed)
    }
}

/// The waking side of a thread that sleeps when idle, held by every producer that feeds it:
/// a parked forwarding thread (futex), or the I/O thread in `epoll_wait` when it runs the
/// forwarding shards itself (see `RuntimeConfig::inline_forwarding`).
#[derive(Debug, Clone)]
pub struct Waker {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    flag: Arc<SleepFlag>,
    target: Target,
}

/// What a wake-up reaches.
#[derive(Debug)]
enum Target {
    /// A thread parked in [`Waker::park`].
    Thread(Thread),
    /// A thread asleep in `epoll_wait` on the poll this waker is registered with.
    Poll(Arc<mio::Waker>),
}

impl Waker {
    /// A waker for the calling thread (the consumer creates it and hands out clones).
    pub fn for_current_thread() -> Self {
        Waker {
            inner: Arc::new(Inner {
                flag: Arc::default(),
                target: Target::Thread(std::thread::current()),
            }),
        }
    }

    /// A waker for a thread that sleeps in `epoll_wait` after announcing it on `flag`.
    pub fn for_poll(flag: Arc<SleepFlag>, waker: Arc<mio::Waker>) -> Self {
        Waker {
            inner: Arc::new(Inner {
                flag,
                target: Target::Poll(waker),
            }),
        }
    }

    /// Called by a producer after it made work visible: wakes the consumer if it sleeps.
    #[inline]
    pub fn wake(&self) {
        if self.inner.flag.needs_wake() {
            match &self.inner.target {
                Target::Thread(t) => t.unpark(),
                // An eventfd write; failing means the poll is gone, and so is its thread.
                Target::Poll(w) => {
                    let _ = w.wake();
                }
            }
        }
    }

    /// Called by the consumer of a [`Waker::for_current_thread`]: parks unless `has_work`
    /// (checked after announcing sleep) says work arrived, for at most `timeout` (None: until
    /// woken).
    pub fn park(&self, timeout: Option<Duration>, has_work: impl FnOnce() -> bool) {
        self.inner.flag.announce();
        if !has_work() {
            match timeout {
                Some(t) => std::thread::park_timeout(t),
                None => std::thread::park(),
            }
        }
        self.inner.flag.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;
    use std::time::Instant;

    #[test]
    fn a_parked_thread_wakes_for_work_and_not_otherwise() {
        let work = Arc::new(AtomicU64::new(0));
        let (tx, rx) = std::sync::mpsc::channel();
        let w = work.clone();
        let consumer = std::thread::spawn(move || {
            let waker = Waker::for_current_thread();
            tx.send(waker.clone()).unwrap();
            let mut seen = 0;
            while seen < 1000 {
                let now = w.load(Ordering::Acquire);
                if now > seen {
                    seen = now;
                    continue;
                }
                waker.park(None, || w.load(Ordering::Acquire) > seen);
            }
            seen
        });
        let waker = rx.recv().unwrap();
        for _ in 0..1000 {
            work.fetch_add(1, Ordering::Release);
            waker.wake();
        }
        // Every increment was seen: no wake-up was lost even when it raced with parking.
        assert_eq!(consumer.join().unwrap(), 1000);
    }

    #[test]
    fn park_returns_at_the_timeout_and_at_once_when_work_is_there() {
        let waker = Waker::for_current_thread();
        let t = Instant::now();
        waker.park(Some(Duration::from_millis(20)), || false);
        assert!(t.elapsed() >= Duration::from_millis(20));
        let t = Instant::now();
        waker.park(Some(Duration::from_secs(10)), || true);
        assert!(t.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn a_poll_waker_wakes_the_poll_only_when_its_thread_sleeps() {
        let mut poll = mio::Poll::new().unwrap();
        let token = mio::Token(7);
        let flag = Arc::new(SleepFlag::default());
        let waker = Waker::for_poll(
            flag.clone(),
            Arc::new(mio::Waker::new(poll.registry(), token).unwrap()),
        );
        let mut events = mio::Events::with_capacity(4);
        // Awake: waking costs no eventfd write, so the poll has nothing.
        waker.wake();
        poll.poll(&mut events, Some(Duration::ZERO)).unwrap();
        assert!(events.is_empty());
        // Asleep: a wake from another thread ends the wait.
        flag.announce();
        let w = waker.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            w.wake();
        });
        let start = Instant::now();
        poll.poll(&mut events, Some(Duration::from_secs(10)))
            .unwrap();
        flag.clear();
        t.join().unwrap();
        assert!(start.elapsed() < Duration::from_secs(5));
        assert_eq!(
            events.iter().map(|e| e.token()).collect::<Vec<_>>(),
            [token]
        );
    }
}
