//! Per-caller shares across instances: what each instance holds per holder (SSE streams and
//! detached calls per caller, running tasks per caller, callbacks per host), exchanged every
//! second through the shared store, so that a share is one share however many instances a
//! load balancer spreads a caller over.
//!
//! Each instance writes its own counts and reads the others' (one Redis script a second, not
//! a round trip per place taken: taking a place stays a local, synchronous check). A holder
//! can therefore overshoot its share by what it takes on other instances within that second;
//! after it, every instance refuses it until it is back under. An instance that stops is
//! forgotten after a few seconds (its counts expire).
// Without the `redis` feature nothing exchanges the counts: the module is there, unused.
#![cfg_attr(not(feature = "redis"), allow(dead_code))]

use std::collections::HashMap;
use std::fmt::Display;
use std::hash::Hash;
use std::sync::{Mutex, RwLock, Weak};

/// Something that holds places per holder (its counts are read once a second).
pub(crate) trait Held: Send + Sync {
    /// How many places each holder holds here now (holders with none may be left out).
    fn held(&self) -> Vec<(String, usize)>;
}

impl<K: Display + Eq + Hash + Send, S: std::hash::BuildHasher + Send> Held
    for Mutex<HashMap<K, usize, S>>
{
    fn held(&self) -> Vec<(String, usize)> {
        self.lock()
            .map(|m| m.iter().map(|(k, n)| (k.to_string(), *n)).collect())
            .unwrap_or_default()
    }
}

/// This instance's counts and the other instances', per kind of place.
/// Starts the exchange with the other instances; `false` when it cannot start yet (outside
/// a runtime).
pub(crate) type Starter = Box<dyn FnMut() -> bool + Send>;

#[derive(Default)]
pub(crate) struct Shares {
    /// What the other instances hold: kind, then holder.
    elsewhere: RwLock<HashMap<&'static str, HashMap<String, usize>>>,
    sources: Mutex<Vec<(&'static str, Weak<dyn Held>)>>,
    /// The exchange, until it has started.
    starter: Mutex<Option<Starter>>,
}

impl std::fmt::Debug for Shares {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shares").finish_non_exhaustive()
    }
}

/// The kinds of places, as they are written in the store.
pub(crate) const KINDS: [&str; 4] = ["streams", "calls", "tasks", "callbacks"];

impl Shares {
    /// Shares exchanged by `starter` once [`Self::start`] is called inside a runtime.
    pub(crate) fn with_starter(starter: Starter) -> Self {
        Self {
            starter: Mutex::new(Some(starter)),
            ..Self::default()
        }
    }

    /// Starts the exchange (once; the transports call it when they serve).
    pub(crate) fn start(&self) {
        if let Ok(mut s) = self.starter.lock()
            && let Some(mut start) = s.take()
            && !start()
        {
            *s = Some(start);
        }
    }

    /// What the other instances hold of `kind` for `holder`, as last heard.
    pub(crate) fn elsewhere(&self, kind: &str, holder: &str) -> usize {
        self.elsewhere
            .read()
            .ok()
            .and_then(|m| m.get(kind)?.get(holder).copied())
            .unwrap_or(0)
    }

    /// Counts `source`'s places as this instance's places of `kind` (while it lives).
    pub(crate) fn register(&self, kind: &'static str, source: Weak<dyn Held>) {
        if let Ok(mut s) = self.sources.lock() {
            s.retain(|(_, w)| w.strong_count() > 0);
            s.push((kind, source));
        }
    }

    /// This instance's counts, as `kind\nholder` and count.
    pub(crate) fn snapshot(&self) -> Vec<(String, usize)> {
        let sources: Vec<(&'static str, std::sync::Arc<dyn Held>)> = match self.sources.lock() {
            Ok(s) => s
                .iter()
                .filter_map(|(k, w)| Some((*k, w.upgrade()?)))
                .collect(),
            Err(_) => return Vec::new(),
        };
        let mut out: HashMap<String, usize> = HashMap::new();
        for (kind, source) in sources {
            for (holder, n) in source.held() {
                if n > 0 {
                    *out.entry(format!("{kind}\n{holder}")).or_default() += n;
                }
            }
        }
        out.into_iter().collect()
    }

    /// Replaces what the other instances hold with `others` (`kind\nholder` and count, one
    /// entry per instance and holder: summed here).
    pub(crate) fn replace(&self, others: impl IntoIterator<Item = (String, usize)>) {
        let mut map: HashMap<&'static str, HashMap<String, usize>> = HashMap::new();
        for (field, n) in others {
            let Some((kind, holder)) = field.split_once('\n') else {
                continue;
            };
            let Some(kind) = KINDS.iter().find(|k| **k == kind) else {
                continue;
            };
            *map.entry(kind)
                .or_default()
                .entry(holder.to_owned())
                .or_default() += n;
        }
        if let Ok(mut e) = self.elsewhere.write() {
            *e = map;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn counts_are_summed_per_kind_and_holder() {
        let shares = Shares::default();
        let here: Arc<Mutex<HashMap<String, usize>>> =
            Arc::new(Mutex::new([("ip:10.0.0.1".to_owned(), 2)].into()));
        shares.register("streams", Arc::downgrade(&here) as Weak<dyn Held>);
        assert_eq!(shares.snapshot(), [("streams\nip:10.0.0.1".to_owned(), 2)]);
        shares.replace([
            ("streams\nip:10.0.0.1".to_owned(), 3),
            ("streams\nip:10.0.0.1".to_owned(), 4),
            ("calls\nip:10.0.0.1".to_owned(), 1),
            ("nonsense".to_owned(), 9),
            ("other\nx".to_owned(), 9),
        ]);
        assert_eq!(shares.elsewhere("streams", "ip:10.0.0.1"), 7);
        assert_eq!(shares.elsewhere("calls", "ip:10.0.0.1"), 1);
        assert_eq!(shares.elsewhere("tasks", "ip:10.0.0.1"), 0);
        // A source gone is no longer counted.
        drop(here);
        assert!(shares.snapshot().is_empty());
    }
}
