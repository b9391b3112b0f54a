//! Group `admin`: protected. Requests need `Authorization: Bearer <token>` with a token from
//! `CATALOG_API_TOKENS` (comma-separated); with no tokens configured it refuses everyone.

use mcp_runtime::prelude::*;
use serde::Serialize;

/// Published over JSON-RPC and MCP, behind a token.
pub const ADMIN: ApiGroup = ApiGroup::mcp("admin").protected();

/// The outcome of a reindex.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Reindexed {
    /// How many products were indexed.
    pub products: usize,
    /// Who asked for it, when the token validator says (see `RequestContext::identity`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
}

/// Rebuild the search index.
#[rpc_method(name = "Admin.reindex", groups = [ADMIN])]
#[mcp_tool(destructive_hint = false, idempotent_hint = true)]
pub fn reindex(store: State<crate::ProductStore>, ctx: &RequestContext) -> Reindexed {
    Reindexed {
        products: store.len(),
        by: ctx.identity().map(|i| i.subject.clone()),
    }
}
