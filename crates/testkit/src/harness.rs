//! The forwarding-thread harness, as a macro over the path of kite-fw: kite-fw's own unit tests
//! expand it with `crate` (their types are the crate's, not those of a kite-fw built as a
//! dependency), the module `forwarder` (feature `forwarder`) with `kite_fw` for the other
//! crates' tests.

/// Defines, where it is expanded, a forwarding thread with virtual faces and a virtual clock
/// (`Harness`), its faces (`APP`, `APP2`, `PRODUCER` local; `UP1`, `UP2` non-local; `MCAST`
/// unattached) and packet helpers, over the kite-fw at path `$fw` (`crate` inside kite-fw,
/// `kite_fw` elsewhere). The expanding crate needs kite-packet.
#[macro_export]
macro_rules! forwarder_harness {
    ($fw:tt) => {
        use ::kite_packet::{
            Data, DataView, DigestSha256, Interest, InterestView, Name, Nonce, PitToken,
        };

        use $fw::face::{FaceId, FaceScope, LinkType};
        use $fw::fib::{FibConfig, FibWriter};
        use $fw::forwarder::{Forwarder, ForwarderConfig, InData, InInterest, InNack};
        use $fw::hash::NameHasher;
        use $fw::out::Out;
        use $fw::strategy::{FaceInfo, StrategyTable};
        use $fw::time::Time;

        /// A local consumer.
        pub const APP: FaceId = FaceId(300);
        /// A second local consumer.
        pub const APP2: FaceId = FaceId(301);
        /// A local producer.
        pub const PRODUCER: FaceId = FaceId(302);
        /// A non-local upstream.
        pub const UP1: FaceId = FaceId(400);
        /// A second non-local upstream.
        pub const UP2: FaceId = FaceId(401);
        /// A face the harness does not add (for a multi-access link a test adds).
        pub const MCAST: FaceId = FaceId(500);

        /// The name hasher of the harness's forwarder and of the packets it builds.
        pub fn hasher() -> NameHasher {
            NameHasher::with_key(11, 13)
        }

        /// A forwarding thread with virtual faces and a virtual clock, and the FIB it reads.
        pub struct Harness {
            /// The forwarding thread.
            pub fwd: Forwarder,
            /// The FIB it reads.
            pub fib: FibWriter,
            /// Its strategies (the built-ins, and what a test adds).
            pub strategies: StrategyTable,
            /// The virtual clock.
            pub now: Time,
        }

        impl Harness {
            /// The default configuration, with faces `APP`, `APP2`, `PRODUCER`, `UP1`, `UP2`.
            #[allow(clippy::new_without_default)]
            pub fn new() -> Self {
                Self::with_config(ForwarderConfig::default())
            }

            /// `config`, with faces `APP`, `APP2`, `PRODUCER` (local) and `UP1`, `UP2`.
            pub fn with_config(config: ForwarderConfig) -> Self {
                let mut h = Self::without_faces(config);
                for f in [APP, APP2, PRODUCER] {
                    h.add_face(f, FaceScope::Local, LinkType::PointToPoint);
                }
                for f in [UP1, UP2] {
                    h.add_face(f, FaceScope::NonLocal, LinkType::PointToPoint);
                }
                h
            }

            /// `config`, with no face yet, at 1 s.
            pub fn without_faces(config: ForwarderConfig) -> Self {
                let strategies = StrategyTable::builtin();
                let (fib, readers) =
                    FibWriter::new(hasher(), FibConfig::default(), StrategyTable::DEFAULT);
                let now = Time::from_millis(1_000);
                let fwd = Forwarder::new(
                    1,
                    config,
                    readers.reader(),
                    strategies.clone(),
                    hasher(),
                    now,
                );
                Harness {
                    fwd,
                    fib,
                    strategies,
                    now,
                }
            }

            /// Adds `face` to the forwarder.
            pub fn add_face(&mut self, face: FaceId, scope: FaceScope, link_type: LinkType) {
                self.fwd.add_face(face, FaceInfo { scope, link_type });
            }

            /// Routes `prefix` to `face` at `cost`, published at once.
            pub fn route(&mut self, prefix: &str, face: FaceId, cost: u32) {
                self.fib.add_nexthop(&name(prefix), face, cost).unwrap();
                self.fib.publish();
            }

            /// Chooses the strategy named `strategy` for `prefix`, published at once.
            pub fn strategy(&mut self, prefix: &str, strategy: &str) {
                let id = self.strategies.find(&name(strategy)).unwrap();
                self.fib.set_strategy(&name(prefix), id).unwrap();
                self.fib.publish();
            }

            /// Moves the clock `ms` on and runs the timers due.
            pub fn advance(&mut self, ms: u64) {
                self.now = self.now + ::core::time::Duration::from_millis(ms);
                let mut out = Vec::new();
                self.fwd.advance(self.now, &mut out);
            }

            /// Interest `i` arriving on `face` with `token`; what the forwarder sends.
            pub fn interest(
                &mut self,
                face: FaceId,
                i: Interest,
                token: Option<PitToken>,
            ) -> Vec<Out> {
                self.interest_with(face, i, token, |_| {})
            }

            /// [`Harness::interest`], with the arriving packet edited first.
            pub fn interest_with(
                &mut self,
                face: FaceId,
                i: Interest,
                token: Option<PitToken>,
                edit: impl FnOnce(&mut InInterest),
            ) -> Vec<Out> {
                let mut pkt = arriving_interest(face, i, token);
                edit(&mut pkt);
                let mut out = Vec::new();
                self.fwd.on_interest(self.now, pkt, &mut out);
                out
            }

            /// All these Interests in one burst (so the burst's prefetch passes run over them
            /// all).
            pub fn interest_burst(&mut self, face: FaceId, interests: Vec<Interest>) -> Vec<Out> {
                let mut pkts: Vec<InInterest> = interests
                    .into_iter()
                    .map(|i| arriving_interest(face, i, None))
                    .collect();
                let mut out = Vec::new();
                self.fwd
                    .process_burst(self.now, &[], &[], &mut pkts, &mut out);
                out
            }

            /// Data `d` (DigestSha256-signed) arriving on `face` with `token`; what the
            /// forwarder sends.
            pub fn data(&mut self, face: FaceId, d: Data, token: Option<PitToken>) -> Vec<Out> {
                self.data_with(face, d, token, |_| {})
            }

            /// [`Harness::data`], with the arriving packet edited first.
            pub fn data_with(
                &mut self,
                face: FaceId,
                d: Data,
                token: Option<PitToken>,
                edit: impl FnOnce(&mut InData),
            ) -> Vec<Out> {
                let mut pkt = arriving_data(face, d, token);
                edit(&mut pkt);
                let mut out = Vec::new();
                self.fwd.on_data(self.now, pkt, &mut out);
                out
            }

            /// A Nack of Interest `i` with `reason` arriving on `face` with `token`; what the
            /// forwarder sends.
            pub fn nack(
                &mut self,
                face: FaceId,
                i: Interest,
                reason: ::kite_packet::NackReason,
                token: Option<PitToken>,
            ) -> Vec<Out> {
                let view = InterestView::decode(i.encode()).unwrap();
                let pkt = InNack {
                    hashes: hasher().prefix_hashes(&view.name),
                    interest: view,
                    reason,
                    face,
                    token,
                };
                let mut out = Vec::new();
                self.fwd.on_nack(self.now, pkt, &mut out);
                out
            }
        }

        /// Interest `i` as the forwarder gets it from `face` with `token`: decoded, its name's
        /// prefixes hashed.
        pub fn arriving_interest(face: FaceId, i: Interest, token: Option<PitToken>) -> InInterest {
            let view = InterestView::decode(i.encode()).unwrap();
            InInterest {
                hashes: hasher().prefix_hashes(&view.name),
                interest: view,
                face,
                token,
                next_hop: None,
                congestion_mark: 0,
                cs_probe: None,
            }
        }

        /// Data `d` as the forwarder gets it from `face` with `token`: DigestSha256-signed,
        /// decoded, to be cached.
        pub fn arriving_data(face: FaceId, d: Data, token: Option<PitToken>) -> InData {
            InData {
                data: DataView::decode(d.sign(&DigestSha256).unwrap()).unwrap(),
                hashes: None,
                face,
                token,
                congestion_mark: 0,
                no_cache: false,
                own_buffer: 0,
                rehomed: false,
            }
        }

        /// `uri` as a Name.
        pub fn name(uri: &str) -> Name {
            uri.parse().unwrap()
        }

        /// An Interest for `uri` with `nonce`.
        pub fn interest(uri: &str, nonce: u32) -> Interest {
            let mut i = Interest::new(name(uri));
            i.nonce = Some(Nonce::from(nonce));
            i
        }

        /// A Data named `uri`, fresh for `freshness_ms`.
        pub fn data(uri: &str, freshness_ms: u64) -> Data {
            let mut d = Data::new(name(uri), &b"payload"[..]);
            d.meta.freshness_period = Some(freshness_ms);
            d
        }

        /// A 4-octet PIT token from the low half of `n`.
        pub fn tok(n: u64) -> PitToken {
            PitToken::new(&n.to_be_bytes()[4..]).unwrap()
        }

        /// The Interest `out` sends (its face, and the packet as encoded for the wire), if it
        /// is one.
        pub fn interest_sent(out: &Out) -> Option<(FaceId, InterestView)> {
            match out {
                Out::Interest { face, interest, .. } => {
                    Some((*face, InterestView::decode(interest.encode()).unwrap()))
                }
                _ => None,
            }
        }

        /// The face and token of the only Interest sent.
        pub fn sent_interest(out: &[Out]) -> (FaceId, PitToken) {
            match out.first() {
                Some(Out::Interest { face, token, .. }) => (*face, *token),
                other => panic!("expected an Interest, got {other:?}"),
            }
        }

        /// The face and token of a Data sent.
        pub fn sent_data(out: &Out) -> (FaceId, Option<PitToken>) {
            match out {
                Out::Data { face, token, .. } => (*face, *token),
                other => panic!("expected a Data, got {other:?}"),
            }
        }

        /// The face and reason of the only packet sent, when it is a Nack.
        pub fn only_nack(out: &[Out]) -> Option<(FaceId, ::kite_packet::NackReason)> {
            match out {
                [Out::Nack { face, reason, .. }] => Some((*face, *reason)),
                _ => None,
            }
        }

        /// The reason of the only packet sent, when it is a Nack.
        pub fn nack_reason(out: &[Out]) -> Option<::kite_packet::NackReason> {
            only_nack(out).map(|(_, r)| r)
        }
    };
}
