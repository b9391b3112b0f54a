//! The result cache: successful results only, keyed by method, version and canonical params.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::future::BoxFuture;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::env::Environment;

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

/// A method's cache rule (`#[rpc_method(cache(ttl = "60s", envs = ["prod"]))]`).
#[derive(Debug, Clone, Copy)]
pub struct CachePolicy {
    /// Time to live, in milliseconds.
    pub ttl_ms: u64,
    /// Environments caching is active in; `None` = every environment but `dev` and `test`.
    pub envs: Option<&'static [&'static str]>,
}

impl CachePolicy {
    /// Whether caching is active in `env`.
    pub fn active_in(&self, env: &Environment) -> bool {
        match self.envs {
            Some(list) => list.contains(&env.name()),
            None => !env.is_debug(),
        }
    }
}

/// Writes `v` as JSON with every object's keys sorted (list order is kept: `[3,1,2]` and
/// `[1,2,3]` are different calls).
pub fn canonical_json(v: &Value, out: &mut String) {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                canonical_json(&map[k], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical_json(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// The cache key of a call: `rpc:cache:<method>:v<version>:<sha256 of the canonical params>`.
pub fn cache_key(method: &str, version: u32, params: &Value) -> String {
    let mut canon = String::new();
    canonical_json(params, &mut canon);
    let digest = Sha256::digest(canon.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("rpc:cache:{method}:v{version}:{hex}")
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

/// The in-process cache (moka, bounded).
pub struct MemoryCache {
    inner: moka::future::Cache<String, Entry>,
}

impl MemoryCache {
    /// A cache holding at most `capacity` entries.
    pub fn new(capacity: u64) -> Self {
        Self {
            inner: moka::future::Cache::builder()
                .max_capacity(capacity)
                .expire_after(PerEntry)
                .build(),
        }
    }
}

impl Default for MemoryCache {
    fn default() -> Self {
        Self::new(10_000)
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
    use serde_json::json;

    #[test]
    fn canonical_keys_ignore_object_order_but_keep_list_order() {
        let a = cache_key("M", 1, &json!({"b":1,"a":{"y":2,"x":[3,1,2]}}));
        let b = cache_key("M", 1, &json!({"a":{"x":[3,1,2],"y":2},"b":1}));
        assert_eq!(a, b);
        assert_ne!(
            a,
            cache_key("M", 1, &json!({"a":{"x":[1,2,3],"y":2},"b":1}))
        );
        assert_ne!(
            a,
            cache_key("M", 2, &json!({"b":1,"a":{"y":2,"x":[3,1,2]}}))
        );
        assert!(a.starts_with("rpc:cache:M:v1:"));
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
