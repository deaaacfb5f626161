//! Who may send which management command: NFD's authorization, one validator per module,
//! each with its own state.
//!
//! - `rib` commands under `/localhost/nfd` and under `/localhop/nfd` each have a validator
//!   (NFD's `rib.localhost_security` and `rib.localhop_security`), both requiring a signed
//!   command even when they trust any key, each with its own [`ReplayGuard`].
//! - The other modules (faces, fib, cs, strategy-choice, and Kite's kite-strategy) accept
//!   every command, signed or not, as NFD's default `authorize certfile any` does: that
//!   validator checks no signature, hence no timestamp either. Only scope keeps these
//!   commands to local applications.
//!
//! Keeping the records apart matters: a program with several command signers (NLSR has
//! three, each stamping its commands ahead of the clock on its own) sends a faces command
//! stamped earlier than its last rib command, and NFD accepts it.

use kite_mgmt::command::{Command, TopPrefix};
use kite_packet::{Component, Name};

use crate::replay::{ReplayGuard, Stamp};

/// The validators' state.
#[derive(Debug, Default)]
pub struct Authorizer {
    rib_localhost: ReplayGuard,
    rib_localhop: ReplayGuard,
}

impl Authorizer {
    /// NFD's default authorization, with empty replay records.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether `cmd`, which came on face `ingress` at wall-clock `now_ms` (ms since the Unix
    /// epoch), is authorized; if so its stamp is recorded. The error says why not, for the
    /// log; the command is answered 403.
    pub fn authorize(&mut self, cmd: &Command, ingress: u64, now_ms: u64) -> Result<(), String> {
        if cmd.verb.module() != "rib" {
            return Ok(());
        }
        let Some(stamp) = Stamp::of(&cmd.signature) else {
            return Err("unsigned: rib commands must be signed".into());
        };
        let mut stamp = stamp.map_err(|e| format!("unauthorized: {e}"))?;
        let guard = match cmd.top {
            TopPrefix::Localhost => &mut self.rib_localhost,
            TopPrefix::Localhop => {
                // Nothing verifies the key a neighbour names: its records are kept per face,
                // so that one neighbour's future timestamps cannot lock another out.
                let face = format!("face-{ingress}");
                let scope = Component::generic(face.as_bytes());
                stamp.key = Name::from_components(std::iter::once(scope).chain(stamp.key.iter()));
                &mut self.rib_localhop
            }
        };
        guard
            .admit(&stamp, now_ms)
            .map_err(|e| format!("unauthorized: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use kite_mgmt::command::{CommandSignature, Verb};
    use kite_mgmt::ControlParameters;
    use kite_packet::{KeyLocator, SignatureInfo, SignatureType};

    const NOW: u64 = 1_800_000_000_000;

    fn cmd(top: TopPrefix, verb: Verb, ts: u64, nonce: u64) -> Command {
        let mut info = SignatureInfo::new(SignatureType::SHA256_WITH_ECDSA);
        info.key_locator = Some(KeyLocator::Name("/nlsr/KEY/1".parse().unwrap()));
        info.time = Some(ts);
        info.nonce = Some(Bytes::copy_from_slice(&nonce.to_be_bytes()));
        Command {
            top,
            verb,
            params: ControlParameters::default(),
            announcement: None,
            signature: CommandSignature::V03 {
                info,
                value: Bytes::new(),
            },
        }
    }

    #[test]
    fn each_validator_keeps_its_own_records() {
        let mut a = Authorizer::new();
        let local = TopPrefix::Localhost;
        a.authorize(&cmd(local, Verb::RibRegister, NOW + 10, 1), 300, NOW)
            .unwrap();
        // Another signer of the same key, behind: faces and strategy-choice accept all.
        a.authorize(&cmd(local, Verb::FacesUpdate, NOW, 2), 300, NOW)
            .unwrap();
        a.authorize(&cmd(local, Verb::StrategyChoiceSet, NOW, 2), 300, NOW)
            .unwrap();
        // The localhop validator has never seen the key.
        a.authorize(
            &cmd(TopPrefix::Localhop, Verb::RibRegister, NOW, 3),
            300,
            NOW,
        )
        .unwrap();
        // The localhost rib validator has.
        let err = a
            .authorize(&cmd(local, Verb::RibUnregister, NOW + 5, 4), 300, NOW)
            .unwrap_err();
        assert!(err.contains("older"), "{err}");
        let replay = cmd(local, Verb::RibRegister, NOW + 10, 1);
        assert!(a.authorize(&replay, 300, NOW).is_err());
    }

    #[test]
    fn neighbours_records_are_kept_per_face() {
        let mut a = Authorizer::new();
        let hop = TopPrefix::Localhop;
        a.authorize(&cmd(hop, Verb::RibRegister, NOW + 100_000, 1), 300, NOW)
            .unwrap();
        a.authorize(&cmd(hop, Verb::RibRegister, NOW, 2), 301, NOW)
            .unwrap();
        assert!(a
            .authorize(&cmd(hop, Verb::RibRegister, NOW, 3), 300, NOW)
            .is_err());
    }

    #[test]
    fn rib_commands_must_be_signed_and_others_need_not() {
        let mut a = Authorizer::new();
        let mut unsigned = cmd(TopPrefix::Localhost, Verb::RibRegister, NOW, 1);
        unsigned.signature = CommandSignature::Unsigned;
        assert!(a
            .authorize(&unsigned, 300, NOW)
            .unwrap_err()
            .contains("unsigned"));
        unsigned.top = TopPrefix::Localhop;
        assert!(a.authorize(&unsigned, 300, NOW).is_err());
        unsigned.verb = Verb::FibAddNextHop;
        a.authorize(&unsigned, 300, NOW).unwrap();
    }
}
