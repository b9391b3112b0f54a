//! The task engine: calls that outlive their request (MCP tasks), with an id, a status, the
//! questions they wait on, and their outcome, kept until their TTL has passed.
//!
//! In memory, per server. Bounded: at most [`crate::Limits::tasks`] tasks are kept (running or
//! finished and not yet expired) and at most [`crate::Limits::tasks_running`] run at once; one
//! more is refused before it starts. Ids are 128 random bits: a client that does not know an id
//! cannot read, answer or cancel its task.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use serde_json::{Map, Value};
use tokio::sync::Notify;

use crate::context::CancelSignal;
use crate::error::RpcError;

/// Where a task is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskStatus {
    /// Running.
    Working,
    /// Waiting for the client's answers (`inputRequests`).
    InputRequired,
    /// Finished with a result (a tool error is a result too).
    Completed,
    /// Finished with a protocol error.
    Failed,
    /// Stopped by its client.
    Cancelled,
}

impl TaskStatus {
    /// Its wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Working => "working",
            TaskStatus::InputRequired => "input_required",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }

    /// Whether it will not change any more.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }
}

/// What a task's client may read of it.
#[derive(Debug, Clone)]
pub struct TaskView {
    /// Its id.
    pub id: String,
    /// Its status.
    pub status: TaskStatus,
    /// Why it is in this status (a failed task's error message, say).
    pub status_message: Option<String>,
    /// When it was created.
    pub created: SystemTime,
    /// When its status last changed.
    pub updated: SystemTime,
    /// How long it is kept after its creation, in milliseconds.
    pub ttl_ms: u64,
    /// How often a client should poll it, in milliseconds.
    pub poll_interval_ms: u64,
    /// The questions waiting for the client's answers, by key.
    pub input_requests: Map<String, Value>,
    /// The call's result, once completed.
    pub result: Option<Value>,
    /// The call's error (`{code, message, data?}`), once failed.
    pub error: Option<Value>,
}

/// How a task's call ended.
#[derive(Debug, Clone)]
pub enum TaskOutcome {
    /// A result.
    Result(Value),
    /// A protocol error (`{code, message, data?}`).
    Error(Value),
    /// A tool result with `isError` (2025-11-25: the task is `failed`, its result kept).
    ToolError(Value),
    /// The call was cancelled.
    Cancelled,
}

struct Entry {
    view: TaskView,
    owner: String,
    expires: Instant,
    cancel: CancelSignal,
    /// Answers given with `tasks/update` and not yet taken by the call.
    answers: Map<String, Value>,
    changed: Arc<Notify>,
}

/// The tasks of one server.
#[derive(Clone)]
pub struct Tasks {
    inner: Arc<Inner>,
}

struct Inner {
    tasks: Mutex<HashMap<String, Entry>>,
    max_tasks: usize,
    max_running: usize,
    ttl: Duration,
    poll_interval: Duration,
}

impl std::fmt::Debug for Tasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tasks")
            .field("max_tasks", &self.inner.max_tasks)
            .field("max_running", &self.inner.max_running)
            .finish_non_exhaustive()
    }
}

fn unknown() -> RpcError {
    RpcError::invalid_params("Unknown taskId")
}

impl Tasks {
    /// An engine keeping at most `max_tasks` tasks, `max_running` of them running, each kept
    /// `ttl` after its creation (and at least until it ends), polled every `poll_interval`.
    pub fn new(
        max_tasks: usize,
        max_running: usize,
        ttl: Duration,
        poll_interval: Duration,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                tasks: Mutex::default(),
                max_tasks: max_tasks.max(1),
                max_running: max_running.max(1),
                ttl,
                poll_interval,
            }),
        }
    }

    fn lock(&self) -> Result<std::sync::MutexGuard<'_, HashMap<String, Entry>>, RpcError> {
        self.inner
            .tasks
            .lock()
            .map_err(|_| RpcError::internal("tasks unavailable"))
    }

    /// Starts a task for `owner` whose call stops when `cancel` is set, kept `ttl` (at most
    /// the engine's, which is the default); refused (-32603) when the bounds are reached.
    /// Expired tasks are dropped first.
    pub fn create(
        &self,
        owner: &str,
        cancel: CancelSignal,
        ttl: Option<Duration>,
    ) -> Result<TaskView, RpcError> {
        let ttl = ttl.map_or(self.inner.ttl, |t| t.min(self.inner.ttl));
        let mut tasks = self.lock()?;
        let now = Instant::now();
        tasks.retain(|_, e| !(e.view.status.is_terminal() && e.expires <= now));
        let running = tasks
            .values()
            .filter(|e| !e.view.status.is_terminal())
            .count();
        if tasks.len() >= self.inner.max_tasks || running >= self.inner.max_running {
            return Err(RpcError::internal(
                "Server busy: too many tasks, try again later",
            ));
        }
        let id = crate::ids::random_id();
        let at = SystemTime::now();
        let view = TaskView {
            id: id.clone(),
            status: TaskStatus::Working,
            status_message: None,
            created: at,
            updated: at,
            ttl_ms: u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX),
            poll_interval_ms: u64::try_from(self.inner.poll_interval.as_millis())
                .unwrap_or(1000)
                .max(1),
            input_requests: Map::new(),
            result: None,
            error: None,
        };
        tasks.insert(
            id,
            Entry {
                view: view.clone(),
                owner: owner.to_owned(),
                expires: now + ttl,
                cancel,
                answers: Map::new(),
                changed: Arc::default(),
            },
        );
        Ok(view)
    }

    /// The task `id` as `owner` may see it; -32602 for an unknown id or another owner's task.
    pub fn get(&self, owner: &str, id: &str) -> Result<TaskView, RpcError> {
        let tasks = self.lock()?;
        match tasks.get(id) {
            Some(e) if e.owner == owner && !expired(e) => Ok(e.view.clone()),
            _ => Err(unknown()),
        }
    }

    /// Records the client's answers (`tasks/update`): keys the task does not wait on are
    /// ignored; answered keys leave `inputRequests`.
    pub fn answer(
        &self,
        owner: &str,
        id: &str,
        answers: Map<String, Value>,
    ) -> Result<(), RpcError> {
        let mut tasks = self.lock()?;
        let e = match tasks.get_mut(id) {
            Some(e) if e.owner == owner && !expired(e) => e,
            _ => return Err(unknown()),
        };
        let mut any = false;
        for (k, v) in answers {
            if e.view.input_requests.remove(&k).is_some() {
                e.answers.insert(k, v);
                any = true;
            }
        }
        if any {
            if e.view.input_requests.is_empty() && e.view.status == TaskStatus::InputRequired {
                e.view.status = TaskStatus::Working;
            }
            e.view.updated = SystemTime::now();
            e.changed.notify_waiters();
        }
        Ok(())
    }

    /// Asks the task's call to stop (`tasks/cancel`); a finished task is left as it is.
    pub fn cancel(&self, owner: &str, id: &str) -> Result<(), RpcError> {
        let tasks = self.lock()?;
        match tasks.get(id) {
            Some(e) if e.owner == owner && !expired(e) => {
                if !e.view.status.is_terminal() {
                    e.cancel.cancel();
                }
                Ok(())
            }
            _ => Err(unknown()),
        }
    }

    /// Cancels a running task at once (2025-11-25 `tasks/cancel`): its status is `cancelled`
    /// now, and its call stops at its next suspension point; a finished task is -32602.
    pub fn cancel_now(&self, owner: &str, id: &str) -> Result<TaskView, RpcError> {
        let mut tasks = self.lock()?;
        let e = match tasks.get_mut(id) {
            Some(e) if e.owner == owner && !expired(e) => e,
            _ => return Err(unknown()),
        };
        if e.view.status.is_terminal() {
            return Err(RpcError::invalid_params(format!(
                "Task {id} has already ended ({})",
                e.view.status.as_str()
            )));
        }
        e.cancel.cancel();
        e.view.status = TaskStatus::Cancelled;
        e.view.status_message = Some("Cancelled by the client".into());
        e.view.input_requests.clear();
        e.view.updated = SystemTime::now();
        e.changed.notify_waiters();
        Ok(e.view.clone())
    }

    /// Waits until task `id` has ended (2025-11-25 `tasks/result`).
    pub async fn ended(&self, owner: &str, id: &str) -> Result<TaskView, RpcError> {
        loop {
            let changed = {
                let tasks = self.lock()?;
                match tasks.get(id) {
                    Some(e) if e.owner == owner && !expired(e) => {
                        if e.view.status.is_terminal() {
                            return Ok(e.view.clone());
                        }
                        e.changed.clone()
                    }
                    _ => return Err(unknown()),
                }
            };
            let notified = changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.get(owner, id)?.status.is_terminal() {
                continue;
            }
            notified.await;
        }
    }

    /// The call of task `id` waits for the client's answer to `request` under `key`: the task
    /// is `input_required` until it comes (or the call is cancelled, which drops this).
    pub async fn ask(&self, id: &str, key: &str, request: Value) -> Result<Value, RpcError> {
        loop {
            let changed = {
                let mut tasks = self.lock()?;
                let e = tasks.get_mut(id).ok_or_else(unknown)?;
                if let Some(a) = e.answers.remove(key) {
                    return Ok(a);
                }
                if !e.view.input_requests.contains_key(key) {
                    e.view
                        .input_requests
                        .insert(key.to_owned(), request.clone());
                    e.view.status = TaskStatus::InputRequired;
                    e.view.updated = SystemTime::now();
                }
                e.changed.clone()
            };
            // Registered before the lock is let go of, so an answer in between is not missed.
            let notified = changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.has_answer(id, key)? {
                continue;
            }
            notified.await;
        }
    }

    fn has_answer(&self, id: &str, key: &str) -> Result<bool, RpcError> {
        let tasks = self.lock()?;
        Ok(tasks.get(id).is_some_and(|e| e.answers.contains_key(key)))
    }

    /// Ends task `id` with its call's outcome.
    pub fn finish(&self, id: &str, outcome: TaskOutcome) {
        let Ok(mut tasks) = self.lock() else {
            return;
        };
        let Some(e) = tasks.get_mut(id) else {
            return;
        };
        let v = &mut e.view;
        v.input_requests.clear();
        if v.status == TaskStatus::Cancelled {
            // Cancelled at once (`cancel_now`): what the call did after is not kept.
            return;
        }
        match outcome {
            TaskOutcome::Result(r) => {
                v.status = TaskStatus::Completed;
                v.result = Some(r);
            }
            TaskOutcome::ToolError(r) => {
                v.status = TaskStatus::Failed;
                v.status_message = Some("The tool reported an error".into());
                v.result = Some(r);
            }
            TaskOutcome::Error(err) => {
                v.status = TaskStatus::Failed;
                v.status_message = err
                    .get("message")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                v.error = Some(err);
            }
            TaskOutcome::Cancelled => {
                v.status = TaskStatus::Cancelled;
                v.status_message = Some("Cancelled by the client".into());
            }
        }
        v.updated = SystemTime::now();
        // Kept for its TTL from creation, and never less than a poll interval after it ends.
        let floor = Instant::now() + Duration::from_millis(v.poll_interval_ms);
        e.expires = e.expires.max(floor);
        e.changed.notify_waiters();
    }
}

fn expired(e: &Entry) -> bool {
    e.view.status.is_terminal() && e.expires <= Instant::now()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn engine() -> Tasks {
        Tasks::new(3, 2, Duration::from_secs(60), Duration::from_millis(500))
    }

    #[test]
    fn a_task_is_seen_by_its_owner_only_and_ends_with_its_outcome() {
        let t = engine();
        let v = t.create("ann", CancelSignal::new(), None).unwrap();
        assert_eq!(v.status, TaskStatus::Working);
        assert_eq!(v.id.len(), 32);
        assert_eq!(t.get("bob", &v.id).unwrap_err().code(), -32602);
        assert_eq!(t.get("ann", "nope").unwrap_err().code(), -32602);
        t.finish(&v.id, TaskOutcome::Result(json!({"content": []})));
        let got = t.get("ann", &v.id).unwrap();
        assert_eq!(got.status, TaskStatus::Completed);
        assert_eq!(got.result, Some(json!({"content": []})));
    }

    #[test]
    fn bounds_refuse_one_more_task() {
        let t = engine();
        let a = t.create("", CancelSignal::new(), None).unwrap();
        t.create("", CancelSignal::new(), None).unwrap();
        // Two running: the third is refused.
        assert_eq!(
            t.create("", CancelSignal::new(), None).unwrap_err().code(),
            -32603
        );
        t.finish(&a.id, TaskOutcome::Cancelled);
        t.create("", CancelSignal::new(), None).unwrap();
        // Three kept: the fourth is refused until one expires.
        assert_eq!(
            t.create("", CancelSignal::new(), None).unwrap_err().code(),
            -32603
        );
    }

    #[tokio::test]
    async fn a_question_waits_for_its_answer_and_extra_keys_are_ignored() {
        let t = engine();
        let v = t.create("", CancelSignal::new(), None).unwrap();
        let asking = {
            let (t, id) = (t.clone(), v.id.clone());
            tokio::spawn(async move { t.ask(&id, "name", json!({"method": "roots/list"})).await })
        };
        while t.get("", &v.id).unwrap().status != TaskStatus::InputRequired {
            tokio::task::yield_now().await;
        }
        assert_eq!(
            t.get("", &v.id).unwrap().input_requests,
            json!({"name": {"method": "roots/list"}})
                .as_object()
                .unwrap()
                .clone()
        );
        let mut answers = Map::new();
        answers.insert("other".into(), json!(1));
        t.answer("", &v.id, answers).unwrap();
        assert_eq!(t.get("", &v.id).unwrap().status, TaskStatus::InputRequired);
        let mut answers = Map::new();
        answers.insert("name".into(), json!({"roots": []}));
        t.answer("", &v.id, answers).unwrap();
        assert_eq!(asking.await.unwrap().unwrap(), json!({"roots": []}));
        assert_eq!(t.get("", &v.id).unwrap().status, TaskStatus::Working);
    }

    #[test]
    fn cancel_sets_the_signal_of_a_running_task_only() {
        let t = engine();
        let signal = CancelSignal::new();
        let v = t.create("", signal.clone(), None).unwrap();
        t.cancel("", &v.id).unwrap();
        assert!(signal.is_cancelled());
        assert_eq!(t.cancel("", "nope").unwrap_err().code(), -32602);
    }
}
