//! Kite's XDP program (`xdp/kite_xdp.c`) on one interface: loaded from the object embedded in
//! the binary, it hands NDN frames to the AF_XDP socket of the receive queue they arrived on
//! ([`XdpProgram::set_socket`]), passes every other frame to the kernel, and counts its
//! verdicts ([`XdpProgram::counts`]).
//!
//! The program is attached through a bpf_link, which lasts as long as its descriptor: dropping
//! the [`XdpProgram`], or the process ending however it ends (SIGKILL included), detaches it and
//! leaves the interface as it was. Kernels before 5.9 have no XDP links; there aya attaches
//! through netlink instead, and only a drop detaches. A Kite program attached by netlink and
//! left behind (by such a kernel, or by `ip link set dev IF xdp obj kite_xdp.o`) is replaced
//! at attach ([`XdpProgram::replaced`]); any other program on the interface is refused.

use std::error::Error;
use std::fmt;
use std::io;
use std::os::fd::{AsFd, AsRawFd};

use aya::maps::{Array, HashMap as BpfHashMap, MapData, PerCpuArray, XskMap};
use aya::programs::xdp::XdpLink;
use aya::programs::{ProgramError, Xdp};
use aya::Ebpf;
use netlink_packet_core::{
    NetlinkHeader, NetlinkMessage, NetlinkPayload, NLM_F_ACK, NLM_F_REQUEST,
};
use netlink_packet_route::link::{LinkAttribute, LinkMessage, LinkXdp, XdpAttached};
use netlink_packet_route::RouteNetlinkMessage;
use netlink_sys::{protocols::NETLINK_ROUTE, Socket, SocketAddr};

use super::filter::{UdpDst, Verdict};
use super::steer::{Steering, NDT_SLOTS};

/// The object `make -C xdp` builds, aligned for the ELF parser.
static OBJECT: &[u8] = aya::include_bytes_aligned!("../../../../xdp/kite_xdp.o");

/// The receive queues the socket map has room for (`MAX_QUEUES` in `xdp/kite_xdp.c`): NDN
/// frames of a queue past them always go to the kernel.
pub const MAX_QUEUES: u32 = 64;
/// The lanes (I/O threads) the socket map has room for on each queue (`MAX_LANES`): a
/// socket's place is `queue * MAX_LANES + lane`.
pub const MAX_LANES: u32 = 64;

/// The program's function.
const PROGRAM: &str = "kite_xdp";
/// The map of AF_XDP sockets, by receive queue and lane.
const SOCKETS: &str = "kite_xsks";
/// The per-CPU map of frames redirected to each lane.
const LANES: &str = "kite_lanes";
/// The one-entry map of how frames are steered (`struct steer`).
const STEER: &str = "kite_steer";
/// The lane of each slot of the Name Dispatch Table.
const NDT: &str = "kite_ndt";
/// `kite_counts`' index of the NDN frames steered to a lane other than home.
const COUNT_STEERED: u32 = 4;
/// Octets of `struct steer`.
const STEER_LEN: usize = 288;
/// The per-CPU map of verdict counts, by [`Verdict::index`].
const COUNTS: &str = "kite_counts";
/// The map of UDP destinations handed to Kite, by [`UdpDst::key`].
const UDP_DSTS: &str = "kite_udp_dsts";

/// The UDP destinations the program's map has room for (`MAX_UDP_DSTS` in
/// `xdp/kite_xdp.c`): datagrams to any beyond them go to the kernel's sockets.
pub const MAX_UDP_DSTS: usize = 256;

/// IFLA_XDP_FLAGS bits (linux/if_link.h): the mode a netlink attachment is in, and "only if
/// the program there is still the expected one".
const XDP_FLAGS_SKB_MODE: u32 = 1 << 1;
const XDP_FLAGS_DRV_MODE: u32 = 1 << 2;
const XDP_FLAGS_REPLACE: u32 = 1 << 4;

/// Where on the receive path the program runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum XdpMode {
    /// Native: the driver runs it before the kernel builds a socket buffer. The fast one,
    /// and the one zero-copy AF_XDP needs; not every driver has it.
    Driver,
    /// Generic (SKB): the kernel runs it after the driver, on a socket buffer. Slower, and
    /// AF_XDP copies, but every interface has it.
    Generic,
}

impl XdpMode {
    fn aya(self) -> aya::programs::XdpMode {
        match self {
            XdpMode::Driver => aya::programs::XdpMode::Driver,
            XdpMode::Generic => aya::programs::XdpMode::Skb,
        }
    }
}

impl fmt::Display for XdpMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            XdpMode::Driver => "driver",
            XdpMode::Generic => "generic",
        })
    }
}

/// A Kite program that [`XdpProgram::attach`] found attached by netlink (no process holds it
/// through a link) and detached before attaching its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StaleProgram {
    /// The kernel's id of the program (`ip -d link show` prints it).
    pub id: u32,
    /// The mode it ran in.
    pub mode: XdpMode,
}

/// How many frames the program has given each verdict since it was loaded, over all CPUs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct XdpCounts {
    /// NDN frames, redirected to a socket (or passed, when their queue has none).
    pub ndn: u64,
    /// Other frames, passed to the kernel.
    pub passed: u64,
    /// Frames shorter than an Ethernet header, passed to the kernel.
    pub runt: u64,
    /// UDP datagrams to Kite's listeners, redirected to a socket (or passed, when their queue
    /// has none).
    pub udp: u64,
    /// NDN frames steered to a lane other than home (counted in `ndn` too).
    pub steered: u64,
}

/// Why the program could not be loaded, attached or given a socket. Each message says what an
/// operator can do, and ends with what the kernel said.
#[derive(Debug, thiserror::Error)]
pub enum XdpError {
    /// The process lacks the privilege (EPERM).
    #[error(
        "XDP needs CAP_NET_ADMIN and CAP_BPF, or root (kernels before 5.11 also count the \
         program against RLIMIT_MEMLOCK): {0}"
    )]
    Permission(String),
    /// The kernel's verifier refused the program; the message holds its log.
    #[error("the kernel refused Kite's XDP program: {0}")]
    Refused(String),
    /// No interface has that index in the calling thread's network namespace.
    #[error("no interface with index {0} in this network namespace")]
    NoInterface(u32),
    /// The interface already has an XDP program (EBUSY, EEXIST).
    #[error(
        "interface {ifindex} already has an XDP program attached (`ip -d link show` names \
         it): detach it, or stop the process that attached it: {detail}"
    )]
    Busy {
        /// The interface.
        ifindex: u32,
        /// What the kernel said.
        detail: String,
    },
    /// The interface cannot run XDP in that mode (EOPNOTSUPP: its driver has no native XDP).
    #[error(
        "interface {ifindex} cannot run XDP in {mode} mode (generic mode runs on any): {detail}"
    )]
    Unsupported {
        /// The interface.
        ifindex: u32,
        /// The mode asked for.
        mode: XdpMode,
        /// What the kernel said.
        detail: String,
    },
    /// The socket could not go into the map: not an AF_XDP socket, or a queue or lane past
    /// the map's 64.
    #[error("cannot hand queue {queue}'s frames to that socket: {detail}")]
    Socket {
        /// The receive queue.
        queue: u32,
        /// What the kernel (or aya) said.
        detail: String,
    },
    /// Anything else.
    #[error("XDP: {0}")]
    Other(String),
}

/// Kite's XDP program, loaded and attached to one interface; dropping it detaches the program
/// and unloads it with its maps.
#[derive(Debug)]
pub struct XdpProgram {
    /// The attachment. Dropping an aya link detaches it (closing a bpf_link's descriptor, or
    /// clearing a netlink attachment); declared first, so that happens before the program
    /// unloads.
    _link: XdpLink,
    ebpf: Ebpf,
    ifindex: u32,
    mode: XdpMode,
    replaced: Option<StaleProgram>,
}

impl XdpProgram {
    /// Loads the program and attaches it to interface `ifindex` of the calling thread's
    /// network namespace, in `mode`; with `None`, in driver mode where the driver has it and
    /// generic mode otherwise ([`XdpProgram::mode`] says which). A Kite program left there by
    /// netlink is detached first ([`XdpProgram::replaced`]); another program, or a Kite
    /// program that a running process holds through its link, is [`XdpError::Busy`].
    pub fn attach(ifindex: u32, mode: Option<XdpMode>) -> Result<XdpProgram, XdpError> {
        let mut ebpf = load()?;
        let replaced = replace_stale(ifindex)?;
        let program = xdp(&mut ebpf)?;
        let (link, mode) = match mode {
            Some(mode) => (attach_in(program, ifindex, mode)?, mode),
            None => match attach_in(program, ifindex, XdpMode::Driver) {
                Ok(link) => (link, XdpMode::Driver),
                // Generic mode would fail the same way.
                Err(
                    e
                    @ (XdpError::Permission(_) | XdpError::NoInterface(_) | XdpError::Busy { .. }),
                ) => return Err(e),
                Err(_) => (
                    attach_in(program, ifindex, XdpMode::Generic)?,
                    XdpMode::Generic,
                ),
            },
        };
        Ok(XdpProgram {
            _link: link,
            ebpf,
            ifindex,
            mode,
            replaced,
        })
    }

    /// The stale Kite program detached from the interface before this one was attached.
    pub fn replaced(&self) -> Option<StaleProgram> {
        self.replaced
    }

    /// The interface the program is attached to.
    pub fn ifindex(&self) -> u32 {
        self.ifindex
    }

    /// The mode the program runs in.
    pub fn mode(&self) -> XdpMode {
        self.mode
    }

    /// Hands the frames of receive queue `queue` (below [`MAX_QUEUES`]) meant for `lane`
    /// (below [`MAX_LANES`]) to AF_XDP socket `socket`, replacing the one there. The map
    /// holds the socket until [`XdpProgram::unset_socket`] or until the socket is closed.
    pub fn set_socket(
        &mut self,
        queue: u32,
        lane: u8,
        socket: impl AsRawFd,
    ) -> Result<(), XdpError> {
        set_socket(&mut self.ebpf, queue, lane, socket)
    }

    /// Takes the socket of `lane` on queue `queue` out of the map: the frames steered to it
    /// go home again, and those of home to the kernel. A place without one (past the map's
    /// end included) is left as it is, so this cannot fail.
    pub fn unset_socket(&mut self, queue: u32, lane: u8) {
        if let (Some(key), Ok(mut map)) = (socket_key(queue, lane), sockets(&mut self.ebpf)) {
            // The kernel refuses only a place past the map's end, which holds no socket.
            let _ = map.unset(key);
        }
    }

    /// Makes `steering` how the program chooses each NDN frame's lane. The table of lanes is
    /// written before steering is turned on, so no frame is steered by a half-written one;
    /// while a new table replaces an old one, a frame may go by either, and the lane it
    /// reaches checks it is its to take.
    pub fn set_steering(&mut self, steering: &Steering) -> Result<(), XdpError> {
        set_steering(&mut self.ebpf, steering)
    }

    /// Frames the program redirected to each lane since it was loaded, over all CPUs (index:
    /// lane; [`MAX_LANES`] of them). One system call per lane: call it on a timer.
    pub fn lane_counts(&self) -> Result<Vec<u64>, XdpError> {
        lane_counts(&self.ebpf)
    }

    /// The program's verdicts so far.
    pub fn counts(&self) -> Result<XdpCounts, XdpError> {
        counts(&self.ebpf)
    }

    /// Makes `dsts` (at most [`MAX_UDP_DSTS`] of them; those past it stay with the kernel)
    /// the UDP destinations whose datagrams the program hands to the sockets: those missing
    /// are added, the others taken out. Between the two steps a datagram may reach either
    /// path, and both deliver it.
    pub fn set_udp_dsts(&mut self, dsts: &[UdpDst]) -> Result<(), XdpError> {
        set_udp_dsts(&mut self.ebpf, dsts)
    }
}

/// The socket map's place for `lane` on `queue`, if the map has one.
fn socket_key(queue: u32, lane: u8) -> Option<u32> {
    (queue < MAX_QUEUES && u32::from(lane) < MAX_LANES).then(|| queue * MAX_LANES + u32::from(lane))
}

/// [`XdpProgram::set_socket`] on the object's map.
fn set_socket(ebpf: &mut Ebpf, queue: u32, lane: u8, socket: impl AsRawFd) -> Result<(), XdpError> {
    let failed = |detail: String| XdpError::Socket { queue, detail };
    let key = socket_key(queue, lane).ok_or_else(|| {
        failed(format!(
            "queue {queue} or lane {lane} is past the map's {MAX_QUEUES}"
        ))
    })?;
    sockets(ebpf)?
        .set(key, socket, 0)
        .map_err(|e| failed(describe(&e)))
}

/// `struct steer` as the program reads it (native byte order, which is the BPF target's).
fn steer_value(steering: &Steering) -> [u8; STEER_LEN] {
    let mut v = [0; STEER_LEN];
    v[0..4].copy_from_slice(&u32::from(steering.home).to_ne_bytes());
    if let Some(d) = &steering.dispatch {
        let prefix_len = u32::try_from(d.prefix_len).unwrap_or(u32::MAX);
        let mask = d.lanes.len().clamp(1, NDT_SLOTS) as u32 - 1;
        v[4..8].copy_from_slice(&1u32.to_ne_bytes());
        v[8..12].copy_from_slice(&prefix_len.to_ne_bytes());
        v[12..16].copy_from_slice(&mask.to_ne_bytes());
        v[16..24].copy_from_slice(&d.key.0.to_ne_bytes());
        v[24..32].copy_from_slice(&d.key.1.to_ne_bytes());
        v[32..].copy_from_slice(&d.token_lanes);
    }
    v
}

/// [`XdpProgram::set_steering`] on the object's maps.
fn set_steering(ebpf: &mut Ebpf, steering: &Steering) -> Result<(), XdpError> {
    if let Some(d) = &steering.dispatch {
        if !d.lanes.len().is_power_of_two() || d.lanes.len() > NDT_SLOTS {
            return Err(XdpError::Other(format!(
                "a Name Dispatch Table of {} slots (a power of two up to {NDT_SLOTS} is needed)",
                d.lanes.len()
            )));
        }
        let mut ndt = array::<u32>(ebpf, NDT)?;
        for (slot, &lane) in d.lanes.iter().enumerate() {
            ndt.set(slot as u32, u32::from(lane), 0)
                .map_err(|e| XdpError::Other(format!("{NDT}: {}", describe(&e))))?;
        }
    }
    array::<[u8; STEER_LEN]>(ebpf, STEER)?
        .set(0, steer_value(steering), 0)
        .map_err(|e| XdpError::Other(format!("{STEER}: {}", describe(&e))))
}

/// The object's array map `name` of `T`s.
fn array<'a, T: aya::Pod>(
    ebpf: &'a mut Ebpf,
    name: &str,
) -> Result<Array<&'a mut MapData, T>, XdpError> {
    let map = ebpf
        .map_mut(name)
        .ok_or_else(|| XdpError::Other(format!("the embedded object has no map {name}")))?;
    Array::try_from(map).map_err(|e| XdpError::Other(format!("{name}: {}", describe(&e))))
}

/// [`XdpProgram::lane_counts`] on the object's map.
fn lane_counts(ebpf: &Ebpf) -> Result<Vec<u64>, XdpError> {
    let map = ebpf
        .map(LANES)
        .ok_or_else(|| XdpError::Other(format!("the embedded object has no map {LANES}")))?;
    let map = PerCpuArray::<_, u64>::try_from(map)
        .map_err(|e| XdpError::Other(format!("{LANES}: {}", describe(&e))))?;
    (0..MAX_LANES)
        .map(|lane| {
            map.get(&lane, 0)
                .map(|per_cpu| per_cpu.iter().sum())
                .map_err(|e| XdpError::Other(format!("reading {LANES}: {}", describe(&e))))
        })
        .collect()
}

/// [`XdpProgram::set_udp_dsts`] on the object's map.
fn set_udp_dsts(ebpf: &mut Ebpf, dsts: &[UdpDst]) -> Result<(), XdpError> {
    let mut map = udp_dsts(ebpf)?;
    let failed = |e: aya::maps::MapError| XdpError::Other(format!("{UDP_DSTS}: {}", describe(&e)));
    let want: Vec<[u8; 20]> = dsts.iter().take(MAX_UDP_DSTS).map(UdpDst::key).collect();
    let stale: Vec<[u8; 20]> = map
        .keys()
        .filter_map(Result::ok)
        .filter(|k| !want.contains(k))
        .collect();
    for k in &stale {
        map.remove(k).map_err(failed)?;
    }
    for k in &want {
        map.insert(k, 1, 0).map_err(failed)?;
    }
    Ok(())
}

/// The id of the XDP program attached to interface `ifindex` of the calling thread's network
/// namespace, as the kernel reports it to `ip link` (IFLA_XDP); `None` when there is none.
pub fn attached_program(ifindex: u32) -> io::Result<Option<u32>> {
    Ok(attachments(ifindex)?.first().map(|&(id, _)| id))
}

/// Each XDP program attached to interface `ifindex`, with its mode (`None`: offloaded to the
/// device). One mode at a time, unless the device also runs an offloaded one.
fn attachments(ifindex: u32) -> io::Result<Vec<(u32, Option<XdpMode>)>> {
    let mut link = LinkMessage::default();
    link.header.index = ifindex;
    let link = match route_request(RouteNetlinkMessage::GetLink(link), NLM_F_REQUEST)? {
        NetlinkPayload::InnerMessage(RouteNetlinkMessage::NewLink(link)) => link,
        NetlinkPayload::Error(e) => return Err(e.to_io()),
        other => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("unexpected reply to RTM_GETLINK: {other:?}"),
            ))
        }
    };
    let Some(xdp) = link.attributes.iter().find_map(|a| match a {
        LinkAttribute::Xdp(xdp) => Some(xdp),
        _ => None,
    }) else {
        return Ok(Vec::new());
    };
    // One mode: IFLA_XDP_ATTACHED says which, IFLA_XDP_PROG_ID names the program. Several
    // (driver or generic, and offloaded): each mode's id comes on its own.
    let attached = xdp.iter().find_map(|a| match a {
        LinkXdp::Attached(m) => Some(*m),
        _ => None,
    });
    let mut found = Vec::new();
    for a in xdp {
        let (id, mode) = match (a, attached) {
            (LinkXdp::ProgId(id), Some(XdpAttached::Driver)) => (*id, Some(XdpMode::Driver)),
            (LinkXdp::ProgId(id), Some(XdpAttached::SocketBuffer)) => (*id, Some(XdpMode::Generic)),
            (LinkXdp::ProgId(id), Some(XdpAttached::Hardware)) => (*id, None),
            (LinkXdp::DrvProgId(id), _) => (*id, Some(XdpMode::Driver)),
            (LinkXdp::SkbProgId(id), _) => (*id, Some(XdpMode::Generic)),
            (LinkXdp::HwProgId(id), _) => (*id, None),
            _ => continue,
        };
        if id != 0 && !found.iter().any(|&(f, _)| f == id) {
            found.push((id, mode));
        }
    }
    Ok(found)
}

/// Sends one rtnetlink request with `flags` and returns the kernel's one reply.
fn route_request(
    message: RouteNetlinkMessage,
    flags: u16,
) -> io::Result<NetlinkPayload<RouteNetlinkMessage>> {
    let mut socket = Socket::new(NETLINK_ROUTE)?;
    socket.bind_auto()?;
    socket.connect(&SocketAddr::new(0, 0))?;
    let mut header = NetlinkHeader::default();
    header.flags = flags;
    let mut request = NetlinkMessage::new(header, NetlinkPayload::from(message));
    request.finalize();
    let mut buf = vec![0; request.buffer_len()];
    request.serialize(&mut buf);
    socket.send(&buf, 0)?;

    // One link's message; well under this unless it lists many virtual functions, which a
    // plain request does not ask for.
    let mut reply = Vec::with_capacity(64 * 1024);
    socket.recv(&mut reply, 0)?;
    let reply = NetlinkMessage::<RouteNetlinkMessage>::deserialize(&reply)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
    Ok(reply.payload)
}

/// Detaches a Kite program that netlink left on interface `ifindex` (the one of a process
/// that is gone: nothing holds it); what it detached. A program of another name is left for
/// the attach to refuse; a Kite program held by a link (a running Kite) cannot be detached by
/// netlink, and is refused here.
fn replace_stale(ifindex: u32) -> Result<Option<StaleProgram>, XdpError> {
    let found = attachments(ifindex).map_err(|e| match e.raw_os_error() {
        Some(libc::ENODEV) => XdpError::NoInterface(ifindex),
        _ => XdpError::Other(format!("reading interface {ifindex}'s XDP programs: {e}")),
    })?;
    let mut replaced = None;
    for (id, mode) in found {
        let Some(mode) = mode else { continue };
        // Reading other programs' names needs the privilege loading does; without it (or
        // should the program go meanwhile) it is not known to be Kite's.
        let Some(info) = aya::programs::loaded_programs()
            .filter_map(Result::ok)
            .find(|p| p.id() == id)
        else {
            continue;
        };
        if info.name_as_str() != Some(PROGRAM) {
            continue;
        }
        let expected = info
            .fd()
            .map_err(|e| XdpError::Other(format!("program {id}: {}", describe(&e))))?;
        detach(ifindex, mode, expected.as_fd().as_raw_fd()).map_err(|e| {
            match e.raw_os_error() {
                // The kernel refuses to detach a link's program by netlink.
                Some(libc::EBUSY) => XdpError::Busy {
                    ifindex,
                    detail: format!(
                        "Kite's program {id} is held there by a running process (another kite?)"
                    ),
                },
                Some(libc::EPERM) => XdpError::Permission(e.to_string()),
                _ => XdpError::Other(format!(
                    "detaching the stale Kite program {id} from interface {ifindex}: {e}"
                )),
            }
        })?;
        replaced = Some(StaleProgram { id, mode });
    }
    Ok(replaced)
}

/// Detaches by netlink the program attached to interface `ifindex` in `mode`, provided it is
/// still the one `expected` refers to (XDP_FLAGS_REPLACE with IFLA_XDP_EXPECTED_FD), so a
/// program attached meanwhile is never taken off.
fn detach(ifindex: u32, mode: XdpMode, expected: i32) -> io::Result<()> {
    let mode_flag = match mode {
        XdpMode::Driver => XDP_FLAGS_DRV_MODE,
        XdpMode::Generic => XDP_FLAGS_SKB_MODE,
    };
    let mut link = LinkMessage::default();
    link.header.index = ifindex;
    link.attributes.push(LinkAttribute::Xdp(vec![
        LinkXdp::Fd(-1),
        LinkXdp::ExpectedFd(expected as u32),
        LinkXdp::Flags(mode_flag | XDP_FLAGS_REPLACE),
    ]));
    match route_request(
        RouteNetlinkMessage::SetLink(link),
        NLM_F_REQUEST | NLM_F_ACK,
    )? {
        NetlinkPayload::Error(e) if e.code.is_some() => Err(e.to_io()),
        NetlinkPayload::Error(_) => Ok(()),
        other => Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("unexpected reply to RTM_SETLINK: {other:?}"),
        )),
    }
}

/// Loads the embedded object: its maps created, its program verified, nothing attached.
fn load() -> Result<Ebpf, XdpError> {
    let mut ebpf = Ebpf::load(OBJECT).map_err(|e| match errno(&e) {
        Some(libc::EPERM) => XdpError::Permission(describe(&e)),
        _ => XdpError::Other(format!("loading the embedded object: {}", describe(&e))),
    })?;
    xdp(&mut ebpf)?.load().map_err(|e| match (&e, errno(&e)) {
        (_, Some(libc::EPERM)) => XdpError::Permission(describe(&e)),
        (ProgramError::LoadError { .. }, _) => XdpError::Refused(describe(&e)),
        _ => XdpError::Other(format!("loading {PROGRAM}: {}", describe(&e))),
    })?;
    Ok(ebpf)
}

/// The object's program.
fn xdp(ebpf: &mut Ebpf) -> Result<&mut Xdp, XdpError> {
    ebpf.program_mut(PROGRAM)
        .ok_or_else(|| XdpError::Other(format!("the embedded object has no program {PROGRAM}")))?
        .try_into()
        .map_err(|e: ProgramError| XdpError::Other(format!("{PROGRAM}: {}", describe(&e))))
}

/// Attaches `program` to interface `ifindex` in `mode`: the link, which detaches when dropped.
fn attach_in(program: &mut Xdp, ifindex: u32, mode: XdpMode) -> Result<XdpLink, XdpError> {
    let id = program
        .attach_to_if_index(ifindex, mode.aya())
        .map_err(|e| {
            let detail = describe(&e);
            match errno(&e) {
                Some(libc::EPERM) => XdpError::Permission(detail),
                Some(libc::EBUSY | libc::EEXIST) => XdpError::Busy { ifindex, detail },
                Some(libc::ENODEV) => XdpError::NoInterface(ifindex),
                Some(libc::EOPNOTSUPP) => XdpError::Unsupported {
                    ifindex,
                    mode,
                    detail,
                },
                _ => XdpError::Other(format!(
                    "attaching to interface {ifindex} in {mode} mode: {detail}"
                )),
            }
        })?;
    program
        .take_link(id)
        .map_err(|e| XdpError::Other(describe(&e)))
}

/// The object's socket map.
fn sockets(ebpf: &mut Ebpf) -> Result<XskMap<&mut MapData>, XdpError> {
    let map = ebpf
        .map_mut(SOCKETS)
        .ok_or_else(|| XdpError::Other(format!("the embedded object has no map {SOCKETS}")))?;
    XskMap::try_from(map).map_err(|e| XdpError::Other(format!("{SOCKETS}: {}", describe(&e))))
}

/// The object's map of UDP destinations.
fn udp_dsts(ebpf: &mut Ebpf) -> Result<BpfHashMap<&mut MapData, [u8; 20], u8>, XdpError> {
    let map = ebpf
        .map_mut(UDP_DSTS)
        .ok_or_else(|| XdpError::Other(format!("the embedded object has no map {UDP_DSTS}")))?;
    BpfHashMap::try_from(map).map_err(|e| XdpError::Other(format!("{UDP_DSTS}: {}", describe(&e))))
}

/// The object's counts, summed over CPUs.
fn counts(ebpf: &Ebpf) -> Result<XdpCounts, XdpError> {
    let map = ebpf
        .map(COUNTS)
        .ok_or_else(|| XdpError::Other(format!("the embedded object has no map {COUNTS}")))?;
    let map = PerCpuArray::<_, u64>::try_from(map)
        .map_err(|e| XdpError::Other(format!("{COUNTS}: {}", describe(&e))))?;
    let count = |index: u32| {
        map.get(&index, 0)
            .map(|per_cpu| per_cpu.iter().sum())
            .map_err(|e| XdpError::Other(format!("reading {COUNTS}: {}", describe(&e))))
    };
    Ok(XdpCounts {
        ndn: count(Verdict::Ndn.index())?,
        passed: count(Verdict::Passed.index())?,
        runt: count(Verdict::Runt.index())?,
        udp: count(Verdict::Udp.index())?,
        steered: count(COUNT_STEERED)?,
    })
}

/// The OS error code deepest in `e`'s chain of sources: the system call's own.
fn errno(e: &(dyn Error + 'static)) -> Option<i32> {
    let mut code = None;
    let mut next = Some(e);
    while let Some(e) = next {
        if let Some(c) = e
            .downcast_ref::<io::Error>()
            .and_then(io::Error::raw_os_error)
        {
            code = Some(c);
        }
        next = e.source();
    }
    code
}

/// `e` and its sources, each left out when an outer message already says it (aya's often do).
fn describe(e: &(dyn Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut next = e.source();
    while let Some(source) = next {
        let part = source.to_string();
        if !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        next = source.source();
    }
    text
}

#[cfg(test)]
#[allow(unsafe_code)]
mod tests {
    use super::*;
    use crate::xdp::filter;
    use kite_link::ETHER_HEADER_LEN as HEADER_LEN;
    use kite_testkit::netns;
    use proptest::prelude::*;
    use std::fs::File;
    use std::io::{BufRead, BufReader, Write};
    use std::os::fd::{AsFd, AsRawFd};
    use std::os::unix::process::ExitStatusExt;
    use std::process::{Child, Command, Stdio};
    use std::time::{Duration, Instant};

    /// bpf(2)'s command that runs a loaded program once on given input.
    const BPF_PROG_TEST_RUN: libc::c_long = 10;
    const XDP_PASS: u32 = 2;
    const XDP_REDIRECT: u32 = 4;

    /// `bpf_attr` as BPF_PROG_TEST_RUN reads it (`test` in the kernel's union).
    #[repr(C)]
    #[derive(Default)]
    struct TestRunAttr {
        prog_fd: u32,
        retval: u32,
        data_size_in: u32,
        data_size_out: u32,
        data_in: u64,
        data_out: u64,
        repeat: u32,
        duration: u32,
        ctx_size_in: u32,
        ctx_size_out: u32,
        ctx_in: u64,
        ctx_out: u64,
        flags: u32,
        cpu: u32,
        batch_size: u32,
        /// Written as zero: the kernel refuses an attribute with anything set past the fields
        /// it knows.
        pad: u32,
    }

    /// Runs `program` once on `frame` in the kernel, as if it arrived on queue 0: the XDP
    /// action it returned.
    fn test_run(program: &Xdp, frame: &[u8]) -> io::Result<u32> {
        let fd = program.fd().expect("a loaded program").as_fd().as_raw_fd();
        let mut attr = TestRunAttr {
            prog_fd: fd as u32,
            data_size_in: frame.len() as u32,
            data_in: frame.as_ptr() as u64,
            repeat: 1,
            ..TestRunAttr::default()
        };
        // SAFETY: `attr` has the layout of the kernel's test-run attribute and lives through
        // the call; the kernel reads `data_size_in` octets at `data_in`, which `frame` holds,
        // and with `data_out` and `ctx_out` null writes only into `attr` itself.
        let r = unsafe {
            libc::syscall(
                libc::SYS_bpf,
                BPF_PROG_TEST_RUN,
                &mut attr as *mut TestRunAttr,
                std::mem::size_of::<TestRunAttr>(),
            )
        };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(attr.retval)
    }

    /// The program loaded (not attached); `None` after a skip, when the process may not.
    fn load_or_skip() -> Option<Ebpf> {
        match load() {
            Ok(ebpf) => Some(ebpf),
            Err(e @ XdpError::Permission(_)) => {
                kite_testkit::skip(e);
                None
            }
            Err(e) => panic!("{e}"),
        }
    }

    fn program(ebpf: &Ebpf) -> &Xdp {
        ebpf.program(PROGRAM).unwrap().try_into().unwrap()
    }

    fn id(ebpf: &Ebpf) -> u32 {
        ebpf.program(PROGRAM).unwrap().info().unwrap().id()
    }

    fn count(c: &XdpCounts, v: filter::Verdict) -> u64 {
        match v {
            filter::Verdict::Ndn => c.ndn,
            filter::Verdict::Passed => c.passed,
            filter::Verdict::Runt => c.runt,
            filter::Verdict::Udp => c.udp,
        }
    }

    /// Every verdict, for checking that exactly one counter grew.
    const VERDICTS: [filter::Verdict; 4] = [
        filter::Verdict::Ndn,
        filter::Verdict::Passed,
        filter::Verdict::Runt,
        filter::Verdict::Udp,
    ];

    /// The UDP destinations the UDP twin test puts in the map.
    fn udp_dsts_for_test() -> Vec<filter::UdpDst> {
        [
            "10.0.0.1:6363",
            "10.0.0.1:7000",
            "[2001:db8::1]:6363",
            "[fe80::1]:6363",
        ]
        .iter()
        .map(|a| filter::UdpDst::of(a.parse().unwrap()))
        .collect()
    }

    /// UDP datagrams over IPv4 and IPv6 to destinations in the map and near them (another
    /// port or address), then bent: fragment fields, header length and options, version,
    /// protocol or next header, a byte anywhere in the headers, cut short.
    fn udp_frames() -> impl Strategy<Value = Vec<u8>> {
        use crate::xdp::udp::testing::{ipv4_with_options, ipv6};
        let v4 = (
            prop_oneof![Just([10u8, 0, 0, 1]), Just([10, 0, 0, 2]), any::<[u8; 4]>()],
            prop_oneof![Just(6363u16), Just(7000), Just(6364), any::<u16>()],
            0usize..=10,
        )
            .prop_map(|(a, port, words)| {
                let dst = std::net::SocketAddr::from((a, port));
                ipv4_with_options("10.0.0.9:5000".parse().unwrap(), dst, b"ndn", words * 4)
            });
        let v6 = (
            prop_oneof![
                Just("2001:db8::1".parse::<std::net::Ipv6Addr>().unwrap()),
                Just("fe80::1".parse().unwrap()),
                any::<[u8; 16]>().prop_map(std::net::Ipv6Addr::from),
            ],
            prop_oneof![Just(6363u16), Just(6364), any::<u16>()],
        )
            .prop_map(|(a, port)| {
                let dst = std::net::SocketAddr::from((a, port));
                ipv6("[2001:db8::9]:5000".parse().unwrap(), dst, b"ndn")
            });
        let bend = prop_oneof![
            Just(None),
            // Flags and fragment offset (IPv4), or payload length and next header (IPv6).
            (HEADER_LEN + 6..HEADER_LEN + 8, any::<u8>()).prop_map(Some),
            // Version and header length.
            (HEADER_LEN..HEADER_LEN + 1, any::<u8>()).prop_map(Some),
            // The protocol (IPv4).
            (HEADER_LEN + 9..HEADER_LEN + 10, any::<u8>()).prop_map(Some),
            // Anywhere in the headers.
            (0usize..HEADER_LEN + 48, any::<u8>()).prop_map(Some),
        ];
        (prop_oneof![v4, v6], bend, 0usize..4, 0usize..60).prop_map(|(mut f, bend, cut, by)| {
            if let Some((at, v)) = bend {
                if at < f.len() {
                    f[at] = v;
                }
            }
            if cut == 0 {
                f.truncate(f.len().saturating_sub(by).max(HEADER_LEN));
            }
            f
        })
    }

    /// Random frames (most of them passed), NDN frames, frames one octet off NDN's EtherType,
    /// and frames about a header long.
    fn frames() -> impl Strategy<Value = Vec<u8>> {
        let with_type = |ethertype: BoxedStrategy<(u8, u8)>| {
            (
                proptest::collection::vec(any::<u8>(), HEADER_LEN..200),
                ethertype,
            )
                .prop_map(|(mut f, (hi, lo))| {
                    f[12] = hi;
                    f[13] = lo;
                    f
                })
        };
        prop_oneof![
            proptest::collection::vec(any::<u8>(), 0..200),
            with_type(Just((0x86, 0x24)).boxed()),
            with_type(prop_oneof![(Just(0x86), any::<u8>()), (any::<u8>(), Just(0x24))].boxed()),
            proptest::collection::vec(any::<u8>(), 0..=20),
        ]
    }

    /// The objects are what `make -C xdp` builds from the sources beside them, with the clang
    /// they were built with (Debian's clang 14); other versions compile differently.
    #[test]
    fn the_shipped_object_is_built_from_its_source() {
        let version = Command::new("clang").arg("--version").output();
        let Ok(version) = version else {
            return kite_testkit::skip("no clang");
        };
        if !String::from_utf8_lossy(&version.stdout).contains("version 14.") {
            return kite_testkit::skip("the object is built with clang 14, and clang is not 14");
        }
        let out = tempfile::tempdir().unwrap();
        let made = Command::new("make")
            .arg("-C")
            .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/../../xdp"))
            .arg(format!("OUT={}", out.path().display()))
            .output()
            .expect("run make");
        assert!(
            made.status.success(),
            "{}",
            String::from_utf8_lossy(&made.stderr)
        );
        let built = std::fs::read(out.path().join("kite_xdp.o")).unwrap();
        assert!(built == OBJECT, "xdp/kite_xdp.o is stale: run make -C xdp");
        let fixture = std::fs::read(out.path().join("xdp_pass.o")).unwrap();
        let shipped = std::fs::read(object_path("xdp_pass.o")).unwrap();
        assert!(
            fixture == shipped,
            "xdp/xdp_pass.o is stale: run make -C xdp"
        );
    }

    /// The maps are as the constants here say.
    #[test]
    fn the_socket_map_has_a_place_for_each_queue() {
        let Some(mut ebpf) = load_or_skip() else {
            return;
        };
        assert_eq!(sockets(&mut ebpf).unwrap().len(), MAX_QUEUES * MAX_LANES);
        assert_eq!(
            array::<u32>(&mut ebpf, NDT).unwrap().len() as usize,
            NDT_SLOTS
        );
        assert_eq!(array::<[u8; STEER_LEN]>(&mut ebpf, STEER).unwrap().len(), 1);
        assert_eq!(counts(&ebpf).unwrap(), XdpCounts::default());
        assert_eq!(lane_counts(&ebpf).unwrap(), vec![0; MAX_LANES as usize]);
    }

    /// The kernel running the shipped program gives every frame the verdict its user-space
    /// twin gives: the counter that grows is the one `filter::verdict` names, and the frame
    /// goes to the kernel (no socket is in the map). The kernel does not run a program on a
    /// frame shorter than an Ethernet header (EINVAL), so runts are checked in the twin only
    /// (`filter`'s tests); here the refusal itself is checked, and that nothing is counted.
    #[test]
    fn the_kernel_gives_the_verdicts_of_the_twin() {
        let Some(ebpf) = load_or_skip() else {
            return;
        };
        match test_run(program(&ebpf), &[0; 60]) {
            Err(e) if e.raw_os_error() == Some(libc::EPERM) => {
                return kite_testkit::skip(format_args!("BPF_PROG_TEST_RUN: {e}"))
            }
            Err(e) => panic!("BPF_PROG_TEST_RUN: {e}"),
            Ok(action) => assert_eq!(action, XDP_PASS),
        }
        let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
            cases: 1000,
            failure_persistence: None,
            ..ProptestConfig::default()
        });
        runner
            .run(&frames(), |frame| {
                let before = counts(&ebpf).unwrap();
                let run = test_run(program(&ebpf), &frame);
                let after = counts(&ebpf).unwrap();
                let verdict = filter::verdict(&frame);
                if frame.len() < HEADER_LEN {
                    prop_assert_eq!(verdict, filter::Verdict::Runt);
                    prop_assert_eq!(run.map_err(|e| e.raw_os_error()), Err(Some(libc::EINVAL)));
                    prop_assert_eq!(after, before);
                    return Ok(());
                }
                prop_assert_eq!(run.map_err(|e| e.to_string()), Ok(XDP_PASS));
                for v in VERDICTS {
                    let grew = u64::from(v == verdict);
                    prop_assert_eq!(count(&after, v), count(&before, v) + grew, "{:?}", v);
                }
                Ok(())
            })
            .unwrap();
    }

    /// With UDP destinations in its map, the kernel still gives every frame the twin's
    /// verdict: IPv4 and IPv6 datagrams to them are taken (and passed on here, with no socket
    /// in the map), fragments, options, other ports and addresses, extension headers and
    /// short headers as the twin says; the map is replaced and emptied as asked.
    #[test]
    fn the_kernel_gives_the_udp_verdicts_of_the_twin() {
        let Some(ebpf) = load_or_skip() else {
            return;
        };
        let mut p = ebpf;
        if test_run(program(&p), &[0; 60]).is_err() {
            return kite_testkit::skip("BPF_PROG_TEST_RUN refused");
        }
        let dsts = udp_dsts_for_test();
        set_dsts(&mut p, &dsts);
        let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
            cases: 2000,
            failure_persistence: None,
            ..ProptestConfig::default()
        });
        let udp = std::cell::Cell::new(0);
        runner
            .run(&udp_frames(), |frame| {
                let before = counts(&p).unwrap();
                let run = test_run(program(&p), &frame);
                let after = counts(&p).unwrap();
                let verdict = filter::verdict_with(&frame, &dsts);
                prop_assert_eq!(run.map_err(|e| e.to_string()), Ok(XDP_PASS));
                for v in VERDICTS {
                    let grew = u64::from(v == verdict);
                    prop_assert_eq!(count(&after, v), count(&before, v) + grew, "{:?}", v);
                }
                udp.set(udp.get() + u64::from(verdict == filter::Verdict::Udp));
                Ok(())
            })
            .unwrap();
        let udp = udp.get();
        assert!(udp > 100, "only {udp} frames were Kite's datagrams");

        // Replaced by one destination, the others pass; emptied, all pass.
        use crate::xdp::udp::testing::ipv4;
        let peer = "10.0.0.9:5000".parse().unwrap();
        let to_6363 = ipv4(peer, "10.0.0.1:6363".parse().unwrap(), b"x");
        let to_7000 = ipv4(peer, "10.0.0.1:7000".parse().unwrap(), b"x");
        set_dsts(&mut p, &dsts[1..2]);
        let before = counts(&p).unwrap();
        test_run(program(&p), &to_6363).unwrap();
        test_run(program(&p), &to_7000).unwrap();
        let after = counts(&p).unwrap();
        assert_eq!(
            (after.udp - before.udp, after.passed - before.passed),
            (1, 1)
        );
        set_dsts(&mut p, &[]);
        test_run(program(&p), &to_7000).unwrap();
        assert_eq!(counts(&p).unwrap().udp, after.udp);
    }

    fn set_dsts(ebpf: &mut Ebpf, dsts: &[filter::UdpDst]) {
        set_udp_dsts(ebpf, dsts).unwrap();
    }

    /// With a socket at queue 0, the program redirects NDN frames of that queue (all that a
    /// test run sees) and still passes the rest; taken out, NDN frames go to the kernel again.
    /// Only AF_XDP sockets go into the map, and only below [`MAX_QUEUES`].
    #[test]
    fn ndn_frames_go_to_the_socket_of_their_queue() {
        let Some(mut ebpf) = load_or_skip() else {
            return;
        };
        let mut ndn = vec![0; 60];
        ndn[12..HEADER_LEN].copy_from_slice(&[0x86, 0x24]);
        let ip = vec![0x08; 60];

        // An AF_XDP socket goes into the map before it is bound.
        let xsk = socket2::Socket::new(
            socket2::Domain::from(libc::AF_XDP),
            socket2::Type::RAW,
            None,
        )
        .expect("an AF_XDP socket");
        sockets(&mut ebpf).unwrap().set(0, xsk.as_fd(), 0).unwrap();
        assert_eq!(test_run(program(&ebpf), &ndn).unwrap(), XDP_REDIRECT);
        assert_eq!(test_run(program(&ebpf), &ip).unwrap(), XDP_PASS);
        sockets(&mut ebpf).unwrap().unset(0).unwrap();
        assert_eq!(test_run(program(&ebpf), &ndn).unwrap(), XDP_PASS);
        assert_eq!(
            counts(&ebpf).unwrap(),
            XdpCounts {
                ndn: 2,
                passed: 1,
                ..XdpCounts::default()
            }
        );

        let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let e = sockets(&mut ebpf)
            .unwrap()
            .set(1, udp.as_fd(), 0)
            .unwrap_err();
        assert_eq!(errno(&e), Some(libc::EOPNOTSUPP), "{e}");
        assert!(set_socket(&mut ebpf, MAX_QUEUES, 0, xsk.as_fd()).is_err());
        assert!(set_socket(&mut ebpf, 0, MAX_LANES as u8, xsk.as_fd()).is_err());
        assert!(sockets(&mut ebpf)
            .unwrap()
            .set(MAX_QUEUES * MAX_LANES, xsk.as_fd(), 0)
            .is_err());
    }

    /// The SipHash-1-3 of `octets` under `key`: the forwarder's name hash of a name prefix.
    fn sip13(key: (u64, u64), octets: &[u8]) -> u64 {
        use std::hash::Hasher;
        let mut h = siphasher::sip::SipHasher13::new_with_keys(key.0, key.1);
        h.write(octets);
        h.finish()
    }

    /// How frames are steered: a random key, prefix length, home and 64-slot table, whose
    /// lanes and shards' lanes include lanes without a socket (4, 5) and one past the map.
    fn steerings() -> impl Strategy<Value = Steering> {
        let lane = || prop_oneof![6 => 0u8..6, 1 => Just(200u8)];
        (
            any::<(u64, u64)>(),
            prop_oneof![Just(1usize), Just(2), Just(3), Just(usize::MAX)],
            0u8..4,
            proptest::collection::vec(lane(), 64),
            proptest::collection::vec(lane(), 256),
        )
            .prop_map(|(key, prefix_len, home, lanes, tokens)| Steering {
                home,
                dispatch: Some(crate::xdp::steer::Dispatch {
                    key,
                    prefix_len,
                    lanes,
                    token_lanes: tokens.try_into().unwrap(),
                }),
            })
    }

    /// With steering on, the kernel hands every NDN frame to the lane its twin names (home
    /// when that lane has no socket on the queue), counts it in that lane and, when that is
    /// not home, as steered; with steering off, every NDN frame goes home. Interests go by
    /// name, Data and Nacks by token, the rest home, in numbers the test checks.
    #[test]
    fn the_kernel_steers_each_frame_to_the_lane_of_the_twin() {
        use crate::xdp::steer::{steer_by, testing, SteerBy};
        let Some(mut ebpf) = load_or_skip() else {
            return;
        };
        if test_run(program(&ebpf), &[0; 60]).is_err() {
            return kite_testkit::skip("BPF_PROG_TEST_RUN refused");
        }
        // Lanes 0 to 3 of queue 0 have a socket: unbound ones, which the map takes and a test
        // run's redirect needs no more of.
        const WITH_SOCKET: u8 = 4;
        let _xsks: Vec<socket2::Socket> = (0..WITH_SOCKET)
            .map(|lane| {
                let xsk = socket2::Socket::new(
                    socket2::Domain::from(libc::AF_XDP),
                    socket2::Type::RAW,
                    None,
                )
                .expect("an AF_XDP socket");
                set_socket(&mut ebpf, 0, lane, xsk.as_fd()).unwrap();
                xsk
            })
            .collect();
        let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
            cases: 300,
            failure_persistence: None,
            ..ProptestConfig::default()
        });
        let by = std::cell::Cell::new([0u32; 3]);
        let ebpf = std::cell::RefCell::new(ebpf);
        let strategy = (
            steerings(),
            proptest::collection::vec(testing::packet(), 1..20),
        );
        runner
            .run(&strategy, |(steering, packets)| {
                let mut ebpf = ebpf.borrow_mut();
                set_steering(&mut ebpf, &steering).unwrap();
                let key = steering.dispatch.as_ref().unwrap().key;
                let prefix_len = steering.dispatch.as_ref().unwrap().prefix_len;
                for payload in packets {
                    let mut frame = vec![0; HEADER_LEN];
                    frame[12..HEADER_LEN].copy_from_slice(&[0x86, 0x24]);
                    frame.extend_from_slice(&payload);
                    let mut twin = steering.lane(&payload, |o| sip13(key, o));
                    if twin >= WITH_SOCKET {
                        twin = steering.home;
                    }
                    let mut n = by.get();
                    n[match steer_by(&payload, prefix_len) {
                        SteerBy::Home => 0,
                        SteerBy::Name(_) => 1,
                        SteerBy::Token(_) => 2,
                    }] += 1;
                    by.set(n);
                    let (lanes, counted) = (lane_counts(&ebpf).unwrap(), counts(&ebpf).unwrap());
                    let run = test_run(program(&ebpf), &frame);
                    prop_assert_eq!(run.map_err(|e| e.to_string()), Ok(XDP_REDIRECT));
                    let grew: Vec<u64> = lane_counts(&ebpf)
                        .unwrap()
                        .iter()
                        .zip(&lanes)
                        .map(|(a, b)| a - b)
                        .collect();
                    let mut want = vec![0; MAX_LANES as usize];
                    want[usize::from(twin)] = 1;
                    prop_assert_eq!(grew, want, "{:02x?}", payload);
                    let steered = counts(&ebpf).unwrap().steered - counted.steered;
                    prop_assert_eq!(steered, u64::from(twin != steering.home));
                }
                // Off, every NDN frame goes home.
                let off = Steering {
                    home: steering.home,
                    dispatch: None,
                };
                set_steering(&mut ebpf, &off).unwrap();
                let interest = testing::tlv(0x05, &testing::tlv(0x07, &testing::tlv(8, b"a")));
                let frame = [&[0; 12][..], &[0x86, 0x24], &interest].concat();
                let home = usize::from(steering.home);
                let before = lane_counts(&ebpf).unwrap()[home];
                prop_assert_eq!(test_run(program(&ebpf), &frame).ok(), Some(XDP_REDIRECT));
                prop_assert_eq!(lane_counts(&ebpf).unwrap()[home], before + 1);
                Ok(())
            })
            .unwrap();
        let [home, name, token] = by.get();
        assert!(
            home > 300 && name > 300 && token > 150,
            "home {home}, by name {name}, by token {token}"
        );
    }

    /// A network namespace of the test's own with a veth pair (k0, k1) in it, deleted when
    /// dropped, the test failing or not.
    struct Netns {
        name: String,
    }

    impl Netns {
        /// `None` after a skip, when namespaces cannot be made here.
        fn new(test: &str) -> Option<Netns> {
            let name = format!("kite-xdp-{test}-{}", std::process::id());
            if !netns::add_or_skip(&name) {
                return None;
            }
            let ns = Netns { name };
            ns.ip(&["link", "add", "k0", "type", "veth", "peer", "name", "k1"]);
            Some(ns)
        }

        fn ip(&self, args: &[&str]) -> String {
            let mut all = vec!["-n", self.name.as_str()];
            all.extend_from_slice(args);
            let out = netns::ip(&all);
            assert!(
                out.status.success(),
                "ip {all:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            String::from_utf8(out.stdout).unwrap()
        }

        /// Interface `dev`'s index in the namespace.
        fn ifindex(&self, dev: &str) -> u32 {
            let line = self.ip(&["-o", "link", "show", "dev", dev]);
            let (index, _) = line.split_once(':').unwrap();
            index.parse().unwrap()
        }

        /// Runs `f` on a thread in the namespace.
        fn run<T: Send>(&self, f: impl FnOnce() -> T + Send) -> T {
            std::thread::scope(|s| {
                s.spawn(|| {
                    let ns = File::open(format!("/run/netns/{}", self.name)).unwrap();
                    // SAFETY: setns reads a descriptor `ns` keeps open through the call, and
                    // moves only the calling thread, which ends with `f`.
                    let r = unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) };
                    assert_eq!(r, 0, "setns: {}", io::Error::last_os_error());
                    f()
                })
                .join()
                .unwrap_or_else(|e| std::panic::resume_unwind(e))
            })
        }
    }

    impl Drop for Netns {
        fn drop(&mut self) {
            let _ = netns::ip(&["netns", "del", &self.name]);
        }
    }

    /// Attached in a namespace, the program shows on the interface, to netlink and to `ip`;
    /// a second one is refused; dropped, it leaves nothing. Veth has native XDP and loopback
    /// does not: the default takes driver mode on one and generic on the other.
    #[test]
    fn a_dropped_program_leaves_nothing_attached() {
        let Some(ns) = Netns::new("drop") else {
            return;
        };
        let (k0, lo) = (ns.ifindex("k0"), ns.ifindex("lo"));
        let attached = ns.run(|| {
            assert_eq!(attached_program(k0).unwrap(), None);
            let p = match XdpProgram::attach(k0, None) {
                Ok(p) => p,
                Err(e @ XdpError::Permission(_)) => return Err(e),
                Err(e) => panic!("{e}"),
            };
            assert_eq!(p.ifindex(), k0);
            assert_eq!(attached_program(k0).unwrap(), Some(id(&p.ebpf)));
            let again = XdpProgram::attach(k0, None).unwrap_err();
            assert!(matches!(again, XdpError::Busy { .. }), "{again}");
            Ok(p)
        });
        let p = match attached {
            Ok(p) => p,
            Err(e) => return kite_testkit::skip(e),
        };
        assert_eq!(p.mode(), XdpMode::Driver);
        let shown = ns.ip(&["-d", "link", "show", "dev", "k0"]);
        assert!(
            shown.contains(&format!("prog/xdp id {} ", id(&p.ebpf))),
            "{shown}"
        );
        ns.run(|| drop(p));
        assert_eq!(ns.run(|| attached_program(k0).unwrap()), None);
        assert!(!ns
            .ip(&["-d", "link", "show", "dev", "k0"])
            .contains("prog/xdp"));

        ns.run(|| {
            let e = XdpProgram::attach(lo, Some(XdpMode::Driver)).unwrap_err();
            assert!(matches!(e, XdpError::Unsupported { .. }), "{e}");
            let p = XdpProgram::attach(lo, None).unwrap();
            assert_eq!(p.mode(), XdpMode::Generic);
            assert_eq!(attached_program(lo).unwrap(), Some(id(&p.ebpf)));
            drop(p);
            assert_eq!(attached_program(lo).unwrap(), None);

            let e = XdpProgram::attach(0x7fff_0000, None).unwrap_err();
            assert!(matches!(e, XdpError::NoInterface(_)), "{e}");
        });
    }

    /// The objects `make -C xdp` builds, by file name.
    fn object_path(name: &str) -> String {
        format!("{}/../../xdp/{name}", env!("CARGO_MANIFEST_DIR"))
    }

    /// A Kite program attached by netlink (`ip link set … xdpgeneric obj kite_xdp.o`, as an
    /// older Kite on a kernel without XDP links would leave it) is detached and replaced, in
    /// the default mode; another program attached the same way is refused, and stays.
    #[test]
    fn a_stale_kite_program_is_replaced_and_a_foreign_one_refused() {
        let Some(ns) = Netns::new("stale") else {
            return;
        };
        let k0 = ns.ifindex("k0");
        // Attaches `object` to k0 by netlink, as `ip` does; the program's id.
        let attach_by_ip = |object: &str| {
            let path = object_path(object);
            ns.ip(&[
                "link",
                "set",
                "dev",
                "k0",
                "xdpgeneric",
                "obj",
                &path,
                "sec",
                "xdp",
            ]);
            ns.run(|| attached_program(k0).unwrap())
                .expect("ip attached it")
        };
        let stale = attach_by_ip("kite_xdp.o");
        let p = match ns.run(|| XdpProgram::attach(k0, None)) {
            Ok(p) => p,
            Err(e @ XdpError::Permission(_)) => return kite_testkit::skip(e),
            Err(e) => panic!("{e}"),
        };
        assert_eq!(
            p.replaced(),
            Some(StaleProgram {
                id: stale,
                mode: XdpMode::Generic
            })
        );
        assert_eq!(p.mode(), XdpMode::Driver);
        assert_eq!(ns.run(|| attached_program(k0).unwrap()), Some(id(&p.ebpf)));
        ns.run(|| drop(p));
        assert_eq!(ns.run(|| attached_program(k0).unwrap()), None);

        let foreign = attach_by_ip("xdp_pass.o");
        let e = ns.run(|| XdpProgram::attach(k0, None)).unwrap_err();
        assert!(matches!(e, XdpError::Busy { .. }), "{e}");
        assert_eq!(ns.run(|| attached_program(k0).unwrap()), Some(foreign));
    }

    /// The variable that makes [`attached_until_killed`] attach, to the index it holds.
    const CHILD_VAR: &str = "KITE_XDP_TEST_ATTACH";

    /// What [`attached_until_killed`] says before `attached ID` or `refused WHY`.
    const CHILD_SAYS: &str = "xdp-child: ";

    /// Kills the process when dropped, should the test fail before it does.
    struct Killed(Child);

    impl Drop for Killed {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }

    /// A process killed with SIGKILL, which runs no destructor, leaves no program on the
    /// interface: the kernel closes its link's descriptor, and that detaches it.
    #[test]
    fn a_killed_process_leaves_nothing_attached() {
        let Some(ns) = Netns::new("kill") else {
            return;
        };
        let k0 = ns.ifindex("k0");
        let child = Command::new("ip")
            .args(["netns", "exec", &ns.name])
            .arg(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "xdp::program::tests::attached_until_killed",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_VAR, k0.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .expect("run the test binary in the namespace");
        let mut child = Killed(child);
        // The harness prints the test's name first, on the same line.
        let said = BufReader::new(child.0.stdout.take().unwrap())
            .lines()
            .map_while(Result::ok)
            .find_map(|l| {
                let (_, said) = l.split_once(CHILD_SAYS)?;
                said.split_once(' ')
                    .map(|(what, rest)| (what == "attached", rest.to_owned()))
            });
        let id = match said {
            Some((true, id)) => id.parse::<u32>().unwrap(),
            Some((false, why)) => return kite_testkit::skip(why),
            None => panic!("the child ended without attaching"),
        };
        assert_eq!(ns.run(|| attached_program(k0).unwrap()), Some(id));

        child.0.kill().unwrap();
        let status = child.0.wait().unwrap();
        assert_eq!(status.signal(), Some(libc::SIGKILL));
        let until = Instant::now() + Duration::from_secs(5);
        while ns.run(|| attached_program(k0).unwrap()).is_some() {
            assert!(Instant::now() < until, "program {id} outlived its process");
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(!ns
            .ip(&["-d", "link", "show", "dev", "k0"])
            .contains("prog/xdp"));
    }

    /// The process [`a_killed_process_leaves_nothing_attached`] kills: run in the namespace
    /// with [`CHILD_VAR`] set, it attaches, says the program's id, and waits (a minute at
    /// most). Without the variable it does nothing.
    #[test]
    #[ignore = "run by a_killed_process_leaves_nothing_attached"]
    fn attached_until_killed() {
        let Some(ifindex) = std::env::var(CHILD_VAR).ok().and_then(|v| v.parse().ok()) else {
            return;
        };
        let mut out = io::stdout();
        match XdpProgram::attach(ifindex, None) {
            Ok(p) => {
                writeln!(out, "{CHILD_SAYS}attached {}", id(&p.ebpf)).unwrap();
                out.flush().unwrap();
                std::thread::sleep(Duration::from_secs(60));
                drop(p);
            }
            Err(e @ XdpError::Permission(_)) => writeln!(out, "{CHILD_SAYS}refused {e}").unwrap(),
            Err(e) => panic!("{e}"),
        }
    }
}
