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

/// An HTTP client whose connections come from `ip` (any of 127/8 is loopback: two clients
/// from two addresses are two callers to a server that knows them by address).
pub fn client_from(ip: &str) -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .local_address(ip.parse::<std::net::IpAddr>().ok())
        .timeout(std::time::Duration::from_secs(30))
        .build()
        .expect("a client")
}

/// [`serve`], as a base URL: `http://127.0.0.1:PORT`.
pub async fn serve_url(server: Server) -> String {
    format!("http://{}", serve(server).await)
}
