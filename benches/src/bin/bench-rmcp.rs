//! `bench-rmcp --listen 127.0.0.1:PORT`: the same `add` tool with rmcp 3.x at `/mcp`:
//! Streamable HTTP, stateless (`legacy_session_mode = false`), JSON responses, and the
//! idiomatic `|| Ok(Server::new())` factory (a new handler, and tool router, per request).

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::model::{ServerCapabilities, ServerConfig};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ServerHandler, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The arguments of `add`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct AddArgs {
    /// The first addend
    pub a: i64,
    /// The second addend
    pub b: i64,
}

/// The result of `add` (the object shape MCP requires of `structuredContent`).
#[derive(Debug, Serialize, JsonSchema)]
pub struct AddResult {
    /// a + b
    pub result: i64,
}

#[derive(Clone)]
pub struct Server {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Server {
    pub fn new() -> Self {
        Self {
            tool_router: Self::tool_router(),
        }
    }

    /// Adds two integers.
    #[tool(description = "Adds two integers.")]
    async fn add(&self, Parameters(AddArgs { a, b }): Parameters<AddArgs>) -> Json<AddResult> {
        Json(AddResult { result: a + b })
    }
}

impl Default for Server {
    fn default() -> Self {
        Self::new()
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let addr = benches::listen_addr();
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None);
    let service: StreamableHttpService<Server, LocalSessionManager> =
        StreamableHttpService::new(|| Ok(Server::new()), Default::default(), config);
    let router = axum::Router::new().nest_service("/mcp", service);
    benches::serve_router(addr, router).await
}
