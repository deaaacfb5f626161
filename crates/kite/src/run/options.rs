//! From the configuration file and the flags to what the threads start with: flags override
//! the file, then the machine fills what is left open (thread count, socket path).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use kite_face::OpenListener;
use kite_runtime::RuntimeConfig;

use super::RunArgs;
use crate::config::{Config, LogFilter, Prefix};

/// NFD's default unix socket, where NDN apps look first.
const DEFAULT_SOCKET: &str = "/run/nfd/nfd.sock";

/// Puts the flags given (and $KITE_LOG) over the file's values.
pub(super) fn apply_flags(config: &mut Config, args: &RunArgs) -> Result<()> {
    let env_log = std::env::var("KITE_LOG").ok();
    apply(config, args, env_log.as_deref())
}

fn apply(config: &mut Config, args: &RunArgs, env_log: Option<&str>) -> Result<()> {
    let faces = &mut config.face_system;
    if let Some(p) = &args.socket {
        faces.unix.path = Some(p.clone());
    }
    if !args.udp.is_empty() {
        faces.udp.listen = args.udp.clone();
    }
    if !args.tcp.is_empty() {
        faces.tcp.listen = args.tcp.clone();
    }
    if !args.ws.is_empty() {
        faces.websocket.listen = args.ws.clone();
    }
    if !args.http3.is_empty() {
        faces.http3.listen = args.http3.clone();
    }
    if !args.ether.is_empty() {
        faces.ether.interfaces = args.ether.clone();
    }
    if !args.xdp.is_empty() {
        faces.ether.xdp = args.xdp.clone();
    }
    if let Some(n) = args.xdp_umem {
        faces.ether.xdp_umem = n;
    }
    faces.local_only |= args.local_only;
    faces.max_packet_size = args.max_packet_size.unwrap_or(faces.max_packet_size);
    faces.unix.shm = args.shm.unwrap_or(faces.unix.shm);
    faces.unix.shm_ring_size = args.shm_ring_size.unwrap_or(faces.unix.shm_ring_size);
    if let Some(n) = args.udp_on_demand_limit {
        faces.udp.on_demand_limit = n;
    }
    if let Some(n) = args.udp_socket_buffer {
        faces.udp.socket_buffer = n;
    }
    if let Some(n) = args.ether_on_demand_limit {
        faces.ether.on_demand_limit = n;
    }
    if let Some(n) = args.tcp_on_demand_limit {
        faces.tcp.on_demand_limit = n;
    }
    if let Some(n) = args.ws_on_demand_limit {
        faces.websocket.on_demand_limit = n;
    }
    let tcp = &mut faces.tcp;
    tcp.reconnect_initial = args.reconnect_initial.unwrap_or(tcp.reconnect_initial);
    tcp.reconnect_max = args.reconnect_max.unwrap_or(tcp.reconnect_max);
    crate::config::check_reconnect_order(tcp.reconnect_initial, tcp.reconnect_max)
        .map_err(|e| anyhow::anyhow!("--reconnect-initial/--reconnect-max: {e}"))?;
    let udp = &mut faces.udp;
    udp.multicast = args.udp_multicast.unwrap_or(udp.multicast);
    udp.multicast_group = args.udp_multicast_group.unwrap_or(udp.multicast_group);
    if !args.udp_multicast_whitelist.is_empty() {
        udp.multicast_whitelist = args.udp_multicast_whitelist.clone();
    }
    if !args.udp_multicast_blacklist.is_empty() {
        udp.multicast_blacklist = args.udp_multicast_blacklist.clone();
    }
    if let Some(n) = args.ether_socket_buffer {
        faces.ether.socket_buffer = n;
    }
    let fwd = &mut config.forwarder;
    fwd.threads = args.threads.or(fwd.threads);
    fwd.io_threads = args.io_threads.or(fwd.io_threads);
    fwd.inline = args.inline.or(fwd.inline);
    fwd.dispatch_prefix = args.dispatch_prefix.unwrap_or(fwd.dispatch_prefix);
    fwd.max_interest_lifetime = args
        .max_interest_lifetime
        .unwrap_or(fwd.max_interest_lifetime);
    let rib = &mut config.rib;
    if let Some(r) = args.readvertise_nlsr {
        rib.readvertise_nlsr = r;
    }
    if let Some(p) = args.auto_prefix_propagate {
        rib.auto_prefix_propagate = p;
    }
    if !args.propagate_prefix.is_empty() {
        rib.propagate_prefixes = args.propagate_prefix.iter().cloned().map(Prefix).collect();
    }
    // A flag's path is from the working directory, a file's from the file's: made absolute.
    let here = |p: &PathBuf| std::path::absolute(p).unwrap_or_else(|_| p.clone());
    if let Some(p) = &args.propagate_key {
        rib.propagate_key = Some(here(p));
    }
    if let Some(p) = &args.propagate_key_password_file {
        rib.propagate_key_password_file = Some(here(p));
    }
    if let Some(p) = &args.propagate_certificate {
        rib.propagate_certificate = Some(here(p));
    }
    if !args.propagate_chain.is_empty() {
        rib.propagate_chain = args.propagate_chain.iter().map(here).collect();
    }
    if let Some(l) = args.localhop_registration {
        rib.localhop_registration = l;
    }
    crate::config::check_rib(rib).map_err(|e| anyhow::anyhow!("{e}"))?;
    if let Some(c) = args.cs_capacity {
        config.tables.cs.capacity = c;
    }
    if let Some(b) = args.cs_capacity_bytes {
        config.tables.cs.capacity_bytes = b;
    }
    if let Some(b) = args.reassembly_bytes {
        config.face_system.reassembly_bytes = b;
    }
    if let Some(b) = args.output_queue_bytes {
        config.face_system.output_queue_bytes = b;
    }
    if let Some(a) = args.metrics {
        config.metrics.listen = Some(a);
    }
    if let Some(n) = args.lp_reliability_frames {
        config.face_system.lp_reliability_frames = n;
    }
    if let Some(b) = args.lp_reliability_bytes {
        config.face_system.lp_reliability_bytes = b;
    }
    if let Some(f) = &args.log {
        config.log.filter = Some(LogFilter::parse(f).map_err(|e| anyhow::anyhow!("--log: {e}"))?);
    } else if let Some(f) = env_log {
        config.log.filter =
            Some(LogFilter::parse(f).map_err(|e| anyhow::anyhow!("$KITE_LOG: {e}"))?);
    }
    Ok(())
}

/// Fills what the machine decides: forwarding threads, the socket path, the log filter.
pub(super) fn resolve(config: &mut Config) {
    let io = *config
        .forwarder
        .io_threads
        .get_or_insert_with(default_io_threads);
    config
        .forwarder
        .threads
        .get_or_insert_with(|| default_threads(io));
    config.forwarder.inline.get_or_insert_with(default_inline);
    let unix = &mut config.face_system.unix;
    unix.path = Some(socket_path(unix.path.take()));
    config
        .log
        .filter
        .get_or_insert_with(|| LogFilter("info".into()));
}

fn listener(l: impl OpenListener + 'static) -> Arc<dyn OpenListener> {
    Arc::new(l)
}

/// The WebTransport listeners of `c`, serving the certificate `cert` holds (made or read by
/// the caller, replaced by a reload); they open after the WebSocket listeners.
pub(super) fn webtransport_listeners(
    c: &Config,
    cert: &kite_face::h3::CertSlot,
) -> Vec<Arc<dyn OpenListener>> {
    let h3 = &c.face_system.http3;
    let config = kite_face::H3Config {
        path: h3.path.clone(),
        max_sessions: h3.max_sessions,
        max_handshakes: h3.max_handshakes,
        idle_timeout: Duration::from_secs(h3.idle_timeout),
        datagram_queue: h3.datagram_queue,
    };
    (h3.listen.iter())
        .map(|&addr| {
            listener(kite_face::h3::Listen {
                addr,
                config: config.clone(),
                cert: cert.clone(),
            })
        })
        .collect()
}

/// What the threads start with, from a resolved configuration.
pub(super) fn runtime_config(c: &Config) -> RuntimeConfig {
    let threads = c.forwarder.threads.unwrap_or(1);
    let fs = &c.face_system;
    let mut r = RuntimeConfig {
        forwarding_threads: threads,
        io_threads: c.forwarder.io_threads.unwrap_or(1),
        inline_forwarding: c.forwarder.inline.unwrap_or(false),
        dispatch_prefix_len: match c.forwarder.dispatch_prefix {
            0 => usize::MAX,
            k => k,
        },
        ether: ether_interfaces(&fs.ether),
        xdp: fs.ether.xdp.clone(),
        xdp_steering: fs.ether.xdp_steering,
        ..RuntimeConfig::default()
    };
    // Listeners open in this order: the unix socket, TCP, WebSocket.
    let unix = fs
        .unix
        .path
        .iter()
        .map(|p| listener(kite_face::unix::Listen(p.clone())));
    r.listeners.extend(unix);
    if !fs.local_only {
        r.udp = fs.udp.listen.clone();
        let tcp = fs
            .tcp
            .listen
            .iter()
            .map(|&a| listener(kite_face::tcp::Listen(a)));
        r.listeners.extend(tcp);
    }
    let ws = fs
        .websocket
        .listen
        .iter()
        .map(|&a| listener(kite_face::ws::Listen(a)));
    r.listeners.extend(ws);
    if fs.udp.multicast {
        let group = fs.udp.multicast_group;
        let (white, black) = (&fs.udp.multicast_whitelist, &fs.udp.multicast_blacklist);
        r.udp_multicast = kite_face::udp::multicast_interfaces(group, white, black)
            .into_iter()
            .map(|(dev, addr)| (group, dev, addr))
            .collect();
    }
    r.face.udp_mtu = fs.udp.mtu;
    r.face.max_packet_size = fs.max_packet_size;
    r.face.shm_ring_size = fs.unix.shm.then_some(fs.unix.shm_ring_size);
    r.face.idle_timeout = Duration::from_secs(fs.udp.idle_timeout);
    r.face.reassembly.max_bytes = fs.reassembly_bytes;
    r.face.output_queue_bytes = fs.output_queue_bytes;
    r.face.reliability = kite_face::reliability::ReliabilityLimits {
        max_frames: fs.lp_reliability_frames,
        max_bytes: fs.lp_reliability_bytes,
    };
    r.face.udp_on_demand_limit = fs.udp.on_demand_limit;
    r.face.udp_socket_buffer = fs.udp.socket_buffer;
    r.face.ether_on_demand_limit = fs.ether.on_demand_limit;
    r.face.tcp_on_demand_limit = fs.tcp.on_demand_limit;
    r.face.ws_on_demand_limit = fs.websocket.on_demand_limit;
    r.face.redial_initial = Duration::from_secs(fs.tcp.reconnect_initial);
    r.face.redial_max = Duration::from_secs(fs.tcp.reconnect_max);
    r.face.ether_socket_buffer = fs.ether.socket_buffer;
    r.face.xdp_umem = fs.ether.xdp_umem;
    let cs = &c.tables.cs;
    let f = &mut r.forwarder;
    f.pcct.cs_capacity = cs.capacity.div_ceil(usize::from(threads));
    f.pcct.cs_bytes = cs.capacity_bytes.div_ceil(usize::from(threads));
    f.pcct.capacity = f
        .pcct
        .capacity
        .max(f.pcct.cs_capacity * 2 + f.pcct.pit_capacity);
    f.cs_admit = cs.admit;
    f.cs_serve = cs.serve;
    f.unsolicited = cs.unsolicited_policy.into();
    f.default_hop_limit = c.forwarder.default_hop_limit;
    f.max_interest_lifetime = Duration::from_millis(c.forwarder.max_interest_lifetime);
    f.network_region = c
        .tables
        .network_region
        .iter()
        .map(|p| p.0.clone())
        .collect();
    r
}

/// Where the unix socket goes: the requested path, NFD's, or a per-user fallback.
/// The interfaces with an Ethernet channel: those listed, then the AF_XDP ones not listed.
fn ether_interfaces(ether: &crate::config::Ether) -> Vec<String> {
    let mut all = ether.interfaces.clone();
    for x in &ether.xdp {
        if !all.contains(x) {
            all.push(x.clone());
        }
    }
    all
}

fn socket_path(requested: Option<PathBuf>) -> PathBuf {
    if let Some(p) = requested {
        return p;
    }
    let default = PathBuf::from(DEFAULT_SOCKET);
    let dir = default.parent().unwrap_or(Path::new("/"));
    if std::fs::create_dir_all(dir).is_ok() && is_writable(dir) {
        return default;
    }
    let fallback = kite_app::endpoint::user_socket();
    eprintln!(
        "kite: cannot create {} (not permitted); listening on {} instead \
         (apps need NDN_CLIENT_TRANSPORT=unix://{})",
        dir.display(),
        fallback.display(),
        fallback.display()
    );
    fallback
}

fn is_writable(dir: &Path) -> bool {
    let probe = dir.join(format!(".kite-probe-{}", std::process::id()));
    let ok = std::fs::write(&probe, b"").is_ok();
    let _ = std::fs::remove_file(&probe);
    ok
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Forwarding threads: one per core the I/O threads leave (at least one).
fn default_threads(io_threads: u8) -> u8 {
    cores().saturating_sub(usize::from(io_threads)).clamp(1, 64) as u8
}

/// I/O threads: one per two cores, at least one (docs/architecture.md, "Several I/O
/// threads": an exchange costs an I/O thread about twice what it costs a forwarding shard,
/// so half the cores read and write and the other half forward).
fn default_io_threads() -> u8 {
    io_threads_for(cores())
}

/// The default number of I/O threads on a machine with `cores` cores.
fn io_threads_for(cores: usize) -> u8 {
    (cores / 2).clamp(1, usize::from(kite_runtime::MAX_IO_THREADS)) as u8
}

/// Inline forwarding by default where the I/O thread, a forwarding thread and the local
/// applications they serve would outnumber the cores (docs/architecture.md).
pub(crate) fn default_inline() -> bool {
    cores() <= 2
}

#[cfg(test)]
mod tests;
