//! MCP sessions in Redis, so any instance behind a load balancer knows a session. They share
//! the connection of the cache and locks ([`RedisStore`]).

use std::time::Duration;

use futures_util::future::BoxFuture;

use super::session::SessionStore;
use crate::Limits;
use crate::core::RedisStore;
use crate::core::redis::Group;

/// MCP sessions kept in Redis (see the [`SessionStore`] implementation for the keys).
#[derive(Clone)]
pub struct RedisSessions {
    store: RedisStore,
    scripts: SessionScripts,
    max_sessions: usize,
    /// One holder's share of `max_sessions`.
    share: usize,
    session_ttl: Duration,
    /// Where the sessions that expire or give way are counted and timed
    /// (`mcp.server.session.duration`), with telemetry on.
    telemetry: Option<crate::core::telemetry::Telemetry>,
    /// Shared by this store's clones: the sweep ends once they are all gone.
    alive: std::sync::Arc<()>,
}

impl RedisSessions {
    /// Sessions on `store`'s connection and key prefix, with the default bounds.
    pub fn new(store: RedisStore) -> Self {
        Self {
            store,
            scripts: SessionScripts {
                create: script(CREATE_SESSION),
                get: script(GET_SESSION),
                remove: script(REMOVE_SESSION),
                sweep: script(SWEEP_SESSIONS),
            },
            max_sessions: Limits::DEFAULT_SESSIONS,
            share: Limits::DEFAULT_SESSIONS,
            session_ttl: Limits::DEFAULT_SESSION_IDLE,
            telemetry: None,
            alive: std::sync::Arc::default(),
        }
    }

    /// Counts and times the sessions that expire or give way (`mcp.server.session.duration`),
    /// as a `DELETE` is, once, on whichever instance finds them ended: with telemetry on only.
    /// Each session's revision and opening are kept beside it for that (`mcp:session-opened`;
    /// it and the index of sessions outlive the last session by a minute), and the expired
    /// ones are looked for at every creation and, from a task started here (in a Tokio
    /// runtime) that ends with the store, every [`SWEEP_EVERY`] (or idle time, when shorter).
    pub(crate) fn counted(mut self, telemetry: &crate::core::telemetry::Telemetry) -> Self {
        if !telemetry.is_on() {
            return self;
        }
        self.telemetry = Some(telemetry.clone());
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            let owners = std::sync::Arc::downgrade(&self.alive);
            let sweeper = RedisSessions {
                alive: std::sync::Arc::default(),
                ..self.clone()
            };
            rt.spawn(async move {
                // No more often than sessions can expire, nor than ten times a second.
                let every = SWEEP_EVERY
                    .min(sweeper.session_ttl)
                    .max(Duration::from_millis(100));
                loop {
                    tokio::time::sleep(every).await;
                    if owners.strong_count() == 0 {
                        return;
                    }
                    if let Err(e) = sweeper.sweep().await {
                        tracing::debug!(error = %e, "expired sessions not looked for");
                    }
                }
            });
        }
        self
    }

    /// Drops the expired sessions and counts them.
    async fn sweep(&self) -> Result<(), redis::RedisError> {
        let index = self.k(SESSION_INDEX);
        let keys = [
            &index,
            &index,
            &index,
            &self.k(HOLDERS),
            &self.k(SESSION_HOLDERS),
        ];
        let own = [self.session_ttl_ms().to_string()];
        let ended: Vec<String> = self.run(&self.scripts.sweep, &keys, &own, None).await?;
        self.count(ended);
        Ok(())
    }

    /// Runs a session script on `keys` with its own arguments (`ARGV[1]` on; `""` up to
    /// `ARGV[6]`), then the three the library reads (see [`SESSION_LIB`]) and `more`.
    async fn run<T: redis::FromRedisValue>(
        &self,
        script: &redis::Script,
        keys: &[&String],
        own: &[String],
        more: Option<&str>,
    ) -> redis::RedisResult<T> {
        let mut call = script.prepare_invoke();
        for k in keys {
            call.key(*k);
        }
        for i in 0..6 {
            call.arg(own.get(i).map_or("", String::as_str));
        }
        call.arg(self.k("mcp:session:"))
            .arg(self.k(HELD))
            .arg(self.opened_key());
        if let Some(m) = more {
            call.arg(m);
        }
        call.invoke_async(&mut self.store.connection()).await
    }

    /// The hash of each session's revision and opening, when sessions are counted; `""`
    /// (nothing kept) otherwise.
    fn opened_key(&self) -> String {
        match self.telemetry {
            Some(_) => self.k(SESSION_OPENED),
            None => String::new(),
        }
    }

    /// Counts the sessions a script found ended: each `<version> <opened ms>`.
    fn count(&self, ended: impl IntoIterator<Item = String>) {
        let Some(t) = &self.telemetry else { return };
        for e in ended {
            let (version, opened) = e.split_once(' ').unwrap_or((&e, ""));
            let version = crate::mcp::protocol::Era::handshake(version)
                .unwrap_or_else(crate::mcp::protocol::Era::assumed)
                .version();
            let seconds = opened.parse().ok().and_then(super::session::seconds_since);
            t.session_closed(version, "tcp", seconds);
        }
    }

    /// At most `per_holder` sessions of one holder (an endpoint's caller), over every
    /// instance sharing the prefix (at least 1, at most the store's bound).
    pub fn with_share(mut self, per_holder: usize) -> Self {
        self.share = per_holder.clamp(1, self.max_sessions);
        self
    }

    /// Bounds the MCP sessions kept in this Redis (all instances and applications sharing the
    /// prefix together): at most `max_sessions` live (at least 1; default
    /// [`Limits::sessions`]), each ending after `idle_ttl` without a request (at least a
    /// millisecond; default [`Limits::session_idle`]).
    pub fn with_limits(mut self, max_sessions: usize, idle_ttl: Duration) -> Self {
        self.max_sessions = max_sessions.max(1);
        self.share = self.share.min(self.max_sessions);
        self.session_ttl = idle_ttl;
        self
    }

    /// A key of the sessions (their hash tag, then `name`).
    fn k(&self, name: &str) -> String {
        self.store.grouped(Group::Sessions, name)
    }

    fn session_ttl_ms(&self) -> u64 {
        u64::try_from(self.session_ttl.as_millis())
            .unwrap_or(u64::MAX)
            .clamp(1, MAX_SESSION_TTL_MS)
    }
}

/// A session script, after the functions they share.
fn script(body: &str) -> std::sync::Arc<redis::Script> {
    std::sync::Arc::new(redis::Script::new(&format!("{SESSION_LIB}{body}")))
}

/// The session scripts: each one round trip, atomic.
#[derive(Clone)]
struct SessionScripts {
    create: std::sync::Arc<redis::Script>,
    get: std::sync::Arc<redis::Script>,
    remove: std::sync::Arc<redis::Script>,
    sweep: std::sync::Arc<redis::Script>,
}

/// How often an instance that counts sessions looks for the expired ones.
const SWEEP_EVERY: Duration = Duration::from_secs(30);

/// What the session scripts share: the clock, and forgetting a session with its place in
/// its holder's share. Keys: KEYS[2] the index of live ids by last use, KEYS[4] the holders by
/// how many they hold, KEYS[5] each session's holder; ARGV[7] the session keys' prefix,
/// ARGV[8] the holders' keys' prefix (`mcp:held:<holder>`: a holder's ids, never-used ones
/// scored far in the past so they go first), ARGV[9] the hash of each session's revision and
/// opening (`<version> <ms>`) when sessions are counted, else `''`: a session forgotten by
/// expiry or eviction (not by a `DELETE`, which its instance counts) is added to `ended`. The
/// holders' keys are named in the script: every session key carries the sessions' hash tag,
/// so on Redis Cluster they are in one slot.
const SESSION_LIB: &str = r"
if redis.replicate_commands then redis.replicate_commands() end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ended = {}
-- When sessions are counted, the openings and the index outlive the sessions by a minute, for
-- the sweep that finds them expired.
local OPENED_MARGIN = 60000
local function answer(first)
  local out = {first}
  for _, e in ipairs(ended) do out[#out + 1] = e end
  return out
end
local function forget(id, counted)
  if ARGV[9] and ARGV[9] ~= '' then
    local o = redis.call('HGET', ARGV[9], id)
    if o then
      redis.call('HDEL', ARGV[9], id)
      if counted then ended[#ended + 1] = o end
    end
  end
  local h = redis.call('HGET', KEYS[5], id)
  if h then
    redis.call('ZREM', ARGV[8] .. h, id)
    if tonumber(redis.call('ZINCRBY', KEYS[4], -1, h)) <= 0 then redis.call('ZREM', KEYS[4], h) end
    redis.call('HDEL', KEYS[5], id)
  end
  redis.call('ZREM', KEYS[2], id)
  return redis.call('DEL', ARGV[7] .. id)
end
local function evict_one_of(h)
  local victim = redis.call('ZRANGE', ARGV[8] .. h, 0, 0)[1]
  if victim then forget(victim, true) return true end
  return false
end
local function sweep(ttl)
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', '(' .. (now - ttl))) do
    forget(id, true)
  end
end
";

/// Creates a session: KEYS = session, index, the holder's ids, holders, session holders;
/// ARGV = state, idle milliseconds, cap, id, share, holder, session key prefix, holder key
/// prefix, the openings' hash (or `''`), this one's `<version> <ms>`. Idle sessions are
/// dropped first (with their places); a holder at its share loses its least recently used
/// session (never-used first); at the cap, the holder holding the most does. `'1'` when made,
/// `'0'` when no place could be made, then the sessions that ended (see [`SESSION_LIB`]).
const CREATE_SESSION: &str = r"
local ttl = tonumber(ARGV[2])
sweep(ttl)
if redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[5]) then evict_one_of(ARGV[6]) end
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[3]) then
  local big = redis.call('ZRANGE', KEYS[4], -1, -1)[1]
  if big then evict_one_of(big) end
end
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[3]) then return answer('0') end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ttl)
redis.call('ZADD', KEYS[2], now, ARGV[4])
-- Never used yet: scored before any use, so it is the first of its holder's to go.
redis.call('ZADD', KEYS[3], now - 1e13, ARGV[4])
redis.call('ZINCRBY', KEYS[4], 1, ARGV[6])
redis.call('HSET', KEYS[5], ARGV[4], ARGV[6])
for i = 2, 5 do redis.call('PEXPIRE', KEYS[i], ttl) end
if ARGV[9] ~= '' then
  redis.call('HSET', ARGV[9], ARGV[4], ARGV[10])
  redis.call('PEXPIRE', ARGV[9], ttl + OPENED_MARGIN)
  redis.call('PEXPIRE', KEYS[2], ttl + OPENED_MARGIN)
end
return answer('1')
";

/// Reads a session and starts its idle time again: KEYS = session, index, -, holders,
/// session holders; ARGV = idle milliseconds, id, -, -, -, -, session key prefix, holder key
/// prefix, the openings' hash (or `''`).
const GET_SESSION: &str = r"
local v = redis.call('GETEX', KEYS[1], 'PX', ARGV[1])
if v then
  redis.call('ZADD', KEYS[2], now, ARGV[2])
  if ARGV[9] ~= '' then
    redis.call('PEXPIRE', KEYS[2], ARGV[1] + OPENED_MARGIN)
    redis.call('PEXPIRE', ARGV[9], ARGV[1] + OPENED_MARGIN)
  else
    redis.call('PEXPIRE', KEYS[2], ARGV[1])
  end
  local h = redis.call('HGET', KEYS[5], ARGV[2])
  if h then
    redis.call('ZADD', ARGV[8] .. h, now, ARGV[2])
    redis.call('PEXPIRE', ARGV[8] .. h, ARGV[1])
  end
end
return v
";

/// Ends a session: KEYS = session, index, the session's stream list, holders, session
/// holders, the stream index; ARGV = session id, the stream keys' prefix, -, -, -, -, session
/// key prefix, holder key prefix. The copies of its resumable streams go with it (at most
/// `MAX_STREAMS_PER_SESSION`), rather than waiting for their expiry; a copy still being
/// written then stops. Returns how many session keys it deleted.
const REMOVE_SESSION: &str = r"
for _, stream in ipairs(redis.call('LRANGE', KEYS[3], 0, -1)) do
  redis.call('DEL', ARGV[2] .. stream)
  redis.call('ZREM', KEYS[6], stream)
end
redis.call('DEL', KEYS[3])
return forget(ARGV[1], false)
";

/// Drops the expired sessions: KEYS = index, index, index, holders, session holders; ARGV =
/// idle milliseconds, -, -, -, -, -, session key prefix, holder key prefix, the openings'
/// hash. The sessions that ended (see [`SESSION_LIB`]).
const SWEEP_SESSIONS: &str = r"
sweep(tonumber(ARGV[1]))
return ended
";

/// Sessions in Redis, so any instance behind a load balancer knows a session.
///
/// `mcp:session:<id>` (after the hash tag) holds the negotiated revision and expires after the idle time
/// ([`Limits::session_idle`], 1 hour), which every `get` starts again. `mcp:sessions`
/// indexes the live ids by last use, for the cap ([`Limits::sessions`], 10 000, counted
/// over every instance sharing the prefix). `mcp:held:<holder>` holds each holder's ids
/// (never-used ones first, then by last use), `mcp:holders` the holders by how many they
/// hold, `mcp:session-holders` each session's holder: past a holder's share its own first
/// session in that order ends, and at the cap the largest holder's does. Each operation is
/// one Lua script (one round trip), O(log n) plus the expired ids it drops. The scripts name
/// several keys, some built in the script: every key starts with the hash tag
/// `{<prefix>mcp:sessions}`, so that on Redis Cluster they are in one slot.
impl SessionStore for RedisSessions {
    fn create<'a>(
        &'a self,
        state: &'a str,
        holder: &'a str,
    ) -> BoxFuture<'a, Result<String, crate::RpcError>> {
        Box::pin(async move {
            let id = crate::ids::random_id();
            let opened = match self.telemetry {
                Some(_) => {
                    let parsed = super::session::SessionState::parse(state);
                    let at = super::session::SessionState::opened_ms_of(state)
                        .map_or_else(|| "-".to_owned(), |ms| ms.to_string());
                    format!("{} {at}", parsed.version)
                }
                None => String::new(),
            };
            let keys = [
                &self.k(&format!("mcp:session:{id}")),
                &self.k(SESSION_INDEX),
                &self.k(&format!("{HELD}{holder}")),
                &self.k(HOLDERS),
                &self.k(SESSION_HOLDERS),
            ];
            let own = [
                state.to_owned(),
                self.session_ttl_ms().to_string(),
                self.max_sessions.to_string(),
                id.clone(),
                self.share.to_string(),
                holder.to_owned(),
            ];
            let mut made: Vec<String> = self
                .run(&self.scripts.create, &keys, &own, Some(&opened))
                .await
                .map_err(session_err)?;
            let created = !made.is_empty() && made.remove(0) == "1";
            self.count(made);
            if created {
                Ok(id)
            } else {
                Err(super::session::too_many_sessions())
            }
        })
    }
    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<String>, crate::RpcError>> {
        Box::pin(async move {
            let keys = [
                &self.k(&format!("mcp:session:{id}")),
                &self.k(SESSION_INDEX),
                &self.k(SESSION_INDEX),
                &self.k(HOLDERS),
                &self.k(SESSION_HOLDERS),
            ];
            let own = [self.session_ttl_ms().to_string(), id.to_owned()];
            self.run::<Option<String>>(&self.scripts.get, &keys, &own, None)
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
                .arg(self.k(&format!("mcp:session:{id}")))
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
            let keys = [
                &self.k(&format!("mcp:session:{id}")),
                &self.k(SESSION_INDEX),
                &self.k(&format!("mcp:session:{id}:streams")),
                &self.k(HOLDERS),
                &self.k(SESSION_HOLDERS),
                &self.k(super::redis_streams::STREAM_INDEX),
            ];
            let own = [id.to_owned(), self.k("mcp:stream:")];
            let n: i64 = self
                .run(&self.scripts.remove, &keys, &own, None)
                .await
                .map_err(session_err)?;
            Ok(n > 0)
        })
    }
}

/// The sorted set of live session ids, scored by last use (Redis `TIME`, milliseconds).
const SESSION_INDEX: &str = "mcp:sessions";
/// The prefix of a holder's sorted set of session ids (never-used ones first, then by use).
const HELD: &str = "mcp:held:";
/// The sorted set of holders, scored by how many sessions each holds.
const HOLDERS: &str = "mcp:holders";
/// The hash of each live session's holder.
const SESSION_HOLDERS: &str = "mcp:session-holders";
/// The hash of each live session's revision and opening (`<version> <ms>`), kept when
/// sessions are counted ([`RedisSessions::counted`]).
const SESSION_OPENED: &str = "mcp:session-opened";

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
    use std::time::Duration;

    use super::RedisSessions;
    use crate::mcp::SessionStore;

    pub(crate) use crate::test_redis::Redis;

    impl Redis {
        fn sessions(&self, prefix: &str, max: usize, idle: Duration) -> RedisSessions {
            RedisSessions::new(self.store().with_prefix(prefix)).with_limits(max, idle)
        }
    }

    async fn ttl(store: &RedisSessions, key: &str) -> i64 {
        let mut con = store.store.connection();
        redis::cmd("TTL")
            .arg(store.k(key))
            .query_async(&mut con)
            .await
            .unwrap()
    }

    #[tokio::test]
    #[ignore = "needs redis-server; scripts/test.sh provides the peers and runs ignored tests"]
    async fn sessions_idle_ttl_is_restarted_by_every_get() {
        let redis = Redis::start();
        let store = redis.sessions("t:", 10, Duration::from_secs(100));
        let id = store.create("2025-06-18", "h").await.unwrap();
        let key = format!("mcp:session:{id}");
        assert!((99..=100).contains(&ttl(&store, &key).await));
        // Most of the idle time passes (shortened here), then a request comes.
        let mut con = store.store.connection();
        let _: i64 = redis::cmd("EXPIRE")
            .arg(store.k(&key))
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
    #[ignore = "needs redis-server; scripts/test.sh provides the peers and runs ignored tests"]
    async fn sessions_are_capped_and_expired_ones_free_their_place() {
        let redis = Redis::start();
        let store = redis.sessions("", 2, Duration::from_secs(1));
        let a = store.create("v", "h").await.unwrap();
        let b = store.create("v", "h").await.unwrap();
        // An ended session frees its place.
        assert!(store.remove(&a).await.unwrap());
        let c = store.create("v", "h").await.unwrap();
        // Expired ones too (idle time 1 s: scores are whole seconds of Redis time), with
        // their places in their holder's share.
        tokio::time::sleep(Duration::from_millis(2100)).await;
        store.create("v", "h").await.unwrap();
        store.create("v", "h").await.unwrap();
        for gone in [&b, &c] {
            assert_eq!(store.get(gone).await.unwrap(), None);
        }
        let mut con = store.store.connection();
        let held: i64 = redis::cmd("ZCARD")
            .arg(store.k("mcp:held:h"))
            .query_async(&mut con)
            .await
            .unwrap();
        assert_eq!(held, 2);
        // Another prefix is another set of sessions.
        let other = redis.sessions("other:", 2, Duration::from_secs(1));
        assert!(other.create("v", "h").await.is_ok());
    }

    #[tokio::test]
    #[ignore = "needs redis-server; scripts/test.sh provides the peers and runs ignored tests"]
    async fn a_flood_of_sessions_ends_only_the_flooders_own_across_instances() {
        let redis = Redis::start();
        // Two instances on one Redis: 4 sessions in all, 3 a holder.
        let a = redis
            .sessions("f:", 4, Duration::from_secs(60))
            .with_share(3);
        let b = redis
            .sessions("f:", 4, Duration::from_secs(60))
            .with_share(3);
        let mine = a.create("v", "user").await.unwrap();
        assert!(b.get(&mine).await.unwrap().is_some(), "in use");
        let mut flood = Vec::new();
        for i in 0..20 {
            let on = if i % 2 == 0 { &a } else { &b };
            flood.push(on.create("v", "flood").await.unwrap());
        }
        let mut alive = Vec::new();
        for id in &flood {
            if a.get(id).await.unwrap().is_some() {
                alive.push(id.clone());
            }
        }
        assert_eq!(alive.len(), 3, "the flooder holds its share");
        assert!(a.get(&mine).await.unwrap().is_some());
        // At the ceiling, a newcomer takes the place of one of the flooder's.
        let other = b.create("v", "other").await.unwrap();
        assert!(a.get(&other).await.unwrap().is_some());
        assert!(b.get(&mine).await.unwrap().is_some());
        let mut con = a.store.connection();
        let live: i64 = redis::cmd("ZCARD")
            .arg(a.k(super::SESSION_INDEX))
            .query_async(&mut con)
            .await
            .unwrap();
        assert_eq!(live, 4);
    }
}
