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

/// What an audit reports.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Audit {
    /// How many products the catalog holds.
    pub products: usize,
    /// The scopes of the caller.
    pub scopes: Vec<String>,
}

/// Audit the catalog: only for callers whose token grants `catalog:audit` (a JWT's `scope`
/// claim, say); everyone else gets 403 and does not see it in `tools/list`.
#[rpc_method(name = "Admin.audit", groups = [ADMIN], scopes = ["catalog:audit"])]
#[mcp_tool(read_only_hint = true)]
pub fn audit(store: State<crate::ProductStore>, ctx: &RequestContext) -> Audit {
    Audit {
        products: store.len(),
        scopes: ctx.identity().map(|i| i.scopes.clone()).unwrap_or_default(),
    }
}
