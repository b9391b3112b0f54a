//! The HTTP transport: an axum [`Router`] with one route per (group, version).

use crate::jsonrpc::callback::Async;
use std::future::Future;
use std::sync::Arc;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{OriginalUri, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};

use crate::context::Face;
use crate::group::ApiGroup;

use crate::catalog::Catalog;
use crate::edge::policy::Policy;
use crate::jsonrpc::discovery::{self, Discover, Discovery};

use super::detached::Detached;
use super::respond::{frames_body, json_response, retry_after, run_after};

/// What one `/rpc/{group}/v{N}` route holds.
struct RpcEndpoint {
    policy: Policy,
    server: Arc<super::site::Site>,
    catalog: Arc<Catalog>,
    /// The OpenRPC document and Postman collection per language, built once.
    discovery: Arc<Discovery>,
    /// A protected group's auth.
    auth: Option<Arc<super::auth::Guard>>,
    /// Whether a method is rate limited (then every call needs its caller).
    limited: bool,
}

/// The policy of every route, for a server bound to `local` (`None`: unknown).
fn policy(server: &super::site::Site, local: Option<std::net::SocketAddr>) -> Policy {
    let limits = &server.limits;
    let mut p = Policy::new(
        server.hosts.resolve(local),
        limits.body_bytes,
        limits.request_timeout,
        &server.auth.header,
    );
    p.proxies = limits.trusted_proxies.as_slice().into();
    p
}

/// Every route: JSON-RPC, its OpenRPC document and its Postman collection per catalog, MCP per
/// MCP catalog, and the OAuth metadata of protected MCP routes; all under one [`Policy`].
pub(crate) fn router(
    server: &Arc<super::site::Site>,
    local: Option<std::net::SocketAddr>,
) -> Router {
    let policy = policy(server, local);
    let limits = &server.limits;
    if let Some(shares) = &server.shares {
        shares.start();
    }
    let detached = Arc::new(Detached::new(
        limits,
        server.shares.as_ref(),
        server.core.telemetry().clone(),
    ));
    let mut router = Router::new();
    for catalog in server.registry.catalogs() {
        let (group, version) = (catalog.group(), catalog.version());
        let path = server.rpc_path(group.name(), version);
        let Some(discovery) = server.discovery(group.name(), version) else {
            continue;
        };
        let ep = Arc::new(RpcEndpoint {
            policy: policy.clone(),
            server: server.clone(),
            catalog: catalog.clone(),
            discovery: discovery.clone(),
            auth: group
                .is_protected()
                .then(|| guard(server, &policy, group, Face::JsonRpc, &path)),
            limited: catalog.is_rate_limited(),
        });
        let route = post(rpc_post)
            .get(rpc_get)
            .options(rpc_options)
            .with_state(ep.clone());
        let postman = get(postman_get).options(rpc_options).with_state(ep);
        let postman_path = format!("{path}/postman");
        router = router.route(&path, route).route(&postman_path, postman);
    }
    let mut has_root_metadata = false;
    for ((group, version), ep) in &server.mcp {
        let path = format!("{}/{group}/v{version}", server.mcp_prefix);
        let group = ep.catalog().group();
        let auth = group
            .is_protected()
            .then(|| guard(server, &policy, group, Face::Mcp, &path));
        let route = Arc::new(super::route::McpRoute {
            policy: policy.clone(),
            ep: ep.clone(),
            detached: detached.clone(),
            auth: auth.clone(),
        });
        let methods = post(super::mcp::post)
            .get(super::mcp::get)
            .delete(super::mcp::delete)
            .options(super::mcp::options)
            .with_state(route);
        if let Some(g) = auth {
            let meta = get(super::auth::resource_metadata).with_state(g);
            router = router.route(&super::auth::metadata_path(&path), meta.clone());
            if !has_root_metadata {
                // The root well-known URL names the first protected MCP endpoint.
                router = router.route("/.well-known/oauth-protected-resource", meta);
                has_root_metadata = true;
            }
        }
        router = router.route(&path, methods);
    }
    router = router.merge(super::cards::routes(server, &policy.hosts));
    if let Some(health) = &server.health {
        router = router.merge(super::health::routes(health.clone()));
    }
    #[cfg(feature = "otel")]
    if let Some((path, otel)) = &server.metrics {
        router = router.merge(super::metrics::routes(path, otel.clone()));
    }
    not_found_routes(server, router)
}

/// How many endpoints an unknown path's answer names (the rest are counted).
const NAMED_ENDPOINTS: usize = 20;

/// Under each prefix, a path that names no endpoint (an unknown group or version) is answered
/// 404 with a JSON-RPC error naming the endpoints there are, not an empty body. Routes, not a
/// fallback: the router merges into an application that may have a fallback of its own.
fn not_found_routes(server: &super::site::Site, mut router: Router) -> Router {
    let faces = [
        (&server.rpc_prefix, "JSON-RPC", false),
        (&server.mcp_prefix, "MCP", true),
    ];
    for (prefix, face, mcp) in faces {
        // An empty prefix would catch every path of the application.
        if prefix.is_empty() || (mcp && server.mcp_prefix == server.rpc_prefix) {
            continue;
        }
        let known: Vec<String> = server
            .registry
            .catalogs()
            .filter(|c| !mcp || server.mcp.contains_key(&(c.group().name(), c.version())))
            .map(|c| format!("{prefix}/{}/v{}", c.group().name(), c.version()))
            .collect();
        let mut named = known
            .iter()
            .take(NAMED_ENDPOINTS)
            .cloned()
            .collect::<Vec<_>>()
            .join(", ");
        if known.len() > NAMED_ENDPOINTS {
            named.push_str(&format!(" and {} more", known.len() - NAMED_ENDPOINTS));
        }
        if named.is_empty() {
            named.push_str("none");
        }
        let message = format!("No {face} endpoint at this path; the endpoints are {named}");
        let body: Bytes = crate::wire::error_body(
            crate::wire::Id::Null,
            crate::codes::METHOD_NOT_FOUND,
            &message,
            None,
        )
        .into();
        let answer = axum::routing::any(move || {
            let body = body.clone();
            async move { json_response(StatusCode::NOT_FOUND, body) }
        });
        router = router.route(&format!("{prefix}/{{*rest}}"), answer);
    }
    router
}

fn guard(
    server: &Arc<super::site::Site>,
    policy: &Policy,
    group: ApiGroup,
    face: Face,
    path: &str,
) -> Arc<super::auth::Guard> {
    Arc::new(super::auth::Guard {
        config: server.auth.clone(),
        policy: policy.clone(),
        group: group.name(),
        face,
        path: path.to_owned(),
        env: server.core.env().clone(),
        token_header: match face {
            Face::Mcp => Some(header::AUTHORIZATION),
            Face::JsonRpc => header::HeaderName::from_bytes(server.auth.header.as_bytes()).ok(),
        },
        statics: server.statics.clone(),
    })
}

/// `POST`: a plain function returning the future, so that the request is split before the
/// future is built and only the body (not the head) is held.
fn rpc_post(
    State(ep): State<Arc<RpcEndpoint>>,
    req: Request,
) -> impl Future<Output = Response> + Send {
    let (mut parts, body) = req.into_parts();
    let admitted = ep.policy.admit(&parts.method, &parts.headers);
    // Decided here, while the head is whole (a validator that must wait gets the token).
    let verdict = match (&admitted, &ep.auth) {
        (Ok(_), Some(g)) => Some(g.check(&parts)),
        _ => None,
    };
    // What `rpc.discover` needs, kept as the request gave it (read only if it is called) and
    // only when there is something to keep: most calls carry no language and are not nested.
    let accept_language = parts.headers.get(header::ACCEPT_LANGUAGE).cloned();
    // The host its `servers[0].url` names (a shared handle on the request's bytes).
    let host = parts.headers.get(header::HOST).cloned();
    // What the caller is made of, read while the head is whole, only where a rate limit
    // needs it (the subject is known once the token is checked).
    let who = ep.limited.then(|| {
        Box::new(Who {
            address: crate::edge::caller::client_address(&parts, &ep.policy.proxies),
            // A static token's caller comes with its grant.
            token: ep
                .auth
                .as_ref()
                .filter(|g| g.statics.is_none())
                .and_then(|g| g.token(&parts))
                .map(str::to_owned),
        })
    });
    let trace = crate::edge::caller::trace_of(&parts.headers);
    // Only a server with webhooks keeps the headers (an asynchronous call passes on their
    // trace headers); read last, so they can be moved.
    let asyncs = ep.server.callbacks.as_ref().map(|client| {
        // Only the address is read now (no allocation): the caller is made from it, and from
        // the token in the kept headers, only by a call that starts asynchronously.
        let peer = crate::edge::caller::client_address(&parts, &ep.policy.proxies);
        Box::new(Async {
            client: client.clone(),
            catalog: ep.catalog.clone(),
            headers: std::mem::take(&mut parts.headers),
            peer,
            token_header: ep.auth.as_ref().and_then(|g| g.token_header.clone()),
            hosts: ep.server.callback_hosts.clone(),
            deliveries: ep.server.deliveries.clone(),
        })
    });
    let original = parts
        .extensions
        .remove::<OriginalUri>()
        .filter(|o| o.path() != parts.uri.path());
    let asked = (accept_language.is_some() || original.is_some() || trace.is_some()).then(|| {
        Box::new(Asked {
            accept_language,
            original,
            trace,
        })
    });
    ep.policy.run(rpc_post_inner(
        ep.clone(),
        admitted,
        body,
        asyncs,
        verdict,
        Kept { asked, host },
        who,
    ))
}

/// What a `POST` keeps of its head for `rpc.discover`.
struct Kept {
    asked: Option<Box<Asked>>,
    /// The `Host` its document's URL names.
    host: Option<HeaderValue>,
}

/// What a `POST` keeps of its head to know its caller.
struct Who {
    address: Option<std::net::IpAddr>,
    token: Option<String>,
}

/// What a `POST` keeps of its head for `rpc.discover`, and its trace context (boxed together:
/// most requests carry none of it, and the handler's future is boxed and moved per request).
struct Asked {
    accept_language: Option<HeaderValue>,
    original: Option<OriginalUri>,
    trace: Option<crate::context::TraceParent>,
}

async fn rpc_post_inner(
    ep: Arc<RpcEndpoint>,
    admitted: Result<Option<HeaderValue>, crate::edge::policy::Rejection>,
    body: Body,
    asyncs: Option<Box<Async>>,
    verdict: Option<super::auth::Verdict>,
    kept: Kept,
    who: Option<Box<Who>>,
) -> Response {
    let origin = match admitted {
        Ok(origin) => origin,
        Err(refused) => return refused.into_response(),
    };
    let super::auth::Passed {
        identity,
        caller: known,
    } = match super::auth::settle(verdict).await {
        Ok(passed) => passed,
        Err(refused) => return ep.policy.finish(origin, refused),
    };
    // Boxed: this future is boxed for every request, and most calls are not limited. Made
    // before the body is read, so that what it is made of is not held across that wait.
    let caller = who.and_then(|w| {
        known
            .or_else(|| {
                crate::edge::caller::choose(identity.as_deref(), w.token.as_deref(), w.address)
            })
            .map(Box::new)
    });
    let body = match ep.policy.read(body).await {
        Ok(b) => b,
        Err(answer) => return ep.policy.finish(origin, answer),
    };
    let core = &ep.server.core;
    let after = core.has_post_response().then(|| core.after_response());
    let asked = kept.asked.as_deref();
    let discover = Discover {
        discovery: &ep.discovery,
        accept_language: asked
            .and_then(|a| a.accept_language.as_ref())
            .and_then(|v| v.to_str().ok()),
        prefix: super::mount::prefix(asked.and_then(|a| a.original.as_ref()), ep.discovery.path()),
        host: kept.host.as_ref().and_then(|h| h.to_str().ok()),
    };
    let who = crate::jsonrpc::face::Requester {
        identity: identity.as_ref(),
        caller: caller.as_deref(),
        trace: asked.and_then(|a| a.trace.as_ref()),
    };
    let reply = crate::jsonrpc::face::answer(
        core,
        &ep.catalog,
        &body,
        &ep.server.limits,
        after.clone(),
        crate::jsonrpc::face::Scope {
            who: &who,
            asyncs: asyncs.as_deref(),
            discover: Some(&discover),
        },
    )
    .await;
    let status = StatusCode::from_u16(reply.status).unwrap_or(StatusCode::OK);
    let mut res = match reply.frames {
        Some(mut frames) if frames.len() == 1 => json_response(status, frames.remove(0)),
        Some(frames) => json_response(status, frames_body(frames)),
        None => StatusCode::NO_CONTENT.into_response(),
    };
    if let Some(wait) = reply.retry_after {
        retry_after(&mut res, wait);
    }
    ep.policy.finish(origin, run_after(res, after))
}

/// `GET`: the OpenRPC document in the caller's language; with `?info`, only its `openrpc`,
/// `info` and `servers` (any other query is ignored).
async fn rpc_get(State(ep): State<Arc<RpcEndpoint>>, req: Request) -> Response {
    let (parts, _) = req.into_parts();
    ep.policy
        .run(document_get(&ep, &parts, Document::OpenRpc))
        .await
}

/// `GET /rpc/{group}/v{N}/postman`: the Postman collection in the caller's language, its
/// `baseUrl` the public origin and the prefix the router is nested under.
async fn postman_get(State(ep): State<Arc<RpcEndpoint>>, req: Request) -> Response {
    let (parts, _) = req.into_parts();
    ep.policy
        .run(document_get(&ep, &parts, Document::Postman))
        .await
}

/// The discovery documents a `GET` may ask for.
#[derive(Clone, Copy)]
enum Document {
    OpenRpc,
    Postman,
}

/// A discovery document in the caller's language and scope view, with the URL the request
/// sees.
async fn document_get(ep: &RpcEndpoint, parts: &Parts, which: Document) -> Response {
    let (origin, identity) = match super::auth::admit(&ep.policy, ep.auth.as_ref(), parts).await {
        Ok(admitted) => (admitted.origin, admitted.identity),
        Err(refused) => return refused,
    };
    let docs = ep
        .discovery
        .negotiate(accept_language(&parts.headers), identity.as_deref());
    let frames = match which {
        Document::OpenRpc => {
            let host = parts
                .headers
                .get(header::HOST)
                .and_then(|h| h.to_str().ok());
            let url = ep
                .discovery
                .openrpc_url_for(host, super::mount::prefix_of(parts));
            let query = parts.uri.query();
            match unroll_of(query) {
                Err(message) => {
                    let body = crate::wire::error_body(
                        crate::wire::Id::Null,
                        crate::codes::INVALID_PARAMS,
                        &message,
                        None,
                    );
                    return ep
                        .policy
                        .finish(origin, json_response(StatusCode::BAD_REQUEST, body));
                }
                Ok(unroll) => {
                    let doc = match unroll.and_then(|d| docs.openrpc_unrolled(d)) {
                        Some(unrolled) => unrolled,
                        None => docs.openrpc(),
                    };
                    if wants_info(query) {
                        doc.frames_ending(&url, discovery::INFO_END)
                    } else {
                        doc.frames(&url)
                    }
                }
            }
        }
        Document::Postman => {
            let base = format!(
                "{}{}",
                super::mount::origin(ep.server.auth.public_url.as_deref(), &parts.headers),
                super::mount::prefix_of(parts)
            );
            docs.postman().frames(&base)
        }
    };
    let mut res = json_response(StatusCode::OK, frames_body(frames));
    super::respond::set_language(res.headers_mut(), docs.lang());
    ep.policy.finish(origin, res)
}

fn accept_language(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::ACCEPT_LANGUAGE)
        .and_then(|v| v.to_str().ok())
}

/// Whether a query asks for `info` only (`?info`, `?info=...`, among other pairs).
fn wants_info(query: Option<&str>) -> bool {
    query.is_some_and(|q| q.split('&').any(|p| p == "info" || p.starts_with("info=")))
}

/// The depth `?unroll` asks for: none without it, [`DEFAULT_UNROLL`] for a bare `unroll`,
/// else `unroll=N` from 1 to [`MAX_UNROLL`]; what else is asked, as a message.
///
/// [`DEFAULT_UNROLL`]: crate::jsonrpc::openrpc::DEFAULT_UNROLL
/// [`MAX_UNROLL`]: crate::jsonrpc::openrpc::MAX_UNROLL
fn unroll_of(query: Option<&str>) -> Result<Option<usize>, String> {
    use crate::jsonrpc::openrpc::{DEFAULT_UNROLL, MAX_UNROLL};
    let Some(pair) = query.and_then(|q| {
        q.split('&')
            .find(|p| *p == "unroll" || p.starts_with("unroll="))
    }) else {
        return Ok(None);
    };
    match pair.strip_prefix("unroll=").unwrap_or_default() {
        "" => Ok(Some(DEFAULT_UNROLL)),
        n => match n.parse::<usize>() {
            Ok(d) if (1..=MAX_UNROLL).contains(&d) => Ok(Some(d)),
            _ => Err(format!(
                "unroll must be a depth from 1 to {MAX_UNROLL}, got \"{}\"",
                crate::error::shown(n)
            )),
        },
    }
}

/// `OPTIONS`: the CORS preflight.
async fn rpc_options(State(ep): State<Arc<RpcEndpoint>>, headers: HeaderMap) -> Response {
    ep.policy.preflight(&headers, "GET, POST, OPTIONS")
}

#[cfg(test)]
mod tests {
    use super::super::future_size;

    /// As for MCP: axum boxes this future for every request. 1 152 bytes since it keeps the
    /// request's `Host` for `rpc.discover`'s absolute URL (88 bytes, cheaper than a box of its
    /// own for every request).
    #[test]
    fn the_rpc_post_future_stays_small() {
        let size = future_size(&super::rpc_post);
        assert!(size <= 1152, "the JSON-RPC POST future is {size} bytes");
    }
}
