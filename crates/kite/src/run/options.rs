//! From the configuration file and the flags to what the threads start with: flags override
//! the file, then the machine fills what is left open (thread count, socket path).

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Result;
use kite_runtime::RuntimeConfig;

use super::RunArgs;
use crate::config::{Config, LogFilter};

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
    if !args.ether.is_empty() {
        faces.ether.interfaces = args.ether.clone();
    }
    faces.local_only |= args.local_only;
    faces.max_packet_size = args.max_packet_size.unwrap_or(faces.max_packet_size);
    faces.unix.shm = args.shm.unwrap_or(faces.unix.shm);
    faces.unix.shm_ring_size = args.shm_ring_size.unwrap_or(faces.unix.shm_ring_size);
    if let Some(n) = args.udp_on_demand_limit {
        faces.udp.on_demand_limit = n;
    }
    if let Some(n) = args.ether_on_demand_limit {
        faces.ether.on_demand_limit = n;
    }
    let fwd = &mut config.forwarder;
    fwd.threads = args.threads.or(fwd.threads);
    fwd.inline = args.inline.or(fwd.inline);
    fwd.dispatch_prefix = args.dispatch_prefix.unwrap_or(fwd.dispatch_prefix);
    fwd.max_interest_lifetime = args
        .max_interest_lifetime
        .unwrap_or(fwd.max_interest_lifetime);
    if let Some(c) = args.cs_capacity {
        config.tables.cs.capacity = c;
    }
    if let Some(b) = args.cs_capacity_bytes {
        config.tables.cs.capacity_bytes = b;
    }
    if let Some(b) = args.reassembly_bytes {
        config.face_system.reassembly_bytes = b;
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
    config.forwarder.threads.get_or_insert_with(default_threads);
    config.forwarder.inline.get_or_insert_with(default_inline);
    let unix = &mut config.face_system.unix;
    unix.path = Some(socket_path(unix.path.take()));
    config
        .log
        .filter
        .get_or_insert_with(|| LogFilter("info".into()));
}

/// What the threads start with, from a resolved configuration.
pub(super) fn runtime_config(c: &Config) -> RuntimeConfig {
    let threads = c.forwarder.threads.unwrap_or(1);
    let fs = &c.face_system;
    let mut r = RuntimeConfig {
        forwarding_threads: threads,
        inline_forwarding: c.forwarder.inline.unwrap_or(false),
        dispatch_prefix_len: match c.forwarder.dispatch_prefix {
            0 => usize::MAX,
            k => k,
        },
        unix_socket: fs.unix.path.clone(),
        ws: fs.websocket.listen.clone(),
        ether: fs.ether.interfaces.clone(),
        ..RuntimeConfig::default()
    };
    if !fs.local_only {
        r.udp = fs.udp.listen.clone();
        r.tcp = fs.tcp.listen.clone();
    }
    r.face.udp_mtu = fs.udp.mtu;
    r.face.max_packet_size = fs.max_packet_size;
    r.face.shm_ring_size = fs.unix.shm.then_some(fs.unix.shm_ring_size);
    r.face.idle_timeout = Duration::from_secs(fs.udp.idle_timeout);
    r.face.reassembly.max_bytes = fs.reassembly_bytes;
    r.face.udp_on_demand_limit = fs.udp.on_demand_limit;
    r.face.ether_on_demand_limit = fs.ether.on_demand_limit;
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
fn socket_path(requested: Option<PathBuf>) -> PathBuf {
    if let Some(p) = requested {
        return p;
    }
    let default = PathBuf::from(DEFAULT_SOCKET);
    let dir = default.parent().unwrap_or(Path::new("/"));
    if std::fs::create_dir_all(dir).is_ok() && is_writable(dir) {
        return default;
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

fn default_threads() -> u8 {
    cores().saturating_sub(1).clamp(1, 64) as u8
}

/// Inline forwarding by default where the I/O thread, a forwarding thread and the local
/// applications they serve would outnumber the cores (docs/architecture.md).
pub(crate) fn default_inline() -> bool {
    cores() <= 2
}

#[cfg(test)]
mod tests;
