//! `kite run`: the forwarder daemon. Opens the listeners NFD opens (unix socket, UDP and TCP
//! on port 6363, optionally WebSocket and Ethernet), starts the I/O and forwarding threads, and serves NFD's
//! management protocol, until SIGINT or SIGTERM.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::Args;
use kite_fw::fib::{FibConfig, FibWriter};
use kite_fw::hash::NameHasher;
use kite_fw::runtime::{Runtime, RuntimeConfig};
use kite_fw::strategy::StrategyTable;
use kite_mgmt::server::Manager;

/// NFD's default unix socket, where NDN apps look first.
pub const DEFAULT_SOCKET: &str = "/run/nfd/nfd.sock";

/// Options of `kite run`.
#[derive(Args, Debug)]
pub struct RunArgs {
    /// Unix stream socket local apps connect to. Default: /run/nfd/nfd.sock (NFD's), or
    /// $XDG_RUNTIME_DIR/kite/nfd.sock when /run/nfd cannot be created.
    #[arg(long, value_name = "PATH")]
    socket: Option<PathBuf>,
    /// UDP listener (on-demand faces per remote endpoint); repeatable. Default: loopback
    /// only; give 0.0.0.0:6363 to reach neighbours.
    #[arg(long, value_name = "ADDR:PORT", default_values = ["127.0.0.1:6363"])]
    udp: Vec<SocketAddr>,
    /// TCP listener; repeatable. Default: loopback only.
    #[arg(long, value_name = "ADDR:PORT", default_values = ["127.0.0.1:6363"])]
    tcp: Vec<SocketAddr>,
    /// WebSocket listener (NFD uses port 9696); repeatable. None by default.
    #[arg(long, value_name = "ADDR:PORT")]
    ws: Vec<SocketAddr>,
    /// Ethernet interface to forward on (NDN's EtherType 0x8624); repeatable. Opens a
    /// multicast face on NDN's group (ether://[01:00:5e:00:17:aa], permanent) and accepts
    /// unicast frames to the interface's address as on-demand faces per sender; `kite face
    /// create ether://[MAC] --local dev://IFNAME` makes a unicast face. Needs CAP_NET_RAW
    /// (root, or `setcap cap_net_raw+ep` on kite). None by default.
    #[arg(long, value_name = "IFNAME")]
    ether: Vec<String>,
    /// Serve only the unix socket (and any --ws and --ether): no UDP or TCP listeners.
    #[arg(long)]
    local_only: bool,
    /// Forwarding threads. Default: one per core beyond the one the I/O thread takes (at
    /// least one).
    #[arg(long, value_name = "N")]
    threads: Option<u8>,
    /// Content Store capacity in packets (split over the forwarding threads).
    #[arg(long, value_name = "PACKETS", default_value_t = 65536)]
    cs_capacity: usize,
    /// Log filter: a level (error, warn, info, debug, trace) or per-module directives such as
    /// `info,kite_fw::runtime=debug`. Default: $KITE_LOG, else info.
    #[arg(long, value_name = "FILTER")]
    log: Option<String>,
    /// Name components hashed to choose an Interest's forwarding thread (0: whole name).
    #[arg(long, value_name = "K", default_value_t = 2)]
    dispatch_prefix: usize,
}

/// Where the unix socket goes: the requested path, NFD's, or a per-user fallback.
fn socket_path(requested: Option<PathBuf>) -> Result<PathBuf> {
    if let Some(p) = requested {
        return Ok(p);
    }
    let default = PathBuf::from(DEFAULT_SOCKET);
    let dir = default.parent().unwrap_or(Path::new("/"));
    if std::fs::create_dir_all(dir).is_ok() && is_writable(dir) {
        return Ok(default);
    }
    let runtime = std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    let fallback = runtime.join("kite").join("nfd.sock");
    eprintln!(
        "kite: cannot create {} (not permitted); listening on {} instead \
         (apps need NDN_CLIENT_TRANSPORT=unix://{})",
        dir.display(),
        fallback.display(),
        fallback.display()
    );
    Ok(fallback)
}

fn is_writable(dir: &Path) -> bool {
    let probe = dir.join(format!(".kite-probe-{}", std::process::id()));
    let ok = std::fs::write(&probe, b"").is_ok();
    let _ = std::fs::remove_file(&probe);
    ok
}

fn default_threads() -> u8 {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    cores.saturating_sub(1).clamp(1, 64) as u8
}

/// Runs the forwarder until a signal asks it to stop.
pub fn run(args: RunArgs) -> Result<String> {
    let filter = args
        .log
        .clone()
        .or_else(|| std::env::var("KITE_LOG").ok())
        .unwrap_or_else(|| "info".into());
    let filter = tracing_subscriber::EnvFilter::try_new(&filter)
        .map_err(|e| anyhow::anyhow!("--log {filter:?}: {e}"))?;
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    let socket = socket_path(args.socket)?;
    let threads = args.threads.unwrap_or_else(default_threads);
    if threads == 0 || threads > 64 {
        bail!("--threads must be between 1 and 64");
    }
    let mut config = RuntimeConfig {
        forwarding_threads: threads,
        dispatch_prefix_len: if args.dispatch_prefix == 0 {
            usize::MAX
        } else {
            args.dispatch_prefix
        },
        unix_socket: Some(socket.clone()),
        ws: args.ws,
        ether: args.ether,
        ..RuntimeConfig::default()
    };
    if !args.local_only {
        config.udp = args.udp;
        config.tcp = args.tcp;
    }
    config.forwarder.pcct.cs_capacity = args.cs_capacity.div_ceil(usize::from(threads));
    config.forwarder.pcct.capacity = config
        .forwarder
        .pcct
        .capacity
        .max(config.forwarder.pcct.cs_capacity * 2 + config.forwarder.pcct.pit_capacity);

    let hasher = NameHasher::random();
    let strategies = StrategyTable::builtin();
    let best_route = strategies
        .find(&"/localhost/nfd/strategy/best-route".parse()?)
        .map_err(|_| anyhow::anyhow!("best-route is built in"))?;
    let (fib, readers) = FibWriter::new(hasher, FibConfig::default(), best_route);
    let listeners = describe_listeners(&config);
    let runtime = Runtime::start(config, readers, strategies.clone(), hasher)
        .context("cannot start the forwarder")?;
    let manager = Manager::new(runtime.handle(), fib, strategies);
    std::thread::Builder::new()
        .name("kite-mgmt".into())
        .spawn(move || manager.run())?;
    eprintln!("kite: forwarding with {threads} forwarding thread(s) on {listeners}");
    eprintln!("kite: NFD management at /localhost/nfd; stop with Ctrl-C");

    let mut signals = signal_hook::iterator::Signals::new([
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
    ])?;
    if let Some(sig) = signals.forever().next() {
        eprintln!("kite: signal {sig}, stopping (a second signal forces exit)");
    }
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
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
        if signals.pending().next().is_some() {
            eprintln!("kite: second signal, exiting now");
            let _ = std::fs::remove_file(&socket);
            std::process::exit(130);
        }
    }
    let _ = std::fs::remove_file(&socket);
    Ok(String::new())
}

fn describe_listeners(c: &RuntimeConfig) -> String {
    let mut all: Vec<String> = c
        .unix_socket
        .iter()
        .map(|p| format!("unix://{}", p.display()))
        .collect();
    all.extend(c.udp.iter().map(|a| format!("udp://{a}")));
    all.extend(c.tcp.iter().map(|a| format!("tcp://{a}")));
    all.extend(c.ws.iter().map(|a| format!("ws://{a}")));
    all.extend(c.ether.iter().map(|i| format!("dev://{i}")));
    all.join(", ")
}
