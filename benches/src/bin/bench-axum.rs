//! `bench-axum --listen 127.0.0.1:PORT`: the ceiling, a bare axum 0.8 handler at `/mcp` that
//! parses the JSON-RPC `tools/call` body with serde_json and writes the same result shape, and
//! at `/rpc` the same for a plain JSON-RPC `add` (the ceiling of `/rpc/{group}/v{N}`).

use axum::Router;
use axum::body::Bytes;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;

async fn call(body: Bytes) -> Response {
    match benches::serde_baseline(&body) {
        Some(out) => ([(header::CONTENT_TYPE, "application/json")], out).into_response(),
        None => StatusCode::BAD_REQUEST.into_response(),
    }
}

async fn rpc(body: Bytes) -> Response {
    match benches::serde_jsonrpc_baseline(&body) {
        Some(out) => ([(header::CONTENT_TYPE, "application/json")], out).into_response(),
        None => StatusCode::BAD_REQUEST.into_response(),
    }
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let addr = benches::listen_addr();
    benches::serve_router(
        addr,
        Router::new()
            .route("/mcp", post(call))
            .route("/rpc", post(rpc)),
    )
    .await
}
