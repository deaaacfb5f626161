//! The readvertise client: an application on the daemon's own unix socket, like any other,
//! that sends the `rib/register` and `rib/unregister` commands management hands it (see
//! `kite_mgmt_server::readvertise`) to the routing daemon or the gateway, and reports how each
//! ended. Management never waits for them; this thread sends one at a time and waits at
//! most a command Interest's lifetime for each answer. Commands to the routing daemon are
//! signed with DigestSha256; those to the gateway too, or with `rib.propagate_key`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Result;
use crossbeam_channel::{Receiver, Sender};
use kite_app::mgmt::CommandSigner;
use kite_app::{Client, ClientError};
use kite_mgmt_proto::nfd::status;
use kite_mgmt_server::readvertise::{Policy, GATEWAY_COST, GATEWAY_REFRESH_MS, NLSR_REFRESH_MS};
use kite_mgmt_server::server::{
    Manager, ReadvertiseDestination, ReadvertiseRequest, ReadvertiseResult, REQUEST_QUEUE,
};

use super::propagate_key::PropagationKey;
use crate::config;

/// How long to wait for an answer: the command Interest's lifetime.
const ANSWER_WAIT: Duration = Duration::from_millis(kite_app::mgmt::COMMAND_LIFETIME_MS);

/// Starts what `rib` asks for: readvertising routes of origin client to the routing daemon
/// (`/localhost/nlsr`), propagating routes under its prefixes to the gateway
/// (`/localhop/nfd`), signed by `key` when given (whose identity is then the prefix if `rib`
/// names none); both through one client on `socket`.
pub(super) fn start(
    manager: &mut Manager,
    socket: &Path,
    rib: &config::Rib,
    key: Option<PropagationKey>,
) -> Result<()> {
    let mut destinations = Vec::new();
    // One per destination, in the order they are enabled (a request's `destination`).
    let mut signers: Vec<Option<CommandSigner>> = Vec::new();
    if rib.readvertise_nlsr {
        destinations.push(ReadvertiseDestination {
            command_prefix: "/localhost/nlsr".parse()?,
            policy: Policy::ClientToRouter,
            refresh_ms: NLSR_REFRESH_MS,
            cost: None,
        });
        signers.push(None);
    }
    if rib.auto_prefix_propagate {
        let mut prefixes: Vec<_> = rib.propagate_prefixes.iter().map(|p| p.0.clone()).collect();
        if let (true, Some(k)) = (prefixes.is_empty(), &key) {
            prefixes.push(k.identity());
        }
        tracing::info!(prefixes = ?prefixes.iter().map(ToString::to_string).collect::<Vec<_>>(), "propagating to the gateway");
        destinations.push(ReadvertiseDestination {
            command_prefix: "/localhop/nfd".parse()?,
            policy: Policy::HostToGateway(prefixes),
            refresh_ms: GATEWAY_REFRESH_MS,
            cost: Some(GATEWAY_COST),
        });
        signers.push(key.map(|k| CommandSigner::new(k.signer)));
    }
    if destinations.is_empty() {
        return Ok(());
    }
    let (tx, rx) = crossbeam_channel::bounded(REQUEST_QUEUE);
    let results = manager.readvertise_results();
    let socket = socket.to_path_buf();
    std::thread::Builder::new()
        .name("kite-readvertise".into())
        .spawn(move || serve(socket, rx, results, signers))?;
    for d in destinations {
        manager.enable_readvertise(d, tx.clone());
    }
    Ok(())
}

/// Sends each request and reports it, until management goes away.
fn serve(
    socket: PathBuf,
    requests: Receiver<ReadvertiseRequest>,
    results: Sender<ReadvertiseResult>,
    mut signers: Vec<Option<CommandSigner>>,
) {
    let mut client: Option<Client> = None;
    while let Ok(req) = requests.recv() {
        let prefix = req.params.name.clone().unwrap_or_default();
        let signer = signers.get_mut(req.destination).and_then(Option::as_mut);
        let ok = send(&mut client, &socket, &req, signer);
        let result = ReadvertiseResult {
            destination: req.destination,
            id: req.id,
            prefix,
            ok,
        };
        if results.send(result).is_err() {
            return;
        }
    }
}

/// One command, signed by `signer` (DigestSha256 without one); whether it was answered with
/// a success code: below 400, as ndn-cxx's controller (NFD's readvertising) counts success,
/// so a destination that answers 2xx other than 200 is not told the same thing again and
/// again. The connection is made when needed and dropped after an error that may have
/// broken it.
fn send(
    client: &mut Option<Client>,
    socket: &Path,
    req: &ReadvertiseRequest,
    signer: Option<&mut CommandSigner>,
) -> bool {
    let prefix = req.params.name.clone().unwrap_or_default();
    let c = match client {
        Some(c) => c,
        None => match Client::connect_unix(socket) {
            Ok(c) => client.insert(c),
            Err(e) => {
                tracing::warn!(%prefix, error = %e, "readvertise: cannot reach the forwarder");
                return false;
            }
        },
    };
    let verb = req.verb.as_str();
    let (to, params) = (&req.command_prefix, &req.params);
    let answer = match signer {
        Some(s) => c.command_signed(s, to, "rib", verb, params, ANSWER_WAIT),
        None => c.command_under(to, "rib", verb, params, ANSWER_WAIT),
    };
    match answer {
        Ok(resp) if resp.status_code < status::BAD_REQUEST => {
            tracing::info!(%prefix, to = %req.command_prefix, "readvertise: {verb} accepted");
            true
        }
        Ok(resp) => {
            tracing::warn!(
                %prefix, to = %req.command_prefix, code = resp.status_code,
                text = %resp.status_text, "readvertise: {verb} refused; retried later"
            );
            false
        }
        Err(e) => {
            tracing::warn!(
                %prefix, to = %req.command_prefix, error = %e,
                "readvertise: {verb} failed; retried later"
            );
            if !matches!(e, ClientError::Timeout { .. } | ClientError::Nack { .. }) {
                *client = None;
            }
            false
        }
    }
}
