//! Places: a count of things held at once (detached calls, SSE streams, callbacks in flight),
//! at most a ceiling in all and a share per holder (a [`Caller`], a destination host).

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::context::Caller;

/// The places each holder holds (one holding none has no entry). Hashed with foldhash, seeded
/// per process: a place is taken and given back on every session call and progress stream,
/// and SipHash over the holder was most of that cost; the map holds at most the ceiling's
/// count of holders, each of them a caller the edge identified.
type Counts<K> = Arc<Mutex<HashMap<K, usize, foldhash::fast::RandomState>>>;

/// A count of places taken, at most `max`, and at most `share` by one caller. Places are
/// only ever tried for, never waited on: a counter does what a semaphore would without its
/// lock on every release. The per-caller counts take a lock, but only detached work (a
/// stream, a call that waits) asks for a place.
#[derive(Debug)]
pub(crate) struct Places<K = Caller> {
    taken: Arc<AtomicUsize>,
    max: usize,
    share: usize,
    by_caller: Counts<K>,
    /// With instances sharing a store: the places of this kind the others hold, per holder.
    shared: Option<(Arc<crate::core::shares::Shares>, &'static str)>,
}

impl<K: Clone + Eq + Hash + std::fmt::Display + Send + Sync + 'static> Places<K> {
    pub(crate) fn new(max: usize, share: usize) -> Self {
        Self {
            taken: Arc::default(),
            max,
            share,
            by_caller: Arc::default(),
            shared: None,
        }
    }

    /// Counts a holder's places on every instance against its share (`kind`: how they are
    /// named in the store). The ceiling stays this instance's.
    pub(crate) fn across(
        mut self,
        shares: Option<&Arc<crate::core::shares::Shares>>,
        kind: &'static str,
    ) -> Self {
        if let Some(shares) = shares {
            let held = self.by_caller.clone();
            let held: Arc<dyn crate::core::shares::Held> = held;
            shares.register(kind, Arc::downgrade(&held));
            self.shared = Some((shares.clone(), kind));
        }
        self
    }

    /// A place for `who` (`None`: a caller the transport cannot tell apart, held to the
    /// ceiling alone).
    pub(crate) fn take(&self, who: Option<&K>) -> Option<Slot<K>> {
        self.taken
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < self.max).then_some(n + 1)
            })
            .ok()?;
        let Some(who) = who else {
            return Some(Slot {
                taken: self.taken.clone(),
                share: None,
            });
        };
        let elsewhere = self
            .shared
            .as_ref()
            .map_or(0, |(shares, kind)| shares.elsewhere(kind, &who.to_string()));
        let within = self.by_caller.lock().is_ok_and(|mut by| {
            let n = by.entry(who.clone()).or_default();
            *n + elsewhere < self.share && {
                *n += 1;
                true
            }
        });
        if !within {
            self.taken.fetch_sub(1, Ordering::AcqRel);
            return None;
        }
        Some(Slot {
            taken: self.taken.clone(),
            share: Some((self.by_caller.clone(), who.clone())),
        })
    }
}

/// One place taken (a detached call, an open SSE stream, a callback in flight), counted until
/// dropped.
#[derive(Debug)]
pub(crate) struct Slot<K: Clone + Eq + Hash = Caller> {
    taken: Arc<AtomicUsize>,
    share: Option<(Counts<K>, K)>,
}

impl<K: Clone + Eq + Hash> Drop for Slot<K> {
    fn drop(&mut self) {
        self.taken.fetch_sub(1, Ordering::AcqRel);
        if let Some((by, who)) = self.share.take()
            && let Ok(mut by) = by.lock()
            && let Some(n) = by.get_mut(&who)
        {
            *n -= 1;
            if *n == 0 {
                by.remove(&who);
            }
        }
    }
}
