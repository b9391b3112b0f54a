//! The rate limiter: the generic cell rate algorithm (GCRA) over one "theoretical arrival
//! time" per caller and method, in this process or, with a [`RateStore`], in Redis.
//!
//! Written here rather than taken from `governor`: its keyed limiter grows without bound
//! unless swept by hand, cannot fall back from a shared store, and would still need the Redis
//! half; the algorithm itself is a few lines.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hash};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;

use super::cache::StoreError;
use crate::context::Caller;
use crate::rate_limit::{RateLimit, RatePer};

/// A limiter shared by every instance (Redis, with `ServerBuilder::redis`): one round trip
/// per decision.
pub trait RateStore: Send + Sync + 'static {
    /// Decides one call against the limit kept at `key`, whose steady pace is one call per
    /// `interval` and which may run `tolerance` ahead of it: `Ok(None)` lets it through,
    /// `Ok(Some(wait))` refuses it until `wait` has passed.
    fn decide<'a>(
        &'a self,
        key: &'a str,
        interval: Duration,
        tolerance: Duration,
    ) -> BoxFuture<'a, Result<Option<Duration>, StoreError>>;
}

/// One limited thing: a method of a group, for one caller or for all.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    group: &'static str,
    method: &'static str,
    who: Who,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Who {
    Caller(Caller),
    /// `per = "method"`: everyone.
    All,
    /// Callers that found their shard full of callers still being limited: they share one
    /// allowance (never unlimited, never all refused) until a sweep makes room.
    Overflow,
}

const SHARDS: usize = 16;
/// A full shard is swept at most this often (a sweep is linear in the shard).
const SWEEP_EVERY_NS: u64 = 1_000_000_000;
/// The store's failures are logged at most this often.
const WARN_EVERY_NS: u64 = 10_000_000_000;
/// After the store fails, decisions stay in memory this long before it is tried again: a
/// store that is down costs a reconnect attempt a second, not one per call.
const RETRY_STORE_NS: u64 = 1_000_000_000;

#[derive(Default)]
struct Shard {
    /// When each key's next call is due on the steady pace, in ns since the limiter's epoch.
    /// A time in the past means the whole burst is available, exactly as no entry does.
    tat: HashMap<Key, u64>,
    swept_at: u64,
}

/// The limiter of one server: in memory, and in the shared store when there is one (in
/// memory again while the store fails: each instance then limits alone, which is never
/// unlimited and never refuses everyone).
pub(crate) struct Limiter {
    shards: Box<[Mutex<Shard>]>,
    hasher: std::collections::hash_map::RandomState,
    per_shard: usize,
    epoch: Instant,
    shared: Option<Arc<dyn RateStore>>,
    warned_at: AtomicU64,
    /// Until when (ns since the epoch) the store is not asked, after it failed.
    store_down_until: AtomicU64,
}

impl Limiter {
    /// A limiter keeping at most `keys` callers' times in memory (callers past it share an
    /// allowance per method until the finished ones are swept).
    pub(crate) fn new(keys: usize) -> Self {
        Self {
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
            hasher: Default::default(),
            per_shard: keys.div_ceil(SHARDS).max(1),
            epoch: Instant::now(),
            shared: None,
            warned_at: AtomicU64::new(0),
            store_down_until: AtomicU64::new(0),
        }
    }

    /// Decides in `store` first; the memory is then the fallback while it fails.
    pub(crate) fn with_store(mut self, store: Arc<dyn RateStore>) -> Self {
        self.shared = Some(store);
        self
    }

    /// Whether decisions wait for a shared store.
    pub(crate) fn is_shared(&self) -> bool {
        self.shared.is_some()
    }

    fn now(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    /// Decides one call in memory: `Err(wait)` refuses it.
    pub(crate) fn decide_here(
        &self,
        group: &'static str,
        method: &'static str,
        limit: &RateLimit,
        caller: Option<&Caller>,
    ) -> Result<(), Duration> {
        self.decide_at(key(group, method, limit, caller), limit, self.now())
    }

    fn decide_at(&self, key: Key, limit: &RateLimit, now: u64) -> Result<(), Duration> {
        let interval = nanos(limit.interval());
        let tolerance = nanos(limit.tolerance());
        let shard = &self.shards[(self.hasher.hash_one(&key) as usize) % SHARDS];
        // A poisoned shard only means a panic elsewhere while it was held: its times are
        // still times.
        let mut shard = shard
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // A caller seen before (the common case): one lookup.
        if let Some(tat) = shard.tat.get_mut(&key) {
            *tat = gcra(Some(*tat), now, interval, tolerance)?;
            return Ok(());
        }
        let key = if shard.tat.len() < self.per_shard {
            key
        } else {
            if now.saturating_sub(shard.swept_at) >= SWEEP_EVERY_NS {
                shard.swept_at = now;
                shard.tat.retain(|_, tat| *tat > now);
            }
            if shard.tat.len() < self.per_shard {
                key
            } else {
                Key {
                    who: Who::Overflow,
                    ..key
                }
            }
        };
        let tat = shard.tat.get(&key).copied();
        let next = gcra(tat, now, interval, tolerance)?;
        shard.tat.insert(key, next);
        Ok(())
    }

    /// Decides one call: in the shared store when there is one (in memory while it fails,
    /// logged), else in memory.
    pub(crate) async fn decide(
        &self,
        group: &'static str,
        method: &'static str,
        limit: &RateLimit,
        caller: Option<&Caller>,
    ) -> Result<(), Duration> {
        let Some(store) = &self.shared else {
            return self.decide_here(group, method, limit, caller);
        };
        let now = self.now();
        if now < self.store_down_until.load(Ordering::Relaxed) {
            return self.decide_at(key(group, method, limit, caller), limit, now);
        }
        let name = shared_key(group, method, limit, caller);
        match store
            .decide(&name, limit.interval(), limit.tolerance())
            .await
        {
            Ok(None) => Ok(()),
            Ok(Some(wait)) => Err(wait),
            Err(e) => {
                let now = self.now();
                self.store_down_until
                    .store(now.saturating_add(RETRY_STORE_NS), Ordering::Relaxed);
                let last = self.warned_at.load(Ordering::Relaxed);
                if (last == 0 || now.saturating_sub(last) >= WARN_EVERY_NS)
                    && self
                        .warned_at
                        .compare_exchange(last, now.max(1), Ordering::Relaxed, Ordering::Relaxed)
                        .is_ok()
                {
                    tracing::warn!(error = %e, "rate limit store unavailable; limiting in this instance alone");
                }
                self.decide_here(group, method, limit, caller)
            }
        }
    }
}

fn key(
    group: &'static str,
    method: &'static str,
    limit: &RateLimit,
    caller: Option<&Caller>,
) -> Key {
    let who = match limit.per() {
        RatePer::Method => Who::All,
        RatePer::Caller => Who::Caller(caller.cloned().unwrap_or_else(Caller::local)),
    };
    Key { group, method, who }
}

/// The store's key: `rl:{group}/{method}` for the method, `…:{caller}` per caller.
fn shared_key(group: &str, method: &str, limit: &RateLimit, caller: Option<&Caller>) -> String {
    match (limit.per(), caller) {
        (RatePer::Method, _) => format!("rl:{group}/{method}"),
        (RatePer::Caller, Some(c)) => format!("rl:{group}/{method}:{c}"),
        (RatePer::Caller, None) => format!("rl:{group}/{method}:local"),
    }
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// One GCRA step: the key's next due time if the call at `now` is let through, else how long
/// until it would be.
fn gcra(tat: Option<u64>, now: u64, interval: u64, tolerance: u64) -> Result<u64, Duration> {
    let tat = tat.map_or(now, |t| t.max(now));
    let ahead = tat - now;
    if ahead > tolerance {
        return Err(Duration::from_nanos(ahead - tolerance));
    }
    Ok(tat.saturating_add(interval))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEC: u64 = 1_000_000_000;

    fn limit(count: u32, burst: u32) -> RateLimit {
        RateLimit::new(count, Duration::from_secs(60)).burst(burst)
    }

    fn ip(n: u8) -> Caller {
        Caller::address(std::net::Ipv4Addr::new(10, 0, 0, n).into())
    }

    fn at(l: &Limiter, who: &Caller, r: &RateLimit, now: u64) -> Result<(), Duration> {
        l.decide_at(key("g", "m", r, Some(who)), r, now)
    }

    #[test]
    fn a_burst_then_the_steady_pace() {
        let (l, r, a) = (Limiter::new(100), limit(60, 10), ip(1));
        for _ in 0..10 {
            assert_eq!(at(&l, &a, &r, SEC), Ok(()));
        }
        // The eleventh waits one interval (a second at 60/min).
        assert_eq!(at(&l, &a, &r, SEC), Err(Duration::from_secs(1)));
        assert_eq!(
            at(&l, &a, &r, SEC + SEC / 2),
            Err(Duration::from_millis(500))
        );
        assert_eq!(at(&l, &a, &r, 2 * SEC), Ok(()));
        assert_eq!(at(&l, &a, &r, 2 * SEC), Err(Duration::from_secs(1)));
        // Refusals cost nothing: after the wait, one more passes.
        assert_eq!(at(&l, &a, &r, 3 * SEC), Ok(()));
        // A caller idle for the burst's length has it all again.
        for _ in 0..10 {
            assert_eq!(at(&l, &a, &r, 13 * SEC), Ok(()));
        }
        assert!(at(&l, &a, &r, 13 * SEC).is_err());
    }

    #[test]
    fn each_caller_has_its_own_and_per_method_is_shared() {
        let (l, r) = (Limiter::new(100), limit(60, 2));
        for n in 1..=3 {
            assert_eq!(at(&l, &ip(n), &r, SEC), Ok(()));
            assert_eq!(at(&l, &ip(n), &r, SEC), Ok(()));
            assert!(at(&l, &ip(n), &r, SEC).is_err());
        }
        let shared = r.per_method();
        assert_eq!(at(&l, &ip(1), &shared, SEC), Ok(()));
        assert_eq!(at(&l, &ip(2), &shared, SEC), Ok(()));
        assert!(at(&l, &ip(3), &shared, SEC).is_err());
    }

    #[test]
    fn a_full_table_sweeps_the_finished_then_shares_one_allowance() {
        // 16 keys (one per shard at most): a flood of new callers cannot grow it.
        let (l, r) = (Limiter::new(16), limit(60, 1));
        let mut refused = 0;
        for n in 0..=255 {
            if at(&l, &ip(n), &r, SEC).is_err() {
                refused += 1;
            }
        }
        let held: usize = l.shards.iter().map(|s| s.lock().unwrap().tat.len()).sum();
        // At most one key per shard, plus one shared allowance for the overflow.
        assert!(held <= 2 * SHARDS, "{held} keys kept");
        // The overflow callers shared an allowance: most were refused, not all let through.
        assert!(refused > 200, "{refused} refused");
        // A minute later every time has passed: the sweep makes room, and new callers are
        // counted alone again.
        assert_eq!(at(&l, &ip(1), &r, 62 * SEC), Ok(()));
        assert!(at(&l, &ip(1), &r, 62 * SEC).is_err());
    }
}
