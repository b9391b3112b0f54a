//! The metrics route ([`crate::ServerBuilder::metrics_route`]): the server's metrics in the
//! Prometheus text exposition format, for a scrape.
//!
//! Outside the endpoints' prefixes and their Host, Origin and token checks, as `/healthz` is:
//! a scraper names the instance by its address and carries no token. Its labels are the
//! server's own (method and tool names of the catalog, codes, statuses), so the page says what
//! the service offers and how it fares, never what a client sent.

use axum::Router;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use http::{HeaderValue, StatusCode, header};

use crate::otel::Otel;

/// The Prometheus text format's media type.
const TEXT_FORMAT: &str = "text/plain; version=0.0.4; charset=utf-8";

/// `GET path`: the metrics.
pub(crate) fn routes(path: &str, otel: Otel) -> Router {
    Router::new().route(path, get(render).with_state(otel))
}

async fn render(State(otel): State<Otel>) -> Response {
    match otel.render_prometheus() {
        Ok(text) => {
            let mut r = (StatusCode::OK, text).into_response();
            let h = r.headers_mut();
            h.insert(header::CONTENT_TYPE, HeaderValue::from_static(TEXT_FORMAT));
            h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            r
        }
        Err(e) => {
            tracing::warn!(error = %e, "metrics not rendered");
            (StatusCode::INTERNAL_SERVER_ERROR, "metrics not rendered\n").into_response()
        }
    }
}
