//! Redis backends of the cache and the locks, sharing one connection manager (MCP sessions
//! use it too: `mcp::redis_sessions`).
//!
//! The cache fails open (a Redis error is a miss and the call runs uncached); the locks fail
//! closed (a Redis error fails the call). Locks are `SET key token NX PX ttl` and a Lua
//! compare-and-delete, so only the holder releases.

use std::time::Duration;

use bytes::Bytes;
use futures_util::future::BoxFuture;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};

use super::cache::{CacheStore, StoreError};
use super::lock::LockStore;

const RELEASE: &str = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

/// A Redis connection for the cache, the locks and MCP sessions.
#[derive(Clone)]
pub struct RedisStore {
    client: redis::Client,
    con: ConnectionManager,
    prefix: String,
    release: std::sync::Arc<redis::Script>,
}

fn err(e: redis::RedisError) -> StoreError {
    StoreError {
        backend: "redis",
        message: e.to_string(),
    }
}

impl RedisStore {
    /// Connects lazily to `url` (`redis://127.0.0.1:6379`): startup succeeds while Redis is
    /// down, and commands reconnect when it is back.
    pub fn connect(url: &str) -> Result<Self, StoreError> {
        let client = redis::Client::open(url).map_err(err)?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(Duration::from_millis(500)))
            .set_response_timeout(Some(Duration::from_millis(500)))
            .set_number_of_retries(1)
            .set_max_delay(Duration::from_millis(500));
        let con = client.get_connection_manager_lazy(config).map_err(err)?;
        Ok(Self {
            client,
            con,
            prefix: String::new(),
            release: std::sync::Arc::new(redis::Script::new(RELEASE)),
        })
    }

    /// Prefixes every key (several apps on one Redis).
    pub fn with_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// A key under the prefix.
    pub(crate) fn key(&self, k: &str) -> String {
        format!("{}{k}", self.prefix)
    }

    /// The shared connection (a cheap handle).
    pub(crate) fn connection(&self) -> ConnectionManager {
        self.con.clone()
    }
}

impl CacheStore for RedisStore {
    fn get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<Bytes>, StoreError>> {
        Box::pin(async move {
            let mut con = self.con.clone();
            let v: Option<Vec<u8>> = redis::cmd("GET")
                .arg(self.key(key))
                .query_async(&mut con)
                .await
                .map_err(err)?;
            Ok(v.map(Bytes::from))
        })
    }
    fn set<'a>(
        &'a self,
        key: &'a str,
        value: Bytes,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let mut con = self.con.clone();
            let ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1);
            redis::cmd("SET")
                .arg(self.key(key))
                .arg(value.as_ref())
                .arg("PX")
                .arg(ms)
                .query_async::<()>(&mut con)
                .await
                .map_err(err)
        })
    }
}

impl LockStore for RedisStore {
    fn try_acquire<'a>(
        &'a self,
        key: &'a str,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<Option<String>, StoreError>> {
        Box::pin(async move {
            let mut con = self.con.clone();
            let token = crate::ids::random_id();
            let ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1);
            let ok: Option<String> = redis::cmd("SET")
                .arg(self.key(key))
                .arg(&token)
                .arg("NX")
                .arg("PX")
                .arg(ms)
                .query_async(&mut con)
                .await
                .map_err(err)?;
            Ok(ok.map(|_| token))
        })
    }
    fn release<'a>(
        &'a self,
        key: &'a str,
        token: &'a str,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let mut con = self.con.clone();
            self.release
                .key(self.key(key))
                .arg(token)
                .invoke_async::<i64>(&mut con)
                .await
                .map_err(err)?;
            Ok(())
        })
    }
}

/// Change notices between instances over Redis pub/sub, on the channel `<prefix>mcp:changes`.
pub(crate) struct RedisRelay {
    store: RedisStore,
    channel: String,
}

impl RedisRelay {
    pub(crate) fn new(store: RedisStore) -> Self {
        let channel = store.key("mcp:changes");
        Self { store, channel }
    }
}

impl super::changes::Relay for RedisRelay {
    fn publish(&self, message: String) {
        // Outside a runtime (a notice announced before serving) nothing can be sent.
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let (mut con, channel) = (self.store.con.clone(), self.channel.clone());
        rt.spawn(async move {
            let sent: redis::RedisResult<i64> = redis::cmd("PUBLISH")
                .arg(&channel)
                .arg(message)
                .query_async(&mut con)
                .await;
            if let Err(e) = sent {
                tracing::warn!(error = %e, "change notice not published to Redis");
            }
        });
    }

    fn run(
        &self,
        origin: std::sync::Arc<str>,
        tx: tokio::sync::broadcast::Sender<super::changes::Change>,
    ) {
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let (client, channel) = (self.store.client.clone(), self.channel.clone());
        rt.spawn(async move {
            use futures_util::StreamExt as _;
            loop {
                match client.get_async_pubsub().await {
                    Ok(mut pubsub) => match pubsub.subscribe(&channel).await {
                        Ok(()) => {
                            let mut messages = pubsub.on_message();
                            while let Some(msg) = messages.next().await {
                                let Ok(text) = msg.get_payload::<String>() else {
                                    continue;
                                };
                                if let Some((from, change)) = super::changes::decode(&text)
                                    && from != &*origin
                                {
                                    let _ = tx.send(change);
                                }
                            }
                        }
                        Err(e) => tracing::warn!(error = %e, "cannot subscribe to change notices"),
                    },
                    Err(e) => tracing::warn!(error = %e, "cannot reach Redis for change notices"),
                }
                // Redis went away: listen again soon; notices meanwhile are lost (clients
                // relist on their next stream).
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        });
    }
}
