//! Mount anywhere: an existing axum app that serves the example catalog under `/api`.
//!
//! `axum_app [--listen ADDR]` (default 127.0.0.1:8081):
//!
//! - `GET /hello`: the app's own route (`hello`);
//! - `POST /api/rpc/{group}/v{N}`, `GET` of it for OpenRPC: JSON-RPC;
//! - `POST /api/mcp/{group}/v{N}`: MCP (Streamable HTTP).
//!
//! The app's own layers wrap everything, the framework's routes included: a header
//! (`x-served-by: axum_app`) and a timeout on producing the response head (408 after 20 s; the
//! framework's router has its own, `ServerBuilder::request_timeout`, 30 s by default).
//! The MCP routes still check `Host`/`Origin` against the loopback names by default, which
//! requests to 127.0.0.1 pass; for other names see `ServerBuilder::allowed_hosts`.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use axum::Router;
use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

const USAGE: &str = "usage: axum_app [--listen ADDR]   serve on ADDR (default 127.0.0.1:8081)";

/// How long a handler may take to produce its response head.
const TIMEOUT: Duration = Duration::from_secs(20);

/// The app's own middleware: marks every response.
async fn served_by(req: Request, next: Next) -> Response {
    let mut res = next.run(req).await;
    res.headers_mut()
        .insert("x-served-by", HeaderValue::from_static("axum_app"));
    res
}

/// A timeout on the response head (a streamed body, e.g. SSE, may go on after it).
async fn timeout(req: Request, next: Next) -> Response {
    match tokio::time::timeout(TIMEOUT, next.run(req)).await {
        Ok(res) => res,
        Err(_) => (StatusCode::REQUEST_TIMEOUT, "request timed out").into_response(),
    }
}

/// The app: its own routes, the framework's router nested under `/api`, its own layers.
fn app(server: &mcp_runtime::Server) -> Router {
    Router::new()
        .route("/hello", get(|| async { "hello" }))
        .nest("/api", server.router())
        .layer(middleware::from_fn(timeout))
        .layer(middleware::from_fn(served_by))
}

fn parse_args() -> Result<SocketAddr, String> {
    let mut listen = SocketAddr::from(([127, 0, 0, 1], 8081));
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--listen" => {
                let v = args.next().ok_or("--listen needs an address")?;
                listen = v.parse().map_err(|e| format!("--listen {v}: {e}"))?;
            }
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            other => return Err(format!("unexpected argument `{other}`")),
        }
    }
    Ok(listen)
}

#[tokio::main]
async fn main() -> ExitCode {
    mcp_runtime::log::init();
    let listen = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("axum_app: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let server = match examples::server() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("axum_app: {e}");
            return ExitCode::FAILURE;
        }
    };
    let listener = match tokio::net::TcpListener::bind(listen).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("axum_app: cannot listen on {listen}: {e}");
            return ExitCode::FAILURE;
        }
    };
    // The bound address (port 0 picks a free one); the tests read this line.
    let addr = listener.local_addr().unwrap_or(listen);
    tracing::info!(
        "axum_app listening on {addr}: /hello, JSON-RPC at /api/rpc/{{group}}/v{{N}}, MCP at /api/mcp/{{group}}/v{{N}}"
    );
    let served = axum::serve(listener, app(&server))
        .with_graceful_shutdown(mcp_runtime::shutdown_signal())
        .await;
    // `post_response` listener work still running: give it a moment, as `Server::serve` does.
    server
        .core()
        .background()
        .drain(Duration::from_secs(10))
        .await;
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("axum_app: {e}");
            ExitCode::FAILURE
        }
    }
}
