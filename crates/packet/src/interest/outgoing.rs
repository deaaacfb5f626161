//! An Interest on its way to the next hop: the octets as received and the changes the next hop
//! gets (a new Nonce, a decremented HopLimit), applied only when the packet is encoded. A
//! forwarding thread hands this to its output stage instead of the whole view: a few words to
//! move, and no name offsets to copy.

use std::cell::RefCell;

use bytes::{Bytes, BytesMut};

use super::{Interest, InterestView, Nonce};
use crate::error::Result;
use crate::tlv::read_single_of;
use crate::tlv_type;

/// An Interest to send, with its pending in-place changes.
#[derive(Debug, Clone)]
pub struct OutgoingInterest {
    /// The Interest element as received, or re-encoded when a field had to be added.
    wire: Bytes,
    /// Offset of the Nonce's value in `wire` and the Nonce to write there.
    nonce: Option<(u32, Nonce)>,
    /// Offset of the HopLimit's value in `wire` and the value to write there.
    hop_limit: Option<(u32, u8)>,
}

impl OutgoingInterest {
    /// The octets to send: the received octets themselves when nothing changes (the usual
    /// case: nonces travel end-to-end and most Interests carry no HopLimit), else a patched copy.
    pub fn encode(&self) -> Bytes {
        if self.nonce.is_none() && self.hop_limit.is_none() {
            return self.wire.clone();
        }
        patched_copy(&self.wire, |copy| {
            if let Some((at, n)) = self.nonce {
                copy[at as usize..at as usize + 4].copy_from_slice(&n.0);
            }
            if let Some((at, h)) = self.hop_limit {
                copy[at as usize] = h;
            }
        })
    }

    /// The value of the Interest's Name (its components' TLVs), read from the octets: for a
    /// consumer of the packet that needs only the name, such as a producer answering it.
    pub fn name_octets(&self) -> Result<&[u8]> {
        let el = read_single_of(&self.wire, tlv_type::INTEREST)?;
        Ok(el.children().expect(tlv_type::NAME)?.value)
    }
}

impl InterestView {
    /// This Interest as it goes on with `nonce` and `hop_limit`. Fields present in the
    /// received octets are changed in place when encoded; an Interest that lacks one of them
    /// (a Nonce added by the forwarder, a HopLimit added or removed) is re-encoded now.
    pub fn outgoing(&self, nonce: Nonce, hop_limit: Option<u8>) -> OutgoingInterest {
        let nonce_patch = match self.nonce_at {
            Some(at) if self.nonce != Some(nonce) => Some((at, nonce)),
            Some(_) => None,
            None => return self.reencoded(nonce, hop_limit),
        };
        let hop_patch = match (self.hop_limit_at, hop_limit) {
            (Some(at), Some(h)) if self.hop_limit != Some(h) => Some((at, h)),
            (Some(_), Some(_)) | (None, None) => None,
            _ => return self.reencoded(nonce, hop_limit),
        };
        OutgoingInterest {
            wire: self.wire().clone(),
            nonce: nonce_patch,
            hop_limit: hop_patch,
        }
    }

    /// The Interest re-encoded with `nonce` and `hop_limit` (a view whose tail is malformed
    /// cannot be re-encoded: it goes on as it came).
    fn reencoded(&self, nonce: Nonce, hop_limit: Option<u8>) -> OutgoingInterest {
        let wire = match Interest::from_view(self.clone()) {
            Ok(mut full) => {
                full.nonce = Some(nonce);
                full.hop_limit = hop_limit;
                full.encode()
            }
            Err(_) => self.wire().clone(),
        };
        OutgoingInterest {
            wire,
            nonce: None,
            hop_limit: None,
        }
    }
}

/// Octets of each buffer the patched copies of a thread are cut from: a forwarder lowers the
/// HopLimit of every Interest that carries one, so patching allocates once per this many
/// octets of such Interests rather than once per Interest.
const PATCH_CHUNK: usize = 64 << 10;

thread_local! {
    /// What is left of the thread's current buffer for patched copies. Each copy shares the
    /// buffer and the last one dropped frees it; a copy lives as long as its frame waits for
    /// its write (a face's queue copies out frames that wait longer, and LpReliability keeps
    /// copies of its own), so a buffer is not kept alive past a few bursts.
    static PATCH_BUFFER: RefCell<BytesMut> = RefCell::new(BytesMut::new());
}

/// A copy of `wire` with `edit` applied, cut from the thread's buffer for patched copies.
fn patched_copy(wire: &[u8], edit: impl FnOnce(&mut [u8])) -> Bytes {
    PATCH_BUFFER.with(|buffer| {
        let mut buffer = buffer.borrow_mut();
        if buffer.capacity() < wire.len() {
            *buffer = BytesMut::with_capacity(PATCH_CHUNK.max(wire.len()));
        }
        buffer.extend_from_slice(wire);
        edit(&mut buffer[..]);
        buffer.split().freeze()
    })
}
