//! The result cache: successful results only, keyed by method, version and canonical params.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::future::BoxFuture;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// Why a cache or lock backend failed (e.g. Redis is unreachable).
#[derive(Debug, Clone, thiserror::Error)]
#[error("{backend}: {message}")]
pub struct StoreError {
    /// Which backend.
    pub backend: &'static str,
    /// What went wrong.
    pub message: String,
}

/// A cache backend: in-process ([`MemoryCache`]) or shared (`RedisStore`, with the `redis` feature).
pub trait CacheStore: Send + Sync + 'static {
    /// The stored bytes of a key, if present and fresh.
    fn get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<Bytes>, StoreError>>;
    /// Stores bytes for `ttl`.
    fn set<'a>(
        &'a self,
        key: &'a str,
        value: Bytes,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>>;
}

pub use crate::record::CachePolicy;

/// Writes `v` as JSON with every object's keys sorted (list order is kept: `[3,1,2]` and
/// `[1,2,3]` are different calls). Scalars and keys are written by serde_json's serializer
/// straight into `out` (the same text as `to_string`, without a `String` and a formatting
/// pass for each).
pub(crate) fn write_canonical(v: &Value, out: &mut Vec<u8>) {
    match v {
        Value::Object(map) => write_canonical_map(map, out),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_canonical(item, out);
            }
            out.push(b']');
        }
        // Writing into a `Vec` cannot fail.
        other => drop(serde_json::to_writer(&mut *out, other)),
    }
}

/// An object of [`write_canonical`]: its members sorted by key.
pub(crate) fn write_canonical_map(map: &Map<String, Value>, out: &mut Vec<u8>) {
    let mut members: Vec<(&String, &Value)> = map.iter().collect();
    // Keys are unique: an unstable sort gives the one order.
    members.sort_unstable_by(|a, b| a.0.cmp(b.0));
    out.push(b'{');
    for (i, (k, v)) in members.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        drop(serde_json::to_writer(&mut *out, k));
        out.push(b':');
        write_canonical(v, out);
    }
    out.push(b'}');
}

/// The cache key of a call:
/// `rpc:cache:<group>:<method>:v<version>:<sha256 of the canonical params>`.
///
/// The group is part of the key: one method served in two groups (say a protected one and a
/// public one) has an entry per group, so a result cached for one is never read through the
/// other. A `%` or `:` in the group name is escaped (`%25`, `%3A`), so no two groups share a
/// prefix.
#[cfg_attr(not(feature = "test-util"), allow(dead_code))]
pub fn cache_key(group: &str, method: &str, version: u32, params: &Value) -> String {
    let mut canon = Vec::with_capacity(64);
    write_canonical(params, &mut canon);
    key_of(group, method, version, &canon)
}

/// [`cache_key`] of params given as an object, without making a `Value` of them.
pub(crate) fn cache_key_of_map(
    group: &str,
    method: &str,
    version: u32,
    params: &Map<String, Value>,
) -> String {
    let mut canon = Vec::with_capacity(64);
    write_canonical_map(params, &mut canon);
    key_of(group, method, version, &canon)
}

fn key_of(group: &str, method: &str, version: u32, canon: &[u8]) -> String {
    use std::fmt::Write as _;
    let digest = Sha256::digest(canon);
    let mut key = String::with_capacity(16 + group.len() + method.len() + 12 + 64);
    key.push_str("rpc:cache:");
    for c in group.chars() {
        match c {
            '%' => key.push_str("%25"),
            ':' => key.push_str("%3A"),
            c => key.push(c),
        }
    }
    key.push(':');
    key.push_str(method);
    key.push_str(":v");
    let _ = write!(key, "{version}:");
    crate::ids::push_hex(&mut key, &digest);
    key
}

/// The key of a call answered in `lang`, not the server's default language: `<key>:lang=<lang>`
/// (`%` and `:` escaped), so that a handler answering in its caller's language never serves
/// one language's result to another.
pub(crate) fn for_language(mut key: String, lang: &str) -> String {
    key.push_str(":lang=");
    for c in lang.chars() {
        match c {
            '%' => key.push_str("%25"),
            ':' => key.push_str("%3A"),
            c => key.push(c),
        }
    }
    key
}

/// The cache key of `key` for one caller: `<key>:@<sha256 of the subject, 16 bytes>` (the
/// subject itself never reaches the store). A call whose context has an identity
/// ([`crate::RequestContext::identity`]) is cached per caller.
pub fn for_caller(mut key: String, subject: &str) -> String {
    let digest = Sha256::digest(subject.as_bytes());
    key.push_str(":@");
    crate::ids::push_hex(&mut key, &digest[..16]);
    key
}

#[derive(Clone)]
struct Entry {
    value: Bytes,
    ttl: Duration,
}

struct PerEntry;

impl moka::Expiry<String, Entry> for PerEntry {
    fn expire_after_create(
        &self,
        _: &String,
        e: &Entry,
        _: std::time::Instant,
    ) -> Option<Duration> {
        Some(e.ttl)
    }
}

/// The default byte budget of a [`MemoryCache`]: 64 MiB of keys and values.
pub const DEFAULT_CACHE_BYTES: u64 = 64 * 1024 * 1024;

/// The default entry bound of a [`MemoryCache`]: 10 000 entries.
pub const DEFAULT_CACHE_ENTRIES: u64 = 10_000;

/// What an entry is counted for beyond its key and value bytes (the map's own bookkeeping,
/// roughly): 128 bytes. An empty result still weighs this much.
pub const CACHE_ENTRY_OVERHEAD_BYTES: u64 = 128;

/// The in-process cache (moka), bounded in bytes and in entries.
///
/// Every entry weighs its key and value bytes plus [`CACHE_ENTRY_OVERHEAD_BYTES`]; the
/// weights never add up to more than the byte budget (default [`DEFAULT_CACHE_BYTES`]): the
/// least useful entries are evicted first, and an entry larger than the whole budget is not
/// kept. Eviction runs as moka's maintenance runs, so the budget may be passed briefly
/// between two writes, never for long.
pub struct MemoryCache {
    inner: moka::future::Cache<String, Entry>,
}

impl MemoryCache {
    /// A cache of at most `max_entries` entries, within the default byte budget
    /// ([`DEFAULT_CACHE_BYTES`]).
    pub fn new(max_entries: u64) -> Self {
        Self::with_limits(max_entries, DEFAULT_CACHE_BYTES)
    }

    /// A cache bounded by bytes only: at most `max_bytes` of keys and values (each entry
    /// counted with [`CACHE_ENTRY_OVERHEAD_BYTES`] more).
    pub fn with_capacity_bytes(max_bytes: u64) -> Self {
        Self::with_limits(u64::MAX, max_bytes)
    }

    /// A cache of at most `max_entries` entries and `max_bytes` bytes (both at least 1).
    ///
    /// Both bounds are one moka weight: an entry weighs its bytes, and at least
    /// `max_bytes / max_entries`, so `max_entries` of them fill the budget.
    pub fn with_limits(max_entries: u64, max_bytes: u64) -> Self {
        let max_bytes = max_bytes.max(1);
        let floor = (max_bytes / max_entries.max(1)).max(CACHE_ENTRY_OVERHEAD_BYTES);
        Self {
            inner: moka::future::Cache::builder()
                .max_capacity(max_bytes)
                .weigher(move |k: &String, e: &Entry| entry_weight(k, e, floor))
                .expire_after(PerEntry)
                .build(),
        }
    }
}

/// The weight of an entry: its key and value bytes and the overhead, at least `floor`
/// (saturating at `u32::MAX`, moka's largest weight).
fn entry_weight(key: &str, e: &Entry, floor: u64) -> u32 {
    let bytes = (key.len() as u64)
        .saturating_add(e.value.len() as u64)
        .saturating_add(CACHE_ENTRY_OVERHEAD_BYTES);
    u32::try_from(bytes.max(floor)).unwrap_or(u32::MAX)
}

impl Default for MemoryCache {
    /// [`DEFAULT_CACHE_ENTRIES`] entries within [`DEFAULT_CACHE_BYTES`].
    fn default() -> Self {
        Self::with_limits(DEFAULT_CACHE_ENTRIES, DEFAULT_CACHE_BYTES)
    }
}

impl CacheStore for MemoryCache {
    fn get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<Bytes>, StoreError>> {
        Box::pin(async move { Ok(self.inner.get(key).await.map(|e| e.value)) })
    }
    fn set<'a>(
        &'a self,
        key: &'a str,
        value: Bytes,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            self.inner
                .insert(key.to_owned(), Entry { value, ttl })
                .await;
            Ok(())
        })
    }
}

/// Shared handle to a cache backend.
pub type SharedCache = Arc<dyn CacheStore>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::Environment;
    use serde_json::json;

    #[test]
    fn canonical_text_is_serde_jsons_with_sorted_keys() {
        let v = json!({"b": 1, "a": {"y": "é\"\n", "x": [3, 1.5, null, true, {"d": 0, "c": -2}]}});
        let mut out = Vec::new();
        super::write_canonical(&v, &mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"{"a":{"x":[3,1.5,null,true,{"c":-2,"d":0}],"y":"é\"\n"},"b":1}"#
        );
        // The key of an object is the key of the same object as a `Value`.
        let Value::Object(map) = &v else {
            unreachable!()
        };
        assert_eq!(
            cache_key_of_map("g", "M", 1, map),
            cache_key("g", "M", 1, &v)
        );
    }

    #[test]
    fn canonical_keys_ignore_object_order_but_keep_list_order() {
        let a = cache_key("g", "M", 1, &json!({"b":1,"a":{"y":2,"x":[3,1,2]}}));
        let b = cache_key("g", "M", 1, &json!({"a":{"x":[3,1,2],"y":2},"b":1}));
        assert_eq!(a, b);
        assert_ne!(
            a,
            cache_key("g", "M", 1, &json!({"a":{"x":[1,2,3],"y":2},"b":1}))
        );
        assert_ne!(
            a,
            cache_key("g", "M", 2, &json!({"b":1,"a":{"y":2,"x":[3,1,2]}}))
        );
        assert!(a.starts_with("rpc:cache:g:M:v1:"));
        assert_eq!(a.len(), "rpc:cache:g:M:v1:".len() + 64);
    }

    /// One method in two groups (a protected one and a public one): two keys, two entries.
    #[tokio::test]
    async fn the_group_is_part_of_the_key() {
        let params = json!({"id": 7});
        let private = cache_key("admin", "Orders.get", 1, &params);
        let public = cache_key("public", "Orders.get", 1, &params);
        assert_ne!(private, public);
        assert!(private.starts_with("rpc:cache:admin:Orders.get:v1:"));
        let c = MemoryCache::default();
        let ttl = Duration::from_secs(60);
        c.set(&private, Bytes::from_static(b"secret"), ttl)
            .await
            .unwrap();
        assert_eq!(c.get(&public).await.unwrap(), None);
        c.set(&public, Bytes::from_static(b"public"), ttl)
            .await
            .unwrap();
        assert_eq!(
            c.get(&private).await.unwrap(),
            Some(Bytes::from_static(b"secret"))
        );
        assert_eq!(
            c.get(&public).await.unwrap(),
            Some(Bytes::from_static(b"public"))
        );
        // Group names cannot forge each other's prefix.
        assert_ne!(
            cache_key("a:b", "c", 1, &params),
            cache_key("a", "b:c", 1, &params)
        );
        assert!(cache_key("a:b%", "c", 1, &params).starts_with("rpc:cache:a%3Ab%25:c:v1:"));
    }

    /// 100 entries with 1 MiB keys and values in a 4 MiB cache: what it keeps stays within
    /// the budget.
    #[tokio::test]
    async fn memory_cache_is_bounded_in_bytes() {
        const MIB: u64 = 1024 * 1024;
        let c = MemoryCache::with_capacity_bytes(4 * MIB);
        let value = Bytes::from(vec![b'x'; MIB as usize]);
        for i in 0..100 {
            let key = format!("{i}{}", "k".repeat(MIB as usize));
            c.set(&key, value.clone(), Duration::from_secs(60))
                .await
                .unwrap();
            c.inner.run_pending_tasks().await;
            assert!(
                c.inner.weighted_size() <= 4 * MIB,
                "{} bytes after {i}",
                c.inner.weighted_size()
            );
        }
        assert!(c.inner.entry_count() <= 2, "{}", c.inner.entry_count());
        // An entry larger than the whole budget is not kept.
        let huge = Bytes::from(vec![b'y'; 5 * MIB as usize]);
        c.set("huge", huge, Duration::from_secs(60)).await.unwrap();
        c.inner.run_pending_tasks().await;
        assert_eq!(c.get("huge").await.unwrap(), None);
        assert!(c.inner.weighted_size() <= 4 * MIB);
    }

    /// The entry bound holds too: small entries count at least `bytes / entries` each.
    #[tokio::test]
    async fn memory_cache_is_bounded_in_entries() {
        let c = MemoryCache::with_limits(10, 1024 * 1024);
        for i in 0..100 {
            c.set(
                &i.to_string(),
                Bytes::from_static(b"1"),
                Duration::from_secs(60),
            )
            .await
            .unwrap();
        }
        c.inner.run_pending_tasks().await;
        assert!(c.inner.entry_count() <= 10, "{}", c.inner.entry_count());
        let weight = |k: &str, v: &'static [u8], floor| {
            entry_weight(
                k,
                &Entry {
                    value: Bytes::from_static(v),
                    ttl: Duration::ZERO,
                },
                floor,
            )
        };
        assert_eq!(weight("k", b"v", 0), 2 + CACHE_ENTRY_OVERHEAD_BYTES as u32);
        assert_eq!(weight("k", b"v", 5000), 5000);
        assert_eq!(weight("k", b"v", u64::MAX), u32::MAX);
    }

    #[tokio::test]
    async fn memory_cache_expires() {
        let c = MemoryCache::new(10);
        c.set("k", Bytes::from_static(b"1"), Duration::from_millis(30))
            .await
            .unwrap();
        assert_eq!(c.get("k").await.unwrap(), Some(Bytes::from_static(b"1")));
        tokio::time::sleep(Duration::from_millis(60)).await;
        assert_eq!(c.get("k").await.unwrap(), None);
    }

    #[test]
    fn default_envs_skip_dev_and_test() {
        let p = CachePolicy {
            ttl_ms: 1,
            envs: None,
        };
        assert!(
            p.active_in(&Environment::PROD)
                && !p.active_in(&Environment::DEV)
                && !p.active_in(&Environment::TEST)
        );
        let p = CachePolicy {
            ttl_ms: 1,
            envs: Some(&["staging"]),
        };
        assert!(p.active_in(&Environment::new("staging")) && !p.active_in(&Environment::PROD));
    }
}
