//! The work queue on a Redis Stream and its consumer group, Redis's own primitives for it:
//! a task's work is `XADD`ed to `<prefix>mcp:work` once its record is stored and before it is
//! answered; every instance reads the stream as a consumer of the group `workers`
//! (`XREADGROUP`), and claims the entries left idle in any consumer's pending list past the
//! visibility timeout (`XAUTOCLAIM`); the instance whose task ends acknowledges and deletes its
//! entry (`XACK`, `XDEL`).
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

/// The queue of one store (see the module's documentation).
pub(crate) struct RedisWork {
    store: RedisStore,
    stream: String,
    /// This instance's name in the group.
    consumer: String,
    /// Where the queue's lag is measured (`mcp_runtime.queue.lag`).
    telemetry: super::telemetry::Telemetry,
}

impl RedisWork {
    pub(crate) fn new(store: RedisStore, telemetry: super::telemetry::Telemetry) -> Self {
        let stream = store.key("mcp:work");
        Self {
            store,
            stream,
            consumer: crate::ids::random_id(),
            telemetry,
        }
    }
}

impl WorkQueue for RedisWork {
    fn enqueue(&self, work: &Work) -> BoxFuture<'_, Result<String, RpcError>> {
        let json = serde_json::to_string(work);
        Box::pin(async move {
            let json = json.map_err(|e| RpcError::internal(e.to_string()))?;
            let mut con = self.store.connection();
            redis::cmd("XADD")
                .arg(&self.stream)
                .arg("*")
                .arg("work")
                .arg(json)
                .query_async::<String>(&mut con)
                .await
                .map_err(|e| {
                    tracing::warn!(error = %e, "task work not queued in Redis");
                    RpcError::internal(
                        "The task could not be queued (the shared store is unavailable); try again later",
                    )
                })
        })
    }

    fn done(&self, entry: String) -> BoxFuture<'static, ()> {
        Box::pin(forget(self.store.clone(), self.stream.clone(), entry))
    }

    fn run(&self, runner: Arc<dyn Runner>) {
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let worker = Worker {
            store: self.store.clone(),
            stream: self.stream.clone(),
            consumer: self.consumer.clone(),
            runner,
            telemetry: self.telemetry.clone(),
        };
        rt.spawn(async move { worker.run().await });
    }
}

struct Worker {
    store: RedisStore,
    stream: String,
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
            .arg(&self.stream)
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
            .arg(&self.stream)
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
            .arg(&self.stream)
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
            return forget(self.store.clone(), self.stream.clone(), entry.id).await;
        };
        work.entry = entry.id;
        // Redis not answering: looked at again one timeout later.
        let Ok((view, alive)) = super::redis::task_record(&self.store, &work.task).await else {
            return;
        };
        let Some(view) = view else {
            if added_before(&work.entry, ORPHAN) {
                forget(self.store.clone(), self.stream.clone(), work.entry).await;
            }
            return;
        };
        if view.ended() {
            return forget(self.store.clone(), self.stream.clone(), work.entry).await;
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
            super::redis::task_key(&self.store, &work.task)
        );
        let mut con = self.store.connection();
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

/// `XACK` and `XDEL` of one entry: its work is done, or not work at all.
async fn forget(store: RedisStore, stream: String, entry: String) {
    let mut con = store.connection();
    let mut pipe = redis::pipe();
    pipe.cmd("XACK").arg(&stream).arg(GROUP).arg(&entry);
    pipe.cmd("XDEL").arg(&stream).arg(&entry);
    if let Err(e) = pipe.query_async::<()>(&mut con).await {
        // Left in the queue: a worker finds its task ended and forgets it then.
        tracing::warn!(error = %e, "task work not removed from Redis");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
