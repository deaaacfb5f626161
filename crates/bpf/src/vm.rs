//! The VM a verified program runs in: rbpf, JIT-compiled (or interpreted, for comparison).

use std::collections::HashSet;
use std::sync::Mutex;

use rbpf::EbpfVmRaw;

use crate::abi::CTX_LEN;
use crate::helpers::TABLE;

/// How a program is executed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Engine {
    /// x86-64 machine code (the default; no run-time checks, so only verified code gets here).
    #[default]
    Jit,
    /// rbpf's interpreter (checks every access at run time; 30-50x slower).
    Interpreter,
}

/// A program ready to run.
pub struct Vm {
    vm: EbpfVmRaw<'static>,
    engine: Engine,
}

impl Vm {
    /// Prepares verified `code`.
    pub(crate) fn new(code: Vec<u8>, engine: Engine) -> Result<Self, String> {
        let code = keep(code);
        let mut vm = EbpfVmRaw::new(Some(code)).map_err(|e| e.to_string())?;
        for (id, f) in TABLE {
            vm.register_helper(id, f).map_err(|e| e.to_string())?;
        }
        if engine == Engine::Jit {
            // The JIT writes into one fixed page and panics past it; the verifier's length
            // limit keeps programs well inside, and a panic here refuses the program.
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| vm.jit_compile()))
                .map_err(|_| "program too large for the JIT".to_string())?
                .map_err(|e| e.to_string())?;
        }
        Ok(Vm { vm, engine })
    }

    /// Runs the program over the context block `mem`.
    pub(crate) fn run(&self, mem: &mut [u8; CTX_LEN]) -> Result<u64, String> {
        match self.engine {
            Engine::Jit => self.run_jit(mem),
            Engine::Interpreter => self.vm.execute_program(mem).map_err(|e| e.to_string()),
        }
    }

    #[allow(unsafe_code)]
    fn run_jit(&self, mem: &mut [u8; CTX_LEN]) -> Result<u64, String> {
        // SAFETY: the program passed `verifier::verify` before it was compiled: every load and
        // store is through r1 (this CTX_LEN-octet block) or r10 (the JIT's 512-octet stack)
        // at constant offsets proved in bounds, every jump lands on an instruction of the program
        // and no path comes back to one (backward jumps pass only when they close no loop), and
        // calls reach only the helpers registered above, which take plain numbers. So the
        // machine code touches no memory but `mem` and its own stack, and always returns.
        unsafe { self.vm.execute_program_jit(mem) }.map_err(|e| e.to_string())
    }
}

/// Instructions of every distinct program loaded so far.
static KEPT: Mutex<Option<HashSet<&'static [u8]>>> = Mutex::new(None);

/// rbpf borrows a program's instructions for the VM's whole life, so they are kept for the
/// process's: each distinct program once (at most `MAX_INSNS` * 8 octets), however often it is
/// loaded again.
fn keep(code: Vec<u8>) -> &'static [u8] {
    let mut kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
    let set = kept.get_or_insert_with(HashSet::new);
    if let Some(&same) = set.get(code.as_slice()) {
        return same;
    }
    let leaked: &'static [u8] = Box::leak(code.into_boxed_slice());
    set.insert(leaked);
    leaked
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_program_is_kept_once() {
        let a = keep(vec![0x95, 0, 0, 0, 0, 0, 0, 0]);
        let b = keep(vec![0x95, 0, 0, 0, 0, 0, 0, 0]);
        assert!(core::ptr::eq(a, b));
    }
}
