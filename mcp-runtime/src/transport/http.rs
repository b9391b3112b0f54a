//! The HTTP transport: an axum [`Router`] with one route per (group, version).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get, post};

use crate::context::Face;
use crate::group::ApiGroup;

use crate::catalog::Catalog;
use crate::jsonrpc::envelope;
use crate::server::ServerInner;

/// What every route applies to a request: the body size limit and the time to the response
/// head.
///
/// Applied in the handlers rather than as router layers: every axum layer boxes each
/// request's future and clones the inner service per request.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RequestLimits {
    /// The largest body accepted (then 413).
    pub body: usize,
    /// Until the response head: a slow upload or a stalled handler gets 408.
    pub timeout: Option<Duration>,
}

impl RequestLimits {
    pub(crate) fn of(server: &ServerInner) -> Self {
        Self {
            body: server.config.body_limit,
            timeout: server.config.request_timeout,
        }
    }

    /// Runs a handler under the request timeout. A handler that finishes without waiting never
    /// registers the timer.
    ///
    /// A plain function returning the combinator, not an `async fn`: that would hold the
    /// handler's future twice (as argument and as the timeout's inner future).
    pub(crate) fn run<F: Future<Output = Response>>(
        self,
        handler: F,
    ) -> impl Future<Output = Response> {
        use futures_util::FutureExt as _;
        use futures_util::future::Either;
        fn or_408(r: Result<Response, tokio::time::error::Elapsed>) -> Response {
            r.unwrap_or_else(|_| timed_out())
        }
        match self.timeout {
            Some(limit) => Either::Left(tokio::time::timeout(limit, handler).map(or_408)),
            None => Either::Right(handler),
        }
    }

    /// The whole body, or the answer to one that is too large (413) or broken off (400), as
    /// axum's `Bytes` extractor words them.
    pub(crate) async fn read(self, body: Body) -> Result<Bytes, Response> {
        use http_body_util::BodyExt as _;
        match http_body_util::Limited::new(body, self.body)
            .collect()
            .await
        {
            Ok(collected) => Ok(collected.to_bytes()),
            Err(e) if e.is::<http_body_util::LengthLimitError>() => Err((
                StatusCode::PAYLOAD_TOO_LARGE,
                "Failed to buffer the request body: length limit exceeded",
            )
                .into_response()),
            Err(e) => Err((
                StatusCode::BAD_REQUEST,
                format!("Failed to buffer the request body: {e}"),
            )
                .into_response()),
        }
    }
}

/// The answer once the request timeout has passed.
pub(crate) fn timed_out() -> Response {
    (StatusCode::REQUEST_TIMEOUT, "Request Timeout").into_response()
}

/// What one `/rpc/{group}/v{N}` route holds.
struct RpcEndpoint {
    limits: RequestLimits,
    server: Arc<ServerInner>,
    catalog: Arc<Catalog>,
    /// The OpenRPC document per language, built once.
    openrpc: std::collections::BTreeMap<String, Bytes>,
}

/// The JSON-RPC routes of every catalog.
pub(crate) fn rpc_router(server: &Arc<ServerInner>) -> Router {
    let mut router = Router::new();
    for catalog in server.registry.catalogs() {
        let path = server
            .config
            .rpc_path(catalog.group().name(), catalog.version());
        let openrpc = server
            .translations
            .languages()
            .iter()
            .map(|l| (l.clone(), server.openrpc_bytes(catalog, l, &path)))
            .collect();
        let ep = Arc::new(RpcEndpoint {
            limits: RequestLimits::of(server),
            server: server.clone(),
            catalog: catalog.clone(),
            openrpc,
        });
        let route = post(rpc_post).get(rpc_get).with_state(ep);
        router = router.route(
            &path,
            guarded(server, catalog.group(), Face::JsonRpc, &path, route),
        );
    }
    let mut has_root_metadata = false;
    for ((group, version), ep) in &server.mcp {
        let path = format!("{}/{group}/v{version}", server.config.mcp_prefix);
        let route = Arc::new(super::mcp::McpRoute {
            limits: RequestLimits::of(server),
            ep: ep.clone(),
            hosts: server.config.hosts.clone(),
        });
        let methods = post(super::mcp::post)
            .get(super::mcp::get)
            .delete(super::mcp::delete)
            .with_state(route);
        let group = ep.catalog().group();
        if group.is_protected() {
            let g = guard(server, group, Face::Mcp, &path);
            let meta = get(super::auth::resource_metadata).with_state(g);
            router = router.route(&super::auth::metadata_path(&path), meta.clone());
            if !has_root_metadata {
                // The root well-known URL names the first protected MCP endpoint.
                router = router.route("/.well-known/oauth-protected-resource", meta);
                has_root_metadata = true;
            }
        }
        router = router.route(&path, guarded(server, group, Face::Mcp, &path, methods));
    }
    router
}

fn guard(server: &Arc<ServerInner>, group: ApiGroup, face: Face, path: &str) -> super::auth::Guard {
    super::auth::Guard {
        config: server.config.auth.clone(),
        group: group.name(),
        face,
        path: path.to_owned(),
        env: server.core.env().clone(),
        timeout: server.config.request_timeout,
    }
}

/// Puts the auth layer in front of a protected group's route.
fn guarded(
    server: &Arc<ServerInner>,
    group: ApiGroup,
    face: Face,
    path: &str,
    route: MethodRouter,
) -> MethodRouter {
    if group.is_protected() {
        let g = guard(server, group, face, path);
        route.layer(axum::middleware::from_fn_with_state(
            g,
            super::auth::require_token,
        ))
    } else {
        route
    }
}

pub(crate) fn json_response(status: StatusCode, body: impl Into<axum::body::Body>) -> Response {
    let mut res = Response::new(body.into());
    *res.status_mut() = status;
    res.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    res
}

/// A body of bytes written for the response followed by bytes shared with other responses (a
/// precomputed page): two frames with an exact length, so hyper sends the length header and
/// writes both frames with one vectored write, copying neither.
pub(crate) fn two_part_body(head: Vec<u8>, shared: Bytes) -> Body {
    if shared.is_empty() {
        return Body::from(head);
    }
    Body::new(TwoParts {
        frames: [Some(Bytes::from(head)), Some(shared)],
    })
}

struct TwoParts {
    frames: [Option<Bytes>; 2],
}

impl http_body::Body for TwoParts {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, Self::Error>>> {
        let next = self.frames.iter_mut().find_map(Option::take);
        std::task::Poll::Ready(next.map(|b| Ok(http_body::Frame::data(b))))
    }

    fn is_end_stream(&self) -> bool {
        self.frames.iter().all(Option::is_none)
    }

    fn size_hint(&self) -> http_body::SizeHint {
        let len = self.frames.iter().flatten().map(Bytes::len).sum::<usize>();
        http_body::SizeHint::with_exact(len as u64)
    }
}

/// Whether a `Content-Type` header, if any, is JSON.
pub(crate) fn is_json_content_type(headers: &HeaderMap) -> bool {
    match headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
    {
        None => true,
        Some(ct) => {
            let mime = ct.split(';').next().unwrap_or("").trim();
            mime.eq_ignore_ascii_case("application/json")
                || mime.to_ascii_lowercase().ends_with("+json")
        }
    }
}

/// `POST`: a plain function returning the future, so that the request is split before the
/// future is built and only the body (not the head) is held.
fn rpc_post(
    State(ep): State<Arc<RpcEndpoint>>,
    req: Request,
) -> impl Future<Output = Response> + Send {
    let (parts, body) = req.into_parts();
    let json = is_json_content_type(&parts.headers);
    ep.limits.run(rpc_post_inner(ep, json, body))
}

async fn rpc_post_inner(ep: Arc<RpcEndpoint>, json: bool, body: Body) -> Response {
    let body = match ep.limits.read(body).await {
        Ok(b) => b,
        Err(answer) => return answer,
    };
    if !json {
        return (
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Content-Type must be application/json",
        )
            .into_response();
    }
    let core = &ep.server.core;
    let after = core.has_post_response().then(|| core.after_response());
    let reply = envelope::handle(
        core,
        &ep.catalog,
        &body,
        ep.server.config.limits,
        after.clone(),
    )
    .await;
    let status = StatusCode::from_u16(reply.status).unwrap_or(StatusCode::OK);
    let res = match reply.body {
        Some(b) => json_response(status, b),
        None => StatusCode::NO_CONTENT.into_response(),
    };
    run_after(res, after)
}

async fn rpc_get(State(ep): State<Arc<RpcEndpoint>>, headers: HeaderMap) -> Response {
    let accept = headers
        .get(header::ACCEPT_LANGUAGE)
        .and_then(|v| v.to_str().ok());
    let lang = ep.server.translations.pick(accept);
    let body = ep.openrpc.get(lang).cloned().unwrap_or_default();
    let mut res = json_response(StatusCode::OK, body);
    super::mcp::set_language(res.headers_mut(), lang);
    res
}

/// A body that runs the `post_response` work once it has been written (or dropped).
struct AfterBody {
    inner: axum::body::Body,
    after: Option<crate::core::events::AfterResponse>,
}

impl http_body::Body for AfterBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, Self::Error>>> {
        let r = std::pin::Pin::new(&mut self.inner).poll_frame(cx);
        if let std::task::Poll::Ready(None) = r
            && let Some(a) = self.after.take()
        {
            a.run();
        }
        r
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

impl Drop for AfterBody {
    fn drop(&mut self) {
        if let Some(a) = self.after.take() {
            a.run();
        }
    }
}

/// Runs `after` once `res`'s body has been written.
pub(crate) fn run_after(
    res: Response,
    after: Option<crate::core::events::AfterResponse>,
) -> Response {
    match after {
        Some(a) if !a.is_empty() => {
            let (parts, body) = res.into_parts();
            Response::from_parts(
                parts,
                axum::body::Body::new(AfterBody {
                    inner: body,
                    after: Some(a),
                }),
            )
        }
        _ => res,
    }
}

#[cfg(test)]
mod tests {
    use super::super::future_size;

    /// As for MCP: axum boxes this future for every request.
    #[test]
    fn the_rpc_post_future_stays_small() {
        let size = future_size(&super::rpc_post);
        assert!(size <= 1024, "the JSON-RPC POST future is {size} bytes");
    }
}
