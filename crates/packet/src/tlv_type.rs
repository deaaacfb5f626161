//! TLV-TYPE numbers, defined once, named as the NDN Packet Format v0.3, the naming conventions
//! and NDNLPv2 name them.

/// Interest packet.
pub const INTEREST: u64 = 5;
/// Data packet.
pub const DATA: u64 = 6;
/// Name.
pub const NAME: u64 = 7;

/// ImplicitSha256DigestComponent.
pub const IMPLICIT_SHA256_DIGEST_COMPONENT: u64 = 1;
/// ParametersSha256DigestComponent.
pub const PARAMETERS_SHA256_DIGEST_COMPONENT: u64 = 2;
/// GenericNameComponent.
pub const GENERIC_NAME_COMPONENT: u64 = 8;
/// KeywordNameComponent.
pub const KEYWORD_NAME_COMPONENT: u64 = 32;
/// SegmentNameComponent (naming conventions rev. 3).
pub const SEGMENT_NAME_COMPONENT: u64 = 50;
/// ByteOffsetNameComponent.
pub const BYTE_OFFSET_NAME_COMPONENT: u64 = 52;
/// VersionNameComponent.
pub const VERSION_NAME_COMPONENT: u64 = 54;
/// TimestampNameComponent.
pub const TIMESTAMP_NAME_COMPONENT: u64 = 56;
/// SequenceNumNameComponent.
pub const SEQUENCE_NUM_NAME_COMPONENT: u64 = 58;

/// CanBePrefix.
pub const CAN_BE_PREFIX: u64 = 33;
/// MustBeFresh.
pub const MUST_BE_FRESH: u64 = 18;
/// ForwardingHint.
pub const FORWARDING_HINT: u64 = 30;
/// Delegation (ForwardingHint format before 2021, still accepted on decode).
pub const DELEGATION: u64 = 31;
/// Preference inside a Delegation.
pub const PREFERENCE: u64 = 30;
/// Nonce.
pub const NONCE: u64 = 10;
/// InterestLifetime.
pub const INTEREST_LIFETIME: u64 = 12;
/// HopLimit.
pub const HOP_LIMIT: u64 = 34;
/// ApplicationParameters.
pub const APPLICATION_PARAMETERS: u64 = 36;
/// InterestSignatureInfo.
pub const INTEREST_SIGNATURE_INFO: u64 = 44;
/// InterestSignatureValue.
pub const INTEREST_SIGNATURE_VALUE: u64 = 46;

/// MetaInfo.
pub const META_INFO: u64 = 20;
/// Content.
pub const CONTENT: u64 = 21;
/// SignatureInfo (of a Data).
pub const SIGNATURE_INFO: u64 = 22;
/// SignatureValue (of a Data).
pub const SIGNATURE_VALUE: u64 = 23;
/// ContentType.
pub const CONTENT_TYPE: u64 = 24;
/// FreshnessPeriod.
pub const FRESHNESS_PERIOD: u64 = 25;
/// FinalBlockId.
pub const FINAL_BLOCK_ID: u64 = 26;

/// SignatureType.
pub const SIGNATURE_TYPE: u64 = 27;
/// KeyLocator.
pub const KEY_LOCATOR: u64 = 28;
/// KeyDigest inside a KeyLocator.
pub const KEY_DIGEST: u64 = 29;
/// SignatureNonce.
pub const SIGNATURE_NONCE: u64 = 38;
/// SignatureTime.
pub const SIGNATURE_TIME: u64 = 40;
/// SignatureSeqNum.
pub const SIGNATURE_SEQ_NUM: u64 = 42;
/// ValidityPeriod.
pub const VALIDITY_PERIOD: u64 = 253;
/// NotBefore inside a ValidityPeriod.
pub const NOT_BEFORE: u64 = 254;
/// NotAfter inside a ValidityPeriod.
pub const NOT_AFTER: u64 = 255;

/// NDNLPv2 LpPacket.
pub const LP_PACKET: u64 = 100;
/// NDNLPv2 Fragment.
pub const FRAGMENT: u64 = 80;
/// NDNLPv2 Sequence.
pub const SEQUENCE: u64 = 81;
/// NDNLPv2 FragIndex.
pub const FRAG_INDEX: u64 = 82;
/// NDNLPv2 FragCount.
pub const FRAG_COUNT: u64 = 83;
/// NDNLPv2 PitToken.
pub const PIT_TOKEN: u64 = 98;
/// NDNLPv2 Nack.
pub const NACK: u64 = 800;
/// NDNLPv2 NackReason.
pub const NACK_REASON: u64 = 801;
/// NDNLPv2 IncomingFaceId.
pub const INCOMING_FACE_ID: u64 = 812;
/// NDNLPv2 NextHopFaceId.
pub const NEXT_HOP_FACE_ID: u64 = 816;
/// NDNLPv2 CachePolicy.
pub const CACHE_POLICY: u64 = 820;
/// NDNLPv2 CachePolicyType.
pub const CACHE_POLICY_TYPE: u64 = 821;
/// NDNLPv2 CongestionMark.
pub const CONGESTION_MARK: u64 = 832;
/// NDNLPv2 Ack.
pub const ACK: u64 = 836;
/// NDNLPv2 TxSequence.
pub const TX_SEQUENCE: u64 = 840;
/// NDNLPv2 NonDiscovery.
pub const NON_DISCOVERY: u64 = 844;
/// NDNLPv2 PrefixAnnouncement.
pub const PREFIX_ANNOUNCEMENT: u64 = 848;

/// Whether an element of this TLV-TYPE is critical: an unrecognized critical element makes
/// the enclosing packet invalid, an unrecognized non-critical one is skipped (types 0–31 and
/// every odd type are critical).
pub const fn is_critical(typ: u64) -> bool {
    typ <= 31 || typ & 1 == 1
}

/// Whether an unrecognized NDNLPv2 header field of this type may be ignored: only types in
/// 800..=959 whose two low bits are 0; any other unknown field makes the LpPacket invalid.
pub const fn lp_can_ignore(typ: u64) -> bool {
    typ >= 800 && typ <= 959 && typ & 0b11 == 0
}
