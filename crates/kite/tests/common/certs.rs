//! Keys and certificates for the tests of trust schemas: an ECDSA key of an identity,
//! certified by itself or by an issuer, and the schema rules that validate a chain of them.

use kite_packet::ValidityPeriod;
use kite_security::{Certificate, KeySigner, SignatureKind};

/// A certificate-validation rule for the chain: hierarchical, up to the anchor in
/// `site-root.ndncert` beside the schema.
pub const CHAIN: &str = r#"
rule
{
  id "site hierarchy"
  for data
  filter
  {
    type name
    regex ^<>*<KEY><><><>$
  }
  checker
  {
    type hierarchical
    sig-type ecdsa-sha256
  }
}
trust-anchor
{
  type file
  file-name "site-root.ndncert"
}
"#;

/// An ECDSA P-256 key of `identity` and its certificate, issued by `issuer` (self-signed
/// without one), valid from 2020 to 2040.
pub fn key(identity: &str, issuer: Option<&KeySigner>) -> (KeySigner, Certificate) {
    let k = KeySigner::generate(SignatureKind::EcdsaP256, &identity.parse().unwrap()).unwrap();
    let validity = ValidityPeriod::new("20200101T000000", "20401231T235959").unwrap();
    let public = k.key().public_der().unwrap();
    let by = issuer.unwrap_or(&k);
    let c = Certificate::issue(k.key_name().unwrap(), &public, by, b"root", 1, validity).unwrap();
    (k, c)
}
