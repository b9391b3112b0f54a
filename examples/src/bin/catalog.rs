//! The example service.
//!
//! - `catalog [--listen ADDR]`: HTTP on ADDR (default 127.0.0.1:8080): JSON-RPC at
//!   `/rpc/{group}/v{N}`, MCP at `/mcp/{group}/v{N}`.
//! - `catalog --stdio --group G --version N`: MCP over stdin/stdout.

use std::net::SocketAddr;

const USAGE: &str =
    "usage: catalog [--listen ADDR]                  serve HTTP (default 127.0.0.1:8080)
       catalog --stdio [--group G] [--version N]  serve one MCP group over stdio (default mcp, 1)";

fn usage() -> ! {
    eprintln!("{USAGE}");
    std::process::exit(2)
}

#[tokio::main]
async fn main() {
    // Logs go to stderr: on stdio, stdout carries only MCP messages.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .init();
    let mut listen = SocketAddr::from(([127, 0, 0, 1], 8080));
    let (mut stdio, mut group, mut version) = (false, "mcp".to_owned(), 1u32);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--listen" => {
                listen = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or_else(|| usage())
            }
            "--stdio" => stdio = true,
            "--group" => group = args.next().unwrap_or_else(|| usage()),
            "--version" => {
                version = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or_else(|| usage())
            }
            _ => usage(),
        }
    }
    let server = examples::server().unwrap_or_else(|e| {
        eprintln!("catalog: {e}");
        std::process::exit(1)
    });
    let result = if stdio {
        server.serve_stdio(&group, version).await
    } else {
        match tokio::net::TcpListener::bind(listen).await {
            Ok(listener) => {
                // The bound address (port 0 picks a free one); tests read this line.
                let addr = listener.local_addr().unwrap_or(listen);
                tracing::info!(
                    "catalog listening on {addr}: JSON-RPC at /rpc/{{group}}/v{{N}}, MCP at /mcp/{{group}}/v{{N}}"
                );
                server
                    .serve_listener(listener, mcp_runtime::server::shutdown_signal())
                    .await
            }
            Err(e) => Err(e),
        }
    };
    if let Err(e) = result {
        eprintln!("catalog: {e}");
        std::process::exit(1);
    }
}
