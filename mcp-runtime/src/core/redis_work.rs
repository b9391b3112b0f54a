//! The work queue on a Redis Stream and its consumer group, Redis's own primitives for it:
//! a task's work is `XADD`ed to `mcp:work` (under the tasks' hash tag) once its record is
//! stored and before it is answered; every instance reads the stream as a consumer of the group
//! `workers` (`XREADGROUP`), and claims the entries left idle in any consumer's pending list
//! past the visibility timeout (`XAUTOCLAIM`); the instance whose task ends acknowledges and
//! deletes its entry (`XACK`, `XDEL`).
//!
//! The queue is bounded as everything a client can fill: at most
//! [`crate::Limits::tasks_queued`] entries, and [`crate::Limits::tasks_queued_per_caller`] of
//! one caller, counted in the hash `mcp:work:held` (caller → entries) by the script that adds an
//! entry and the one that deletes it (the count goes down only when `XDEL` deleted one, so an
//! entry forgotten twice counts once). A front, which keeps none of the tasks it hands on, is
//! bounded so too.
//!
//! The accepting instance runs the task's call itself (it has started already, and answering
//! it costs nothing more); an entry delivered to any worker is only looked at: while the
//! task's heartbeat (`mcp:task:<id>:alive`) is there its instance runs it, and the entry stays
//! pending, to be claimed and looked at again one timeout later. When the heartbeat has lapsed
//! and the task has not ended, its instance stopped: the worker that holds the entry runs the
//! call again (at least once: the new run starts from the beginning, `ctx.attempt()` says which
//! it is).

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use futures_util::future::BoxFuture;

use super::redis::RedisStore;
use super::tasks::{Runner, Work, WorkQueue};
use crate::error::RpcError;

/// The consumer group every instance reads the queue in.
const GROUP: &str = "workers";
/// How long an entry stays with one worker before another may look at it: the heartbeat's
/// lapse (a task's `alive` key outlives its last beat by this much).
const VISIBILITY: Duration = Duration::from_millis(super::redis::ALIVE_MS);
/// How long one read waits for new entries.
const BLOCK_MS: u64 = 2_000;
/// Entries taken per read.
const BATCH: usize = 16;
/// An entry whose task was never stored (its accepting instance failed between the two
/// writes) is dropped this long after it was added.
const ORPHAN: Duration = Duration::from_secs(3_600);

/// Adds an entry within the bounds (KEYS: the stream, the counts per caller; ARGV: the most
/// entries, the most of one caller, the caller, the work): its id, or `full` / `share`.
const ENQUEUE: &str = r"
if redis.call('XLEN', KEYS[1]) >= tonumber(ARGV[1]) then return 'full' end
if tonumber(redis.call('HGET', KEYS[2], ARGV[3]) or '0') >= tonumber(ARGV[2]) then
  return 'share'
end
local id = redis.call('XADD', KEYS[1], '*', 'work', ARGV[4])
redis.call('HINCRBY', KEYS[2], ARGV[3], 1)
return id
";

/// Acknowledges and deletes an entry (KEYS: the stream, the counts; ARGV: the group, the entry,
/// its caller); the caller's count goes down only when the entry was there to delete.
const FORGET: &str = r"
redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
if redis.call('XDEL', KEYS[1], ARGV[2]) == 1 then
  if redis.call('HINCRBY', KEYS[2], ARGV[3], -1) <= 0 then redis.call('HDEL', KEYS[2], ARGV[3]) end
end
return 1
";

/// The queue of one store (see the module's documentation).
pub(crate) struct RedisWork {
    keys: Keys,
    /// This instance's name in the group.
    consumer: String,
    /// Where the queue's lag is measured (`mcp_runtime.queue.lag`).
    telemetry: super::telemetry::Telemetry,
    /// [`crate::Limits::tasks_queued`] and [`crate::Limits::tasks_queued_per_caller`].
    bounds: (usize, usize),
}

/// The queue's keys and scripts, on one store.
#[derive(Clone)]
struct Keys {
    store: RedisStore,
    stream: String,
    /// Each caller's entries: `caller → count`.
    held: String,
    enqueue: Arc<redis::Script>,
    forget: Arc<redis::Script>,
}

/// A caller name no caller or owner has.
const NOBODY: &str = "\n";

/// What a task keeps of its entry (opaque to it): the entry's id and the caller it is counted
/// against, `<id> <caller>` (an id has no space).
fn token(id: &str, caller: &str) -> String {
    format!("{id} {caller}")
}

/// A [`token`]'s id and caller.
fn untoken(token: &str) -> (&str, &str) {
    token.split_once(' ').unwrap_or((token, ""))
}

/// Whom `work` is counted against: its caller, else its owner.
fn holder(work: &Work) -> &str {
    work.caller.as_deref().unwrap_or(&work.owner)
}

impl RedisWork {
    pub(crate) fn new(
        store: RedisStore,
        telemetry: super::telemetry::Telemetry,
        bounds: (usize, usize),
    ) -> Self {
        use super::redis::Group;
        Self {
            keys: Keys {
                stream: store.grouped(Group::Tasks, "mcp:work"),
                held: store.grouped(Group::Tasks, "mcp:work:held"),
                store,
                enqueue: Arc::new(redis::Script::new(ENQUEUE)),
                forget: Arc::new(redis::Script::new(FORGET)),
            },
            consumer: crate::ids::random_id(),
            telemetry,
            bounds,
        }
    }
}

impl WorkQueue for RedisWork {
    fn enqueue(&self, work: &Work) -> BoxFuture<'_, Result<String, RpcError>> {
        let json = serde_json::to_string(work);
        let holder = holder(work).to_owned();
        Box::pin(async move {
            let json = json.map_err(|e| RpcError::internal(e.to_string()))?;
            let k = &self.keys;
            let mut con = k.store.connection();
            let id: String = k
                .enqueue
                .key(&k.stream)
                .key(&k.held)
                .arg(self.bounds.0)
                .arg(self.bounds.1)
                .arg(&holder)
                .arg(json)
                .invoke_async(&mut con)
                .await
                .map_err(|e| {
                    tracing::warn!(error = %e, "task work not queued in Redis");
                    RpcError::internal(
                        "The task could not be queued (the shared store is unavailable); try again later",
                    )
                })?;
            match id.as_str() {
                "full" => Err(RpcError::internal(
                    "Server busy: too many tasks queued, try again later",
                )),
                "share" => Err(RpcError::internal(
                    "Server busy: too many tasks queued for this caller, try again later",
                )),
                _ => Ok(token(&id, &holder)),
            }
        })
    }

    fn done(&self, entry: String) -> BoxFuture<'static, ()> {
        Box::pin(forget(self.keys.clone(), entry))
    }

    fn run(&self, runner: Arc<dyn Runner>) {
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let worker = Worker {
            keys: self.keys.clone(),
            consumer: self.consumer.clone(),
            runner,
            telemetry: self.telemetry.clone(),
        };
        rt.spawn(async move { worker.run().await });
    }
}

struct Worker {
    keys: Keys,
    consumer: String,
    runner: Arc<dyn Runner>,
    telemetry: super::telemetry::Telemetry,
}

impl Worker {
    async fn run(self) {
        // A connection of its own: a blocking read would hold up every command on the shared
        // one.
        let mut own = None;
        // Where the next claim of idle entries starts: the whole pending list is walked in
        // batches, then again from its start.
        let mut cursor = String::from("0-0");
        loop {
            let con = match &mut own {
                Some(con) => con,
                // Its answers wait for the blocking read, and a little more.
                None => match self
                    .keys
                    .store
                    .dedicated(Duration::from_millis(BLOCK_MS) + Duration::from_secs(2))
                    .await
                {
                    Ok(con) => own.insert(con),
                    Err(e) => {
                        tracing::debug!(error = %e, "work queue: Redis unavailable");
                        tokio::time::sleep(Duration::from_secs(1)).await;
                        continue;
                    }
                },
            };
            if let Err(e) = self.round(con, &mut cursor).await {
                if e.to_string().contains("NOGROUP") {
                    self.create_group(con).await;
                } else {
                    tracing::debug!(error = %e, "work queue: read failed");
                    own = None;
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            }
        }
    }

    async fn create_group(&self, con: &mut super::redis_conn::Conn) {
        // From the stream's start: work queued before the group existed is read too.
        let made: redis::RedisResult<()> = redis::cmd("XGROUP")
            .arg("CREATE")
            .arg(&self.keys.stream)
            .arg(GROUP)
            .arg("0")
            .arg("MKSTREAM")
            .query_async(con)
            .await;
        if let Err(e) = made
            && !e.to_string().contains("BUSYGROUP")
        {
            tracing::debug!(error = %e, "work queue: group not created");
        }
    }

    /// Claims a batch of what was left idle (from `cursor` on), then reads what is new (waiting
    /// a while for it only when the claims are done), and looks at each entry.
    async fn round(
        &self,
        con: &mut super::redis_conn::Conn,
        cursor: &mut String,
    ) -> redis::RedisResult<()> {
        let idle: redis::streams::StreamAutoClaimReply = redis::cmd("XAUTOCLAIM")
            .arg(&self.keys.stream)
            .arg(GROUP)
            .arg(&self.consumer)
            .arg(u64::try_from(VISIBILITY.as_millis()).unwrap_or(u64::MAX))
            .arg(cursor.as_str())
            .arg("COUNT")
            .arg(BATCH)
            .query_async(con)
            .await?;
        // "0-0" when the walk is over: the next one starts again from the start.
        let more = idle.next_stream_id != "0-0";
        *cursor = idle.next_stream_id;
        for entry in idle.claimed {
            self.look_at(entry).await;
        }
        let new: Option<redis::streams::StreamReadReply> = redis::cmd("XREADGROUP")
            .arg("GROUP")
            .arg(GROUP)
            .arg(&self.consumer)
            .arg("COUNT")
            .arg(BATCH)
            .arg("BLOCK")
            // Not waiting while idle entries are left to claim.
            .arg(if more { 1 } else { BLOCK_MS })
            .arg("STREAMS")
            .arg(&self.keys.stream)
            .arg(">")
            .query_async(con)
            .await?;
        for key in new.map(|r| r.keys).unwrap_or_default() {
            for entry in key.ids {
                self.look_at(entry).await;
            }
        }
        Ok(())
    }

    /// Runs an entry's work if its task's instance stopped; forgets it if its task ended;
    /// else leaves it pending.
    async fn look_at(&self, entry: redis::streams::StreamId) {
        let work = entry
            .get::<String>("work")
            .and_then(|j| serde_json::from_str::<Work>(&j).ok());
        let Some(mut work) = work else {
            tracing::warn!(
                entry = entry.id,
                "work queue: an entry that is not work; dropped"
            );
            // Its caller unknown: counted against a name no caller has (the count that goes
            // below zero is deleted), so nobody's share changes.
            return forget(self.keys.clone(), token(&entry.id, NOBODY)).await;
        };
        work.entry = token(&entry.id, holder(&work));
        // Redis not answering: looked at again one timeout later.
        let Ok((view, alive)) = super::redis::task_record(&self.keys.store, &work.task).await
        else {
            return;
        };
        let Some(view) = view else {
            if added_before(&work.entry, ORPHAN) {
                forget(self.keys.clone(), work.entry).await;
            }
            return;
        };
        if view.ended() {
            return forget(self.keys.clone(), work.entry).await;
        }
        if alive {
            return;
        }
        if !self.runner.has_room(&work) {
            // Pending still: claimed again one timeout later, here or by an instance with room.
            tracing::debug!(task = work.task, "queued work left: no room for it here");
            return;
        }
        let attempts = format!(
            "{}:attempt",
            super::redis::task_key(&self.keys.store, &work.task)
        );
        let mut con = self.keys.store.connection();
        let attempt: redis::RedisResult<u32> = redis::pipe()
            .cmd("INCR")
            .arg(&attempts)
            .cmd("PEXPIRE")
            .arg(&attempts)
            .arg(view.ttl_ms.max(1))
            .ignore()
            .query_async::<(u32,)>(&mut con)
            .await
            .map(|(n,)| n);
        let Ok(attempt) = attempt else {
            return;
        };
        // The accepting instance's run was the first, unless it was a front that runs none.
        work.attempt = if view.handed { attempt } else { attempt + 1 };
        tracing::info!(
            task = work.task,
            attempt = work.attempt,
            "running queued work"
        );
        if let Some(queued) = added_at(&work.entry) {
            let lag = SystemTime::now().duration_since(queued).unwrap_or_default();
            self.telemetry.queue_lag(lag.as_secs_f64());
        }
        tokio::spawn(self.runner.run(work));
    }
}

/// When a stream entry (`<ms>-<seq>`) was added.
fn added_at(entry: &str) -> Option<SystemTime> {
    let ms = entry.split('-').next()?.parse::<u64>().ok()?;
    SystemTime::UNIX_EPOCH.checked_add(Duration::from_millis(ms))
}

/// Whether a stream entry id (`<ms>-<seq>`) was added longer than `ago` ago.
fn added_before(entry: &str, ago: Duration) -> bool {
    added_at(entry)
        .and_then(|at| SystemTime::now().duration_since(at).ok())
        .is_some_and(|age| age > ago)
}

/// `XACK` and `XDEL` of the entry of `token`, and its caller's count down: its work is done,
/// or not work at all.
async fn forget(keys: Keys, token: String) {
    let (id, caller) = untoken(&token);
    let mut con = keys.store.connection();
    let done: redis::RedisResult<i64> = keys
        .forget
        .key(&keys.stream)
        .key(&keys.held)
        .arg(GROUP)
        .arg(id)
        .arg(caller)
        .invoke_async(&mut con)
        .await;
    if let Err(e) = done {
        // Left in the queue: a worker finds its task ended and forgets it then.
        tracing::warn!(error = %e, "task work not removed from Redis");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn work(caller: &str) -> Work {
        serde_json::from_value(serde_json::json!({"task": "t", "group": "g", "version": 1,
            "era": "2026-07-28", "params": {}, "owner": "o", "caller": caller}))
        .unwrap()
    }

    #[tokio::test]
    #[ignore = "needs redis-server; scripts/test.sh provides the peers and runs ignored tests"]
    async fn the_queue_keeps_its_bounds_and_an_entry_forgotten_twice_counts_once() {
        let redis = crate::test_redis::Redis::start();
        let q = RedisWork::new(
            redis.store().with_prefix("w:"),
            super::super::telemetry::Telemetry::default(),
            (3, 2),
        );
        let a1 = q.enqueue(&work("a")).await.unwrap();
        let a2 = q.enqueue(&work("a")).await.unwrap();
        let refused = q.enqueue(&work("a")).await.unwrap_err();
        assert_eq!(
            refused.message(),
            "Server busy: too many tasks queued for this caller, try again later"
        );
        let _b1 = q.enqueue(&work("b")).await.unwrap();
        let full = q.enqueue(&work("c")).await.unwrap_err();
        assert_eq!(
            full.message(),
            "Server busy: too many tasks queued, try again later"
        );
        // A done entry frees its place and its caller's, once however often it is forgotten.
        q.done(a1.clone()).await;
        q.done(a1).await;
        let _a3 = q.enqueue(&work("a")).await.unwrap();
        assert!(q.enqueue(&work("a")).await.is_err(), "a holds two again");
        q.done(a2).await;
        assert!(q.enqueue(&work("c")).await.is_ok());
    }

    #[test]
    fn an_entry_id_says_when_it_was_added() {
        assert!(added_before("1-0", Duration::from_secs(60)));
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis();
        assert!(!added_before(&format!("{now}-3"), Duration::from_secs(60)));
        assert!(!added_before("nonsense", Duration::from_secs(60)));
    }
}
