//! `kite dump`: NDN packets on an interface, one line each (as ndndump): time, direction,
//! addresses, then Interest, Data or Nack with its name and key fields. It captures every
//! frame with an AF_PACKET socket (CAP_NET_RAW) and decodes NDN over Ethernet (EtherType
//! 0x8624), and over UDP and TCP on ports 6363 and 56363 (IPv4 and IPv6), bare or in NDNLPv2
//! frames. Frames come from anyone: every length is checked before it is read, and a frame
//! that does not decode is printed as such, never trusted.

use std::fmt::Write as _;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::sync::atomic::Ordering;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result};
use bytes::Bytes;
use clap::Args;
use kite_app::error::nack_reason_text;
use kite_face::capture::{Capture, Direction};
use kite_packet::{varnum::read_varnum, LpPacket, NetPacket};

use super::stop_on_signal;

/// NDN's EtherType.
const ETHERTYPE_NDN: u16 = 0x8624;
/// NDN's UDP and TCP ports: unicast and multicast.
const NDN_PORTS: [u16; 2] = [6363, 56363];
/// The largest frame read whole (longer ones are truncated, and then fail to decode).
const SNAPLEN: usize = 65_536;

/// `kite dump` options.
#[derive(Args, Debug)]
pub struct DumpArgs {
    /// The interface to capture on (e.g. eth0, lo).
    #[arg(short = 'i', long)]
    interface: String,
    /// Stop after this many NDN packets [default: until Ctrl-C].
    #[arg(short = 'c', long)]
    count: Option<u64>,
}

/// Runs `kite dump`.
pub fn run(args: DumpArgs) -> Result<String> {
    let stop = stop_on_signal()?;
    let mut capture = Capture::open(&args.interface)
        .with_context(|| format!("capturing on {}", args.interface))?;
    eprintln!("kite dump: listening on {}", args.interface);
    let mut buf = vec![0u8; SNAPLEN];
    let mut printed = 0u64;
    while !stop.load(Ordering::Acquire) && args.count.is_none_or(|c| printed < c) {
        let Some((n, dir)) = capture.next(&mut buf, 200)? else {
            continue;
        };
        let Some(line) = describe_frame(&buf[..n.min(buf.len())]) else {
            continue;
        };
        let dir = match dir {
            Direction::In => "in ",
            Direction::Out => "out",
        };
        println!("{} {dir} {line}", timestamp());
        printed += 1;
    }
    Ok(String::new())
}

/// Seconds since the Unix epoch, to the microsecond.
fn timestamp() -> String {
    let t = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    format!("{}.{:06}", t.as_secs(), t.subsec_micros())
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn mac(b: &[u8]) -> String {
    b.iter()
        .map(|o| format!("{o:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// One line for an Ethernet frame that carries NDN; `None` for any other frame.
pub fn describe_frame(frame: &[u8]) -> Option<String> {
    let src = frame.get(6..12)?;
    let dst = frame.get(0..6)?;
    let mut ethertype = u16_at(frame, 12)?;
    let mut at = 14;
    // 802.1Q and 802.1ad tags.
    while ethertype == 0x8100 || ethertype == 0x88a8 {
        ethertype = u16_at(frame, at + 2)?;
        at += 4;
    }
    let payload = frame.get(at..)?;
    match ethertype {
        ETHERTYPE_NDN => Some(format!(
            "{} > {} ether {}",
            mac(src),
            mac(dst),
            describe_ndn(payload)
        )),
        0x0800 => ipv4(payload),
        0x86dd => ipv6(payload),
        _ => None,
    }
}

fn ipv4(p: &[u8]) -> Option<String> {
    let first = *p.first()?;
    let header = usize::from(first & 0x0f) * 4;
    if first >> 4 != 4 || header < 20 {
        return None;
    }
    let total = usize::from(u16_at(p, 2)?).min(p.len());
    // A fragment past the first carries no transport header.
    if u16_at(p, 6)? & 0x1fff != 0 {
        return None;
    }
    let src = Ipv4Addr::from(<[u8; 4]>::try_from(p.get(12..16)?).ok()?);
    let dst = Ipv4Addr::from(<[u8; 4]>::try_from(p.get(16..20)?).ok()?);
    transport(
        *p.get(9)?,
        p.get(header..total)?,
        &src.to_string(),
        &dst.to_string(),
    )
}

fn ipv6(p: &[u8]) -> Option<String> {
    if p.first()? >> 4 != 6 {
        return None;
    }
    let len = usize::from(u16_at(p, 4)?);
    let src = Ipv6Addr::from(<[u8; 16]>::try_from(p.get(8..24)?).ok()?);
    let dst = Ipv6Addr::from(<[u8; 16]>::try_from(p.get(24..40)?).ok()?);
    let body = p.get(40..)?;
    let body = &body[..len.min(body.len())];
    transport(*p.get(6)?, body, &format!("[{src}]"), &format!("[{dst}]"))
}

/// UDP (17) or TCP (6) to or from an NDN port.
fn transport(protocol: u8, seg: &[u8], src: &str, dst: &str) -> Option<String> {
    let (sport, dport) = (u16_at(seg, 0)?, u16_at(seg, 2)?);
    if !NDN_PORTS.contains(&sport) && !NDN_PORTS.contains(&dport) {
        return None;
    }
    let addrs = format!("{src}:{sport} > {dst}:{dport}");
    match protocol {
        17 => {
            let len = usize::from(u16_at(seg, 4)?).clamp(8, seg.len().max(8));
            let body = seg.get(8..len)?;
            Some(format!("{addrs} udp {}", describe_ndn(body)))
        }
        6 => {
            let offset = usize::from(seg.get(12)? >> 4) * 4;
            let body = seg.get(offset.max(20)..)?;
            if body.is_empty() {
                return None;
            }
            Some(format!("{addrs} tcp {}", describe_stream(body)))
        }
        _ => None,
    }
}

/// A TCP segment's NDN elements: each whole one described, then what is left of a partial
/// one (a stream cuts elements anywhere).
fn describe_stream(mut b: &[u8]) -> String {
    let mut parts = Vec::new();
    while !b.is_empty() {
        let whole = read_varnum(b).ok().and_then(|(_, t)| {
            let (len, l) = read_varnum(b.get(t..)?).ok()?;
            let end = (t + l).checked_add(usize::try_from(len).ok()?)?;
            (end <= b.len()).then_some(end)
        });
        match whole {
            Some(end) => {
                parts.push(describe_ndn(&b[..end]));
                b = &b[end..];
            }
            None => {
                parts.push(format!("({} octets of a partial element)", b.len()));
                break;
            }
        }
    }
    parts.join(" | ")
}

/// An NDN packet or NDNLPv2 frame: kind, name and key fields.
pub fn describe_ndn(b: &[u8]) -> String {
    let wire = Bytes::copy_from_slice(b);
    match NetPacket::decode_frame(wire.clone()) {
        Ok((h, packet)) => {
            let mut s = match packet {
                NetPacket::Interest(i) => {
                    let mut s = format!("Interest {}", i.name);
                    if i.can_be_prefix {
                        s.push_str(" CanBePrefix");
                    }
                    if i.must_be_fresh {
                        s.push_str(" MustBeFresh");
                    }
                    if let Some(n) = i.nonce {
                        let _ = write!(s, " nonce={:08x}", n.as_u32());
                    }
                    if let Some(l) = i.lifetime {
                        let _ = write!(s, " lifetime={l}ms");
                    }
                    if let Some(h) = i.hop_limit {
                        let _ = write!(s, " hop-limit={h}");
                    }
                    if let Some(p) = &i.app_params {
                        let _ = write!(s, " app-params={}B", p.len());
                    }
                    s
                }
                NetPacket::Data(d) => {
                    let mut s = format!(
                        "Data {} content={}B",
                        d.name,
                        d.content.as_ref().map_or(0, |c| c.len())
                    );
                    if let Some(f) = d.meta.freshness_period {
                        let _ = write!(s, " freshness={f}ms");
                    }
                    let _ = write!(s, " sig-type={}", d.sig_info.sig_type.0);
                    s
                }
                NetPacket::Nack(n) => {
                    format!("Nack~{} {}", nack_reason_text(n.reason), n.interest.name)
                }
            };
            if let Some(t) = h.pit_token {
                let _ = write!(s, " pit-token={}", hex::encode(t.as_slice()));
            }
            if let Some(m) = h.congestion_mark.filter(|&m| m != 0) {
                let _ = write!(s, " congestion-mark={m}");
            }
            s
        }
        Err(e) => match LpPacket::decode(wire) {
            Ok(lp) if lp.is_fragmented() => format!(
                "LpPacket fragment {}/{} seq={} ({}B)",
                lp.header.frag_index.unwrap_or(0),
                lp.header.frag_count.unwrap_or(1),
                lp.header
                    .sequence
                    .map_or_else(|| "-".into(), |q| q.to_string()),
                lp.fragment.as_ref().map_or(0, |f| f.len())
            ),
            Ok(lp) if lp.fragment.is_none() => {
                format!("LpPacket without fragment acks={}", lp.header.acks.len())
            }
            _ => format!("malformed ({}B): {e}", b.len()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kite_packet::{Data, DigestSha256, Interest, Nonce};

    /// An Ethernet + IPv4 + UDP frame from 10.0.0.1:56000 to 10.0.0.2:6363 carrying `payload`.
    fn udp_frame(payload: &[u8]) -> Vec<u8> {
        let mut f = vec![0u8; 12];
        f.extend_from_slice(&0x0800u16.to_be_bytes());
        let total = (20 + 8 + payload.len()) as u16;
        f.extend_from_slice(&[0x45, 0]);
        f.extend_from_slice(&total.to_be_bytes());
        f.extend_from_slice(&[0, 0, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2]);
        f.extend_from_slice(&56000u16.to_be_bytes());
        f.extend_from_slice(&6363u16.to_be_bytes());
        f.extend_from_slice(&((8 + payload.len()) as u16).to_be_bytes());
        f.extend_from_slice(&[0, 0]);
        f.extend_from_slice(payload);
        f
    }

    #[test]
    fn describes_interest_and_data_over_udp_and_ethernet() {
        let mut i = Interest::new("/a/b".parse().unwrap());
        i.nonce = Some(Nonce::from(0x01020304));
        i.must_be_fresh = true;
        i.lifetime = Some(1000);
        let line = describe_frame(&udp_frame(&i.encode())).unwrap();
        assert_eq!(
            line,
            "10.0.0.1:56000 > 10.0.0.2:6363 udp Interest /a/b MustBeFresh nonce=01020304 lifetime=1000ms"
        );
        let d = Data::new("/a/b".parse().unwrap(), &b"xyz"[..])
            .sign(&DigestSha256)
            .unwrap();
        let mut f = vec![0xff; 6];
        f.extend_from_slice(&[2, 0, 0, 0, 0, 1]);
        f.extend_from_slice(&ETHERTYPE_NDN.to_be_bytes());
        f.extend_from_slice(&d);
        let line = describe_frame(&f).unwrap();
        assert!(
            line.starts_with("02:00:00:00:00:01 > ff:ff:ff:ff:ff:ff ether Data /a/b content=3B"),
            "{line}"
        );
    }

    #[test]
    fn other_traffic_is_not_printed() {
        let mut f = udp_frame(b"x");
        f[36..38].copy_from_slice(&53u16.to_be_bytes());
        f[34..36].copy_from_slice(&53u16.to_be_bytes());
        assert_eq!(describe_frame(&f), None);
        assert_eq!(describe_frame(&[0u8; 13]), None);
    }

    #[test]
    fn a_stream_segment_shows_whole_elements_and_the_partial_rest() {
        let i = Interest::new("/s".parse().unwrap()).encode();
        let mut seg = i.to_vec();
        seg.extend_from_slice(&i[..3]);
        assert_eq!(
            describe_stream(&seg),
            format!("{} | (3 octets of a partial element)", describe_ndn(&i))
        );
    }

    #[test]
    fn hostile_frames_never_panic() {
        // Every truncation of valid frames, and pseudo-random octets behind each header.
        let i = Interest::new("/h".parse().unwrap()).encode();
        let valid = udp_frame(&i);
        for n in 0..=valid.len() {
            let _ = describe_frame(&valid[..n]);
        }
        let mut x = 0x9e3779b97f4a7c15u64;
        for round in 0..2000 {
            let mut f = valid[..14 + 28].to_vec();
            if round % 2 == 0 {
                f[12..14].copy_from_slice(&ETHERTYPE_NDN.to_be_bytes());
            }
            for _ in 0..(round % 64) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                f.push(x as u8);
            }
            let _ = describe_frame(&f);
            let _ = describe_stream(&f[14..]);
        }
    }
}
