//! Starting the threads: the rings between each pair, the forwarding shards (on threads of
//! their own or inline in the I/O threads), then the I/O threads; and stopping them.

use std::sync::Arc;
use std::thread::JoinHandle;

use kite_fw::fib::FibReaderFactory;
use kite_fw::hash::NameHasher;
use kite_fw::ndt::Ndt;
use kite_fw::strategy::StrategyTable;
use kite_fw::time::MonotonicClock;

use crate::{
    affinity, dispatch, io, park, worker, BusyTime, FwCommand, IoCommand, RuntimeConfig,
    RuntimeHandle, StartError, MAX_IO_THREADS,
};

/// The running forwarder.
pub struct Runtime {
    handle: RuntimeHandle,
    threads: Vec<JoinHandle<()>>,
}

impl Runtime {
    /// Opens the listeners and starts the threads.
    pub fn start(
        config: RuntimeConfig,
        fib: FibReaderFactory,
        strategies: StrategyTable,
        hasher: NameHasher,
    ) -> Result<Runtime, StartError> {
        if config.forwarding_threads == 0 || config.forwarding_threads > 64 {
            // 64: the dispatcher tracks the threads to wake in one u64.
            return Err(StartError::Config(
                "between 1 and 64 forwarding threads".into(),
            ));
        }
        if config.queue_capacity == 0 || config.burst == 0 {
            return Err(StartError::Config(
                "queue capacity and burst must be at least 1".into(),
            ));
        }
        if config.io_threads == 0 || config.io_threads > MAX_IO_THREADS {
            return Err(StartError::Config(format!(
                "between 1 and {MAX_IO_THREADS} I/O threads"
            )));
        }
        let clock = MonotonicClock::new();
        let n = usize::from(config.forwarding_threads);
        let m = usize::from(config.io_threads);
        let ndt = Arc::new(Ndt::new(
            16,
            config.forwarding_threads,
            config.dispatch_prefix_len,
        ));
        // With several shards, each needs the table to tell which of them a Data belongs to.
        let mut config = config;
        if n > 1 {
            config.forwarder.shards = Some(Arc::new(kite_fw::ndt::ShardSet::new(ndt.clone())));
        }
        let (internal_tx, internal_rx) = crossbeam_channel::unbounded();
        let (event_tx, event_rx) = crossbeam_channel::unbounded();
        // Listeners first: a port in use fails the start before any thread runs.
        let mut owned = io::open_listeners(&config, m)?;
        let (ether_threads, udp_thread) = io::placement(&config, m);

        // Per I/O thread: its poll, waker, sleep flag and commands.
        let mut polls = Vec::with_capacity(m);
        let mut io = Vec::with_capacity(m);
        let mut io_rx = Vec::with_capacity(m);
        let mut io_sleep = Vec::with_capacity(m);
        for _ in 0..m {
            let poll = mio::Poll::new()?;
            let waker = Arc::new(mio::Waker::new(poll.registry(), io::WAKE_TOKEN)?);
            let (tx, rx) = crossbeam_channel::unbounded();
            polls.push(poll);
            io.push((tx, waker));
            io_rx.push(rx);
            io_sleep.push(Arc::new(park::SleepFlag::default()));
        }
        io::steer(&config, &mut owned, &ndt, &hasher, |k| {
            park::Waker::for_poll(io_sleep[k].clone(), io[k].1.clone())
        });

        // Rings: each (I/O thread k, forwarding thread t) pair has its own input rings
        // (k produces, t consumes) and its own output ring (t produces, k consumes).
        let mut to_fwd: Vec<Vec<dispatch::Inputs>> = (0..m).map(|_| Vec::new()).collect();
        let mut from_fwd: Vec<Vec<rtrb::Consumer<kite_fw::out::Out>>> =
            (0..m).map(|_| Vec::new()).collect();
        let mut fwd_inputs = Vec::with_capacity(n);
        let mut fwd_outputs = Vec::with_capacity(n);
        for _ in 0..n {
            let mut inputs = Vec::with_capacity(m);
            let mut outputs = Vec::with_capacity(m);
            for k in 0..m {
                let (p, c) = dispatch::rings(config.queue_capacity);
                to_fwd[k].push(p);
                inputs.push(c);
                let (p, c) = rtrb::RingBuffer::new(config.queue_capacity * 2);
                let wake = worker::IoWake {
                    waker: io[k].1.clone(),
                    sleep: io_sleep[k].clone(),
                };
                outputs.push((p, wake));
                from_fwd[k].push(c);
            }
            fwd_inputs.push(inputs);
            fwd_outputs.push(outputs);
        }

        let mut threads = Vec::new();
        let mut fwd = Vec::with_capacity(n);
        // Inline forwarding: shard i runs on I/O thread i mod m.
        let mut shards: Vec<Vec<worker::Worker>> = (0..m).map(|_| Vec::new()).collect();
        let mut shard_busy = Vec::with_capacity(n);
        let (ready_tx, ready_rx) = crossbeam_channel::bounded(n);
        for (i, (inputs, outs)) in fwd_inputs.into_iter().zip(fwd_outputs).enumerate() {
            let (cmd_tx, cmd_rx) = crossbeam_channel::unbounded();
            let busy = Arc::new(BusyTime::default());
            shard_busy.push(busy.clone());
            let worker = worker::Worker::new(
                i as u8,
                &config,
                fib.reader(),
                strategies.clone(),
                hasher,
                clock,
                inputs,
                outs,
                cmd_rx,
                internal_tx.clone(),
                busy,
            );
            if config.inline_forwarding {
                // Run by an I/O thread: whoever feeds the shard wakes that thread.
                let k = affinity::shard_io_thread(i, m);
                let _ = ready_tx.send((
                    i as u8,
                    park::Waker::for_poll(io_sleep[k].clone(), io[k].1.clone()),
                ));
                shards[k].push(worker);
            } else {
                let ready = ready_tx.clone();
                threads.push(
                    std::thread::Builder::new()
                        .name(format!("kite-fwd{i}"))
                        .spawn(move || worker.run(ready))?,
                );
            }
            fwd.push(cmd_tx);
        }
        let mut wakers = Vec::with_capacity(n);
        for _ in 0..n {
            wakers.push(
                ready_rx.recv().map_err(|_| {
                    StartError::Config("a forwarding thread exited at start".into())
                })?,
            );
        }
        // `ready` carries (thread index, waker): put them in thread order.
        wakers.sort_by_key(|(i, _)| *i);
        let fwd: Vec<_> = fwd
            .into_iter()
            .zip(wakers)
            .map(|(tx, (_, w))| (tx, w))
            .collect();

        let inline = config.inline_forwarding;
        let loads: Arc<[std::sync::atomic::AtomicUsize]> = (0..m)
            .map(|_| std::sync::atomic::AtomicUsize::new(0))
            .collect();
        let ids = kite_link::FaceIds::new();
        let mut io_busy = Vec::with_capacity(m);
        let mut io_crossed = Vec::with_capacity(m);
        let mut io_threads = Vec::with_capacity(m);
        let parts = polls
            .into_iter()
            .zip(io_rx)
            .zip(io_sleep)
            .zip(to_fwd.into_iter().zip(from_fwd))
            .zip(shards);
        for (k, ((((poll, rx), sleep), (to_fwd, from_fwd)), shards)) in parts.enumerate() {
            let busy = Arc::new(BusyTime::default());
            io_busy.push(busy.clone());
            let crossed = Arc::new(dispatch::Crossed::default());
            io_crossed.push(crossed.clone());
            let dispatcher = dispatch::Dispatcher::new(
                hasher,
                ndt.clone(),
                to_fwd,
                fwd.iter().map(|(_, w)| w.clone()).collect(),
                clock,
                affinity::Affinity::new(k, m, inline),
                crossed,
            );
            io_threads.push(io::IoThread::new(
                &config,
                io::Place {
                    index: k,
                    peers: io.clone(),
                    loads: loads.clone(),
                    ids: ids.clone(),
                },
                owned.remove(0),
                poll,
                sleep,
                rx,
                dispatcher,
                from_fwd,
                fwd.iter().map(|(tx, w)| (tx.clone(), w.clone())).collect(),
                shards,
                event_tx.clone(),
                busy,
            )?);
        }
        for (k, t) in io_threads.into_iter().enumerate() {
            // One thread keeps the name it always had; more are numbered.
            let name = match m {
                1 => "kite-io".to_string(),
                _ => format!("kite-io{k}"),
            };
            threads.push(
                std::thread::Builder::new()
                    .name(name)
                    .spawn(move || t.run())?,
            );
        }
        Ok(Runtime {
            handle: RuntimeHandle {
                io,
                loads,
                ether: config.ether.iter().cloned().zip(ether_threads).collect(),
                udp_thread,
                fwd,
                internal_rx,
                events: event_rx,
                hasher,
                ndt,
                clock,
                io_busy,
                io_crossed,
                shard_busy,
                inline,
            },
            threads,
        })
    }

    /// Management's handle.
    pub fn handle(&self) -> RuntimeHandle {
        self.handle.clone()
    }

    /// Stops every thread and waits for them.
    pub fn shutdown(self) {
        for (tx, w) in &self.handle.fwd {
            let _ = tx.send(FwCommand::Shutdown);
            w.wake();
        }
        for (tx, waker) in &self.handle.io {
            let _ = tx.send(IoCommand::Shutdown);
            let _ = waker.wake();
        }
        for t in self.threads {
            let _ = t.join();
        }
    }
}
