//! Reads a strategy program out of an ELF object as `clang -O2 -target bpf -c` writes it: the
//! code of section `strategy`, with calls to helpers declared `extern` resolved from their
//! relocations. Anything else the program would need (global data, maps, other functions)
//! is refused.

use object::{Object, ObjectSection, ObjectSymbol, RelocationTarget, SectionKind};

use crate::abi::helper;

/// The section a program's entry function lives in (`SEC("strategy")` in C).
pub const SECTION: &str = "strategy";

/// Why an object file holds no usable program.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ElfError {
    /// Not an ELF object for little-endian eBPF.
    #[error("not an eBPF ELF object: {0}")]
    NotBpf(String),
    /// No `strategy` section.
    #[error("no section named \"{SECTION}\" (put the program in SEC(\"{SECTION}\"))")]
    NoProgram,
    /// A relocation that is not a call to a Kite helper.
    #[error("unsupported relocation at offset {0} (symbol {1:?}): programs may use no global data, maps or other functions")]
    Relocation(u64, String),
}

/// The program's instructions, helper calls resolved.
pub fn program(elf: &[u8]) -> Result<Vec<u8>, ElfError> {
    let file = object::File::parse(elf).map_err(|e| ElfError::NotBpf(e.to_string()))?;
    if file.architecture() != object::Architecture::Bpf || !file.is_little_endian() {
        return Err(ElfError::NotBpf(format!("{:?}", file.architecture())));
    }
    let section = file
        .sections()
        .find(|s| s.name() == Ok(SECTION) && s.kind() == SectionKind::Text)
        .ok_or(ElfError::NoProgram)?;
    let mut code = section
        .data()
        .map_err(|e| ElfError::NotBpf(e.to_string()))?
        .to_vec();
    for (offset, reloc) in section.relocations() {
        let symbol = match reloc.target() {
            RelocationTarget::Symbol(i) => file.symbol_by_index(i).ok(),
            _ => None,
        };
        let name = symbol
            .as_ref()
            .and_then(|s| s.name().ok())
            .unwrap_or("")
            .to_string();
        let id = helper::ALL
            .iter()
            .find(|(_, n)| *n == name)
            .map(|(id, _)| *id)
            .filter(|_| symbol.as_ref().is_some_and(|s| s.is_undefined()));
        let at = usize::try_from(offset).unwrap_or(usize::MAX);
        let is_call = code.get(at) == Some(&0x85);
        match id {
            Some(id) if is_call && at % 8 == 0 && at + 8 <= code.len() => {
                // a helper call: `call IMM` with src 0 and the helper id
                code[at + 1] &= 0x0f;
                code[at + 4..at + 8].copy_from_slice(&id.to_le_bytes());
            }
            _ => return Err(ElfError::Relocation(offset, name)),
        }
    }
    Ok(code)
}
