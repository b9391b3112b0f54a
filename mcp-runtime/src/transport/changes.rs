//! Change streams over HTTP: a 2026-07-28 `subscriptions/listen` stream, and a handshake-era
//! session's `GET` stream. Each holds one SSE slot ([`crate::Limits::sse_streams`]), lives at
//! most [`crate::Limits::listen_timeout`], and ends when the client goes.

use std::future::Future;
use std::sync::Arc;

use axum::response::Response;
use serde_json::Value;

use super::detached::{Live, live_body};
use super::respond::{answer_response, busy, sse_response};
use super::route::{Caller, McpRoute};
use crate::core::Change;
use crate::edge::write;
use crate::mcp::handler::{McpEndpoint, Message};
use crate::mcp::listen::Filter;
use crate::mcp::protocol::Era;
use crate::mcp::session::{SessionState, SessionStore};

/// Sends the changes `filter` lets through until the time limit or the client goes. Resource
/// updates come only for the URIs it watches (the hub's index, not a scan of every stream);
/// a session's stream reads the session again only when the session says it changed
/// (`refresh`: its subscriptions, or `None` once it ended), on whichever instance.
async fn pump<R, F>(
    ep: &McpEndpoint,
    live: &Live,
    mut filter: Filter,
    session: Option<&str>,
    mut refresh: R,
) -> Option<Filter>
where
    R: FnMut() -> F,
    F: Future<Output = Option<Option<Vec<String>>>>,
{
    let mut feed = ep.core.changes().feed();
    feed.watch(&filter.uris);
    if filter.subscription.is_some() && !live.send(&filter.ack()).await {
        return None;
    }
    let deadline = tokio::time::sleep(ep.limits.listen_timeout);
    tokio::pin!(deadline);
    // An idle stream writes a comment now and then: a client that went away is noticed (its
    // place given back) without waiting for the time limit.
    let mut keep_alive = tokio::time::interval(ep.limits.sse_keep_alive);
    keep_alive.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    keep_alive.reset();
    loop {
        let change = tokio::select! {
            _ = &mut deadline => return Some(filter),
            _ = keep_alive.tick() => {
                if !live.keep_alive().await {
                    return None;
                }
                continue;
            }
            c = feed.next() => match c {
                Some(c) => c,
                None => return Some(filter),
            },
        };
        keep_alive.reset();
        if let Change::Session(sid) = &change {
            if session == Some(&**sid) {
                match refresh().await {
                    Some(Some(uris)) => {
                        filter.uris = uris;
                        feed.watch(&filter.uris);
                    }
                    Some(None) => {}
                    // The session ended: so does its stream.
                    None => return None,
                }
            }
            continue;
        }
        if let Some(frame) = filter.frame(&change)
            && !live.send(&frame).await
        {
            return None;
        }
    }
}

/// `subscriptions/listen` (2026-07-28): the acknowledgement first, then the changes the filter
/// asks for, each tagged with the request's id; a final result when the server ends it.
pub(crate) fn listen(route: &McpRoute, msg: &Message, era: Era, caller: &Caller) -> Response {
    let ep = &route.ep;
    let id = msg.id.clone().unwrap_or(Value::Null);
    let filter = match Filter::listen(
        id.clone(),
        msg.params.as_ref(),
        msg.meta(),
        ep.offered(),
        &ep.limits,
    ) {
        Ok(mut f) => {
            // Only the caller's own tasks (an anonymous caller's: the anonymous ones), of
            // this endpoint.
            f.task_owner =
                crate::core::tasks::owner(&ep.catalog, caller.identity.as_deref(), None, false);
            f
        }
        Err(e) => {
            return answer_response(ep.error(Some(&id), era, e.code(), e.message(), None));
        }
    };
    let Some(slot) = route.detached.stream(caller.who().as_ref()) else {
        return busy();
    };
    let (live, rx) = Live::channel();
    let ep = route.ep.clone();
    let task = tokio::spawn(async move {
        let no_refresh = || std::future::ready(Some(None));
        if let Some(filter) = pump(&ep, &live, filter, None, no_refresh).await {
            live.finish(write::sse_event(None, &filter.end())).await;
        }
    });
    sse_response(live_body(rx, task.abort_handle(), slot))
}

/// A session's `GET` stream (handshake era): list changes, and updates of the resources the
/// session subscribed to.
pub(crate) fn session_stream(
    route: &McpRoute,
    store: Arc<dyn SessionStore>,
    sid: String,
    state: SessionState,
    task_owner: String,
    who: &crate::context::Caller,
) -> Response {
    let Some(slot) = route.detached.stream(Some(who)) else {
        return busy();
    };
    let mut filter = Filter::session(route.ep.offered(), state.subscriptions);
    // A session on a revision with experimental tasks is told of its tasks' changes.
    if crate::mcp::engine::hears_task_status(&state.version) {
        filter.task_owner = task_owner;
        filter.all_tasks = true;
    }
    let (live, rx) = Live::channel();
    let ep = route.ep.clone();
    let session_id = sid.clone();
    let task = tokio::spawn(async move {
        let refresh = || {
            let (store, sid) = (store.clone(), sid.clone());
            async move {
                match store.get(&sid).await {
                    Ok(Some(text)) => Some(Some(SessionState::parse(&text).subscriptions)),
                    Ok(None) => None,
                    // The store is down: keep the subscriptions known so far.
                    Err(_) => Some(None),
                }
            }
        };
        pump(&ep, &live, filter, Some(&session_id), refresh).await;
        live.finish(axum::body::Bytes::new()).await;
    });
    sse_response(live_body(rx, task.abort_handle(), slot))
}
