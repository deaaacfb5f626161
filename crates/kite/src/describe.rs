//! Human-readable rendering of decoded packets for `kite decode`.

use std::fmt::Write;

use anyhow::{Context, Result};
use bytes::Bytes;
use kite_packet::{
    Data, Interest, KeyLocator, LpHeader, LpPacket, Nack, NetPacket, SignatureInfo, SignatureType,
};

/// Decodes a frame (LpPacket or bare packet) and describes every field.
pub fn describe(frame: Bytes) -> Result<String> {
    let total = frame.len();
    let lp = LpPacket::decode(frame).context("not a valid NDN packet")?;
    let mut out = String::new();
    if !lp.header.is_empty() || lp.fragment.is_none() {
        writeln!(out, "LpPacket ({total} octets)")?;
        lp_header(&mut out, &lp.header)?;
    }
    if lp.is_fragmented() {
        let len = lp.fragment.as_ref().map_or(0, Bytes::len);
        writeln!(out, "Fragment: {len} octets (one piece of a larger packet)")?;
        return Ok(out);
    }
    let Some(fragment) = lp.fragment.clone() else {
        return Ok(out);
    };
    let len = fragment.len();
    let (_, packet) = NetPacket::decode_frame(
        LpPacket {
            header: lp.header,
            fragment: Some(fragment),
        }
        .encode(),
    )
    .context("not a valid NDN packet")?;
    match packet {
        NetPacket::Interest(i) => interest(&mut out, &i, len)?,
        NetPacket::Data(d) => data(&mut out, &d, len)?,
        NetPacket::Nack(n) => nack(&mut out, &n, len)?,
    }
    Ok(out)
}

fn lp_header(out: &mut String, h: &LpHeader) -> std::fmt::Result {
    let mut field = |name: &str, value: Option<String>| match value {
        Some(v) => writeln!(out, "  {name}: {v}"),
        None => Ok(()),
    };
    field("Sequence", h.sequence.map(|s| s.to_string()))?;
    field("FragIndex", h.frag_index.map(|s| s.to_string()))?;
    field("FragCount", h.frag_count.map(|s| s.to_string()))?;
    field("PitToken", h.pit_token.map(|t| hex::encode(t.as_slice())))?;
    field("Nack", h.nack.map(|r| nack_reason(r.0).to_string()))?;
    field("IncomingFaceId", h.incoming_face_id.map(|s| s.to_string()))?;
    field("NextHopFaceId", h.next_hop_face_id.map(|s| s.to_string()))?;
    field(
        "CachePolicy",
        h.cache_policy.map(|p| {
            if p.0 == 1 {
                "NoCache".into()
            } else {
                p.0.to_string()
            }
        }),
    )?;
    field("CongestionMark", h.congestion_mark.map(|s| s.to_string()))?;
    for a in &h.acks {
        field("Ack", Some(a.to_string()))?;
    }
    field("TxSequence", h.tx_sequence.map(|s| s.to_string()))?;
    field("NonDiscovery", h.non_discovery.then(String::new))?;
    field(
        "PrefixAnnouncement",
        h.prefix_announcement
            .as_ref()
            .map(|p| format!("{} octets", p.len())),
    )
}

fn interest(out: &mut String, i: &Interest, len: usize) -> std::fmt::Result {
    writeln!(out, "Interest {} ({len} octets)", i.name)?;
    if i.can_be_prefix {
        writeln!(out, "  CanBePrefix")?;
    }
    if i.must_be_fresh {
        writeln!(out, "  MustBeFresh")?;
    }
    for h in &i.forwarding_hint {
        writeln!(out, "  ForwardingHint: {h}")?;
    }
    if let Some(n) = i.nonce {
        writeln!(out, "  Nonce: {}", hex::encode(n.0))?;
    }
    if let Some(l) = i.lifetime {
        writeln!(out, "  InterestLifetime: {l} ms")?;
    }
    if let Some(h) = i.hop_limit {
        writeln!(out, "  HopLimit: {h}")?;
    }
    if let Some(p) = &i.app_params {
        writeln!(out, "  ApplicationParameters: {}", octets(p))?;
    }
    if let Some(s) = &i.sig_info {
        signature(out, "InterestSignatureInfo", s)?;
    }
    if let Some(v) = &i.sig_value {
        writeln!(out, "  InterestSignatureValue: {} octets", v.len())?;
    }
    Ok(())
}

fn data(out: &mut String, d: &Data, len: usize) -> std::fmt::Result {
    writeln!(out, "Data {} ({len} octets)", d.name)?;
    if let Some(t) = d.meta.content_type {
        writeln!(out, "  ContentType: {}", content_type(t.0))?;
    }
    if let Some(f) = d.meta.freshness_period {
        writeln!(out, "  FreshnessPeriod: {f} ms")?;
    }
    if let Some(c) = &d.meta.final_block_id {
        writeln!(out, "  FinalBlockId: {c}")?;
    }
    if let Some(c) = &d.content {
        writeln!(out, "  Content: {}", octets(c))?;
    }
    signature(out, "SignatureInfo", &d.sig_info)?;
    writeln!(out, "  SignatureValue: {} octets", d.sig_value.len())?;
    writeln!(
        out,
        "  ImplicitSha256Digest: {}",
        hex::encode(d.implicit_digest())
    )
}

fn nack(out: &mut String, n: &Nack, len: usize) -> std::fmt::Result {
    writeln!(out, "Nack {} for:", nack_reason(n.reason.0))?;
    interest(out, &n.interest, len)
}

fn signature(out: &mut String, label: &str, s: &SignatureInfo) -> std::fmt::Result {
    write!(out, "  {label}: {}", signature_type(s.sig_type))?;
    match &s.key_locator {
        Some(KeyLocator::Name(n)) => write!(out, " key={n}")?,
        Some(KeyLocator::KeyDigest(d)) => write!(out, " key-digest={}", hex::encode(d))?,
        None => {}
    }
    if let Some(v) = &s.validity {
        write!(
            out,
            " valid={}..{}",
            String::from_utf8_lossy(&v.not_before),
            String::from_utf8_lossy(&v.not_after)
        )?;
    }
    if let Some(n) = &s.nonce {
        write!(out, " nonce={}", hex::encode(n))?;
    }
    if let Some(t) = s.time {
        write!(out, " time={t}")?;
    }
    if let Some(q) = s.seq_num {
        write!(out, " seq={q}")?;
    }
    writeln!(out)
}

/// Octet count, plus the text when it is short printable ASCII.
fn octets(b: &[u8]) -> String {
    let printable = !b.is_empty() && b.len() <= 64 && b.iter().all(|c| (0x20..0x7F).contains(c));
    if printable {
        format!("{} octets \"{}\"", b.len(), String::from_utf8_lossy(b))
    } else {
        format!("{} octets", b.len())
    }
}

fn signature_type(t: SignatureType) -> String {
    match t {
        SignatureType::DIGEST_SHA256 => "DigestSha256".into(),
        SignatureType::SHA256_WITH_RSA => "SignatureSha256WithRsa".into(),
        SignatureType::SHA256_WITH_ECDSA => "SignatureSha256WithEcdsa".into(),
        SignatureType::HMAC_WITH_SHA256 => "SignatureHmacWithSha256".into(),
        SignatureType::ED25519 => "SignatureEd25519".into(),
        SignatureType::NULL => "Null".into(),
        SignatureType(n) => format!("SignatureType {n}"),
    }
}

fn content_type(t: u64) -> String {
    match t {
        0 => "BLOB".into(),
        1 => "LINK".into(),
        2 => "KEY".into(),
        3 => "NACK".into(),
        5 => "PREFIX_ANN".into(),
        n => n.to_string(),
    }
}

fn nack_reason(r: u64) -> &'static str {
    match r {
        0 => "(no reason)",
        50 => "Congestion",
        100 => "Duplicate",
        150 => "NoRoute",
        _ => "(unknown reason)",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kite_packet::{DigestSha256, NackReason, Nonce, OwnedComponent};

    #[test]
    fn describes_interest_fields() {
        let mut i = Interest::new("/a/seg=1".parse().unwrap());
        i.can_be_prefix = true;
        i.nonce = Some(Nonce::from(0x0102_0304));
        i.lifetime = Some(100);
        let text = describe(i.encode()).unwrap();
        assert!(text.starts_with("Interest /a/seg=1 ("), "{text}");
        assert!(text.contains("  CanBePrefix\n"));
        assert!(text.contains("  Nonce: 01020304\n"));
        assert!(text.contains("  InterestLifetime: 100 ms\n"));
    }

    #[test]
    fn describes_data_and_nack() {
        let mut d = Data::new("/d".parse().unwrap(), &b"hi"[..]);
        d.meta.final_block_id = Some(OwnedComponent::segment(3));
        let text = describe(d.sign(&DigestSha256).unwrap()).unwrap();
        assert!(text.contains("  Content: 2 octets \"hi\"\n"), "{text}");
        assert!(text.contains("  FinalBlockId: seg=3\n"));
        assert!(text.contains("  SignatureInfo: DigestSha256\n"));
        let nack = Nack::encode_for(
            NackReason::NO_ROUTE,
            Interest::new("/n".parse().unwrap()).encode(),
        );
        let text = describe(nack).unwrap();
        assert!(text.contains("  Nack: NoRoute\n"), "{text}");
        assert!(text.contains("Nack NoRoute for:\nInterest /n"));
    }

    #[test]
    fn bad_packets_get_the_typed_reason() {
        let err = describe(Bytes::from_static(&[5, 5, 7, 3, 8, 1, b'x', 10, 1])).unwrap_err();
        assert!(format!("{err:#}").contains("not a valid NDN packet"));
    }
}
