//! `bench-mcp-runtime --listen 127.0.0.1:PORT`: the `add` tool served by mcp-runtime at
//! `/mcp/bench/v1` (MCP, both eras) and `/rpc/bench/v1` (JSON-RPC).

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr = benches::listen_addr();
    let server = benches::server()?;
    let listener = tokio::net::TcpListener::bind(addr).await?;
    eprintln!("listening on {}", listener.local_addr()?);
    // `serve_listener` sets TCP_NODELAY on every accepted connection.
    server
        .serve_listener(listener, mcp_runtime::shutdown_signal())
        .await?;
    Ok(())
}
