//! Places: a count of things held at once (detached calls, SSE streams, callbacks in flight),
//! at most a ceiling in all and a share per holder (a [`Caller`], a destination host).
//!
//! One [`Places`] counts `N` kinds of places for the same holders: a call that may stream
//! takes a detached call's place and a stream's together, with one lookup of its holder.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::context::Caller;

/// One holder's counts, a counter per kind, shared by the holder's slots: a slot gives its
/// place back with one atomic decrement, without the map's lock or a hash.
type Tally = Arc<[AtomicUsize]>;

/// The holders with a tally. Hashed with foldhash, seeded per process: a place is taken on
/// every session call and progress stream, and SipHash over the holder was most of that cost.
/// A holder whose places all came back keeps its tally until the next sweep, which runs when
/// the map has doubled since the last one: the map stays within twice the holders that hold
/// something (at most the ceiling's count), and a sweep's cost is spread over the inserts that
/// made it due.
#[derive(Debug)]
struct Holders<K> {
    map: HashMap<K, Tally, foldhash::fast::RandomState>,
    sweep_at: usize,
}

/// Below this many holders the map is never swept.
const SWEEP_FLOOR: usize = 64;

impl<K: Eq + Hash> Holders<K> {
    /// `who`'s tally, made if it has none.
    fn tally<const N: usize>(&mut self, who: &K) -> Tally
    where
        K: Clone,
    {
        if let Some(tally) = self.map.get(who) {
            return tally.clone();
        }
        if self.map.len() >= self.sweep_at {
            // A tally only the map holds, all of whose counts are zero, has no place taken,
            // and none can be taken on it without the lock held here.
            self.map.retain(|_, t| {
                Arc::strong_count(t) > 1 || t.iter().any(|n| n.load(Ordering::Acquire) > 0)
            });
            self.sweep_at = (self.map.len() * 2).max(SWEEP_FLOOR);
        }
        let tally: Tally = (0..N).map(|_| AtomicUsize::new(0)).collect();
        self.map.insert(who.clone(), tally.clone());
        tally
    }
}

/// Counts of places taken, per kind at most `max[kind]`, and at most `share[kind]` by one
/// holder. Places are only ever tried for, never waited on: a counter does what a semaphore
/// would without its lock on every release. Taking a place looks its holder up under a lock
/// (one lookup for all the kinds taken together); giving it back is two atomic decrements.
#[derive(Debug)]
pub(crate) struct Places<K = Caller, const N: usize = 1> {
    taken: [Arc<AtomicUsize>; N],
    max: [usize; N],
    share: [usize; N],
    holders: Arc<Mutex<Holders<K>>>,
    /// With instances sharing a store: the places of each kind the others hold, per holder,
    /// and the views through which the store reads this instance's counts.
    shared: Option<Shared<N>>,
}

struct Shared<const N: usize> {
    shares: Arc<crate::core::shares::Shares>,
    kinds: [&'static str; N],
    _views: Vec<Arc<dyn crate::core::shares::Held>>,
}

impl<const N: usize> std::fmt::Debug for Shared<N> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("kinds", &self.kinds)
            .finish_non_exhaustive()
    }
}

impl<K: Clone + Eq + Hash + std::fmt::Display + Send + Sync + 'static, const N: usize>
    Places<K, N>
{
    /// At most `max[kind]` places of each kind in all, and `share[kind]` per holder.
    pub(crate) fn new(max: [usize; N], share: [usize; N]) -> Self {
        Self {
            taken: std::array::from_fn(|_| Arc::default()),
            max,
            share,
            holders: Arc::new(Mutex::new(Holders {
                map: HashMap::default(),
                sweep_at: SWEEP_FLOOR,
            })),
            shared: None,
        }
    }

    /// Counts a holder's places on every instance against its share (`kinds`: how each kind
    /// is named in the store). The ceilings stay this instance's.
    pub(crate) fn across(
        mut self,
        shares: Option<&Arc<crate::core::shares::Shares>>,
        kinds: [&'static str; N],
    ) -> Self {
        if let Some(shares) = shares {
            let views = (0..N)
                .map(|kind| {
                    let view: Arc<dyn crate::core::shares::Held> = Arc::new(KindView {
                        holders: self.holders.clone(),
                        kind,
                    });
                    shares.register(kinds[kind], Arc::downgrade(&view));
                    view
                })
                .collect();
            self.shared = Some(Shared {
                shares: shares.clone(),
                kinds,
                _views: views,
            });
        }
        self
    }

    /// A place of `kind` for `who` (`None`: a caller the transport cannot tell apart, held to
    /// the ceiling alone).
    pub(crate) fn take(&self, kind: usize, who: Option<&K>) -> Option<Slot> {
        let within = self.ceiling(kind)?;
        let Some(who) = who else {
            return Some(within);
        };
        let tally = self.holders.lock().ok()?.tally::<N>(who);
        self.share_of(kind, who, within, tally)
    }

    /// A place of every kind for `who`, all or none, its holder looked up once.
    pub(crate) fn take_each(&self, who: Option<&K>) -> Option<[Slot; N]> {
        let mut within = Vec::with_capacity(N);
        for kind in 0..N {
            within.push(self.ceiling(kind)?);
        }
        let mut slots = Vec::with_capacity(N);
        match who {
            None => slots = within,
            Some(who) => {
                let tally = self.holders.lock().ok()?.tally::<N>(who);
                for (kind, within) in within.into_iter().enumerate() {
                    slots.push(self.share_of(kind, who, within, tally.clone())?);
                }
            }
        }
        slots.try_into().ok()
    }

    /// A place of `kind` within the ceiling, not yet counted against any holder.
    fn ceiling(&self, kind: usize) -> Option<Slot> {
        let taken = &self.taken[kind];
        taken
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < self.max[kind]).then_some(n + 1)
            })
            .ok()?;
        Some(Slot {
            taken: taken.clone(),
            tally: None,
        })
    }

    /// `within` counted against `who`'s share of `kind` (dropped, so given back, if full).
    fn share_of(&self, kind: usize, who: &K, mut within: Slot, tally: Tally) -> Option<Slot> {
        let elsewhere = self
            .shared
            .as_ref()
            .map_or(0, |s| s.shares.elsewhere(s.kinds[kind], &who.to_string()));
        tally[kind]
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n + elsewhere < self.share[kind]).then_some(n + 1)
            })
            .ok()?;
        within.tally = Some((tally, kind));
        Some(within)
    }
}

/// One kind's counts per holder, as the store's exchange reads them.
struct KindView<K> {
    holders: Arc<Mutex<Holders<K>>>,
    kind: usize,
}

impl<K: std::fmt::Display + Send> crate::core::shares::Held for KindView<K> {
    fn held(&self) -> Vec<(String, usize)> {
        let Ok(holders) = self.holders.lock() else {
            return Vec::new();
        };
        holders
            .map
            .iter()
            .filter_map(|(who, tally)| {
                let n = tally[self.kind].load(Ordering::Acquire);
                (n > 0).then(|| (who.to_string(), n))
            })
            .collect()
    }
}

/// One place taken (a detached call, an open SSE stream, a callback in flight), counted until
/// dropped.
#[derive(Debug)]
pub(crate) struct Slot {
    taken: Arc<AtomicUsize>,
    /// The holder's tally and the kind counted in it.
    tally: Option<(Tally, usize)>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.taken.fetch_sub(1, Ordering::AcqRel);
        if let Some((tally, kind)) = &self.tally {
            tally[*kind].fetch_sub(1, Ordering::AcqRel);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_has_its_ceiling_and_its_share() {
        let places: Places<&'static str, 2> = Places::new([3, 10], [2, 1]);
        let a = places.take(0, Some(&"a")).unwrap();
        let _a2 = places.take(0, Some(&"a")).unwrap();
        assert!(places.take(0, Some(&"a")).is_none(), "a's share of kind 0");
        let _b = places.take(0, Some(&"b")).unwrap();
        assert!(
            places.take(0, Some(&"c")).is_none(),
            "the ceiling of kind 0"
        );
        let _a3 = places.take(1, Some(&"a")).unwrap();
        assert!(places.take(1, Some(&"a")).is_none(), "a's share of kind 1");
        drop(a);
        assert!(places.take(0, Some(&"a")).is_some(), "a's place came back");
        assert!(
            places.take(0, None).is_some(),
            "an unknown caller: the ceiling alone"
        );
    }

    #[test]
    fn all_or_none_is_taken_together() {
        let places: Places<&'static str, 2> = Places::new([10, 10], [3, 1]);
        let both = places.take_each(Some(&"a")).unwrap();
        // Kind 1 is full for a: nothing of kind 0 stays taken either.
        assert!(places.take_each(Some(&"a")).is_none());
        assert_eq!(places.taken[0].load(Ordering::Acquire), 1);
        assert_eq!(places.taken[1].load(Ordering::Acquire), 1);
        drop(both);
        assert_eq!(places.taken[0].load(Ordering::Acquire), 0);
        assert!(places.take_each(Some(&"a")).is_some());
        let places: Places<&'static str, 2> = Places::new([10, 0], [3, 3]);
        assert!(places.take_each(None).is_none(), "one ceiling full");
        assert_eq!(places.taken[0].load(Ordering::Acquire), 0, "given back");
    }

    #[test]
    fn holders_with_nothing_are_swept_and_the_map_stays_bounded() {
        let places: Places<usize, 1> = Places::new([usize::MAX], [1]);
        let kept = places.take(0, Some(&0)).unwrap();
        for who in 1..10_000 {
            drop(places.take(0, Some(&who)).unwrap());
        }
        let len = places.holders.lock().unwrap().map.len();
        assert!(len <= 2 * SWEEP_FLOOR, "{len} holders kept");
        // The holder that still holds its place was not swept: its share is still full.
        assert!(places.take(0, Some(&0)).is_none());
        drop(kept);
        assert!(places.take(0, Some(&0)).is_some());
    }
}
