//! The socket a [`crate::Client`] talks through: a Unix or TCP stream of TLV elements, a
//! connected UDP socket (one packet per datagram, NFD's default port 6363, with NDNLPv2
//! fragmentation: [`crate::udp`]), or, with the `websocket` feature, a WebSocket (one packet per
//! binary message, NFD's port 9696), each seen as a byte stream of whole TLV elements so one
//! [`crate::framing::FrameReader`] serves them all.

use std::io::{self, IoSlice, Read, Write};
use std::net::TcpStream;
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::time::Duration;

use kite_shm::{ShmReader, ShmWriter};

use crate::endpoint::Endpoint;
use crate::framing::{read_zeroed, Source};
use crate::udp::UdpLink;
#[cfg(feature = "websocket")]
use crate::ws::WsStream;
use kite_link::framing::Framer;

/// The connected socket.
#[derive(Debug)]
pub(crate) enum Transport {
    Unix(UnixStream),
    Tcp(TcpStream),
    Udp(Box<UdpLink>),
    #[cfg(feature = "websocket")]
    Ws(Box<WsStream>),
    /// Shared memory with the forwarder, asked for over its Unix socket.
    Shm(Box<(ShmReader, ShmWriter)>),
}

impl Transport {
    /// Connects to `ep`.
    pub fn connect(ep: &Endpoint) -> io::Result<Transport> {
        Ok(match ep {
            Endpoint::Unix(p) => {
                let s = UnixStream::connect(p)?;
                match crate::shm::enabled() {
                    true => match crate::shm::negotiate(s, p)? {
                        crate::shm::Negotiated::Shm(r, w) => Transport::Shm(Box::new((r, w))),
                        crate::shm::Negotiated::Socket(s) => Transport::Unix(s),
                    },
                    false => Transport::Unix(s),
                }
            }
            Endpoint::Tcp(a) => Transport::Tcp(TcpStream::connect(a.as_str())?),
            Endpoint::Udp(a) => Transport::Udp(Box::new(UdpLink::connect(a)?)),
            #[cfg(feature = "websocket")]
            Endpoint::Ws { host_port, path } => {
                Transport::Ws(Box::new(WsStream::connect(host_port, path)?))
            }
            #[cfg(not(feature = "websocket"))]
            Endpoint::Ws { .. } => {
                return Err(io::Error::new(
                    io::ErrorKind::Unsupported,
                    "WebSocket endpoints need kite-app's websocket feature",
                ))
            }
        })
    }

    /// Whether this is a byte stream (Unix, TCP), where consecutive packets may go in one
    /// write; over UDP and WebSocket a write is one packet.
    pub fn is_stream(&self) -> bool {
        matches!(
            self,
            Transport::Unix(_) | Transport::Tcp(_) | Transport::Shm(_)
        )
    }

    /// How long a read may block.
    pub fn set_read_timeout(&mut self, t: Duration) -> io::Result<()> {
        match self {
            Transport::Shm(s) => {
                s.0.set_read_timeout(Some(t));
                Ok(())
            }
            Transport::Unix(s) => s.set_read_timeout(Some(t)),
            Transport::Tcp(s) => s.set_read_timeout(Some(t)),
            Transport::Udp(u) => u.socket().set_read_timeout(Some(t)),
            #[cfg(feature = "websocket")]
            Transport::Ws(w) => w.set_read_timeout(t),
        }
    }
}

impl Read for Transport {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Transport::Unix(s) => s.read(buf),
            Transport::Tcp(s) => s.read(buf),
            // One whole element per read: what is not one (garbage, a datagram cut by a short
            // buffer) is dropped so the stream stays in step.
            Transport::Udp(u) => u.recv(buf),
            #[cfg(feature = "websocket")]
            Transport::Ws(w) => w.read(buf),
            Transport::Shm(s) => s.0.read(buf),
        }
    }
}

impl Source for Transport {
    /// Unix and TCP streams and the shared-memory ring are read straight into the frame
    /// buffer's uninitialized room; a UDP or WebSocket link into room zeroed first.
    fn read_into(&mut self, framer: &mut Framer) -> io::Result<usize> {
        match self {
            Transport::Unix(s) => Ok(framer.read_from(s.as_fd())?.read),
            Transport::Tcp(s) => Ok(framer.read_from(s.as_fd())?.read),
            Transport::Shm(s) => {
                let room = framer.read_room();
                s.0.read_buf(framer.buffer(), room)
            }
            Transport::Udp(_) => read_zeroed(self, framer),
            #[cfg(feature = "websocket")]
            Transport::Ws(_) => read_zeroed(self, framer),
        }
    }
}

impl Write for Transport {
    /// Writes one packet (over UDP and WebSocket a write is one datagram, or its fragments,
    /// or one message; the client writes one packet per call).
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Transport::Unix(s) => s.write(buf),
            Transport::Tcp(s) => s.write(buf),
            Transport::Udp(u) => u.send(buf).map(|()| buf.len()),
            #[cfg(feature = "websocket")]
            Transport::Ws(w) => w.send(buf).map(|()| buf.len()),
            Transport::Shm(s) => s.1.write(buf),
        }
    }

    /// Over a stream, one `writev`; over UDP and WebSocket, the first non-empty slice as one
    /// packet (what a single write sends there).
    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        match self {
            Transport::Unix(s) => s.write_vectored(bufs),
            Transport::Tcp(s) => s.write_vectored(bufs),
            Transport::Shm(s) => s.1.write_vectored(bufs),
            _ => {
                let first = bufs
                    .iter()
                    .find(|b| !b.is_empty())
                    .map_or(&[][..], |b| &b[..]);
                self.write(first)
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Transport::Unix(s) => s.flush(),
            Transport::Tcp(s) => s.flush(),
            Transport::Udp(_) | Transport::Shm(_) => Ok(()),
            #[cfg(feature = "websocket")]
            Transport::Ws(w) => w.flush(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::UdpSocket;

    #[test]
    fn a_udp_read_is_one_whole_element_and_skips_what_is_not() {
        let peer = UdpSocket::bind("127.0.0.1:0").unwrap();
        let ep = Endpoint::Udp(peer.local_addr().unwrap().to_string());
        let mut t = Transport::connect(&ep).unwrap();
        t.set_read_timeout(Duration::from_secs(2)).unwrap();
        t.write_all(&[5, 1, 0]).unwrap();
        let mut buf = [0u8; 64];
        let (n, client) = peer.recv_from(&mut buf).unwrap();
        assert_eq!(&buf[..n], &[5, 1, 0], "one write, one datagram");
        // a cut element, trailing garbage, then a whole one
        for d in [&[6, 9, 1][..], &[6, 1, 0, 0xff][..], &[6, 2, 7, 0][..]] {
            peer.send_to(d, client).unwrap();
        }
        let n = t.read(&mut buf).unwrap();
        assert_eq!(&buf[..n], &[6, 2, 7, 0]);
    }
}
