//! Streamable HTTP for MCP: `/mcp/{group}/v{N}`, both protocol eras on one endpoint.

use std::future::Future;
use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use futures_util::future::BoxFuture;
use serde_json::Value;

use super::http::{is_json_content_type, json_response};
use super::security::HostPolicy;
use crate::context::CallExtras;
use crate::mcp::envelope::Parsed;
use crate::mcp::handler::{
    Answer, Handled, Incoming, McpEndpoint, Message, error_body, parse_message,
};
use crate::mcp::protocol::{self, Era};
use crate::mcp::session::{EventStream, SessionStore};

/// What one MCP route holds.
pub(crate) struct McpRoute {
    pub limits: super::http::RequestLimits,
    pub ep: Arc<McpEndpoint>,
    pub hosts: HostPolicy,
}

const SESSION: &str = "mcp-session-id";
const VERSION: &str = "mcp-protocol-version";

fn header<'a>(h: &'a HeaderMap, name: &str) -> Option<&'a str> {
    h.get(name).and_then(|v| v.to_str().ok())
}

fn answer_response(a: Answer) -> Response {
    let (head, shared) = a.body.into_parts();
    json_response(
        StatusCode::from_u16(a.status).unwrap_or(StatusCode::OK),
        super::http::two_part_body(head, shared),
    )
}

fn plain_error(status: StatusCode, code: i32, message: &str) -> Response {
    json_response(status, error_body(None, code, message, None))
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
        let Some(a) = header(h, "accept") else {
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
        for p in a.split(',') {
            let m = p.split(';').next().unwrap_or("").trim();
            match m {
                "*/*" => (acc.json, acc.sse) = (true, true),
                "application/json" | "application/*" => acc.json = true,
                "text/event-stream" | "text/*" => acc.sse = true,
                _ => {}
            }
        }
        acc
    }
}

/// Decodes an `Mcp-Name`-style header value (`=?base64?...?=` for unsafe values).
fn decode_header_value(v: &str) -> Option<std::borrow::Cow<'_, str>> {
    match v
        .strip_prefix("=?base64?")
        .and_then(|r| r.strip_suffix("?="))
    {
        Some(b) => base64::engine::general_purpose::STANDARD
            .decode(b)
            .ok()
            .and_then(|d| String::from_utf8(d).ok())
            .map(std::borrow::Cow::Owned),
        None => Some(std::borrow::Cow::Borrowed(v)),
    }
}

/// The session a handshake-era request names: its id and negotiated revision, or the answer
/// to give (400 without an id, 404 for an unknown or ended one).
async fn session_of<'h>(
    store: &dyn SessionStore,
    headers: &'h HeaderMap,
) -> Result<(&'h str, String), Response> {
    let Some(sid) = header(headers, SESSION) else {
        return Err(plain_error(
            StatusCode::BAD_REQUEST,
            -32600,
            "Bad Request: Missing session ID",
        ));
    };
    match store.get(sid).await {
        Ok(Some(version)) => Ok((sid, version)),
        Ok(None) => Err(missing_session()),
        Err(e) => Err(plain_error(
            StatusCode::SERVICE_UNAVAILABLE,
            -32603,
            e.message(),
        )),
    }
}

fn missing_session() -> Response {
    plain_error(StatusCode::NOT_FOUND, -32600, "Session not found")
}

fn with_lang(lang: &Arc<str>) -> CallExtras {
    CallExtras {
        language: Some(lang.clone()),
        ..CallExtras::default()
    }
}

fn sse_response(body: Body) -> Response {
    let mut r = Response::new(body);
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("no-cache, no-transform"),
    );
    h.insert("x-accel-buffering", HeaderValue::from_static("no"));
    r
}

/// Checks shared by every method: Host/Origin and the group's tool names.
fn precheck(route: &McpRoute, headers: &HeaderMap) -> Option<Response> {
    if let Err(r) = route.hosts.check(headers) {
        return Some(r.into_response());
    }
    if let Some(p) = &route.ep.poison {
        return Some(plain_error(StatusCode::INTERNAL_SERVER_ERROR, -32603, p));
    }
    None
}

/// A response, or the work that produces one when it has to wait (a session store, a
/// batch, a call that suspends).
///
/// The waiting work is boxed where it is decided, so the handler's own future (which axum
/// boxes again, and which every request carries) stays a few hundred bytes: the common call
/// answers without waiting.
enum Reply<'a> {
    Now(Response),
    Later(BoxFuture<'a, Response>),
}

impl Reply<'_> {
    async fn into_response(self) -> Response {
        match self {
            Reply::Now(res) => res,
            Reply::Later(work) => work.await,
        }
    }
}

impl From<Response> for Reply<'_> {
    fn from(res: Response) -> Self {
        Reply::Now(res)
    }
}

/// `POST`: a plain function returning the future, so that the request is split before the
/// future is built and not held twice.
pub(crate) fn post(
    State(route): State<Arc<McpRoute>>,
    req: Request,
) -> impl Future<Output = Response> + Send {
    let (parts, body) = req.into_parts();
    route.limits.run(post_request(route, parts, body))
}

async fn post_request(route: Arc<McpRoute>, parts: Parts, body: Body) -> Response {
    let route = &*route;
    let body = match route.limits.read(body).await {
        Ok(b) => b,
        Err(answer) => return answer,
    };
    let headers = &parts.headers;
    let picked = route
        .ep
        .translations
        .pick(header(headers, "accept-language"));
    let precomputed = route.ep.language_header(picked);
    let owned: Arc<str>;
    let lang = match precomputed {
        Some((lang, _)) => lang,
        None => {
            owned = Arc::from(picked);
            &owned
        }
    };
    // One await, on boxed work only: this future stays small.
    let mut res = match post_inner(route, headers, body, lang) {
        Reply::Now(res) => res,
        Reply::Later(work) => work.await,
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
        None => set_language(h, lang),
    }
    res
}

/// `Content-Language` and `Vary: Accept-Language` (merged into an existing `Vary`).
pub(crate) fn set_language(h: &mut HeaderMap, lang: &str) {
    if let Ok(v) = HeaderValue::from_str(lang) {
        h.insert(header::CONTENT_LANGUAGE, v);
    }
    merge_vary(h);
}

/// Adds `Accept-Language` to `Vary` unless it is there (or `*`).
fn merge_vary(h: &mut HeaderMap) {
    let vary = h
        .get(header::VARY)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let merged = match vary {
        Some(v)
            if v.split(',')
                .any(|x| x.trim().eq_ignore_ascii_case("accept-language") || x.trim() == "*") =>
        {
            v
        }
        Some(v) if !v.trim().is_empty() => format!("{v}, Accept-Language"),
        _ => "Accept-Language".to_owned(),
    };
    if let Ok(v) = HeaderValue::from_str(&merged) {
        h.insert(header::VARY, v);
    }
}

fn post_inner<'a>(
    route: &'a McpRoute,
    headers: &'a HeaderMap,
    body: Bytes,
    lang: &'a Arc<str>,
) -> Reply<'a> {
    if let Some(r) = precheck(route, headers) {
        return r.into();
    }
    if !is_json_content_type(headers) {
        return (
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Invalid Content-Type header",
        )
            .into_response()
            .into();
    }
    let accept = Accept::of(headers);
    if !accept.json && !accept.sse {
        return StatusCode::NOT_ACCEPTABLE.into_response().into();
    }
    let parsed = match crate::mcp::envelope::parse_body(&body) {
        Ok(b) => b,
        Err(e) if crate::core::json::is_duplicate(&e) => {
            return plain_error(
                StatusCode::BAD_REQUEST,
                -32602,
                &format!("Invalid params: {}", crate::core::json::message(&e)),
            )
            .into();
        }
        Err(_) => return plain_error(StatusCode::BAD_REQUEST, -32700, "Parse error").into(),
    };
    let ep = &route.ep;
    let hdr_version = header(headers, VERSION);
    let single = match parsed {
        Parsed::Single(single) => single,
        Parsed::Batch(items) => return Reply::Later(Box::pin(batch(ep, headers, items, lang))),
    };
    let msg = match single {
        Ok(Incoming::Request(m)) => m,
        Ok(Incoming::Notification(_) | Incoming::Response) => return accepted().into(),
        Err((id, e)) => {
            return json_response(
                StatusCode::BAD_REQUEST,
                error_body(id.as_ref(), e.code(), e.message(), None),
            )
            .into();
        }
    };
    // Modern when the body carries a `_meta` revision or the header names a non-handshake one;
    // a request on a legacy session with a handshake header stays on that session's era.
    let on_session = headers.contains_key(SESSION)
        && hdr_version.is_some_and(|v| protocol::handshake_version(v).is_some());
    let modern = msg.method != "initialize"
        && !on_session
        && (msg.meta_version().is_some()
            || hdr_version.is_some_and(|v| protocol::handshake_version(v).is_none()));
    if modern {
        return modern_request(ep, headers, accept, msg, lang);
    }
    let version = hdr_version.and_then(protocol::handshake_version);
    match &ep.sessions {
        Some(store) => Reply::Later(Box::pin(on_store(
            ep,
            store.as_ref(),
            headers,
            accept,
            msg,
            version,
            lang,
        ))),
        None if msg.method == "initialize" => initialize(ep, msg, lang),
        None => handshake_request(ep, accept, msg, version, None, lang),
    }
}

/// A handshake-era request on a stateful endpoint: `initialize` creates a session, anything
/// else must name a live one.
async fn on_store(
    ep: &Arc<McpEndpoint>,
    store: &dyn SessionStore,
    headers: &HeaderMap,
    accept: Accept,
    msg: Message,
    version: Option<&'static str>,
    lang: &Arc<str>,
) -> Response {
    if msg.method == "initialize" {
        let negotiated = protocol::negotiate(msg.requested_version());
        let mut resp = initialize(ep, msg, lang).into_response().await;
        match store.create(negotiated).await {
            Ok(sid) => {
                if let Ok(v) = HeaderValue::from_str(&sid) {
                    resp.headers_mut().insert(SESSION, v);
                }
            }
            Err(e) => return plain_error(StatusCode::SERVICE_UNAVAILABLE, -32603, e.message()),
        }
        return resp;
    }
    match session_of(store, headers).await {
        Ok((sid, v)) => {
            let version = version.or_else(|| protocol::handshake_version(&v));
            let session = Some(sid.to_owned());
            handshake_request(ep, accept, msg, version, session, lang)
                .into_response()
                .await
        }
        Err(answer) => answer,
    }
}

/// `initialize`: the negotiated revision's result (a session, if any, is the caller's).
fn initialize<'a>(ep: &'a McpEndpoint, msg: Message, lang: &Arc<str>) -> Reply<'a> {
    let negotiated = protocol::negotiate(msg.requested_version());
    answer(
        ep,
        msg,
        Era::Handshake(negotiated),
        with_lang(lang),
        answer_response,
    )
}

/// A handshake-era request other than `initialize`, with its session if the endpoint keeps
/// them.
fn handshake_request<'a>(
    ep: &'a Arc<McpEndpoint>,
    accept: Accept,
    msg: Message,
    version: Option<&'static str>,
    session: Option<String>,
    lang: &Arc<str>,
) -> Reply<'a> {
    let era = Era::Handshake(version.unwrap_or(protocol::DEFAULT_NEGOTIATED));
    let wants_progress = msg
        .params
        .as_ref()
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get("progressToken"))
        .is_some();
    let sse = msg.method == "tools/call"
        && accept.sse
        && accept.given
        && (session.is_some() || wants_progress);
    if sse {
        let stream = match &session {
            Some(sid) => ep.streams.open(sid, ep.opts.retry_ms),
            None => EventStream::new(None, 0),
        };
        return spawn_sse(ep.clone(), msg, era, stream, lang).into();
    }
    json_answer(ep, msg, era, lang)
}

/// The answer to one message, turned into a response by `respond`: at once when the call
/// cannot suspend (the common case), else through the pipeline's future, boxed here.
fn answer<'a>(
    ep: &'a McpEndpoint,
    msg: Message,
    era: Era,
    extras: CallExtras,
    respond: impl FnOnce(Answer) -> Response + Send + 'a,
) -> Reply<'a> {
    match ep.handle_now(msg, era, extras) {
        Handled::Answered(a) => Reply::Now(respond(a)),
        Handled::Suspends(msg, extras) => Reply::Later(Box::pin(async move {
            respond(ep.handle(msg, era, extras).await)
        })),
    }
}

/// Answers with JSON; `post_response` work runs once the body is written.
fn json_answer<'a>(ep: &'a McpEndpoint, msg: Message, era: Era, lang: &Arc<str>) -> Reply<'a> {
    let after = ep
        .core
        .has_post_response()
        .then(|| ep.core.after_response());
    let extras = CallExtras {
        after_response: after.clone(),
        ..with_lang(lang)
    };
    answer(ep, msg, era, extras, move |a| {
        super::http::run_after(answer_response(a), after)
    })
}

fn spawn_sse(
    ep: Arc<McpEndpoint>,
    msg: Message,
    era: Era,
    stream: Arc<EventStream>,
    lang: &Arc<str>,
) -> Response {
    let notifier: Arc<dyn crate::context::Notifier> = stream.clone();
    let extras = CallExtras {
        progress_token: None,
        notifier: Some(notifier),
        after_response: None,
        language: Some(lang.clone()),
    };
    let s = stream.clone();
    tokio::spawn(async move {
        let answer = ep.handle(msg, era, extras).await;
        s.push_message(&answer.body.into_vec());
        s.finish();
    });
    sse_response(stream.body(0))
}

fn modern_request<'a>(
    ep: &'a Arc<McpEndpoint>,
    headers: &HeaderMap,
    accept: Accept,
    msg: Message,
    lang: &Arc<str>,
) -> Reply<'a> {
    let id = msg.id.as_ref();
    if let Err(a) = ep.check_modern_keys(&msg) {
        return answer_response(a).into();
    }
    let mismatch = |m: &str| answer_response(ep.error(id, Era::Modern, -32020, m, None)).into();
    if header(headers, VERSION) != msg.meta_version() {
        return mismatch(
            "mcp-protocol-version header does not match the request envelope's protocol version",
        );
    }
    if let Err(a) = ep.check_modern_version(&msg) {
        return answer_response(a).into();
    }
    if headers.get_all("mcp-method").iter().count() != 1
        || header(headers, "mcp-method") != Some(msg.method.as_str())
    {
        return mismatch("mcp-method header does not match the request body's method");
    }
    if msg.method == "tools/call" {
        let given = header(headers, "mcp-name").and_then(decode_header_value);
        if given.as_deref() != msg.param_name() || headers.get_all("mcp-name").iter().count() != 1 {
            return mismatch("mcp-name header does not match the request body's 'name' parameter");
        }
    }
    let wants_progress = msg
        .params
        .as_ref()
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get("progressToken"))
        .is_some();
    if msg.method == "tools/call" && wants_progress && accept.sse {
        return spawn_sse(
            ep.clone(),
            msg,
            Era::Modern,
            EventStream::new(None, 0),
            lang,
        )
        .into();
    }
    json_answer(ep, msg, Era::Modern, lang)
}

/// A batch: only 2025-03-26 allows them ("MUST support receiving"); answered as one array.
async fn batch(
    ep: &Arc<McpEndpoint>,
    headers: &HeaderMap,
    items: Vec<Value>,
    lang: &Arc<str>,
) -> Response {
    let reject = || {
        plain_error(
            StatusCode::BAD_REQUEST,
            -32600,
            "Body must be a single JSON-RPC request or notification object",
        )
    };
    let mut version = header(headers, VERSION).map(str::to_owned);
    if let Some(store) = &ep.sessions {
        match session_of(store.as_ref(), headers).await {
            Ok((_, v)) => version = version.or(Some(v)),
            Err(answer) => return answer,
        }
    }
    if version.as_deref().unwrap_or(protocol::DEFAULT_NEGOTIATED) != "2025-03-26"
        || items.is_empty()
    {
        return reject();
    }
    let era = Era::Handshake("2025-03-26");
    let answers = futures_util::future::join_all(items.into_iter().map(|item| async move {
        match parse_message(item) {
            Ok(Incoming::Request(m)) if m.method == "initialize" => Some(error_body(
                m.id.as_ref(),
                -32600,
                "Invalid Request: initialize cannot be batched",
                None,
            )),
            Ok(Incoming::Request(m)) => {
                Some(ep.handle(m, era, with_lang(lang)).await.body.into_vec())
            }
            Ok(_) => None,
            Err((id, e)) => Some(error_body(id.as_ref(), e.code(), e.message(), None)),
        }
    }))
    .await;
    let answers: Vec<Vec<u8>> = answers.into_iter().flatten().collect();
    if answers.is_empty() {
        return accepted();
    }
    let mut out = vec![b'['];
    for (i, a) in answers.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(a);
    }
    out.push(b']');
    json_response(StatusCode::OK, out)
}

/// What GET and DELETE share: the Host/Origin checks, and a stateful endpoint on the handshake
/// era (otherwise 405: the modern era and stateless groups have no GET or DELETE).
fn session_route<'r>(
    route: &'r McpRoute,
    headers: &HeaderMap,
) -> Result<&'r Arc<dyn SessionStore>, Box<Response>> {
    if let Some(r) = precheck(route, headers) {
        return Err(Box::new(r));
    }
    let modern = header(headers, VERSION).is_some_and(|v| protocol::handshake_version(v).is_none());
    match (&route.ep.sessions, modern) {
        (Some(store), false) => Ok(store),
        _ => Err(Box::new(method_not_allowed("POST"))),
    }
}

pub(crate) async fn get(State(route): State<Arc<McpRoute>>, headers: HeaderMap) -> Response {
    route.limits.run(get_inner(&route, &headers)).await
}

async fn get_inner(route: &McpRoute, headers: &HeaderMap) -> Response {
    let ep = &route.ep;
    let store = match session_route(route, headers) {
        Ok(store) => store,
        Err(answer) => return *answer,
    };
    let sid = match session_of(store.as_ref(), headers).await {
        Ok((sid, _)) => sid,
        Err(answer) => return answer,
    };
    // Resumption of an interrupted POST stream (SEP-1699); no standalone server stream is offered.
    match header(headers, "last-event-id").and_then(|l| ep.streams.resume(sid, l)) {
        Some((stream, from)) => sse_response(stream.body(from)),
        None => method_not_allowed("POST, DELETE"),
    }
}

pub(crate) async fn delete(State(route): State<Arc<McpRoute>>, headers: HeaderMap) -> Response {
    route.limits.run(delete_inner(&route, &headers)).await
}

async fn delete_inner(route: &McpRoute, headers: &HeaderMap) -> Response {
    let ep = &route.ep;
    let store = match session_route(route, headers) {
        Ok(store) => store,
        Err(answer) => return *answer,
    };
    let Some(sid) = header(headers, SESSION) else {
        return plain_error(
            StatusCode::BAD_REQUEST,
            -32600,
            "Bad Request: Missing session ID",
        );
    };
    match store.remove(sid).await {
        Ok(true) => {
            ep.streams.end_session(sid);
            StatusCode::OK.into_response()
        }
        Ok(false) => missing_session(),
        Err(e) => plain_error(StatusCode::SERVICE_UNAVAILABLE, -32603, e.message()),
    }
}

#[cfg(test)]
mod tests {
    use super::super::future_size;

    /// axum moves this future into a fresh box for every request: work that waits is boxed
    /// where it is decided, so the common call does not carry the pipeline's future (4.4 KB
    /// when it was inline).
    #[test]
    fn the_post_future_stays_small() {
        let size = future_size(&super::post);
        assert!(size <= 1024, "the MCP POST future is {size} bytes");
    }
}
