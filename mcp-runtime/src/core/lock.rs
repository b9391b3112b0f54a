//! Method locks: a second concurrent call with the same key is refused (`-32400`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use serde_json::Value;

use super::cache::{StoreError, write_canonical};

/// A lock backend: in-process ([`MemoryLocks`]) or shared (`RedisStore`, with the `redis` feature).
pub trait LockStore: Send + Sync + 'static {
    /// Takes the lock if free; `Some(token)` when taken. `ttl` bounds a crashed holder.
    fn try_acquire<'a>(
        &'a self,
        key: &'a str,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<Option<String>, StoreError>>;
    /// Releases the lock if `token` still holds it.
    fn release<'a>(&'a self, key: &'a str, token: &'a str)
    -> BoxFuture<'a, Result<(), StoreError>>;
}

pub use crate::record::LockPolicy;

/// The lock key of a call: `rpc:lock:<method>:<canonical value of the param>`.
pub fn lock_key(
    method: &str,
    policy: &LockPolicy,
    params: &serde_json::Map<String, Value>,
) -> String {
    let mut key = format!("rpc:lock:{method}:");
    if let Some(p) = policy.param {
        let mut canon = Vec::with_capacity(32);
        write_canonical(params.get(p).unwrap_or(&Value::Null), &mut canon);
        // Only JSON text was written, which is UTF-8: this borrows.
        key.push_str(&String::from_utf8_lossy(&canon));
    }
    key
}

/// Locks in this process's memory.
#[derive(Default)]
pub struct MemoryLocks {
    held: Mutex<HashMap<String, (String, Instant)>>,
}

impl LockStore for MemoryLocks {
    fn try_acquire<'a>(
        &'a self,
        key: &'a str,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<Option<String>, StoreError>> {
        // A token here only has to be unique in this process (no one outside can present
        // one): a counter, not a random id and its system call on every locked call.
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let now = Instant::now();
        let taken = match self.held.lock() {
            Ok(mut m) => match m.get(key) {
                Some((_, until)) if *until > now => None,
                _ => {
                    let token = NEXT.fetch_add(1, Ordering::Relaxed).to_string();
                    m.insert(key.to_owned(), (token.clone(), now + ttl));
                    Some(token)
                }
            },
            Err(_) => {
                return Box::pin(std::future::ready(Err(StoreError {
                    backend: "memory",
                    message: "poisoned".into(),
                })));
            }
        };
        Box::pin(std::future::ready(Ok(taken)))
    }

    fn release<'a>(
        &'a self,
        key: &'a str,
        token: &'a str,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        if let Ok(mut m) = self.held.lock()
            && m.get(key).is_some_and(|(t, _)| t == token)
        {
            m.remove(key);
        }
        Box::pin(std::future::ready(Ok(())))
    }
}

/// Shared handle to a lock backend.
pub type SharedLocks = Arc<dyn LockStore>;

/// A held lock; released by [`LockGuard::release`], or on drop if the call was cancelled.
pub struct LockGuard {
    store: SharedLocks,
    key: String,
    token: Option<String>,
}

impl LockGuard {
    /// Acquires, waiting up to the policy's `wait`; `Ok(None)` when still held by another call.
    pub async fn acquire(
        store: &SharedLocks,
        key: String,
        policy: &LockPolicy,
    ) -> Result<Option<Self>, StoreError> {
        let ttl = Duration::from_millis(policy.ttl_ms.max(1));
        let deadline = Instant::now() + Duration::from_millis(policy.wait_ms);
        let mut pause = Duration::from_millis(5);
        loop {
            if let Some(token) = store.try_acquire(&key, ttl).await? {
                return Ok(Some(Self {
                    store: store.clone(),
                    key,
                    token: Some(token),
                }));
            }
            let now = Instant::now();
            if now >= deadline {
                return Ok(None);
            }
            tokio::time::sleep(pause.min(deadline - now)).await;
            pause = (pause * 2).min(Duration::from_millis(100));
        }
    }

    /// Releases now.
    pub async fn release(mut self) {
        if let Some(t) = self.token.take()
            && let Err(e) = self.store.release(&self.key, &t).await
        {
            tracing::warn!(key = %self.key, error = %e, "lock release failed; the ttl will free it");
        }
    }
}

impl Drop for LockGuard {
    fn drop(&mut self) {
        // Cancelled call (its future was dropped): release in the background.
        if let Some(t) = self.token.take() {
            let (store, key) = (self.store.clone(), std::mem::take(&mut self.key));
            if let Ok(h) = tokio::runtime::Handle::try_current() {
                h.spawn(async move {
                    let _ = store.release(&key, &t).await;
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn second_holder_is_refused_until_release() {
        let store: SharedLocks = Arc::new(MemoryLocks::default());
        let p = LockPolicy {
            param: None,
            ttl_ms: 10_000,
            wait_ms: 0,
        };
        let g = LockGuard::acquire(&store, "k".into(), &p)
            .await
            .unwrap()
            .expect("free");
        assert!(
            LockGuard::acquire(&store, "k".into(), &p)
                .await
                .unwrap()
                .is_none()
        );
        g.release().await;
        assert!(
            LockGuard::acquire(&store, "k".into(), &p)
                .await
                .unwrap()
                .is_some()
        );
    }

    #[tokio::test]
    async fn ttl_frees_a_crashed_holder_and_wait_waits() {
        let store: SharedLocks = Arc::new(MemoryLocks::default());
        let short = LockPolicy {
            param: None,
            ttl_ms: 30,
            wait_ms: 0,
        };
        let g = LockGuard::acquire(&store, "k".into(), &short)
            .await
            .unwrap()
            .expect("free");
        std::mem::forget(g);
        let waiting = LockPolicy {
            param: None,
            ttl_ms: 1000,
            wait_ms: 500,
        };
        assert!(
            LockGuard::acquire(&store, "k".into(), &waiting)
                .await
                .unwrap()
                .is_some()
        );
    }
}
