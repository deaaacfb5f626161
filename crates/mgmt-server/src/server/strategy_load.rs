//! `kite-strategy/load` and `kite-strategy/unload`: strategies loaded at run time.
//!
//! Load takes the strategy name (`/localhost/kite/strategy/NAME`, a version is optional) and
//! a local file path (Uri). The daemon-supplied [`StrategyLoader`] reads and verifies the
//! program; the management thread adds it to the strategy table, which forwarding threads pick
//! up at their next burst. With Flags bit REPLACE an existing strategy of that name is
//! reloaded: the new program gets a new id, every prefix using the old one moves to it (the
//! FIB entries change, so their scratch areas start empty, and Interests pending under the
//! old program finish without it, as the NDN-DPDK paper's section 6.2 describes), then the old
//! one is removed. Unload refuses while any prefix uses the strategy.

use std::path::Path;
use std::sync::Arc;

use kite_fw::strategy::{Strategy, StrategyTable};
use kite_packet::Name;

use super::commands::response;
use super::Manager;
use kite_mgmt_proto::nfd::{status as code, strategy_load_flag};
use kite_mgmt_proto::{ControlParameters, ControlResponse};

/// Where loaded strategies are named.
const PREFIX: &str = "/localhost/kite/strategy";

/// Loads the program at a path as a strategy with the given short name; the error is the
/// reason to report (e.g. the verifier's).
pub type StrategyLoader = Box<dyn Fn(&str, &Path) -> Result<Arc<dyn Strategy>, String> + Send>;

/// The short name in `/localhost/kite/strategy/NAME[/v=N]`.
fn short_name(strategy: &Name) -> Option<String> {
    let prefix: Name = PREFIX.parse().expect("valid name");
    if !prefix.is_prefix_of(strategy) || !(4..=5).contains(&strategy.len()) {
        return None;
    }
    let uri = strategy.to_uri();
    let rest = uri.strip_prefix(PREFIX)?.trim_start_matches('/');
    Some(rest.split('/').next()?.to_string())
}

impl Manager {
    pub(super) fn strategy_load(&mut self, mut p: ControlParameters) -> ControlResponse {
        let (Some(strategy), Some(uri)) = (p.strategy.clone(), p.uri.clone()) else {
            return response(code::BAD_REQUEST, "failed in validating parameters");
        };
        let Some(short) = short_name(&strategy) else {
            return response(
                code::BAD_REQUEST,
                "strategy name must be /localhost/kite/strategy/NAME",
            );
        };
        let Some(loader) = &self.loader else {
            return response(
                code::NOT_ACCEPTABLE,
                "this forwarder cannot load strategies",
            );
        };
        let replace = p.flags.unwrap_or(0) & strategy_load_flag::REPLACE != 0;
        let old = self.strategies.find(&strategy).ok();
        if old.is_some() && !replace {
            return response(code::CONFLICT, "a strategy of that name exists");
        }
        if old.is_some_and(StrategyTable::is_builtin) {
            return response(code::CONFLICT, "built-in strategies cannot be replaced");
        }
        let path = uri.strip_prefix("file://").unwrap_or(&uri);
        let loaded = match loader(&short, Path::new(path)) {
            Ok(s) => s,
            Err(reason) => return response(code::BAD_REQUEST, &reason),
        };
        let name = loaded.name().clone();
        let Some(id) = self.strategies.add(loaded) else {
            return response(code::INTERNAL_ERROR, "every strategy id has been used");
        };
        if let Some(old) = old {
            let users: Vec<Name> = self.users(old);
            for prefix in &users {
                let _ = self.fib.set_strategy(prefix, id);
            }
            // Publish waits until no forwarding thread reads the old FIB, so after it no
            // burst can reach the old id.
            self.fib.publish();
            self.strategies.remove(old);
        }
        p.strategy = Some(name);
        ControlResponse::success(&p)
    }

    pub(super) fn strategy_unload(&mut self, p: ControlParameters) -> ControlResponse {
        let Some(strategy) = p.strategy.clone() else {
            return response(code::BAD_REQUEST, "failed in validating parameters");
        };
        let Ok(id) = self.strategies.find(&strategy) else {
            return response(code::NOT_FOUND, "Strategy not registered");
        };
        if StrategyTable::is_builtin(id) {
            return response(code::CONFLICT, "built-in strategies cannot be unloaded");
        }
        if let Some(prefix) = self.users(id).first() {
            let text = format!("strategy in use by {}", prefix.to_uri());
            return response(code::CONFLICT, &text);
        }
        self.strategies.remove(id);
        ControlResponse::success(&p)
    }

    /// The prefixes whose strategy choice is `id`.
    fn users(&self, id: kite_fw::fib::StrategyId) -> Vec<Name> {
        self.fib
            .strategy_choices()
            .filter(|&(_, s)| s == id)
            .map(|(n, _)| n.clone())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_names_come_from_the_kite_strategy_namespace() {
        let n = |s: &str| s.parse::<Name>().unwrap();
        assert_eq!(
            short_name(&n("/localhost/kite/strategy/br")),
            Some("br".into())
        );
        assert_eq!(
            short_name(&n("/localhost/kite/strategy/br/v=1")),
            Some("br".into())
        );
        assert_eq!(short_name(&n("/localhost/nfd/strategy/br")), None);
        assert_eq!(short_name(&n("/localhost/kite/strategy")), None);
    }
}
