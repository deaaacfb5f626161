//! The strategies a forwarder knows, by id (what FIB entries store) and by name (what
//! management commands use).

use std::sync::Arc;

use kite_packet::Name;

use super::{best_route::BestRoute, multicast::Multicast, random::Random, round_robin::RoundRobin};
use super::{Strategy, StrategyId};

/// A strategy name that matches no known strategy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownStrategy(pub Name);

/// Known strategies, shared (read-only) by every forwarding thread.
#[derive(Clone)]
pub struct StrategyTable {
    strategies: Vec<Arc<dyn Strategy>>,
}

impl StrategyTable {
    /// The built-in strategies; best-route is id 0, the default.
    pub fn builtin() -> Self {
        StrategyTable {
            strategies: vec![
                Arc::new(BestRoute::default()),
                Arc::new(Multicast::default()),
                Arc::new(Random::new()),
                Arc::new(RoundRobin::new()),
            ],
        }
    }

    /// The default strategy (best-route).
    pub const DEFAULT: StrategyId = StrategyId(0);

    /// Adds a strategy and returns its id.
    pub fn add(&mut self, s: Arc<dyn Strategy>) -> StrategyId {
        self.strategies.push(s);
        StrategyId((self.strategies.len() - 1) as u16)
    }

    /// The strategy with this id.
    pub fn get(&self, id: StrategyId) -> Option<&Arc<dyn Strategy>> {
        self.strategies.get(usize::from(id.0))
    }

    /// The id for a strategy name as management gives it: the exact versioned name, or the
    /// name without version (the latest), as NFD accepts.
    pub fn find(&self, name: &Name) -> Result<StrategyId, UnknownStrategy> {
        let position = self.strategies.iter().position(|s| {
            let full = s.name();
            full == name || (full.len() == name.len() + 1 && name.is_prefix_of(full))
        });
        position
            .map(|i| StrategyId(i as u16))
            .ok_or_else(|| UnknownStrategy(name.clone()))
    }

    /// Every strategy with its id.
    pub fn iter(&self) -> impl Iterator<Item = (StrategyId, &Arc<dyn Strategy>)> {
        self.strategies
            .iter()
            .enumerate()
            .map(|(i, s)| (StrategyId(i as u16), s))
    }
}

impl core::fmt::Debug for StrategyTable {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_list()
            .entries(self.strategies.iter().map(|s| s.name().to_uri()))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_by_versioned_and_unversioned_name() {
        let t = StrategyTable::builtin();
        let br: Name = "/localhost/nfd/strategy/best-route".parse().unwrap();
        assert_eq!(t.find(&br), Ok(StrategyId(0)));
        let mc: Name = "/localhost/nfd/strategy/multicast/v=5".parse().unwrap();
        assert_eq!(t.find(&mc), Ok(StrategyId(1)));
        let wrong: Name = "/localhost/nfd/strategy/multicast/v=1".parse().unwrap();
        assert!(t.find(&wrong).is_err());
        let unknown: Name = "/localhost/nfd/strategy/nope".parse().unwrap();
        assert_eq!(t.find(&unknown), Err(UnknownStrategy(unknown.clone())));
        assert_eq!(t.iter().count(), 4);
    }
}
