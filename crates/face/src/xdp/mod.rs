//! AF_XDP: an interface's NDN frames and Kite's UDP datagrams through XDP and AF_XDP sockets,
//! past the kernel's network stack.
//!
//! [`program`] loads Kite's XDP program (`xdp/kite_xdp.c`, shipped inside the binary) onto an
//! interface: it hands NDN frames (EtherType 0x8624) and UDP datagrams to Kite's listeners to
//! the AF_XDP socket of the receive queue they arrived on and passes every other frame to the
//! kernel; with several I/O threads it steers each NDN packet to the socket of the thread
//! whose forwarding shard handles it. [`filter`] is its verdict in user space and [`steer`]
//! its choice of socket, both held to the program's by the tests.
//! [`socket`] is the AF_XDP socket: its UMEM and its four rings. [`udp`] checks the IP and
//! UDP headers of the datagrams the program hands over, as the kernel would have.

pub mod filter;
pub mod program;
pub mod socket;
pub mod steer;
pub mod udp;
