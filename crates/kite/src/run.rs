//! `kite run`: the forwarder daemon. Opens the listeners NFD opens (unix socket, UDP and TCP
//! on port 6363, optionally WebSocket and Ethernet), starts the I/O and forwarding threads, creates
//! the
//! faces, routes and strategy choices of the configuration file, and serves NFD's management
//! protocol, until SIGINT or SIGTERM; SIGHUP reads the configuration file again. Under
//! systemd (`$NOTIFY_SOCKET`), it tells its service manager when it is ready, reloading and
//! stopping (dist/systemd/kite.service).

mod certs;
mod metrics;
mod notify;
mod options;
pub(crate) use options::default_inline;
mod propagate_key;
mod readvertise;
mod reload;
mod startup;

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use kite_face::FaceUri;
use kite_fw::fib::{FibConfig, FibWriter};
use kite_fw::hash::NameHasher;
use kite_fw::strategy::StrategyTable;
use kite_mgmt_server::server::Manager;
use kite_runtime::{Runtime, RuntimeConfig};
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};

use crate::config::Config;

/// Options of `kite run`. Each overrides the configuration file's value.
#[derive(Args, Debug)]
pub struct RunArgs {
    /// Configuration file (TOML; docs/config.md lists every key). The flags below override
    /// its values.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Print the effective configuration (file, flags and defaults merged) as TOML and exit
    /// without starting: checks a configuration file.
    #[arg(long)]
    print_config: bool,
    /// Unix stream socket local apps connect to. Default: /run/nfd/nfd.sock (NFD's), or when
    /// /run/nfd cannot be created $XDG_RUNTIME_DIR/kite/nfd.sock (without XDG_RUNTIME_DIR:
    /// $TMPDIR/kite-UID/nfd.sock), where every client tool looks next.
    #[arg(long, value_name = "PATH")]
    socket: Option<PathBuf>,
    /// UDP listener (on-demand faces per remote endpoint); repeatable. Default:
    /// 127.0.0.1:6363 only; give 0.0.0.0:6363 to reach neighbours.
    #[arg(long, value_name = "ADDR:PORT")]
    udp: Vec<SocketAddr>,
    /// TCP listener; repeatable. Default: 127.0.0.1:6363 only.
    #[arg(long, value_name = "ADDR:PORT")]
    tcp: Vec<SocketAddr>,
    /// WebSocket listener (NFD uses port 9696); repeatable. None by default.
    #[arg(long, value_name = "ADDR:PORT")]
    ws: Vec<SocketAddr>,
    /// WebTransport (HTTP/3) listener on UDP, for browsers (a session per client on path
    /// /ndn, NDN packets as its datagrams, faces quic://ADDR:PORT); repeatable. Without
    /// `cert` and `key` in [face_system.http3], a self-signed certificate valid 13 days is
    /// made at start and its SHA-256 hash logged (for `serverCertificateHashes`). None by
    /// default.
    #[arg(long, value_name = "ADDR:PORT")]
    http3: Vec<SocketAddr>,
    /// Ethernet interface to forward on (NDN's EtherType 0x8624); repeatable. Opens a
    /// multicast face on NDN's group (ether://[01:00:5e:00:17:aa], permanent) and accepts
    /// unicast frames to the interface's address as on-demand faces per sender; `kite face
    /// create ether://[MAC] --local dev://IFNAME` makes a unicast face. Needs CAP_NET_RAW
    /// (root, or `setcap cap_net_raw+ep` on kite). None by default.
    #[arg(long, value_name = "IFNAME")]
    ether: Vec<String>,
    /// Ethernet interface to forward on through Kite's XDP program and AF_XDP sockets (kernel
    /// bypass) rather than an AF_PACKET socket; repeatable, and implies --ether IFNAME. The
    /// program hands NDN frames (EtherType 0x8624) and UDP datagrams to Kite's UDP listeners
    /// to Kite and passes everything else to the kernel; it is detached when kite stops, even
    /// when killed. UDP faces still send through the kernel's sockets. Needs root. Where AF_XDP
    /// cannot be had, the interface keeps AF_PACKET and the log says why (`kite channel list`
    /// shows each channel's I/O path). None by default.
    #[arg(long, value_name = "IFNAME")]
    xdp: Vec<String>,
    /// UMEM of each AF_XDP socket (one per receive queue), in octets (at least 65536): half
    /// receives, half sends, in 2048-octet frames (4096 for MTUs above 1778). Default: 8388608
    /// (8 MiB).
    #[arg(long, value_name = "OCTETS", value_parser = parse_budget)]
    xdp_umem: Option<usize>,
    /// On-demand faces each UDP listener keeps at most (1-1048576); a new sender beyond them
    /// takes the place of the idlest. Default: 4096.
    #[arg(long, value_name = "FACES", value_parser = crate::config::parse_on_demand_limit)]
    udp_on_demand_limit: Option<usize>,
    /// Receive buffer asked for each unicast UDP face's own socket, in octets (at least
    /// 65536; the kernel caps it at net.core.rmem_max): what it holds for one peer while the
    /// face is not read (a restrained flooder), beyond which it drops that peer's datagrams.
    /// Default: 262144 (256 KiB).
    #[arg(long, value_name = "OCTETS", value_parser = parse_budget)]
    udp_socket_buffer: Option<usize>,
    /// On-demand faces each Ethernet interface keeps at most (1-1048576), likewise. Default:
    /// 4096.
    #[arg(long, value_name = "FACES", value_parser = crate::config::parse_on_demand_limit)]
    ether_on_demand_limit: Option<usize>,
    /// Connections each TCP listener keeps at most as on-demand faces (1-1048576); a new one
    /// beyond them takes the place of the one that received longest ago. Default: 4096.
    #[arg(long, value_name = "FACES", value_parser = crate::config::parse_on_demand_limit)]
    tcp_on_demand_limit: Option<usize>,
    /// Connections each WebSocket listener keeps at most (1-1048576), likewise. Default:
    /// 4096.
    #[arg(long, value_name = "FACES", value_parser = crate::config::parse_on_demand_limit)]
    ws_on_demand_limit: Option<usize>,
    /// Seconds a permanent TCP face whose connection was lost (or whose peer was down at
    /// start) waits before dialing again, doubling after each failed dial (1-3600).
    /// Default: 1.
    #[arg(long, value_name = "SECS", value_parser = parse_reconnect)]
    reconnect_initial: Option<u64>,
    /// The longest wait in seconds between two dials of a lost permanent TCP face (1-3600,
    /// at least --reconnect-initial). Default: 60.
    #[arg(long, value_name = "SECS", value_parser = parse_reconnect)]
    reconnect_max: Option<u64>,
    /// Receive buffer asked for each Ethernet interface's socket, in octets (at least
    /// 65536); beyond net.core.rmem_max only with CAP_NET_ADMIN. Frames the kernel drops for
    /// a full buffer are counted on the channel (`kite channel list`: SOCKET). Default:
    /// 4194304 (4 MiB).
    #[arg(long, value_name = "OCTETS", value_parser = parse_budget)]
    ether_socket_buffer: Option<usize>,
    /// Serve only the unix socket (and any WebSocket and Ethernet): no UDP or TCP listeners.
    #[arg(long)]
    local_only: bool,
    /// Forwarding threads (1-64). Default: one per core beyond the one the I/O thread takes
    /// (at least one).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(1..=64))]
    threads: Option<u8>,
    /// I/O threads (1-64), each owning a disjoint set of faces: stream connections go to the
    /// one with the fewest faces, each has its own UDP listener on the same port
    /// (SO_REUSEPORT), Ethernet interface i belongs to thread i mod N. Default: one per two
    /// cores (at least one).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(1..=i64::from(kite_runtime::MAX_IO_THREADS)))]
    io_threads: Option<u8>,
    /// Run the forwarding shards (--threads of them) in the I/O thread itself, to completion,
    /// instead of in threads of their own: no hand-off or wake-up between the stages, which
    /// wins when the cores are fewer than the busy threads (the forwarder's and its
    /// applications'). `--inline false` forces forwarding threads. Default: on with two
    /// cores or fewer.
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    inline: Option<bool>,
    /// Largest network packet accepted on any face, in one frame or reassembled from NDNLPv2
    /// fragments, in octets (1024-8800); a larger one is dropped and counted on its face
    /// (`kite face show`: in-too-large). Default: 8800, NFD's MAX_NDN_PACKET_SIZE.
    #[arg(long, value_name = "OCTETS", value_parser = parse_max_packet_size)]
    max_packet_size: Option<usize>,
    /// Offer shared memory to local applications that ask for it on the unix socket
    /// (`--shm false`: they keep the socket). Default: on.
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    shm: Option<bool>,
    /// Octets of each of a shared-memory face's two rings: a power of two, 65536-67108864;
    /// each such face maps 4 KiB plus twice this. Default: 1048576 (1 MiB).
    #[arg(long, value_name = "OCTETS", value_parser = parse_shm_ring_size)]
    shm_ring_size: Option<usize>,
    /// Milliseconds an Interest stays pending at most, whatever InterestLifetime it asks for
    /// (100-3600000): bounds how long a flood's Interests hold the PIT. Default: 120000.
    #[arg(long, value_name = "MS", value_parser = max_interest_lifetime)]
    max_interest_lifetime: Option<u64>,
    /// Content Store capacity in packets (split over the forwarding threads). Default: 65536.
    #[arg(long, value_name = "PACKETS")]
    cs_capacity: Option<usize>,
    /// Content Store capacity in octets of cached packets (split over the forwarding
    /// threads); the least recently used are evicted beyond it or beyond --cs-capacity.
    /// At least 65536. Default: 268435456 (256 MiB).
    #[arg(long, value_name = "OCTETS", value_parser = parse_budget)]
    cs_capacity_bytes: Option<usize>,
    /// Octets of NDNLPv2 fragments held for reassembly per datagram channel (every face of
    /// a UDP listener or Ethernet interface together); the oldest partial packets are dropped
    /// beyond it. At least 65536. Default: 4194304 (4 MiB).
    #[arg(long, value_name = "OCTETS", value_parser = parse_budget)]
    reassembly_bytes: Option<usize>,
    /// Octets that frames waiting for blocked sockets (peers that do not read) may hold in
    /// the output queues of all faces together; a frame beyond it is dropped and counted as
    /// queue-full. At least 65536. Default: 268435456 (256 MiB).
    #[arg(long, value_name = "OCTETS", value_parser = parse_budget)]
    output_queue_bytes: Option<usize>,
    /// Per face with NDNLPv2 LpReliability on (`kite face create --lp-reliability on`, or
    /// `lp_reliability = true` in a [[face]]), the TxSequence numbers in flight at most
    /// (64-65536); the oldest unacknowledged packet is given up beyond it. Default: 4096.
    #[arg(long, value_name = "FRAMES", value_parser = crate::config::parse_lp_reliability_frames)]
    lp_reliability_frames: Option<usize>,
    /// Per face with LpReliability on, octets of frames kept until acknowledged; the
    /// oldest unacknowledged packet is given up beyond it. At least 65536. Default: 4194304
    /// (4 MiB).
    #[arg(long, value_name = "OCTETS", value_parser = parse_budget)]
    lp_reliability_bytes: Option<usize>,
    /// Log filter: a level (off, error, warn, info, debug, trace) or TARGET=LEVEL directives
    /// such as `info,kite_runtime=debug`; any other word is an error. Default: $KITE_LOG,
    /// else the file's, else info.
    #[arg(long, value_name = "FILTER")]
    log: Option<String>,
    /// Serve the forwarder's counters over HTTP on ADDR: `/metrics` for Prometheus (text
    /// format, or OpenMetrics when asked for), a status page at `/` and `/status.json`.
    /// Anyone who can reach ADDR can read them: keep it on loopback or a management network.
    /// Off by default.
    #[arg(long, value_name = "ADDR:PORT")]
    metrics: Option<SocketAddr>,
    /// Name components hashed to choose an Interest's forwarding thread (0: whole name).
    /// Default: 2.
    #[arg(long, value_name = "K")]
    dispatch_prefix: Option<usize>,
    /// Register routes of origin client (65) with the routing daemon on this host
    /// (/localhost/nlsr/rib/register: NLSR, NDNd's ndn-dv) while one runs, refreshed hourly and
    /// withdrawn when the route goes, as NFD's rib.readvertise_nlsr. Default: true
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    readvertise_nlsr: Option<bool>,
    /// Register routes under --propagate-prefix with the gateway (the face with a route for
    /// /localhop/nfd: /localhop/nfd/rib/register), as the shortest such prefix covering them,
    /// Origin client, cost 15, every 25 s, as NFD's auto_prefix_propagate. Default: false
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    auto_prefix_propagate: Option<bool>,
    /// A prefix this host may announce to its gateway (NFD's are the host's identities);
    /// repeatable. Default: none, or with --propagate-key its certificate's identity
    #[arg(long, value_name = "NAME")]
    propagate_prefix: Vec<kite_packet::Name>,
    /// Sign the propagation commands with this key rather than DigestSha256, and serve its
    /// certificate to the gateway: an `ndnsec export` safe bag (with
    /// --propagate-key-password-file), or python-ndn's file-TPM directory (with
    /// --propagate-certificate). Default: none
    #[arg(long, value_name = "FILE")]
    propagate_key: Option<PathBuf>,
    /// The file holding the safe bag's password; not readable by every user. Default: none
    #[arg(long, value_name = "FILE")]
    propagate_key_password_file: Option<PathBuf>,
    /// The certificate of a file-TPM --propagate-key (as `ndnsec cert-dump` writes it).
    /// Default: none
    #[arg(long, value_name = "FILE")]
    propagate_certificate: Option<PathBuf>,
    /// An issuer's certificate, served with the key's own; repeatable. Default: none
    #[arg(long, value_name = "FILE")]
    propagate_chain: Vec<PathBuf>,
    /// Open a UDP multicast face (permanent, multi-access) on --udp-multicast-group on each
    /// interface that is up, multicast-capable, not loopback and has an IPv4 address, as NFD's
    /// face_system.udp mcast: neighbours on a LAN reach each other with no face configured.
    /// Default: false
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    udp_multicast: Option<bool>,
    /// The UDP multicast group and port. Default: 224.0.23.170:56363 (NFD's)
    #[arg(long, value_name = "ADDR:PORT", value_parser = crate::config::parse_multicast_group)]
    udp_multicast_group: Option<std::net::SocketAddrV4>,
    /// Open UDP multicast faces only on this interface; repeatable. Default: every eligible one
    #[arg(long, value_name = "IFNAME")]
    udp_multicast_whitelist: Vec<String>,
    /// Never open a UDP multicast face on this interface; repeatable. Default: none
    #[arg(long, value_name = "IFNAME")]
    udp_multicast_blacklist: Vec<String>,
    /// Let neighbours register routes toward themselves under /localhop/nfd (rib/register and
    /// rib/unregister, at most 256 routes per face): a gateway for hosts that propagate their
    /// prefixes, as NFD's localhop_security. Default: false
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    localhop_registration: Option<bool>,
}

/// Parses `--max-interest-lifetime` with the configuration file's rule.
fn max_interest_lifetime(s: &str) -> Result<u64, String> {
    let ms = s.parse::<u64>().map_err(|e| e.to_string())?;
    crate::config::check_max_interest_lifetime(ms)
}

/// Runs the forwarder until a signal asks it to stop (or prints the configuration).
pub fn run(args: RunArgs) -> Result<String> {
    let mut config = match &args.config {
        Some(path) => Config::load(path)?,
        None => Config::default(),
    };
    options::apply_flags(&mut config, &args)?;
    options::resolve(&mut config);
    if args.print_config {
        return Ok(config.to_toml());
    }
    let log = init_logging(&config);
    exit_on_panic();
    // Relative paths in the file are from its directory.
    let base = args
        .config
        .as_deref()
        .and_then(std::path::Path::parent)
        .unwrap_or(std::path::Path::new("."))
        .to_path_buf();
    // Before anything starts: a key that cannot be had stops the start with nothing to undo.
    let propagation_key = propagate_key::read(&config.rib, &base)?;
    match kite_face::raise_fd_limit() {
        Ok(Some((from, to))) => tracing::info!(from, to, "open files limit raised to its maximum"),
        Ok(None) => {}
        Err(e) => tracing::warn!(error = %e, "cannot raise the open files limit"),
    }
    let notifier = notify::Notifier::from_env();
    // Registered before anything starts: a SIGHUP or SIGTERM during the start is then
    // handled once the daemon is up, instead of killing it with its socket left behind.
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])?;
    let mut runtime_config = options::runtime_config(&config);
    let certificate = match config.face_system.http3.listen.is_empty() {
        true => None,
        false => {
            let cert = webtransport_certificate(&config.face_system.http3, &base)?;
            Some(kite_face::h3::CertSlot::new(cert))
        }
    };
    if let Some(cert) = &certificate {
        (runtime_config.listeners).extend(options::webtransport_listeners(&config, cert));
    }
    let socket = config.face_system.unix.path.clone().unwrap_or_default();
    let threads = runtime_config.forwarding_threads;
    let inline = runtime_config.inline_forwarding;
    let io = runtime_config.io_threads;

    let hasher = NameHasher::random();
    let strategies = StrategyTable::builtin();
    let best_route = strategies
        .find(&"/localhost/nfd/strategy/best-route".parse()?)
        .map_err(|_| anyhow::anyhow!("best-route is built in"))?;
    let (mut fib, readers) = FibWriter::new(hasher, FibConfig::default(), best_route);
    Manager::route_internal_face(&mut fib);
    if config.rib.localhop_registration {
        Manager::route_localhop(&mut fib);
    }
    let listeners = describe_listeners(&runtime_config);
    let metrics = config
        .metrics
        .listen
        .map(metrics::Listener::bind)
        .transpose()?;
    let mut metrics_addr = None;
    let runtime = Runtime::start(runtime_config, readers, strategies.clone(), hasher)
        .context("cannot start the forwarder")?;
    let mut manager = Manager::new(runtime.handle(), fib, strategies);
    manager.set_strategy_loader(Box::new(load_strategy));
    let existing: Vec<u64> = runtime.handle().faces().iter().map(|f| f.id.0).collect();
    let faces = match startup::apply(&mut manager, &existing, &config) {
        Ok(faces) => faces,
        Err(e) => {
            drop(manager);
            runtime.shutdown();
            let _ = std::fs::remove_file(&socket);
            let file = args.config.as_deref().unwrap_or(std::path::Path::new("-"));
            return Err(e.context(format!("configuration {}", file.display())));
        }
    };
    if let Some(listener) = metrics {
        let served = listener
            .local_addr()
            .and_then(|a| listener.serve(manager.status_source()).map(|()| a));
        match served {
            Ok(a) => metrics_addr = Some(a),
            Err(e) => {
                drop(manager);
                runtime.shutdown();
                let _ = std::fs::remove_file(&socket);
                return Err(e);
            }
        }
    }
    let served = match &propagation_key {
        Some(k) => manager
            .serve_certificates(&k.certificates)
            .context("rib.propagate_key: serving its certificates"),
        None => Ok(()),
    };
    if let Err(e) = served
        .and_then(|()| certs::start(&mut manager, &socket, &config.rib, &config.authorize, &base))
    {
        drop(manager);
        runtime.shutdown();
        let _ = std::fs::remove_file(&socket);
        return Err(e);
    }
    readvertise::start(&mut manager, &socket, &config.rib, propagation_key)?;
    let mut reloader = reload::Reloader::new(
        args.config.clone(),
        config,
        faces,
        manager.jobs(),
        log,
        runtime.handle(),
        certificate,
    );
    std::thread::Builder::new()
        .name("kite-mgmt".into())
        .spawn(move || manager.run())?;
    let shards = match (inline, io) {
        (true, 1) => format!("{threads} forwarding shard(s) in the I/O thread"),
        (true, _) => format!("{threads} forwarding shard(s) in {io} I/O threads"),
        (false, 1) => format!("{threads} forwarding thread(s)"),
        (false, _) => format!("{threads} forwarding thread(s) and {io} I/O threads"),
    };
    eprintln!("kite: forwarding with {shards} on {listeners}");
    if let Some(addr) = metrics_addr {
        eprintln!("kite: metrics at http://{addr}/metrics, status page at http://{addr}/");
    }
    eprintln!("kite: NFD management at /localhost/nfd; stop with Ctrl-C, reload with SIGHUP");
    notifier.ready();

    for sig in signals.forever() {
        if sig != SIGHUP {
            eprintln!("kite: signal {sig}, stopping (a second signal forces exit)");
            break;
        }
        notifier.reloading();
        reloader.reload(&args);
        notifier.ready();
    }
    notifier.stopping();
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        fault_slow_shutdown();
        runtime.shutdown();
        let _ = done_tx.send(());
    });
    loop {
        if done_rx
            .recv_timeout(std::time::Duration::from_millis(50))
            .is_ok()
        {
            break;
        }
        // SIGHUP while stopping is not a second request to stop.
        if signals.pending().any(|s| s != SIGHUP) {
            eprintln!("kite: second signal, exiting now");
            let _ = std::fs::remove_file(&socket);
            std::process::exit(FORCED_EXIT_STATUS);
        }
    }
    let _ = std::fs::remove_file(&socket);
    Ok(String::new())
}

/// The exit status when a second SIGINT or SIGTERM cuts a shutdown short: the shell's for
/// a process ended by SIGINT.
const FORCED_EXIT_STATUS: i32 = 130;

/// Logging on stderr with the configuration's filter, behind a handle a reload changes it
/// through.
fn init_logging(
    config: &Config,
) -> tracing_subscriber::reload::Handle<tracing_subscriber::EnvFilter, tracing_subscriber::Registry>
{
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let filter = config.log.filter.as_ref().map_or("info", |f| f.0.as_str());
    let (filter, handle) =
        tracing_subscriber::reload::Layer::new(tracing_subscriber::EnvFilter::new(filter));
    tracing_subscriber::registry()
        .with(filter)
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr())),
        )
        .init();
    handle
}

/// Debug builds only: `KITE_FAULT_SLOW_SHUTDOWN=MS` holds the shutdown that long, so the
/// end-to-end tests can send a second signal while it is on its way.
fn fault_slow_shutdown() {
    #[cfg(debug_assertions)]
    if let Some(ms) = std::env::var("KITE_FAULT_SLOW_SHUTDOWN")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
}

/// The exit status after a panic: Rust's own for a panicking `main`.
const PANIC_EXIT_STATUS: i32 = 101;

/// A panic in any thread (I/O, forwarding, management) ends the whole process: it is logged
/// (a tracing error naming the thread and the location, then the standard message on stderr)
/// and the process exits with [`PANIC_EXIT_STATUS`], so a supervisor (systemd
/// `Restart=on-failure`) restarts it. Without this, the other threads kept the process up
/// without the dead thread's work: no listener, or no forwarding, or no management. The
/// restart replaces the unix socket file left behind (`kite_face::unix::listen`).
fn exit_on_panic() {
    let standard = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let thread = std::thread::current();
        let name = thread.name().unwrap_or("unnamed");
        let location = info
            .location()
            .map_or_else(|| "unknown".to_string(), ToString::to_string);
        let payload = info.payload();
        let message = payload
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
            .unwrap_or("(no message)");
        tracing::error!(
            thread = name,
            %location,
            "panic: {message}; kite exits so that its supervisor restarts it"
        );
        standard(info);
        std::process::exit(PANIC_EXIT_STATUS);
    }));
}

/// `--reconnect-initial` and `--reconnect-max`: the configuration file's rule.
fn parse_reconnect(s: &str) -> Result<u64, String> {
    let v = s.parse::<u64>().map_err(|e| format!("{s:?}: {e}"))?;
    crate::config::check_reconnect_seconds(v)
}

/// `--shm-ring-size`: the configuration file's rule.
fn parse_shm_ring_size(s: &str) -> Result<usize, String> {
    let v = s.parse::<usize>().map_err(|e| format!("{s:?}: {e}"))?;
    crate::config::check_shm_ring_size(v)
}

/// `--max-packet-size`: the configuration file's rule.
fn parse_max_packet_size(s: &str) -> Result<usize, String> {
    let v = s.parse::<usize>().map_err(|e| format!("{s:?}: {e}"))?;
    crate::config::check_max_packet_size(v)
}

/// The certificate WebTransport listeners serve: `cert` and `key` (from `base` when
/// relative), or a self-signed one made now; its hash is logged in the forms
/// `serverCertificateHashes` takes.
fn webtransport_certificate(
    h3: &crate::config::Http3,
    base: &std::path::Path,
) -> Result<kite_face::Certificate> {
    let cert = match (&h3.cert, &h3.key) {
        (Some(c), Some(k)) => kite_face::Certificate::from_pem_files(&base.join(c), &base.join(k))
            .map_err(|e| anyhow::anyhow!("[face_system.http3] certificate: {e}"))?,
        (None, None) => {
            let c = kite_face::Certificate::self_signed(&[], kite_face::h3::SELF_SIGNED_VALIDITY)
                .map_err(|e| anyhow::anyhow!("cannot make a certificate: {e}"))?;
            let days = kite_face::h3::SELF_SIGNED_VALIDITY.as_secs() / 86_400;
            tracing::info!(
                "WebTransport certificate made: self-signed ECDSA P-256, valid {days} days"
            );
            c
        }
        _ => anyhow::bail!("[face_system.http3]: cert and key go together"),
    };
    tracing::info!(
        sha256_hex = cert.sha256_hex(),
        sha256_base64 = cert.sha256_base64(),
        "WebTransport certificate hash (serverCertificateHashes: {{algorithm: \"sha-256\", value}})"
    );
    Ok(cert)
}

/// The channels' URIs as configured, for the start-up line.
fn describe_listeners(c: &RuntimeConfig) -> String {
    let mut all: Vec<FaceUri> = c.listeners.iter().map(|l| l.uri()).collect();
    all.extend(c.udp.iter().map(|&a| FaceUri::Udp(a)));
    all.extend(c.ether.iter().map(|i| FaceUri::Dev(i.clone())));
    let all: Vec<String> = all.iter().map(FaceUri::to_string).collect();
    all.join(", ")
}

/// Loads an eBPF strategy program for `kite-strategy/load`.
fn load_strategy(
    name: &str,
    path: &std::path::Path,
) -> Result<std::sync::Arc<dyn kite_fw::strategy::Strategy>, String> {
    let elf = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let s = kite_bpf::load(name, &elf, kite_bpf::Engine::Jit).map_err(|e| e.to_string())?;
    Ok(s)
}

/// Parses an octet budget flag by the configuration file's rule.
fn parse_budget(s: &str) -> Result<usize, String> {
    let v = s
        .parse()
        .map_err(|e| format!("{s:?} is not a number of octets: {e}"))?;
    crate::config::check_budget(v)
}
