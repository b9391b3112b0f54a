//! The task engine: calls that outlive their request (MCP tasks), with an id, a status, the
//! questions they wait on, and their outcome, kept until their TTL has passed.
//!
//! A task runs on the instance that started it, which keeps it in memory. Bounded: at most
//! [`crate::Limits::tasks`] tasks are kept (running or finished and not yet expired) and at most
//! [`crate::Limits::tasks_running`] run at once; one more is refused before it starts. Ids are
//! 128 random bits: a client that does not know an id cannot read, answer or cancel its task.
//!
//! With a shared store (Redis: [`crate::ServerBuilder::redis`]) every change of a task is
//! mirrored there, so any instance answers `tasks/get` for it, and answers and cancellations
//! sent to another instance reach the one running it. Nothing is acknowledged before it is
//! stored: a task's id is answered once its record is in the store (a task that cannot be
//! stored is not created), and this instance answers about a task only once the writes of the
//! states it has are settled, so a client that hears of a state here reads it, or a later
//! one, on any instance. The running instance marks its tasks
//! alive every few seconds: a task whose instance stopped is reported `failed`, never
//! `working` forever.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime};

use futures_util::future::BoxFuture;
use serde_json::{Map, Value};
use tokio::sync::Notify;

use crate::context::CancelSignal;
use crate::error::RpcError;

use super::task::{Stored, TaskNotice, TaskStatus, TaskView};

/// Where tasks are shared between instances (Redis).
pub(crate) trait TaskMirror: Send + Sync + 'static {
    /// The write that stores a task's view, kept `keep`: `true` once stored, `false` when the
    /// store failed (within its timeouts). Writes run concurrently and may arrive out of
    /// order: one whose `rev` is not above the stored one's is dropped, so a late `working`
    /// never hides a `completed`.
    fn put(&self, task: Stored, rev: u64, keep: Duration) -> BoxFuture<'static, bool>;
    /// A task and whether the instance running it is alive.
    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Option<(Stored, bool)>>;
    /// Hands the client's answers to the instance running task `id`.
    fn answer<'a>(
        &'a self,
        id: &'a str,
        answers: Map<String, Value>,
    ) -> BoxFuture<'a, Result<(), RpcError>>;
    /// Asks the instance running task `id` to cancel it.
    fn cancel<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), RpcError>>;
    /// Until the process ends: marks `tasks`' running tasks alive, and applies the answers
    /// and cancellations other instances hand over.
    #[cfg_attr(not(feature = "redis"), allow(dead_code))]
    fn run(&self, tasks: Tasks);
}

/// Accepted work kept in the shared store until it is done (Redis Streams, a consumer group:
/// `core::redis::RedisWork`), so that when the instance running it stops, another one runs it
/// again.
pub(crate) trait WorkQueue: Send + Sync + 'static {
    /// Keeps `work` until [`WorkQueue::done`]: its entry's id. Called once the task's record
    /// is stored and before the task is answered.
    fn enqueue(&self, work: &Work) -> BoxFuture<'_, Result<String, RpcError>>;
    /// The work of `entry` is done, whatever its outcome: forgotten.
    fn done(&self, entry: String) -> BoxFuture<'static, ()>;
    /// Until the process ends: takes the work whose instance stopped (its task's heartbeat
    /// lapsed while the task runs) and hands it to `runner`.
    fn run(&self, runner: Arc<dyn Runner>);
}

/// Runs work taken over from another instance (the MCP face: the work's endpoint calls its
/// tool again).
#[cfg_attr(not(feature = "redis"), allow(dead_code))]
pub(crate) trait Runner: Send + Sync + 'static {
    /// Runs `work` to its end, finishing its task on this instance.
    fn run(&self, work: Work) -> BoxFuture<'static, ()>;
    /// Whether `work` fits on this instance now (its running tasks, and its caller's share):
    /// work that does not stays in the queue.
    fn has_room(&self, work: &Work) -> bool;
}

/// What it takes to run a task's call again on another instance: the call, whose it is, and
/// which run this is.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[cfg_attr(not(feature = "redis"), allow(dead_code))]
pub(crate) struct Work {
    pub task: String,
    /// The endpoint: group and version.
    pub group: String,
    pub version: u32,
    /// The revision the call was made in.
    pub era: String,
    /// The `tools/call` params.
    pub params: Value,
    pub owner: String,
    /// The caller's key ([`crate::context::Caller`] as written).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caller: Option<String>,
    /// The identity's subject and scopes (never a token).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity: Option<(String, Vec<String>)>,
    /// An asynchronous JSON-RPC call's delivery (`$rpc.callback`); `None` for an MCP task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub callback: Option<Delivery>,
    /// The trace context of the call that started it (`traceparent`, `tracestate`): a run
    /// taken over elsewhere continues the same trace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<(String, Option<String>)>,
    /// What its client can be asked (the capabilities it declared), when it can be: a run
    /// taken over asks through the task, as the first run did once it was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caps: Option<Value>,
    /// The language the call was answered in (its `Accept-Language` or `_meta` language): a run
    /// taken over answers in it too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// The answers its client gave before the call became a task (2026-07-28 rounds): a run
    /// taken over is given them again with those it gave the task since.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub given: Map<String, Value>,
    /// The queue's entry (not stored in it).
    #[serde(skip)]
    pub entry: String,
    /// Which run this is: 1 for the first, 2 for the first taken over, and so on.
    #[serde(skip)]
    pub attempt: u32,
}

/// What it takes to deliver an asynchronous call's answer, kept with its queued work.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[cfg_attr(not(feature = "redis"), allow(dead_code))]
pub(crate) struct Delivery {
    pub method: String,
    pub url: String,
    /// The request's trace headers, sent with the answer.
    pub trace: Vec<(String, String)>,
    /// The request's id, as written.
    pub id: Option<String>,
    pub ray_id: Option<String>,
    pub timeout_ms: u64,
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
    /// Whose share it counts against.
    caller: Option<crate::context::Caller>,
    expires: Instant,
    cancel: CancelSignal,
    /// Answers given with `tasks/update` and not yet taken by the call.
    answers: Map<String, Value>,
    /// Every answer its client gave, while its work is queued: stored with it, so that a run
    /// taken over by another instance is given them again instead of asking again.
    given: Map<String, Value>,
    changed: Arc<Notify>,
    /// How far its writes to the shared store have come.
    flush: Arc<Flush>,
    /// Its entry in the work queue, forgotten when it ends; `Some("")` while it is being
    /// queued (it is durable from its first write).
    work: Option<String>,
    /// The status last counted (`mcp_runtime.tasks.transitions`): a change that leaves the
    /// status as it was (a message, a question answered in place) is not a transition.
    counted: std::sync::atomic::AtomicU8,
}

/// An entry whose status was never counted.
const UNCOUNTED: u8 = u8::MAX;

/// The revisions of one task's writes: the last sent, and the last settled (stored, or given
/// up by the store within its timeouts). Writes may settle out of order; the newest settled
/// one is what a reader of the store finds (an older one arriving late is dropped).
#[derive(Default)]
struct Flush {
    sent: AtomicU64,
    settled: tokio::sync::watch::Sender<u64>,
}

impl Flush {
    /// Until every write sent so far has settled.
    async fn settled(&self) {
        let sent = self.sent.load(Ordering::Acquire);
        let mut settled = self.settled.subscribe();
        // The sender lives in `self`: the wait ends with the write, never with a closed channel.
        let _ = settled.wait_for(|r| *r >= sent).await;
    }
}

/// The write that stores a new task (see [`Tasks::create_for`]).
#[must_use = "a task is acknowledged only once it is stored"]
pub(crate) struct Written(Option<tokio::task::JoinHandle<bool>>);

impl Written {
    /// Once the task is in the shared store (at once without one); an error when the store
    /// could not take it, which the caller answers instead of the task.
    pub(crate) async fn stored(self) -> Result<(), RpcError> {
        match self.0 {
            None => Ok(()),
            Some(write) => match write.await {
                Ok(true) => Ok(()),
                _ => Err(RpcError::internal(
                    "The task could not be stored (the shared store is unavailable); try again later",
                )),
            },
        }
    }
}

/// The tasks of one server.
#[derive(Clone)]
pub struct Tasks {
    inner: Arc<Inner>,
}

struct Inner {
    tasks: Mutex<Table>,
    mirror: Option<Arc<dyn TaskMirror>>,
    /// The revision of the last mirrored write (taken under the tasks' lock, so in the order
    /// of the changes): microseconds since the epoch, at least one above the last, so that an
    /// instance that takes a task over writes above the revisions of the one that ran it.
    revs: AtomicU64,
    /// Where accepted work is kept until it is done (with Redis).
    queue: OnceLock<Arc<dyn WorkQueue>>,
    /// This instance runs no work: accepted tasks are left to the workers.
    hands_off: std::sync::atomic::AtomicBool,
    /// Where task changes are announced (`notifications/tasks` on listen streams).
    changes: Option<super::Changes>,
    /// Where status transitions are counted.
    telemetry: super::telemetry::Telemetry,
    max_tasks: usize,
    max_running: usize,
    /// One caller's shares of the two bounds above.
    per_caller: usize,
    running_per_caller: usize,
    /// How long a task's call waits for one answer of its client (`None`: as long as the
    /// task runs).
    input_wait: Option<Duration>,
    ttl: Duration,
    poll_interval: Duration,
    /// With instances sharing a store: the tasks the others run, per caller.
    shares: OnceLock<Arc<super::shares::Shares>>,
}

/// The running tasks per caller, for the other instances.
impl super::shares::Held for Inner {
    fn held(&self) -> Vec<(String, usize)> {
        let Ok(tasks) = self.tasks.lock() else {
            return Vec::new();
        };
        let mut by: HashMap<&crate::context::Caller, usize> = HashMap::new();
        for e in tasks.values() {
            if let (Some(c), false) = (&e.caller, e.view.status.is_terminal()) {
                *by.entry(c).or_default() += 1;
            }
        }
        by.into_iter().map(|(c, n)| (c.to_string(), n)).collect()
    }
}

impl std::fmt::Debug for Tasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tasks")
            .field("max_tasks", &self.inner.max_tasks)
            .field("max_running", &self.inner.max_running)
            .finish_non_exhaustive()
    }
}

/// The revision of a view no later write replaces (exact in Lua's doubles).
pub(crate) const FINAL_REV: u64 = 1 << 52;

/// Whose a task is: the endpoint it was started on (`"mcp/v1"`, from `catalog`) and, there,
/// the caller's subject, else its handshake-era session, else nobody in particular (whoever
/// knows the unguessable id, on that endpoint only). `rpc` marks an anonymous JSON-RPC caller's
/// (`$rpc.callback`), which no MCP caller reads. The one place owners are written, so the
/// same caller on two endpoints, or a subject and a session of the same text, never meet.
pub(crate) fn owner(
    catalog: &crate::catalog::Catalog,
    identity: Option<&crate::context::Identity>,
    session: Option<&str>,
    rpc: bool,
) -> String {
    let (group, version) = (catalog.group().name(), catalog.version());
    match (identity, session) {
        (Some(i), _) => format!("{group}/v{version} sub:{}", i.subject),
        (None, Some(s)) => format!("{group}/v{version} session:{s}"),
        (None, None) if rpc => format!("{group}/v{version} rpc"),
        (None, None) => format!("{group}/v{version}"),
    }
}

/// A task being accepted, ended if its acceptance is dropped half-way (the request's future
/// was dropped while the store was written: its client went away): nobody holds its id and no
/// call runs it, so it must not stay `working`, holding a running place, for ever.
struct Abandoned<'a> {
    tasks: &'a Tasks,
    id: Option<String>,
}

impl Drop for Abandoned<'_> {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            self.tasks.finish(&id, TaskOutcome::Cancelled);
        }
    }
}

/// What a cancellation did.
#[derive(Debug)]
pub(crate) enum Cancelled {
    /// The task is `cancelled` now (as stored).
    Now(TaskView),
    /// The instance running it was asked to stop it; it ends `cancelled` when its call stops.
    Asked,
    /// It had ended already (as it is).
    Ended(TaskView),
}

/// The tasks an instance keeps, with what its bounds read counted as it changes: admitting one
/// more task is a few lookups, never a walk of the table.
#[derive(Default)]
struct Table {
    map: HashMap<String, Entry>,
    /// Entries that have not ended.
    running: usize,
    /// Per caller: what it holds.
    callers: HashMap<crate::context::Caller, Held>,
    /// The ids of ended entries, in the order they ended (the first to give way). An id whose
    /// entry is gone, or runs again, is skipped when met.
    ended: VecDeque<String>,
    /// The ended entries by when they expire.
    expiring: BTreeSet<(Instant, String)>,
}

/// What one caller holds of a [`Table`].
#[derive(Default)]
struct Held {
    kept: usize,
    running: usize,
    /// Its ended entries' ids, in the order they ended (as [`Table::ended`]).
    ended: VecDeque<String>,
}

impl std::ops::Deref for Table {
    type Target = HashMap<String, Entry>;

    fn deref(&self) -> &Self::Target {
        &self.map
    }
}

impl Table {
    /// Task `id`, to change: one that ends is then told with [`Table::ended_now`].
    fn get_mut(&mut self, id: &str) -> Option<&mut Entry> {
        self.map.get_mut(id)
    }

    fn insert(&mut self, id: String, entry: Entry) {
        self.remove(&id);
        let ended = entry.view.status.is_terminal();
        // Counted as running; one that has ended already then ends here.
        self.running += 1;
        if let Some(c) = &entry.caller {
            let held = self.callers.entry(c.clone()).or_default();
            held.kept += 1;
            held.running += 1;
        }
        self.map.insert(id.clone(), entry);
        if ended {
            self.ended_now(&id);
        }
    }

    fn remove(&mut self, id: &str) -> Option<Entry> {
        let entry = self.map.remove(id)?;
        let running = !entry.view.status.is_terminal();
        self.running -= usize::from(running);
        if !running {
            self.expiring.remove(&(entry.expires, id.to_owned()));
        }
        if let Some(c) = &entry.caller
            && let Some(held) = self.callers.get_mut(c)
        {
            held.kept -= 1;
            held.running -= usize::from(running);
            if held.kept == 0 {
                self.callers.remove(c);
            }
        }
        Some(entry)
    }

    /// Task `id`, which ran, has just ended (its `expires` final).
    fn ended_now(&mut self, id: &str) {
        let Some(e) = self.map.get(id) else {
            return;
        };
        self.running -= 1;
        self.expiring.insert((e.expires, id.to_owned()));
        if let Some(c) = &e.caller
            && let Some(held) = self.callers.get_mut(c)
        {
            held.running -= 1;
            // Ids of its entries gone since are dropped from the front as they come, and all
            // at once when they are as many again as its entries (once per doubling).
            while let Some(first) = held.ended.front()
                && !ended_entry(&self.map, first)
            {
                held.ended.pop_front();
            }
            if held.ended.len() > 2 * held.kept + 16 {
                held.ended.retain(|id| ended_entry(&self.map, id));
            }
            held.ended.push_back(id.to_owned());
        }
        // Entries that gave way within the caller's share leave their ids behind the front.
        if self.ended.len() > 2 * self.map.len() + 16 {
            let map = &self.map;
            self.ended.retain(|id| ended_entry(map, id));
        }
        self.ended.push_back(id.to_owned());
    }

    /// Forgets the ended tasks whose time is up.
    fn sweep(&mut self, now: Instant) {
        while let Some((at, _)) = self.expiring.first()
            && *at <= now
        {
            if let Some((_, id)) = self.expiring.pop_first() {
                self.remove(&id);
            }
        }
    }

    /// The task that ended first of `caller`'s (of anyone's, with `None`): what gives way.
    fn first_ended(&mut self, caller: Option<&crate::context::Caller>) -> Option<String> {
        let map = &self.map;
        let ids = match caller {
            None => &mut self.ended,
            Some(c) => &mut self.callers.get_mut(c)?.ended,
        };
        while let Some(first) = ids.front() {
            if ended_entry(map, first) {
                return Some(first.clone());
            }
            ids.pop_front();
        }
        None
    }
}

/// Whether task `id` is kept and has ended.
fn ended_entry(map: &HashMap<String, Entry>, id: &str) -> bool {
    map.get(id).is_some_and(|e| e.view.status.is_terminal())
}

fn unknown() -> RpcError {
    RpcError::invalid_params("Unknown taskId")
}

fn busy() -> RpcError {
    RpcError::internal("Server busy: too many tasks, try again later")
}

fn busy_caller() -> RpcError {
    RpcError::internal("Server busy: too many tasks for this caller, try again later")
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
                mirror: None,
                revs: AtomicU64::new(0),
                queue: OnceLock::new(),
                hands_off: std::sync::atomic::AtomicBool::new(false),
                changes: None,
                telemetry: super::telemetry::Telemetry::default(),
                max_tasks: max_tasks.max(1),
                max_running: max_running.max(1),
                per_caller: max_tasks.max(1),
                running_per_caller: max_running.max(1),
                input_wait: None,
                ttl,
                poll_interval,
                shares: OnceLock::new(),
            }),
        }
    }

    /// Each caller's share: at most `tasks` kept and `running` running of one caller, and a
    /// question of a task's call waits at most `input_wait` for its answer.
    pub(crate) fn with_shares(
        mut self,
        tasks: usize,
        running: usize,
        input_wait: Duration,
    ) -> Self {
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.per_caller = tasks.clamp(1, inner.max_tasks);
            inner.running_per_caller = running.clamp(1, inner.max_running);
            inner.input_wait = Some(input_wait);
        }
        self
    }

    /// Shares the tasks through `mirror` (and starts its loop).
    #[cfg_attr(not(feature = "redis"), allow(dead_code))]
    pub(crate) fn with_mirror(mut self, mirror: Arc<dyn TaskMirror>) -> Self {
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.mirror = Some(mirror.clone());
        }
        mirror.run(self.clone());
        self
    }

    /// Counts each caller's running tasks on every instance against its share.
    pub(crate) fn count_across(&self, shares: &Arc<super::shares::Shares>) {
        if self.inner.shares.set(shares.clone()).is_ok() {
            let held: Arc<dyn super::shares::Held> = self.inner.clone();
            shares.register("tasks", Arc::downgrade(&held));
        }
    }

    /// Announces task changes on `changes` (so listen streams hear of them).
    pub(crate) fn with_changes(mut self, changes: super::Changes) -> Self {
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.changes = Some(changes);
        }
        self
    }

    /// Counts status transitions through `t`.
    #[cfg(feature = "otel")]
    pub(crate) fn with_telemetry(mut self, t: super::telemetry::Telemetry) -> Self {
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.telemetry = t;
        }
        self
    }

    /// Mirrors a task's view, if a store is shared (the write's handle), and announces the
    /// change (and counts it when its status is new).
    fn mirror(&self, e: &Entry) -> Option<tokio::task::JoinHandle<bool>> {
        let status = e.view.status as u8;
        if self.inner.telemetry.is_on() && e.counted.swap(status, Ordering::Relaxed) != status {
            self.inner.telemetry.task(e.view.status.as_str());
        }
        if let Some(c) = &self.inner.changes {
            c.send(super::Change::Task(Arc::new(TaskNotice {
                view: e.view.clone(),
                owner: e.owner.clone(),
            })));
        }
        if let Some(m) = &self.inner.mirror {
            let keep = e.expires.saturating_duration_since(Instant::now())
                + Duration::from_millis(e.view.poll_interval_ms);
            let now = SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
                .min(FINAL_REV - 1);
            let rev = 1 + self.inner.revs.fetch_max(now, Ordering::Relaxed).max(now);
            self.inner.revs.fetch_max(rev, Ordering::Relaxed);
            let rt = tokio::runtime::Handle::try_current().ok()?;
            let mut stored = Stored::of(&e.view, &e.owner);
            stored.durable = e.work.is_some();
            stored.handed = stored.durable && self.hands_off();
            stored.given.clone_from(&e.given);
            let write = m.put(stored, rev, keep);
            let flush = e.flush.clone();
            flush.sent.fetch_max(rev, Ordering::AcqRel);
            return Some(rt.spawn(async move {
                let stored = write.await;
                flush
                    .settled
                    .send_if_modified(|r| (rev > *r).then(|| *r = rev).is_some());
                stored
            }));
        }
        None
    }

    /// The ids of the running tasks this instance runs (to mark them alive).
    #[cfg_attr(not(feature = "redis"), allow(dead_code))]
    pub(crate) fn running_ids(&self) -> Vec<String> {
        self.lock().map_or_else(
            |_| Vec::new(),
            |t| {
                t.values()
                    .filter(|e| !e.view.status.is_terminal())
                    .map(|e| e.view.id.clone())
                    .collect()
            },
        )
    }

    /// Every task this instance keeps (running, or ended within its TTL), oldest first: what
    /// an operator sees.
    pub fn list(&self) -> Vec<TaskView> {
        let mut all: Vec<TaskView> = self.lock().map_or_else(
            |_| Vec::new(),
            |t| {
                t.values()
                    .filter(|e| !expired(e))
                    .map(|e| e.view.clone())
                    .collect()
            },
        );
        all.sort_by_key(|v| v.created);
        all
    }

    /// Stops task `id` whoever started it (an operator's cancel): its call stops at its next
    /// suspension point and the task ends `cancelled`. Returns whether it was running here.
    pub fn stop(&self, id: &str) -> bool {
        let Some(owner) = self.owner_of(id) else {
            return false;
        };
        self.cancel_here(&owner, id).is_ok()
            && self
                .lock()
                .ok()
                .and_then(|t| t.get(id).map(|e| !e.view.status.is_terminal()))
                .unwrap_or(false)
    }

    /// The tasks of `owner` this instance keeps, oldest first (2025-11-25 `tasks/list`).
    pub fn list_of(&self, owner: &str) -> Vec<TaskView> {
        let mut all: Vec<TaskView> = self.lock().map_or_else(
            |_| Vec::new(),
            |t| {
                t.values()
                    .filter(|e| e.owner == owner && !expired(e))
                    .map(|e| e.view.clone())
                    .collect()
            },
        );
        all.sort_by_key(|v| v.created);
        all
    }

    /// Who owns task `id`, if this instance runs it (a remote answer or cancellation is then
    /// for it).
    #[cfg_attr(not(feature = "redis"), allow(dead_code))]
    pub(crate) fn owner_of(&self, id: &str) -> Option<String> {
        self.lock().ok()?.get(id).map(|e| e.owner.clone())
    }

    /// A task of another instance, from the shared store; one whose instance stopped is
    /// reported failed (and stored so).
    async fn remote(&self, owner: &str, id: &str) -> Result<TaskView, RpcError> {
        self.remote_record(owner, id).await.map(|(v, _)| v)
    }

    /// [`Self::remote`], and whether an instance runs the task now.
    async fn remote_record(&self, owner: &str, id: &str) -> Result<(TaskView, bool), RpcError> {
        let Some(mirror) = &self.inner.mirror else {
            return Err(unknown());
        };
        match mirror.get(id).await {
            Some((stored, alive)) if stored.owner == owner => {
                let durable = stored.durable;
                let mut v = stored.view();
                // A durable task whose instance stopped is still working: another instance
                // takes its work over.
                if !v.status.is_terminal() && !alive && !durable {
                    v.status = TaskStatus::Failed;
                    let m = "The instance running the task stopped";
                    v.status_message = Some(m.into());
                    v.error = Some(
                        serde_json::json!({"code": crate::codes::INTERNAL_ERROR, "message": m}),
                    );
                    v.input_requests.clear();
                    v.updated = SystemTime::now();
                    // Final: the client was told it failed, so a late write of the stopped
                    // instance must not bring it back.
                    let keep = Duration::from_millis(v.ttl_ms);
                    mirror.put(Stored::of(&v, owner), FINAL_REV, keep).await;
                }
                Ok((v, alive))
            }
            _ => Err(unknown()),
        }
    }

    /// Cancels a task this instance does not run. One that an instance runs is asked to stop
    /// there (and, `at_once`, is `cancelled` in the store now); one that no instance runs (a
    /// front queued it for the workers, or its instance stopped and no other has taken it
    /// yet) is `cancelled` in the store now, finally: the worker that finds its queue entry
    /// forgets it, and a run that took it meanwhile is asked to stop and cannot write over it.
    async fn cancel_remote(
        &self,
        owner: &str,
        id: &str,
        at_once: bool,
    ) -> Result<Cancelled, RpcError> {
        let (mut v, alive) = self.remote_record(owner, id).await?;
        let Some(mirror) = &self.inner.mirror else {
            return Err(unknown());
        };
        if v.status.is_terminal() {
            return Ok(Cancelled::Ended(v));
        }
        if alive && !at_once {
            mirror.cancel(id).await?;
            return Ok(Cancelled::Asked);
        }
        v.status = TaskStatus::Cancelled;
        v.status_message = Some("Cancelled by the client".into());
        v.input_requests.clear();
        v.updated = SystemTime::now();
        let keep = Duration::from_millis(v.ttl_ms);
        if !mirror.put(Stored::of(&v, owner), FINAL_REV, keep).await {
            return Err(RpcError::internal(
                "The task could not be cancelled (the shared store is unavailable); try again later",
            ));
        }
        // Stored: the task is cancelled whether this notice reaches a run or not.
        let _ = mirror.cancel(id).await;
        Ok(Cancelled::Now(v))
    }

    /// Stops task `id` wherever it is, whoever started it (an operator's cancel, with a shared
    /// store): as its owner's `tasks/cancel` would.
    #[cfg(feature = "redis")]
    pub(crate) async fn stop_anywhere(&self, id: &str) -> Result<Cancelled, RpcError> {
        if let Some(owner) = self.owner_of(id) {
            return self.cancel_local(&owner, id);
        }
        let Some(mirror) = &self.inner.mirror else {
            return Err(unknown());
        };
        let Some((stored, _)) = mirror.get(id).await else {
            return Err(unknown());
        };
        self.cancel_remote(&stored.owner, id, false).await
    }

    fn lock(&self) -> Result<std::sync::MutexGuard<'_, Table>, RpcError> {
        self.inner
            .tasks
            .lock()
            .map_err(|_| RpcError::internal("tasks unavailable"))
    }

    /// Starts a task for `owner` whose call stops when `cancel` is set, kept `ttl` (at most
    /// the engine's, which is the default); refused (-32603) when the bounds are reached, or
    /// when a shared store is configured and cannot keep it (nothing is acknowledged before it
    /// is stored). Expired tasks are dropped first.
    pub async fn create(
        &self,
        owner: &str,
        cancel: CancelSignal,
        ttl: Option<Duration>,
    ) -> Result<TaskView, RpcError> {
        let (view, written) = self.create_for(owner, None, cancel, ttl)?;
        self.stored(&view.id, written).await?;
        Ok(view)
    }

    /// Once a new task is in the shared store; when it cannot be, the task is dropped: it was
    /// never acknowledged. What becomes of its call is the caller's (a 2026-07-28 call runs on
    /// as a plain call; the others are refused before they start), so its signal is left as is.
    pub(crate) async fn stored(&self, id: &str, written: Written) -> Result<(), RpcError> {
        let stored = written.stored().await;
        if stored.is_err()
            && let Ok(mut tasks) = self.lock()
        {
            tasks.remove(id);
        }
        stored
    }

    /// [`Self::create`], counted against `caller`'s share, and the write that stores it: the
    /// task's id is answered only once [`Self::stored`] says it is stored. When a bound is
    /// reached a finished task gives way, oldest first (the caller's own when its share is
    /// full); only running tasks refuse one more. One pass over the tasks kept (at most [`crate::Limits::tasks`]).
    pub(crate) fn create_for(
        &self,
        owner: &str,
        caller: Option<&crate::context::Caller>,
        cancel: CancelSignal,
        ttl: Option<Duration>,
    ) -> Result<(TaskView, Written), RpcError> {
        self.create_entry(owner, caller, cancel, ttl, false)
    }

    /// A task whose call can be run again elsewhere: created, stored, and, with a work queue,
    /// its work (made by `work` from the task's id) queued, all before it is answered. Without
    /// a queue it is [`Self::create_for`] and [`Self::stored`].
    pub(crate) async fn accept(
        &self,
        owner: &str,
        caller: Option<&crate::context::Caller>,
        cancel: CancelSignal,
        ttl: Option<Duration>,
        work: impl FnOnce(&str) -> Work,
    ) -> Result<TaskView, RpcError> {
        let queue = self.inner.queue.get().cloned();
        let (view, written) = self.create_entry(owner, caller, cancel, ttl, queue.is_some())?;
        let mut dropped = Abandoned {
            tasks: self,
            id: Some(view.id.clone()),
        };
        let stored = self.stored(&view.id, written).await;
        let Some(queue) = queue.filter(|_| stored.is_ok()) else {
            dropped.id = None;
            return stored.map(|()| view);
        };
        let queued = queue.enqueue(&work(&view.id)).await;
        dropped.id = None;
        match queued {
            Ok(entry) => {
                if let Ok(mut tasks) = self.lock() {
                    if self.hands_off() {
                        // A worker runs it, and answers for it from the store meanwhile.
                        tasks.remove(&view.id);
                    } else if let Some(e) = tasks.get_mut(&view.id) {
                        e.work = Some(entry);
                    }
                }
                Ok(view)
            }
            Err(e) => {
                // Stored, but not queued: ended, so that no one waits on it.
                let m = "The task could not be queued (the shared store is unavailable)";
                self.finish(
                    &view.id,
                    TaskOutcome::Error(
                        serde_json::json!({"code": crate::codes::INTERNAL_ERROR, "message": m}),
                    ),
                );
                Err(e)
            }
        }
    }

    /// Runs taken-over work through this instance: task `work.task`, as the store has it, is
    /// kept here from now on, running again, and its queue entry is forgotten when it ends.
    /// The extras its call runs with (its caller, identity and attempt, and the signal that
    /// cancels it); an error when it ended meanwhile or is not stored.
    #[cfg_attr(not(feature = "redis"), allow(dead_code))]
    pub(crate) async fn adopt(&self, work: &Work) -> Result<crate::context::CallExtras, RpcError> {
        let cancel = CancelSignal::new();
        let caller = work.caller.as_deref().map(crate::context::Caller::from_key);
        let Some(mirror) = &self.inner.mirror else {
            return Err(unknown());
        };
        let Some((mut stored, _)) = mirror.get(&work.task).await else {
            return Err(unknown());
        };
        let owner = stored.owner.clone();
        // The answers its client gave the earlier runs: the same questions, asked again in
        // the same order, have the same keys and are answered at once.
        let mut given = work.given.clone();
        given.extend(std::mem::take(&mut stored.given));
        let mut view = stored.view();
        if view.status.is_terminal() {
            return Err(RpcError::invalid_params(format!(
                "Task {} has already ended",
                work.task
            )));
        }
        view.status = TaskStatus::Working;
        view.status_message = None;
        view.input_requests.clear();
        view.updated = SystemTime::now();
        let since = view.created.elapsed().unwrap_or_default();
        let ttl = Duration::from_millis(view.ttl_ms).saturating_sub(since);
        let entry = Entry {
            view,
            owner,
            caller: caller.clone(),
            expires: Instant::now() + ttl,
            cancel: cancel.clone(),
            answers: given.clone(),
            given,
            changed: Arc::default(),
            flush: Arc::default(),
            work: Some(work.entry.clone()),
            counted: UNCOUNTED.into(),
        };
        // Counted here as any task of its caller: run only where it fits (else it stays in
        // the queue, and the store's record is left as it is).
        let written = {
            let mut tasks = self.lock()?;
            self.admit(&mut tasks, caller.as_ref(), true)?;
            let written = Written(self.mirror(&entry));
            tasks.insert(work.task.clone(), entry);
            written
        };
        self.stored(&work.task, written).await?;
        Ok(crate::context::CallExtras {
            cancel: Some(cancel),
            caller,
            identity: work
                .identity
                .clone()
                .map(|(subject, scopes)| Arc::new(crate::context::Identity::new(subject, scopes))),
            attempt: work.attempt,
            language: work.language.as_deref().map(Arc::from),
            trace: work
                .trace
                .as_ref()
                .and_then(|(p, s)| crate::context::TraceParent::new(p, s.as_deref())),
            ..crate::context::CallExtras::default()
        })
    }

    /// Uses `queue` for the work of the tasks [`Self::accept`] creates; with `runner`, this
    /// instance runs work: its loop takes over the work of stopped instances (and, for a
    /// front that runs none, the work it queued). Without one, this instance is a front only:
    /// the tasks it accepts are queued for the workers and not run here.
    #[cfg_attr(not(feature = "redis"), allow(dead_code))]
    pub(crate) fn with_queue(&self, queue: Arc<dyn WorkQueue>, runner: Option<Arc<dyn Runner>>) {
        if self.inner.queue.set(queue.clone()).is_ok() {
            match runner {
                Some(runner) => queue.run(runner),
                None => self.inner.hands_off.store(true, Ordering::Release),
            }
        }
    }

    /// Whether accepted work is queued in a shared store (and this instance can be a worker).
    pub(crate) fn queued(&self) -> bool {
        self.inner.queue.get().is_some()
    }

    /// Whether the tasks this instance accepts are run by the workers, not here: the caller
    /// of [`Self::accept`] does not run the call.
    pub(crate) fn hands_off(&self) -> bool {
        self.inner.hands_off.load(Ordering::Acquire)
    }

    /// Whether one more running task of `caller` fits among `tasks`: this instance's ceiling
    /// ([`crate::Limits::tasks_running`]) and the caller's share of it, counted across
    /// instances; then, with `make_room`, the oldest finished task gives way when this
    /// instance, or this caller, keeps as many as it may. Expired tasks are forgotten first.
    fn admit(
        &self,
        tasks: &mut Table,
        caller: Option<&crate::context::Caller>,
        make_room: bool,
    ) -> Result<(), RpcError> {
        tasks.sweep(Instant::now());
        let (mine, mine_running) = caller
            .and_then(|c| tasks.callers.get(c))
            .map_or((0, 0), |h| (h.kept, h.running));
        let elsewhere = match (self.inner.shares.get(), caller) {
            (Some(shares), Some(c)) => shares.elsewhere("tasks", &c.to_string()),
            _ => 0,
        };
        if mine_running + elsewhere >= self.inner.running_per_caller {
            return Err(busy_caller());
        }
        if tasks.running >= self.inner.max_running {
            return Err(busy());
        }
        let give_way = if mine >= self.inner.per_caller {
            Some(tasks.first_ended(caller).ok_or_else(busy_caller)?)
        } else if tasks.len() >= self.inner.max_tasks {
            Some(tasks.first_ended(None).ok_or_else(busy)?)
        } else {
            None
        };
        if let Some(id) = give_way.filter(|_| make_room) {
            tasks.remove(&id);
        }
        Ok(())
    }

    /// Whether taken-over work of `caller` fits on this instance now (see [`Self::admit`]):
    /// work that does not is left in the queue, for this instance later or another one.
    #[cfg_attr(not(feature = "redis"), allow(dead_code))]
    pub(crate) fn has_room(&self, caller: Option<&crate::context::Caller>) -> bool {
        self.lock()
            .is_ok_and(|mut tasks| self.admit(&mut tasks, caller, false).is_ok())
    }

    fn create_entry(
        &self,
        owner: &str,
        caller: Option<&crate::context::Caller>,
        cancel: CancelSignal,
        ttl: Option<Duration>,
        durable: bool,
    ) -> Result<(TaskView, Written), RpcError> {
        let ttl = ttl.map_or(self.inner.ttl, |t| t.min(self.inner.ttl));
        let mut tasks = self.lock()?;
        let now = Instant::now();
        self.admit(&mut tasks, caller, true)?;
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
        let entry = Entry {
            view: view.clone(),
            owner: owner.to_owned(),
            caller: caller.cloned(),
            expires: now + ttl,
            cancel,
            answers: Map::new(),
            given: Map::new(),
            changed: Arc::default(),
            flush: Arc::default(),
            work: durable.then(String::new),
            counted: UNCOUNTED.into(),
        };
        let written = Written(self.mirror(&entry));
        tasks.insert(id, entry);
        Ok((view, written))
    }

    /// The task `id` as `owner` may see it (from the shared store when another instance runs
    /// it); -32602 for an unknown id or another owner's task.
    pub async fn get(&self, owner: &str, id: &str) -> Result<TaskView, RpcError> {
        match self.local(owner, id)? {
            Some((v, flush)) => {
                // Told here, readable everywhere: the state answered is stored first.
                if self.inner.mirror.is_some() {
                    flush.settled().await;
                }
                Ok(v)
            }
            None => self.remote(owner, id).await,
        }
    }

    /// The task `id` if this instance has it, and how far its writes have come; -32602 for
    /// another owner's.
    fn local(&self, owner: &str, id: &str) -> Result<Option<(TaskView, Arc<Flush>)>, RpcError> {
        let tasks = self.lock()?;
        match tasks.get(id) {
            Some(e) if e.owner == owner && !expired(e) => {
                Ok(Some((e.view.clone(), e.flush.clone())))
            }
            Some(_) => Err(unknown()),
            None => Ok(None),
        }
    }

    /// Records the client's answers (`tasks/update`): keys the task does not wait on are
    /// ignored; answered keys leave `inputRequests`.
    pub async fn answer(
        &self,
        owner: &str,
        id: &str,
        answers: Map<String, Value>,
    ) -> Result<(), RpcError> {
        if self.local(owner, id)?.is_none() {
            // Another instance runs it: checked there is such a task, then handed over.
            self.remote(owner, id).await?;
            if let Some(m) = &self.inner.mirror {
                m.answer(id, answers).await?;
            }
            return Ok(());
        }
        self.answer_here(owner, id, answers)
    }

    /// [`Self::answer`] for a task this instance runs.
    pub(crate) fn answer_here(
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
                if e.work.is_some() {
                    e.given.insert(k.clone(), v.clone());
                }
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
            self.mirror(e);
        }
        Ok(())
    }

    /// Asks the task's call to stop (`tasks/cancel`), wherever it runs; a task no instance
    /// runs (queued for a worker, or left by a stopped instance) is `cancelled` at once; a
    /// finished task is left as it is.
    pub async fn cancel(&self, owner: &str, id: &str) -> Result<(), RpcError> {
        if self.local(owner, id)?.is_none() {
            return self.cancel_remote(owner, id, false).await.map(drop);
        }
        self.cancel_here(owner, id)
    }

    /// [`Self::cancel_here`], saying what became of the task.
    fn cancel_local(&self, owner: &str, id: &str) -> Result<Cancelled, RpcError> {
        let tasks = self.lock()?;
        match tasks.get(id) {
            Some(e) if e.owner == owner && !expired(e) => {
                if e.view.status.is_terminal() {
                    return Ok(Cancelled::Ended(e.view.clone()));
                }
                e.cancel.cancel();
                Ok(Cancelled::Asked)
            }
            _ => Err(unknown()),
        }
    }

    /// [`Self::cancel`] for a task this instance runs.
    pub(crate) fn cancel_here(&self, owner: &str, id: &str) -> Result<(), RpcError> {
        self.cancel_local(owner, id).map(drop)
    }

    /// Cancels a running task at once (2025-11-25 `tasks/cancel`), wherever it runs: its
    /// status is `cancelled` now, and its call stops at its next suspension point; a finished
    /// task is -32602.
    pub async fn cancel_now(&self, owner: &str, id: &str) -> Result<TaskView, RpcError> {
        let ended = |v: &TaskView| {
            RpcError::invalid_params(format!(
                "Task {id} has already ended ({})",
                v.status.as_str()
            ))
        };
        if self.local(owner, id)?.is_none() {
            return match self.cancel_remote(owner, id, true).await? {
                Cancelled::Now(v) => Ok(v),
                Cancelled::Ended(v) => Err(ended(&v)),
                // Not made without `at_once`.
                Cancelled::Asked => Err(unknown()),
            };
        }
        let mut tasks = self.lock()?;
        let e = match tasks.get_mut(id) {
            Some(e) if e.owner == owner && !expired(e) => e,
            _ => return Err(unknown()),
        };
        if e.view.status.is_terminal() {
            return Err(ended(&e.view));
        }
        e.cancel.cancel();
        e.view.status = TaskStatus::Cancelled;
        e.view.status_message = Some("Cancelled by the client".into());
        e.view.input_requests.clear();
        e.view.updated = SystemTime::now();
        e.changed.notify_waiters();
        let write = self.mirror(e);
        self.forget_work(e, write);
        let view = e.view.clone();
        tasks.ended_now(id);
        Ok(view)
    }

    /// Waits until task `id` has ended (2025-11-25 `tasks/result`).
    pub async fn ended(&self, owner: &str, id: &str) -> Result<TaskView, RpcError> {
        self.until(owner, id, |v| v.status.is_terminal()).await
    }

    /// Waits until task `id` is as `done` wants it (ended, or asking something new), and
    /// answers it as it then is.
    pub(crate) async fn until(
        &self,
        owner: &str,
        id: &str,
        done: impl Fn(&TaskView) -> bool,
    ) -> Result<TaskView, RpcError> {
        loop {
            let changed = {
                let tasks = self.lock()?;
                match tasks.get(id) {
                    Some(e) if e.owner == owner && !expired(e) => {
                        if done(&e.view) {
                            Err((e.view.clone(), e.flush.clone()))
                        } else {
                            Ok(Some(e.changed.clone()))
                        }
                    }
                    Some(_) => return Err(unknown()),
                    None => Ok(None),
                }
            };
            let changed = match changed {
                Ok(Some(changed)) => changed,
                Ok(None) => return self.until_remote(owner, id, done).await,
                Err((view, flush)) => {
                    // Told here, readable everywhere: the state answered is stored first.
                    if self.inner.mirror.is_some() {
                        flush.settled().await;
                    }
                    return Ok(view);
                }
            };
            // Registered before the state is read again, so a change in between is not missed.
            let notified = changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.local(owner, id)?.is_some_and(|(v, _)| done(&v)) {
                continue;
            }
            notified.await;
        }
    }

    /// [`Self::until`] for a task of another instance: polled in the shared store.
    async fn until_remote(
        &self,
        owner: &str,
        id: &str,
        done: impl Fn(&TaskView) -> bool,
    ) -> Result<TaskView, RpcError> {
        loop {
            let v = self.remote(owner, id).await?;
            if done(&v) {
                return Ok(v);
            }
            tokio::time::sleep(Duration::from_millis(v.poll_interval_ms.max(50))).await;
        }
    }

    /// The call of task `id` waits for the client's answer to `request` under `key`: the task
    /// is `input_required` until it comes (or the call is cancelled, which drops this), for at
    /// most the engine's input wait; then the question is withdrawn and the call gets -32500.
    pub async fn ask(&self, id: &str, key: &str, request: Value) -> Result<Value, RpcError> {
        let deadline = self
            .inner
            .input_wait
            .map(|w| (w, tokio::time::Instant::now() + w));
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
                    // Wakes whoever relays the task's questions (2025-11-25 `tasks/result`).
                    e.changed.notify_waiters();
                    self.mirror(e);
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
            match deadline {
                None => notified.await,
                Some((wait, at)) => {
                    if tokio::time::timeout_at(at, notified).await.is_err() {
                        self.withdraw(id, key);
                        return Err(RpcError::runtime(format!(
                            "the client did not answer `{key}` within {} ms",
                            wait.as_millis()
                        )));
                    }
                }
            }
        }
    }

    /// Takes back a question nobody answered in time: the task works on (its call decides
    /// what the missing answer means).
    fn withdraw(&self, id: &str, key: &str) {
        let Ok(mut tasks) = self.lock() else {
            return;
        };
        let Some(e) = tasks.get_mut(id) else {
            return;
        };
        if e.view.input_requests.remove(key).is_some() {
            if e.view.input_requests.is_empty() && e.view.status == TaskStatus::InputRequired {
                e.view.status = TaskStatus::Working;
            }
            e.view.updated = SystemTime::now();
            e.changed.notify_waiters();
            self.mirror(e);
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
        let was_running = !e.view.status.is_terminal();
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
        if was_running {
            // Final from here on: the table keeps ended tasks by when they expire.
            e.expires = e.expires.max(floor);
        }
        e.changed.notify_waiters();
        let write = self.mirror(e);
        self.forget_work(e, write);
        if was_running {
            tasks.ended_now(id);
        }
    }

    /// An ended task's queue entry is forgotten, once the write of its end has settled.
    fn forget_work(&self, e: &mut Entry, write: Option<tokio::task::JoinHandle<bool>>) {
        let (Some(queue), Some(entry)) = (
            self.inner.queue.get(),
            e.work.take().filter(|w| !w.is_empty()),
        ) else {
            return;
        };
        let done = queue.done(entry);
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move {
                if let Some(w) = write {
                    let _ = w.await;
                }
                done.await;
            });
        }
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

    /// A shared store whose writes succeed or not, each after a delay.
    struct Store {
        ok: bool,
        delay: Duration,
        stored: Arc<Mutex<Vec<String>>>,
        /// A task another instance ran, whose heartbeat lapsed.
        orphan: Option<Stored>,
        /// The answers the last write kept.
        given: Arc<Mutex<Map<String, Value>>>,
    }

    impl TaskMirror for Store {
        fn put(&self, task: Stored, _rev: u64, _keep: Duration) -> BoxFuture<'static, bool> {
            let (ok, delay, stored) = (self.ok, self.delay, self.stored.clone());
            let given = self.given.clone();
            Box::pin(async move {
                tokio::time::sleep(delay).await;
                if ok {
                    *given.lock().unwrap() = task.given;
                    stored.lock().unwrap().push(task.status);
                }
                ok
            })
        }
        fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Option<(Stored, bool)>> {
            let found = self.orphan.clone().filter(|o| o.id == id);
            Box::pin(async move { found.map(|o| (o, false)) })
        }
        fn answer<'a>(
            &'a self,
            _: &'a str,
            _: Map<String, Value>,
        ) -> BoxFuture<'a, Result<(), RpcError>> {
            Box::pin(async { Ok(()) })
        }
        fn cancel<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<(), RpcError>> {
            Box::pin(async { Ok(()) })
        }
        fn run(&self, _: Tasks) {}
    }

    fn shared(ok: bool) -> (Tasks, Arc<Mutex<Vec<String>>>) {
        let stored = Arc::default();
        let store = Store {
            ok,
            delay: Duration::from_millis(50),
            stored: Arc::clone(&stored),
            orphan: None,
            given: Arc::default(),
        };
        (engine().with_mirror(Arc::new(store)), stored)
    }

    #[tokio::test]
    async fn a_task_is_answered_once_stored_and_a_state_once_its_write_settled() {
        let (t, stored) = shared(true);
        let signal = CancelSignal::new();
        let v = t.create("", signal.clone(), None).await.unwrap();
        assert_eq!(
            *stored.lock().unwrap(),
            ["working"],
            "stored before it was answered"
        );
        t.finish(&v.id, TaskOutcome::Result(json!({})));
        let got = t.get("", &v.id).await.unwrap();
        assert_eq!(got.status, TaskStatus::Completed);
        assert_eq!(
            *stored.lock().unwrap(),
            ["working", "completed"],
            "the state answered is stored"
        );
        assert!(!signal.is_cancelled());
    }

    #[tokio::test]
    async fn a_task_the_store_cannot_take_is_never_acknowledged() {
        let (t, stored) = shared(false);
        let signal = CancelSignal::new();
        let e = t.create("", signal.clone(), None).await.unwrap_err();
        assert_eq!(e.code(), crate::codes::INTERNAL_ERROR);
        assert!(
            e.message().contains("could not be stored"),
            "{}",
            e.message()
        );
        assert!(
            !signal.is_cancelled(),
            "its call is the caller's to run or not"
        );
        assert!(t.list().is_empty(), "and it is gone");
        assert!(stored.lock().unwrap().is_empty());
    }

    #[tokio::test]
    async fn a_task_is_seen_by_its_owner_only_and_ends_with_its_outcome() {
        let t = engine();
        let v = t.create("ann", CancelSignal::new(), None).await.unwrap();
        assert_eq!(v.status, TaskStatus::Working);
        assert_eq!(v.id.len(), 32);
        assert_eq!(t.get("bob", &v.id).await.unwrap_err().code(), -32602);
        assert_eq!(t.get("ann", "nope").await.unwrap_err().code(), -32602);
        t.finish(&v.id, TaskOutcome::Result(json!({"content": []})));
        let got = t.get("ann", &v.id).await.unwrap();
        assert_eq!(got.status, TaskStatus::Completed);
        assert_eq!(got.result, Some(json!({"content": []})));
    }

    #[tokio::test]
    async fn bounds_refuse_one_more_task() {
        let t = engine();
        let a = t.create("", CancelSignal::new(), None).await.unwrap();
        t.create("", CancelSignal::new(), None).await.unwrap();
        // Two running: the third is refused.
        assert_eq!(
            t.create("", CancelSignal::new(), None)
                .await
                .unwrap_err()
                .code(),
            -32603
        );
        t.finish(&a.id, TaskOutcome::Cancelled);
        t.create("", CancelSignal::new(), None).await.unwrap();
        // Three kept: the fourth is refused until one expires.
        assert_eq!(
            t.create("", CancelSignal::new(), None)
                .await
                .unwrap_err()
                .code(),
            -32603
        );
    }

    #[test]
    fn a_caller_holds_its_share_and_finished_tasks_give_way() {
        use crate::context::Caller;
        // 4 kept, 3 running; a caller's share is 2 kept, 2 running.
        let t = Tasks::new(4, 3, Duration::from_secs(3600), Duration::from_millis(500))
            .with_shares(2, 2, Duration::from_secs(1));
        let (flood, other) = (Caller::address([6, 6, 6, 6].into()), Caller::subject("ann"));
        let new = |who: &Caller| {
            t.create_for("", Some(who), CancelSignal::new(), None)
                .map(|(v, _)| v)
        };
        let a = new(&flood).unwrap();
        let b = new(&flood).unwrap();
        // The flooder's two run: its third is refused, and another caller is served.
        assert_eq!(
            new(&flood).unwrap_err().message(),
            "Server busy: too many tasks for this caller, try again later"
        );
        let c = new(&other).unwrap();
        // A finished task of its own gives way to the flooder's next (its share is full).
        t.finish(&a.id, TaskOutcome::Result(json!(1)));
        let d = new(&flood).unwrap();
        assert!(t.owner_of(&a.id).is_none(), "the oldest finished gave way");
        assert!(t.owner_of(&b.id).is_some());
        // The ceiling of 4 kept: with 3 running (b, c, d) and none finished, another running
        // task is refused by the running ceiling; once c finishes, the oldest finished (c) gives
        // way to a new caller's task instead of a refusal.
        let third = Caller::subject("bob");
        assert_eq!(
            new(&third).unwrap_err().message(),
            "Server busy: too many tasks, try again later"
        );
        t.finish(&c.id, TaskOutcome::Result(json!(2)));
        new(&third).unwrap();
        new(&third).unwrap_err();
        t.finish(&d.id, TaskOutcome::Cancelled);
        new(&third).unwrap();
        assert_eq!(t.list().len(), 4, "never more than the ceiling kept");
    }

    #[tokio::test(start_paused = true)]
    async fn an_unanswered_question_is_withdrawn_after_the_input_wait() {
        let t = engine().with_shares(3, 2, Duration::from_secs(120));
        let v = t.create("", CancelSignal::new(), None).await.unwrap();
        let e = t
            .ask(&v.id, "name", json!({"method": "roots/list"}))
            .await
            .unwrap_err();
        assert_eq!(e.code(), -32500);
        assert_eq!(
            e.message(),
            "the client did not answer `name` within 120000 ms"
        );
        let now = t.get("", &v.id).await.unwrap();
        assert_eq!(now.status, TaskStatus::Working);
        assert!(now.input_requests.is_empty());
    }

    #[tokio::test]
    async fn a_question_waits_for_its_answer_and_extra_keys_are_ignored() {
        let t = engine();
        let v = t.create("", CancelSignal::new(), None).await.unwrap();
        let asking = {
            let (t, id) = (t.clone(), v.id.clone());
            tokio::spawn(async move { t.ask(&id, "name", json!({"method": "roots/list"})).await })
        };
        while t.get("", &v.id).await.unwrap().status != TaskStatus::InputRequired {
            tokio::task::yield_now().await;
        }
        assert_eq!(
            t.get("", &v.id).await.unwrap().input_requests,
            json!({"name": {"method": "roots/list"}})
                .as_object()
                .unwrap()
                .clone()
        );
        let mut answers = Map::new();
        answers.insert("other".into(), json!(1));
        t.answer("", &v.id, answers).await.unwrap();
        assert_eq!(
            t.get("", &v.id).await.unwrap().status,
            TaskStatus::InputRequired
        );
        let mut answers = Map::new();
        answers.insert("name".into(), json!({"roots": []}));
        t.answer("", &v.id, answers).await.unwrap();
        assert_eq!(asking.await.unwrap().unwrap(), json!({"roots": []}));
        assert_eq!(t.get("", &v.id).await.unwrap().status, TaskStatus::Working);
    }

    #[tokio::test]
    async fn an_operator_lists_every_task_and_stops_any() {
        let t = engine();
        let signal = CancelSignal::new();
        let a = t.create("ann", signal.clone(), None).await.unwrap();
        let b = t.create("bob", CancelSignal::new(), None).await.unwrap();
        t.finish(&b.id, TaskOutcome::Cancelled);
        let ids: Vec<String> = t.list().into_iter().map(|v| v.id).collect();
        assert_eq!(ids.len(), 2);
        assert!(ids.contains(&a.id) && ids.contains(&b.id));
        assert!(t.stop(&a.id));
        assert!(signal.is_cancelled());
        assert!(!t.stop(&b.id), "already ended");
        assert!(!t.stop("nope"));
    }

    #[tokio::test]
    async fn cancel_sets_the_signal_of_a_running_task_only() {
        let t = engine();
        let signal = CancelSignal::new();
        let v = t.create("", signal.clone(), None).await.unwrap();
        t.cancel("", &v.id).await.unwrap();
        assert!(signal.is_cancelled());
        assert_eq!(t.cancel("", "nope").await.unwrap_err().code(), -32602);
    }

    /// A task that runs, made a moment ago, its id 32 times `c`.
    fn working(c: &str) -> TaskView {
        let at = SystemTime::now();
        TaskView {
            id: c.repeat(32),
            status: TaskStatus::Working,
            status_message: None,
            created: at,
            updated: at,
            ttl_ms: 60_000,
            poll_interval_ms: 500,
            input_requests: Map::new(),
            result: None,
            error: None,
        }
    }

    /// The work of task `id`, as another instance finds it to run again (its second run).
    fn taken_over(id: &str, era: &str) -> Work {
        Work {
            task: id.to_owned(),
            group: "g".into(),
            version: 1,
            era: era.into(),
            params: json!({}),
            owner: String::new(),
            caller: None,
            identity: None,
            callback: None,
            trace: None,
            caps: None,
            language: None,
            given: Map::new(),
            entry: "1-0".into(),
            attempt: 2,
        }
    }

    #[tokio::test]
    async fn taken_over_work_counts_against_this_instance_and_its_callers_share() {
        use crate::context::Caller;
        let flood = Caller::address([6, 6, 6, 6].into());
        let orphan = working("f");
        let stored = Arc::new(Mutex::new(Vec::new()));
        let store = Store {
            ok: true,
            delay: Duration::ZERO,
            stored: Arc::clone(&stored),
            orphan: Some(Stored::of(&orphan, "")),
            given: Arc::default(),
        };
        // 4 kept, 3 running; a caller's share is 3 kept, 2 running.
        let t = Tasks::new(4, 3, Duration::from_secs(60), Duration::from_millis(500))
            .with_shares(3, 2, Duration::from_secs(1))
            .with_mirror(Arc::new(store));
        let mut created = Vec::new();
        for _ in 0..2 {
            let (v, written) = t
                .create_for("", Some(&flood), CancelSignal::new(), None)
                .unwrap();
            t.stored(&v.id, written).await.unwrap();
            created.push(v);
        }
        let a = &created[0];
        let work = Work {
            caller: Some(flood.to_string()),
            language: Some("uk".into()),
            ..taken_over(&orphan.id, "2025-11-25")
        };
        // The caller runs its share here already: its stopped instance's task waits, and its
        // record is left as it was.
        assert!(!t.has_room(Some(&flood)));
        assert_eq!(
            t.adopt(&work).await.unwrap_err().message(),
            "Server busy: too many tasks for this caller, try again later"
        );
        assert_eq!(t.list().len(), 2);
        assert_eq!(stored.lock().unwrap().len(), 2, "only the two created");
        // One of its tasks ends: the work fits, and runs here from now on.
        t.finish(&a.id, TaskOutcome::Result(json!(1)));
        assert!(t.has_room(Some(&flood)));
        let extras = t.adopt(&work).await.unwrap();
        assert_eq!(
            extras.language.as_deref(),
            Some("uk"),
            "the first run's language"
        );
        assert_eq!((extras.attempt, extras.caller), (2, Some(flood.clone())));
        assert_eq!(t.list().len(), 3);
        // And it is counted: the caller's share is full again.
        assert!(!t.has_room(Some(&flood)));
    }
    #[tokio::test]
    async fn a_run_taken_over_is_given_the_answers_of_the_earlier_runs() {
        let orphan = working("e");
        let mut record = Stored::of(&orphan, "");
        // Answered through the task on the stopped instance.
        record
            .given
            .insert("confirm-2".into(), json!({"action": "accept"}));
        let given = Arc::new(Mutex::new(Map::new()));
        let store = Store {
            ok: true,
            delay: Duration::ZERO,
            stored: Arc::default(),
            orphan: Some(record),
            given: Arc::clone(&given),
        };
        let t = engine().with_mirror(Arc::new(store));
        let mut rounds = Map::new();
        rounds.insert("name-1".into(), json!("Ann"));
        let work = Work {
            caps: Some(json!({"elicitation": {}})),
            // Answered in a round before the call became a task.
            given: rounds,
            ..taken_over(&orphan.id, "2026-07-28")
        };
        t.adopt(&work).await.unwrap();
        let id = orphan.id.as_str();
        let soon = |f| tokio::time::timeout(Duration::from_secs(1), f);
        // Asked again in the same order: answered at once, nothing asked of the client.
        let q = json!({"method": "elicitation/create"});
        assert_eq!(
            soon(t.ask(id, "name-1", q.clone())).await.unwrap().unwrap(),
            json!("Ann")
        );
        assert_eq!(
            soon(t.ask(id, "confirm-2", q.clone()))
                .await
                .unwrap()
                .unwrap(),
            json!({"action": "accept"})
        );
        assert!(t.get("", id).await.unwrap().input_requests.is_empty());
        // A new question waits for the client; its answer is kept with the others.
        let asking = tokio::spawn({
            let (t, id, q) = (t.clone(), id.to_owned(), q.clone());
            async move { t.ask(&id, "confirm-3", q).await }
        });
        while t.get("", id).await.unwrap().status != TaskStatus::InputRequired {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let mut answer = Map::new();
        answer.insert("confirm-3".into(), json!({"action": "decline"}));
        t.answer("", id, answer).await.unwrap();
        assert_eq!(asking.await.unwrap().unwrap(), json!({"action": "decline"}));
        t.get("", id).await.unwrap();
        let mut kept: Vec<String> = given.lock().unwrap().keys().cloned().collect();
        kept.sort();
        assert_eq!(kept, ["confirm-2", "confirm-3", "name-1"]);
    }
    #[tokio::test]
    async fn a_task_whose_acceptance_is_dropped_half_way_ends_cancelled() {
        // Two run at most.
        let (t, stored) = shared(true);
        for _ in 0..2 {
            // The request's future is dropped while its task's record is being written.
            let accept = t.accept("", None, CancelSignal::new(), None, |_: &str| -> Work {
                unreachable!("no queue")
            });
            assert!(
                tokio::time::timeout(Duration::from_millis(10), accept)
                    .await
                    .is_err()
            );
        }
        let all = t.list();
        assert_eq!(all.len(), 2);
        for v in &all {
            assert_eq!(v.status, TaskStatus::Cancelled);
            t.get("", &v.id).await.unwrap();
        }
        let mut writes = stored.lock().unwrap().clone();
        writes.sort();
        assert_eq!(writes, ["cancelled", "cancelled", "working", "working"]);
        // Neither runs: the places they took are free again.
        assert!(t.has_room(None));
    }
    /// What the table counts, counted again from its entries.
    fn recount(t: &Tasks) {
        let table = t.lock().unwrap();
        let running = table.values().filter(|e| !e.view.status.is_terminal());
        assert_eq!(table.running, running.count());
        let mut callers: HashMap<&crate::context::Caller, (usize, usize)> = HashMap::new();
        for e in table.values() {
            if let Some(c) = &e.caller {
                let held = callers.entry(c).or_default();
                held.0 += 1;
                held.1 += usize::from(!e.view.status.is_terminal());
            }
        }
        assert_eq!(
            table.callers.len(),
            callers.len(),
            "no caller kept for nothing"
        );
        for (c, (kept, running)) in callers {
            let held = &table.callers[c];
            assert_eq!((held.kept, held.running), (kept, running), "{c}");
            for e in table.values().filter(|e| e.caller.as_ref() == Some(c)) {
                if e.view.status.is_terminal() {
                    assert!(
                        held.ended.contains(&e.view.id),
                        "its ended ones can give way"
                    );
                }
            }
        }
        for e in table.values().filter(|e| e.view.status.is_terminal()) {
            assert!(
                table.ended.contains(&e.view.id),
                "every ended one can give way"
            );
        }
        let ended: BTreeSet<(Instant, String)> = table
            .values()
            .filter(|e| e.view.status.is_terminal())
            .map(|e| (e.expires, e.view.id.clone()))
            .collect();
        assert_eq!(table.expiring, ended, "every ended one expires");
        // What is gone does not pile up.
        assert!(
            table.ended.len() <= 2 * table.len() + 17,
            "{}",
            table.ended.len()
        );
        for held in table.callers.values() {
            assert!(held.ended.len() <= 2 * held.kept + 17);
        }
    }

    #[tokio::test]
    async fn the_counts_the_bounds_read_follow_every_change() {
        use crate::context::Caller;
        // 12 kept and 6 running; a caller's share is 4 kept, 2 running.
        let t = Tasks::new(12, 6, Duration::from_secs(60), Duration::from_millis(500)).with_shares(
            4,
            2,
            Duration::from_secs(1),
        );
        let callers: Vec<Caller> = (0..5)
            .map(|i| Caller::address([10, 0, 0, i].into()))
            .collect();
        // The running ones.
        let mut ids: Vec<String> = Vec::new();
        let (mut created, mut refused) = (0, 0);
        // A small generator of its own: the same run every time.
        let mut r: u64 = 7;
        for _ in 0..3_000 {
            r = r
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let pick = usize::try_from(r >> 33).unwrap();
            match pick % 4 {
                0 | 1 => {
                    let who = (pick % 6 < 5).then(|| &callers[pick % 5]);
                    match t.create_for("", who, CancelSignal::new(), None) {
                        Ok((v, _)) => {
                            ids.push(v.id);
                            created += 1;
                        }
                        Err(_) => refused += 1,
                    }
                }
                // One that runs ends; now and then, one that has ended already is told again.
                2 if !ids.is_empty() => {
                    let id = ids.swap_remove(pick % ids.len());
                    t.finish(&id, TaskOutcome::Result(json!(1)));
                    if pick % 5 == 0 {
                        t.finish(&id, TaskOutcome::Result(json!(2)));
                    }
                }
                _ if !ids.is_empty() => {
                    let id = ids.swap_remove(pick % ids.len());
                    t.cancel_now("", &id).await.unwrap();
                    if pick % 5 == 0 {
                        assert!(t.cancel_now("", &id).await.is_err());
                    }
                }
                _ => {}
            }
            recount(&t);
            assert!(t.lock().unwrap().len() <= 12);
        }
        assert!(
            created > 500 && refused > 100,
            "{created} created, {refused} refused"
        );
        // One caller's tasks give way to its next ones for long, behind another's that ended
        // before them and stays.
        for id in ids.drain(..) {
            t.finish(&id, TaskOutcome::Result(json!(1)));
        }
        let (v, _) = t
            .create_for("", Some(&callers[1]), CancelSignal::new(), None)
            .unwrap();
        t.finish(&v.id, TaskOutcome::Result(json!(1)));
        for _ in 0..2_000 {
            let (v, _) = t
                .create_for("", Some(&callers[0]), CancelSignal::new(), None)
                .unwrap();
            t.finish(&v.id, TaskOutcome::Result(json!(1)));
        }
        recount(&t);
    }
    #[tokio::test]
    async fn an_ended_task_expires_at_its_own_time_whatever_ended_before_it() {
        // Polled every 10 ms: an ended task is kept at least that long.
        let t = Tasks::new(10, 10, Duration::from_secs(60), Duration::from_millis(10));
        let (long, _) = t.create_for("", None, CancelSignal::new(), None).unwrap();
        t.finish(&long.id, TaskOutcome::Result(json!(1)));
        let short = Some(Duration::from_millis(30));
        let (brief, _) = t.create_for("", None, CancelSignal::new(), short).unwrap();
        t.finish(&brief.id, TaskOutcome::Result(json!(2)));
        tokio::time::sleep(Duration::from_millis(80)).await;
        // The next task's admission forgets the one whose time is up, not the one before it.
        let _next = t.create_for("", None, CancelSignal::new(), None).unwrap();
        let table = t.lock().unwrap();
        assert!(table.contains_key(&long.id));
        assert!(!table.contains_key(&brief.id));
    }
}
