//! Two consumers asking for the same Data through a real `kite run` share one upstream
//! Interest (PIT aggregation), and a third consumer asking again is answered from the Content
//! Store. The producer and consumers are small Rust peers on the unix socket.

mod common;

use std::time::Duration;

use common::peer::{self, data, interest, with_token, Conn};
use common::{eventually, Daemon};
use kite_packet::NetPacket;

const WAIT: Duration = Duration::from_secs(10);

#[test]
fn two_consumers_share_one_upstream_interest_and_a_third_hits_the_cs() {
    // Two forwarding threads: the Data finds the thread holding the entry by its PIT token.
    let kite = Daemon::local(&["--threads", "2"]);
    let s = kite.socket();
    let mut producer = Conn::unix(s);
    let producer_face = producer.register("/agg");

    // B registers an unrelated prefix only to learn its FaceId, before anything is asked: A's
    // and B's Interests then go out back to back, within the 10 ms a retransmission from
    // another downstream is suppressed for (best-route, as NFD's), so B's joins A's pending
    // entry whatever the machine's load did to a command's round trip.
    let mut a = Conn::unix(s);
    let mut b = Conn::unix(s);
    let b_face = b.register("/consumer-b");
    a.send(&interest("/agg/x", 8000));
    b.send(&interest("/agg/x", 8000));
    let (token, first) = producer.recv_interest(WAIT);
    assert_eq!(first.name.to_string(), "/agg/x");
    // Wait until Kite counted B's Interest (another Nonce, another face), then answer once.
    let counted = eventually(WAIT, || {
        let f = peer::face(s, b_face)?;
        (f.counters.n_in_interests == 2).then_some(())
    });
    assert!(
        counted.is_some(),
        "Kite received B's Interest (and its registration)"
    );
    let content = vec![0x42u8; 100];
    producer.send(&with_token(token, data(&first.name, content.clone())));

    for (who, c) in [("A", &mut a), ("B", &mut b)] {
        match c.recv_packet(WAIT) {
            (_, NetPacket::Data(d)) => {
                assert_eq!(d.name.to_string(), "/agg/x", "{who}");
                assert_eq!(d.content.as_deref(), Some(&content[..]), "{who}");
            }
            (_, other) => panic!("{who} expected the Data, got {other:?}"),
        }
    }
    let up = peer::face(s, producer_face).expect("the producer's face");
    assert_eq!(
        up.counters.n_out_interests, 1,
        "one Interest went upstream: {up:?}"
    );

    // A third consumer: the Content Store answers, the producer is not asked again.
    let hits_before = peer::cs_info(s).n_hits;
    let mut c = Conn::unix(s);
    let again = c.fetch("/agg/x", WAIT);
    assert_eq!(again.content.as_deref(), Some(&content[..]));
    let up = eventually(WAIT, || {
        let f = peer::face(s, producer_face)?;
        let cs = peer::cs_info(s);
        (cs.n_hits > hits_before).then_some(f)
    })
    .expect("the CS counted a hit");
    assert_eq!(up.counters.n_out_interests, 1, "still one: {up:?}");
}
