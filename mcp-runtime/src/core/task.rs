//! What a client may know of a task: its status, its view, and the notice of a change (the
//! task engine, `tasks`, keeps them; the change feed, `changes`, carries the notices).

use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Where a task is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
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
#[derive(Debug, Clone, PartialEq, Eq)]
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

/// A task as the shared store has it, on whichever instance it runs
/// ([`crate::Server::all_tasks`], with Redis).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SharedTask {
    /// The task.
    pub view: TaskView,
    /// Its owner (a caller's subject, `session:<id>`, or `""`).
    pub owner: String,
    /// Whether an instance runs it now (its heartbeat is there).
    pub running: bool,
}

/// A change of a task, as announced: its new state and whose it is (only its owner hears of
/// it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskNotice {
    /// The task.
    pub view: TaskView,
    /// Its owner (a caller's subject, `session:<id>`, or `""`).
    pub owner: String,
}

/// A task as a shared store keeps it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Stored {
    pub id: String,
    pub owner: String,
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    pub created_ms: u64,
    pub updated_ms: u64,
    pub ttl_ms: u64,
    pub poll_ms: u64,
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub input_requests: Map<String, Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<Value>,
    /// Its work is kept in the store's queue: when its instance stops another one runs it, so
    /// a lapsed heartbeat is not a failure.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub durable: bool,
    /// Accepted by an instance that runs no work: queued for a worker, not running yet.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub handed: bool,
    /// The answers its client gave, by key (a durable task's: a run taken over is given them
    /// again). Never shown to a reader.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub given: Map<String, Value>,
}

fn ms(t: SystemTime) -> u64 {
    t.duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

fn from_ms(m: u64) -> SystemTime {
    std::time::UNIX_EPOCH + Duration::from_millis(m)
}

impl Stored {
    pub(crate) fn of(v: &TaskView, owner: &str) -> Self {
        Stored {
            id: v.id.clone(),
            owner: owner.to_owned(),
            status: v.status.as_str().to_owned(),
            status_message: v.status_message.clone(),
            created_ms: ms(v.created),
            updated_ms: ms(v.updated),
            ttl_ms: v.ttl_ms,
            poll_ms: v.poll_interval_ms,
            input_requests: v.input_requests.clone(),
            result: v.result.clone(),
            error: v.error.clone(),
            durable: false,
            handed: false,
            given: Map::new(),
        }
    }

    /// Whether the task has ended (completed, failed or cancelled).
    #[cfg_attr(not(feature = "redis"), allow(dead_code))]
    pub(crate) fn ended(&self) -> bool {
        matches!(self.status.as_str(), "completed" | "failed" | "cancelled")
    }

    pub(crate) fn view(self) -> TaskView {
        let status = match self.status.as_str() {
            "working" => TaskStatus::Working,
            "input_required" => TaskStatus::InputRequired,
            "completed" => TaskStatus::Completed,
            "cancelled" => TaskStatus::Cancelled,
            _ => TaskStatus::Failed,
        };
        TaskView {
            id: self.id,
            status,
            status_message: self.status_message,
            created: from_ms(self.created_ms),
            updated: from_ms(self.updated_ms),
            ttl_ms: self.ttl_ms,
            poll_interval_ms: self.poll_ms,
            input_requests: self.input_requests,
            result: self.result,
            error: self.error,
        }
    }
}
