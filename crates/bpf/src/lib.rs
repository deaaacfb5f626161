//! `kite-bpf`: forwarding strategies as eBPF programs loaded at run time (section 6 of
//! "NDN-DPDK: NDN Forwarding at 100 Gbps on Commodity Hardware").
//!
//! A program is C compiled with `clang -O2 -target bpf -c` (see `strategies/`). [`load`] reads
//! it from the ELF object ([`elf`]), proves it safe ([`verifier`]), JIT-compiles it ([`vm`])
//! and wraps it in [`BpfStrategy`], which the forwarder calls through the same `Strategy`
//! trait as a native strategy. The ABI (context block, helpers) is in [`abi`] and
//! docs/strategy-abi.md.

pub mod abi;
pub mod elf;
mod helpers;
mod strategy;
pub mod verifier;
pub mod vm;

use std::sync::Arc;

use kite_packet::Name;

pub use strategy::BpfStrategy;
pub use vm::Engine;

/// Where loaded strategies are named: `/localhost/kite/strategy/NAME/v=1`.
pub const NAME_PREFIX: &str = "/localhost/kite/strategy";

/// Why a program could not be loaded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoadError {
    /// The object file is not usable.
    #[error(transparent)]
    Elf(#[from] elf::ElfError),
    /// The program failed verification.
    #[error("verifier: {0}")]
    Verify(verifier::VerifyError),
    /// The VM refused it.
    #[error("VM: {0}")]
    Vm(String),
    /// The short name is not a single name component.
    #[error("bad strategy name {0:?}")]
    BadName(String),
}

// A variant that wraps another error says it in its message and does not also report it as
// its source, or a chain printer (anyhow's `{:#}`) would print it twice.
impl From<verifier::VerifyError> for LoadError {
    fn from(e: verifier::VerifyError) -> Self {
        LoadError::Verify(e)
    }
}

/// The full strategy name for a short `name`.
pub fn strategy_name(name: &str) -> Result<Name, LoadError> {
    let bad = || LoadError::BadName(name.to_string());
    if name.is_empty() || name.contains('/') || name.contains('=') {
        return Err(bad());
    }
    format!("{NAME_PREFIX}/{name}/v=1")
        .parse()
        .map_err(|_| bad())
}

/// Loads the program in ELF object `elf` as strategy `name` (short name).
pub fn load(name: &str, elf: &[u8], engine: Engine) -> Result<Arc<BpfStrategy>, LoadError> {
    let code = elf::program(elf)?;
    load_code(strategy_name(name)?, code, engine)
}

/// Loads raw instructions (helper calls already numbered) as strategy `name`.
pub fn load_code(name: Name, code: Vec<u8>, engine: Engine) -> Result<Arc<BpfStrategy>, LoadError> {
    let verified = verifier::verify(&code)?;
    let vm = vm::Vm::new(code, engine).map_err(LoadError::Vm)?;
    Ok(Arc::new(BpfStrategy::new(name, vm, verified)))
}
