//! `kite run --metrics ADDR`: an HTTP listener with the forwarder's counters for Prometheus
//! (`/metrics`, Prometheus text or OpenMetrics), a status page (`/`, like NFD's
//! nfd-status-http-server) and a small JSON document the page polls for its live rate plot
//! (`/status.json`). Off by default.
//!
//! It runs in a thread of its own and never touches the I/O or forwarding threads: it asks
//! the management thread for a [`Snapshot`], which management builds with the functions
//! that build its status datasets (`status/general`, `faces/list`, ...), so both report the
//! same counters. Snapshots are reused for [`MIN_INTERVAL`], so however often clients ask,
//! the forwarder's threads are asked at most once per interval (and once more for the page's
//! tables). See [`http`] for the bounds on clients.

mod http;
mod page;
mod render;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use kite_mgmt_server::server::{Snapshot, StatusSource};
use mio::net::TcpListener;
use mio::{Events, Interest, Poll, Token};

use http::{Conn, Next, Request, Response, State};

/// How long a snapshot is reused: scrapes and page polls faster than this see the same one.
pub const MIN_INTERVAL: Duration = Duration::from_secs(1);
/// How long the listener waits for management's snapshot before answering 503.
const SNAPSHOT_TIMEOUT: Duration = Duration::from_secs(5);
/// Rows of each table (faces, FIB, RIB, strategy choices) the status page shows.
pub const PAGE_ROWS: usize = 1000;

const LISTENER: Token = Token(0);

/// The metrics listener, bound but not served yet.
pub struct Listener(TcpListener);

impl Listener {
    /// Binds `addr`: before the forwarder opens its own sockets, so a port that cannot be
    /// bound stops the start early, and the listener accepts (into its backlog) as soon as
    /// the forwarder's sockets do.
    pub fn bind(addr: SocketAddr) -> Result<Listener> {
        TcpListener::bind(addr)
            .map(Listener)
            .with_context(|| format!("cannot listen for metrics on {addr}"))
    }

    /// The address it is bound to.
    pub fn local_addr(&self) -> Result<SocketAddr> {
        Ok(self.0.local_addr()?)
    }

    /// Serves it from a new thread, `kite-metrics`, with snapshots from `source`.
    pub fn serve(self, source: StatusSource) -> Result<()> {
        let mut listener = self.0;
        let poll = Poll::new()?;
        poll.registry()
            .register(&mut listener, LISTENER, Interest::READABLE)?;
        let server = Server {
            poll,
            listener,
            conns: HashMap::new(),
            next_token: 1,
            source,
            counters: None,
            page: None,
        };
        std::thread::Builder::new()
            .name("kite-metrics".into())
            .spawn(move || server.run())?;
        Ok(())
    }
}

/// A snapshot and the bodies rendered from it so far.
struct Cached {
    taken: Instant,
    snapshot: Arc<Snapshot>,
    bodies: HashMap<Body, Arc<[u8]>>,
}

/// The documents rendered from a counters snapshot.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Body {
    Prometheus,
    OpenMetrics,
    Json,
}

struct Server {
    poll: Poll,
    listener: TcpListener,
    conns: HashMap<Token, Conn>,
    next_token: usize,
    source: StatusSource,
    /// The last counters snapshot (no tables).
    counters: Option<Cached>,
    /// The last status page, rendered from a snapshot with tables.
    page: Option<(Instant, Arc<[u8]>)>,
}

impl Server {
    fn run(mut self) {
        let mut events = Events::with_capacity(64);
        loop {
            let now = Instant::now();
            let timeout = self.next_timeout(now);
            if let Err(e) = self.poll.poll(&mut events, timeout) {
                if e.kind() != std::io::ErrorKind::Interrupted {
                    tracing::error!(error = %e, "metrics listener stops: poll failed");
                    return;
                }
            }
            let now = Instant::now();
            for e in events.iter() {
                match e.token() {
                    LISTENER => self.accept(now),
                    t => self.on_event(t, e.is_readable(), e.is_writable()),
                }
            }
            self.expire(Instant::now());
            self.answer_waiting();
        }
    }

    /// Until the next connection deadline, or until a waiting client's snapshot is due.
    fn next_timeout(&self, now: Instant) -> Option<Duration> {
        let deadline = self
            .conns
            .values()
            .map(|c| (c.accepted + http::DEADLINE).saturating_duration_since(now))
            .min();
        let waiting = self
            .conns
            .values()
            .any(|c| matches!(c.state, State::Waiting { .. }));
        let refresh = waiting.then(|| {
            self.counters.as_ref().map_or(Duration::ZERO, |c| {
                (c.taken + MIN_INTERVAL).saturating_duration_since(now)
            })
        });
        match (deadline, refresh) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn accept(&mut self, now: Instant) {
        loop {
            let mut stream = match self.listener.accept() {
                Ok((s, _)) => s,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    // Out of descriptors, most likely: keep what is open, try again later.
                    tracing::warn!(error = %e, "metrics listener: accept failed");
                    return;
                }
            };
            if self.conns.len() >= http::MAX_CONNECTIONS {
                // The oldest has had the longest to finish: it makes room. Tokens are given
                // in accept order (those accepted in one wake share their accept time).
                if let Some(&oldest) = self.conns.keys().min_by_key(|t| t.0) {
                    self.close(oldest);
                }
            }
            let token = Token(self.next_token);
            self.next_token = self.next_token.wrapping_add(1).max(1);
            if self
                .poll
                .registry()
                .register(&mut stream, token, Interest::READABLE | Interest::WRITABLE)
                .is_err()
            {
                continue;
            }
            self.conns.insert(token, Conn::new(stream, now));
            // Data may already be there: edge-triggered readiness reports it once.
            self.on_event(token, true, false);
        }
    }

    fn on_event(&mut self, token: Token, readable: bool, writable: bool) {
        let Some(conn) = self.conns.get_mut(&token) else {
            return;
        };
        let next = match &conn.state {
            State::Reading(_) if readable => conn.read(),
            State::Writing { .. } if writable => conn.write(),
            _ => Next::Keep,
        };
        self.follow(token, next);
    }

    fn follow(&mut self, token: Token, next: Next) {
        match next {
            Next::Keep => {}
            Next::Close => self.close(token),
            Next::Answer(r) => self.answer(token, r),
        }
    }

    fn close(&mut self, token: Token) {
        if let Some(mut c) = self.conns.remove(&token) {
            let _ = self.poll.registry().deregister(&mut c.stream);
        }
    }

    fn expire(&mut self, now: Instant) {
        let late: Vec<Token> = self
            .conns
            .iter()
            .filter(|(_, c)| now.duration_since(c.accepted) >= http::DEADLINE)
            .map(|(t, _)| *t)
            .collect();
        for t in late {
            self.close(t);
        }
    }

    /// Answers `request` on `token`, at once or (for `/status.json?after=MS`) once a
    /// snapshot newer than MS may be taken.
    fn answer(&mut self, token: Token, request: Request) {
        if request.path == "/status.json" {
            if let Some(after) = request.param("after").and_then(|a| a.parse::<u64>().ok()) {
                let fresh = self
                    .counters
                    .as_ref()
                    .is_some_and(|c| c.snapshot.unix_ms > after);
                if !fresh {
                    if let Some(c) = self.conns.get_mut(&token) {
                        c.state = State::Waiting { head: request.head };
                    }
                    return;
                }
            }
        }
        let response = self.route(&request);
        self.send(token, &response, request.head);
    }

    fn send(&mut self, token: Token, response: &Response, head: bool) {
        let Some(conn) = self.conns.get_mut(&token) else {
            return;
        };
        conn.respond(response, head);
        let next = conn.write();
        self.follow(token, next);
    }

    /// Answers the clients waiting for a newer snapshot once one may be taken.
    fn answer_waiting(&mut self) {
        let waiting: Vec<(Token, bool)> = self
            .conns
            .iter()
            .filter_map(|(t, c)| match c.state {
                State::Waiting { head } => Some((*t, head)),
                _ => None,
            })
            .collect();
        if waiting.is_empty() {
            return;
        }
        let due = self
            .counters
            .as_ref()
            .is_none_or(|c| c.taken.elapsed() >= MIN_INTERVAL);
        if !due {
            return;
        }
        // The new snapshot, or 503 when management did not answer: either way the client
        // has its answer and the page asks again.
        let json = self.counters_body(Body::Json);
        for (token, head) in waiting {
            self.send(token, &json, head);
        }
    }

    fn route(&mut self, r: &Request) -> Response {
        match r.path.as_str() {
            "/metrics" => {
                let om = r
                    .accept
                    .as_deref()
                    .is_some_and(|a| a.contains("application/openmetrics-text"));
                if om {
                    self.counters_body(Body::OpenMetrics)
                } else {
                    self.counters_body(Body::Prometheus)
                }
            }
            "/status.json" => self.counters_body(Body::Json),
            "/" | "/index.html" => self.page(),
            _ => Response::text(
                "404 Not Found",
                "not found: try /, /metrics or /status.json\n",
            ),
        }
    }

    /// A document rendered from the counters snapshot, taken anew when the last one is older
    /// than [`MIN_INTERVAL`].
    fn counters_body(&mut self, body: Body) -> Response {
        let stale = self
            .counters
            .as_ref()
            .is_none_or(|c| c.taken.elapsed() >= MIN_INTERVAL);
        if stale {
            match self.source.snapshot(None, SNAPSHOT_TIMEOUT) {
                Some(s) => {
                    self.counters = Some(Cached {
                        taken: Instant::now(),
                        snapshot: Arc::new(s),
                        bodies: HashMap::new(),
                    })
                }
                None => return unavailable(),
            }
        }
        let Some(cached) = self.counters.as_mut() else {
            return unavailable();
        };
        let snapshot = cached.snapshot.clone();
        let bytes = cached
            .bodies
            .entry(body)
            .or_insert_with(|| match body {
                Body::Prometheus => render::metrics(&snapshot, false).into_bytes().into(),
                Body::OpenMetrics => render::metrics(&snapshot, true).into_bytes().into(),
                Body::Json => render::json(&snapshot).into_bytes().into(),
            })
            .clone();
        let content_type = match body {
            Body::Prometheus => "text/plain; version=0.0.4; charset=utf-8",
            Body::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
            Body::Json => "application/json",
        };
        Response {
            status: "200 OK",
            content_type,
            body: bytes,
            extra: "",
        }
    }

    /// The status page, rendered anew when the last one is older than [`MIN_INTERVAL`].
    fn page(&mut self) -> Response {
        let fresh = self
            .page
            .as_ref()
            .filter(|(t, _)| t.elapsed() < MIN_INTERVAL)
            .map(|(_, b)| b.clone());
        let body = match fresh {
            Some(b) => b,
            None => match self.source.snapshot(Some(PAGE_ROWS), SNAPSHOT_TIMEOUT) {
                Some(s) => {
                    let b: Arc<[u8]> = page::render(&s).into_bytes().into();
                    self.page = Some((Instant::now(), b.clone()));
                    b
                }
                None => return unavailable(),
            },
        };
        Response {
            status: "200 OK",
            content_type: "text/html; charset=utf-8",
            body,
            extra: "",
        }
    }
}

fn unavailable() -> Response {
    Response {
        extra: "Retry-After: 1\r\n",
        ..Response::text(
            "503 Service Unavailable",
            "the forwarder's management did not answer in time\n",
        )
    }
}
