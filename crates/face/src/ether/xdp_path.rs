//! An Ethernet channel's AF_XDP path: Kite's XDP program on the interface and one AF_XDP
//! socket per receive queue, all owned by the channel's I/O thread. The program hands NDN
//! frames to the socket of the queue they arrived on and passes everything else to the
//! kernel; the channel still holds its AF_PACKET socket, for NDN's multicast membership and
//! for any NDN frame the program passes (a queue without a socket). Faces send through the
//! first queue's socket.
//!
//! A channel that cannot have this path (no privilege, no AF_XDP, an MTU larger than a UMEM
//! frame, another XDP program on the interface) keeps AF_PACKET alone, and says why
//! ([`IoPath::Packet`]).

use std::fmt;
use std::io;
use std::sync::{Arc, Mutex};

use crate::xdp::program::{StaleProgram, XdpCounts, XdpMode, XdpProgram, MAX_LANES};
use crate::xdp::socket::{self, CopyMode, XskConfig, XskLane, XskRx, XskTx, MAX_FRAME};
use crate::xdp::steer::{Dispatch, Steering};

/// How an Ethernet channel reads and writes its interface.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IoPath {
    /// An AF_PACKET socket; with why AF_XDP is not used when it was asked for.
    Packet {
        /// Why AF_XDP was asked for and not had.
        fallback: Option<String>,
    },
    /// Kite's XDP program and AF_XDP sockets.
    Xdp {
        /// How the program is attached.
        mode: XdpMode,
        /// How the sockets move frames.
        copy: CopyMode,
        /// Receive queues with a socket.
        queues: u32,
        /// I/O threads the program steers frames to (1: the channel's own alone).
        lanes: u32,
    },
}

impl fmt::Display for IoPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IoPath::Packet { fallback: None } => f.write_str("af_packet"),
            IoPath::Packet {
                fallback: Some(why),
            } => write!(f, "af_packet (AF_XDP refused: {why})"),
            IoPath::Xdp {
                mode,
                copy,
                queues,
                lanes,
            } => {
                let mode = match mode {
                    XdpMode::Driver => "driver",
                    XdpMode::Generic => "generic",
                };
                let copy = match copy {
                    CopyMode::ZeroCopy => "zero-copy",
                    CopyMode::Copy => "copy",
                };
                write!(f, "af_xdp ({mode} mode, {copy}, {queues} queues")?;
                match lanes {
                    1 => f.write_str(")"),
                    n => write!(f, ", steered to {n} I/O threads)"),
                }
            }
        }
    }
}

/// The program and the sockets. Field order is drop order: the sockets leave the program's
/// map before the program is detached.
pub(crate) struct XdpPath {
    pub rx: Vec<XskRx>,
    pub tx: Arc<Mutex<XskTx>>,
    program: XdpProgram,
    copy: CopyMode,
    /// I/O threads the program steers to (1 until [`XdpPath::steer`]).
    lanes: u32,
    /// Each socket's kernel drops (see [`XdpPath::take_drops`]) as last read.
    drops_seen: Vec<u64>,
}

impl fmt::Debug for XdpPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("XdpPath")
            .field("queues", &self.rx.len())
            .field("copy", &self.copy)
            .finish()
    }
}

/// The most receive queues with a socket: the size of the program's socket map.
const MAX_QUEUES: u32 = 64;

/// The receive queues of interface `iface` as sysfs lists them (1 when it cannot tell).
fn rx_queues(iface: &str) -> u32 {
    let Ok(dir) = std::fs::read_dir(format!("/sys/class/net/{iface}/queues")) else {
        return 1;
    };
    let n = dir
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with("rx-"))
        .count();
    u32::try_from(n).unwrap_or(1).clamp(1, MAX_QUEUES)
}

impl XdpPath {
    /// Attaches the program to `iface` (index `ifindex`, MTU `mtu`) and opens a socket on each
    /// of its receive queues, each with `umem_octets` of UMEM; why not, as an operator reads it.
    pub fn open(iface: &str, ifindex: u32, mtu: usize, umem_octets: usize) -> Result<Self, String> {
        if super::frame::HEADER_LEN + mtu > MAX_FRAME {
            return Err(format!(
                "the MTU {mtu} is larger than an AF_XDP frame holds ({})",
                MAX_FRAME - super::frame::HEADER_LEN
            ));
        }
        let mut program = XdpProgram::attach(ifindex, None).map_err(|e| e.to_string())?;
        let config = XskConfig {
            umem_octets,
            longest_frame: super::frame::HEADER_LEN + mtu,
        };
        let mut rx = Vec::new();
        let mut tx = None;
        let mut copy = CopyMode::ZeroCopy;
        for queue in 0..rx_queues(iface) {
            let (r, t, c) = socket::open(ifindex, queue, config)
                .map_err(|e| format!("cannot open an AF_XDP socket on queue {queue}: {e}"))?;
            program
                .set_socket(queue, 0, r.fd())
                .map_err(|e| e.to_string())?;
            if c == CopyMode::Copy {
                copy = c;
            }
            rx.push(r);
            tx.get_or_insert(t);
        }
        let tx = tx.ok_or("the interface has no receive queue")?;
        Ok(XdpPath {
            drops_seen: vec![0; rx.len()],
            rx,
            tx: Arc::new(Mutex::new(tx)),
            program,
            copy,
            lanes: 1,
        })
    }

    /// The stale Kite program the attach replaced, if it found one.
    pub fn replaced(&self) -> Option<StaleProgram> {
        self.program.replaced()
    }

    /// Frames the kernel could not hand to the sockets since the last call: the program
    /// redirected them, and the socket dropped them (XDP_STATISTICS rx_dropped: no free UMEM
    /// frame in the fill ring, or a frame longer than a UMEM frame; rx_ring_full: no room in
    /// the RX ring). Not rx_fill_ring_empty_descs, which in copy mode counts the frames that
    /// rx_dropped counts too. One system call per socket: call it on a timer.
    pub fn take_drops(&mut self) -> u64 {
        let mut new = 0;
        for (rx, seen) in self.rx.iter().zip(&mut self.drops_seen) {
            if let Ok(st) = rx.statistics() {
                let now = st.rx_dropped + st.rx_ring_full;
                new += now.saturating_sub(*seen);
                *seen = now;
            }
        }
        new
    }

    /// What the channel reports.
    pub fn io_path(&self) -> IoPath {
        IoPath::Xdp {
            mode: self.program.mode(),
            copy: self.copy,
            queues: self.rx.len() as u32,
            lanes: self.lanes,
        }
    }

    /// Opens a lane socket on every queue for each of lanes 1..`lanes`, places them in the
    /// program's socket map and steers by `dispatch`: each lane's sockets, queue by queue.
    /// On failure, the program's map is left as it was.
    pub fn steer(
        &mut self,
        ifindex: u32,
        lanes: usize,
        dispatch: Dispatch,
    ) -> Result<Vec<Vec<XskLane>>, String> {
        if !(2..=MAX_LANES as usize).contains(&lanes) {
            return Err(format!("{lanes} lanes: steering takes 2 to {MAX_LANES}"));
        }
        // Every lane socket opened, placed or not: on failure they close only after the
        // map forgets them.
        let mut all: Vec<Vec<XskLane>> = Vec::with_capacity(lanes - 1);
        let mut placed = Ok(());
        'open: for lane in 1..lanes {
            all.push(Vec::with_capacity(self.rx.len()));
            let sockets = all.last_mut().expect("just pushed");
            for (queue, rx) in self.rx.iter_mut().enumerate() {
                let queue = queue as u32;
                let l = match rx.add_lane(ifindex, queue) {
                    Ok(l) => l,
                    Err(e) => {
                        placed = Err(format!("cannot open a lane socket on queue {queue}: {e}"));
                        break 'open;
                    }
                };
                let set = self.program.set_socket(queue, lane as u8, l.fd());
                sockets.push(l);
                if let Err(e) = set {
                    placed = Err(e.to_string());
                    break 'open;
                }
            }
        }
        if placed.is_ok() {
            let steering = Steering {
                home: 0,
                dispatch: Some(dispatch),
            };
            placed = self
                .program
                .set_steering(&steering)
                .map_err(|e| e.to_string());
        }
        if let Err(e) = placed {
            for lane in 1..lanes {
                for queue in 0..self.rx.len() as u32 {
                    self.program.unset_socket(queue, lane as u8);
                }
            }
            return Err(e);
        }
        self.lanes = lanes as u32;
        Ok(all)
    }

    /// Makes `dsts` the UDP destinations the program takes.
    pub fn set_udp_dsts(&mut self, dsts: &[crate::xdp::filter::UdpDst]) -> Result<(), String> {
        self.program.set_udp_dsts(dsts).map_err(|e| e.to_string())
    }

    /// The program's verdict counts.
    pub fn counts(&self) -> io::Result<XdpCounts> {
        self.program
            .counts()
            .map_err(|e| io::Error::other(e.to_string()))
    }
}
