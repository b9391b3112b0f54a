//! MCP sessions in Redis, so any instance behind a load balancer knows a session. They share
//! the connection of the cache and locks ([`RedisStore`]).

use std::time::Duration;

use futures_util::future::BoxFuture;

use super::session::{DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE_TTL, SessionStore};
use crate::core::RedisStore;

/// MCP sessions kept in Redis (see the [`SessionStore`] implementation for the keys).
#[derive(Clone)]
pub struct RedisSessions {
    store: RedisStore,
    scripts: SessionScripts,
    max_sessions: usize,
    session_ttl: Duration,
}

impl RedisSessions {
    /// Sessions on `store`'s connection and key prefix, with the default bounds.
    pub fn new(store: RedisStore) -> Self {
        Self {
            store,
            scripts: SessionScripts {
                create: std::sync::Arc::new(redis::Script::new(CREATE_SESSION)),
                get: std::sync::Arc::new(redis::Script::new(GET_SESSION)),
                remove: std::sync::Arc::new(redis::Script::new(REMOVE_SESSION)),
            },
            max_sessions: DEFAULT_MAX_SESSIONS,
            session_ttl: DEFAULT_SESSION_IDLE_TTL,
        }
    }

    /// Bounds the MCP sessions kept in this Redis (all instances and applications sharing the
    /// prefix together): at most `max_sessions` live (at least 1; default
    /// [`DEFAULT_MAX_SESSIONS`]), each ending after `idle_ttl` without a request (at least a
    /// millisecond; default [`DEFAULT_SESSION_IDLE_TTL`]).
    pub fn with_limits(mut self, max_sessions: usize, idle_ttl: Duration) -> Self {
        self.max_sessions = max_sessions.max(1);
        self.session_ttl = idle_ttl;
        self
    }

    fn session_ttl_ms(&self) -> u64 {
        u64::try_from(self.session_ttl.as_millis())
            .unwrap_or(u64::MAX)
            .clamp(1, MAX_SESSION_TTL_MS)
    }
}

/// The session scripts: each one round trip, atomic.
#[derive(Clone)]
struct SessionScripts {
    create: std::sync::Arc<redis::Script>,
    get: std::sync::Arc<redis::Script>,
    remove: std::sync::Arc<redis::Script>,
}

/// Creates a session if fewer than the cap are live: KEYS = session, index; ARGV = revision,
/// idle milliseconds, cap, id. The index (`mcp:sessions`, a sorted set of ids by last use in
/// Redis time, milliseconds) loses its idle members first, so the count is of live sessions.
const CREATE_SESSION: &str = r"
if redis.replicate_commands then redis.replicate_commands() end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', '(' .. (now - ttl))
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[3]) then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ttl)
redis.call('ZADD', KEYS[2], now, ARGV[4])
redis.call('PEXPIRE', KEYS[2], ttl)
return 1
";

/// Reads a session and starts its idle time again: KEYS = session, index; ARGV = idle
/// milliseconds, id.
const GET_SESSION: &str = r"
if redis.replicate_commands then redis.replicate_commands() end
local v = redis.call('GETEX', KEYS[1], 'PX', ARGV[1])
if v then
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  redis.call('ZADD', KEYS[2], now, ARGV[2])
  redis.call('PEXPIRE', KEYS[2], ARGV[1])
end
return v
";

/// Ends a session: KEYS = session, index; ARGV = id. Returns how many keys it deleted.
/// Ends a session: KEYS = session, index, the session's stream list, the stream index;
/// ARGV = session id, the stream keys' prefix. The copies of its resumable streams go with it
/// (at most `MAX_STREAMS_PER_SESSION`), rather than waiting for their expiry; a copy still
/// being written then stops.
const REMOVE_SESSION: &str = r"
redis.call('ZREM', KEYS[2], ARGV[1])
for _, stream in ipairs(redis.call('LRANGE', KEYS[3], 0, -1)) do
  redis.call('DEL', ARGV[2] .. stream)
  redis.call('ZREM', KEYS[4], stream)
end
redis.call('DEL', KEYS[3])
return redis.call('DEL', KEYS[1])
";

/// Sessions in Redis, so any instance behind a load balancer knows a session.
///
/// `mcp:session:<id>` holds the negotiated revision and expires after the idle time
/// ([`DEFAULT_SESSION_IDLE_TTL`], 1 hour), which every `get` starts again. `mcp:sessions`
/// indexes the live ids by last use, for the cap ([`DEFAULT_MAX_SESSIONS`], 10 000, counted
/// over every instance sharing the prefix): past it `create` fails and the transport answers
/// 503. Each operation is one Lua script (one round trip), O(log n) plus the expired ids it
/// drops. The scripts touch two keys, so on Redis Cluster they need one hash slot (a prefix
/// with a hash tag, `{shop}:`).
impl SessionStore for RedisSessions {
    fn create<'a>(&'a self, version: &'a str) -> BoxFuture<'a, Result<String, crate::RpcError>> {
        Box::pin(async move {
            let mut con = self.store.connection();
            let id = crate::ids::random_id();
            let created: i64 = self
                .scripts
                .create
                .key(self.store.key(&format!("mcp:session:{id}")))
                .key(self.store.key(SESSION_INDEX))
                .arg(version)
                .arg(self.session_ttl_ms())
                .arg(self.max_sessions)
                .arg(&id)
                .invoke_async(&mut con)
                .await
                .map_err(session_err)?;
            if created == 1 {
                Ok(id)
            } else {
                Err(super::session::too_many_sessions())
            }
        })
    }
    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<String>, crate::RpcError>> {
        Box::pin(async move {
            let mut con = self.store.connection();
            self.scripts
                .get
                .key(self.store.key(&format!("mcp:session:{id}")))
                .key(self.store.key(SESSION_INDEX))
                .arg(self.session_ttl_ms())
                .arg(id)
                .invoke_async::<Option<String>>(&mut con)
                .await
                .map_err(session_err)
        })
    }
    fn set<'a>(
        &'a self,
        id: &'a str,
        state: &'a str,
    ) -> BoxFuture<'a, Result<bool, crate::RpcError>> {
        Box::pin(async move {
            let mut con = self.store.connection();
            // `XX`: only a live session; its idle time starts again.
            let done: Option<String> = redis::cmd("SET")
                .arg(self.store.key(&format!("mcp:session:{id}")))
                .arg(state)
                .arg("XX")
                .arg("PX")
                .arg(self.session_ttl_ms())
                .query_async(&mut con)
                .await
                .map_err(session_err)?;
            Ok(done.is_some())
        })
    }
    fn redis_store(&self) -> Option<&RedisStore> {
        Some(&self.store)
    }
    fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, crate::RpcError>> {
        Box::pin(async move {
            let mut con = self.store.connection();
            let n: i64 = self
                .scripts
                .remove
                .key(self.store.key(&format!("mcp:session:{id}")))
                .key(self.store.key(SESSION_INDEX))
                .key(self.store.key(&format!("mcp:session:{id}:streams")))
                .key(self.store.key(super::redis_streams::STREAM_INDEX))
                .arg(id)
                .arg(self.store.key("mcp:stream:"))
                .invoke_async(&mut con)
                .await
                .map_err(session_err)?;
            Ok(n > 0)
        })
    }
}

/// The sorted set of live session ids, scored by last use (Redis `TIME`, milliseconds).
const SESSION_INDEX: &str = "mcp:sessions";

/// The longest idle time Redis is given: 100 years (a `Duration::MAX` would overflow its
/// expiry arithmetic and fail every `SET`).
const MAX_SESSION_TTL_MS: u64 = 100 * 365 * 24 * 3600 * 1000;

fn session_err(e: redis::RedisError) -> crate::RpcError {
    // The Redis error goes to the log; the client learns only that the store is down.
    tracing::warn!(error = %e, "MCP session store unavailable");
    crate::RpcError::internal("Session store unavailable, try again later")
}

#[cfg(test)]
pub(crate) mod tests {
    use std::net::TcpListener;
    use std::process::{Child, Command, Stdio};
    use std::time::Duration;

    use super::RedisSessions;
    use crate::core::RedisStore;
    use crate::mcp::SessionStore;

    /// A `redis-server` on a free port, without persistence; killed on drop. `None` (the test
    /// is skipped) when it is not installed, except on CI. (The stream tests use it too.)
    pub(crate) struct Redis {
        child: Child,
        port: u16,
    }

    impl Redis {
        pub(crate) fn start() -> Option<Self> {
            let bin = std::env::var("MCP_TEST_REDIS").unwrap_or_else(|_| "redis-server".into());
            if Command::new(&bin).arg("--version").output().is_err() {
                assert!(
                    std::env::var_os("CI").is_none(),
                    "redis-server is missing: run scripts/install-test-clients.sh"
                );
                eprintln!("SKIPPED: redis-server is not installed");
                return None;
            }
            let port = TcpListener::bind("127.0.0.1:0")
                .ok()?
                .local_addr()
                .ok()?
                .port();
            let child = Command::new(bin)
                .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
                .args(["--save", "", "--appendonly", "no"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .ok()?;
            let r = Redis { child, port };
            for _ in 0..100 {
                if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                    return Some(r);
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            panic!("redis-server did not start");
        }

        pub(crate) fn store(&self) -> RedisStore {
            RedisStore::connect(&format!("redis://127.0.0.1:{}", self.port)).unwrap()
        }

        fn sessions(&self, prefix: &str, max: usize, idle: Duration) -> RedisSessions {
            RedisSessions::new(self.store().with_prefix(prefix)).with_limits(max, idle)
        }
    }

    impl Drop for Redis {
        fn drop(&mut self) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }

    async fn ttl(store: &RedisSessions, key: &str) -> i64 {
        let mut con = store.store.connection();
        redis::cmd("TTL")
            .arg(store.store.key(key))
            .query_async(&mut con)
            .await
            .unwrap()
    }

    #[tokio::test]
    async fn sessions_idle_ttl_is_restarted_by_every_get() {
        let Some(redis) = Redis::start() else { return };
        let store = redis.sessions("t:", 10, Duration::from_secs(100));
        let id = store.create("2025-06-18").await.unwrap();
        let key = format!("mcp:session:{id}");
        assert!((99..=100).contains(&ttl(&store, &key).await));
        // Most of the idle time passes (shortened here), then a request comes.
        let mut con = store.store.connection();
        let _: i64 = redis::cmd("EXPIRE")
            .arg(store.store.key(&key))
            .arg(5)
            .query_async(&mut con)
            .await
            .unwrap();
        assert_eq!(store.get(&id).await.unwrap().as_deref(), Some("2025-06-18"));
        assert!((99..=100).contains(&ttl(&store, &key).await));
        assert!((99..=100).contains(&ttl(&store, "mcp:sessions").await));
        assert!(store.remove(&id).await.unwrap());
        assert_eq!(store.get(&id).await.unwrap(), None);
        assert!(!store.remove(&id).await.unwrap());
    }

    #[tokio::test]
    async fn sessions_are_capped_and_expired_ones_free_their_place() {
        let Some(redis) = Redis::start() else { return };
        let store = redis.sessions("", 2, Duration::from_secs(1));
        let a = store.create("v").await.unwrap();
        let _b = store.create("v").await.unwrap();
        let full = store.create("v").await.unwrap_err();
        assert!(full.message().contains("too many sessions"), "{full:?}");
        // An ended session frees its place.
        assert!(store.remove(&a).await.unwrap());
        let _c = store.create("v").await.unwrap();
        assert!(store.create("v").await.is_err());
        // Expired ones too (idle time 1 s: scores are whole seconds of Redis time).
        tokio::time::sleep(Duration::from_millis(2100)).await;
        store.create("v").await.unwrap();
        store.create("v").await.unwrap();
        // Another prefix is another set of sessions.
        let other = redis.sessions("other:", 2, Duration::from_secs(1));
        assert!(other.create("v").await.is_ok());
    }
}
