//! MCP tasks on 2026-07-28: the `io.modelcontextprotocol/tasks` extension (SEP-2663).
//!
//! A tool declared `#[mcp_tool(task = "optional" | "required")]`, called by a client that
//! declares the extension on the request, runs until it first waits: a call that finishes
//! before (or that asks its client first, as a multi-round-trip result) is answered as usual;
//! one that waits becomes a task, answered `resultType: "task"` at once while it runs on. The
//! client polls it with `tasks/get`, answers its questions with `tasks/update` and stops it
//! with `tasks/cancel`. A tool error completes the task (`result.isError: true`); a protocol
//! error (a panic, a time limit: -32603) fails it. The engine is [`crate::core::Tasks`].

use std::sync::{Arc, OnceLock};
use std::task::Poll;

use futures_util::future::BoxFuture;
use serde_json::{Map, Value, json};

use super::handler::{Answer, McpEndpoint, Message};
use super::input::{Round, check_answer, missing_capability, supports};
use super::protocol::{Era, TASKS_EXTENSION, TaskForm};
use crate::context::{CallExtras, CancelSignal, ClientInput, InputRequest};
use crate::core::tasks::Work;
use crate::core::{TaskOutcome, TaskStatus, TaskView, Tasks};
use crate::error::{RpcError, codes};
use crate::record::TaskSupport;
use crate::wire::{self, Id};

impl McpEndpoint {
    /// What it takes to run a `tools/call` again on another instance, made once it is a task
    /// (its id is known then).
    fn work(
        &self,
        era: Era,
        msg: &Message,
        owner: &str,
        extras: &CallExtras,
        caps: Option<Value>,
        given: Map<String, Value>,
    ) -> impl FnOnce(&str) -> Work + use<> {
        let (group, version) = (self.catalog.group().name(), self.catalog.version());
        let params = msg.params.clone().unwrap_or(Value::Null);
        let owner = owner.to_owned();
        let caller = extras.caller.as_ref().map(ToString::to_string);
        let language = extras.language.as_deref().map(str::to_owned);
        let identity = extras
            .identity
            .as_ref()
            .map(|i| (i.subject.clone(), i.scopes.clone()));
        let trace = msg
            .meta()
            .trace()
            .or_else(|| extras.trace.clone())
            .map(|t| {
                (
                    t.traceparent().to_owned(),
                    t.tracestate().map(str::to_owned),
                )
            });
        move |task| Work {
            task: task.to_owned(),
            group: group.to_owned(),
            version,
            era: era.version().to_owned(),
            params,
            owner,
            caller,
            identity,
            callback: None,
            trace,
            caps,
            language,
            given,
            entry: String::new(),
            attempt: 1,
        }
    }

    /// Runs a task's call again, here, after the instance running it stopped: the task is
    /// kept here from now on and ends with this run's outcome. It asks its client through the
    /// task (where its client could be asked at all), and the questions the earlier runs had
    /// answers to are answered at once with them.
    #[cfg_attr(not(feature = "redis"), allow(dead_code))]
    pub(crate) async fn take_over(self: Arc<Self>, work: Work) {
        let Some(era) = Era::of(&work.era) else {
            return;
        };
        let tasks = self.core.tasks().clone();
        let mut extras = match tasks.adopt(&work).await {
            Ok(extras) => extras,
            Err(e) => {
                tracing::debug!(task = work.task, error = %e.message(), "not taken over");
                return;
            }
        };
        let cancel = extras.cancel.clone().unwrap_or_default();
        extras.input = work.caps.clone().map(|caps| {
            Arc::new(HandshakeTaskInput {
                caps,
                tasks: tasks.clone(),
                id: work.task.clone(),
            }) as Arc<dyn ClientInput>
        });
        // `#[mcp_tool(retry = false)]`: its effects must not happen twice, so it ends here.
        let tool = work.params.get("name").and_then(Value::as_str);
        if let Some(info) = tool.and_then(|t| self.catalog.get(t))
            && !info.def.retry
        {
            let m = format!(
                "The instance running the task stopped, and tool '{}' is not run again (retry = false)",
                info.name()
            );
            tasks.finish(
                &work.task,
                TaskOutcome::Error(json!({"code": codes::INTERNAL_ERROR, "message": m})),
            );
            return;
        }
        let mut msg = Message::call("tools/call", Some(work.params));
        let (answer, failure) = self.handle_traced(&mut msg, era, &mut extras).await;
        tasks.finish(&work.task, task_outcome(era, &cancel, answer, failure));
    }

    /// Whose a task of this call is ([`crate::core::tasks::owner`]): on this endpoint, the
    /// caller's subject, else its session, else whoever knows the id.
    pub(crate) fn task_owner(&self, extras: &CallExtras) -> String {
        crate::core::tasks::owner(
            &self.catalog,
            extras.identity.as_deref(),
            extras.session.as_deref(),
            false,
        )
    }
}

/// Whether a call's tasks belong to nobody in particular (no identity, no session).
fn anonymous(extras: &CallExtras) -> bool {
    extras.identity.is_none() && extras.session.is_none()
}

/// The members of a 2025-11-25 task notification (`notifications/tasks/status`): the flat task.
pub(crate) fn status_members(v: &TaskView) -> Map<String, Value> {
    task_members(v, TaskForm::Experimental)
}

/// -32021: the client must declare the extension.
pub(crate) fn extension_required(what: &str) -> RpcError {
    RpcError::new(
        codes::MISSING_CLIENT_CAPABILITY,
        format!("{what} needs the client to declare the {TASKS_EXTENSION} extension"),
    )
    .with_data(json!({"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}}))
}

/// How a task's call asks its client: as a multi-round-trip result until it becomes a task,
/// then through the task (`input_required`, answered with `tasks/update`).
struct TaskInput {
    round: Round,
    caps: Value,
    task: OnceLock<(Tasks, String)>,
}

impl ClientInput for TaskInput {
    fn capabilities(&self) -> &Value {
        &self.caps
    }

    fn request(&self, req: InputRequest) -> BoxFuture<'_, Result<Value, RpcError>> {
        let Some((tasks, id)) = self.task.get() else {
            return self.round.request(req);
        };
        Box::pin(ask_through(&self.caps, tasks, id, req))
    }

    fn interrupted(&self) -> Option<Result<Value, RpcError>> {
        if self.task.get().is_some() {
            return None;
        }
        self.round.interrupted()
    }
}

/// A task's call asks its client (within `caps`): the question waits in task `id`
/// (`input_required`) until an answer comes, which is then checked like any answer.
async fn ask_through(
    caps: &Value,
    tasks: &Tasks,
    id: &str,
    req: InputRequest,
) -> Result<Value, RpcError> {
    if !supports(caps, req.capability) {
        return Err(missing_capability(req.capability));
    }
    let request = json!({"method": req.method, "params": req.params});
    let answer = tasks.ask(id, &req.key, request).await?;
    check_answer(req.method, &answer)?;
    Ok(answer)
}

/// How a call that runs as a task from its start asks its client (a 2025-11-25 task's, and a
/// run taken over from a stopped instance): the question waits in the task (`input_required`)
/// until the client answers it (`tasks/update`, or a `tasks/result` stream that relays it).
struct HandshakeTaskInput {
    caps: Value,
    tasks: Tasks,
    id: String,
}

impl ClientInput for HandshakeTaskInput {
    fn capabilities(&self) -> &Value {
        &self.caps
    }

    fn request(&self, req: InputRequest) -> BoxFuture<'_, Result<Value, RpcError>> {
        Box::pin(ask_through(&self.caps, &self.tasks, &self.id, req))
    }

    fn interrupted(&self) -> Option<Result<Value, RpcError>> {
        None
    }
}

/// Relays the questions of 2025-11-25 task `task_id` on the `tasks/result` stream's `input`
/// until the task ends: each outstanding question is sent once (with the related-task
/// `_meta`), and its answer recorded as `tasks/update` would.
async fn relay(
    tasks: &Tasks,
    owner: &str,
    task_id: &str,
    input: Option<&Arc<dyn ClientInput>>,
) -> Result<TaskView, RpcError> {
    let mut relayed = std::collections::HashSet::new();
    loop {
        let v = tasks
            .until(owner, task_id, |v| {
                v.status.is_terminal()
                    || (input.is_some() && v.input_requests.keys().any(|k| !relayed.contains(k)))
            })
            .await?;
        let Some(input) = input.filter(|_| !v.status.is_terminal()) else {
            return Ok(v);
        };
        for (key, request) in v.input_requests {
            if !relayed.insert(key.clone()) {
                continue;
            }
            let Some(method) = request["method"].as_str().and_then(asked_method) else {
                continue;
            };
            let mut params = request.get("params").cloned().unwrap_or_else(|| json!({}));
            if let Value::Object(p) = &mut params {
                p.insert(
                    "_meta".into(),
                    json!({"io.modelcontextprotocol/related-task": {"taskId": task_id}}),
                );
            }
            let capability = match method {
                "elicitation/create" => ("elicitation", None),
                "sampling/createMessage" => ("sampling", None),
                _ => ("roots", None),
            };
            let asked = input.request(InputRequest {
                key: key.clone(),
                method,
                params,
                capability,
            });
            // The task may end (cancelled, say) while its client thinks it over.
            let answer = tokio::select! {
                a = asked => a?,
                ended = tasks.ended(owner, task_id) => return ended,
            };
            let mut answers = Map::new();
            answers.insert(key, answer);
            tasks.answer(owner, task_id, answers).await?;
        }
    }
}

/// The static name of a method a task may ask its client.
fn asked_method(m: &str) -> Option<&'static str> {
    ["elicitation/create", "sampling/createMessage", "roots/list"]
        .into_iter()
        .find(|known| *known == m)
}

/// The `taskId` a task request names, or its -32602.
fn task_id(msg: &Message) -> Result<&str, RpcError> {
    msg.params
        .as_ref()
        .and_then(|p| p.get("taskId"))
        .and_then(Value::as_str)
        .ok_or_else(|| {
            RpcError::invalid_params("Invalid request parameters: `taskId` must be a string")
        })
}

/// RFC 3339 in UTC, to the second.
fn timestamp(t: std::time::SystemTime) -> String {
    humantime::format_rfc3339_seconds(t).to_string()
}

/// The members every task view has (`Task`), without `resultType`; 2025-11-25 names its
/// times `ttl` and `pollInterval`.
fn task_members(v: &TaskView, form: TaskForm) -> Map<String, Value> {
    let (ttl, poll) = form.time_names();
    let mut m = Map::new();
    m.insert("taskId".into(), v.id.clone().into());
    m.insert("status".into(), v.status.as_str().into());
    if let Some(s) = &v.status_message {
        m.insert("statusMessage".into(), s.clone().into());
    }
    m.insert("createdAt".into(), timestamp(v.created).into());
    m.insert("lastUpdatedAt".into(), timestamp(v.updated).into());
    m.insert(ttl.into(), v.ttl_ms.into());
    m.insert(poll.into(), v.poll_interval_ms.into());
    m
}

/// The members of a `DetailedTask` (`tasks/get`, notifications).
pub(crate) fn detailed_members(v: &TaskView) -> Map<String, Value> {
    let mut m = task_members(v, TaskForm::Extension);
    match v.status {
        TaskStatus::InputRequired => {
            m.insert(
                "inputRequests".into(),
                Value::Object(v.input_requests.clone()),
            );
        }
        TaskStatus::Completed => {
            m.insert("result".into(), v.result.clone().unwrap_or(Value::Null));
        }
        TaskStatus::Failed => {
            m.insert("error".into(), v.error.clone().unwrap_or(Value::Null));
        }
        TaskStatus::Working | TaskStatus::Cancelled => {}
    }
    m
}

/// `"k":v,...` of an object's members.
fn members_bytes(m: &Map<String, Value>) -> Vec<u8> {
    let mut out = serde_json::to_vec(m).unwrap_or_else(|_| b"{}".to_vec());
    out.pop();
    out.remove(0);
    out
}

/// How a task's call ended, from its answer and its internal failure, if any.
/// How a task's call ended, in the task form of `era`: on 2025-11-25 a tool result with
/// `isError` makes the task `failed` (its result kept).
fn task_outcome(
    era: Era,
    cancel: &CancelSignal,
    answer: Answer,
    failure: Option<Value>,
) -> TaskOutcome {
    if cancel.is_cancelled() {
        return TaskOutcome::Cancelled;
    }
    match outcome_of(answer, failure) {
        TaskOutcome::Result(r)
            if era.tasks() == TaskForm::Experimental
                && r.get("isError") == Some(&Value::Bool(true)) =>
        {
            TaskOutcome::ToolError(r)
        }
        other => other,
    }
}

fn outcome_of(answer: Answer, failure: Option<Value>) -> TaskOutcome {
    if let Some(error) = failure {
        return TaskOutcome::Error(error);
    }
    let body: Value = serde_json::from_slice(&answer.body.into_vec()).unwrap_or(Value::Null);
    match (body.get("result"), body.get("error")) {
        (Some(Value::Object(r)), _) => {
            let mut r = r.clone();
            // The inlined result is a plain `CallToolResult`.
            r.remove("resultType");
            r.remove("_meta");
            TaskOutcome::Result(Value::Object(r))
        }
        (_, Some(e)) => TaskOutcome::Error(e.clone()),
        _ => TaskOutcome::Error(
            json!({"code": codes::INTERNAL_ERROR, "message": "the call gave no answer"}),
        ),
    }
}

impl McpEndpoint {
    /// Answers one request in `era` for a transport that holds the endpoint: a 2026-07-28
    /// `tools/call` of a task tool may become a task, which outlives the request.
    ///
    /// Borrowed, as [`McpEndpoint::handle_traced`] explains; a call that becomes a task takes
    /// the message and extras out. The language the message carries (SEP-2792) is the call's,
    /// and its answer names it.
    pub(crate) async fn serve(
        self: &Arc<Self>,
        msg: &mut Message,
        era: Era,
        extras: &mut CallExtras,
    ) -> Answer {
        let carried = self.take_language(msg, extras);
        let mut answer = self.dispatch(msg, era, extras).await;
        self.name_language(&mut answer, carried);
        answer
    }

    /// [`Self::serve`] in the call's language.
    async fn dispatch(
        self: &Arc<Self>,
        msg: &mut Message,
        era: Era,
        extras: &mut CallExtras,
    ) -> Answer {
        if era.tasks() == TaskForm::Experimental && msg.method == "tools/call" {
            let (name, support) = match msg.param_name().and_then(|n| self.catalog.get(n)) {
                Some(i) => (i.def.name, i.def.task),
                None => ("", TaskSupport::Forbidden),
            };
            let asked = msg
                .params
                .as_ref()
                .and_then(|p| p.get("task"))
                .filter(|t| t.is_object());
            let refuse =
                |m: String| self.error(msg.id.as_ref(), era, codes::METHOD_NOT_FOUND, &m, None);
            match (support, asked) {
                (TaskSupport::Forbidden, Some(_)) if !name.is_empty() => {
                    return refuse(format!("Tool '{name}' cannot run as a task"));
                }
                (TaskSupport::Required, None) => {
                    return refuse(format!(
                        "Tool '{name}' runs only as a task: call it with `params.task`"
                    ));
                }
                (TaskSupport::Optional | TaskSupport::Required, Some(t)) => {
                    let ttl = t
                        .get("ttl")
                        .and_then(Value::as_u64)
                        .map(std::time::Duration::from_millis);
                    // Boxed, as the other task path: see `handle_traced`.
                    let (msg, extras) = (std::mem::take(msg), std::mem::take(extras));
                    return Box::pin(self.handshake_task(msg, era, extras, ttl)).await;
                }
                _ => {}
            }
        }
        if era.tasks() == TaskForm::Extension && msg.method == "tools/call" {
            let support = msg
                .param_name()
                .and_then(|n| self.catalog.get(n))
                .map_or(TaskSupport::Forbidden, |i| i.def.task);
            match (support, msg.meta().declares_tasks()) {
                (TaskSupport::Forbidden, _) | (TaskSupport::Optional, false) => {}
                (TaskSupport::Required, false) => {
                    let name = msg.param_name().unwrap_or_default();
                    let e = extension_required(&format!("Tool '{name}'"));
                    return self.error(msg.id.as_ref(), era, e.code(), e.message(), e.raw_data());
                }
                (_, true) => {
                    let (msg, extras) = (std::mem::take(msg), std::mem::take(extras));
                    return Box::pin(self.tools_call_task(msg, era, extras)).await;
                }
            }
        }
        self.handle_traced(msg, era, extras).await.0
    }

    async fn tools_call_task(
        self: &Arc<Self>,
        mut msg: Message,
        era: Era,
        mut extras: CallExtras,
    ) -> Answer {
        let id = msg.id.clone();
        let caps = msg.meta().capabilities();
        let Some(Value::Object(params)) = msg.params.as_mut() else {
            return self.handle_traced(&mut msg, era, &mut extras).await.0;
        };
        let round = match Round::open(
            &self.opts.request_state_keys,
            &self.limits,
            "tools/call",
            params,
            caps.clone(),
            self.opts.answers_in_advance,
        ) {
            Ok(r) => r,
            Err(e) => return self.error(id.as_ref(), era, e.code(), e.message(), None),
        };
        let input = Arc::new(TaskInput {
            round,
            caps,
            task: OnceLock::new(),
        });
        let cancel = CancelSignal::new();
        let owner = self.task_owner(&extras);
        let caller = extras.caller.clone();
        // What it takes to run the call again elsewhere, if it becomes a task.
        let again = self.work(
            era,
            &msg,
            &owner,
            &extras,
            Some(input.caps.clone()),
            input.round.answers().clone(),
        );
        extras.input = Some(input.clone());
        extras.cancel = Some(cancel.clone());
        let ep = self.clone();
        let mut call = Box::pin(async move { ep.handle_traced(&mut msg, era, &mut extras).await });
        // What finishes without waiting (an answer, an error, a question as a multi-round-trip
        // result) is answered at once.
        if let Poll::Ready((answer, _)) = futures_util::poll!(call.as_mut()) {
            return answer;
        }
        let tasks = self.core.tasks().clone();
        // No room for one more task, or no store to keep it: the call runs on as a plain one.
        let Ok(view) = tasks
            .accept(&owner, caller.as_ref(), cancel.clone(), None, again)
            .await
        else {
            return call.await.0;
        };
        let _ = input.task.set((tasks.clone(), view.id.clone()));
        let task_id = view.id.clone();
        if tasks.hands_off() {
            // A worker runs it from its start: the run started here stops.
            drop(call);
        } else {
            tokio::spawn(async move {
                let (answer, failure) = call.await;
                let outcome = task_outcome(era, &cancel, answer, failure);
                tasks.finish(&task_id, outcome);
            });
        }
        let mut out = Vec::with_capacity(384);
        wire::open_result(&mut out, Id::from(id.as_ref()));
        out.extend_from_slice(b"{\"resultType\":\"task\",");
        out.extend_from_slice(&members_bytes(&task_members(&view, era.tasks())));
        self.close_result(out, era)
    }

    /// A 2025-11-25 task-augmented `tools/call`: the task is created at once and answered
    /// `{"task": ...}`; the call runs on. Its questions to the client (within the capabilities
    /// the session declared) make the task `input_required`; a `tasks/result` on the session
    /// relays them on its stream and hands the answers back.
    async fn handshake_task(
        self: &Arc<Self>,
        mut msg: Message,
        era: Era,
        mut extras: CallExtras,
        ttl: Option<std::time::Duration>,
    ) -> Answer {
        let id = msg.id.clone();
        let cancel = CancelSignal::new();
        let tasks = self.core.tasks().clone();
        let owner = self.task_owner(&extras);
        let caps = extras.input.as_ref().map(|i| i.capabilities().clone());
        let again = self.work(era, &msg, &owner, &extras, caps, Map::new());
        let accepted = tasks
            .accept(&owner, extras.caller.as_ref(), cancel.clone(), ttl, again)
            .await;
        let view = match accepted {
            Ok(v) => v,
            Err(e) => return self.error(id.as_ref(), era, e.code(), e.message(), None),
        };
        extras.cancel = Some(cancel.clone());
        // A session's client can be asked, through the task; without a session it cannot.
        extras.input = extras.input.take().map(|stream| {
            Arc::new(HandshakeTaskInput {
                caps: stream.capabilities().clone(),
                tasks: tasks.clone(),
                id: view.id.clone(),
            }) as Arc<dyn ClientInput>
        });
        // The request's stream does not outlive it: a task's progress and logs go nowhere.
        extras.notifier = None;
        let ep = self.clone();
        let task_id = view.id.clone();
        // On a front a worker runs it.
        if !tasks.hands_off() {
            tokio::spawn(async move {
                let (answer, failure) = ep.handle_traced(&mut msg, era, &mut extras).await;
                let outcome = task_outcome(era, &cancel, answer, failure);
                tasks.finish(&task_id, outcome);
            });
        }
        let mut members = b"\"task\":".to_vec();
        members.extend_from_slice(
            &serde_json::to_vec(&task_members(&view, era.tasks()))
                .unwrap_or_else(|_| b"{}".to_vec()),
        );
        self.ok(id.as_ref(), era, &members)
    }

    /// `tasks/get`, `tasks/result` and `tasks/cancel` (2025-11-25).
    pub(crate) async fn handshake_task_request(
        &self,
        msg: &Message,
        era: Era,
        extras: &CallExtras,
    ) -> Answer {
        let owner = self.task_owner(extras);
        let id = msg.id.as_ref();
        let fail = |e: RpcError| self.error(id, era, e.code(), e.message(), e.raw_data());
        if msg.method == "tasks/list" {
            // Offered only where tasks have an owner (a session or an identity): nobody lists
            // the tasks of anonymous callers.
            if anonymous(extras) || !self.serves_task_list() {
                return self.error(
                    id,
                    era,
                    codes::METHOD_NOT_FOUND,
                    "tasks/list needs a session or an identity",
                    None,
                );
            }
            let list: Vec<Value> = self
                .core
                .tasks()
                .list_of(&owner)
                .iter()
                .map(|v| Value::Object(task_members(v, era.tasks())))
                .collect();
            let mut members = b"\"tasks\":".to_vec();
            members.extend_from_slice(&serde_json::to_vec(&list).unwrap_or_default());
            return self.ok(id, era, &members);
        }
        let task_id = match task_id(msg) {
            Ok(t) => t,
            Err(e) => return fail(e),
        };
        let tasks = self.core.tasks();
        let view = match msg.method.as_str() {
            "tasks/get" => tasks.get(&owner, task_id).await,
            "tasks/cancel" => tasks.cancel_now(&owner, task_id).await,
            _ => {
                // `tasks/result`: what the call answered, once it has ended; meanwhile, on a
                // session's stream, the task's questions to the client.
                let wait = tokio::time::timeout(
                    self.limits.sse_timeout,
                    relay(tasks, &owner, task_id, extras.input.as_ref()),
                );
                let v = match wait.await {
                    Ok(Ok(v)) => v,
                    Ok(Err(e)) => return fail(e),
                    Err(_) => {
                        return fail(RpcError::internal(format!(
                            "Task {task_id} did not end within {} ms",
                            self.limits.sse_timeout.as_millis()
                        )));
                    }
                };
                return match (v.result, v.error) {
                    (Some(Value::Object(mut r)), _) => {
                        r.insert(
                            "_meta".into(),
                            json!({"io.modelcontextprotocol/related-task": {"taskId": task_id}}),
                        );
                        self.ok(id, era, &members_bytes(&r))
                    }
                    (_, Some(e)) => {
                        let code = e["code"].as_i64().and_then(|c| i32::try_from(c).ok());
                        let message = e["message"].as_str().unwrap_or("The task failed");
                        let code = code.unwrap_or(codes::INTERNAL_ERROR);
                        self.error(id, era, code, message, e.get("data"))
                    }
                    _ => fail(RpcError::internal(format!("Task {task_id} was cancelled"))),
                };
            }
        };
        match view {
            Ok(v) => self.ok(id, era, &members_bytes(&task_members(&v, era.tasks()))),
            Err(e) => fail(e),
        }
    }

    /// `tasks/get`, `tasks/update` and `tasks/cancel` (2026-07-28).
    pub(crate) async fn task_request(
        &self,
        msg: &Message,
        era: Era,
        extras: &CallExtras,
    ) -> Answer {
        let owner = self.task_owner(extras);
        let id = msg.id.as_ref();
        let fail = |e: RpcError| self.error(id, era, e.code(), e.message(), e.raw_data());
        if !msg.meta().declares_tasks() {
            return fail(extension_required(&format!("`{}`", msg.method)));
        }
        let task_id = match task_id(msg) {
            Ok(t) => t,
            Err(e) => return fail(e),
        };
        let tasks = self.core.tasks();
        let done = match msg.method.as_str() {
            "tasks/get" => {
                return match tasks.get(&owner, task_id).await {
                    Ok(v) => self.ok(id, era, &members_bytes(&detailed_members(&v))),
                    Err(e) => fail(e),
                };
            }
            "tasks/update" => {
                let answers = match msg.params.as_ref().and_then(|p| p.get("inputResponses")) {
                    None => Map::new(),
                    Some(Value::Object(a)) => a.clone(),
                    Some(_) => {
                        return fail(RpcError::invalid_params(
                            "Invalid request parameters: `inputResponses` must be an object",
                        ));
                    }
                };
                tasks.answer(&owner, task_id, answers).await
            }
            _ => tasks.cancel(&owner, task_id).await,
        };
        match done {
            Ok(()) => self.ok(id, era, b""),
            Err(e) => fail(e),
        }
    }
}
