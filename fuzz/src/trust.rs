//! Trust schemas and certificates (`kite_security::validator`, `kite_security::cert`): the
//! first octet picks what the rest is: validator configuration text, a certificate or safe
//! bag, an NDN name regex and a name to match it against, or a signed Interest validated by
//! a fixed hierarchical schema (its certificate request answered with the rest of the
//! input). Every input gives a value or an error; no panic, and matching ends (the
//! matcher's step budget).

use std::path::Path;

use bytes::Bytes;
use kite_packet::Name;
use kite_security::validator::regex::NameRegex;
use kite_security::validator::{Packet, Policy, Step, Validator};
use kite_security::{Certificate, SafeBag};

const SCHEMA: &str = "rule { id c\n for interest\n checker { type hierarchical } }\n\
                      rule { id d\n for data\n checker { type hierarchical } }\n\
                      trust-anchor { type dir\n dir /nonexistent }\n";

/// Runs one input.
pub fn run(data: &[u8]) {
    let Some((&sel, rest)) = data.split_first() else {
        return;
    };
    match sel % 4 {
        0 => {
            if let Ok(text) = std::str::from_utf8(rest) {
                if let Ok(p) = Policy::parse(text, Path::new("/nonexistent")) {
                    let _ = Validator::new(p);
                }
            }
        }
        1 => {
            if let Ok(c) = Certificate::decode(Bytes::copy_from_slice(rest)) {
                assert!(
                    c.name().len() >= 4,
                    "a certificate name has four components"
                );
                let _ = c.verifier();
                let _ = c.is_valid_at(1_800_000_000);
            }
            if let Ok(bag) = SafeBag::decode(rest) {
                let _ = bag.private_key(b"password");
            }
        }
        2 => {
            let split = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
            let (pattern, name) = rest.split_at(split);
            let Ok(pattern) = std::str::from_utf8(pattern) else {
                return;
            };
            let Ok(re) = NameRegex::new(pattern) else {
                return;
            };
            if let Ok(name) = Name::from_value(Bytes::copy_from_slice(name.get(1..).unwrap_or(&[])))
            {
                let _ = re.is_match(&name);
                let _ = re.expand(&name, "\\1");
            }
        }
        _ => {
            let split = rest.len() / 2;
            let (interest, cert) = rest.split_at(split);
            let Ok(packet) = Packet::interest(&Bytes::copy_from_slice(interest)) else {
                return;
            };
            let policy = Policy::parse(SCHEMA, Path::new("/")).expect("the fixed schema");
            let mut v = Validator::new(policy).expect("no anchor file to read");
            if let Step::Fetch(p) = v.validate(packet, 1_800_000_000) {
                let _ = v.resume(p, Some(Bytes::copy_from_slice(cert)), 1_800_000_000);
            }
        }
    }
}
