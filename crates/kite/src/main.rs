//! `kite`: the one binary of the Kite NDN forwarder and its tools.
//!
//! Today it holds the packet tools — `kite decode` prints any NDN packet (Interest, Data,
//! Nack, NDNLPv2 frame) field by field, `kite encode` builds packets from the command line —
//! `kite run`, the forwarder daemon, the control commands that manage a running forwarder
//! (`kite status`, `face`, `route`, `fib`, `strategy`, `cs`: Kite's nfdc), and `kite bench`
//! (`fwd`: one forwarding thread in-process; `daemon`: the whole forwarder through sockets;
//! `flood`: a hostile face's load on a running forwarder),
//! the application tools `kite ping`, `kite get`, `kite put`, `kite peek`, `kite poke`,
//! `kite dump` (packet capture),
//! `kite key` (signing keys) and
//! `kite perf` (NDNperf's signing server and windowed client).

mod bench;
mod bench_daemon;
mod ctl;
mod describe;
mod duration;
mod encode;
mod frames;
mod input;
mod key;
mod manual;
mod perf;
mod run;
mod sign_args;
mod tools;

use kite::config;
use std::io::Write;
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

/// Kite: a Named Data Networking forwarder and its tools.
#[derive(Parser)]
#[command(name = "kite", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Decode an NDN packet or NDNLPv2 frame and print every field.
    ///
    /// Accepts TLV-encoded octets as hexadecimal text (spaces and newlines allowed) or raw
    /// binary, from the argument, from --file, or from standard input.
    Decode(input::InputArgs),
    /// Encode an Interest, Data or Nack and print it as hexadecimal.
    #[command(subcommand)]
    Encode(encode::EncodeCommand),
    /// Run the forwarder: NFD's faces and management protocol, until SIGINT or SIGTERM.
    Run(Box<run::RunArgs>),
    /// Measure Kite's performance.
    #[command(subcommand)]
    Bench(bench::BenchCommand),
    /// Show the forwarder's general status: version, uptime, table sizes, packet counters.
    Status(ctl::status::StatusArgs),
    /// List, show, create and destroy faces.
    Face(ctl::face::FaceArgs),
    /// List the listening channels and what they dropped before any face saw it.
    Channel(ctl::channel::ChannelArgs),
    /// List, add and remove routes (the RIB).
    Route(ctl::route::RouteArgs),
    /// Show the FIB.
    Fib(ctl::fib::FibArgs),
    /// List, set and unset the strategy choices.
    Strategy(ctl::strategy::StrategyArgs),
    /// Show and configure the Content Store, and erase entries from it.
    Cs(ctl::cs::CsArgs),
    /// Measure reachability and round-trip time to a prefix (ndnping), or answer pings
    /// under it with --server (ndnpingserver). Exits 1 when any probe goes unanswered.
    Ping(tools::ping::PingArgs),
    /// Fetch a segmented object to standard output or a file (ndncatchunks).
    Get(tools::get::GetArgs),
    /// Publish a file or standard input as versioned segments and serve them (ndnputchunks).
    Put(tools::put::PutArgs),
    /// Send one Interest and print the Data's content or packet (ndnpeek). Exit status: 0
    /// Data, 3 timeout, 4 Nack.
    Peek(tools::peek::PeekArgs),
    /// Serve one signed Data from a file or standard input, then exit (ndnpoke). Exit status
    /// 3 when no Interest came in time.
    Poke(tools::poke::PokeArgs),
    /// Capture and decode NDN packets on an interface, one line each (ndndump): Ethernet
    /// 0x8624, UDP and TCP on ports 6363 and 56363, NDNLPv2. Needs CAP_NET_RAW.
    Dump(tools::dump::DumpArgs),
    /// Generate and show signing keys (PEM files).
    #[command(subcommand)]
    Key(key::KeyCommand),
    /// NDNperf: a producer that signs every Data (server) and a windowed consumer (client).
    #[command(subcommand)]
    Perf(perf::PerfCommand),
    /// Write the manual pages (kite.1 and one per subcommand) into a directory.
    Man(manual::ManArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(manual::CompletionsArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Decode(args) => input::read(&args).and_then(describe::describe),
        Command::Encode(cmd) => encode::run(cmd),
        Command::Bench(cmd) => bench::run(cmd),
        Command::Status(args) => ctl::status::run(args),
        Command::Face(args) => ctl::face::run(args),
        Command::Channel(args) => ctl::channel::run(args),
        Command::Route(args) => ctl::route::run(args),
        Command::Fib(args) => ctl::fib::run(args),
        Command::Strategy(args) => ctl::strategy::run(args),
        Command::Cs(args) => ctl::cs::run(args),
        Command::Run(args) => run::run(*args),
        Command::Ping(args) => tools::ping::run(args),
        Command::Get(args) => tools::get::run(args),
        Command::Put(args) => tools::put::run(args),
        Command::Peek(args) => tools::peek::run(args),
        Command::Poke(args) => tools::poke::run(args),
        Command::Dump(args) => tools::dump::run(args),
        Command::Key(cmd) => key::run(cmd),
        Command::Perf(cmd) => perf::run(cmd),
        Command::Man(args) => manual::man(&args, Cli::command()),
        Command::Completions(args) => manual::completions(&args, Cli::command()),
    };
    match result {
        Ok(text) => {
            let mut out = std::io::stdout().lock();
            // A closed pipe (e.g. `| head`) is not an error worth reporting.
            let _ = out.write_all(text.as_bytes());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("kite: {e:#}");
            match e.downcast_ref::<tools::Exit>() {
                Some(exit) => ExitCode::from(exit.code),
                None => ExitCode::FAILURE,
            }
        }
    }
}
