//! `bench-rmcp --listen 127.0.0.1:PORT`: the same `add` tool with rmcp 3.x at `/mcp`:
//! Streamable HTTP, stateless (`legacy_session_mode = false`), JSON responses, and the
//! idiomatic `|| Ok(Server::new())` factory (a new handler, and tool router, per request).
//!
//! Beside it, the equivalents of mcp-runtime's `bench://items/{id}` resource template (rmcp has
//! no resource router: `read_resource` by hand, as rmcp's own examples do) and `review` prompt
//! (`#[prompt_router]`/`#[prompt_handler]`). The prompt router is built once and shared rather
//! than per request, so that `tools/call` does the same work as when `add` was all this server
//! had (and `prompts/get` is, if anything, favoured).

use std::sync::OnceLock;

use rmcp::handler::server::router::prompt::PromptRouter;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::model::{
    PromptMessage, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
    ResourceContents, Role, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{
    ErrorData, RoleServer, ServerHandler, prompt, prompt_handler, prompt_router, tool,
    tool_handler, tool_router,
};
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

/// The arguments of the `review` prompt.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReviewArgs {
    /// What to review
    pub topic: String,
}

/// An item of `bench://items/{id}` (the same struct, and JSON, as mcp-runtime's).
#[derive(Debug, Serialize)]
pub struct Item {
    pub id: u64,
    pub name: &'static str,
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

#[prompt_router]
impl Server {
    /// Asks for a short review of a topic.
    #[prompt(name = "review", description = "Asks for a short review of a topic.")]
    async fn review(
        &self,
        Parameters(ReviewArgs { topic }): Parameters<ReviewArgs>,
    ) -> Vec<PromptMessage> {
        vec![PromptMessage::new_text(
            Role::User,
            format!("Write a short review of {topic}."),
        )]
    }

    /// The prompt router, built on first use.
    fn prompts() -> &'static PromptRouter<Self> {
        static PROMPTS: OnceLock<PromptRouter<Server>> = OnceLock::new();
        PROMPTS.get_or_init(Self::prompt_router)
    }
}

impl Default for Server {
    fn default() -> Self {
        Self::new()
    }
}

#[tool_handler(router = self.tool_router)]
#[prompt_handler(router = Self::prompts())]
impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_prompts()
                .enable_resources()
                .build(),
        )
    }

    /// `bench://items/{id}`: the item as JSON.
    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let id = request
            .uri
            .strip_prefix("bench://items/")
            .and_then(|id| id.parse::<u64>().ok())
            .ok_or_else(|| ErrorData::resource_not_found(request.uri.clone(), None))?;
        let text = serde_json::to_string(&Item { id, name: "widget" })
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        Ok(ReadResourceResult::new(vec![
            ResourceContents::text(text, request.uri).with_mime_type("application/json"),
        ])
        .into())
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
