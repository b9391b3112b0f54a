//! Webhook deliveries that survive their instance (with Redis): an asynchronous call's answer is
//! stored before its task ends, tried at once, then again with exponential backoff and jitter
//! (from [`crate::Limits::callback_first_retry`], doubling up to an hour between tries) until
//! [`crate::Limits::callback_horizon`] has passed since the first try; then it is moved to a
//! dead-letter stream, from which an operator retries it (`catalog tasks retry ID`).
//!
//! Why a sorted set and not a stream like the work queue: a delivery waits between its tries,
//! for seconds and then hours, and a stream has no delay. A sorted set scored by the time of
//! the next try is the delay queue Redis offers (Sidekiq's `retry` set is one). Each entry is
//! leased: an instance claims the due ones by moving their score a lease ahead, in one script,
//! so one instance tries each; the lease of an instance that stopped mid-try runs out and
//! another one tries again. At least once, as the rest of the queue: a receiver dedupes by
//! `webhook-id`, the same on every try.
//!
//! Keys (each after the hash tag `{<prefix>mcp:deliveries}`, one slot on Redis Cluster):
//! `mcp:deliveries` (the set: ids scored by the next try, in ms),
//! `mcp:delivery:<id>` (each delivery, JSON, kept past its horizon), and the stream
//! `mcp:deliveries:dead` (fields `id`, `delivery`, `reason`), capped at
//! [`crate::Limits::callbacks_dead`] entries.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use super::webhook::CallbackClient;
use crate::core::redis::RedisStore;
use crate::core::telemetry::Telemetry;
use crate::error::RpcError;

/// How long a claimed delivery is one instance's before another may try it: longer than a
/// try (its timeout is 10 s).
const LEASE: Duration = Duration::from_secs(60);
/// How often an instance looks for due deliveries.
const POLL: Duration = Duration::from_secs(1);
/// The longest wait between two tries.
const MAX_WAIT: Duration = Duration::from_secs(3600);
/// How many due deliveries one look claims.
const BATCH: usize = 16;

/// Stores a delivery and leases it to the caller (it tries at once), unless the set is full,
/// and counts it to its holders (its host, its caller). KEYS: the set, the delivery's key, the
/// counts. ARGV: the delivery, its lease's end, the most deliveries pending, how long the
/// record is kept (ms), its id, then its holders' fields.
const ACCEPT: &str = r#"
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[4])
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[5])
for i = 6, #ARGV do redis.call('HINCRBY', KEYS[3], ARGV[i], 1) end
return 1
"#;

/// Ends a delivery (delivered, or given up): its record and its place in the set go, and its
/// holders count one less. KEYS: the set, the delivery's key, the counts. ARGV: its id, then
/// its holders' fields.
const END: &str = r#"
if redis.call('ZREM', KEYS[1], ARGV[1]) == 1 then
  for i = 2, #ARGV do
    if redis.call('HINCRBY', KEYS[3], ARGV[i], -1) <= 0 then redis.call('HDEL', KEYS[3], ARGV[i]) end
  end
end
redis.call('DEL', KEYS[2])
return 1
"#;

/// Claims up to ARGV[3] deliveries due at ARGV[1] by moving them to ARGV[2]. KEYS: the set.
const CLAIM: &str = r#"
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
for _, id in ipairs(due) do redis.call('ZADD', KEYS[1], ARGV[2], id) end
return due
"#;

/// One delivery: what is POSTed where, and how its tries went.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct Pending {
    /// `msg_` and 128 random bits: the `webhook-id` of every try.
    pub id: String,
    pub url: String,
    /// The asynchronous call's method.
    pub method: String,
    /// The callback's host (lowercase), which its count is kept under.
    pub host: String,
    /// Whose call it answers (the caller's key), which its count is kept under too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caller: Option<String>,
    /// The request's trace headers, passed on.
    pub headers: Vec<(String, String)>,
    /// The JSON-RPC answer.
    pub body: String,
    /// The tries made.
    pub tries: u32,
    /// When it was accepted (ms since the epoch): its horizon counts from there.
    pub first_ms: u64,
    /// Why the last try failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A webhook delivery given up on, as [`crate::Server::dead_deliveries`] lists it (with Redis).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct DeadDelivery {
    /// Its `webhook-id`: what `catalog tasks retry` takes.
    pub id: String,
    /// The callback URL.
    pub url: String,
    /// The asynchronous call's method.
    pub method: String,
    /// The tries made.
    pub tries: u32,
    /// Why it was given up.
    pub reason: String,
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

impl Pending {
    /// A new delivery of `body` to `url`.
    pub(crate) fn new(
        url: &str,
        host: &str,
        caller: Option<String>,
        method: &str,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    ) -> Self {
        Pending {
            id: format!("msg_{}", crate::ids::random_id()),
            url: url.to_owned(),
            host: host.to_owned(),
            caller,
            method: method.to_owned(),
            headers,
            // A JSON-RPC answer the server wrote: UTF-8.
            body: String::from_utf8_lossy(&body).into_owned(),
            tries: 0,
            first_ms: now_ms(),
            error: None,
        }
    }
}

impl Pending {
    /// The fields it is counted under: its host, and its caller when known.
    fn holders(&self) -> Vec<String> {
        let mut fields = vec![format!("host:{}", self.host)];
        fields.extend(self.caller.as_ref().map(|c| format!("caller:{c}")));
        fields
    }
}

/// The durable deliveries of a server with Redis and webhooks.
pub(crate) struct Deliveries {
    store: RedisStore,
    client: Arc<dyn CallbackClient>,
    telemetry: Telemetry,
    first_wait: Duration,
    horizon: Duration,
    max_pending: usize,
    max_dead: usize,
    per_host: usize,
    per_caller: usize,
    set: String,
    counts: String,
    dead_stream: String,
    accept: redis::Script,
    claim: redis::Script,
    end: redis::Script,
}

impl std::fmt::Debug for Deliveries {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Deliveries")
            .field("horizon", &self.horizon)
            .finish_non_exhaustive()
    }
}

/// How a try ended.
enum Tried {
    Delivered(u16),
    /// Not delivered: the outcome's label (`refused`: answered, not 2xx; `failed`: not sent),
    /// and the status answered or why it could not be sent.
    Failed(&'static str, String),
}

impl Deliveries {
    /// Deliveries through `client`, kept in `store`, bounded by `limits`.
    pub(crate) fn new(
        store: RedisStore,
        client: Arc<dyn CallbackClient>,
        telemetry: Telemetry,
        limits: &crate::Limits,
    ) -> Self {
        Deliveries {
            set: store.grouped(crate::core::redis::Group::Deliveries, "mcp:deliveries"),
            counts: store.grouped(
                crate::core::redis::Group::Deliveries,
                "mcp:deliveries:counts",
            ),
            dead_stream: store
                .grouped(crate::core::redis::Group::Deliveries, "mcp:deliveries:dead"),
            store,
            client,
            telemetry,
            first_wait: limits.callback_first_retry.max(Duration::from_millis(1)),
            horizon: limits.callback_horizon,
            max_pending: limits.callbacks_pending.max(1),
            max_dead: limits.callbacks_dead.max(1),
            per_host: limits.callbacks_per_host.max(1),
            per_caller: limits
                .callbacks_pending_per_caller
                .clamp(1, limits.callbacks_pending.max(1)),
            accept: redis::Script::new(ACCEPT),
            claim: redis::Script::new(CLAIM),
            end: redis::Script::new(END),
        }
    }

    fn key(&self, id: &str) -> String {
        self.store.grouped(
            crate::core::redis::Group::Deliveries,
            &format!("mcp:delivery:{id}"),
        )
    }

    /// How long a delivery's record is kept: past its last try, and a lease more.
    fn keep(&self) -> Duration {
        self.horizon.saturating_add(MAX_WAIT).saturating_add(LEASE)
    }

    /// Looks for due deliveries every second, on the current runtime, as long as this
    /// instance runs work.
    pub(crate) fn run(self: &Arc<Self>) {
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let me = Arc::downgrade(self);
        rt.spawn(async move {
            loop {
                tokio::time::sleep(POLL).await;
                let Some(d) = me.upgrade() else { return };
                d.look().await;
            }
        });
    }

    /// Stores `p`, leased to this instance, which tries it at once ([`Self::attempt`]); a try
    /// that fails is made again later by any instance. `Err` when it could not be stored
    /// (Redis unavailable, or the most deliveries pending): the caller delivers it as a server
    /// without Redis does.
    pub(crate) async fn accept(&self, p: &Pending) -> Result<(), RpcError> {
        let json = serde_json::to_string(p).map_err(|e| RpcError::internal(e.to_string()))?;
        let mut con = self.store.connection();
        let stored: i64 = self
            .accept
            .key(&self.set)
            .key(self.key(&p.id))
            .key(&self.counts)
            .arg(json)
            .arg(now_ms().saturating_add(ms(LEASE)))
            .arg(self.max_pending)
            .arg(ms(self.keep()))
            .arg(&p.id)
            .arg(p.holders())
            .invoke_async(&mut con)
            .await
            .map_err(|e| RpcError::internal(format!("delivery not stored: {e}")))?;
        if stored == 0 {
            return Err(RpcError::internal(format!(
                "delivery not stored: {} deliveries are pending",
                self.max_pending
            )));
        }
        Ok(())
    }

    /// Tries `p` (leased to this instance) once, and keeps what came of it.
    pub(crate) async fn attempt(&self, mut p: Pending) {
        let tried = self.try_once(&p).await;
        p.tries += 1;
        let mut con = self.store.connection();
        let kept: redis::RedisResult<()> = match tried {
            Tried::Delivered(status) => {
                self.telemetry.webhook("delivered");
                tracing::debug!(
                    id = p.id,
                    method = p.method,
                    status,
                    tries = p.tries,
                    "callback delivered"
                );
                self.ended(&mut con, &p).await
            }
            Tried::Failed(outcome, why) => {
                let wait = self.wait(&p);
                let give_up =
                    now_ms().saturating_add(ms(wait)) > p.first_ms.saturating_add(ms(self.horizon));
                p.error = Some(why.clone());
                if give_up {
                    self.telemetry.webhook("dead");
                    tracing::warn!(id = p.id, method = p.method, tries = p.tries, error = %why, "callback given up: moved to the dead letters");
                    let json = serde_json::to_string(&p).unwrap_or_default();
                    let buried: redis::RedisResult<String> = redis::cmd("XADD")
                        .arg(&self.dead_stream)
                        .arg("MAXLEN")
                        .arg("~")
                        .arg(self.max_dead)
                        .arg("*")
                        .arg("id")
                        .arg(&p.id)
                        .arg("delivery")
                        .arg(json)
                        .arg("reason")
                        .arg(&why)
                        .query_async(&mut con)
                        .await;
                    // Not ended unless it is in the dead letters: else tried again.
                    match buried {
                        Ok(_) => self.ended(&mut con, &p).await,
                        Err(e) => Err(e),
                    }
                } else {
                    self.telemetry.webhook(outcome);
                    tracing::debug!(id = p.id, method = p.method, tries = p.tries, error = %why, wait_ms = ms(wait), "callback not delivered: tried again later");
                    self.schedule(&p, now_ms().saturating_add(ms(wait)))
                        .query_async(&mut con)
                        .await
                }
            }
        };
        if let Err(e) = kept {
            // The lease runs out and the delivery is tried again: at least once.
            tracing::warn!(id = p.id, error = %e, "a delivery's try could not be recorded");
        }
    }

    /// Ends `p` (delivered, or in the dead letters).
    async fn ended(
        &self,
        con: &mut crate::core::breaker::Guarded,
        p: &Pending,
    ) -> redis::RedisResult<()> {
        self.end
            .key(&self.set)
            .key(self.key(&p.id))
            .key(&self.counts)
            .arg(&p.id)
            .arg(p.holders())
            .invoke_async::<i64>(con)
            .await
            .map(drop)
    }

    /// The most deliveries pending to one host ([`crate::Limits::callbacks_per_host`]).
    pub(crate) fn per_host(&self) -> usize {
        self.per_host
    }

    /// The most deliveries of one caller pending
    /// ([`crate::Limits::callbacks_pending_per_caller`]).
    pub(crate) fn per_caller(&self) -> usize {
        self.per_caller
    }

    /// How many deliveries are pending to `host` and of `caller` (when known), on every
    /// instance: one read.
    pub(crate) async fn pending(
        &self,
        host: &str,
        caller: Option<&str>,
    ) -> Result<(usize, usize), RpcError> {
        let mut con = self.store.connection();
        let counts: Vec<Option<usize>> = redis::cmd("HMGET")
            .arg(&self.counts)
            .arg(format!("host:{host}"))
            .arg(format!("caller:{}", caller.unwrap_or_default()))
            .query_async(&mut con)
            .await
            .map_err(|e| RpcError::internal(format!("Redis: {e}")))?;
        let at = |i: usize| counts.get(i).copied().flatten().unwrap_or(0);
        Ok((at(0), if caller.is_some() { at(1) } else { 0 }))
    }

    /// The wait after `p`'s last try (see [`wait`]).
    fn wait(&self, p: &Pending) -> Duration {
        wait(self.first_wait, p.tries, &p.id)
    }

    async fn try_once(&self, p: &Pending) -> Tried {
        let span = super::webhook::delivery_span(&p.url, &p.method);
        let header = |name: &str| {
            p.headers
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.as_str())
        };
        let started_by = header("traceparent")
            .and_then(|t| crate::context::TraceParent::new(t, header("tracestate")));
        crate::core::telemetry::set_parent(&span, started_by.as_ref());
        let sent_as = crate::core::telemetry::context_of(&span);
        let headers = super::webhook::outgoing(&p.headers, sent_as.as_ref());
        let posted = {
            use tracing::Instrument as _;
            self.client
                .post_once(&p.url, &headers, p.body.clone().into_bytes(), &p.id)
                .instrument(span.clone())
                .await
        };
        match posted {
            Ok(status) if (200..300).contains(&status) => {
                span.record("http.response.status_code", status);
                Tried::Delivered(status)
            }
            Ok(status) => {
                span.record("http.response.status_code", status);
                span.record("error.type", status.to_string().as_str());
                span.record("otel.status_code", "ERROR");
                Tried::Failed("refused", format!("answered HTTP {status}"))
            }
            Err(why) => {
                span.record("error.type", "delivery_failed");
                span.record("otel.status_code", "ERROR");
                Tried::Failed("failed", why)
            }
        }
    }

    /// Claims the due deliveries and tries each.
    async fn look(&self) {
        let now = now_ms();
        let mut con = self.store.connection();
        let due: redis::RedisResult<Vec<String>> = self
            .claim
            .key(&self.set)
            .arg(now)
            .arg(now.saturating_add(ms(LEASE)))
            .arg(BATCH)
            .invoke_async(&mut con)
            .await;
        let Ok(due) = due else { return };
        // Tried side by side: one host that times out does not hold up the others.
        futures_util::future::join_all(due.into_iter().map(|id| async move {
            let mut con = self.store.connection();
            let json: redis::RedisResult<Option<String>> = redis::cmd("GET")
                .arg(self.key(&id))
                .query_async(&mut con)
                .await;
            match json {
                Ok(Some(json)) => match serde_json::from_str::<Pending>(&json) {
                    Ok(p) => self.attempt(p).await,
                    Err(_) => forget(&mut con, &self.set, &id).await,
                },
                // Its record is gone (expired): nothing to deliver.
                Ok(None) => forget(&mut con, &self.set, &id).await,
                // Its lease runs out: looked at again then.
                Err(_) => {}
            }
        }))
        .await;
    }

    /// Stores `p` and makes it due at `at_ms`: a pipeline to run (more may be added to it).
    fn schedule(&self, p: &Pending, at_ms: u64) -> redis::Pipeline {
        let mut pipe = redis::pipe();
        pipe.atomic()
            .cmd("SET")
            .arg(self.key(&p.id))
            .arg(serde_json::to_string(p).unwrap_or_default())
            .arg("PX")
            .arg(ms(self.keep()))
            .ignore()
            .zadd(&self.set, &p.id, at_ms)
            .ignore();
        pipe
    }

    /// The dead letters, oldest first: each entry's id, its delivery and why it was given up.
    async fn dead_letters(&self) -> Result<Vec<(String, Pending, String)>, RpcError> {
        let mut con = self.store.connection();
        let reply: redis::streams::StreamRangeReply = redis::cmd("XRANGE")
            .arg(&self.dead_stream)
            .arg("-")
            .arg("+")
            .query_async(&mut con)
            .await
            .map_err(|e| RpcError::internal(format!("Redis: {e}")))?;
        Ok(reply
            .ids
            .into_iter()
            .filter_map(|e| {
                let p: Pending = serde_json::from_str(&e.get::<String>("delivery")?).ok()?;
                let reason = e.get::<String>("reason").unwrap_or_default();
                Some((e.id, p, reason))
            })
            .collect())
    }

    /// The deliveries given up on, oldest first.
    pub(crate) async fn dead(&self) -> Result<Vec<DeadDelivery>, RpcError> {
        Ok(self
            .dead_letters()
            .await?
            .into_iter()
            .map(|(_, p, reason)| DeadDelivery {
                id: p.id,
                url: p.url,
                method: p.method,
                tries: p.tries,
                reason,
            })
            .collect())
    }

    /// Takes dead delivery `id` back: tried at once (by an instance that runs work), with a
    /// new horizon. `Ok(false)` when there is no such dead delivery.
    pub(crate) async fn retry(&self, id: &str) -> Result<bool, RpcError> {
        let Some((entry, mut p, _)) = self
            .dead_letters()
            .await?
            .into_iter()
            .find(|(_, p, _)| p.id == id)
        else {
            return Ok(false);
        };
        p.tries = 0;
        p.first_ms = now_ms();
        p.error = None;
        let mut con = self.store.connection();
        let mut pipe = self.schedule(&p, now_ms());
        for field in p.holders() {
            pipe.cmd("HINCRBY")
                .arg(&self.counts)
                .arg(field)
                .arg(1)
                .ignore();
        }
        pipe.cmd("XDEL")
            .arg(&self.dead_stream)
            .arg(&entry)
            .ignore()
            .query_async::<()>(&mut con)
            .await
            .map_err(|e| RpcError::internal(format!("Redis: {e}")))?;
        Ok(true)
    }
}

/// The wait after try `tries` of delivery `id`: `first` doubled per try, at most an hour,
/// within a quarter either way (so that the deliveries to a host that was down do not all come
/// back at once).
fn wait(first: Duration, tries: u32, id: &str) -> Duration {
    let doubled = first
        .saturating_mul(1u32 << tries.saturating_sub(1).min(20))
        .min(MAX_WAIT);
    let spread = {
        use std::hash::{BuildHasher as _, Hasher as _};
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write(id.as_bytes());
        h.write_u32(tries);
        h.finish() % 1001
    };
    // 0.75 to 1.25 of the doubled wait.
    doubled.mul_f64(0.75 + spread as f64 / 2000.0)
}

/// Takes `id` out of the set (its record is gone or unreadable); an error leaves it for the
/// next look.
async fn forget(con: &mut crate::core::breaker::Guarded, set: &str, id: &str) {
    let _: redis::RedisResult<i64> = redis::cmd("ZREM").arg(set).arg(id).query_async(con).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wait_doubles_to_an_hour_within_a_quarter() {
        let first = Duration::from_secs(1);
        for (tries, nominal) in [
            (1, 1.0),
            (2, 2.0),
            (3, 4.0),
            (12, 2048.0),
            (13, 3600.0),
            (99, 3600.0),
        ] {
            for _ in 0..50 {
                let w = wait(first, tries, "msg_x").as_secs_f64();
                assert!(
                    (nominal * 0.75..=nominal * 1.25).contains(&w),
                    "try {tries}: {w} s"
                );
            }
        }
    }
}
