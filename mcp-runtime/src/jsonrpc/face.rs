//! The JSON-RPC face: a body read by the edge's reader, each call run through the core, the
//! answers written by the edge's writer.

use bytes::Bytes;

use crate::catalog::Catalog;
use crate::context::{CallExtras, Face};
use crate::core::events::AfterResponse;
use crate::core::{CallRequest, Core};
use crate::edge::read::{self, Body, Call, Dialect, Incoming};
use crate::edge::write::AnswerBody;
use crate::error::RpcError;
use crate::limits::Limits;
use crate::wire::{self, Id};

use super::callback::{self, Async};
use super::discovery::Discover;
use crate::context::Identity;

/// What a request gives every call of its body: who is calling, how asynchronous calls
/// reach their callbacks (when the server has webhooks), and what `rpc.discover` answers.
/// Pointers only: every item's future holds a copy.
#[derive(Clone, Copy)]
pub(crate) struct Scope<'a> {
    pub who: &'a Requester<'a>,
    pub asyncs: Option<&'a Async>,
    /// `None`: `rpc.discover` is not served (it is an unknown method).
    pub discover: Option<&'a Discover<'a>>,
}

impl Default for Scope<'_> {
    fn default() -> Self {
        Self {
            who: &Requester::NOBODY,
            asyncs: None,
            discover: None,
        }
    }
}

/// Who sends a request, as its transport knows.
#[derive(Clone, Copy, Default)]
pub(crate) struct Requester<'a> {
    pub identity: Option<&'a std::sync::Arc<Identity>>,
    /// Who is calling, when a rate limit needs to know.
    pub caller: Option<&'a crate::Caller>,
    /// The request's W3C trace context (its headers'), the parent of its spans.
    pub trace: Option<&'a crate::context::TraceParent>,
}

impl Requester<'_> {
    /// Nothing known.
    pub(crate) const NOBODY: Requester<'static> = Requester {
        identity: None,
        caller: None,
        trace: None,
    };
}

/// The answer to one body: an HTTP status and, unless every item was a notification, a body.
#[derive(Debug, PartialEq, Eq)]
pub struct Reply {
    /// The HTTP status.
    pub status: u16,
    /// The JSON body, `None` for notifications only.
    pub body: Option<Vec<u8>>,
}

/// The same answer in frames, as the HTTP transport sends it.
pub(crate) struct Frames {
    pub status: u16,
    pub frames: Option<Vec<Bytes>>,
    /// A single call's `Retry-After` (it was rate limited).
    pub retry_after: Option<std::time::Duration>,
}

/// Handles a whole body (single or batch) for one endpoint, in process: what `POST
/// /rpc/{group}/v{N}` answers, without HTTP (`rpc.discover` aside: it needs the server's
/// documents, which [`crate::Server::client`] has).
#[cfg_attr(not(feature = "test-util"), allow(dead_code))]
pub async fn handle(
    core: &Core,
    catalog: &Catalog,
    body: &[u8],
    limits: &Limits,
    after: Option<AfterResponse>,
) -> Reply {
    scoped(core, catalog, body, limits, after, Scope::default()).await
}

/// [`handle`] for calls of `caller` (what the HTTP edge computes per request).
#[cfg_attr(not(feature = "test-util"), allow(dead_code))]
pub async fn handle_as(
    core: &Core,
    catalog: &Catalog,
    body: &[u8],
    limits: &Limits,
    caller: crate::Caller,
) -> Reply {
    let who = Requester {
        caller: Some(&caller),
        ..Requester::default()
    };
    let scope = Scope {
        who: &who,
        ..Scope::default()
    };
    scoped(core, catalog, body, limits, None, scope).await
}

/// [`handle`] with a [`Scope`] (the in-process client serves `rpc.discover` through it).
pub(crate) async fn scoped(
    core: &Core,
    catalog: &Catalog,
    body: &[u8],
    limits: &Limits,
    after: Option<AfterResponse>,
    scope: Scope<'_>,
) -> Reply {
    let f = answer(core, catalog, body, limits, after, scope).await;
    Reply {
        status: f.status,
        body: f
            .frames
            .map(|frames| frames.iter().flat_map(|b| b.iter().copied()).collect()),
    }
}

fn one(status: u16, body: Vec<u8>) -> Frames {
    Frames {
        status,
        frames: Some(vec![Bytes::from(body)]),
        retry_after: None,
    }
}

pub(crate) async fn answer(
    core: &Core,
    catalog: &Catalog,
    body: &[u8],
    limits: &Limits,
    after: Option<AfterResponse>,
    scope: Scope<'_>,
) -> Frames {
    let env = core.env();
    let dialect = Dialect::JSON_RPC;
    let items = match read::read(body, dialect, limits.batch_items) {
        Ok(Body::Single(item)) => {
            return match run_item(core, catalog, item, limits, &after, scope).await {
                Some((status, out, retry_after)) => Frames {
                    retry_after,
                    ..one(status, out)
                },
                None => Frames {
                    status: 204,
                    frames: None,
                    retry_after: None,
                },
            };
        }
        Ok(Body::Batch(items)) => items,
        Err(e @ read::ReadError::Syntax) => {
            let mut out = Vec::new();
            wire::rpc_error(&mut out, Id::Null, &e.error(), env);
            return one(dialect.parse_error_status, out);
        }
        Err(e) => {
            let mut out = Vec::new();
            wire::rpc_error(&mut out, Id::Null, &e.error(), env);
            return one(200, out);
        }
    };
    if items.is_empty() {
        let mut out = Vec::new();
        let e = RpcError::invalid_request("Invalid Request: empty batch");
        wire::rpc_error(&mut out, Id::Null, &e, env);
        return one(200, out);
    }
    let after = &after;
    let calls = items.into_iter().map(|item| async move {
        run_item(core, catalog, item, limits, after, scope)
            .await
            .map(|(_, out, _)| AnswerBody::from(out))
    });
    let frames =
        crate::edge::batch::run(calls.collect(), limits.batch_concurrency, scope.who.trace).await;
    match frames {
        Some(frames) => Frames {
            status: 200,
            frames: Some(frames),
            retry_after: None,
        },
        None => Frames {
            status: 204,
            frames: None,
            retry_after: None,
        },
    }
}

/// Runs one item; `None` for a notification. The status is the error's for a single call.
async fn run_item(
    core: &Core,
    catalog: &Catalog,
    item: read::Item<'_>,
    limits: &Limits,
    after: &Option<AfterResponse>,
    scope: Scope<'_>,
) -> Option<Answered> {
    let env = core.env();
    let call = match item {
        Ok(Incoming::Call(call)) => call,
        // The JSON-RPC dialect reads no responses.
        Ok(Incoming::Response(_)) => return None,
        Err(inv) => {
            let mut out = Vec::new();
            wire::rpc_error(&mut out, Id::from(inv.id), &inv.error, env);
            return Some((Dialect::JSON_RPC.invalid_status, out, None));
        }
    };
    let Call { id, method, params } = call;
    if method == super::openrpc::DISCOVER
        && let Some(d) = scope.discover
    {
        // OpenRPC service discovery: the document, whatever the params.
        let id = id?;
        let mut out = Vec::with_capacity(4096);
        d.write_answer(&mut out, Id::Raw(id), scope.who.identity.map(|i| &**i));
        return Some((200, out, None));
    }
    let result = match (read::params(params, limits.depth), catalog.get(&method)) {
        (Err(e), _) => Err(e),
        (Ok(_), None) => Err(not_found(catalog, &method)),
        (Ok(params), Some(info)) if has_rpc(params.as_ref()) => {
            // Rare: boxed, so that its future does not weigh on every call's.
            return Box::pin(with_rpc_options(
                core, catalog, info, id, params, after, scope,
            ))
            .await;
        }
        (Ok(params), Some(info)) => {
            let extras = CallExtras {
                after_response: after.clone(),
                identity: scope.who.identity.cloned(),
                caller: scope.who.caller.cloned(),
                trace: scope.who.trace.cloned(),
                ..Default::default()
            };
            core.call(CallRequest {
                catalog,
                info,
                params,
                face: Face::JsonRpc,
                extras,
            })
            .await
        }
    };
    written(id, result.as_ref().map(|o| o.as_json().get()), env)
}

/// A call whose params carry `$rpc`: checked; with a callback the call runs after the
/// acknowledgement, with a timeout it is bounded by it.
async fn with_rpc_options(
    core: &Core,
    catalog: &Catalog,
    info: &crate::catalog::MethodInfo,
    id: Option<&serde_json::value::RawValue>,
    params: Option<serde_json::Value>,
    after: &Option<AfterResponse>,
    scope: Scope<'_>,
) -> Option<Answered> {
    let env = core.env();
    let mut opts = match callback::options(params.as_ref()) {
        Ok(opts) => opts,
        Err(e) => return answer_of(id, Err(e), env),
    };
    if let Some(url) = opts.callback.take() {
        let (asyncs, identity, caller) = (scope.asyncs, scope.who.identity, scope.who.caller);
        let started = callback::start(
            core,
            asyncs,
            identity,
            caller,
            info.def.name,
            id,
            params,
            opts,
            url,
        )
        .await;
        return answer_of(id, started.map(Ack), env);
    }
    let extras = CallExtras {
        after_response: after.clone(),
        ray_id: opts.ray_id.map(std::sync::Arc::from),
        identity: scope.who.identity.cloned(),
        caller: scope.who.caller.cloned(),
        trace: scope.who.trace.cloned(),
        ..Default::default()
    };
    let call = core.call(CallRequest {
        catalog,
        info,
        params,
        face: Face::JsonRpc,
        extras,
    });
    let result = match opts.timeout {
        Some(limit) => tokio::time::timeout(limit, call).await.unwrap_or_else(|_| {
            Err(RpcError::internal(format!(
                "Method '{}' timed out after {} ms",
                info.def.name,
                limit.as_millis()
            )))
        }),
        None => call.await,
    };
    written(id, result.as_ref().map(|o| o.as_json().get()), env)
}

/// The acknowledgement of an asynchronous call (its result's JSON text).
struct Ack(String);

/// The answer to a call that did not run here: its acknowledgement or its error.
fn answer_of(
    id: Option<&serde_json::value::RawValue>,
    r: Result<Ack, RpcError>,
    env: &crate::Environment,
) -> Option<Answered> {
    written(id, r.as_ref().map(|Ack(ack)| ack.as_str()), env)
}

/// One call's written answer: the HTTP status it would have alone, its bytes, and when a
/// rate-limited caller may try again (`Retry-After`).
type Answered = (u16, Vec<u8>, Option<std::time::Duration>);

/// The written answer to one call with an id (none for a notification): its result's JSON
/// text, or its error with the error's HTTP status.
fn written(
    id: Option<&serde_json::value::RawValue>,
    r: Result<&str, &RpcError>,
    env: &crate::Environment,
) -> Option<Answered> {
    let id = id?;
    let mut out = Vec::with_capacity(128);
    Some(match r {
        Ok(json) => {
            wire::result(&mut out, Id::Raw(id), json);
            (200, out, None)
        }
        Err(e) => {
            wire::rpc_error(&mut out, Id::Raw(id), e, env);
            (e.http_status(), out, e.retry_after())
        }
    })
}

/// Whether params carry `$rpc` (checked only then: a call without it pays one lookup).
fn has_rpc(params: Option<&serde_json::Value>) -> bool {
    params.is_some_and(|p| p.get("$rpc").is_some())
}

fn not_found(catalog: &Catalog, method: &str) -> RpcError {
    RpcError::method_not_found(format!(
        "Method \"{}\" for version \"v{}\" is not found in group \"{}\"",
        crate::error::shown(method),
        catalog.version(),
        catalog.group().name()
    ))
}
