//! Liveness and readiness, for load balancers and orchestrators: `GET /healthz` answers 200
//! while the process serves; `GET /readyz` answers 200 when the instance should be sent
//! traffic, and 503 with the reasons when it should not: it is draining (a shutdown began,
//! see [`crate::Limits::unready_delay`]) or its shared store (Redis, when configured) does
//! not answer.
//!
//! Both are outside the endpoints' prefixes and their Host, Origin and token checks: a
//! balancer's probe names the instance by its address and carries no token, and neither
//! answer says anything about the service but whether it is up.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::response::Response;
use axum::routing::get;
use http::StatusCode;

use super::respond::json_response;

/// The liveness path.
pub(crate) const LIVE: &str = "/healthz";
/// The readiness path.
pub(crate) const READY: &str = "/readyz";

/// What readiness depends on.
#[derive(Default)]
pub(crate) struct Health {
    draining: AtomicBool,
    #[cfg(feature = "redis")]
    redis: Option<crate::core::RedisStore>,
}

impl std::fmt::Debug for Health {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Health")
            .field("draining", &self.draining)
            .finish_non_exhaustive()
    }
}

impl Health {
    /// Readiness that asks `redis`, when given, whether it answers.
    #[cfg(feature = "redis")]
    pub(crate) fn new(redis: Option<crate::core::RedisStore>) -> Self {
        Self {
            draining: AtomicBool::new(false),
            redis,
        }
    }

    /// Readiness with nothing to ask but whether the server drains.
    #[cfg(not(feature = "redis"))]
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// From now on `/readyz` answers 503: the server is shutting down.
    pub(crate) fn drain(&self) {
        self.draining.store(true, Ordering::Release);
    }

    /// Why the instance should not be sent traffic (nothing: it should).
    async fn reasons(&self) -> Vec<String> {
        let mut reasons = Vec::new();
        if self.draining.load(Ordering::Acquire) {
            reasons.push("draining: the server is shutting down".to_owned());
        }
        #[cfg(feature = "redis")]
        if let Some(redis) = &self.redis
            && let Err(e) = redis.ping().await
        {
            // The store's error names its backend: `redis: ...`.
            reasons.push(e.to_string());
        }
        reasons
    }
}

/// `/healthz` and `/readyz`.
pub(crate) fn routes(health: Arc<Health>) -> Router {
    Router::new()
        .route(LIVE, get(live))
        .route(READY, get(ready).with_state(health))
}

async fn live() -> Response {
    no_store(json_response(
        StatusCode::OK,
        Bytes::from_static(br#"{"status":"ok"}"#),
    ))
}

async fn ready(State(health): State<Arc<Health>>) -> Response {
    let reasons = health.reasons().await;
    if reasons.is_empty() {
        return no_store(json_response(
            StatusCode::OK,
            Bytes::from_static(br#"{"status":"ready"}"#),
        ));
    }
    let body = serde_json::json!({"status": "unready", "reasons": reasons}).to_string();
    no_store(json_response(StatusCode::SERVICE_UNAVAILABLE, body))
}

/// A probe's answer is about now: never from a cache.
fn no_store(mut r: Response) -> Response {
    r.headers_mut().insert(
        http::header::CACHE_CONTROL,
        http::HeaderValue::from_static("no-store"),
    );
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use tower::ServiceExt as _;

    async fn probe(app: &Router, path: &str) -> (StatusCode, String) {
        let req = http::Request::get(path)
            .body(axum::body::Body::empty())
            .unwrap();
        let res = app.clone().oneshot(req).await.unwrap();
        let status = res.status();
        assert_eq!(res.headers()[http::header::CACHE_CONTROL], "no-store");
        let body = axum::body::to_bytes(res.into_body(), 1 << 16)
            .await
            .unwrap();
        (status, String::from_utf8(body.to_vec()).unwrap())
    }

    #[tokio::test]
    async fn ready_until_it_drains_and_live_all_along() {
        #[cfg(feature = "redis")]
        let health = Arc::new(Health::new(None));
        #[cfg(not(feature = "redis"))]
        let health = Arc::new(Health::new());
        let app = routes(health.clone());
        let ok = (StatusCode::OK, r#"{"status":"ok"}"#.to_owned());
        assert_eq!(probe(&app, LIVE).await, ok);
        let ready = (StatusCode::OK, r#"{"status":"ready"}"#.to_owned());
        assert_eq!(probe(&app, READY).await, ready);
        health.drain();
        let draining =
            r#"{"status":"unready","reasons":["draining: the server is shutting down"]}"#;
        assert_eq!(
            probe(&app, READY).await,
            (StatusCode::SERVICE_UNAVAILABLE, draining.to_owned())
        );
        assert_eq!(probe(&app, LIVE).await, ok);
    }
}
