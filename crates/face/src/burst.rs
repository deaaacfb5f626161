//! Burst datagram I/O for programs that talk UDP to a forwarder without a [`Face`](crate::Face)
//! (the load generator of `kite bench daemon`): `recvmmsg` into reusable slots (coalesced runs
//! read whole), and `sendmmsg` with runs of equal-length datagrams segmented by the kernel.

pub use crate::datagram::Arena;
pub use crate::sys::segment::{enable_gro, send_segmented, Segmenter, SEGMENTED_BATCH};
pub use crate::sys::{RecvBatch, BATCH};
