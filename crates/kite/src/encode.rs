//! `kite encode`: build Interests, Data and Nacks from the command line.

use anyhow::{anyhow, Context, Result};
use bytes::Bytes;
use clap::{Args, Subcommand};
use kite_packet::{
    ContentType, Data, DigestSha256, Interest, Nack, NackReason, Name, Nonce, OwnedComponent,
};

/// Which packet to build.
#[derive(Subcommand)]
pub enum EncodeCommand {
    /// An Interest.
    Interest(InterestArgs),
    /// A Data, signed with DigestSha256.
    Data(DataArgs),
    /// A Nack for an Interest.
    Nack(NackArgs),
}

/// Fields of an Interest.
#[derive(Args)]
pub struct InterestArgs {
    /// The name, as a URI (e.g. /example/data/seg=0).
    name: String,
    /// Set CanBePrefix: any Data under the name answers.
    #[arg(long)]
    can_be_prefix: bool,
    /// Set MustBeFresh: only fresh Data answers.
    #[arg(long)]
    must_be_fresh: bool,
    /// A ForwardingHint name (repeat for several).
    #[arg(long = "forwarding-hint", value_name = "NAME")]
    forwarding_hint: Vec<String>,
    /// The Nonce, as a number (any u32).
    #[arg(long)]
    nonce: Option<u32>,
    /// InterestLifetime in milliseconds.
    #[arg(long, value_name = "MS")]
    lifetime: Option<u64>,
    /// HopLimit (0-255).
    #[arg(long)]
    hop_limit: Option<u8>,
    /// ApplicationParameters, as hexadecimal (the ParametersSha256Digest is computed).
    #[arg(long, value_name = "HEX")]
    params: Option<String>,
}

/// Fields of a Data.
#[derive(Args)]
pub struct DataArgs {
    /// The name, as a URI.
    name: String,
    /// Content, as text.
    #[arg(long, conflicts_with = "content_hex")]
    content: Option<String>,
    /// Content, as hexadecimal.
    #[arg(long, value_name = "HEX")]
    content_hex: Option<String>,
    /// FreshnessPeriod in milliseconds.
    #[arg(long, value_name = "MS")]
    freshness: Option<u64>,
    /// ContentType number (0 BLOB, 1 LINK, 2 KEY, 3 NACK, 5 PREFIX_ANN).
    #[arg(long)]
    content_type: Option<u64>,
    /// FinalBlockId, as one URI component (e.g. seg=9).
    #[arg(long, value_name = "COMPONENT")]
    final_block_id: Option<String>,
}

/// A Nack and the Interest it refuses.
#[derive(Args)]
pub struct NackArgs {
    /// The Interest's name, as a URI.
    name: String,
    /// NackReason: congestion, duplicate, no-route, or a number.
    #[arg(long, default_value = "no-route")]
    reason: String,
    /// The Interest's Nonce.
    #[arg(long)]
    nonce: Option<u32>,
}

/// Builds the packet and returns it as hexadecimal text with a trailing newline.
pub fn run(cmd: EncodeCommand) -> Result<String> {
    let wire = match cmd {
        EncodeCommand::Interest(a) => interest(a)?.encode(),
        EncodeCommand::Data(a) => data(a)?.sign(&DigestSha256)?,
        EncodeCommand::Nack(a) => {
            let mut i = Interest::new(parse_name(&a.name)?);
            i.nonce = a.nonce.map(Nonce::from);
            Nack::encode_for(parse_reason(&a.reason)?, i.encode())
        }
    };
    Ok(format!("{}\n", hex::encode(wire)))
}

fn parse_name(uri: &str) -> Result<Name> {
    uri.parse().with_context(|| format!("invalid name {uri:?}"))
}

fn parse_hex(what: &str, text: &str) -> Result<Bytes> {
    hex::decode(text)
        .map(Bytes::from)
        .with_context(|| format!("{what} must be hexadecimal"))
}

fn interest(a: InterestArgs) -> Result<Interest> {
    let mut i = Interest::new(parse_name(&a.name)?);
    i.can_be_prefix = a.can_be_prefix;
    i.must_be_fresh = a.must_be_fresh;
    i.forwarding_hint = a
        .forwarding_hint
        .iter()
        .map(|h| parse_name(h))
        .collect::<Result<_>>()?;
    i.nonce = a.nonce.map(Nonce::from);
    i.lifetime = a.lifetime;
    i.hop_limit = a.hop_limit;
    i.app_params = a.params.map(|p| parse_hex("--params", &p)).transpose()?;
    if i.name.is_empty() {
        return Err(anyhow!("an Interest name needs at least one component"));
    }
    Ok(i)
}

fn data(a: DataArgs) -> Result<Data> {
    let content = match (a.content, a.content_hex) {
        (Some(text), _) => Bytes::from(text),
        (None, Some(h)) => parse_hex("--content-hex", &h)?,
        (None, None) => Bytes::new(),
    };
    let mut d = Data::new(parse_name(&a.name)?, content);
    d.meta.freshness_period = a.freshness;
    d.meta.content_type = a.content_type.map(ContentType);
    if let Some(c) = a.final_block_id {
        let n = parse_name(&c)?;
        if n.len() != 1 {
            return Err(anyhow!(
                "--final-block-id takes exactly one component, got {c:?}"
            ));
        }
        d.meta.final_block_id = n.get(0).map(OwnedComponent::from);
    }
    Ok(d)
}

fn parse_reason(r: &str) -> Result<NackReason> {
    Ok(match r {
        "congestion" => NackReason::CONGESTION,
        "duplicate" => NackReason::DUPLICATE,
        "no-route" => NackReason::NO_ROUTE,
        n => NackReason(n.parse().map_err(|_| {
            anyhow!("--reason must be congestion, duplicate, no-route or a number, not {n:?}")
        })?),
    })
}
