//! Redis backends of the cache and the locks, sharing one connection manager (MCP sessions
//! use it too: `mcp::redis_sessions`), on one Redis or a Redis Cluster.
//!
//! The cache fails open (a Redis error is a miss and the call runs uncached); the locks fail
//! closed (a Redis error fails the call). Locks are `SET key token NX PX ttl` and a Lua
//! compare-and-delete, so only the holder releases.
//!
//! On a cluster, the keys one script, transaction or pipeline touches must share a hash
//! slot: each structure whose scripts touch several keys (sessions with their event streams,
//! tasks, deliveries, the exchange of shares) has one hash tag ([`RedisStore::grouped`]), as
//! a job queue's keys share one in BullMQ; cache entries, locks and rate limits are single
//! keys and spread over the masters.

use std::time::Duration;

use bytes::Bytes;
use futures_util::future::BoxFuture;
use redis::aio::ConnectionManagerConfig;

use super::cache::{CacheStore, StoreError};
use super::lock::LockStore;
use super::redis_conn::Conn;

const RELEASE: &str = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

/// One GCRA decision (see `core::rate`) in one script, on Redis's own clock so that every
/// instance measures the same time: 0 lets the call through, else the microseconds to wait.
/// Times are microseconds since the epoch, exact in Lua's doubles (below 2^53).
const RATE: &str = r#"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1])
local tolerance = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1])) or now
if tat < now then tat = now end
local ahead = tat - now
if ahead > tolerance then return ahead - tolerance end
local due = tat + interval
redis.call('SET', KEYS[1], string.format('%.0f', due), 'PX', math.floor((due - now) / 1000) + 1)
return 0
"#;

/// A Redis connection for the cache, the locks and MCP sessions, to one Redis or a Redis
/// Cluster. Every command goes through a circuit breaker (`core::breaker`): a Redis that stops
/// answering is not waited on for each call.
#[derive(Clone)]
pub struct RedisStore {
    target: Target,
    con: super::breaker::Guarded,
    prefix: String,
    release: std::sync::Arc<redis::Script>,
    rate: std::sync::Arc<redis::Script>,
}

fn err(e: redis::RedisError) -> StoreError {
    StoreError {
        backend: "redis",
        message: e.to_string(),
    }
}

impl RedisStore {
    /// Whether Redis answers a `PING` (within the connection's timeouts): what readiness asks.
    /// On a cluster, every master is asked.
    pub(crate) async fn ping(&self) -> Result<(), StoreError> {
        self.con
            .clone()
            .on_every_master(redis::cmd("PING"))
            .await
            .map(drop)
            .map_err(err)
    }

    /// Connects lazily to `url`: startup succeeds while Redis is down, and commands reconnect
    /// when it is back.
    ///
    /// `redis://[user:password@]host:port[/db]` is one Redis;
    /// `redis+cluster://[user:password@]host:port[,host:port…]` is a Redis Cluster, given by
    /// seed nodes (any of its masters or replicas; the rest are found from them). Called
    /// within a Tokio runtime (the connection's task starts there).
    ///
    /// ```
    /// use mcp_runtime::core::RedisStore;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// assert!(RedisStore::connect("redis://127.0.0.1:6379").is_ok());
    /// assert!(RedisStore::connect("redis+cluster://10.0.0.1:7000,10.0.0.2:7000").is_ok());
    /// let bad = RedisStore::connect("redis+cluster://").err().unwrap();
    /// assert_eq!(
    ///     bad.to_string(),
    ///     "redis: a Redis Cluster URL names at least one seed node: redis+cluster://host:port[,host:port…]"
    /// );
    /// # }
    /// ```
    pub fn connect(url: &str) -> Result<Self, StoreError> {
        let (target, con) = match url.strip_prefix(CLUSTER_SCHEME) {
            Some(rest) => {
                let seeds = cluster_seeds(rest)?;
                let clients = seeds
                    .iter()
                    .map(|s| redis::Client::open(s.as_str()))
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(err)?;
                let cluster = redis::cluster::ClusterClient::builder(seeds)
                    .connection_timeout(TIMEOUT)
                    .response_timeout(TIMEOUT)
                    .retries(1)
                    .min_retry_wait(50)
                    .max_retry_wait(500)
                    .build()
                    .map_err(err)?;
                let con = cluster.get_pending_async_connection_with_config(
                    redis::cluster::ClusterConfig::new()
                        .set_connection_timeout(TIMEOUT)
                        .set_response_timeout(TIMEOUT),
                );
                (
                    Target::Cluster {
                        cluster: cluster.into(),
                        seeds: clients.into(),
                    },
                    Conn::Cluster(con),
                )
            }
            None => {
                let client = redis::Client::open(url).map_err(err)?;
                let config = ConnectionManagerConfig::new()
                    .set_connection_timeout(Some(TIMEOUT))
                    .set_response_timeout(Some(TIMEOUT))
                    .set_number_of_retries(1)
                    .set_max_delay(TIMEOUT);
                let con = client.get_connection_manager_lazy(config).map_err(err)?;
                (Target::One(client), Conn::Managed(con))
            }
        };
        Ok(Self {
            target,
            con: super::breaker::Guarded {
                con,
                breaker: std::sync::Arc::default(),
            },
            prefix: String::new(),
            release: std::sync::Arc::new(redis::Script::new(RELEASE)),
            rate: std::sync::Arc::new(redis::Script::new(RATE)),
        })
    }

    /// Prefixes every key (several apps on one Redis).
    pub fn with_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// A key under the prefix, for a structure of one key per operation (cache entries,
    /// locks, rate limits), which a cluster spreads by the key.
    pub(crate) fn key(&self, k: &str) -> String {
        format!("{}{k}", self.prefix)
    }

    /// A key of `group`, a structure whose scripts and transactions touch several of its
    /// keys at once (some named in the script from a prefix passed to it): every key of the
    /// group carries the hash tag `{<prefix>mcp:<group>}`, so that a cluster keeps them in
    /// one slot. A prefix that holds a hash tag of its own (`{shop}:`) puts every group in
    /// its slot instead.
    pub(crate) fn grouped(&self, group: Group, k: &str) -> String {
        format!("{{{}mcp:{}}}{k}", self.prefix, group.name())
    }

    /// The shared connection (a cheap handle), through the breaker.
    pub(crate) fn connection(&self) -> super::breaker::Guarded {
        self.con.clone()
    }

    /// A connection of one's own, whose answers may take up to `response` (a blocking read
    /// would hold up every command on the shared one, and outlast its timeout).
    pub(crate) async fn dedicated(&self, response: Duration) -> redis::RedisResult<Conn> {
        match &self.target {
            Target::One(client) => {
                let config = redis::AsyncConnectionConfig::new()
                    .set_connection_timeout(Some(TIMEOUT))
                    .set_response_timeout(Some(response));
                Ok(Conn::Plain(
                    client
                        .get_multiplexed_async_connection_with_config(&config)
                        .await?,
                ))
            }
            Target::Cluster { cluster, .. } => Ok(Conn::Cluster(
                cluster
                    .get_async_connection_with_config(
                        redis::cluster::ClusterConfig::new()
                            .set_connection_timeout(TIMEOUT)
                            .set_response_timeout(response),
                    )
                    .await?,
            )),
        }
    }

    /// A pub/sub connection. On a cluster it is to the first seed node that answers: a
    /// `PUBLISH` on any node reaches the subscribers of every node (the cluster bus carries
    /// it), so one node hears every channel.
    pub(crate) async fn pubsub(&self) -> redis::RedisResult<redis::aio::PubSub> {
        match &self.target {
            Target::One(client) => client.get_async_pubsub().await,
            Target::Cluster { seeds, .. } => {
                let mut last = None;
                for seed in seeds.iter() {
                    match seed.get_async_pubsub().await {
                        Ok(pubsub) => return Ok(pubsub),
                        Err(e) => last = Some(e),
                    }
                }
                Err(last.unwrap_or_else(|| {
                    redis::RedisError::from((redis::ErrorKind::Client, "no seed node"))
                }))
            }
        }
    }
}

/// The timeouts of connecting and of an answer on the shared connection.
const TIMEOUT: Duration = Duration::from_millis(500);

/// How a URL names a Redis Cluster.
const CLUSTER_SCHEME: &str = "redis+cluster://";

/// The seed nodes' URLs of a cluster URL's rest (`[user:password@]host:port[,host:port…]`),
/// each with the credentials.
fn cluster_seeds(rest: &str) -> Result<Vec<String>, StoreError> {
    let bad = |message: &str| StoreError {
        backend: "redis",
        message: message.to_owned(),
    };
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    let (auth, hosts) = match rest.rsplit_once('@') {
        Some((auth, hosts)) => (Some(auth), hosts),
        None => (None, rest),
    };
    if hosts.contains(['/', '?', '#']) {
        return Err(bad(
            "a Redis Cluster URL has no path or query (a cluster has one database): redis+cluster://host:port[,host:port…]",
        ));
    }
    let seeds: Vec<String> = hosts
        .split(',')
        .filter(|h| !h.is_empty())
        .map(|h| match auth {
            Some(auth) => format!("redis://{auth}@{h}"),
            None => format!("redis://{h}"),
        })
        .collect();
    if seeds.is_empty() {
        return Err(bad(
            "a Redis Cluster URL names at least one seed node: redis+cluster://host:port[,host:port…]",
        ));
    }
    Ok(seeds)
}

/// Where a store connects.
#[derive(Clone)]
enum Target {
    One(redis::Client),
    Cluster {
        cluster: std::sync::Arc<redis::cluster::ClusterClient>,
        /// Each seed node alone, for pub/sub.
        seeds: std::sync::Arc<[redis::Client]>,
    },
}

/// The structures whose keys share a hash slot (see [`RedisStore::grouped`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Group {
    /// MCP sessions, their holders and their resumable event streams (ending a session
    /// deletes its streams in the same script).
    Sessions,
    /// Task records, their heartbeats, answers and attempts, and their index.
    Tasks,
    /// Callback deliveries, their schedule, per-caller counts and dead letters.
    Deliveries,
    /// The per-instance counts of the shares exchange.
    Places,
}

impl Group {
    fn name(self) -> &'static str {
        match self {
            Group::Sessions => "sessions",
            Group::Tasks => "tasks",
            Group::Deliveries => "deliveries",
            Group::Places => "places",
        }
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

impl super::rate::RateStore for RedisStore {
    fn decide<'a>(
        &'a self,
        key: &'a str,
        interval: Duration,
        tolerance: Duration,
    ) -> BoxFuture<'a, Result<Option<Duration>, StoreError>> {
        Box::pin(async move {
            let mut con = self.con.clone();
            let micros = |d: Duration| u64::try_from(d.as_micros()).unwrap_or(u64::MAX).max(1);
            // EVALSHA; the script is loaded on the first NOSCRIPT only.
            let wait: u64 = self
                .rate
                .key(self.key(key))
                .arg(micros(interval))
                .arg(u64::try_from(tolerance.as_micros()).unwrap_or(u64::MAX))
                .invoke_async(&mut con)
                .await
                .map_err(err)?;
            Ok((wait > 0).then(|| Duration::from_micros(wait)))
        })
    }
}

/// The exchange of per-holder counts between instances (`core::shares`), once a second:
/// this instance's counts replace its hash `{<prefix>mcp:places}mcp:places:<instance>` (kept 5 s), its
/// name joins the sorted set `{<prefix>mcp:places}mcp:places` (by expiry), and the hashes of every other
/// live instance come back, in one script.
const SHARES: &str = r#"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
redis.call('PEXPIRE', KEYS[1], ttl)
local mine = KEYS[2] .. ARGV[1]
redis.call('DEL', mine)
local i = 3
while i <= #ARGV do
  local last = math.min(i + 999, #ARGV)
  redis.call('HSET', mine, unpack(ARGV, i, last))
  i = last + 1
end
redis.call('PEXPIRE', mine, ttl)
local out = {}
for _, other in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  if other ~= ARGV[1] then
    local h = redis.call('HGETALL', KEYS[2] .. other)
    for j = 1, #h do out[#out + 1] = h[j] end
  end
end
return out
"#;

/// How often, and for how long an instance's counts outlive it.
const SHARES_EVERY: Duration = Duration::from_secs(1);
const SHARES_TTL: Duration = Duration::from_secs(5);

/// The starter of the exchange of `shares` through `store` (see [`SHARES`]).
pub(crate) fn shares_exchange(
    store: RedisStore,
    shares: std::sync::Weak<super::shares::Shares>,
) -> super::shares::Starter {
    Box::new(move || {
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return false;
        };
        let (store, shares) = (store.clone(), shares.clone());
        rt.spawn(async move {
            let script = redis::Script::new(SHARES);
            let instance = crate::ids::random_id();
            let (set, prefix) = (
                store.grouped(Group::Places, "mcp:places"),
                store.grouped(Group::Places, "mcp:places:"),
            );
            let mut failing = false;
            loop {
                let Some(s) = shares.upgrade() else { return };
                let mut call = script.key(&set);
                call.key(&prefix)
                    .arg(&instance)
                    .arg(u64::try_from(SHARES_TTL.as_millis()).unwrap_or(5000));
                for (field, n) in s.snapshot() {
                    call.arg(field).arg(n);
                }
                let mut con = store.con.clone();
                match call.invoke_async::<Vec<String>>(&mut con).await {
                    Ok(flat) => {
                        failing = false;
                        let mut it = flat.into_iter();
                        let mut others = Vec::new();
                        while let (Some(field), Some(n)) = (it.next(), it.next()) {
                            others.push((field, n.parse().unwrap_or(0)));
                        }
                        s.replace(others);
                    }
                    Err(e) => {
                        if !failing {
                            tracing::warn!(error = %e, "cannot exchange shares with the other instances; each holds its own meanwhile");
                        }
                        failing = true;
                        // Stale counts would refuse callers who left long ago.
                        s.replace([]);
                    }
                }
                drop(s);
                tokio::time::sleep(SHARES_EVERY).await;
            }
        });
        true
    })
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

    fn run(&self, origin: std::sync::Arc<str>, hub: super::changes::Changes) {
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let (store, channel) = (self.store.clone(), self.channel.clone());
        rt.spawn(async move {
            use futures_util::StreamExt as _;
            loop {
                match store.pubsub().await {
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
                                    hub.deliver(change);
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

/// Tasks shared between instances: each task's view at `{<prefix>mcp:tasks}mcp:task:<id>` (a hash of
/// its JSON `view` and the `rev` that wrote it, kept for its TTL), `…:alive` while its
/// instance runs it (refreshed every 3 s, kept 10 s), the answers handed to it at
/// `…:answers`, and hand-over notices on the channel `<prefix>mcp:tasks`.
pub(crate) struct RedisTasks {
    store: RedisStore,
    channel: String,
    put: std::sync::Arc<redis::Script>,
}

/// Writes a task's view unless a later revision is stored, and indexes it (KEYS: view,
/// alive, index; ARGV: rev, JSON, keep ms, alive ms or 0, id, now ms). Writes are spawned and
/// can arrive out of order.
const PUT_TASK: &str = r"
local r = redis.call('HGET', KEYS[1], 'rev')
if r and tonumber(r) >= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'rev', ARGV[1], 'view', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
if ARGV[4] ~= '0' then redis.call('SET', KEYS[2], '1', 'PX', ARGV[4]) end
redis.call('ZADD', KEYS[3], ARGV[6] + ARGV[3], ARGV[5])
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', ARGV[6])
return 1
";

pub(crate) const ALIVE_MS: u64 = 10_000;

/// The index of every instance's tasks: ids scored by when their record expires (ms), kept by
/// [`PUT_TASK`] (which also drops the expired ones), read by [`all_tasks`].
const TASK_INDEX: &str = "mcp:tasks:index";

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The tasks of every instance as the store has them (expired ones left out), each with
/// whether an instance runs it now, oldest first: two round trips.
pub(crate) async fn all_tasks(
    store: &RedisStore,
) -> redis::RedisResult<Vec<(super::task::Stored, bool)>> {
    let mut con = store.con.clone();
    let ids: Vec<String> = redis::cmd("ZRANGEBYSCORE")
        .arg(store.grouped(Group::Tasks, TASK_INDEX))
        .arg(now_ms())
        .arg("+inf")
        .query_async(&mut con)
        .await?;
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let mut pipe = redis::pipe();
    for id in &ids {
        let key = task_key(store, id);
        pipe.cmd("HGET")
            .arg(&key)
            .arg("view")
            .cmd("EXISTS")
            .arg(format!("{key}:alive"));
    }
    let records: Vec<(Option<String>, bool)> = pipe.query_async(&mut con).await?;
    let mut tasks: Vec<_> = records
        .into_iter()
        .filter_map(|(view, alive)| Some((serde_json::from_str(&view?).ok()?, alive)))
        .collect();
    tasks.sort_by_key(|(t, _): &(super::task::Stored, bool)| t.created_ms);
    Ok(tasks)
}
const HEARTBEAT: Duration = Duration::from_secs(3);

/// The key of task `id`'s record (`…:alive`, `…:answers` and `…:attempt` beside it).
pub(crate) fn task_key(store: &RedisStore, id: &str) -> String {
    store.grouped(Group::Tasks, &format!("mcp:task:{id}"))
}

/// Task `id`'s stored view (`None`: none, or one that does not parse) and whether the
/// instance running it is alive, in one round trip; an error when Redis did not answer.
pub(crate) async fn task_record(
    store: &RedisStore,
    id: &str,
) -> redis::RedisResult<(Option<super::task::Stored>, bool)> {
    let key = task_key(store, id);
    let mut con = store.con.clone();
    let (view, alive): (Option<String>, bool) = redis::pipe()
        .cmd("HGET")
        .arg(&key)
        .arg("view")
        .cmd("EXISTS")
        .arg(format!("{key}:alive"))
        .query_async(&mut con)
        .await?;
    Ok((view.and_then(|v| serde_json::from_str(&v).ok()), alive))
}

impl RedisTasks {
    pub(crate) fn new(store: RedisStore) -> Self {
        let channel = store.key("mcp:tasks");
        let put = std::sync::Arc::new(redis::Script::new(PUT_TASK));
        Self {
            store,
            channel,
            put,
        }
    }

    fn key(&self, id: &str) -> String {
        task_key(&self.store, id)
    }

    async fn publish(&self, message: String) -> Result<(), crate::RpcError> {
        let mut con = self.store.con.clone();
        redis::cmd("PUBLISH")
            .arg(&self.channel)
            .arg(message)
            .query_async::<i64>(&mut con)
            .await
            .map(drop)
            .map_err(|e| {
                tracing::warn!(error = %e, "task hand-over not published to Redis");
                crate::RpcError::internal("the task store is unavailable")
            })
    }
}

/// Applies a hand-over notice (`a <id>`: answers, `c <id>`: cancel) to a task this instance
/// runs.
async fn hand_over(store: &RedisStore, tasks: &super::Tasks, notice: &str) {
    let Some((kind, id)) = notice.split_once(' ') else {
        return;
    };
    let Some(owner) = tasks.owner_of(id) else {
        return;
    };
    match kind {
        "c" => {
            let _ = tasks.cancel_here(&owner, id);
        }
        "a" => {
            let key = format!("{}:answers", task_key(store, id));
            let mut con = store.con.clone();
            let got: redis::RedisResult<(Vec<(String, String)>, i64)> = redis::pipe()
                .atomic()
                .cmd("HGETALL")
                .arg(&key)
                .cmd("DEL")
                .arg(&key)
                .query_async(&mut con)
                .await;
            if let Ok((pairs, _)) = got {
                let answers = pairs
                    .into_iter()
                    .filter_map(|(k, v)| Some((k, serde_json::from_str(&v).ok()?)))
                    .collect();
                let _ = tasks.answer_here(&owner, id, answers);
            }
        }
        _ => {}
    }
}

impl super::tasks::TaskMirror for RedisTasks {
    fn put(&self, task: super::task::Stored, rev: u64, keep: Duration) -> BoxFuture<'static, bool> {
        let Ok(json) = serde_json::to_string(&task) else {
            return Box::pin(std::future::ready(false));
        };
        // Alive while an instance runs it: not a task queued for a worker.
        let running = !task.handed && !task.ended();
        let key = self.key(&task.id);
        let index = self.store.grouped(Group::Tasks, TASK_INDEX);
        let (mut con, script) = (self.store.con.clone(), self.put.clone());
        let keep_ms = u64::try_from(keep.as_millis()).unwrap_or(u64::MAX).max(1);
        Box::pin(async move {
            let done: redis::RedisResult<i64> = script
                .key(&key)
                .key(format!("{key}:alive"))
                .key(index)
                .arg(rev)
                .arg(json)
                .arg(keep_ms)
                // Alive from its first write, not only from the next heartbeat.
                .arg(if running { ALIVE_MS } else { 0 })
                .arg(&task.id)
                .arg(now_ms())
                .invoke_async(&mut con)
                .await;
            if let Err(e) = &done {
                tracing::warn!(error = %e, "task not stored in Redis");
            }
            done.is_ok()
        })
    }

    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Option<(super::task::Stored, bool)>> {
        Box::pin(async move {
            let (task, alive) = task_record(&self.store, id).await.ok()?;
            Some((task?, alive))
        })
    }

    fn answer<'a>(
        &'a self,
        id: &'a str,
        answers: serde_json::Map<String, serde_json::Value>,
    ) -> BoxFuture<'a, Result<(), crate::RpcError>> {
        Box::pin(async move {
            if answers.is_empty() {
                return Ok(());
            }
            let key = format!("{}:answers", self.key(id));
            let mut con = self.store.con.clone();
            let mut pipe = redis::pipe();
            pipe.atomic();
            for (k, v) in &answers {
                pipe.cmd("HSET").arg(&key).arg(k).arg(v.to_string());
            }
            pipe.cmd("PEXPIRE").arg(&key).arg(3_600_000u64);
            pipe.query_async::<()>(&mut con).await.map_err(|e| {
                tracing::warn!(error = %e, "task answers not stored in Redis");
                crate::RpcError::internal("the task store is unavailable")
            })?;
            self.publish(format!("a {id}")).await
        })
    }

    fn cancel<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), crate::RpcError>> {
        Box::pin(self.publish(format!("c {id}")))
    }

    fn run(&self, tasks: super::Tasks) {
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        // The heartbeat of the tasks this instance runs.
        let (store, beat) = (self.store.clone(), tasks.clone());
        rt.spawn(async move {
            loop {
                tokio::time::sleep(HEARTBEAT).await;
                let ids = beat.running_ids();
                if ids.is_empty() {
                    continue;
                }
                let mut pipe = redis::pipe();
                for id in ids {
                    let alive = format!("{}:alive", task_key(&store, &id));
                    pipe.cmd("SET").arg(alive).arg(1).arg("PX").arg(ALIVE_MS);
                }
                let mut con = store.con.clone();
                let _: redis::RedisResult<()> = pipe.query_async(&mut con).await;
            }
        });
        // Answers and cancellations handed over by other instances.
        let (store, channel) = (self.store.clone(), self.channel.clone());
        rt.spawn(async move {
            use futures_util::StreamExt as _;
            loop {
                match store.pubsub().await {
                    Ok(mut pubsub) => {
                        if pubsub.subscribe(&channel).await.is_ok() {
                            // Answers stored while this instance was not subscribed (at
                            // startup, or while Redis was away) are taken now.
                            for id in tasks.running_ids() {
                                hand_over(&store, &tasks, &format!("a {id}")).await;
                            }
                            let mut messages = pubsub.on_message();
                            while let Some(msg) = messages.next().await {
                                if let Ok(notice) = msg.get_payload::<String>() {
                                    hand_over(&store, &tasks, &notice).await;
                                }
                            }
                        }
                    }
                    Err(e) => tracing::warn!(error = %e, "cannot reach Redis for task hand-overs"),
                }
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::RedisTasks;
    use crate::core::task::Stored;
    use crate::core::tasks::{FINAL_REV, TaskMirror as _};
    use crate::mcp::redis_sessions::tests::Redis;

    fn stored(id: &str, status: &str) -> Stored {
        Stored {
            id: id.into(),
            owner: String::new(),
            status: status.into(),
            status_message: None,
            created_ms: 1,
            updated_ms: 1,
            ttl_ms: 60_000,
            poll_ms: 500,
            input_requests: serde_json::Map::new(),
            result: None,
            error: None,
            durable: false,
            handed: false,
            given: serde_json::Map::new(),
        }
    }

    /// Puts `task`: its write says whether it was stored (applied, or dropped as older than the
    /// stored revision).
    async fn put_settled(tasks: &RedisTasks, task: Stored, rev: u64) {
        assert!(
            tasks.put(task, rev, Duration::from_secs(60)).await,
            "the write settled"
        );
    }

    #[test]
    fn a_cluster_url_gives_each_seed_node_the_credentials() {
        assert_eq!(
            super::cluster_seeds("u:p%40ss@10.0.0.1:7000,10.0.0.2:7001/").unwrap(),
            [
                "redis://u:p%40ss@10.0.0.1:7000",
                "redis://u:p%40ss@10.0.0.2:7001"
            ]
        );
        assert_eq!(super::cluster_seeds("h:7000").unwrap(), ["redis://h:7000"]);
        for bad in ["", ",", "h:7000/1", "h:7000?db=1"] {
            let e = super::cluster_seeds(bad).unwrap_err();
            assert!(e.message.starts_with("a Redis Cluster URL"), "{bad}: {e}");
        }
        assert!(super::RedisStore::connect("redis+cluster://h:notaport").is_err());
    }

    #[tokio::test]
    async fn the_keys_of_one_group_share_a_hash_tag_under_the_prefix() {
        use super::Group;
        let store = super::RedisStore::connect("redis://127.0.0.1:1")
            .unwrap()
            .with_prefix("shop:");
        assert_eq!(
            store.grouped(Group::Tasks, "mcp:task:a:alive"),
            "{shop:mcp:tasks}mcp:task:a:alive"
        );
        assert_eq!(
            store.grouped(Group::Sessions, "mcp:held:h"),
            "{shop:mcp:sessions}mcp:held:h"
        );
        assert_eq!(store.key("cache:k"), "shop:cache:k");
    }

    #[tokio::test]
    #[ignore = "needs redis-server; scripts/test.sh provides the peers and runs ignored tests"]
    async fn a_task_write_that_arrives_late_never_replaces_a_newer_one() {
        let redis = Redis::start();
        let tasks = RedisTasks::new(redis.store().with_prefix("t:"));
        put_settled(&tasks, stored("a", "completed"), 2).await;
        // The `working` write of revision 1 arrives after the `completed` of revision 2.
        put_settled(&tasks, stored("a", "working"), 1).await;
        let (task, alive) = tasks.get("a").await.expect("stored");
        assert_eq!((task.status.as_str(), alive), ("completed", false));
        // A newer revision replaces it; a view marked final (another instance saw the
        // running one stop) is never replaced.
        put_settled(&tasks, stored("b", "working"), 3).await;
        let (task, alive) = tasks.get("b").await.expect("stored");
        assert_eq!((task.status.as_str(), alive), ("working", true));
        put_settled(&tasks, stored("b", "failed"), FINAL_REV).await;
        put_settled(&tasks, stored("b", "completed"), 4).await;
        let (task, _) = tasks.get("b").await.expect("stored");
        assert_eq!(task.status, "failed");
    }
}
