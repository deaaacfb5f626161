//! `kite perf`: NDNperf's server-side benchmark. `server` registers a prefix and answers every
//! Interest with a freshly signed Data (N signing threads fed through a bounded queue);
//! `client` keeps a window of Interests for names never asked before and reports Data/s,
//! goodput and RTT percentiles every second. Both talk to the forwarder's unix socket with
//! pipelined, batched I/O (many packets per read and per write), not one exchange at a time.

mod client;
pub(crate) mod connect;
mod cpu;
mod histogram;
mod server;

use anyhow::Result;
use clap::Subcommand;

/// `kite perf` roles.
#[derive(Subcommand)]
pub enum PerfCommand {
    /// Register a prefix and answer every Interest under it with a signed Data.
    Server(server::ServerArgs),
    /// Fetch Data under a prefix with a fixed window and measure throughput and RTT.
    Client(client::ClientArgs),
}

/// Runs a perf role and returns its final summary.
pub fn run(cmd: PerfCommand) -> Result<String> {
    match cmd {
        PerfCommand::Server(a) => server::run(a),
        PerfCommand::Client(a) => client::run(a),
    }
}
