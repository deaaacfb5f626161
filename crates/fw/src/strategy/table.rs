//! The strategies a forwarder knows, by id (what FIB entries store) and by name (what
//! management commands use). Management may add and remove strategies at run time (eBPF
//! programs): the table is published RCU-style through an `ArcSwap`, each holder keeps its own
//! snapshot and forwarding threads [`StrategyTable::refresh`] it once per burst, so lookups
//! take no lock and see one consistent table for a whole burst.

use std::sync::Arc;

use arc_swap::ArcSwap;
use kite_packet::Name;

use super::{
    asf::Asf, best_route::BestRoute, multicast::Multicast, random::Random, round_robin::RoundRobin,
};
use super::{Strategy, StrategyId};

/// A strategy name that matches no known strategy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownStrategy(pub Name);

/// Strategy slots by id; a removed strategy leaves `None` (ids are never reused, so a PIT
/// entry's id cannot come to mean another strategy).
type Slots = Vec<Option<Arc<dyn Strategy>>>;

/// Known strategies. Clones share one published table; each clone reads its own snapshot.
#[derive(Clone)]
pub struct StrategyTable {
    shared: Arc<ArcSwap<Slots>>,
    strategies: Arc<Slots>,
}

/// How many strategies are built in (ids below this cannot be removed).
const BUILTIN: usize = 5;

impl StrategyTable {
    /// The built-in strategies; best-route is id 0, the default.
    pub fn builtin() -> Self {
        let slots: Slots = vec![
            Some(Arc::new(BestRoute::default())),
            Some(Arc::new(Multicast::default())),
            Some(Arc::new(Random::default())),
            Some(Arc::new(RoundRobin::default())),
            Some(Arc::new(Asf::default())),
        ];
        debug_assert_eq!(slots.len(), BUILTIN);
        let strategies = Arc::new(slots);
        StrategyTable {
            shared: Arc::new(ArcSwap::new(strategies.clone())),
            strategies,
        }
    }

    /// The default strategy (best-route).
    pub const DEFAULT: StrategyId = StrategyId(0);

    /// Takes the latest published table as this holder's snapshot (a forwarding thread calls
    /// it once per burst, before it enters the FIB). True when it changed.
    pub fn refresh(&mut self) -> bool {
        let latest = self.shared.load();
        if Arc::ptr_eq(&latest, &self.strategies) {
            return false;
        }
        self.strategies = arc_swap::Guard::into_inner(latest);
        true
    }

    /// Publishes `change` applied to the latest table and makes it this holder's snapshot.
    fn publish(&mut self, change: impl Fn(&mut Slots)) {
        let next = self.shared.rcu(|current| {
            let mut slots = Slots::clone(current);
            change(&mut slots);
            slots
        });
        drop(next);
        self.refresh();
    }

    /// Adds a strategy, publishes it to every holder, and returns its id; `None` once every
    /// id has been used (ids are not reused).
    pub fn add(&mut self, s: Arc<dyn Strategy>) -> Option<StrategyId> {
        self.refresh();
        let id = StrategyId(u16::try_from(self.strategies.len()).ok()?);
        self.publish(|slots| slots.push(Some(s.clone())));
        Some(id)
    }

    /// Removes a strategy added at run time (built-ins stay); false when there is none to
    /// remove. Callers first make sure no FIB entry refers to it.
    pub fn remove(&mut self, id: StrategyId) -> bool {
        let i = usize::from(id.0);
        if i < BUILTIN || self.get(id).is_none() {
            return false;
        }
        self.publish(|slots| slots[i] = None);
        true
    }

    /// Whether `id` is a built-in strategy.
    pub fn is_builtin(id: StrategyId) -> bool {
        usize::from(id.0) < BUILTIN
    }

    /// The strategy with this id.
    pub fn get(&self, id: StrategyId) -> Option<&Arc<dyn Strategy>> {
        self.strategies.get(usize::from(id.0))?.as_ref()
    }

    /// Like [`StrategyTable::get`], but on a miss takes the latest table first: a FIB entry
    /// entered after this holder's refresh may name a strategy published since (the table
    /// is always published before the FIB entry that names it).
    pub fn get_latest(&mut self, id: StrategyId) -> Option<&Arc<dyn Strategy>> {
        if self.get(id).is_none() {
            self.refresh();
        }
        self.get(id)
    }

    /// The id for a strategy name as management gives it: the exact versioned name, or the
    /// name without version (the latest), as NFD accepts.
    pub fn find(&self, name: &Name) -> Result<StrategyId, UnknownStrategy> {
        self.iter()
            .find(|(_, s)| {
                let full = s.name();
                full == name || (full.len() == name.len() + 1 && name.is_prefix_of(full))
            })
            .map(|(id, _)| id)
            .ok_or_else(|| UnknownStrategy(name.clone()))
    }

    /// Every strategy with its id.
    pub fn iter(&self) -> impl Iterator<Item = (StrategyId, &Arc<dyn Strategy>)> {
        self.strategies
            .iter()
            .enumerate()
            .filter_map(|(i, s)| Some((StrategyId(i as u16), s.as_ref()?)))
    }
}

impl core::fmt::Debug for StrategyTable {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_list()
            .entries(self.iter().map(|(_, s)| s.name().to_uri()))
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
        assert_eq!(t.iter().count(), 5);
    }

    #[test]
    fn clones_see_added_and_removed_strategies_after_refresh() {
        let mut mgmt = StrategyTable::builtin();
        let mut thread = mgmt.clone();
        assert!(!thread.refresh());
        let id = mgmt.add(Arc::new(BestRoute::default())).unwrap();
        assert_eq!(id, StrategyId(5));
        assert!(
            thread.get(id).is_none(),
            "a snapshot changes only on refresh"
        );
        assert!(
            thread.clone().get_latest(id).is_some(),
            "a miss takes the latest table"
        );
        assert!(thread.refresh());
        assert!(thread.get(id).is_some());
        assert!(!mgmt.remove(StrategyTable::DEFAULT), "built-ins stay");
        assert!(mgmt.remove(id));
        assert!(!mgmt.remove(id));
        assert!(thread.refresh());
        assert!(thread.get(id).is_none());
        let next = mgmt.add(Arc::new(Multicast::default()));
        assert_eq!(next, Some(StrategyId(6)), "ids are not reused");
    }
}
