//! A UDP multicast face on the loopback interface: joined, permanent, multi-access, and
//! packets from another member arrive.

mod common;

use std::net::{Ipv4Addr, SocketAddrV4};
use std::time::{Duration, Instant};

use common::{interest, name_of};
use kite_face::{udp, FaceConfig};
use kite_link::{FaceId, LinkType, PacketKind, Persistency};

#[test]
fn multicast_members_hear_each_other() {
    let port = 50000 + (std::process::id() % 10000) as u16;
    let group = SocketAddrV4::new(Ipv4Addr::new(224, 0, 23, 170), port);
    let lo = Ipv4Addr::LOCALHOST;
    let config = FaceConfig::default();
    let mut a = udp::multicast(FaceId(256), group, lo, None, true, &config).unwrap();
    let mut b = udp::multicast(FaceId(257), group, lo, None, true, &config).unwrap();
    assert_eq!(a.persistency(), Persistency::Permanent);
    assert_eq!(a.link_type(), LinkType::MultiAccess);
    assert_eq!(a.remote_uri().to_string(), format!("udp4://{group}"));
    assert!(a.send(PacketKind::Interest, interest("/mc")));
    a.flush().unwrap();
    let mut out = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(5);
    while out.is_empty() && Instant::now() < deadline {
        b.recv_burst(Instant::now(), false, usize::MAX, &mut out)
            .unwrap();
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(name_of(&out[0]), "/mc");
    assert_eq!(out[0].face, FaceId(257));
}
