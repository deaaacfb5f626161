//! Where `kite decode` reads its packet from, and how hexadecimal text is told from binary.

use std::io::Read;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use bytes::Bytes;
use clap::Args;

/// The packet to read.
#[derive(Args)]
pub struct InputArgs {
    /// The packet as hexadecimal text; `-` or nothing reads standard input.
    packet: Option<String>,
    /// Read the packet from this file (binary or hexadecimal text).
    #[arg(long, short, conflicts_with = "packet")]
    file: Option<PathBuf>,
}

/// The largest input accepted: far above any NDN packet (8800 octets in practice).
const MAX_INPUT: u64 = 16 << 20;

/// Reads the packet octets the arguments point at.
pub fn read(args: &InputArgs) -> Result<Bytes> {
    let raw = match (&args.packet, &args.file) {
        (Some(hex), None) if hex != "-" => {
            return parse_hex(hex.as_bytes())
                .map(Bytes::from)
                .context("the PACKET argument must be hexadecimal text");
        }
        (_, Some(path)) => {
            let mut buf = Vec::new();
            std::fs::File::open(path)
                .with_context(|| format!("cannot open {}", path.display()))?
                .take(MAX_INPUT)
                .read_to_end(&mut buf)
                .with_context(|| format!("cannot read {}", path.display()))?;
            buf
        }
        _ => {
            let mut buf = Vec::new();
            std::io::stdin()
                .take(MAX_INPUT)
                .read_to_end(&mut buf)
                .context("cannot read standard input")?;
            buf
        }
    };
    if raw.is_empty() {
        bail!("no packet given (pass hexadecimal text, --file PATH, or pipe it on standard input)");
    }
    Ok(Bytes::from(if looks_like_hex(&raw) {
        parse_hex(&raw)?
    } else {
        raw
    }))
}

/// Whether `raw` is hexadecimal text rather than a binary packet. Every NDN packet starts
/// with TLV-TYPE 5, 6 or 100 (0x05, 0x06, 0x64 'd'), none of which begins valid hex text
/// except 'd', and a binary LpPacket's second octet is a length, rarely a hex digit too.
fn looks_like_hex(raw: &[u8]) -> bool {
    raw.iter()
        .all(|b| b.is_ascii_hexdigit() || b.is_ascii_whitespace())
}

/// Decodes hexadecimal text, ignoring whitespace.
fn parse_hex(text: &[u8]) -> Result<Vec<u8>> {
    let digits: Vec<u8> = text
        .iter()
        .copied()
        .filter(|b| !b.is_ascii_whitespace())
        .collect();
    if digits.len() % 2 == 1 {
        bail!(
            "hexadecimal input has an odd number of digits ({})",
            digits.len()
        );
    }
    hex::decode(&digits).context("invalid hexadecimal input")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_text_with_spaces_and_newlines() {
        assert!(looks_like_hex(b"05 03\n07 01 08\n"));
        assert_eq!(parse_hex(b"05 03\n07 01").unwrap(), vec![5, 3, 7, 1]);
        assert!(parse_hex(b"050").is_err());
    }

    #[test]
    fn binary_packets_are_not_taken_for_hex() {
        assert!(!looks_like_hex(&[5, 3, 7, 1, 8]));
        assert!(!looks_like_hex(&[0x64, 0x0A, 0x50]));
    }
}
