//! `kite-packet`: the NDN packet codec every other part of Kite uses.
//!
//! It implements the NDN Packet Format v0.3 (TLV, names, Interest, Data), the naming
//! conventions' typed components, and NDNLPv2 (LpPacket, Nack, PIT token, fragmentation
//! fields), in two decoding depths over the same types:
//!
//! - **full decode** ([`Interest::decode`], [`Data::decode`], [`LpPacket::decode`]) for
//!   applications: every field, signatures, the parameters digest checked;
//! - **forwarder view** ([`InterestView`], [`DataView`]) for the data plane: only what
//!   forwarding reads (name, flags, nonce, lifetime, hop limit, forwarding hint; for Data the
//!   name, freshness and where Content starts), stopping before ApplicationParameters or
//!   Content, as NDN-DPDK's decoder does (NDN-DPDK paper, section 3).
//!
//! Decoding is zero-copy: values are slices of the received `Bytes`, and a name of up to 16
//! components decodes with no allocation. Encoding writes exact-size buffers, and an NDNLPv2
//! header can be written around an already-encoded packet without copying it
//! ([`LpHeader::encode_header`]).
//!
//! Invariants: every decoder returns a typed [`DecodeError`] on bad input and never panics;
//! VAR-NUMBERs are accepted only in shortest form, so equal names have equal octets;
//! recognized elements must come in the grammar's order, at most once; unknown critical elements
//! are errors and unknown non-critical ones are skipped (NDNLPv2: unknown fields are ignored
//! only in the reserved ignorable range).

pub mod data;
pub mod encode;
pub mod error;
mod headroom;
pub mod interest;
pub mod lp;
pub mod nack;
pub mod name;
pub mod packet;
pub mod pool;
pub mod signature;
#[cfg(test)]
mod testutil;
pub mod tlv;
pub mod tlv_type;
pub mod varnum;

pub use data::{ContentType, Data, DataView, MetaInfo};
pub use error::{DecodeError, Result};
pub use interest::{Interest, InterestView, Nonce, OutgoingInterest};
pub use lp::{
    CachePolicy, FragmentError, Fragments, HopHeader, LpHeader, LpPacket, NackReason, Peeled,
    PitToken,
};
pub use nack::Nack;
pub use name::{Component, Name, OwnedComponent, UriError};
pub use packet::{NetPacket, NetPacketView};
pub use signature::{
    DigestSha256, KeyLocator, SignError, SignatureBytes, SignatureInfo, SignatureType, Signer,
    ValidityPeriod,
};
