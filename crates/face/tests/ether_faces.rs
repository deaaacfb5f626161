//! Ethernet faces across a veth pair made by the test (root only; skipped with the reason
//! printed otherwise): multicast to NDN's group, on-demand unicast faces per sender, padding
//! cut off on receipt, fragmentation to the interface MTU, and malformed frames counted on the
//! face that keeps working.

mod common;

use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use common::{data, interest, name_of};
use kite_face::ether::frame::NDN_MULTICAST;
use kite_face::{
    Datagram, EtherChannel, Face, FaceConfig, FaceUri, LinkMonitor, LinkState, Received, RxPacket,
    UdpChannels, DEFAULT_IDLE_TIMEOUT,
};
use kite_link::{FaceIds, FaceScope, LinkType, MacAddr, PacketKind, Persistency};

fn ip(args: &[&str]) -> bool {
    Command::new("ip")
        .args(args)
        .output()
        .is_ok_and(|o| o.status.success())
}

fn is_up(dev: &str) -> bool {
    Command::new("ip")
        .args(["link", "show", "dev", dev])
        .output()
        .is_ok_and(|o| {
            let s = String::from_utf8_lossy(&o.stdout);
            s.contains("state UP") && !s.contains("qdisc noop")
        })
}

/// A veth pair in this network namespace, both ends up; deleted on drop.
struct Veth {
    a: String,
    b: String,
}

impl Veth {
    fn new() -> Option<Veth> {
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let pid = std::process::id();
        let (a, b) = (format!("kfa{pid}x{n}"), format!("kfb{pid}x{n}"));
        if !ip(&["link", "add", &a, "type", "veth", "peer", "name", &b]) {
            kite_testkit::skip("cannot create a veth pair (needs root and iproute2)");
            return None;
        }
        let veth = Veth { a, b };
        assert!(ip(&["link", "set", &veth.a, "up"]) && ip(&["link", "set", &veth.b, "up"]));
        // Until the kernel marks the link up and gives it a queue (asynchronously), frames
        // sent on it are dropped without an error.
        let deadline = Instant::now() + Duration::from_secs(5);
        while !(is_up(&veth.a) && is_up(&veth.b)) {
            assert!(Instant::now() < deadline, "veth pair never came up");
            std::thread::sleep(Duration::from_millis(10));
        }
        Some(veth)
    }
}

impl Drop for Veth {
    fn drop(&mut self) {
        ip(&["link", "del", &self.a]);
    }
}

/// One end: its channel, faces and face ids.
struct End {
    ch: EtherChannel,
    ids: FaceIds,
    faces: Vec<Face>,
    created: Vec<Face>,
}

impl End {
    fn open(iface: &str) -> End {
        let mut ch = EtherChannel::open(iface, FaceConfig::default()).expect("open channel");
        let mut ids = FaceIds::new();
        let mcast = ch.multicast_face(ids.next_id()).unwrap();
        End {
            ch,
            ids,
            faces: vec![mcast],
            created: Vec::new(),
        }
    }

    fn face(&mut self, remote: &FaceUri) -> &mut Face {
        self.faces
            .iter_mut()
            .find(|f| f.remote_uri() == remote)
            .expect("face exists")
    }

    /// Reads until `n` frames arrived (or 5 s pass); hands them to their faces (new faces
    /// join `faces` and are remembered in `created`); returns the packets completed.
    fn receive(&mut self, n: usize) -> Vec<Received> {
        let mut dgrams: Vec<Datagram> = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(5);
        while dgrams.len() < n && Instant::now() < deadline {
            let mut created = Vec::new();
            // As an I/O thread does on the socket's readable event (here: every pass).
            self.ch.packet_readable();
            self.ch
                .recv_burst(
                    Instant::now(),
                    &mut self.ids,
                    &mut dgrams,
                    &mut created,
                    &mut Vec::new(),
                    &mut UdpChannels {
                        channels: &mut [],
                        datagrams: &mut Vec::new(),
                    },
                )
                .unwrap();
            for f in created {
                self.created.push(f);
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(dgrams.len(), n, "frames received");
        self.faces.append(&mut self.created);
        let mut out = Vec::new();
        for d in dgrams {
            let f = self.faces.iter_mut().find(|f| f.id() == d.face).unwrap();
            let r = self.ch.reassembler();
            f.receive_frame(d.from, d.frame, d.own_buffer, Instant::now(), r, &mut out);
        }
        out
    }
}

fn pair() -> Option<(Veth, End, End)> {
    let veth = Veth::new()?;
    let a = End::open(&veth.a);
    let b = End::open(&veth.b);
    Some((veth, a, b))
}

/// Frames one burst of `end`'s channel reads (handed to no face).
fn one_burst(end: &mut End) -> usize {
    let mut dgrams = Vec::new();
    end.ch
        .recv_burst(
            Instant::now(),
            &mut end.ids,
            &mut dgrams,
            &mut Vec::new(),
            &mut Vec::new(),
            &mut UdpChannels {
                channels: &mut [],
                datagrams: &mut Vec::new(),
            },
        )
        .unwrap();
    dgrams.len()
}

#[test]
fn the_socket_is_read_when_its_readiness_says_so_and_each_new_frame_says_so_again() {
    let Some((_veth, mut a, mut b)) = pair() else {
        return;
    };
    let mut poll = mio::Poll::new().unwrap();
    let (packet, xdp) = (mio::Token(1), mio::Token(2));
    b.ch.register(poll.registry(), packet, xdp).unwrap();
    let mut events = mio::Events::with_capacity(8);
    assert_eq!(one_burst(&mut b), 0, "nothing yet: drained");
    let group = FaceUri::Ether(NDN_MULTICAST);
    for n in 0..2 {
        let mcast = a.face(&group);
        assert!(mcast.send(PacketKind::Interest, interest(&format!("/r/{n}"))));
        mcast.flush().unwrap();
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(
            one_burst(&mut b),
            0,
            "not read before its readiness said so"
        );
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            poll.poll(&mut events, Some(Duration::from_millis(100)))
                .unwrap();
            if events
                .iter()
                .any(|e| e.token() == packet && e.is_readable())
            {
                break;
            }
            assert!(Instant::now() < deadline, "frame {n}: no readable event");
        }
        b.ch.packet_readable();
        assert_eq!(one_burst(&mut b), 1, "frame {n}");
    }
}

#[test]
fn multicast_faces_hear_each_other_and_padding_is_cut() {
    let Some((veth, mut a, mut b)) = pair() else {
        return;
    };
    let group = FaceUri::Ether(NDN_MULTICAST);
    let mcast = a.face(&group);
    assert_eq!(mcast.local_uri(), &FaceUri::Dev(veth.a.clone()));
    assert_eq!(mcast.persistency(), Persistency::Permanent);
    assert_eq!(mcast.link_type(), LinkType::MultiAccess);
    assert_eq!(mcast.scope(), FaceScope::NonLocal);
    assert_eq!(mcast.mtu(), Some(1500));
    let small = interest("/m");
    assert!(small.len() < 46, "short enough to be padded");
    assert!(mcast.send(PacketKind::Interest, small.clone()));
    mcast.flush().unwrap();
    let got = b.receive(1);
    assert_eq!(name_of(&got[0]), "/m");
    let mface = b.face(&group);
    assert_eq!(got[0].face, mface.id());
    assert_eq!(
        mface.counters().n_in_bytes,
        small.len() as u64,
        "the padding is not part of the packet"
    );
    assert!(
        b.created.is_empty() && b.faces.len() == 1,
        "no unicast face"
    );
    let later = Instant::now() + DEFAULT_IDLE_TIMEOUT * 2;
    assert!(!b.face(&group).idle_expired(later), "permanent");
}

#[test]
fn unicast_frames_make_an_on_demand_face_and_fragments_reassemble() {
    let Some((veth, mut a, mut b)) = pair() else {
        return;
    };
    let (a_mac, b_mac) = (a.ch.mac(), b.ch.mac());
    let id = a.ids.next_id();
    let mut to_b = a.ch.connect(id, b_mac, Persistency::Persistent).unwrap();
    assert_eq!(
        a.ch.connect(a.ids.next_id(), b_mac, Persistency::Persistent)
            .unwrap_err()
            .to_string(),
        format!("face {id} already exists for this remote")
    );
    assert!(a
        .ch
        .connect(a.ids.next_id(), NDN_MULTICAST, Persistency::Persistent)
        .is_err());
    let big = data("/big", 4000);
    assert!(to_b.send(PacketKind::Data, big.clone()));
    assert_eq!(to_b.pending_output(), 3, "fragmented to the 1500-octet MTU");
    to_b.flush().unwrap();
    let got = b.receive(3);
    let RxPacket::Data(d) = &got[0].packet else {
        panic!("not Data: {got:?}")
    };
    assert_eq!(d.wire(), &big);
    let channel_face = b.ch.face_of(a_mac);
    let back = b.face(&FaceUri::Ether(a_mac));
    assert_eq!(channel_face, Some(back.id()));
    assert_eq!(back.persistency(), Persistency::OnDemand);
    assert_eq!(back.link_type(), LinkType::PointToPoint);
    assert_eq!(back.local_uri(), &FaceUri::Dev(veth.b.clone()));
    let later = Instant::now() + DEFAULT_IDLE_TIMEOUT;
    assert!(back.idle_expired(later), "on-demand faces close when idle");
    assert!(!to_b.idle_expired(later), "created faces do not");
    assert!(back.send(PacketKind::Interest, interest("/reply")));
    back.flush().unwrap();
    a.faces.push(to_b);
    let got = a.receive(1);
    assert_eq!(name_of(&got[0]), "/reply");
    assert_eq!(got[0].face, id);
}

#[test]
fn malformed_frames_are_counted_and_the_faces_keep_working() {
    let Some((_veth, mut a, mut b)) = pair() else {
        return;
    };
    let group = FaceUri::Ether(NDN_MULTICAST);
    let garbage = Bytes::from_static(&[0xff, 0x13, 0x00, 0x42, 0x99, 0x01]);
    let mcast = a.face(&group);
    assert!(mcast.send(PacketKind::Interest, garbage.clone()));
    assert!(mcast.send(PacketKind::Interest, interest("/after")));
    mcast.flush().unwrap();
    let got = b.receive(2);
    assert_eq!(got.len(), 1);
    assert_eq!(name_of(&got[0]), "/after");
    let c = *b.face(&group).counters();
    assert_eq!((c.n_in_malformed, c.n_in_interests), (1, 1));

    let mut to_b =
        a.ch.connect(a.ids.next_id(), b.ch.mac(), Persistency::Persistent)
            .unwrap();
    let lp_garbage = Bytes::from_static(&[100, 4, 80, 2, 5, 0]);
    // From a sender with no face yet, garbage makes none: the channel counts it.
    assert!(to_b.send(PacketKind::Interest, lp_garbage.clone()));
    assert!(to_b.send(PacketKind::Interest, interest("/after2")));
    to_b.flush().unwrap();
    let got = b.receive(1);
    assert_eq!(name_of(&got[0]), "/after2");
    let c = *b.face(&FaceUri::Ether(a.ch.mac())).counters();
    assert_eq!((c.n_in_malformed, c.n_in_interests), (0, 1));
    assert_eq!(b.ch.counters().n_malformed, 1);
    // Once it has a face, the face counts it.
    assert!(to_b.send(PacketKind::Interest, lp_garbage));
    assert!(to_b.send(PacketKind::Interest, interest("/after3")));
    to_b.flush().unwrap();
    let got = b.receive(2);
    assert_eq!(name_of(&got[0]), "/after3");
    let c = *b.face(&FaceUri::Ether(a.ch.mac())).counters();
    assert_eq!((c.n_in_malformed, c.n_in_interests), (1, 2));
    assert_eq!(b.ch.counters().n_malformed, 1);
}

/// Reads the link monitor until `ch` reports a change (or 5 s pass).
fn next_link_change(monitor: &mut LinkMonitor, ch: &mut EtherChannel) -> LinkState {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let events = monitor.read().unwrap();
        if let Some(link) = ch.link_changed(&events) {
            return link;
        }
        assert!(Instant::now() < deadline, "no link change seen");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn faces_follow_their_interface_mtu_and_state() {
    let mut monitor = LinkMonitor::open().expect("rtnetlink socket");
    let Some((veth, mut a, mut b)) = pair() else {
        return;
    };
    let mut to_b =
        a.ch.connect(a.ids.next_id(), b.ch.mac(), Persistency::Persistent)
            .unwrap();
    assert_eq!(to_b.mtu(), Some(1500));
    assert!(to_b.is_up());

    assert!(ip(&["link", "set", "dev", &veth.a, "mtu", "1400"]));
    let link = next_link_change(&mut monitor, &mut a.ch);
    assert_eq!(
        link,
        LinkState {
            up: true,
            mtu: 1400
        }
    );
    assert_eq!(to_b.follow_link(link), None, "still up");
    assert_eq!(to_b.mtu(), Some(1400));
    // Fragments now fit 1400 octets: a Data of 3000 octets takes three.
    assert!(to_b.send(PacketKind::Data, data("/smaller", 3000)));
    assert_eq!(to_b.pending_output(), 3);
    to_b.flush().unwrap();
    b.receive(3);

    assert!(ip(&["link", "set", "dev", &veth.a, "down"]));
    let link = next_link_change(&mut monitor, &mut a.ch);
    assert!(!link.up, "{link:?}");
    assert_eq!(to_b.follow_link(link), Some(false));
    assert!(!to_b.is_up());
    assert!(to_b.send(PacketKind::Interest, interest("/while-down")));
    to_b.flush()
        .expect("a face that is down drops without an error");
    assert_eq!(to_b.counters().n_out_link_down, 1);
    assert_eq!(to_b.pending_output(), 0);
    let stranger = MacAddr([2, 0, 0, 0, 0, 9]);
    let fresh =
        a.ch.connect(a.ids.next_id(), stranger, Persistency::Persistent)
            .unwrap();
    assert!(
        !fresh.is_up(),
        "faces made while the link is down start down"
    );

    assert!(ip(&["link", "set", "dev", &veth.a, "up"]));
    let link = loop {
        // Up comes first, the carrier a moment later.
        let link = next_link_change(&mut monitor, &mut a.ch);
        if link.up {
            break link;
        }
    };
    assert_eq!(link.mtu, 1400);
    assert_eq!(to_b.follow_link(link), Some(true));
    assert!(to_b.is_up());
    let deadline = Instant::now() + Duration::from_secs(5);
    while !(is_up(&veth.a) && is_up(&veth.b)) {
        assert!(Instant::now() < deadline, "veth pair never came back up");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(to_b.send(PacketKind::Interest, interest("/back")));
    to_b.flush().unwrap();
    assert_eq!(name_of(&b.receive(1)[0]), "/back");
}
