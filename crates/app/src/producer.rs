//! [`Producer`]: registers prefixes through the forwarder's management protocol and answers
//! the Interests that reach them.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use kite_mgmt_proto::nfd::RouteOrigin;
use kite_mgmt_proto::ControlParameters;
use kite_packet::{Interest, LpHeader, Name, NetPacket};

use crate::client::Client;
use crate::error::ClientError;

/// How long to wait for the answer to rib/register.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(4);

/// How long rib/unregister may delay a drop.
const UNREGISTER_TIMEOUT: Duration = Duration::from_millis(500);

/// How often the serving loop looks at its stop flag while no Interest comes.
const STOP_CHECK: Duration = Duration::from_millis(100);

/// Queued answer octets that force a write while more Interests are already read.
const FLUSH_AT: usize = 256 * 1024;

/// A connection that serves the prefixes it registered; unregisters them when dropped.
#[derive(Debug)]
pub struct Producer {
    client: Client,
    prefixes: Vec<Name>,
    /// The Origin its routes are registered with; `None`: the forwarder's default (app).
    origin: Option<RouteOrigin>,
}

impl Producer {
    /// A producer on `client`'s connection, with no prefix yet.
    pub fn new(client: Client) -> Self {
        Producer {
            client,
            prefixes: Vec::new(),
            origin: None,
        }
    }

    /// Registers the prefixes that follow with `origin`: `client` (65) asks the forwarder to
    /// readvertise them to the routing daemon, as NDNd's apps do when they expose a prefix.
    pub fn set_origin(&mut self, origin: RouteOrigin) {
        self.origin = Some(origin);
    }

    /// Routes Interests under `prefix` to this connection (rib/register, a signed command
    /// without FaceId: the forwarder uses the requesting face).
    pub fn register(&mut self, prefix: &Name) -> Result<(), ClientError> {
        let params = ControlParameters {
            name: Some(prefix.clone()),
            origin: self.origin,
            ..Default::default()
        };
        self.client
            .command_ok("rib", "register", &params, COMMAND_TIMEOUT)?;
        self.prefixes.push(prefix.clone());
        Ok(())
    }

    /// The prefixes registered so far.
    pub fn prefixes(&self) -> &[Name] {
        &self.prefixes
    }

    /// Answers Interests until `stop` is set or `deadline` passes: `handler` returns the
    /// encoded Data for an Interest, or `None` to stay silent. A reply carries the Interest's
    /// PIT token back when the forwarder attached one. Interests already read are all
    /// answered before the answers are written, in one write over a stream.
    pub fn serve(
        &mut self,
        stop: &AtomicBool,
        deadline: Option<Instant>,
        mut handler: impl FnMut(&Interest) -> Option<Bytes>,
    ) -> Result<(), ClientError> {
        while !stop.load(Ordering::Acquire) {
            let now = Instant::now();
            if deadline.is_some_and(|d| now >= d) {
                break;
            }
            let wake = deadline.map_or(now + STOP_CHECK, |d| d.min(now + STOP_CHECK));
            let mut next = self.client.recv_until(wake);
            loop {
                match next {
                    Ok(Some((header, NetPacket::Interest(interest)))) => {
                        if let Some(reply) = handler(&interest) {
                            self.queue_reply(&header, reply)?;
                        }
                    }
                    Ok(None) => break,
                    // A packet that does not decode is dropped, as a forwarder drops it.
                    Ok(Some(_)) | Err(ClientError::Decode(_)) => {}
                    Err(e) => return Err(e),
                }
                next = self.client.recv_buffered();
            }
            self.client.flush_queued()?;
        }
        Ok(())
    }

    /// Queues `data` in answer to an Interest that came with `header` (its PIT token echoed),
    /// writing the queue once it holds [`FLUSH_AT`] octets.
    fn queue_reply(&mut self, header: &LpHeader, data: Bytes) -> Result<(), ClientError> {
        let reply = LpHeader {
            pit_token: header.pit_token,
            ..LpHeader::default()
        };
        if self.client.queue_packet(&reply, data)? >= FLUSH_AT {
            self.client.flush_queued()?;
        }
        Ok(())
    }
}

impl Drop for Producer {
    fn drop(&mut self) {
        // Best effort: the forwarder also drops the routes when the connection closes.
        for prefix in std::mem::take(&mut self.prefixes) {
            let params = ControlParameters {
                name: Some(prefix),
                origin: self.origin,
                ..Default::default()
            };
            let _ = self
                .client
                .command("rib", "unregister", &params, UNREGISTER_TIMEOUT);
        }
    }
}
