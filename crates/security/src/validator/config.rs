//! A validator configuration in ndn-cxx's format (`ValidatorConfig`, the format of NFD's
//! `localhost_security`, `localhop_security` and `prefix_announcement_validation`): `rule`
//! sections (`id`, `for interest|data`, `filter`s, `checker`s) and `trust-anchor` sections
//! (`type file` with `file-name`, `type base64` with `base64-string`, `type dir` with `dir`,
//! each with an optional `refresh` such as `1h`, `10m`, `30s`; or `type any`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use kite_packet::name::Component;
use kite_packet::{Name, SignatureType};

use super::info::{self, Node};
use super::regex::NameRegex;
use crate::cert::Certificate;

/// The largest configuration file read.
pub const MAX_CONFIG_SIZE: u64 = 1 << 20;

/// Why a configuration is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}: {why}")]
pub struct ConfigError {
    /// The file (or `<inline>`).
    pub file: String,
    /// What is wrong, with its line.
    pub why: String,
}

/// How two names relate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relation {
    /// The same name.
    Equal,
    /// A prefix of (or equal to) the other.
    IsPrefixOf,
    /// A prefix of and shorter than the other.
    IsStrictPrefixOf,
}

impl Relation {
    fn parse(s: &str) -> Option<Relation> {
        match s.to_ascii_lowercase().as_str() {
            "equal" => Some(Relation::Equal),
            "is-prefix-of" => Some(Relation::IsPrefixOf),
            "is-strict-prefix-of" => Some(Relation::IsStrictPrefixOf),
            _ => None,
        }
    }

    /// Whether `a` relates so to `b`.
    pub fn holds(self, a: &Name, b: &Name) -> bool {
        match self {
            Relation::Equal => a == b,
            Relation::IsPrefixOf => a.is_prefix_of(b),
            Relation::IsStrictPrefixOf => a.len() < b.len() && a.is_prefix_of(b),
        }
    }
}

/// Which packets a rule applies to.
#[derive(Debug, Clone)]
pub enum Filter {
    /// Names that `name` relates to.
    Relation(Name, Relation),
    /// Names matching.
    Regex(NameRegex),
}

impl Filter {
    fn matches(&self, name: &Name) -> bool {
        match self {
            Filter::Relation(n, r) => r.holds(n, name),
            Filter::Regex(re) => re.is_match(name),
        }
    }
}

/// What a checker asks of the KeyLocator.
#[derive(Debug, Clone)]
pub enum KeyLocatorCheck {
    /// Nothing (DigestSha256 without `key-locator`).
    None,
    /// The KeyLocator's identity relates to `name`: `name` relation identity.
    Name(Name, Relation),
    /// The KeyLocator matches.
    Regex(NameRegex),
    /// The expansions of the KeyLocator and of the packet name relate.
    Hyper {
        /// k-regex and k-expand.
        key: (NameRegex, String),
        /// p-regex and p-expand.
        packet: (NameRegex, String),
        /// h-relation: key expansion relation packet expansion.
        relation: Relation,
    },
}

/// One checker: a signature type and a KeyLocator check.
#[derive(Debug, Clone)]
pub struct Checker {
    /// The SignatureType required.
    pub sig_type: SignatureType,
    /// What the KeyLocator must satisfy.
    pub key_locator: KeyLocatorCheck,
}

impl Checker {
    /// Whether a packet named `name` (the name filters see) signed with `sig_type` by
    /// `key_locator` passes; the error says why not.
    pub fn check(&self, sig_type: u64, name: &Name, key_locator: &Name) -> Result<(), String> {
        if sig_type != self.sig_type.0 {
            return Err(format!(
                "signature type {sig_type} is not the checker's {}",
                self.sig_type.0
            ));
        }
        match &self.key_locator {
            KeyLocatorCheck::None => Ok(()),
            KeyLocatorCheck::Name(n, r) => {
                let identity = identity_of(key_locator)
                    .ok_or_else(|| format!("KeyLocator {key_locator} names no key"))?;
                if r.holds(n, &identity) {
                    Ok(())
                } else {
                    Err(format!("identity {identity} is not related to {n}"))
                }
            }
            KeyLocatorCheck::Regex(re) => {
                if re.is_match(key_locator) {
                    Ok(())
                } else {
                    Err(format!(
                        "KeyLocator {key_locator} does not match {}",
                        re.as_str()
                    ))
                }
            }
            KeyLocatorCheck::Hyper {
                key,
                packet,
                relation,
            } => {
                let p = packet
                    .0
                    .expand(name, &packet.1)
                    .ok_or_else(|| format!("{name} does not match {}", packet.0.as_str()))?;
                let k = key.0.expand(key_locator, &key.1).ok_or_else(|| {
                    format!("KeyLocator {key_locator} does not match {}", key.0.as_str())
                })?;
                if relation.holds(&k, &p) {
                    Ok(())
                } else {
                    Err(format!("{k} is not related to {p}"))
                }
            }
        }
    }

    fn hierarchical(sig_type: SignatureType) -> Checker {
        let re = |s: &str| NameRegex::new(s).expect("a valid built-in expression");
        Checker {
            sig_type,
            key_locator: KeyLocatorCheck::Hyper {
                key: (re("^(<>*)<KEY><>{1,3}$"), "\\1".into()),
                packet: (re("^(<>*)$"), "\\1".into()),
                relation: Relation::IsPrefixOf,
            },
        }
    }
}

/// The identity a KeyLocator names: the name before its `KEY` component (within the last
/// four), or the name itself for ndn-cxx's DigestSha256 and HMAC identities.
pub fn identity_of(key_locator: &Name) -> Option<Name> {
    let special = [
        "/localhost/identity/digest-sha256",
        "/localhost/identity/hmac",
    ];
    if special.iter().any(|s| key_locator.to_string() == *s) {
        return Some(key_locator.clone());
    }
    let n = key_locator.len();
    (n.saturating_sub(4)..n)
        .rev()
        .find(|&i| key_locator.get(i).is_some_and(|c| is_key(&c)))
        .map(|i| key_locator.prefix(i))
}

fn is_key(c: &Component<'_>) -> bool {
    c.typ() == kite_packet::tlv_type::GENERIC_NAME_COMPONENT && c.value() == b"KEY"
}

/// A rule: which packets (filters, any of them; none: all) and how they must be signed
/// (checkers, any of them).
#[derive(Debug, Clone)]
pub struct Rule {
    /// Its id, for messages.
    pub id: String,
    /// For Data (else Interests).
    pub for_data: bool,
    /// Any of them must match; none: every packet.
    pub filters: Vec<Filter>,
    /// Any of them must pass; at least one.
    pub checkers: Vec<Checker>,
}

impl Rule {
    /// Whether the rule applies to a packet named `name`.
    pub fn matches(&self, name: &Name) -> bool {
        self.filters.is_empty() || self.filters.iter().any(|f| f.matches(name))
    }

    /// Whether one of the checkers passes; the error lists why each failed.
    pub fn check(&self, sig_type: u64, name: &Name, key_locator: &Name) -> Result<(), String> {
        let mut why = Vec::new();
        for c in &self.checkers {
            match c.check(sig_type, name, key_locator) {
                Ok(()) => return Ok(()),
                Err(e) => why.push(e),
            }
        }
        Err(format!(
            "rule {:?}: KeyLocator {key_locator} passes no checker ({})",
            self.id,
            why.join("; ")
        ))
    }
}

/// Where trust anchors come from.
#[derive(Debug, Clone)]
pub enum AnchorSource {
    /// A certificate file, read again every `refresh` if given.
    File {
        /// The file.
        path: PathBuf,
        /// How often it is read again.
        refresh: Option<Duration>,
    },
    /// Every certificate file in a directory, read again every `refresh` if given.
    Dir {
        /// The directory.
        path: PathBuf,
        /// How often it is read again.
        refresh: Option<Duration>,
    },
    /// A certificate given in the configuration.
    Inline(Box<Certificate>),
}

/// A parsed configuration.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    /// `trust-anchor { type any }`: every packet is accepted, signature unchecked.
    pub any: bool,
    /// Rules for Interests, in order.
    pub interest_rules: Vec<Rule>,
    /// Rules for Data (certificates, prefix announcements), in order.
    pub data_rules: Vec<Rule>,
    /// Trust anchors.
    pub anchors: Vec<AnchorSource>,
}

impl Policy {
    /// `trust-anchor { type any }` alone: NFD's default for `localhost_security`.
    pub fn accept_all() -> Policy {
        Policy {
            any: true,
            ..Policy::default()
        }
    }

    /// Reads a configuration file; relative anchor paths are relative to its directory.
    pub fn read(path: &Path) -> Result<Policy, ConfigError> {
        let file = path.display().to_string();
        let err = |why: String| ConfigError {
            file: file.clone(),
            why,
        };
        let meta = std::fs::metadata(path).map_err(|e| err(e.to_string()))?;
        if meta.len() > MAX_CONFIG_SIZE {
            return Err(err(format!("larger than {MAX_CONFIG_SIZE} octets")));
        }
        let text = std::fs::read_to_string(path).map_err(|e| err(e.to_string()))?;
        let dir = path.parent().unwrap_or(Path::new("."));
        Policy::parse(&text, dir).map_err(|e| ConfigError { file, why: e.why })
    }

    /// Parses configuration text; relative anchor paths are relative to `dir`.
    pub fn parse(text: &str, dir: &Path) -> Result<Policy, ConfigError> {
        let nodes = info::parse(text).map_err(|e| inline(e.to_string()))?;
        Policy::from_nodes(&nodes, dir)
    }

    /// The policy of an already parsed section (such as one inside a larger file).
    pub fn from_nodes(nodes: &[Node], dir: &Path) -> Result<Policy, ConfigError> {
        let mut p = Policy::default();
        for n in nodes {
            match n.key.to_ascii_lowercase().as_str() {
                "rule" => {
                    let r = rule(n)?;
                    if r.for_data {
                        p.data_rules.push(r);
                    } else {
                        p.interest_rules.push(r);
                    }
                }
                "trust-anchor" => match anchor(n, dir)? {
                    Some(a) => p.anchors.push(a),
                    None => p.any = true,
                },
                other => return Err(at(n, format!("unknown section {other:?}"))),
            }
        }
        Ok(p)
    }
}

fn inline(why: String) -> ConfigError {
    ConfigError {
        file: "<inline>".into(),
        why,
    }
}

fn at(n: &Node, why: String) -> ConfigError {
    inline(format!("line {}: {why}", n.line))
}

/// The children of `n` in order, each expected key taken in turn.
struct Fields<'a> {
    parent: &'a Node,
    rest: std::slice::Iter<'a, Node>,
    peeked: Option<&'a Node>,
}

impl<'a> Fields<'a> {
    fn new(parent: &'a Node) -> Self {
        Fields {
            parent,
            rest: parent.children.iter(),
            peeked: None,
        }
    }

    fn peek(&mut self) -> Option<&'a Node> {
        if self.peeked.is_none() {
            self.peeked = self.rest.next();
        }
        self.peeked
    }

    fn take_if(&mut self, key: &str) -> Option<&'a Node> {
        let n = self.peek()?;
        if n.key.eq_ignore_ascii_case(key) {
            self.peeked = None;
            Some(n)
        } else {
            None
        }
    }

    fn expect(&mut self, key: &str) -> Result<&'a Node, ConfigError> {
        self.take_if(key).ok_or_else(|| {
            at(
                self.peek().unwrap_or(self.parent),
                format!("expecting {key} in {}", self.parent.key),
            )
        })
    }

    fn end(&mut self) -> Result<(), ConfigError> {
        match self.peek() {
            None => Ok(()),
            Some(n) => Err(at(
                n,
                format!("unexpected {} in {}", n.key, self.parent.key),
            )),
        }
    }
}

fn name(n: &Node) -> Result<Name, ConfigError> {
    n.value
        .parse()
        .map_err(|_| at(n, format!("not a name: {:?}", n.value)))
}

fn relation(n: &Node) -> Result<Relation, ConfigError> {
    Relation::parse(&n.value).ok_or_else(|| at(n, format!("unknown relation {:?}", n.value)))
}

fn regex(n: &Node) -> Result<NameRegex, ConfigError> {
    NameRegex::new(&n.value).map_err(|e| at(n, e.to_string()))
}

fn rule(n: &Node) -> Result<Rule, ConfigError> {
    let mut f = Fields::new(n);
    let id = f.expect("id")?.value.clone();
    let usage = f.expect("for")?;
    let for_data = match usage.value.to_ascii_lowercase().as_str() {
        "data" => true,
        "interest" => false,
        other => return Err(at(usage, format!("rule {id:?}: for {other:?}"))),
    };
    let mut filters = Vec::new();
    while let Some(fl) = f.take_if("filter") {
        filters.push(filter(fl)?);
    }
    let mut checkers = Vec::new();
    while let Some(c) = f.take_if("checker") {
        checkers.push(checker(c)?);
    }
    f.end()?;
    if checkers.is_empty() {
        return Err(at(n, format!("rule {id:?} has no checker")));
    }
    Ok(Rule {
        id,
        for_data,
        filters,
        checkers,
    })
}

fn filter(n: &Node) -> Result<Filter, ConfigError> {
    let mut f = Fields::new(n);
    let t = f.expect("type")?;
    if !t.value.eq_ignore_ascii_case("name") {
        return Err(at(t, format!("unknown filter type {:?}", t.value)));
    }
    let out = if let Some(nm) = f.take_if("name") {
        Filter::Relation(name(nm)?, relation(f.expect("relation")?)?)
    } else {
        Filter::Regex(regex(f.expect("regex")?)?)
    };
    f.end()?;
    Ok(out)
}

fn sig_type(n: &Node) -> Result<SignatureType, ConfigError> {
    match n.value.to_ascii_lowercase().as_str() {
        "rsa-sha256" => Ok(SignatureType::SHA256_WITH_RSA),
        "ecdsa-sha256" => Ok(SignatureType::SHA256_WITH_ECDSA),
        "sha256" => Ok(SignatureType::DIGEST_SHA256),
        other => Err(at(n, format!("unknown sig-type {other:?}"))),
    }
}

fn checker(n: &Node) -> Result<Checker, ConfigError> {
    let mut f = Fields::new(n);
    let t = f.expect("type")?;
    let kind = t.value.to_ascii_lowercase();
    let sig = match f.take_if("sig-type") {
        Some(s) => sig_type(s)?,
        None => SignatureType::SHA256_WITH_ECDSA,
    };
    let out = match kind.as_str() {
        "hierarchical" => Checker::hierarchical(sig),
        "customized" => match f.take_if("key-locator") {
            None if sig == SignatureType::DIGEST_SHA256 => Checker {
                sig_type: sig,
                key_locator: KeyLocatorCheck::None,
            },
            None => return Err(at(n, "expecting key-locator in checker".into())),
            Some(kl) => Checker {
                sig_type: sig,
                key_locator: key_locator(kl)?,
            },
        },
        other => return Err(at(t, format!("unknown checker type {other:?}"))),
    };
    f.end()?;
    Ok(out)
}

fn key_locator(n: &Node) -> Result<KeyLocatorCheck, ConfigError> {
    let mut f = Fields::new(n);
    let t = f.expect("type")?;
    if !t.value.eq_ignore_ascii_case("name") {
        return Err(at(t, format!("unknown key-locator type {:?}", t.value)));
    }
    let out = if let Some(nm) = f.take_if("name") {
        KeyLocatorCheck::Name(name(nm)?, relation(f.expect("relation")?)?)
    } else if let Some(re) = f.take_if("regex") {
        KeyLocatorCheck::Regex(regex(re)?)
    } else {
        let h = f.expect("hyper-relation")?;
        let mut g = Fields::new(h);
        let k = regex(g.expect("k-regex")?)?;
        let ke = g.expect("k-expand")?.value.clone();
        let rel = relation(g.expect("h-relation")?)?;
        let p = regex(g.expect("p-regex")?)?;
        let pe = g.expect("p-expand")?.value.clone();
        g.end()?;
        KeyLocatorCheck::Hyper {
            key: (k, ke),
            packet: (p, pe),
            relation: rel,
        }
    };
    f.end()?;
    Ok(out)
}

fn refresh(f: &mut Fields<'_>) -> Result<Option<Duration>, ConfigError> {
    let Some(r) = f.take_if("refresh") else {
        return Ok(None);
    };
    let v = r.value.trim();
    let bad = || at(r, format!("bad refresh {v:?} (a number and h, m or s)"));
    let (num, unit) = v.split_at(v.len().checked_sub(1).ok_or_else(bad)?);
    let n: u64 = num.parse().map_err(|_| bad())?;
    if n == 0 {
        return Ok(Some(Duration::from_secs(3600)));
    }
    let secs = match unit {
        "h" => n * 3600,
        "m" => n * 60,
        "s" => n,
        _ => return Err(bad()),
    };
    Ok(Some(Duration::from_secs(secs)))
}

/// A trust anchor section; `None` for `type any`.
fn anchor(n: &Node, dir: &Path) -> Result<Option<AnchorSource>, ConfigError> {
    let mut f = Fields::new(n);
    let t = f.expect("type")?;
    let out = match t.value.to_ascii_lowercase().as_str() {
        "any" => None,
        "file" => {
            let p = dir.join(&f.expect("file-name")?.value);
            Some(AnchorSource::File {
                path: p,
                refresh: refresh(&mut f)?,
            })
        }
        "dir" => {
            let p = dir.join(&f.expect("dir")?.value);
            Some(AnchorSource::Dir {
                path: p,
                refresh: refresh(&mut f)?,
            })
        }
        "base64" => {
            let s = f.expect("base64-string")?;
            let c = Certificate::from_base64(&s.value).map_err(|e| at(s, e.to_string()))?;
            Some(AnchorSource::Inline(Box::new(c)))
        }
        other => return Err(at(t, format!("unknown trust-anchor type {other:?}"))),
    };
    f.end()?;
    Ok(out)
}
