//! A minimal HTTP/1.1 responder for the metrics listener: one request per connection
//! (`Connection: close`), GET and HEAD only, on one thread with a `mio` poll.
//!
//! Hand-written rather than taken from a crate: the small servers available either start a
//! thread per connection from a pool that grows without limit, or pull in an async runtime;
//! here every resource a client can hold is bounded in one place:
//! - [`MAX_CONNECTIONS`] open at once; a new one beyond them closes the oldest;
//! - [`MAX_REQUEST`] octets of request line and headers; beyond, 431 and close;
//! - [`DEADLINE`] for the whole exchange (request, wait, response); past it, closed;
//! - response bodies are shared (`Arc`) between connections, so N slow readers of the same
//!   page hold one copy.

use std::io::{ErrorKind, Read, Write};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mio::net::TcpStream;

/// Connections open at once.
pub const MAX_CONNECTIONS: usize = 32;
/// Octets of request line and headers.
pub const MAX_REQUEST: usize = 8192;
/// Time a connection may take, from accept to the last octet of its response.
pub const DEADLINE: Duration = Duration::from_secs(10);

/// A parsed request: what the responder needs of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// HEAD (headers only) rather than GET.
    pub head: bool,
    /// The path, without the query.
    pub path: String,
    /// The query string after `?`, if any.
    pub query: Option<String>,
    /// The Accept header's value, if any.
    pub accept: Option<String>,
}

impl Request {
    /// The value of query parameter `key`.
    pub fn param(&self, key: &str) -> Option<&str> {
        self.query
            .as_deref()?
            .split('&')
            .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
    }
}

/// A response to send.
#[derive(Debug, Clone)]
pub struct Response {
    /// Status code and reason, e.g. `200 OK`.
    pub status: &'static str,
    /// Content-Type.
    pub content_type: &'static str,
    /// Body (shared with other connections answered the same).
    pub body: Arc<[u8]>,
    /// Extra header lines, each ending in CRLF.
    pub extra: &'static str,
}

impl Response {
    /// A plain-text response.
    pub fn text(status: &'static str, body: &str) -> Response {
        Response {
            status,
            content_type: "text/plain; charset=utf-8",
            body: Arc::from(body.as_bytes()),
            extra: "",
        }
    }
}

/// What reading a request found.
#[derive(Debug, PartialEq, Eq)]
pub enum Parsed {
    /// The headers have not all arrived.
    Partial,
    /// A request.
    Done(Request),
    /// Not HTTP/1.x, or a method other than GET and HEAD: answer this and close.
    Refuse(&'static str, &'static str),
}

/// Parses the request line and headers in `buf` (the body of a GET, if any, is ignored).
pub fn parse(buf: &[u8]) -> Parsed {
    let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
        return if buf.len() >= MAX_REQUEST {
            Parsed::Refuse(
                "431 Request Header Fields Too Large",
                "request headers too large\n",
            )
        } else {
            Parsed::Partial
        };
    };
    let Ok(text) = std::str::from_utf8(&buf[..end]) else {
        return Parsed::Refuse("400 Bad Request", "bad request\n");
    };
    let mut lines = text.split("\r\n");
    let mut first = lines.next().unwrap_or("").split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (first.next(), first.next(), first.next(), first.next())
    else {
        return Parsed::Refuse("400 Bad Request", "bad request line\n");
    };
    if !version.starts_with("HTTP/1.") {
        return Parsed::Refuse("505 HTTP Version Not Supported", "HTTP/1.x only\n");
    }
    let head = match method {
        "GET" => false,
        "HEAD" => true,
        _ => return Parsed::Refuse("405 Method Not Allowed", "GET or HEAD only\n"),
    };
    let (path, query) = match target.split_once('?') {
        Some((p, q)) => (p, Some(q.to_string())),
        None => (target, None),
    };
    let accept = lines.find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.trim()
            .eq_ignore_ascii_case("accept")
            .then(|| v.trim().to_string())
    });
    Parsed::Done(Request {
        head,
        path: path.to_string(),
        query,
        accept,
    })
}

/// Where a connection stands.
pub enum State {
    /// Reading the request.
    Reading(Vec<u8>),
    /// Waiting for a newer status snapshot (`/status.json?after=MS`); HEAD or GET.
    Waiting { head: bool },
    /// Writing the response: the head, then the body (unless HEAD), from `sent` on.
    Writing {
        head: Vec<u8>,
        body: Option<Arc<[u8]>>,
        sent: usize,
    },
}

/// One client connection.
pub struct Conn {
    pub stream: TcpStream,
    pub accepted: Instant,
    pub state: State,
}

/// What a connection needs after an event.
#[derive(Debug, PartialEq, Eq)]
pub enum Next {
    /// Keep it: waiting for more input or room to write.
    Keep,
    /// A request has arrived: answer it.
    Answer(Request),
    /// Done or broken: close it.
    Close,
}

impl Conn {
    /// A connection just accepted.
    pub fn new(stream: TcpStream, now: Instant) -> Conn {
        Conn {
            stream,
            accepted: now,
            state: State::Reading(Vec::new()),
        }
    }

    /// Reads what has arrived (until the socket would block or the request is whole).
    pub fn read(&mut self) -> Next {
        let State::Reading(buf) = &mut self.state else {
            return Next::Keep;
        };
        let mut chunk = [0u8; 2048];
        loop {
            let room = MAX_REQUEST - buf.len();
            let want = room.min(chunk.len());
            match self.stream.read(&mut chunk[..want]) {
                Ok(0) => return Next::Close,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Next::Keep,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(_) => return Next::Close,
            }
            match parse(buf) {
                Parsed::Partial => continue,
                Parsed::Done(r) => return Next::Answer(r),
                Parsed::Refuse(status, body) => {
                    self.respond(&Response::text(status, body), false);
                    return self.write();
                }
            }
        }
    }

    /// Starts sending `r` (its head only when `head`).
    pub fn respond(&mut self, r: &Response, head: bool) {
        let head_text = format!(
            "HTTP/1.1 {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nCache-Control: no-store\r\n\
             X-Content-Type-Options: nosniff\r\n{}Connection: close\r\n\r\n",
            r.status,
            r.content_type,
            r.body.len(),
            r.extra
        );
        self.state = State::Writing {
            head: head_text.into_bytes(),
            body: (!head).then(|| r.body.clone()),
            sent: 0,
        };
    }

    /// Writes what the socket takes; `Close` once all is sent or the peer is gone.
    pub fn write(&mut self) -> Next {
        let State::Writing { head, body, sent } = &mut self.state else {
            return Next::Keep;
        };
        let body_len = body.as_ref().map_or(0, |b| b.len());
        loop {
            let total = head.len() + body_len;
            if *sent >= total {
                let _ = self.stream.shutdown(std::net::Shutdown::Write);
                return Next::Close;
            }
            let part: &[u8] = if *sent < head.len() {
                &head[*sent..]
            } else {
                let b = body.as_ref().map_or(&[][..], |b| &b[..]);
                &b[*sent - head.len()..]
            };
            match self.stream.write(part) {
                Ok(0) => return Next::Close,
                Ok(n) => *sent += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Next::Keep,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(_) => return Next::Close,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_get_with_query_and_accept() {
        let r = parse(
            b"GET /status.json?after=17&x=1 HTTP/1.1\r\nHost: a\r\nACCEPT: application/openmetrics-text\r\n\r\n",
        );
        let Parsed::Done(r) = r else { panic!("{r:?}") };
        assert!(!r.head);
        assert_eq!(r.path, "/status.json");
        assert_eq!(r.param("after"), Some("17"));
        assert_eq!(r.param("y"), None);
        assert_eq!(r.accept.as_deref(), Some("application/openmetrics-text"));
    }

    #[test]
    fn waits_for_the_end_of_the_headers_and_bounds_them() {
        assert_eq!(parse(b"GET / HTTP/1.1\r\nHost: a\r\n"), Parsed::Partial);
        let long = vec![b'a'; MAX_REQUEST];
        assert!(matches!(parse(&long), Parsed::Refuse(s, _) if s.starts_with("431")));
    }

    #[test]
    fn refuses_other_methods_and_versions_and_junk() {
        assert!(
            matches!(parse(b"POST / HTTP/1.1\r\n\r\n"), Parsed::Refuse(s, _) if s.starts_with("405"))
        );
        assert!(
            matches!(parse(b"GET / HTTP/2\r\n\r\n"), Parsed::Refuse(s, _) if s.starts_with("505"))
        );
        assert!(matches!(parse(b"GET /\r\n\r\n"), Parsed::Refuse(s, _) if s.starts_with("400")));
        assert!(
            matches!(parse(b"\xff\xfe / HTTP/1.1\r\n\r\n"), Parsed::Refuse(s, _) if s.starts_with("400"))
        );
    }
}
