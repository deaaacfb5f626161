//! Boost's INFO property-tree format, in which ndn-cxx and NFD write validator configuration:
//! `key value` lines, `key [value] { … }` sections, `;` comments, values bare or in double
//! quotes (with `\"`, `\\`, `\n`, `\t` escapes). Bounded: at most [`MAX_DEPTH`] nested sections
//! and [`MAX_NODES`] entries.

/// Deepest nesting of sections accepted.
pub const MAX_DEPTH: usize = 16;
/// Most entries (keys) in one file.
pub const MAX_NODES: usize = 10_000;

/// One entry: a key, its value (empty when none) and its children, in file order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Node {
    /// The key.
    pub key: String,
    /// The value ("" when none).
    pub value: String,
    /// The entries of its section, if it has one.
    pub children: Vec<Node>,
    /// The line it starts on (from 1), for error messages.
    pub line: usize,
}

/// Why a file is not INFO.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {why}")]
pub struct InfoError {
    /// The line (from 1).
    pub line: usize,
    /// What is wrong.
    pub why: String,
}

struct Lexer<'a> {
    s: &'a [u8],
    pos: usize,
    line: usize,
    nodes: usize,
}

#[derive(Debug, PartialEq)]
enum Tok {
    Word(String),
    Open,
    Close,
    Newline,
    End,
}

impl Lexer<'_> {
    fn err(&self, why: impl Into<String>) -> InfoError {
        InfoError {
            line: self.line,
            why: why.into(),
        }
    }

    fn next(&mut self) -> Result<Tok, InfoError> {
        loop {
            let Some(&c) = self.s.get(self.pos) else {
                return Ok(Tok::End);
            };
            match c {
                b'\n' => {
                    self.pos += 1;
                    self.line += 1;
                    return Ok(Tok::Newline);
                }
                b' ' | b'\t' | b'\r' => self.pos += 1,
                b';' => {
                    while self.s.get(self.pos).is_some_and(|&c| c != b'\n') {
                        self.pos += 1;
                    }
                }
                b'{' => {
                    self.pos += 1;
                    return Ok(Tok::Open);
                }
                b'}' => {
                    self.pos += 1;
                    return Ok(Tok::Close);
                }
                b'#' => return Err(self.err("#include and other directives are not supported")),
                b'"' => return self.quoted(),
                _ => {
                    let start = self.pos;
                    while self
                        .s
                        .get(self.pos)
                        .is_some_and(|&c| !b" \t\r\n;{}\"".contains(&c))
                    {
                        self.pos += 1;
                    }
                    let w = std::str::from_utf8(&self.s[start..self.pos])
                        .map_err(|_| self.err("not UTF-8"))?;
                    return Ok(Tok::Word(w.to_owned()));
                }
            }
        }
    }

    fn quoted(&mut self) -> Result<Tok, InfoError> {
        self.pos += 1;
        let mut out = Vec::new();
        loop {
            let Some(&c) = self.s.get(self.pos) else {
                return Err(self.err("unterminated string"));
            };
            self.pos += 1;
            match c {
                b'"' => break,
                b'\n' => return Err(self.err("unterminated string")),
                b'\\' => {
                    let e = *self.s.get(self.pos).ok_or_else(|| self.err("bad escape"))?;
                    self.pos += 1;
                    out.push(match e {
                        b'n' => b'\n',
                        b't' => b'\t',
                        b'0' => 0,
                        b'\\' | b'"' | b'\'' => e,
                        _ => return Err(self.err("bad escape")),
                    });
                }
                _ => out.push(c),
            }
        }
        String::from_utf8(out)
            .map(Tok::Word)
            .map_err(|_| self.err("not UTF-8"))
    }
}

/// Parses an INFO document into its top-level entries.
pub fn parse(text: &str) -> Result<Vec<Node>, InfoError> {
    let mut lx = Lexer {
        s: text.as_bytes(),
        pos: 0,
        line: 1,
        nodes: 0,
    };
    let (nodes, end) = section(&mut lx, 0)?;
    if end != Tok::End {
        return Err(lx.err("unmatched }"));
    }
    Ok(nodes)
}

/// The entries up to a closing brace (returned as `Tok::Close`) or the end.
fn section(lx: &mut Lexer<'_>, depth: usize) -> Result<(Vec<Node>, Tok), InfoError> {
    if depth > MAX_DEPTH {
        return Err(lx.err(format!("sections nested deeper than {MAX_DEPTH}")));
    }
    let mut out: Vec<Node> = Vec::new();
    loop {
        let t = lx.next()?;
        match t {
            Tok::Newline => continue,
            Tok::End | Tok::Close => return Ok((out, t)),
            Tok::Open => {
                // A section whose key is on the line before.
                let Some(last) = out.last_mut().filter(|n| n.children.is_empty()) else {
                    return Err(lx.err("{ without a key"));
                };
                let (children, end) = section(lx, depth + 1)?;
                if end != Tok::Close {
                    return Err(lx.err("unterminated section"));
                }
                last.children = children;
            }
            Tok::Word(key) => {
                lx.nodes += 1;
                if lx.nodes > MAX_NODES {
                    return Err(lx.err(format!("more than {MAX_NODES} entries")));
                }
                let mut node = Node {
                    key,
                    line: lx.line,
                    ..Node::default()
                };
                match lx.next()? {
                    Tok::Word(v) => {
                        node.value = v;
                        match lx.next()? {
                            Tok::Open => node.children = open(lx, depth)?,
                            Tok::Newline | Tok::End => {}
                            Tok::Close => {
                                out.push(node);
                                return Ok((out, Tok::Close));
                            }
                            Tok::Word(_) => return Err(lx.err("more than one value for a key")),
                        }
                    }
                    Tok::Open => node.children = open(lx, depth)?,
                    Tok::Newline | Tok::End => {}
                    Tok::Close => {
                        out.push(node);
                        return Ok((out, Tok::Close));
                    }
                }
                out.push(node);
            }
        }
    }
}

fn open(lx: &mut Lexer<'_>, depth: usize) -> Result<Vec<Node>, InfoError> {
    let (children, end) = section(lx, depth + 1)?;
    if end != Tok::Close {
        return Err(lx.err("unterminated section"));
    }
    Ok(children)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_values_sections_and_comments() {
        let doc = "rule\n{\n  id \"a rule\" ; comment\n  for interest\n  filter { type name\n regex ^<a>$ }\n}\ntrust-anchor { type any }\n";
        let n = parse(doc).unwrap();
        assert_eq!(n.len(), 2);
        assert_eq!(n[0].key, "rule");
        assert_eq!(n[0].children[0].value, "a rule");
        assert_eq!(n[0].children[1].value, "interest");
        assert_eq!(n[0].children[2].children[1].value, "^<a>$");
        assert_eq!(n[1].children[0].key, "type");
        assert_eq!(n[1].children[0].value, "any");
    }

    #[test]
    fn hostile_documents_are_refused_not_crashed_on() {
        let deep = "a {\n".repeat(MAX_DEPTH + 2) + &"}\n".repeat(MAX_DEPTH + 2);
        assert!(parse(&deep).unwrap_err().why.contains("deeper"));
        let many = "k v\n".repeat(MAX_NODES + 1);
        assert!(parse(&many).is_err());
        for bad in [
            "a { b c",
            "}",
            "a \"open",
            "{ x }",
            "#include x",
            "a b c",
            "a \"\\q\"",
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
        assert_eq!(parse("").unwrap(), vec![]);
    }
}
