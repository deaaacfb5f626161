//! The load-time verifier. The JIT checks nothing at run time, so a program runs only if this
//! proves, instruction by instruction, that it cannot leave its sandbox:
//! - every opcode is one the VM implements, minus atomics, packet loads, map references and
//!   bpf-to-bpf calls; registers are r0–r10 and r10 is never written;
//! - every call names a Kite helper;
//! - every jump lands on an instruction and no path comes back to one (no loops); the last
//!   instruction cannot fall through; so a run executes each instruction at most once;
//! - no division or modulo by a constant zero (at run time a zero divisor yields 0, the eBPF
//!   rule);
//! - every load and store goes through a register known, on every path, to point into the
//!   context (`r1` at entry, or a copy of it plus constants) or the stack (`r10` plus
//!   constants), with a constant offset that keeps the whole access inside; stores into the
//!   context land only in the scratch areas.
//!
//! Register types flow forward through the program; where paths meet, a register whose type
//! differs between them is no longer a pointer. A pointer spilled to the stack comes back as a
//! plain number. The rule is simple and sound; programs clang emits at -O2 pass it.

use crate::abi::{helper, off, CTX_LEN, STACK_LEN, WRITABLE};
use kite_fw::strategy::FIB_SCRATCH_LEN;

/// The most instructions a program may have (the JIT has one 4 KiB page of code).
pub const MAX_INSNS: usize = 400;

/// Why a program was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    /// No instructions, or a size that is not whole instructions.
    #[error("program is empty or not a whole number of instructions")]
    Empty,
    /// More instructions than [`MAX_INSNS`].
    #[error("program has {0} instructions, more than {MAX_INSNS}")]
    TooLong(usize),
    /// An opcode the VM does not run or Kite does not allow.
    #[error("instruction {0}: opcode {1:#04x} is not allowed")]
    BadOpcode(usize, u8),
    /// A register number above r10, or a write to r10.
    #[error("instruction {0}: bad register")]
    BadRegister(usize),
    /// A call to something that is not a Kite helper.
    #[error("instruction {0}: call to unknown helper {1}")]
    BadHelper(usize, i32),
    /// A jump outside the program or into a 16-octet load.
    #[error("instruction {0}: jump to {1} is outside the program")]
    BadJump(usize, i64),
    /// A path that comes back to an instruction (a loop).
    #[error("instruction {0}: jump back to {1} makes a loop")]
    Loop(usize, usize),
    /// The last instruction can fall off the end.
    #[error("the program can run past its last instruction")]
    FallsOff,
    /// Division or modulo by the constant 0.
    #[error("instruction {0}: division by zero")]
    DivByZero(usize),
    /// A load or store not provably inside the context or the stack.
    #[error("instruction {0}: memory access {1}")]
    BadAccess(usize, &'static str),
}

/// Bound on tracked numbers and offsets, so their arithmetic never wraps.
const LIMIT: i64 = 1 << 40;

/// What a register is known to hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reg {
    /// A number (or anything not known to be a pointer).
    Scalar,
    /// A number somewhere in `lo..=hi` (a pointer may be moved by it).
    Num(i64, i64),
    /// The context plus an offset somewhere in `lo..=hi`.
    Ctx(i64, i64),
    /// The stack top (`r10`) plus an offset somewhere in `lo..=hi`.
    Stack(i64, i64),
}

impl Reg {
    /// The register where paths with `self` and `other` meet.
    fn meet(self, other: Reg) -> Reg {
        match (self, other) {
            (Reg::Ctx(a, b), Reg::Ctx(c, d)) => Reg::Ctx(a.min(c), b.max(d)),
            (Reg::Stack(a, b), Reg::Stack(c, d)) => Reg::Stack(a.min(c), b.max(d)),
            (Reg::Num(a, b), Reg::Num(c, d)) => Reg::Num(a.min(c), b.max(d)),
            _ => Reg::Scalar,
        }
    }

    /// `self` with its range mapped by `f`, unknown if it leaves `±LIMIT`.
    fn map(self, f: impl Fn(i64) -> Option<i64>) -> Reg {
        let within = |v: i64| f(v).filter(|r| r.abs() < LIMIT);
        let mk = |lo, hi, make: fn(i64, i64) -> Reg| match (within(lo), within(hi)) {
            (Some(a), Some(b)) => make(a.min(b), a.max(b)),
            _ => Reg::Scalar,
        };
        match self {
            Reg::Ctx(lo, hi) => mk(lo, hi, Reg::Ctx),
            Reg::Stack(lo, hi) => mk(lo, hi, Reg::Stack),
            Reg::Num(lo, hi) => mk(lo, hi, Reg::Num),
            Reg::Scalar => Reg::Scalar,
        }
    }

    /// `self + other` when at most one is a pointer and the other a known range.
    fn add(self, other: Reg) -> Reg {
        match (self, other) {
            (Reg::Num(a, b), Reg::Num(c, d)) => Reg::Num(a, b).map2(c, d, Reg::Num),
            (Reg::Ctx(a, b), Reg::Num(c, d)) | (Reg::Num(c, d), Reg::Ctx(a, b)) => {
                Reg::Num(a, b).map2(c, d, Reg::Ctx)
            }
            (Reg::Stack(a, b), Reg::Num(c, d)) | (Reg::Num(c, d), Reg::Stack(a, b)) => {
                Reg::Num(a, b).map2(c, d, Reg::Stack)
            }
            _ => Reg::Scalar,
        }
    }

    /// The range `self + [c, d]`, as `make` builds it.
    fn map2(self, c: i64, d: i64, make: fn(i64, i64) -> Reg) -> Reg {
        match self {
            Reg::Num(a, b) if (a + c).abs() < LIMIT && (b + d).abs() < LIMIT => make(a + c, b + d),
            _ => Reg::Scalar,
        }
    }

    /// Whether it is a known non-negative number.
    fn is_num(self) -> bool {
        matches!(self, Reg::Num(lo, _) if lo >= 0)
    }
}

type State = [Reg; 11];

/// One decoded instruction.
#[derive(Debug, Clone, Copy)]
struct Insn {
    op: u8,
    dst: usize,
    src: usize,
    off: i16,
    imm: i32,
}

fn decode(code: &[u8], pc: usize) -> Insn {
    let b = &code[pc * 8..pc * 8 + 8];
    Insn {
        op: b[0],
        dst: usize::from(b[1] & 0x0f),
        src: usize::from(b[1] >> 4),
        off: i16::from_le_bytes([b[2], b[3]]),
        imm: i32::from_le_bytes([b[4], b[5], b[6], b[7]]),
    }
}

/// What the verifier learned of an accepted program.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Verified {
    /// Whether it calls the name-component helpers (the name is then made available).
    pub reads_name: bool,
    /// Whether it may read or write the FIB entry's scratch area: only then does a trigger
    /// copy it in and out of the per-thread FIB area (a likely cache miss).
    pub uses_fib_scratch: bool,
    /// Whether it calls `nexthop_srtt_us`: only then are RTTs measured on Data and looked up
    /// per trigger.
    pub reads_rtt: bool,
}

/// Checks `code` (raw instructions, helper calls already resolved).
pub fn verify(code: &[u8]) -> Result<Verified, VerifyError> {
    if code.is_empty() || !code.len().is_multiple_of(8) {
        return Err(VerifyError::Empty);
    }
    let n = code.len() / 8;
    if n > MAX_INSNS {
        return Err(VerifyError::TooLong(n));
    }
    let succs = successors(code, n)?;
    let order = topological(&succs)?;
    let mut entry: State = [Reg::Scalar; 11];
    entry[1] = Reg::Ctx(0, 0);
    entry[10] = Reg::Stack(0, 0);
    // The state at each instruction, met over the paths that reach it.
    let mut states: Vec<Option<State>> = vec![None; n];
    states[0] = Some(entry);
    let mut info = Verified::default();
    let mut reached = vec![false; n];
    for &pc in &order {
        reached[pc] = true;
        let mut st = states[pc].expect("reachable instructions have a state");
        step(pc, decode(code, pc), &mut st, &mut info)?;
        for &next in &succs[pc] {
            merge(&mut states[next], st);
        }
    }
    let mut pc = 0;
    while pc < n {
        let insn = decode(code, pc);
        if !reached[pc] {
            check_shape(pc, insn)?;
        }
        pc += if insn.op == 0x18 { 2 } else { 1 };
    }
    Ok(info)
}

/// Where control may go after each instruction (empty for `exit` and for the second halves
/// of `lddw`).
fn successors(code: &[u8], n: usize) -> Result<Vec<Vec<usize>>, VerifyError> {
    let mut succs = vec![Vec::new(); n];
    let mut second_half = vec![false; n];
    let mut pc = 0;
    while pc < n {
        let insn = decode(code, pc);
        if insn.op == 0x18 {
            if pc + 1 >= n || decode(code, pc + 1).op != 0 {
                return Err(VerifyError::BadOpcode(pc, insn.op));
            }
            second_half[pc + 1] = true;
            succs[pc].push(pc + 2);
            pc += 2;
            continue;
        }
        let target = pc as i64 + 1 + i64::from(insn.off);
        let is_jump = insn.op & 0x07 == 0x05;
        match (is_jump, insn.op & 0xf0) {
            (true, 0x90) => {}
            (true, 0x80) => succs[pc].push(pc + 1),
            (true, code) => {
                let t = usize::try_from(target)
                    .ok()
                    .filter(|&t| t < n)
                    .ok_or(VerifyError::BadJump(pc, target))?;
                succs[pc].push(t);
                if code != 0x00 {
                    succs[pc].push(pc + 1);
                }
            }
            (false, _) => succs[pc].push(pc + 1),
        }
        pc += 1;
    }
    for (pc, s) in succs.iter().enumerate() {
        for &t in s {
            if t == n {
                return Err(VerifyError::FallsOff);
            }
            if second_half[t] {
                return Err(VerifyError::BadJump(pc, t as i64));
            }
        }
    }
    Ok(succs)
}

/// The instructions reachable from 0, each after every instruction that can lead to it;
/// `Loop` if some path comes back to an instruction (no loops, so every run is at most
/// `n` instructions long).
fn topological(succs: &[Vec<usize>]) -> Result<Vec<usize>, VerifyError> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Open,
        Done,
    }
    let mut mark = vec![Mark::New; succs.len()];
    let mut post = Vec::with_capacity(succs.len());
    let mut stack = vec![(0usize, 0usize)];
    mark[0] = Mark::Open;
    while let Some(&mut (pc, ref mut k)) = stack.last_mut() {
        if let Some(&next) = succs[pc].get(*k) {
            *k += 1;
            match mark[next] {
                Mark::Open => return Err(VerifyError::Loop(pc, next)),
                Mark::Done => {}
                Mark::New => {
                    mark[next] = Mark::Open;
                    stack.push((next, 0));
                }
            }
        } else {
            mark[pc] = Mark::Done;
            post.push(pc);
            stack.pop();
        }
    }
    post.reverse();
    Ok(post)
}

fn merge(slot: &mut Option<State>, st: State) {
    match slot {
        None => *slot = Some(st),
        Some(old) => {
            for (o, s) in old.iter_mut().zip(st) {
                *o = o.meet(s);
            }
        }
    }
}

/// Checks an unreachable instruction's opcode and registers only.
fn check_shape(pc: usize, insn: Insn) -> Result<(), VerifyError> {
    let mut st: State = [Reg::Scalar; 11];
    let mut info = Verified::default();
    match step(pc, insn, &mut st, &mut info) {
        Err(VerifyError::BadAccess(..)) | Ok(_) => Ok(()),
        Err(e) => Err(e),
    }
}

fn size_of(op: u8) -> i64 {
    match op & 0x18 {
        0x00 => 4,
        0x08 => 2,
        0x10 => 1,
        _ => 8,
    }
}

/// Checks one instruction against `st` and applies its effect.
fn step(pc: usize, i: Insn, st: &mut State, info: &mut Verified) -> Result<(), VerifyError> {
    if i.dst > 10 || i.src > 10 {
        return Err(VerifyError::BadRegister(pc));
    }
    let class = i.op & 0x07;
    let writes_dst = matches!(class, 0x00 | 0x01 | 0x04 | 0x07);
    if writes_dst && i.dst == 10 {
        return Err(VerifyError::BadRegister(pc));
    }
    match class {
        // ALU (32-bit) and ALU64
        0x04 | 0x07 => {
            let code = i.op & 0xf0;
            let from_reg = i.op & 0x08 != 0;
            if !matches!(code, 0x00..=0xd0) || (code == 0x80 && from_reg) {
                return Err(VerifyError::BadOpcode(pc, i.op));
            }
            if code == 0xd0 {
                // byte swap: imm is the width
                if class != 0x04 || !matches!(i.imm, 16 | 32 | 64) {
                    return Err(VerifyError::BadOpcode(pc, i.op));
                }
                st[i.dst] = Reg::Scalar;
                return Ok(());
            }
            if matches!(code, 0x30 | 0x90) && !from_reg && i.imm == 0 {
                return Err(VerifyError::DivByZero(pc));
            }
            let (d, imm) = (st[i.dst], i64::from(i.imm));
            st[i.dst] = match (class, code, from_reg) {
                (0x07, 0xb0, true) => st[i.src],
                (_, 0xb0, false) if class == 0x07 || imm >= 0 => Reg::Num(imm, imm),
                (0x07, 0x00, false) => d.map(|v| Some(v + imm)),
                (0x07, 0x10, false) => d.map(|v| Some(v - imm)),
                (0x07, 0x00, true) => d.add(st[i.src]),
                (0x07, 0x60, false) if d.is_num() && (0..32).contains(&imm) => {
                    d.map(|v| v.checked_mul(1 << imm))
                }
                (0x07, 0x20, false) if d.is_num() && (0..LIMIT).contains(&imm) => {
                    d.map(|v| v.checked_mul(imm))
                }
                (0x07, 0x50, false) if imm >= 0 => match d {
                    Reg::Num(lo, hi) if lo >= 0 => Reg::Num(0, hi.min(imm)),
                    _ => Reg::Num(0, imm),
                },
                _ => Reg::Scalar,
            };
            Ok(())
        }
        // LD: only lddw of a plain constant
        0x00 => {
            if i.op != 0x18 || i.src != 0 {
                return Err(VerifyError::BadOpcode(pc, i.op));
            }
            st[i.dst] = Reg::Scalar;
            Ok(())
        }
        // LDX
        0x01 => {
            if i.op & 0xe0 != 0x60 {
                return Err(VerifyError::BadOpcode(pc, i.op));
            }
            info.uses_fib_scratch |= check_access(pc, st[i.src], i.off, size_of(i.op), false)?;
            st[i.dst] = Reg::Scalar;
            Ok(())
        }
        // ST (immediate) and STX (register); no atomics
        0x02 | 0x03 => {
            if i.op & 0xe0 != 0x60 {
                return Err(VerifyError::BadOpcode(pc, i.op));
            }
            info.uses_fib_scratch |= check_access(pc, st[i.dst], i.off, size_of(i.op), true)?;
            Ok(())
        }
        // JMP
        0x05 => {
            let code = i.op & 0xf0;
            match code {
                0x00 => Ok(()),
                0x80 => {
                    if i.src != 0 || i.op != 0x85 {
                        return Err(VerifyError::BadOpcode(pc, i.op));
                    }
                    let known = helper::ALL
                        .iter()
                        .any(|&(id, _)| i64::from(id) == i64::from(i.imm));
                    if !known {
                        return Err(VerifyError::BadHelper(pc, i.imm));
                    }
                    if matches!(
                        i.imm as u32,
                        helper::NAME_COMPONENT_LEN | helper::NAME_COMPONENT_BYTE
                    ) {
                        info.reads_name = true;
                    }
                    info.reads_rtt |= i.imm as u32 == helper::NEXTHOP_SRTT_US;
                    for r in st.iter_mut().take(6) {
                        *r = Reg::Scalar;
                    }
                    Ok(())
                }
                0x90 => {
                    if i.op != 0x95 {
                        return Err(VerifyError::BadOpcode(pc, i.op));
                    }
                    Ok(())
                }
                0x10..=0x70 | 0xa0..=0xd0 => Ok(()),
                _ => Err(VerifyError::BadOpcode(pc, i.op)),
            }
        }
        _ => Err(VerifyError::BadOpcode(pc, i.op)),
    }
}

/// Checks that `size` octets at `base + off` lie inside the context (its scratch areas for a
/// store) or the stack; returns whether the access may touch the FIB scratch area.
fn check_access(
    pc: usize,
    base: Reg,
    off: i16,
    size: i64,
    store: bool,
) -> Result<bool, VerifyError> {
    match base {
        Reg::Scalar | Reg::Num(..) => Err(VerifyError::BadAccess(
            pc,
            "through a register not known to point to the context or stack",
        )),
        Reg::Ctx(lo_at, hi_at) => {
            let (at, last) = (lo_at + i64::from(off), hi_at + i64::from(off));
            let (lo, hi) = if store {
                (WRITABLE.start as i64, WRITABLE.end as i64)
            } else {
                (0, CTX_LEN as i64)
            };
            if at < lo || last + size > hi {
                return Err(VerifyError::BadAccess(
                    pc,
                    if store {
                        "outside the scratch areas"
                    } else {
                        "outside the context"
                    },
                ));
            }
            let scratch = off::FIB_SCRATCH as i64..(off::FIB_SCRATCH + FIB_SCRATCH_LEN) as i64;
            Ok(at < scratch.end && scratch.start < last + size)
        }
        Reg::Stack(lo_at, hi_at) => {
            let (at, last) = (lo_at + i64::from(off), hi_at + i64::from(off));
            if at < -(STACK_LEN as i64) || last + size > 0 {
                return Err(VerifyError::BadAccess(pc, "outside the stack"));
            }
            Ok(false)
        }
    }
}

#[cfg(test)]
mod tests;
