//! The webhook client's side that every delivery path shares: the client trait, the delivery's
//! span and the headers it passes on. Apart from `callback` (the `$rpc.callback` flow) so that
//! the durable deliveries use it without importing that flow.

use futures_util::future::BoxFuture;
use http::{HeaderName, HeaderValue};

/// Checks and calls webhooks; the server's is
/// [`HttpCallbacks`](super::callback::HttpCallbacks) (feature `webhooks`), a test
/// gives its own.
pub trait CallbackClient: Send + Sync + 'static {
    /// Whether `url` (already an `http`/`https` URL with a host) may be called: a real host,
    /// reachable (the reference: `OPTIONS` answered 200 with `Allow` naming `POST`, else a
    /// `POST {"rpc.callback":"check real webhook url"}` answered below 400). The error says
    /// why not.
    fn check<'a>(&'a self, url: &'a str) -> BoxFuture<'a, Result<(), String>>;
    /// POSTs `body` (JSON) to `url` with `headers`; the HTTP status answered.
    fn post<'a>(
        &'a self,
        url: &'a str,
        headers: &'a [(HeaderName, HeaderValue)],
        body: Vec<u8>,
    ) -> BoxFuture<'a, Result<u16, String>>;
    /// One try of delivery `id` (its `webhook-id`, the same on every try): a server with
    /// Redis spreads the tries of a delivery over hours and instances, and makes each through
    /// this. The default is [`Self::post`].
    fn post_once<'a>(
        &'a self,
        url: &'a str,
        headers: &'a [(HeaderName, HeaderValue)],
        body: Vec<u8>,
        id: &'a str,
    ) -> BoxFuture<'a, Result<u16, String>> {
        let _ = id;
        self.post(url, headers, body)
    }
}

/// The headers a delivery passes on: the request's trace headers, with the delivery span's
/// own `traceparent` and `tracestate` when spans are exported (`sent_as`).
pub(crate) fn outgoing(
    trace: &[(String, String)],
    sent_as: Option<&crate::context::TraceParent>,
) -> Vec<(HeaderName, HeaderValue)> {
    trace
        .iter()
        .filter(|(k, _)| {
            sent_as.is_none()
                || !(k.eq_ignore_ascii_case("traceparent") || k.eq_ignore_ascii_case("tracestate"))
        })
        .filter_map(|(k, v)| {
            Some((
                HeaderName::from_bytes(k.as_bytes()).ok()?,
                HeaderValue::from_str(v).ok()?,
            ))
        })
        .chain(sent_as.iter().flat_map(|t| {
            let parent = HeaderValue::from_str(t.traceparent()).ok();
            let state = t.tracestate().and_then(|s| HeaderValue::from_str(s).ok());
            [
                parent.map(|v| (HeaderName::from_static("traceparent"), v)),
                state.map(|v| (HeaderName::from_static("tracestate"), v)),
            ]
            .into_iter()
            .flatten()
        }))
        .collect()
}

/// The span of a webhook delivery: an HTTP client span (`POST`, the host; never the URL's
/// path or query, which may carry a secret).
pub(crate) fn delivery_span(url: &str, method: &str) -> tracing::Span {
    if !crate::core::telemetry::traces_on() {
        return tracing::Span::none();
    }
    let host = url
        .parse::<http::Uri>()
        .ok()
        .and_then(|u| u.host().map(str::to_owned))
        .unwrap_or_default();
    tracing::info_span!(
        "webhook.deliver",
        otel.name = "POST",
        otel.kind = "client",
        otel.status_code = tracing::field::Empty,
        http.request.method = "POST",
        server.address = crate::error::shown(&host).as_ref(),
        rpc.method = method,
        http.response.status_code = tracing::field::Empty,
        error.type = tracing::field::Empty,
    )
}
