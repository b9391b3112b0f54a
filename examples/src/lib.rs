//! The example services of `mcp-runtime`: a small product catalog.
//!
//! Group `mcp` is published over JSON-RPC and MCP; `internal` over JSON-RPC only.

pub mod catalog;
pub mod conformance;
pub mod internal;
pub mod jobs;

pub use catalog::{Category, Product, ProductStore};

use mcp_runtime::prelude::*;

/// Published over JSON-RPC (`/rpc/mcp/v1`) and MCP (`/mcp/mcp/v1`).
pub const MCP: ApiGroup = ApiGroup::mcp("mcp");
/// Published over JSON-RPC only (`/rpc/internal/v1`).
pub const INTERNAL: ApiGroup = ApiGroup::rpc("internal");

/// The example server, with in-memory defaults.
pub fn server() -> Result<Server, mcp_runtime::BuildError> {
    Server::builder()
        .name("catalog")
        .version(env!("CARGO_PKG_VERSION"))
        .state(ProductStore::demo())
        .state(internal::Bad)
        .instructions(
            "A small product catalog: search products, get one by id, browse the category tree.",
        )
        .mcp_stateful("conformance")
        .build()
}
