//! Streamable HTTP for MCP: `/mcp/{group}/v{N}`, both protocol eras on one endpoint.
//!
//! Everything a request crosses before the MCP face is the edge's: the HTTP policy, the
//! reader (MCP dialect), the batch executor and the writer.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::detached::{Deferred, LiveStream};
use super::respond::{
    answer_response, busy, frames_body, json_response, merge_vary, missing_session, plain_error,
    set_language, sse_response, store_unavailable,
};
use super::route::{Caller, McpRoute};
use crate::context::{CallExtras, CancelSignal, Notifier};
use crate::edge::read::{self, Body as Read, Dialect, Incoming};
use crate::edge::write;
use crate::error::codes;
use crate::mcp::LogLevel;
use crate::mcp::engine::{self, Route};
use crate::mcp::handler::{Answer, McpEndpoint, Message, error_body};
use crate::mcp::protocol::{Era, Method};
use crate::mcp::session::{Found, SessionState, SessionStore};

// Names, not `&str`s: a `&str` name is parsed into a header name again at every lookup.
const SESSION: HeaderName = HeaderName::from_static("mcp-session-id");
const VERSION: HeaderName = HeaderName::from_static(crate::mcp::headers::VERSION);
const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");

fn header(h: &HeaderMap, name: HeaderName) -> Option<&str> {
    h.get(name).and_then(|v| v.to_str().ok())
}

/// The request's headers, as the MCP face reads them.
struct HeaderView<'h>(&'h HeaderMap);

impl crate::mcp::headers::Headers for HeaderView<'_> {
    fn first(&self, name: &str) -> Option<&str> {
        self.0.get(name).and_then(|v| v.to_str().ok())
    }

    fn count(&self, name: &str) -> usize {
        self.0.get_all(name).iter().count()
    }

    fn combined(&self, name: &str) -> Option<std::borrow::Cow<'_, str>> {
        let mut lines = self.0.get_all(name).iter();
        let first = lines.next()?.to_str().ok()?;
        let mut all = std::borrow::Cow::Borrowed(first);
        for line in lines {
            let all = all.to_mut();
            all.push_str(", ");
            all.push_str(line.to_str().ok()?);
        }
        Some(all)
    }
}

fn accepted() -> Response {
    StatusCode::ACCEPTED.into_response()
}

fn method_not_allowed(allow: &'static str) -> Response {
    let mut r = StatusCode::METHOD_NOT_ALLOWED.into_response();
    r.headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static(allow));
    r
}

/// What the `Accept` header allows, read once per request.
#[derive(Clone, Copy)]
struct Accept {
    /// The header is present.
    given: bool,
    json: bool,
    sse: bool,
}

impl Accept {
    fn of(h: &HeaderMap) -> Self {
        let Some(a) = header(h, header::ACCEPT) else {
            return Self {
                given: false,
                json: true,
                sse: true,
            };
        };
        let mut acc = Self {
            given: true,
            json: false,
            sse: false,
        };
        // What the SDKs send, recognised whole: most requests then skip the split below.
        if matches!(
            a,
            "application/json, text/event-stream" | "text/event-stream, application/json"
        ) {
            (acc.json, acc.sse) = (true, true);
            return acc;
        }
        // Split on bytes: for a header this short, a byte loop beats the `char` searcher.
        for p in a.as_bytes().split(|&b| b == b',') {
            let m = p
                .split(|&b| b == b';')
                .next()
                .unwrap_or_default()
                .trim_ascii();
            match m {
                b"*/*" => (acc.json, acc.sse) = (true, true),
                b"application/json" | b"application/*" => acc.json = true,
                b"text/event-stream" | b"text/*" => acc.sse = true,
                _ => {}
            }
        }
        acc
    }
}

/// A live session, as a request found it.
struct Live<'h> {
    sid: &'h str,
    /// Its stored text ([`SessionState`]), read in place.
    text: Arc<str>,
    /// The negotiated revision.
    era: Option<Era>,
    /// The level `logging/setLevel` chose.
    log_level: Option<LogLevel>,
}

/// The session a handshake-era request names, or the answer to give (400 without an id, 404
/// for an unknown or ended one). A session made on another endpoint, or by another identity,
/// is not found: ids are bound to whoever made them.
async fn session_of<'h>(
    store: &dyn SessionStore,
    headers: &'h HeaderMap,
    ep: &McpEndpoint,
    identity: Option<&crate::context::Identity>,
) -> Result<Live<'h>, Response> {
    let Some(sid) = header(headers, SESSION) else {
        return Err(plain_error(
            StatusCode::BAD_REQUEST,
            codes::INVALID_REQUEST,
            "Bad Request: Missing session ID",
        ));
    };
    match crate::mcp::session::state_of(store, sid).await {
        Ok(Some(text)) => {
            let head = SessionState::head(&text);
            if !head.owned_by(ep.catalog.group().name(), ep.catalog.version(), identity) {
                return Err(missing_session());
            }
            let (era, log_level) = (engine::session_era(head.version), head.log_level);
            Ok(Live {
                sid,
                text,
                era,
                log_level,
            })
        }
        Ok(_) => Err(missing_session()),
        Err(e) => Err(store_unavailable(&e)),
    }
}

/// A `Last-Event-ID` naming no stream this session can resume (here, or in the shared store
/// when sessions are shared).
fn missing_stream() -> Response {
    plain_error(
        StatusCode::NOT_FOUND,
        codes::INVALID_REQUEST,
        "Stream not found",
    )
}

/// `POST`: a plain function returning the future, so that the request is split before the
/// future is built and not held twice.
pub(crate) fn post(
    State(route): State<Arc<McpRoute>>,
    req: Request,
) -> impl Future<Output = Response> + Send {
    let (parts, body) = req.into_parts();
    route.policy.run(post_request(route.clone(), parts, body))
}

/// A block, not an `async fn`: an `async fn` holds its arguments twice in its future (as
/// arguments and as locals), and the request head alone is 224 bytes.
#[allow(clippy::manual_async_fn)]
fn post_request(
    route: Arc<McpRoute>,
    parts: Parts,
    body: Body,
) -> impl Future<Output = Response> + Send {
    async move {
        let route = &*route;
        let super::auth::Admitted {
            origin,
            identity,
            caller: who,
        } = match super::auth::admit(&route.policy, route.auth.as_ref(), &parts).await {
            Ok(admitted) => admitted,
            Err(refused) => return refused,
        };
        if let Some(p) = &route.ep.poison {
            return plain_error(StatusCode::INTERNAL_SERVER_ERROR, codes::INTERNAL_ERROR, p);
        }
        let body = match route.policy.read(body).await {
            Ok(b) => b,
            Err(answer) => return route.policy.finish(origin, answer),
        };
        let headers = &parts.headers;
        let picked = route.ep.translations.pick_limited(
            header(headers, header::ACCEPT_LANGUAGE),
            route.ep.limits.language_ranges,
        );
        let precomputed = route.ep.language_header(picked);
        let owned: Arc<str>;
        let lang = match precomputed {
            Some((lang, _)) => lang,
            None => {
                owned = Arc::from(picked);
                &owned
            }
        };
        // Boxed: what answering a message can hold (a message, a call, a session lookup) would
        // otherwise weigh on the handler's own future, which axum boxes and moves per request.
        let mut caller = Caller {
            lang: lang.clone(),
            identity,
            session: None,
            who,
            trace: crate::edge::caller::trace_of(headers),
        };
        let mut res = Box::pin(post_body(route, headers, &body, &mut caller)).await;
        if let (Some(g), Some(_)) = (&route.auth, &caller.identity) {
            g.challenge(&parts, &mut res);
        }
        // The body's language carrier (SEP-2792) chose another language than the header's.
        let precomputed = match Arc::ptr_eq(&caller.lang, lang) {
            true => precomputed,
            false => route.ep.language_header(&caller.lang),
        };
        let h = res.headers_mut();
        match precomputed {
            Some((_, value)) => {
                h.insert(header::CONTENT_LANGUAGE, value.clone());
                if h.contains_key(header::VARY) {
                    merge_vary(h);
                } else {
                    h.insert(header::VARY, HeaderValue::from_static("Accept-Language"));
                }
            }
            None => set_language(h, &caller.lang),
        }
        route.policy.finish(origin, res)
    }
}

async fn post_body(
    route: &McpRoute,
    headers: &HeaderMap,
    body: &[u8],
    caller: &mut Caller,
) -> Response {
    let accept = Accept::of(headers);
    if !accept.json && !accept.sse {
        return StatusCode::NOT_ACCEPTABLE.into_response();
    }
    let ep = &route.ep;
    let dialect = Dialect::MCP;
    let status = StatusCode::from_u16(dialect.invalid_status).unwrap_or(StatusCode::BAD_REQUEST);
    let item = match read::read(body, dialect, ep.limits.batch_items) {
        Ok(Read::Single(item)) => item,
        // Boxed: batches are rare, and their future would weigh on every request's.
        Ok(Read::Batch(items)) => return Box::pin(batch(ep, headers, items, caller)).await,
        Err(read::ReadError::Syntax) => {
            let parse = StatusCode::from_u16(dialect.parse_error_status).unwrap_or(status);
            return plain_error(parse, codes::PARSE_ERROR, "Parse error");
        }
        Err(e) => return plain_error(status, codes::INVALID_REQUEST, e.error().message()),
    };
    let call = match item {
        Ok(Incoming::Call(call)) if call.id.is_some() => call,
        Ok(Incoming::Response(reply)) => {
            // A client's answer to a request a call sent on its stream (handshake era).
            if let (Some(sid), Some(id)) = (header(headers, SESSION), reply.id) {
                ep.waiters.deliver(
                    sid,
                    id.get(),
                    reply.result.map(|r| r.get()),
                    reply.error.map(|e| e.get()),
                );
            }
            return accepted();
        }
        Ok(Incoming::Call(n)) if Method::of(&n.method) == Method::Cancelled => {
            // Cancels a call of this session running on its stream (handshake era).
            if let Some(sid) = header(headers, SESSION) {
                let params = n.params.and_then(|p| serde_json::from_str(p.get()).ok());
                ep.running.cancel(sid, params.as_ref());
            }
            return accepted();
        }
        Ok(_) => return accepted(),
        Err(inv) => {
            let id = read::id_value(inv.id);
            return json_response(
                status,
                error_body(id.as_ref(), inv.error.code(), inv.error.message(), None),
            );
        }
    };
    // The message lives here, in one place; the layers below borrow it (see
    // `McpEndpoint::handle_traced`).
    let mut msg = match Message::from_call(call, ep.limits.depth) {
        Ok(msg) => msg,
        Err((id, e)) => {
            return json_response(status, error_body(id.as_ref(), e.code(), e.message(), None));
        }
    };
    if let Err(answer) = crate::mcp::headers::check_language(ep, &msg, &HeaderView(headers)) {
        return answer_response(answer);
    }
    // Known before any stream opens, so that its `Content-Language` is the answer's.
    if let Some(lang) = ep.carried_language(&msg) {
        caller.lang = lang;
    }
    let caller = &*caller;
    // Before any stream opens: a caller lacking a tool's scopes gets HTTP 403, with the
    // challenge the route's auth adds (`Guard::challenge`).
    if let Some((answer, scopes)) = ep.scope_refusal(&msg, caller.identity.as_deref()) {
        let mut res = answer_response(answer);
        res.extensions_mut()
            .insert(super::auth::ScopeChallenge(scopes));
        return res;
    }
    let version = match engine::route(
        &msg,
        header(headers, VERSION),
        headers.contains_key(SESSION),
    ) {
        Route::Modern => return modern_request(route, headers, accept, &mut msg, caller).await,
        Route::Handshake(version) => version,
    };
    match &ep.sessions {
        // Not boxed: this future is boxed whole by `post_request`, and `on_store` weighs
        // little more than the stateless path beside it.
        Some(store) => {
            on_store(
                route,
                store.as_ref(),
                headers,
                accept,
                &mut msg,
                version,
                caller,
            )
            .await
        }
        // Boxed: once per session, and its future would weigh on every call's.
        None if Method::of(&msg.method) == Method::Initialize => {
            Box::pin(initialize(ep, msg, caller)).await
        }
        None => {
            handshake_request(
                route,
                accept,
                &mut msg,
                version,
                HandshakeCall::default(),
                caller,
            )
            .await
        }
    }
}

/// A handshake-era request on a stateful endpoint: `initialize` creates a session, anything
/// else must name a live one.
async fn on_store(
    route: &McpRoute,
    store: &dyn SessionStore,
    headers: &HeaderMap,
    accept: Accept,
    msg: &mut Message,
    version: Option<Era>,
    caller: &Caller,
) -> Response {
    let ep = &route.ep;
    if Method::of(&msg.method) == Method::Initialize {
        // Boxed, as the rare requests below: their futures would weigh on every call's.
        return Box::pin(initialize_session(ep, store, std::mem::take(msg), caller)).await;
    }
    match session_of(store, headers, ep, caller.identity.as_deref()).await {
        Ok(Live {
            sid,
            text,
            era,
            log_level,
        }) => {
            // Read in place: only the two requests that change the state copy it out.
            let version = version.or(era);
            if matches!(
                Method::of(&msg.method),
                Method::SetLevel | Method::Subscription
            ) {
                let era = engine::era_or_assumed(version);
                let mut state = SessionState::parse(&text);
                if let engine::Update::Answer {
                    answer,
                    save,
                    subscriptions,
                } = engine::update(ep, &mut state, msg, era)
                {
                    return Box::pin(keep(ep, store, sid, state, save, subscriptions, answer))
                        .await;
                }
            }
            let call = HandshakeCall {
                session: Some(Arc::from(sid)),
                log_level,
                state: Some(text),
            };
            handshake_request(route, accept, msg, version, call, caller).await
        }
        Err(answer) => answer,
    }
}

/// `initialize` on a stateful endpoint: a new session, kept in the store with the negotiated
/// revision and the client's capabilities (calls may ask the client).
async fn initialize_session(
    ep: &McpEndpoint,
    store: &dyn SessionStore,
    msg: Message,
    caller: &Caller,
) -> Response {
    let (state, holder) = engine::session_begun(ep, &msg, caller.identity.as_deref(), caller.who());
    let sid = match store.create(&state.to_text(), &holder).await {
        Ok(sid) => sid,
        Err(e) => return store_unavailable(&e),
    };
    ep.core.telemetry().session_opened();
    let mut resp = initialize(ep, msg, caller).await;
    if let Ok(v) = HeaderValue::from_str(&sid) {
        resp.headers_mut().insert(SESSION, v);
    }
    resp
}

/// What [`engine::update`] decided for a session: its state kept (in the store, so any
/// instance sharing it sees it), then the answer.
async fn keep(
    ep: &McpEndpoint,
    store: &dyn SessionStore,
    sid: &str,
    state: SessionState,
    save: bool,
    subscriptions: bool,
    answer: Answer,
) -> Response {
    if save {
        match store.set(sid, &state.to_text()).await {
            Ok(true) => {}
            Ok(false) => return missing_session(),
            Err(e) => return store_unavailable(&e),
        }
    }
    if subscriptions {
        // The session's stream, on whichever instance, reads its subscriptions again.
        ep.core
            .changes()
            .send(crate::core::changes::Change::Session(sid.into()));
    }
    answer_response(answer)
}

/// `initialize`: the negotiated revision's result (a session, if any, is the caller's).
async fn initialize(ep: &McpEndpoint, msg: Message, caller: &Caller) -> Response {
    let negotiated = engine::negotiated(&msg);
    answer_response(ep.handle(msg, negotiated, caller.extras()).await)
}

/// What a handshake-era call gets from its session, if the endpoint keeps them.
#[derive(Default)]
struct HandshakeCall {
    session: Option<Arc<str>>,
    log_level: Option<LogLevel>,
    /// The session's stored text, whose client capabilities (those `initialize` declared)
    /// are read only by a call that asks its client.
    state: Option<Arc<str>>,
}

/// A handshake-era request other than `initialize`, with its session if the endpoint keeps
/// them.
async fn handshake_request(
    route: &McpRoute,
    accept: Accept,
    msg: &mut Message,
    version: Option<Era>,
    call: HandshakeCall,
    caller: &Caller,
) -> Response {
    let HandshakeCall {
        session,
        log_level,
        state,
    } = call;
    // The session's calls (their tasks are the session's).
    let with_session;
    let caller = match &session {
        Some(sid) => {
            with_session = Caller {
                lang: caller.lang.clone(),
                identity: caller.identity.clone(),
                session: Some(sid.clone()),
                who: caller.who.clone(),
                trace: caller.trace.clone(),
            };
            &with_session
        }
        None => caller,
    };
    let era = engine::era_or_assumed(version);
    // An invalid token is answered in JSON (by the face's check), never on a stream.
    let wants_progress = msg
        .progress_token()
        .is_some_and(|t| route.ep.progress_token_ok(t));
    // `tasks/result` too: it relays the task's questions on its stream.
    let sse = Method::of(&msg.method).may_stream()
        && accept.sse
        && accept.given
        && (session.is_some() || wants_progress);
    if sse {
        let session = session.map(|s| (s, state));
        return stream_or_json(route, msg, era, session, log_level, caller).await;
    }
    json_answer(&route.ep, msg, era, log_level, caller).await
}

/// Answers with JSON; `post_response` work runs once the body is written.
async fn json_answer(
    ep: &Arc<McpEndpoint>,
    msg: &mut Message,
    era: Era,
    log_level: Option<LogLevel>,
    caller: &Caller,
) -> Response {
    let after = ep
        .core
        .has_post_response()
        .then(|| ep.core.after_response());
    let mut extras = CallExtras {
        after_response: after.clone(),
        log_level,
        ..caller.extras()
    };
    let answer = ep.serve(msg, era, &mut extras).await;
    super::respond::run_after(answer_response(answer), after)
}

/// A call that may answer on an SSE stream: resumable (its events kept for `Last-Event-ID`)
/// when it belongs to a session, else live (events not kept; the call is cancelled when the
/// client goes). Either way bounded in number ([`crate::Limits::detached_calls`],
/// [`crate::Limits::sse_streams`]) and in time ([`crate::Limits::sse_timeout`]). A session's
/// call may ask its client (elicitation, sampling, roots) on its stream, within the
/// capabilities the session's `initialize` declared.
///
/// The call is polled once here: one that answers at once without sending anything is
/// answered in plain JSON (nothing to resume, no task, no stream); one that answers at once
/// after sending notifications gets its whole stream as one body; only a call that waits is
/// spawned, its stream opened by its first message or now.
async fn stream_or_json(
    route: &McpRoute,
    msg: &mut Message,
    era: Era,
    session: Option<(Arc<str>, Option<Arc<str>>)>,
    log_level: Option<LogLevel>,
    caller: &Caller,
) -> Response {
    let ep = &route.ep;
    let who = caller.who();
    let Some((permit, slot)) = route.detached.call_and_stream(who.as_ref()) else {
        return busy();
    };
    let limit = ep.limits.sse_timeout;
    // The call may outlive the request (spawned): it owns its message.
    let mut msg = std::mem::take(msg);
    let id = msg.id.clone();
    let (session, state) = session.map_or((None, None), |(sid, state)| (Some(sid), state));
    // A session's call can be cancelled (`notifications/cancelled`). Its signal is made now,
    // but registered only once the call waits: one that answers on its first poll is done
    // before a cancellation could name it, and registering costs a lock, a key and a hash.
    let cancel = (session.is_some() && id.is_some()).then(CancelSignal::new);
    let cancellable = cancel
        .as_ref()
        .and_then(|signal| Some((signal.clone(), id.clone()?)));
    // The call, run detached: its answer (`None` when it was cancelled); past the SSE limit,
    // an error.
    let run = {
        let ep = ep.clone();
        let base = caller.extras();
        let sid = session.clone();
        move |notifier: Arc<dyn Notifier>| async move {
            let input = sid.map(|sid| {
                Arc::new(crate::mcp::input::StreamInput::new(
                    notifier.clone(),
                    crate::mcp::input::Capabilities::of_session(state),
                    ep.waiters.clone(),
                    sid,
                    ep.limits.clone(),
                )) as Arc<dyn crate::context::ClientInput>
            });
            let mut extras = CallExtras {
                notifier: Some(notifier),
                log_level,
                input,
                cancel: cancel.clone(),
                ..base
            };
            let serve = ep.serve(&mut msg, era, &mut extras);
            let answer = match tokio::time::timeout(limit, serve).await {
                // A cancelled call is not answered.
                Ok(_) if cancel.as_ref().is_some_and(CancelSignal::is_cancelled) => None,
                Ok(answer) => Some(answer),
                Err(_) => Some(Answer {
                    status: 200,
                    body: error_body(
                        id.as_ref(),
                        codes::INTERNAL_ERROR,
                        &format!(
                            "The call ran past the SSE limit of {} ms",
                            limit.as_millis()
                        ),
                        None,
                    )
                    .into(),
                    retry_after: None,
                    outcome: crate::core::telemetry::Outcome::Code(codes::INTERNAL_ERROR),
                }),
            };
            drop(permit);
            answer
        }
    };
    match session {
        Some(sid) => {
            let retry_ms = ep.opts.retry_ms;
            let streams = ep.clone();
            let open = sid.clone();
            let stream = Arc::new(Deferred::new(move || streams.streams.open(&open, retry_ms)));
            let mut call = Box::pin(run(stream.clone()));
            match poll_once(call.as_mut()).await {
                Poll::Ready(Some(answer)) if !stream.is_open() => return answer_response(answer),
                Poll::Ready(answer) => {
                    let s = stream.stream();
                    if let Some(a) = answer {
                        s.push_message(&a.body.into_vec());
                    }
                    s.finish();
                }
                Poll::Pending => {
                    // Cancellable from now until the call ends.
                    let registered = cancellable.and_then(|(signal, id)| {
                        ep.running
                            .register_with(&sid, &id, ep.limits.detached_calls, signal)
                    });
                    let s = stream.stream().clone();
                    tokio::spawn(async move {
                        let answer = call.await;
                        drop(registered);
                        if let Some(a) = answer {
                            s.push_message(&a.body.into_vec());
                        }
                        s.finish();
                    });
                }
            }
            let body = stream.stream().clone().body(0);
            sse_response(super::detached::with_slot(body, slot))
        }
        None => {
            let stream = Arc::new(Deferred::new(LiveStream::new));
            let mut call = Box::pin(run(stream.clone()));
            let answer = |a: Option<Answer>| a.map(|a| a.body.into_vec()).unwrap_or_default();
            match poll_once(call.as_mut()).await {
                Poll::Ready(Some(a)) if !stream.is_open() => answer_response(a),
                // Everything is here: the events and the answer, written as one body.
                Poll::Ready(a) => {
                    let messages = stream.stream().drain();
                    sse_response(Body::from(write::sse_events(&messages, &answer(a))))
                }
                Poll::Pending => {
                    let live = stream.stream().clone();
                    let Some(rx) = live.take_queue() else {
                        return busy();
                    };
                    let task = tokio::spawn(async move {
                        let a = call.await;
                        live.finish(write::sse_event(None, &answer(a))).await;
                    });
                    sse_response(super::detached::live_body(rx, task.abort_handle(), slot))
                }
            }
        }
    }
}

/// Polls `fut` once, with the handler's waker: a call that is done at once needs no task.
async fn poll_once<F: Future + ?Sized>(mut fut: Pin<&mut F>) -> Poll<F::Output> {
    std::future::poll_fn(|cx| Poll::Ready(fut.as_mut().poll(cx))).await
}

async fn modern_request(
    route: &McpRoute,
    headers: &HeaderMap,
    accept: Accept,
    msg: &mut Message,
    caller: &Caller,
) -> Response {
    let ep = &route.ep;
    // What the envelope names, once it is checked; until then, answered as the newest.
    let era = engine::envelope_era(msg);
    if let Err(a) = crate::mcp::headers::check(ep, msg, era, &HeaderView(headers)) {
        return answer_response(a);
    }
    let method = Method::of(&msg.method);
    if method == Method::Listen && era.has(method) {
        return super::changes::listen(route, msg, era, caller);
    }
    let wants_progress = msg
        .progress_token()
        .is_some_and(|t| ep.progress_token_ok(t));
    let wants_logs = matches!(msg.meta().log_level(), Ok(Some(_)));
    if method == Method::Call && (wants_progress || wants_logs) && accept.sse {
        return stream_or_json(route, msg, era, None, None, caller).await;
    }
    json_answer(ep, msg, era, None, caller).await
}

/// A batch: only 2025-03-26 allows them ("MUST support receiving"); answered as one array by
/// the edge's batch executor.
async fn batch<'b>(
    ep: &Arc<McpEndpoint>,
    headers: &HeaderMap,
    items: Vec<read::Item<'b>>,
    caller: &mut Caller,
) -> Response {
    let reject = || {
        plain_error(
            StatusCode::BAD_REQUEST,
            codes::INVALID_REQUEST,
            "Body must be a single JSON-RPC request or notification object",
        )
    };
    let mut stored = None;
    if let Some(store) = &ep.sessions {
        match session_of(store.as_ref(), headers, ep, caller.identity.as_deref()).await {
            Ok(live) => stored = live.era,
            Err(answer) => return answer,
        }
    }
    let era = engine::session_request_era(header(headers, VERSION), stored);
    let Some(era) = era.filter(|e| e.batches() && !items.is_empty()) else {
        return reject();
    };
    let depth = ep.limits.depth;
    // The languages the items are answered in (SEP-2792: each may carry its own) make the
    // response's `Content-Language`. Each item is read when its turn comes, as before: a batch
    // never holds more parsed items than it runs at once.
    let languages: std::sync::Mutex<Vec<Arc<str>>> = std::sync::Mutex::default();
    let (answering, languages_of) = (&*caller, &languages);
    let calls = items.into_iter().map(|item| async move {
        let call = match item {
            Ok(Incoming::Call(call)) if call.id.is_some() => call,
            Ok(_) => return None,
            Err(inv) => {
                let id = read::id_value(inv.id);
                let e = inv.error;
                return Some(error_body(id.as_ref(), e.code(), e.message(), None).into());
            }
        };
        match Message::from_call(call, depth) {
            Ok(m) if Method::of(&m.method) == Method::Initialize => Some(
                error_body(
                    m.id.as_ref(),
                    codes::INVALID_REQUEST,
                    "Invalid Request: initialize cannot be batched",
                    None,
                )
                .into(),
            ),
            Ok(m) => {
                if let Err(answer) =
                    crate::mcp::headers::check_language(ep, &m, &HeaderView(headers))
                {
                    return Some(answer.body);
                }
                let lang = ep
                    .carried_language(&m)
                    .unwrap_or_else(|| answering.lang.clone());
                if let Ok(mut seen) = languages_of.lock()
                    && !seen.contains(&lang)
                {
                    seen.push(lang);
                }
                Some(ep.handle(m, era, answering.extras()).await.body)
            }
            Err((id, e)) => Some(error_body(id.as_ref(), e.code(), e.message(), None).into()),
        }
    });
    let frames = crate::edge::batch::run(
        calls.collect(),
        ep.limits.batch_concurrency,
        caller.trace.as_ref(),
    )
    .await;
    let languages = languages.into_inner().unwrap_or_default();
    if languages.len() > 1 || languages.first().is_some_and(|l| *l != caller.lang) {
        caller.lang = Arc::from(languages.join(", "));
    }
    match frames {
        Some(frames) => json_response(StatusCode::OK, frames_body(frames)),
        None => accepted(),
    }
}

/// What GET and DELETE share: the HTTP policy, and a stateful endpoint on the handshake era
/// (otherwise 405: the modern era and stateless groups have no GET or DELETE).
async fn session_route<'r>(
    route: &'r McpRoute,
    parts: &Parts,
) -> Result<(&'r Arc<dyn SessionStore>, super::auth::Admitted), Box<Response>> {
    let admitted = super::auth::admit(&route.policy, route.auth.as_ref(), parts)
        .await
        .map_err(Box::new)?;
    if let Some(p) = &route.ep.poison {
        return Err(Box::new(plain_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            codes::INTERNAL_ERROR,
            p,
        )));
    }
    let modern = engine::is_modern_header(header(&parts.headers, VERSION));
    match (&route.ep.sessions, modern) {
        (Some(store), false) => Ok((store, admitted)),
        _ => Err(Box::new(method_not_allowed("POST"))),
    }
}

pub(crate) async fn get(State(route): State<Arc<McpRoute>>, req: Request) -> Response {
    let (parts, _) = req.into_parts();
    route.policy.run(get_inner(&route, &parts)).await
}

async fn get_inner(route: &McpRoute, parts: &Parts) -> Response {
    let ep = &route.ep;
    let (store, admitted) = match session_route(route, parts).await {
        Ok(found) => found,
        Err(answer) => return *answer,
    };
    let (sid, text) = match session_of(
        store.as_ref(),
        &parts.headers,
        ep,
        admitted.identity.as_deref(),
    )
    .await
    {
        Ok(live) => (live.sid, live.text),
        Err(answer) => return answer,
    };
    let who = admitted
        .caller
        .clone()
        .unwrap_or_else(|| crate::context::Caller::session(sid));
    // Resumption of an interrupted POST stream (SEP-1699), else the session's change stream.
    match header(&parts.headers, LAST_EVENT_ID) {
        Some(last) => match ep.streams.find(sid, last) {
            Found::Here(stream, from) => match route.detached.stream(Some(&who)) {
                Some(slot) => sse_response(super::detached::with_slot(stream.body(from), slot)),
                None => busy(),
            },
            // Opened on another instance: its copy in the shared store (sessions in Redis).
            Found::Elsewhere(shared, stream, next) => {
                match shared.resume(sid, stream, next).await {
                    Ok(Some(body)) => match route.detached.stream(Some(&who)) {
                        Some(slot) => sse_response(super::detached::with_slot(body, slot)),
                        None => busy(),
                    },
                    Ok(None) => missing_stream(),
                    Err(e) => store_unavailable(&e),
                }
            }
            Found::Refused => missing_stream(),
        },
        None if Accept::of(&parts.headers).sse => {
            let state = SessionState::parse(&text);
            let owner = crate::core::tasks::owner(
                &ep.catalog,
                admitted.identity.as_deref(),
                Some(sid),
                false,
            );
            super::changes::session_stream(route, store.clone(), sid.to_owned(), state, owner, &who)
        }
        None => StatusCode::NOT_ACCEPTABLE.into_response(),
    }
}

pub(crate) async fn delete(State(route): State<Arc<McpRoute>>, req: Request) -> Response {
    let (parts, _) = req.into_parts();
    route.policy.run(delete_inner(&route, &parts)).await
}

async fn delete_inner(route: &McpRoute, parts: &Parts) -> Response {
    let ep = &route.ep;
    let (store, admitted) = match session_route(route, parts).await {
        Ok(found) => found,
        Err(answer) => return *answer,
    };
    // Only whoever made it ends it.
    let sid = match session_of(
        store.as_ref(),
        &parts.headers,
        ep,
        admitted.identity.as_deref(),
    )
    .await
    {
        Ok(live) => (live.sid, live.era, SessionState::opened_ms_of(&live.text)),
        Err(answer) => return answer,
    };
    let (sid, era, opened_ms) = sid;
    match store.remove(sid).await {
        Ok(true) => {
            let version = engine::era_or_assumed(era).version();
            // Its start is in its stored state when it was measured (on whichever instance
            // began it).
            let seconds = opened_ms.and_then(crate::mcp::session::seconds_since);
            ep.core.telemetry().session_closed(version, "tcp", seconds);
            ep.streams.end_session(sid);
            // Its change stream ends, on whichever instance holds it.
            ep.core
                .changes()
                .send(crate::core::Change::Session(sid.into()));
            StatusCode::OK.into_response()
        }
        Ok(false) => missing_session(),
        Err(e) => store_unavailable(&e),
    }
}

/// `OPTIONS`: the CORS preflight.
pub(crate) async fn options(State(route): State<Arc<McpRoute>>, headers: HeaderMap) -> Response {
    route
        .policy
        .preflight(&headers, "GET, POST, DELETE, OPTIONS")
}

#[cfg(test)]
mod tests {
    use super::super::future_size;

    /// Every form of `Accept` reads as its media ranges say (parameters and spaces ignored),
    /// the whole-header shortcut included.
    #[test]
    fn accept_reads_json_and_sse_from_every_form() {
        use axum::http::{HeaderMap, HeaderValue, header};
        let of = |v: Option<&str>| {
            let mut h = HeaderMap::new();
            if let Some(v) = v {
                h.insert(header::ACCEPT, HeaderValue::from_str(v).unwrap());
            }
            let a = super::Accept::of(&h);
            (a.given, a.json, a.sse)
        };
        for (header, expected) in [
            (None, (false, true, true)),
            (
                Some("application/json, text/event-stream"),
                (true, true, true),
            ),
            (
                Some("text/event-stream, application/json"),
                (true, true, true),
            ),
            (
                Some("application/json,text/event-stream"),
                (true, true, true),
            ),
            (
                Some(" application/json ;q=0.9 ,  text/event-stream;q=1"),
                (true, true, true),
            ),
            (Some("application/json"), (true, true, false)),
            (Some("application/*"), (true, true, false)),
            (Some("text/event-stream"), (true, false, true)),
            (Some("text/*;q=0.5"), (true, false, true)),
            (Some("*/*"), (true, true, true)),
            (Some("text/html"), (true, false, false)),
            (Some(""), (true, false, false)),
            (Some(",;,"), (true, false, false)),
            (
                Some("application/jsonx, text/event-streams"),
                (true, false, false),
            ),
        ] {
            assert_eq!(of(header), expected, "{header:?}");
        }
    }

    /// axum moves this future into a fresh box for every request: it stays small (the
    /// message's handling is boxed in `post_request`, the pipeline inside `Core::call`).
    #[test]
    fn the_post_future_stays_small() {
        let size = future_size(&super::post);
        assert!(size <= 1024, "the MCP POST future is {size} bytes");
    }

    /// The size of the future a four-argument function returns.
    fn future_size4<A, B, C, D, R, F: Fn(A, B, C, D) -> R>(_: &F) -> usize {
        std::mem::size_of::<R>()
    }

    /// `post_request` boxes the handling of each message, moving this future into fresh
    /// memory. The message and the call's extras live in one frame, and the layers below
    /// borrow them: one layer that took them by value would hold their 370 bytes twice (an
    /// `async fn` keeps its arguments as arguments and as locals), and every layer above it
    /// would carry that. It was 4.5 KB when they were passed by value.
    #[test]
    fn the_boxed_handling_stays_small() {
        let size = future_size4(&super::post_body);
        assert!(size <= 1536, "the MCP POST handling future is {size} bytes");
    }
}
