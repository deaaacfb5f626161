//! NDN name regular expressions, as ndn-cxx's `Regex` reads them in validator configuration:
//! `<pattern>` matches one component whose URI form matches `pattern` (a regular expression;
//! `<>` matches any component), `[<a><b>]` one of several (`[^…]` none of them), `( … )` a
//! group, each followed by `*`, `+`, `?`, `{n}`, `{n,}`, `{,m}` or `{n,m}`; `^` and `$` anchor
//! the match to the name's first and last component (without them the match may start and end
//! anywhere). An expansion such as `\1` (or `\1<x>`) builds a name from the groups matched.
//!
//! Matching backtracks, as ndn-cxx's does, within a budget of [`STEP_BUDGET`] steps per
//! match: a name that would take longer (many components against nested repetitions) does
//! not match, so no name from the network can make matching slow.

use kite_packet::name::Component;
use kite_packet::Name;

/// Most matching steps one name may take.
pub const STEP_BUDGET: usize = 100_000;
/// Longest expression accepted.
pub const MAX_PATTERN: usize = 4096;

#[derive(Debug, Clone)]
enum Atom {
    /// One component: any (`None`) or one matching the pattern.
    Comp(Option<regex::Regex>),
    /// One component matching any (or, negated, none) of the alternatives.
    Set(bool, Vec<Option<regex::Regex>>),
    /// A group, with its number.
    Group(Vec<Item>, usize),
}

#[derive(Debug, Clone)]
struct Item {
    atom: Atom,
    min: usize,
    max: usize,
}

/// A compiled NDN regular expression.
#[derive(Debug, Clone)]
pub struct NameRegex {
    text: String,
    items: Vec<Item>,
    groups: usize,
}

/// Why an expression does not compile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad name regex {text:?}: {why}")]
pub struct RegexError {
    /// The expression.
    pub text: String,
    /// What is wrong.
    pub why: String,
}

struct Parser<'a> {
    s: &'a str,
    pos: usize,
    groups: usize,
}

impl Parser<'_> {
    fn err(&self, why: &str) -> RegexError {
        RegexError {
            text: self.s.to_owned(),
            why: format!("{why} at offset {}", self.pos),
        }
    }

    fn peek(&self) -> Option<u8> {
        self.s.as_bytes().get(self.pos).copied()
    }

    fn seq(&mut self, depth: usize) -> Result<Vec<Item>, RegexError> {
        if depth > 32 {
            return Err(self.err("groups nested too deep"));
        }
        let mut items = Vec::new();
        while let Some(c) = self.peek() {
            let atom = match c {
                b')' | b'$' => break,
                b'<' => Atom::Comp(self.component()?),
                b'[' => self.set()?,
                b'(' => {
                    self.pos += 1;
                    self.groups += 1;
                    let n = self.groups;
                    let inner = self.seq(depth + 1)?;
                    if self.peek() != Some(b')') {
                        return Err(self.err("unclosed ("));
                    }
                    self.pos += 1;
                    Atom::Group(inner, n)
                }
                _ => return Err(self.err("unexpected character")),
            };
            let (min, max) = self.repeat()?;
            items.push(Item { atom, min, max });
        }
        Ok(items)
    }

    fn component(&mut self) -> Result<Option<regex::Regex>, RegexError> {
        self.pos += 1;
        let start = self.pos;
        let end = self.s[start..]
            .find('>')
            .ok_or_else(|| self.err("unclosed <"))?;
        self.pos = start + end + 1;
        let body = &self.s[start..start + end];
        if body.is_empty() {
            return Ok(None);
        }
        regex::Regex::new(&format!("^(?:{body})$"))
            .map(Some)
            .map_err(|e| self.err(&format!("component pattern: {e}")))
    }

    fn set(&mut self) -> Result<Atom, RegexError> {
        self.pos += 1;
        let negated = self.peek() == Some(b'^');
        if negated {
            self.pos += 1;
        }
        let mut alts = Vec::new();
        while self.peek() == Some(b'<') {
            alts.push(self.component()?);
        }
        if self.peek() != Some(b']') || alts.is_empty() {
            return Err(self.err("a set is [<a><b>…]"));
        }
        self.pos += 1;
        Ok(Atom::Set(negated, alts))
    }

    fn repeat(&mut self) -> Result<(usize, usize), RegexError> {
        let r = match self.peek() {
            Some(b'*') => (0, usize::MAX),
            Some(b'+') => (1, usize::MAX),
            Some(b'?') => (0, 1),
            Some(b'{') => {
                let end = self.s[self.pos..]
                    .find('}')
                    .ok_or_else(|| self.err("unclosed {"))?;
                let body = &self.s[self.pos + 1..self.pos + end];
                let num = |t: &str| t.trim().parse::<usize>().map_err(|_| self.err("bad {n,m}"));
                let r = match body.split_once(',') {
                    None => {
                        let n = num(body)?;
                        (n, n)
                    }
                    Some((a, b)) => (
                        if a.trim().is_empty() { 0 } else { num(a)? },
                        if b.trim().is_empty() {
                            usize::MAX
                        } else {
                            num(b)?
                        },
                    ),
                };
                if r.0 > r.1 {
                    return Err(self.err("{n,m} with n > m"));
                }
                self.pos += end;
                r
            }
            _ => return Ok((1, 1)),
        };
        self.pos += 1;
        Ok(r)
    }
}

impl NameRegex {
    /// Compiles `text`.
    pub fn new(text: &str) -> Result<NameRegex, RegexError> {
        if text.len() > MAX_PATTERN {
            return Err(RegexError {
                text: text[..64].to_owned(),
                why: format!("longer than {MAX_PATTERN} characters"),
            });
        }
        let mut p = Parser {
            s: text,
            pos: 0,
            groups: 0,
        };
        let anchored_start = p.peek() == Some(b'^');
        if anchored_start {
            p.pos += 1;
        }
        let mut items = p.seq(0)?;
        let anchored_end = p.peek() == Some(b'$');
        if anchored_end {
            p.pos += 1;
        }
        if p.pos != text.len() {
            return Err(p.err("unexpected character"));
        }
        let any = || Item {
            atom: Atom::Comp(None),
            min: 0,
            max: usize::MAX,
        };
        if !anchored_start {
            items.insert(0, any());
        }
        if !anchored_end {
            items.push(any());
        }
        Ok(NameRegex {
            text: text.to_owned(),
            items,
            groups: p.groups,
        })
    }

    /// The expression as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether `name` matches.
    pub fn is_match(&self, name: &Name) -> bool {
        self.captures(name).is_some()
    }

    /// The component range each group matched (the last time it matched), when `name`
    /// matches.
    fn captures(&self, name: &Name) -> Option<Vec<Option<(usize, usize)>>> {
        let comps: Vec<String> = name.iter().map(|c| c.to_string()).collect();
        let mut m = Matcher {
            comps: &comps,
            steps: 0,
            caps: vec![None; self.groups + 1],
        };
        let n = comps.len();
        let ok = m.seq(&self.items, 0, &mut |p, _| p == n);
        ok.then_some(m.caps)
    }

    /// The name `expand` (e.g. `\1`, `\1<KEY>`) builds from the groups `name` matched;
    /// `None` when `name` does not match or `expand` names a group that does not exist.
    pub fn expand(&self, name: &Name, expand: &str) -> Option<Name> {
        let caps = self.captures(name)?;
        let all: Vec<Component<'_>> = name.iter().collect();
        let mut out = Name::from_components(std::iter::empty());
        let mut rest = expand;
        while !rest.is_empty() {
            if let Some(r) = rest.strip_prefix('\\') {
                let digits = r.chars().take_while(char::is_ascii_digit).count();
                let g: usize = r[..digits].parse().ok()?;
                let (a, b) = (*caps.get(g)?)?;
                for c in &all[a..b] {
                    out = out.append(*c);
                }
                rest = &r[digits..];
            } else if let Some(r) = rest.strip_prefix('<') {
                let end = r.find('>')?;
                let lit: Name = format!("/{}", &r[..end]).parse().ok()?;
                for c in lit.iter() {
                    out = out.append(c);
                }
                rest = &r[end + 1..];
            } else {
                return None;
            }
        }
        Some(out)
    }
}

type Caps = Vec<Option<(usize, usize)>>;

struct Matcher<'a> {
    comps: &'a [String],
    steps: usize,
    caps: Caps,
}

impl Matcher<'_> {
    fn budget(&mut self) -> bool {
        self.steps += 1;
        self.steps <= STEP_BUDGET
    }

    fn one(&self, alt: &Option<regex::Regex>, pos: usize) -> bool {
        alt.as_ref().is_none_or(|r| r.is_match(&self.comps[pos]))
    }

    /// Matches `items` from `pos`, calling `then` with each end position; true once `then`
    /// accepts.
    fn seq(
        &mut self,
        items: &[Item],
        pos: usize,
        then: &mut dyn FnMut(usize, &mut Self) -> bool,
    ) -> bool {
        if !self.budget() {
            return false;
        }
        let Some((first, rest)) = items.split_first() else {
            return then(pos, self);
        };
        self.item(first, 0, pos, &mut |p, m: &mut Self| m.seq(rest, p, then))
    }

    /// Matches `item` repeated (it matched `count` times so far) greedily from `pos`.
    fn item(
        &mut self,
        item: &Item,
        count: usize,
        pos: usize,
        then: &mut dyn FnMut(usize, &mut Self) -> bool,
    ) -> bool {
        if !self.budget() {
            return false;
        }
        if count < item.max {
            let more = match &item.atom {
                Atom::Comp(alt) => {
                    pos < self.comps.len()
                        && self.one(alt, pos)
                        && self.item(item, count + 1, pos + 1, then)
                }
                Atom::Set(neg, alts) => {
                    pos < self.comps.len()
                        && alts.iter().any(|a| self.one(a, pos)) != *neg
                        && self.item(item, count + 1, pos + 1, then)
                }
                Atom::Group(inner, g) => {
                    let g = *g;
                    self.seq(inner, pos, &mut |p, m: &mut Self| {
                        // A group matching nothing, beyond its required count, would
                        // repeat forever.
                        if p == pos && count >= item.min {
                            return false;
                        }
                        let saved = m.caps[g];
                        m.caps[g] = Some((pos, p));
                        if m.item(item, count + 1, p, then) {
                            return true;
                        }
                        m.caps[g] = saved;
                        false
                    })
                }
            };
            if more {
                return true;
            }
        }
        if count >= item.min {
            // A group that may match nothing still records an empty match.
            if let Atom::Group(_, g) = &item.atom {
                if count == 0 {
                    let saved = self.caps[*g];
                    self.caps[*g] = Some((pos, pos));
                    if then(pos, self) {
                        return true;
                    }
                    self.caps[*g] = saved;
                    return false;
                }
            }
            return then(pos, self);
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> Name {
        s.parse().unwrap()
    }

    #[test]
    fn components_sets_groups_and_repetitions() {
        let r = NameRegex::new("^<localhop><nfd><rib>[<register><unregister>]<><><>$").unwrap();
        assert!(r.is_match(&n("/localhop/nfd/rib/register/p/t/x")));
        assert!(r.is_match(&n("/localhop/nfd/rib/unregister/p/t/x")));
        assert!(!r.is_match(&n("/localhop/nfd/rib/announce/p/t/x")));
        assert!(!r.is_match(&n("/localhop/nfd/rib/register/p/t")));
        let key = NameRegex::new("^<>*<KEY><>$").unwrap();
        assert!(key.is_match(&n("/a/b/KEY/k1")));
        assert!(!key.is_match(&n("/a/b/KEY/k1/self")));
        let neg = NameRegex::new("^[^<a><b>]<>?$").unwrap();
        assert!(neg.is_match(&n("/c")) && neg.is_match(&n("/c/d")));
        assert!(!neg.is_match(&n("/a/d")));
        let bounded = NameRegex::new("^<x>{2,3}$").unwrap();
        assert!(!bounded.is_match(&n("/x")));
        assert!(bounded.is_match(&n("/x/x")) && bounded.is_match(&n("/x/x/x")));
        assert!(!bounded.is_match(&n("/x/x/x/x")));
        let pat = NameRegex::new("^<ab+c>$").unwrap();
        assert!(pat.is_match(&n("/abbc")) && !pat.is_match(&n("/abd")));
        // Unanchored: anywhere.
        let inner = NameRegex::new("<KEY>").unwrap();
        assert!(inner.is_match(&n("/a/KEY/b")) && !inner.is_match(&n("/a/b")));
    }

    #[test]
    fn the_hierarchical_checkers_expansions() {
        let k = NameRegex::new("^(<>*)<KEY><>{1,3}$").unwrap();
        assert_eq!(
            k.expand(&n("/site/router/KEY/k1/issuer/v1"), "\\1"),
            Some(n("/site/router"))
        );
        assert_eq!(k.expand(&n("/KEY/k1"), "\\1"), Some(n("/")));
        assert_eq!(k.expand(&n("/site/x"), "\\1"), None);
        let p = NameRegex::new("^(<>*)$").unwrap();
        assert_eq!(p.expand(&n("/a/b"), "\\1"), Some(n("/a/b")));
        assert_eq!(p.expand(&n("/a/b"), "\\1<KEY>"), Some(n("/a/b/KEY")));
        assert_eq!(p.expand(&n("/a/b"), "\\2"), None);
    }

    #[test]
    fn hostile_patterns_and_names_are_bounded() {
        for bad in ["<a", "[<a>", "(<a>", "<a>{3,1}", "<a>{x}", "x", "[]", "<(>"] {
            assert!(NameRegex::new(bad).is_err(), "{bad:?}");
        }
        assert!(NameRegex::new(&"<a>".repeat(2000)).is_err());
        assert!(NameRegex::new(&"(".repeat(40)).is_err());
        // Exponential backtracking stops at the budget: no match, quickly.
        let r = NameRegex::new("^(<>*)*(<>*)*(<>*)*<z>$").unwrap();
        let long: Name = format!("/{}", vec!["a"; 60].join("/")).parse().unwrap();
        assert!(!r.is_match(&long));
    }
}
