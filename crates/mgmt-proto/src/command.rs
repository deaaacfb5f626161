//! Control commands: from a decoded command Interest to a validated [`Command`].
//!
//! The stages follow NFD's dispatcher, and each has its own outcome:
//! 1. [`parse_command`]: top prefix (`/localhost/nfd`, or `/localhop/nfd` for `rib`), module
//!    and verb, ControlParameters (name component 4, or ApplicationParameters for
//!    `rib/announce`), and the signature form. Any failure here is a [`CommandError`]: NFD
//!    sends **no reply**.
//! 2. Authorization and replay protection (the management server's replay guard):
//!    403 "authorization rejected".
//! 3. [`Command::validate`]: the per-verb required/optional field table of ndn-cxx
//!    (400 "failed in validating parameters"), the request defaults, then the managers' depth
//!    limit (414).

use bytes::Bytes;
use kite_packet::{tlv_type, DecodeError, Interest, KeyLocator, Name, SignatureInfo};
use thiserror::Error;

use crate::announce::{AnnounceError, PrefixAnnouncement};
use crate::control_parameters::ControlParameters;
use crate::control_response::ControlResponse;
use crate::nfd::{self as t, route_flags, status, RouteOrigin, MAX_NAME_DEPTH};

/// Which management prefix a command came under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TopPrefix {
    /// `/localhost/nfd`: local applications.
    Localhost,
    /// `/localhop/nfd`: remote registration (only the `rib` module).
    Localhop,
}

/// A control command (module and verb).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Verb {
    /// `faces/create`.
    FacesCreate,
    /// `faces/update`.
    FacesUpdate,
    /// `faces/destroy`.
    FacesDestroy,
    /// `fib/add-nexthop`.
    FibAddNextHop,
    /// `fib/remove-nexthop`.
    FibRemoveNextHop,
    /// `rib/register`.
    RibRegister,
    /// `rib/unregister`.
    RibUnregister,
    /// `rib/announce` (parameters are a PrefixAnnouncement in ApplicationParameters).
    RibAnnounce,
    /// `strategy-choice/set`.
    StrategyChoiceSet,
    /// `strategy-choice/unset`.
    StrategyChoiceUnset,
    /// `cs/config`.
    CsConfig,
    /// `cs/erase`.
    CsErase,
    /// `kite-strategy/load` (Kite): load an eBPF strategy program from a local file.
    StrategyLoad,
    /// `kite-strategy/unload` (Kite): remove a loaded strategy no prefix uses.
    StrategyUnload,
}

/// Every verb with its module and verb components.
const VERBS: [(Verb, &str, &str); 14] = [
    (Verb::FacesCreate, "faces", "create"),
    (Verb::FacesUpdate, "faces", "update"),
    (Verb::FacesDestroy, "faces", "destroy"),
    (Verb::FibAddNextHop, "fib", "add-nexthop"),
    (Verb::FibRemoveNextHop, "fib", "remove-nexthop"),
    (Verb::RibRegister, "rib", "register"),
    (Verb::RibUnregister, "rib", "unregister"),
    (Verb::RibAnnounce, "rib", "announce"),
    (Verb::StrategyChoiceSet, "strategy-choice", "set"),
    (Verb::StrategyChoiceUnset, "strategy-choice", "unset"),
    (Verb::CsConfig, "cs", "config"),
    (Verb::CsErase, "cs", "erase"),
    (Verb::StrategyLoad, "kite-strategy", "load"),
    (Verb::StrategyUnload, "kite-strategy", "unload"),
];

/// Which ControlParameters fields a verb's request requires and allows (ndn-cxx
/// `control-command.cpp`); every other field is forbidden.
struct FieldRules {
    required: &'static [u64],
    optional: &'static [u64],
}

impl Verb {
    /// The verb named by `module`/`verb` name component values.
    pub fn from_components(module: &[u8], verb: &[u8]) -> Option<Verb> {
        VERBS
            .iter()
            .find(|(_, m, v)| m.as_bytes() == module && v.as_bytes() == verb)
            .map(|(x, _, _)| *x)
    }

    /// The module component, e.g. `rib`.
    pub fn module(self) -> &'static str {
        self.names().0
    }

    /// The verb component, e.g. `register`.
    pub fn verb(self) -> &'static str {
        self.names().1
    }

    fn names(self) -> (&'static str, &'static str) {
        let (_, m, v) = VERBS
            .iter()
            .find(|(x, _, _)| *x == self)
            .expect("every verb");
        (m, v)
    }

    fn rules(self) -> FieldRules {
        let (required, optional): (&'static [u64], &'static [u64]) = match self {
            Verb::FacesCreate => (
                &[t::URI],
                &[
                    t::LOCAL_URI,
                    t::FACE_PERSISTENCY,
                    t::BASE_CONGESTION_MARKING_INTERVAL,
                    t::DEFAULT_CONGESTION_THRESHOLD,
                    t::MTU,
                    t::FLAGS,
                    t::MASK,
                ],
            ),
            Verb::FacesUpdate => (
                &[],
                &[
                    t::FACE_ID,
                    t::FACE_PERSISTENCY,
                    t::BASE_CONGESTION_MARKING_INTERVAL,
                    t::DEFAULT_CONGESTION_THRESHOLD,
                    t::MTU,
                    t::FLAGS,
                    t::MASK,
                ],
            ),
            Verb::FacesDestroy => (&[t::FACE_ID], &[]),
            Verb::FibAddNextHop => (&[tlv_type::NAME], &[t::FACE_ID, t::COST]),
            Verb::FibRemoveNextHop => (&[tlv_type::NAME], &[t::FACE_ID]),
            Verb::RibRegister => (
                &[tlv_type::NAME],
                &[
                    t::FACE_ID,
                    t::ORIGIN,
                    t::COST,
                    t::FLAGS,
                    t::EXPIRATION_PERIOD,
                ],
            ),
            Verb::RibUnregister => (&[tlv_type::NAME], &[t::FACE_ID, t::ORIGIN]),
            Verb::RibAnnounce => (&[], &[]),
            Verb::StrategyChoiceSet => (&[tlv_type::NAME, t::STRATEGY], &[]),
            Verb::StrategyChoiceUnset => (&[tlv_type::NAME], &[]),
            Verb::CsConfig => (&[], &[t::CAPACITY, t::FLAGS, t::MASK]),
            Verb::CsErase => (&[tlv_type::NAME], &[t::COUNT]),
            Verb::StrategyLoad => (&[t::STRATEGY, t::URI], &[t::FLAGS]),
            Verb::StrategyUnload => (&[t::STRATEGY], &[]),
        };
        FieldRules { required, optional }
    }
}

/// How a command Interest is signed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandSignature {
    /// No signature (accepted only where authorization is "any").
    Unsigned,
    /// Signed Interest v0.3: InterestSignatureInfo/Value and a ParametersSha256Digest
    /// component; the timestamp is SignatureTime.
    V03 {
        /// InterestSignatureInfo.
        info: SignatureInfo,
        /// InterestSignatureValue.
        value: Bytes,
    },
    /// Signed command Interest v0.2: the name ends `<timestamp>/<nonce>/<SignatureInfo>/
    /// <SignatureValue>`.
    V02 {
        /// The timestamp component (ms since the Unix epoch).
        timestamp: u64,
        /// The nonce component.
        nonce: Bytes,
        /// SignatureInfo.
        info: SignatureInfo,
        /// SignatureValue.
        value: Bytes,
    },
}

impl CommandSignature {
    /// The timestamp replay protection checks (SignatureTime for v0.3, which may be absent).
    pub fn timestamp(&self) -> Option<u64> {
        match self {
            CommandSignature::Unsigned => None,
            CommandSignature::V03 { info, .. } => info.time,
            CommandSignature::V02 { timestamp, .. } => Some(*timestamp),
        }
    }

    /// The SignatureInfo, when signed.
    pub fn info(&self) -> Option<&SignatureInfo> {
        match self {
            CommandSignature::Unsigned => None,
            CommandSignature::V03 { info, .. } | CommandSignature::V02 { info, .. } => Some(info),
        }
    }

    /// The KeyLocator name: the signing key replay records are kept for.
    pub fn key_name(&self) -> Option<&Name> {
        match self.info()?.key_locator.as_ref()? {
            KeyLocator::Name(n) => Some(n),
            KeyLocator::KeyDigest(_) => None,
        }
    }
}

/// A parsed command, before authorization.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    /// The top prefix it came under.
    pub top: TopPrefix,
    /// Module and verb.
    pub verb: Verb,
    /// The request parameters (empty for `rib/announce`).
    pub params: ControlParameters,
    /// The announcement carried by `rib/announce`.
    pub announcement: Option<PrefixAnnouncement>,
    /// The signature form.
    pub signature: CommandSignature,
}

/// Why an Interest is not a command NFD would answer; NFD drops these **without a reply**.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CommandError {
    /// Not under `/localhost/nfd` or `/localhop/nfd`, or shorter than module/verb.
    #[error("not a management command")]
    NotManagement,
    /// No such module/verb under this prefix.
    #[error("unknown command")]
    UnknownCommand,
    /// The ControlParameters component (or ApplicationParameters) is absent.
    #[error("command has no parameters")]
    MissingParameters,
    /// The ControlParameters do not decode.
    #[error("malformed ControlParameters: {0}")]
    MalformedParameters(DecodeError),
    /// The PrefixAnnouncement of `rib/announce` is invalid.
    #[error("malformed prefix announcement: {0}")]
    MalformedAnnouncement(AnnounceError),
    /// A v0.2 signature whose components do not decode.
    #[error("malformed command signature: {0}")]
    MalformedSignature(DecodeError),
}

/// A reply NFD sends instead of executing a command.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{code} {text} ({detail})")]
pub struct Rejection {
    /// Status code.
    pub code: u64,
    /// Status text, exactly as NFD words it.
    pub text: String,
    /// Why, for logs (not sent).
    pub detail: String,
}

impl Rejection {
    fn invalid(detail: impl Into<String>) -> Self {
        Rejection {
            code: status::BAD_REQUEST,
            text: "failed in validating parameters".into(),
            detail: detail.into(),
        }
    }

    /// The ControlResponse to send.
    pub fn response(&self) -> ControlResponse {
        ControlResponse::new(self.code, self.text.clone())
    }
}

/// Parses a command Interest (stage 1); see the module documentation.
pub fn parse_command(interest: &Interest) -> Result<Command, CommandError> {
    let name = &interest.name;
    let generic = |i: usize| {
        name.get(i)
            .filter(|c| c.typ() == tlv_type::GENERIC_NAME_COMPONENT)
            .map(|c| c.value())
    };
    let top = match (generic(0), generic(1)) {
        (Some(b"localhost"), Some(b"nfd")) => TopPrefix::Localhost,
        (Some(b"localhop"), Some(b"nfd")) => TopPrefix::Localhop,
        _ => return Err(CommandError::NotManagement),
    };
    let (module, verb) = match (generic(2), generic(3)) {
        (Some(m), Some(v)) => (m, v),
        _ => return Err(CommandError::NotManagement),
    };
    let verb = Verb::from_components(module, verb).ok_or(CommandError::UnknownCommand)?;
    if top == TopPrefix::Localhop && verb.module() != "rib" {
        return Err(CommandError::UnknownCommand);
    }
    let (params, announcement) = if verb == Verb::RibAnnounce {
        let ap = interest
            .app_params
            .as_ref()
            .ok_or(CommandError::MissingParameters)?;
        let pa =
            PrefixAnnouncement::decode(ap.clone()).map_err(CommandError::MalformedAnnouncement)?;
        (ControlParameters::default(), Some(pa))
    } else {
        let c = name.get(4).ok_or(CommandError::MissingParameters)?;
        let p = ControlParameters::from_component_value(c.value())
            .map_err(CommandError::MalformedParameters)?;
        (p, None)
    };
    Ok(Command {
        top,
        verb,
        params,
        announcement,
        signature: signature_of(interest)?,
    })
}

/// Components a v0.2 signed command appends after the ControlParameters.
const V02_COMPONENTS: usize = 4;

/// Tells the signature form apart: v0.3 when the Interest carries InterestSignatureInfo; v0.2
/// when the name ends in components that hold a SignatureInfo and a SignatureValue element.
fn signature_of(interest: &Interest) -> Result<CommandSignature, CommandError> {
    if let (Some(info), Some(value)) = (&interest.sig_info, &interest.sig_value) {
        return Ok(CommandSignature::V03 {
            info: info.clone(),
            value: value.clone(),
        });
    }
    let name = &interest.name;
    let n = name.len();
    if n < 5 + V02_COMPONENTS {
        return Ok(CommandSignature::Unsigned);
    }
    let comp = |back: usize| name.get(n - back).expect("index within the name").value();
    let looks_like = |v: &[u8], typ: u64| v.first() == Some(&(typ as u8));
    if !looks_like(comp(2), tlv_type::SIGNATURE_INFO)
        || !looks_like(comp(1), tlv_type::SIGNATURE_VALUE)
    {
        return Ok(CommandSignature::Unsigned);
    }
    let info_wire = Bytes::copy_from_slice(comp(2));
    let info_el = kite_packet::tlv::read_single_of(&info_wire, tlv_type::SIGNATURE_INFO)
        .map_err(CommandError::MalformedSignature)?;
    let info =
        SignatureInfo::decode(&info_wire, &info_el).map_err(CommandError::MalformedSignature)?;
    let value_wire = Bytes::copy_from_slice(comp(1));
    let value_el = kite_packet::tlv::read_single_of(&value_wire, tlv_type::SIGNATURE_VALUE)
        .map_err(CommandError::MalformedSignature)?;
    let ts = comp(4);
    let timestamp = kite_packet::varnum::read_nonneg(tlv_type::GENERIC_NAME_COMPONENT, ts)
        .map_err(CommandError::MalformedSignature)?;
    Ok(CommandSignature::V02 {
        timestamp,
        nonce: Bytes::copy_from_slice(comp(3)),
        info,
        value: value_wire.slice(value_el.value_range()),
    })
}

impl Command {
    /// Stage 3: validates the request as ndn-cxx does, fills NFD's defaults, then applies the
    /// depth limit of the manager that handles the verb.
    pub fn validate(&mut self) -> Result<(), Rejection> {
        validate_fields(self.verb, &self.params)?;
        apply_defaults(self.verb, &mut self.params);
        let depth = self.params.name.as_ref().map_or(0, Name::len);
        if depth > MAX_NAME_DEPTH {
            let text = match self.verb {
                Verb::RibRegister => {
                    format!("Route prefix cannot exceed {MAX_NAME_DEPTH} components")
                }
                Verb::FibAddNextHop | Verb::StrategyChoiceSet => {
                    format!("Prefix has too many components (limit is {MAX_NAME_DEPTH})")
                }
                _ => return Ok(()),
            };
            return Err(Rejection {
                code: status::PREFIX_TOO_LONG,
                text,
                detail: format!("prefix has {depth} components"),
            });
        }
        Ok(())
    }

    /// Replaces FaceId 0 with `incoming_face_id` (the face the command arrived on, from the
    /// IncomingFaceId field) for the verbs where 0 means "the requesting face": faces/update,
    /// fib/add-nexthop, fib/remove-nexthop, rib/register, rib/unregister. Call it after
    /// [`Command::validate`], which turns an absent FaceId into 0.
    pub fn resolve_self_face(&mut self, incoming_face_id: u64) {
        let self_face_verbs = [
            Verb::FacesUpdate,
            Verb::FibAddNextHop,
            Verb::FibRemoveNextHop,
            Verb::RibRegister,
            Verb::RibUnregister,
        ];
        if self_face_verbs.contains(&self.verb) && self.params.face_id == Some(0) {
            self.params.face_id = Some(incoming_face_id);
        }
    }
}

/// The field table and the verb-specific checks of ndn-cxx's `validateRequest`.
fn validate_fields(verb: Verb, p: &ControlParameters) -> Result<(), Rejection> {
    let rules = verb.rules();
    let present = p.present_fields();
    for typ in rules.required {
        if !present.contains(typ) {
            return Err(Rejection::invalid(format!(
                "{} is required but missing",
                field_name(*typ)
            )));
        }
    }
    for typ in &present {
        if !rules.required.contains(typ) && !rules.optional.contains(typ) {
            return Err(Rejection::invalid(format!(
                "{} is forbidden but present",
                field_name(*typ)
            )));
        }
    }
    if rules.optional.contains(&t::FLAGS)
        && rules.optional.contains(&t::MASK)
        && p.flags.is_some() != p.mask.is_some()
    {
        return Err(Rejection::invalid("Flags must be accompanied by Mask"));
    }
    match verb {
        Verb::FacesDestroy if p.face_id == Some(0) => {
            Err(Rejection::invalid("FaceId must be valid"))
        }
        Verb::CsErase if p.count == Some(0) => Err(Rejection::invalid("Count must be positive")),
        Verb::StrategyChoiceUnset if p.name.as_ref().is_some_and(Name::is_empty) => {
            Err(Rejection::invalid("Name must not be ndn:/"))
        }
        _ => Ok(()),
    }
}

/// ndn-cxx's `applyDefaultsToRequest`.
fn apply_defaults(verb: Verb, p: &mut ControlParameters) {
    match verb {
        Verb::FacesCreate => {
            p.face_persistency
                .get_or_insert(t::FacePersistency::PERSISTENT);
        }
        Verb::FacesUpdate | Verb::FibRemoveNextHop => {
            p.face_id.get_or_insert(0);
        }
        Verb::FibAddNextHop => {
            p.face_id.get_or_insert(0);
            p.cost.get_or_insert(0);
        }
        Verb::RibRegister => {
            p.face_id.get_or_insert(0);
            p.origin.get_or_insert(RouteOrigin::APP);
            p.cost.get_or_insert(0);
            p.flags.get_or_insert(route_flags::CHILD_INHERIT);
        }
        Verb::RibUnregister => {
            p.face_id.get_or_insert(0);
            p.origin.get_or_insert(RouteOrigin::APP);
        }
        _ => {}
    }
}

/// A field's name as ndn-cxx spells it in validation messages.
fn field_name(typ: u64) -> &'static str {
    match typ {
        tlv_type::NAME => "Name",
        t::FACE_ID => "FaceId",
        t::URI => "Uri",
        t::LOCAL_URI => "LocalUri",
        t::ORIGIN => "Origin",
        t::COST => "Cost",
        t::CAPACITY => "Capacity",
        t::COUNT => "Count",
        t::FLAGS => "Flags",
        t::MASK => "Mask",
        t::STRATEGY => "Strategy",
        t::EXPIRATION_PERIOD => "ExpirationPeriod",
        t::FACE_PERSISTENCY => "FacePersistency",
        t::BASE_CONGESTION_MARKING_INTERVAL => "BaseCongestionMarkingInterval",
        t::DEFAULT_CONGESTION_THRESHOLD => "DefaultCongestionThreshold",
        _ => "Mtu",
    }
}

#[cfg(test)]
mod tests;
