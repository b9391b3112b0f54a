//! The MCP protocol without I/O, as quinn-proto is beside quinn: framed messages in,
//! [`Effect`]s out. The engine owns what the protocol decides (which era a message is in,
//! `initialize` and the negotiated revision, the client's capabilities, the log level,
//! cancellation, the client's answers, subscriptions and listen streams, the bound on running
//! calls); an adapter only carries frames, runs the calls it is handed and pumps change
//! notices into the streams it is told to open.
//!
//! [`Connection`] is one connection's protocol (stdio: the connection is the handshake era's
//! session). [`Method`] (the protocol's one vocabulary of method names) and [`route`] (era
//! detection) are what every transport shares, so that no method name or revision is spelled
//! under `transport/`.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::context::{CallExtras, Caller, ClientInput, Notifier};
use crate::edge::read::{self, Body, Dialect, Incoming};
use crate::error::{RpcError, codes};
use crate::mcp::LogLevel;
use crate::mcp::cancel::{Registered, Running};
use crate::mcp::handler::{Answer, McpEndpoint, Message, error_body, set_level_param};
use crate::mcp::input::{Capabilities, StreamInput, Waiters, kept_capabilities};
use crate::mcp::listen::Filter;
use crate::mcp::protocol::{Era, Method};
use crate::mcp::session::SessionState;

/// The parameter a 2026-07-28 `Mcp-Name` header mirrors for `method` (SEP-2243): the tool's or
/// prompt's name, the resource's URI, the task's id.
pub(crate) fn named_param(method: &str) -> Option<&'static str> {
    match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        "tasks/get" | "tasks/update" | "tasks/cancel" => Some("taskId"),
        _ => None,
    }
}

/// Whether `method` is a tool call (the only kind whose arguments headers may mirror).
pub(crate) fn is_tool_call(method: &str) -> bool {
    method == "tools/call"
}

/// Which era an HTTP request is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Route {
    /// 2026-07-28: the request carries its revision.
    Modern,
    /// The handshake era, at the revision the `MCP-Protocol-Version` header names, if it names
    /// a known one (else the session's, or the default).
    Handshake(Option<Era>),
}

/// The era of a message that arrived over HTTP with `header` as its `MCP-Protocol-Version`,
/// on a session (`Mcp-Session-Id` sent) or not. Modern when the body carries a `_meta`
/// revision or the header names a non-handshake one; a request on a session with a
/// handshake header stays on the session's era; a plain `initialize` is the handshake's
/// whatever its header (one carrying the modern `_meta` is a 2026-07-28 request, where the
/// method is gone).
pub(crate) fn route(msg: &Message, header: Option<&str>, on_session: bool) -> Route {
    let handshake_header = header.and_then(Era::handshake);
    let on_session = on_session && handshake_header.is_some();
    let modern = !on_session
        && (msg.meta_version().is_some()
            || (Method::of(&msg.method) != Method::Initialize
                && header.is_some()
                && handshake_header.is_none()));
    if modern {
        Route::Modern
    } else {
        Route::Handshake(handshake_header)
    }
}

/// Whether an `MCP-Protocol-Version` header names a modern revision (no session, no `GET`).
pub(crate) fn is_modern_header(header: Option<&str>) -> bool {
    header.is_some_and(|v| Era::handshake(v).is_none())
}

/// The era of a session whose stored state names `version` (a handshake revision).
pub(crate) fn session_era(version: &str) -> Option<Era> {
    Era::handshake(version)
}

/// The era of a handshake-era request: the one its header or its session names, else the one
/// a request that names none is assumed to be in (2025-03-26).
pub(crate) fn era_or_assumed(named: Option<Era>) -> Era {
    named.unwrap_or_else(Era::assumed)
}

/// The revision an `initialize` negotiates: the one it asks for if this server speaks it, else
/// the newest handshake revision.
pub(crate) fn negotiated(msg: &Message) -> Era {
    Era::negotiate(msg.requested_version())
}

/// The stateless era a request's envelope names (`_meta`), else the newest: what a request is
/// answered in before its revision is checked.
pub(crate) fn envelope_era(msg: &Message) -> Era {
    Era::of_envelope(msg.meta_version())
}

/// The era of a request on a session: the one its `MCP-Protocol-Version` header names (`None`
/// when this server does not speak it), else the session's.
pub(crate) fn session_request_era(header: Option<&str>, session: Option<Era>) -> Option<Era> {
    match header {
        Some(v) => Era::of(v),
        None => Some(era_or_assumed(session)),
    }
}

/// Whether a session on revision `version` hears of its tasks' changes
/// (`notifications/tasks/status`, the experimental tasks of 2025-11-25).
pub(crate) fn hears_task_status(version: &str) -> bool {
    session_era(version).is_some_and(|e| e.tasks() == crate::mcp::protocol::TaskForm::Experimental)
}

/// The session an `initialize` begins on an endpoint that keeps them: its state (the
/// negotiated revision, its owner, the capabilities the client declared) and the holder its
/// place counts against (this endpoint's share of this caller; one the edge could not tell
/// apart shares `unknown` with the others it could not). The adapter stores it.
pub(crate) fn session_begun(
    ep: &McpEndpoint,
    msg: &Message,
    identity: Option<&crate::context::Identity>,
    who: Option<crate::context::Caller>,
) -> (crate::mcp::session::SessionState, String) {
    let negotiated = negotiated(msg);
    let caps = kept_capabilities(msg.params.as_ref().and_then(|p| p.get("capabilities")));
    let state = crate::mcp::session::SessionState {
        version: negotiated.version().to_owned(),
        owner: Some(crate::core::tasks::owner(
            &ep.catalog,
            identity,
            None,
            false,
        )),
        capabilities: Some(caps.to_string()),
        // Only when it is measured: a feature not configured costs nothing.
        opened_ms: ep.core.telemetry().is_on().then(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64)
        }),
        ..Default::default()
    };
    let (group, version) = (ep.catalog.group().name(), ep.catalog.version());
    let holder = match who {
        Some(who) => format!("{group}/v{version} {who}"),
        None => format!("{group}/v{version} unknown"),
    };
    (state, holder)
}

/// What a request does to the state its session keeps (handshake era), decided without I/O:
/// stdio keeps the state in its connection, HTTP in the session store (read for the request,
/// written back when it changed).
pub(crate) enum Update {
    /// Nothing the session keeps: the request goes on to the faces.
    Pass,
    /// Answered here. `save`: the state changed and is to be kept before the answer is sent;
    /// `subscriptions`: what changed is its resource subscriptions, so the session's change
    /// stream is to read them again.
    Answer {
        answer: Answer,
        save: bool,
        subscriptions: bool,
    },
}

/// `logging/setLevel` and `resources/subscribe`/`unsubscribe` on `state`: the one place that
/// decides them, for every transport. An answer names the language the request carries, as
/// every answer of the faces does.
pub(crate) fn update(
    ep: &McpEndpoint,
    state: &mut SessionState,
    msg: &Message,
    era: Era,
) -> Update {
    let mut update = decide(ep, state, msg, era);
    if let Update::Answer { answer, .. } = &mut update {
        ep.name_language(answer, ep.carried_language(msg));
    }
    update
}

fn decide(ep: &McpEndpoint, state: &mut SessionState, msg: &Message, era: Era) -> Update {
    let id = msg.id.as_ref();
    match era.method(&msg.method) {
        Some(Method::SetLevel) => match set_level_param(msg) {
            Ok(level) => Update::Answer {
                answer: ep.ok(id, era, b""),
                save: state.log_level.replace(level) != Some(level),
                subscriptions: false,
            },
            Err(e) => Update::Answer {
                answer: ep.error(id, era, e.code(), e.message(), None),
                save: false,
                subscriptions: false,
            },
        },
        Some(Method::Subscription) if ep.offered().resources => {
            // A subscription adds a URI or none, an unsubscription removes one or none.
            let before = state.subscriptions.len();
            match ep.apply_subscription(&mut state.subscriptions, msg, era) {
                Ok(()) => {
                    let changed = state.subscriptions.len() != before;
                    Update::Answer {
                        answer: ep.ok(id, era, b""),
                        save: changed,
                        subscriptions: changed,
                    }
                }
                Err(answer) => Update::Answer {
                    answer,
                    save: false,
                    subscriptions: false,
                },
            }
        }
        _ => Update::Pass,
    }
}

/// What the adapter does for the engine.
pub(crate) enum Effect {
    /// Write this frame to the client.
    Send(Vec<u8>),
    /// Run this call ([`Call::run`]) and send its answer, if any.
    Call(Box<Call>),
    /// Forward the session's change notices with this filter for the connection's life,
    /// following [`Effect::Subscriptions`] for its resource URIs.
    WatchSession(Filter),
    /// The session's resource subscriptions are now these.
    Subscriptions(Vec<String>),
    /// Open a listen stream: send the filter's acknowledgement, then its changes, until the
    /// time passes or [`Effect::EndListen`] names it; then its final frame.
    Listen(Listen),
    /// End the listen stream of this request id (its JSON text).
    EndListen(String),
}

/// A listen stream to open.
pub(crate) struct Listen {
    /// The listen request's id (JSON text), which [`Effect::EndListen`] names.
    pub(crate) id: String,
    /// What it carries.
    pub(crate) filter: Filter,
    /// How long it may stay open.
    pub(crate) until: std::time::Duration,
    /// Held by the stream while it is open: the engine counts the streams still open by it.
    pub(crate) slot: Arc<()>,
}

/// A call handed to the adapter to run.
pub(crate) struct Call {
    ep: Arc<McpEndpoint>,
    msg: Message,
    era: Era,
    log_level: Option<LogLevel>,
    /// The handshake era's session: the client's capabilities and the answers' waiters.
    asks: Option<(Value, Arc<Waiters>)>,
    registered: Option<Registered>,
    _permit: OwnedSemaphorePermit,
}

impl Call {
    /// Runs the call, its notifications going to `notifier`; the answer's frame, or `None`
    /// when the client cancelled it (a cancelled call is not answered).
    pub(crate) async fn run(mut self, notifier: Arc<dyn Notifier>) -> Option<Vec<u8>> {
        let cancel = self.registered.as_ref().map(|r| r.signal.clone());
        let input = self.asks.take().map(|(caps, waiters)| {
            Arc::new(StreamInput::new(
                notifier.clone(),
                Capabilities::parsed(caps),
                waiters,
                Arc::from(CONNECTION),
                self.ep.limits.clone(),
            )) as Arc<dyn ClientInput>
        });
        let mut extras = CallExtras {
            notifier: Some(notifier),
            log_level: self.log_level,
            input,
            cancel: cancel.clone(),
            // One peer per connection: its shares are its own.
            caller: Some(Caller::local()),
            ..CallExtras::default()
        };
        let answer = self.ep.serve(&mut self.msg, self.era, &mut extras).await;
        if cancel.is_some_and(|c| c.is_cancelled()) {
            return None;
        }
        Some(answer.body.into_vec())
    }
}

/// The session key of a connection's calls and questions (one connection, one session).
const CONNECTION: &str = "connection";

/// The protocol of one connection whose peer is its session (stdio).
pub(crate) struct Connection {
    ep: Arc<McpEndpoint>,
    /// The revision `initialize` negotiated.
    negotiated: Option<Era>,
    /// What the connection's session keeps (its level and subscriptions).
    state: SessionState,
    /// The capabilities the client's `initialize` declared (calls may ask the client).
    client_caps: Value,
    /// Questions sent to the client, waiting for its answers.
    waiters: Arc<Waiters>,
    /// The calls the client may cancel.
    running: Running,
    /// At most `Limits::detached_calls` calls at once.
    calls: Arc<Semaphore>,
    watching: bool,
    /// Listen streams by request id, each counted while its stream holds the slot.
    listens: HashMap<String, Arc<()>>,
    /// When `initialize` opened the connection's session (its duration is measured).
    opened: Option<std::time::Instant>,
}

impl Drop for Connection {
    fn drop(&mut self) {
        if let (Some(at), Some(era)) = (self.opened, self.negotiated) {
            let seconds = at.elapsed().as_secs_f64();
            self.ep
                .core
                .telemetry()
                .session_closed(era.version(), "pipe", Some(seconds));
        }
    }
}

impl Connection {
    /// A new connection to `ep`.
    pub(crate) fn new(ep: Arc<McpEndpoint>) -> Self {
        let calls = Arc::new(Semaphore::new(ep.limits.detached_calls));
        Self {
            ep,
            negotiated: None,
            state: SessionState::default(),
            client_caps: Value::Object(serde_json::Map::new()),
            waiters: Arc::default(),
            running: Running::default(),
            calls,
            watching: false,
            listens: HashMap::new(),
            opened: None,
        }
    }

    /// The error frame for a message longer than [`crate::Limits::body_bytes`].
    pub(crate) fn too_long(&self) -> Effect {
        let m = format!(
            "Invalid Request: message larger than {} bytes",
            self.ep.limits.body_bytes
        );
        Effect::Send(error_body(None, codes::INVALID_REQUEST, &m, None))
    }

    /// One framed message from the client; what to do goes to `out`, in order.
    pub(crate) fn receive(&mut self, bytes: &[u8], out: &mut Vec<Effect>) {
        let send = |out: &mut Vec<Effect>, id: Option<&Value>, code: i32, m: &str| {
            out.push(Effect::Send(error_body(id, code, m, None)));
        };
        if let Some(p) = &self.ep.poison {
            return send(out, None, codes::INTERNAL_ERROR, p);
        }
        let call = match read::read(bytes, Dialect::MCP, 1) {
            Ok(Body::Single(Ok(Incoming::Call(call)))) if call.id.is_some() => call,
            Ok(Body::Single(Ok(Incoming::Call(n))))
                if Method::of(&n.method) == Method::Cancelled =>
            {
                let params: Option<Value> =
                    n.params.and_then(|p| serde_json::from_str(p.get()).ok());
                // The client ends a listen stream this way (other requests finish).
                if let Some(id) = params.as_ref().and_then(|p| p.get("requestId"))
                    && self.listens.remove(&id.to_string()).is_some()
                {
                    out.push(Effect::EndListen(id.to_string()));
                }
                self.running.cancel(CONNECTION, params.as_ref());
                return;
            }
            Ok(Body::Single(Ok(Incoming::Response(reply)))) => {
                // The client's answer to a question a call asked.
                if let Some(id) = reply.id {
                    self.waiters.deliver(
                        CONNECTION,
                        id.get(),
                        reply.result.map(|r| r.get()),
                        reply.error.map(|e| e.get()),
                    );
                }
                return;
            }
            Ok(Body::Single(Ok(_))) => return,
            Ok(Body::Single(Err(inv))) => {
                let id = read::id_value(inv.id);
                return send(out, id.as_ref(), inv.error.code(), inv.error.message());
            }
            Ok(Body::Batch(_)) | Err(read::ReadError::TooManyItems { .. }) => {
                let m = "Batches are not supported on stdio";
                return send(out, None, codes::INVALID_REQUEST, m);
            }
            Err(read::ReadError::Syntax) => {
                return send(out, None, codes::PARSE_ERROR, "Parse error");
            }
        };
        let msg = match Message::from_call(call, self.ep.limits.depth) {
            Ok(msg) => msg,
            Err((id, e)) => return send(out, id.as_ref(), e.code(), e.message()),
        };
        self.request(msg, out);
    }

    /// A request (it has an id).
    fn request(&mut self, msg: Message, out: &mut Vec<Effect>) {
        let method = Method::of(&msg.method);
        let era = if msg.meta_version().is_some() {
            if let Err(a) = self.ep.check_modern_meta(&msg) {
                out.push(Effect::Send(a.body.into_vec()));
                return;
            }
            envelope_era(&msg)
        } else {
            if method == Method::Initialize {
                self.negotiated = Some(negotiated(&msg));
                if self.opened.is_none() {
                    self.opened = Some(std::time::Instant::now());
                    self.ep.core.telemetry().session_opened();
                }
                self.client_caps =
                    kept_capabilities(msg.params.as_ref().and_then(|p| p.get("capabilities")));
            }
            self.negotiated.unwrap_or_else(Era::latest_handshake)
        };
        let offered = self.ep.offered();
        match method {
            Method::Initialize if era.has(method) && !self.watching => {
                self.watching = true;
                out.push(Effect::WatchSession(Filter::session(offered, Vec::new())));
            }
            Method::Listen if era.has(method) => return self.listen(msg, out),
            _ => {}
        }
        // The connection is the session: its level applies to the calls that follow.
        if let Update::Answer {
            answer,
            subscriptions,
            ..
        } = update(&self.ep, &mut self.state, &msg, era)
        {
            if subscriptions {
                out.push(Effect::Subscriptions(self.state.subscriptions.clone()));
            }
            return out.push(Effect::Send(answer.body.into_vec()));
        }
        // Past the bound a call is refused, not queued: reading must go on, since the calls
        // running may wait for the client's answers on this same input.
        let Ok(permit) = self.calls.clone().try_acquire_owned() else {
            let m = "Server busy: too many calls in progress, try again later";
            return out.push(Effect::Send(error_body(
                msg.id.as_ref(),
                codes::INTERNAL_ERROR,
                m,
                None,
            )));
        };
        let registered = msg.id.as_ref().and_then(|id| {
            self.running
                .register(CONNECTION, id, self.ep.limits.detached_calls)
        });
        let asks = (!era.stateless()).then(|| (self.client_caps.clone(), self.waiters.clone()));
        out.push(Effect::Call(Box::new(Call {
            ep: self.ep.clone(),
            msg,
            era,
            log_level: self.state.log_level,
            asks,
            registered,
            _permit: permit,
        })));
    }

    /// `subscriptions/listen`: a stream, within the connection's share of them.
    fn listen(&mut self, msg: Message, out: &mut Vec<Effect>) {
        let limits = &self.ep.limits;
        let id = msg.id.clone().unwrap_or_default();
        let filter = Filter::listen(
            id.clone(),
            msg.params.as_ref(),
            msg.meta(),
            self.ep.offered(),
            limits,
        );
        let refuse = |e: RpcError| Effect::Send(error_body(Some(&id), e.code(), e.message(), None));
        let filter = match filter {
            Ok(filter) => filter,
            Err(e) => return out.push(refuse(e)),
        };
        // A stream that ended dropped its slot.
        self.listens.retain(|_, slot| Arc::strong_count(slot) > 1);
        if self.listens.len() >= limits.sse_streams {
            let m = "too many listen streams on this connection";
            return out.push(refuse(RpcError::new(codes::INTERNAL_ERROR, m)));
        }
        let slot = Arc::new(());
        self.listens.insert(id.to_string(), slot.clone());
        out.push(Effect::Listen(Listen {
            id: id.to_string(),
            filter,
            until: limits.listen_timeout,
            slot,
        }));
    }
}

#[cfg(test)]
mod tests {
    //! Whole exchanges driven through the engine, with no I/O: lines in, effects out; the
    //! calls it hands out are run here, their notifications collected.

    use std::sync::Mutex;

    use futures_util::future::BoxFuture;
    use serde_json::json;

    use super::*;
    use crate::record::fixtures::method;
    use crate::record::{Handler, MethodDef, Params, TaskSupport};
    use crate::{Output, RequestContext};

    fn halfway(ctx: RequestContext, _: Params) -> BoxFuture<'static, Result<Output, RpcError>> {
        Box::pin(async move {
            ctx.report_progress(1.0, Some(2.0), Some("half"));
            Output::json(&"done")
        })
    }

    fn forever(ctx: RequestContext, _: Params) -> BoxFuture<'static, Result<Output, RpcError>> {
        Box::pin(async move {
            ctx.cancelled().await;
            Output::json(&"cancelled")
        })
    }

    fn confirm(ctx: RequestContext, _: Params) -> BoxFuture<'static, Result<Output, RpcError>> {
        Box::pin(async move {
            let yes = ctx.confirm("Go?").await?;
            Output::json(&yes)
        })
    }

    static HALFWAY: MethodDef = MethodDef {
        handler: Handler::Async(halfway),
        task: TaskSupport::Optional,
        ..method("Work.halfway", &[])
    };
    static FOREVER: MethodDef = MethodDef {
        handler: Handler::Async(forever),
        ..method("Work.forever", &[])
    };
    static CONFIRM: MethodDef = MethodDef {
        handler: Handler::Async(confirm),
        ..method("Work.confirm", &[])
    };

    fn connection() -> Connection {
        let server = crate::Server::builder()
            .without_registered_methods()
            .method(&HALFWAY)
            .method(&FOREVER)
            .method(&CONFIRM)
            .build()
            .expect("the test server builds");
        let ep = server.mcp_endpoint("g", 1).expect("group g is MCP").clone();
        Connection::new(ep)
    }

    /// Frames a call sent while it ran.
    #[derive(Default)]
    struct Frames(Mutex<Vec<Value>>);

    impl Notifier for Frames {
        fn notify(&self, message: Vec<u8>) {
            let v = serde_json::from_slice(&message).expect("a frame is JSON");
            self.0.lock().expect("not poisoned").push(v);
        }
    }

    impl Frames {
        fn take(&self) -> Vec<Value> {
            std::mem::take(&mut *self.0.lock().expect("not poisoned"))
        }
    }

    fn receive(c: &mut Connection, message: Value) -> Vec<Effect> {
        let mut out = Vec::new();
        c.receive(message.to_string().as_bytes(), &mut out);
        out
    }

    fn sent(effect: &Effect) -> Value {
        match effect {
            Effect::Send(frame) => serde_json::from_slice(frame).expect("a frame is JSON"),
            _ => panic!("expected a frame to send"),
        }
    }

    fn call_of(mut effects: Vec<Effect>) -> Box<Call> {
        assert_eq!(effects.len(), 1, "one effect");
        match effects.pop() {
            Some(Effect::Call(call)) => call,
            _ => panic!("expected a call"),
        }
    }

    async fn run(call: Box<Call>, frames: &Arc<Frames>) -> Option<Value> {
        let answer = call.run(frames.clone()).await?;
        Some(serde_json::from_slice(&answer).expect("an answer is JSON"))
    }

    fn request(id: u64, method: &str, params: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
    }

    fn text_result(id: u64, value: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "result": {
            "content": [{"type": "text", "text": value.to_string()}],
            "structuredContent": {"result": value},
            "isError": false,
        }})
    }

    /// `initialize` with these client capabilities; returns the answer.
    async fn initialize(c: &mut Connection, caps: Value) -> Value {
        let params = json!({
            "protocolVersion": "2025-06-18",
            "capabilities": caps,
            "clientInfo": {"name": "t", "version": "1"},
        });
        let mut effects = receive(c, request(1, "initialize", params));
        assert_eq!(effects.len(), 2);
        let call = match effects.pop() {
            Some(Effect::Call(call)) => call,
            _ => panic!("initialize is answered by the face"),
        };
        match &effects[0] {
            Effect::WatchSession(f) => assert_eq!(f.subscription, None),
            _ => panic!("initialize starts the session's change notices"),
        }
        run(call, &Arc::default()).await.expect("answered")
    }

    #[tokio::test]
    async fn initialize_negotiates_and_later_requests_keep_the_revision() {
        let mut c = connection();
        let answer = initialize(&mut c, json!({})).await;
        assert_eq!(answer["result"]["protocolVersion"], "2025-06-18");
        assert_eq!(c.negotiated.map(Era::version), Some("2025-06-18"));
        // A second `initialize` does not start a second watch.
        let again = receive(&mut c, request(2, "initialize", json!({})));
        assert!(matches!(&again[..], [Effect::Call(_)]));
        let call = call_of(receive(&mut c, request(3, "tools/list", json!({}))));
        assert_eq!(call.era.version(), "2025-11-25");
    }

    #[tokio::test]
    async fn a_tool_call_reports_progress_then_answers() {
        let mut c = connection();
        initialize(&mut c, json!({})).await;
        let params =
            json!({"name": "Work.halfway", "arguments": {}, "_meta": {"progressToken": "p"}});
        let call = call_of(receive(&mut c, request(2, "tools/call", params)));
        let frames = Arc::new(Frames::default());
        let answer = run(call, &frames).await;
        assert_eq!(
            frames.take(),
            [
                json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {
                    "progressToken": "p", "progress": 1.0, "total": 2.0, "message": "half",
                }})
            ]
        );
        assert_eq!(answer, Some(text_result(2, json!("done"))));
    }

    #[tokio::test]
    async fn the_session_keeps_its_level_for_the_calls_that_follow() {
        let mut c = connection();
        initialize(&mut c, json!({})).await;
        let set = |level: &str| request(2, "logging/setLevel", json!({"level": level}));
        let out = receive(&mut c, set("warning"));
        assert_eq!(out.len(), 1);
        assert_eq!(
            sent(&out[0]),
            json!({"jsonrpc": "2.0", "id": 2, "result": {}})
        );
        let out = receive(&mut c, set("loud"));
        assert_eq!(sent(&out[0])["error"]["code"], codes::INVALID_PARAMS);
        let params = json!({"name": "Work.halfway", "arguments": {}});
        let call = call_of(receive(&mut c, request(3, "tools/call", params)));
        assert_eq!(
            call.log_level,
            Some(LogLevel::Warning),
            "the bad level changed nothing"
        );

        // HTTP keeps the same decision in its store: written only when it changed.
        let era = Era::handshake("2025-06-18").expect("a handshake revision");
        let msg = |level: &str| {
            let bytes = set(level).to_string();
            let Ok(Body::Single(Ok(Incoming::Call(call)))) =
                read::read(bytes.as_bytes(), Dialect::MCP, 1)
            else {
                panic!("a request");
            };
            Message::from_call(call, 64).expect("a message")
        };
        let mut state = SessionState::default();
        let saved = |u: Update| match u {
            Update::Answer {
                save,
                subscriptions,
                ..
            } => {
                assert!(!subscriptions);
                save
            }
            Update::Pass => panic!("answered by the engine"),
        };
        assert!(saved(update(&c.ep, &mut state, &msg("debug"), era)));
        assert!(
            !saved(update(&c.ep, &mut state, &msg("debug"), era)),
            "unchanged"
        );
        assert!(!saved(update(&c.ep, &mut state, &msg("loud"), era)));
        assert_eq!(state.log_level, Some(LogLevel::Debug));
        // Without resources the session keeps no subscriptions: the faces answer.
        let sub = request(4, "resources/subscribe", json!({"uri": "x://y"})).to_string();
        let Ok(Body::Single(Ok(Incoming::Call(sub)))) = read::read(sub.as_bytes(), Dialect::MCP, 1)
        else {
            panic!("a request");
        };
        let sub = Message::from_call(sub, 64).expect("a message");
        assert!(matches!(update(&c.ep, &mut state, &sub, era), Update::Pass));
    }

    #[tokio::test]
    async fn a_cancelled_call_stops_and_is_not_answered() {
        let mut c = connection();
        initialize(&mut c, json!({})).await;
        let params = json!({"name": "Work.forever", "arguments": {}});
        let call = call_of(receive(&mut c, request(7, "tools/call", params)));
        let frames = Arc::new(Frames::default());
        let running = tokio::spawn({
            let frames = frames.clone();
            async move { run(call, &frames).await }
        });
        tokio::task::yield_now().await;
        let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 7, "reason": "no longer needed"}});
        assert!(
            receive(&mut c, cancel).is_empty(),
            "a notification is not answered"
        );
        assert_eq!(running.await.expect("the call ends"), None);
        assert!(frames.take().is_empty());
    }

    #[tokio::test]
    async fn a_call_asks_its_client_and_the_answer_comes_back_through_the_engine() {
        let mut c = connection();
        initialize(&mut c, json!({"elicitation": {}})).await;
        let params = json!({"name": "Work.confirm", "arguments": {}});
        let call = call_of(receive(&mut c, request(2, "tools/call", params)));
        let frames = Arc::new(Frames::default());
        let running = tokio::spawn({
            let frames = frames.clone();
            async move { run(call, &frames).await }
        });
        let question = loop {
            if let Some(q) = frames.take().pop() {
                break q;
            }
            tokio::task::yield_now().await;
        };
        assert_eq!(question["method"], "elicitation/create");
        assert_eq!(question["params"]["message"], "Go?");
        let reply = json!({"jsonrpc": "2.0", "id": question["id"],
            "result": {"action": "accept", "content": {"confirm": true}}});
        assert!(
            receive(&mut c, reply).is_empty(),
            "an answer is not answered"
        );
        let answer = running.await.expect("the call ends");
        assert_eq!(answer, Some(text_result(2, json!(true))));
    }

    #[tokio::test]
    async fn listen_streams_are_opened_bounded_and_ended_by_the_engine() {
        let mut c = connection();
        let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}});
        let listen = |id: u64| {
            request(
                id,
                "subscriptions/listen",
                json!({
                    "notifications": {"toolsListChanged": true},
                    "_meta": meta,
                }),
            )
        };
        let mut slots = Vec::new();
        for id in 0..c.ep.limits.sse_streams as u64 {
            match &receive(&mut c, listen(id))[..] {
                [Effect::Listen(l)] => {
                    assert_eq!(l.id, id.to_string());
                    assert!(l.filter.tools);
                    assert_eq!(l.filter.subscription, Some(json!(id)));
                    slots.push(l.slot.clone());
                }
                _ => panic!("expected a listen stream"),
            }
        }
        let over = receive(&mut c, listen(1000));
        assert_eq!(
            sent(&over[0]),
            json!({"jsonrpc": "2.0", "id": 1000, "error": {
                "code": -32603, "message": "too many listen streams on this connection"}})
        );
        // A stream that ended gives its slot back.
        slots.pop();
        assert!(matches!(
            &receive(&mut c, listen(1001))[..],
            [Effect::Listen(_)]
        ));
        // The client ends one by cancelling its request.
        let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 1001}});
        assert!(matches!(&receive(&mut c, cancel)[..], [Effect::EndListen(id)] if id == "1001"));
    }

    #[tokio::test]
    async fn a_task_is_created_then_read_through_the_engine() {
        let mut c = connection();
        let params = json!({"protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}});
        let mut init = receive(&mut c, request(1, "initialize", params));
        if let Some(Effect::Call(call)) = init.pop() {
            run(call, &Arc::default()).await;
        }
        let params = json!({"name": "Work.halfway", "arguments": {}, "task": {"ttl": 60000}});
        let created = run(
            call_of(receive(&mut c, request(2, "tools/call", params))),
            &Arc::default(),
        )
        .await
        .expect("answered");
        let task = &created["result"]["task"];
        let id = task["taskId"].as_str().expect("a task id").to_owned();
        assert_eq!(task["status"], "working");
        let get = request(3, "tasks/result", json!({"taskId": id}));
        let result = run(call_of(receive(&mut c, get)), &Arc::default())
            .await
            .expect("answered");
        assert_eq!(
            result["result"]["structuredContent"],
            json!({"result": "done"})
        );
        let status = request(4, "tasks/get", json!({"taskId": id}));
        let status = run(call_of(receive(&mut c, status)), &Arc::default())
            .await
            .expect("answered");
        assert_eq!(status["result"]["status"], "completed");
    }

    #[tokio::test]
    async fn bad_lines_are_answered_with_their_error() {
        let mut c = connection();
        let mut out = Vec::new();
        c.receive(b"{not json", &mut out);
        c.receive(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#, &mut out);
        c.receive(br#"{"jsonrpc":"2.0","id":2}"#, &mut out);
        let frames: Vec<_> = out.iter().map(sent).collect();
        assert_eq!(
            frames,
            [
                json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}}),
                json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600,
                    "message": "Batches are not supported on stdio"}}),
                json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32600,
                    "message": "Invalid Request: `method` must be a non-empty string"}}),
            ]
        );
    }

    #[test]
    fn http_requests_are_routed_to_their_era() {
        let msg = |method: &str, meta: bool| {
            let params = meta.then(
                || json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}),
            );
            Message::new(Some(json!(1)), method, params)
        };
        let list = msg("tools/list", false);
        assert_eq!(route(&list, None, false), Route::Handshake(None));
        assert_eq!(
            route(&list, Some("2025-06-18"), false),
            Route::Handshake(Era::handshake("2025-06-18"))
        );
        assert_eq!(route(&list, Some("2026-07-28"), false), Route::Modern);
        assert_eq!(route(&msg("tools/list", true), None, false), Route::Modern);
        // A session with a handshake header stays on its era, whatever the body says.
        assert_eq!(
            route(&msg("tools/list", true), Some("2025-06-18"), true),
            Route::Handshake(Era::handshake("2025-06-18"))
        );
        // A plain `initialize` is the handshake's whatever its header.
        assert_eq!(
            route(&msg("initialize", false), Some("2026-07-28"), false),
            Route::Handshake(None)
        );
        assert_eq!(route(&msg("initialize", true), None, false), Route::Modern);
    }
}
