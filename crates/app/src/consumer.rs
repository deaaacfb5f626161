//! [`Pipeline`]: a consumer that keeps many Interests outstanding on one connection and
//! matches each arriving Data or Nack to the Interests it answers.

use std::collections::{BTreeSet, HashMap};
use std::time::{Duration, Instant};

use kite_packet::{tlv_type, Data, Interest, LpHeader, NackReason, Name, NetPacket};
use smallvec::SmallVec;

use crate::client::{satisfies, Client};
use crate::error::ClientError;
use crate::random::random_nonce;

/// Identifies one expressed Interest within its [`Pipeline`].
pub type InterestId = u64;

/// What happened to an outstanding Interest.
#[derive(Debug)]
pub enum Event {
    /// Data satisfied it.
    Data {
        /// The Interest.
        id: InterestId,
        /// The Data (boxed: it is far larger than the other events).
        data: Box<Data>,
        /// Time from sending to arrival.
        rtt: Duration,
        /// Whether the frame carried an NDNLPv2 CongestionMark other than 0.
        congestion_mark: bool,
    },
    /// The network refused it.
    Nack {
        /// The Interest.
        id: InterestId,
        /// The NackReason.
        reason: NackReason,
    },
    /// Nothing came before its timeout.
    Timeout {
        /// The Interest.
        id: InterestId,
    },
}

/// An Interest waiting for its answer.
#[derive(Debug)]
struct Pending {
    interest: Interest,
    sent_at: Instant,
    deadline: Instant,
}

/// Many outstanding Interests on one connection; see [`Pipeline::poll`].
#[derive(Debug)]
pub struct Pipeline {
    client: Client,
    pending: HashMap<InterestId, Pending>,
    /// Interests answered only by a Data of exactly their name (almost always one per name).
    exact: HashMap<Name, SmallVec<[InterestId; 1]>>,
    /// CanBePrefix and implicit-digest Interests, checked one by one.
    others: Vec<InterestId>,
    deadlines: BTreeSet<(Instant, InterestId)>,
    next_id: InterestId,
}

impl Pipeline {
    /// A pipeline over `client`'s connection.
    pub fn new(client: Client) -> Self {
        Pipeline {
            client,
            pending: HashMap::new(),
            exact: HashMap::new(),
            others: Vec::new(),
            deadlines: BTreeSet::new(),
            next_id: 0,
        }
    }

    /// The connection back, with any Interest still outstanding forgotten.
    pub fn into_client(self) -> Client {
        self.client
    }

    /// How many Interests are outstanding.
    pub fn outstanding(&self) -> usize {
        self.pending.len()
    }

    /// Sends `interest` (a random Nonce added when it has none) without waiting; its answer,
    /// or a timeout after `timeout`, comes out of [`Pipeline::poll`].
    pub fn express(
        &mut self,
        mut interest: Interest,
        timeout: Duration,
    ) -> Result<InterestId, ClientError> {
        if interest.nonce.is_none() {
            interest.nonce = Some(random_nonce());
        }
        let wire = interest.encode();
        if interest.app_params.is_some() {
            // The encoder put the ParametersSha256DigestComponent in the name.
            interest = Interest::decode(wire.clone())?;
        }
        self.client.send_wire(&wire)?;
        let id = self.next_id;
        self.next_id += 1;
        let now = Instant::now();
        let digest_named = interest
            .name
            .last()
            .is_some_and(|c| c.typ() == tlv_type::IMPLICIT_SHA256_DIGEST_COMPONENT);
        if interest.can_be_prefix || digest_named {
            self.others.push(id);
        } else {
            self.exact
                .entry(interest.name.clone())
                .or_default()
                .push(id);
        }
        self.deadlines.insert((now + timeout, id));
        self.pending.insert(
            id,
            Pending {
                interest,
                sent_at: now,
                deadline: now + timeout,
            },
        );
        Ok(id)
    }

    /// Forgets an outstanding Interest: nothing more is reported for it.
    pub fn cancel(&mut self, id: InterestId) {
        let Some(p) = self.forget(id) else {
            return;
        };
        if let Some(ids) = self.exact.get_mut(&p.interest.name) {
            ids.retain(|&mut i| i != id);
            if ids.is_empty() {
                self.exact.remove(&p.interest.name);
            }
        }
    }

    /// Moves the timeout of outstanding Interest `id` to `deadline`, if that is later than
    /// the one it has (a timeout is never brought forward).
    pub fn postpone(&mut self, id: InterestId, deadline: Instant) {
        let Some(p) = self.pending.get_mut(&id) else {
            return;
        };
        if deadline <= p.deadline {
            return;
        }
        self.deadlines.remove(&(p.deadline, id));
        self.deadlines.insert((deadline, id));
        p.deadline = deadline;
    }

    /// Removes an outstanding Interest from everything but `exact`, whose entry the caller
    /// has removed or cleans up.
    fn forget(&mut self, id: InterestId) -> Option<Pending> {
        let p = self.pending.remove(&id)?;
        self.deadlines.remove(&(p.deadline, id));
        if !self.others.is_empty() {
            self.others.retain(|&i| i != id);
        }
        Some(p)
    }

    /// The Interest behind `id`, while it is outstanding.
    pub fn interest(&self, id: InterestId) -> Option<&Interest> {
        self.pending.get(&id).map(|p| &p.interest)
    }

    /// Waits until something happens to an outstanding Interest, or until `until`, and returns
    /// every answer that is ready and at most one timeout, the earliest (empty when `until`
    /// came first): the caller may postpone the other timeouts ([`Pipeline::postpone`]) before
    /// they are reported. The wait sleeps in the kernel, woken by a packet or by the earliest
    /// Interest timeout.
    pub fn poll(&mut self, until: Instant) -> Result<Vec<Event>, ClientError> {
        let mut events = Vec::new();
        loop {
            self.expire(Instant::now(), &mut events);
            if !events.is_empty() {
                return Ok(events);
            }
            let wake = self.deadlines.first().map_or(until, |&(d, _)| d.min(until));
            let mut next = skip_undecodable(self.client.recv_until(wake))?;
            while let Some((header, packet)) = next {
                let marked = header.congestion_mark.is_some_and(|m| m != 0);
                self.handle(packet, marked, &mut events);
                next = skip_undecodable(self.client.recv_buffered())?;
            }
            if !events.is_empty() || Instant::now() >= until {
                self.expire(Instant::now(), &mut events);
                return Ok(events);
            }
        }
    }

    /// Reports the Interest whose deadline passed first, if one did.
    fn expire(&mut self, now: Instant, events: &mut Vec<Event>) {
        if let Some(&(deadline, id)) = self.deadlines.first() {
            if deadline <= now {
                self.cancel(id);
                events.push(Event::Timeout { id });
            }
        }
    }

    /// Matches one arriving packet to the Interests it answers.
    fn handle(&mut self, packet: NetPacket, congestion_mark: bool, events: &mut Vec<Event>) {
        match packet {
            NetPacket::Data(data) => {
                // Every Interest of exactly this name is answered: its entry goes whole.
                let mut ids = self.exact.remove(&data.name).unwrap_or_default();
                ids.extend(
                    self.others
                        .iter()
                        .copied()
                        .filter(|id| satisfies(&self.pending[id].interest, &data)),
                );
                let now = Instant::now();
                let last = ids.len().saturating_sub(1);
                let mut data = Some(data);
                for (k, id) in ids.into_iter().enumerate() {
                    let Some(p) = self.forget(id) else { continue };
                    // The last Interest answered takes the Data itself, the others a copy.
                    let data = if k == last { data.take() } else { data.clone() };
                    let Some(data) = data else { break };
                    events.push(Event::Data {
                        id,
                        data: Box::new(data),
                        rtt: now.saturating_duration_since(p.sent_at),
                        congestion_mark,
                    });
                }
            }
            NetPacket::Nack(nack) => {
                let same = |p: &Pending| {
                    p.interest.name == nack.interest.name && p.interest.nonce == nack.interest.nonce
                };
                let id = self
                    .exact
                    .get(&nack.interest.name)
                    .into_iter()
                    .flatten()
                    .chain(&self.others)
                    .copied()
                    .find(|id| same(&self.pending[id]));
                if let Some(id) = id {
                    self.cancel(id);
                    events.push(Event::Nack {
                        id,
                        reason: nack.reason,
                    });
                }
            }
            NetPacket::Interest(_) => {}
        }
    }
}

/// A packet that does not decode is dropped, as a forwarder drops it (the stream stays in
/// step: the frame was whole).
fn skip_undecodable(
    r: Result<Option<(LpHeader, NetPacket)>, ClientError>,
) -> Result<Option<(LpHeader, NetPacket)>, ClientError> {
    match r {
        Err(ClientError::Decode(_)) => Ok(None),
        other => other,
    }
}
