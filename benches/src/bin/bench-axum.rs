//! `bench-axum --listen 127.0.0.1:PORT`: the ceiling, a bare axum 0.8 handler at `/mcp` that
//! parses the JSON-RPC `tools/call` body with serde_json and writes the same result shape, and
//! at `/rpc` the same for a plain JSON-RPC `add` (the ceiling of `/rpc/{group}/v{N}`).

#[tokio::main]
async fn main() -> std::io::Result<()> {
    benches::serve_ceiling(benches::serde_baseline, benches::serde_jsonrpc_baseline).await
}
