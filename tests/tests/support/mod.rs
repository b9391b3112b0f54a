//! Helpers shared by the integration tests. Each file under `tests/tests/` is its own crate and
//! takes this module with `mod support;`, so a helper one of them does not use is dead code there.
#![allow(dead_code)]

use std::net::SocketAddr;

use mcp_runtime::{Environment, Server, ServerBuilder};

/// The example service's builder, in production (no debug data in errors).
pub fn example_prod() -> ServerBuilder {
    examples::builder().env(Environment::PROD)
}

/// Serves `server` on a free loopback port of this test's runtime (it stops with the runtime).
pub async fn serve(server: Server) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a free loopback port");
    let addr = listener.local_addr().expect("the bound address");
    tokio::spawn(async move {
        server
            .serve_listener(listener, std::future::pending())
            .await
    });
    addr
}

/// [`serve`], as a base URL: `http://127.0.0.1:PORT`.
pub async fn serve_url(server: Server) -> String {
    format!("http://{}", serve(server).await)
}
